"""Fed-PLT's fixed point, tuning grid and grid search, Lemma 5's check, and the MLP's message
length, against closed forms, mpmath and the agent-by-agent reference loop of v2 Algorithm 1
(``fedrepro.fedplt.reference``, an implementation that shares no code with the vectorised and
batched runs; see ``tests/test_fedplt_reference.py``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from fedrepro.dpfedpaq import mlp
from fedrepro.fedplt.algorithm import fixed_point
from fedrepro.fedplt.checks import privacy as fchecks
from fedrepro.fedplt.reference import run_fedplt_loop
from fedrepro.fedplt.tuning import grid_points, grid_search
from fedrepro.problems import logistic_v2, random_quadratic

mpmath.mp.dps = 50


def test_fixed_point_on_a_quadratic_in_closed_form():
    p = random_quadratic(4, 3, 0.5, 4.0, rng=1)
    rho = 0.7
    A, b = np.asarray(p.A, dtype=float), np.asarray(p.b, dtype=float)
    x_star = np.linalg.solve(A.sum(axis=0), b.sum(axis=0))  # Σ_i (A_i x − b_i) = 0
    X, Z = fixed_point(p, rho)
    np.testing.assert_allclose(X, np.tile(x_star, (4, 1)), rtol=1e-10, atol=1e-12)  # 1e-10 relative
    for i in range(4):  # z_i* = x* − ρ∇f_i(x*) with ∇f_i(x) = A_i x − b_i
        np.testing.assert_allclose(Z[i], x_star - rho * (A[i] @ x_star - b[i]), rtol=1e-10, atol=1e-12)
    # the consensus of the z*: their mean is x* (Σ∇f_i(x*) = 0)
    np.testing.assert_allclose(Z.mean(axis=0), x_star, rtol=1e-10, atol=1e-12)


def test_grid_points_by_nested_loops():
    grid = {"rho": [0.1, 1.0, 10.0], "gamma": [0.5, 2.0], "theta": [3]}
    want = []
    for r in grid["rho"]:  # the first parameter varies slowest
        for g in grid["gamma"]:
            for t in grid["theta"]:
                want.append({"rho": r, "gamma": g, "theta": float(t)})
    assert grid_points(grid) == want  # exact
    assert grid_points({}) == [{}]


def test_grid_search_picks_the_fastest_rho_of_the_reference_loop():
    p = logistic_v2(convex=True, seed=0)
    Ne, K, tol = 2, 25, 1e-3
    rhos = [0.05, 0.5, 5.0]
    gs = grid_search("Fed-PLT", p, Ne=Ne, solver="gd", grid={"rho": rhos}, K=K, tol=tol)
    k_star = []
    for rho in rhos:
        g = run_fedplt_loop(p, rho=rho, Ne=Ne, K=K)["grad_sq"]
        hit = [k for k in range(K + 1) if g[k] <= tol]  # K* = min{k : ‖Σ∇f_i(x̄_k)‖² ≤ tol}
        k_star.append(hit[0] if hit else -1)
    assert gs.K_star[:, 0].tolist() == k_star  # exact iteration counts
    reached = [k for k in k_star if k >= 0]
    assert len(reached) >= 2 and -1 in k_star  # two points converge, one does not within K
    assert gs.best == k_star.index(min(reached))


@pytest.mark.parametrize("alpha, sens, sigma, delta", [(2.0, 1.0, 1.0, 1e-5), (32.0, 1.0, 3.0, 1e-8),
                                                       (1.5, 2.0, 0.5, 1e-3)])
def test_check_lemma5_in_mpmath(alpha, sens, sigma, delta):
    rdp = mpmath.mpf(alpha) * sens**2 / (2 * mpmath.mpf(sigma) ** 2)  # Gaussian RDP at order α
    eps = rdp + mpmath.log(1 / mpmath.mpf(delta)) / (alpha - 1)  # Lemma 5
    mu = mpmath.mpf(sens) / sigma
    exact = mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)  # Balle & Wang
    r = fchecks.check_lemma5(fchecks.Lemma5Instance(alpha, sens, sigma, delta))
    assert r.observed == pytest.approx(float(exact), rel=1e-9)  # 1e-9 relative (log-space δ in float64)
    assert r.bound == delta and r.holds == bool(exact <= delta * (1 + 1e-9))
    assert r.holds  # Lemma 5 is a valid conversion


@pytest.mark.parametrize("hidden", [1, 32, 200])
def test_mlp_dimension_counts_torch_parameters(hidden):
    net = torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    assert mlp.dimension(hidden) == sum(p.numel() for p in net.parameters())  # exact
    assert mlp.dimension(hidden) == 785 * hidden + 10 * (hidden + 1)
    assert math.isfinite(mlp.dimension(hidden))
