"""Fed-PLT's contraction checks against direct evaluations written here: Proposition 1's
matrix S transcribed from the paper (its norm by numpy's SVD), one round of v2 Algorithm 1
with GD local training written line by line for quadratic agents (its matrix built column by
column, its norm by numpy's SVD), the measured-below comparison, and the logistic ratios
recomputed from the same random states with the agent-by-agent reference loop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.fedplt.algorithm import fixed_point
from fedrepro.fedplt.checks import jacobian, pep
from fedrepro.fedplt.checks.accelerated import agd_worst_case
from fedrepro.fedplt.checks.instances import quadratic_problem
from fedrepro.fedplt.reference import fedplt_iteration_loop
from fedrepro.problems import logistic_v2


def _S(lam, lam_bar, rho, Ne, step, corrected):
    """Proposition 1: S = [[χ^Ne, c(1 + χ^Ne)], [2χ^Ne, ζ + 2cχ^Ne]], χ of GD on the local
    problem (moduli λ + 1/ρ, λ̄ + 1/ρ), ζ of Lemma 3, c = 1/(λ + 1/ρ) as printed or
    1/(1 + ρλ) (the prox's Lipschitz constant)."""
    chi = max(abs(1 - step * (lam + 1 / rho)), abs(1 - step * (lam_bar + 1 / rho)))
    zeta = max(abs(1 - rho * lam) / (1 + rho * lam), abs(1 - rho * lam_bar) / (1 + rho * lam_bar))
    c = 1 / (1 + rho * lam) if corrected else 1 / (lam + 1 / rho)
    a = chi**Ne
    return np.array([[a, c * (1 + a)], [2 * a, zeta + 2 * c * a]])


@pytest.mark.parametrize("lam, lam_bar, rho, Ne, gamma", [(1.0, 10.0, 0.5, 3, None), (0.2, 5.0, 2.0, 10, 0.1),
                                                          (1.0, 100.0, 0.05, 1, None)])
def test_proposition_bound_is_the_norm_of_s(lam, lam_bar, rho, Ne, gamma):
    inst = pep.PEPInstance(lam=lam, lam_bar=lam_bar, rho=rho, Ne=Ne, gamma=gamma)
    step = 2 / (lam_bar + lam + 2 / rho) if gamma is None else gamma  # v2 §IV-B default
    for corrected in (True, False):
        want = np.linalg.svd(_S(lam, lam_bar, rho, Ne, step, corrected), compute_uv=False)[0]
        # 1e-12 relative: a 2×2 SVD
        assert pep.proposition_bound(inst, corrected=corrected) == pytest.approx(want, rel=1e-12)


def test_check_measured_below_compares_with_the_rate_tolerance():
    inst = pep.PEPInstance()
    r = pep.check_measured_below(inst, 0.5, pep_rate=0.5 / (1 + 0.5e-5))
    assert r.observed == 0.5 and r.holds  # within RATE_RTOL = 1e-5 relative
    r = pep.check_measured_below(inst, 0.5, pep_rate=0.5 / (1 + 2e-5))
    assert not r.holds


def _round(A, b, x, z, rho, Ne, step):
    """v2 Algorithm 1, one round, agents with f_i(w) = ½wᵀA_iw − b_iᵀw."""
    N = len(A)
    y = sum(z[i] for i in range(N)) / N  # line 2
    xn, zn = [], []
    for i in range(N):
        v = 2 * y - z[i]  # line 5
        w = x[i].copy()  # warm start
        for _ in range(Ne):  # lines 6–8
            w = w - step * (A[i] @ w - b[i] + (w - v) / rho)
        xn.append(w)
        zn.append(z[i] + 2 * (w - y))  # line 10
    return np.array(xn), np.array(zn)


@pytest.mark.parametrize("N, n, Ne, norm", [(2, 2, 3, "xz"), (3, 2, 1, "xz")])
def test_quadratic_contraction_by_building_the_round_matrix(N, n, Ne, norm):
    lam, lam_bar, rho = 1.0, 10.0, 0.5
    inst = pep.PEPInstance(lam=lam, lam_bar=lam_bar, rho=rho, Ne=Ne, N=N, norm=norm)
    got = pep.quadratic_contraction(inst, n, np.random.default_rng(4))
    p = quadratic_problem(N, n, lam, lam_bar, np.random.default_rng(4))  # the same draws
    A, b = [np.asarray(a, dtype=float) for a in p.A], [np.asarray(v, dtype=float) for v in p.b]
    step = 2 / (lam_bar + lam + 2 / rho)
    x0, z0 = np.zeros((N, n)), np.zeros((N, n))
    base = np.concatenate([m.ravel() for m in _round(A, b, x0, z0, rho, Ne, step)])
    cols = []
    for k in range(2 * N * n):  # the round is affine: column k = T(e_k) − T(0)
        e = np.zeros(2 * N * n)
        e[k] = 1.0
        xe, ze = e[:N * n].reshape(N, n), e[N * n:].reshape(N, n)
        cols.append(np.concatenate([m.ravel() for m in _round(A, b, xe, ze, rho, Ne, step)]) - base)
    M = np.array(cols).T
    want = np.linalg.svd(M, compute_uv=False)[0]
    assert got == pytest.approx(want, rel=1e-10)  # 1e-10 relative: the same linear map, two constructions


def test_logistic_contraction_from_the_same_states_with_the_reference_loop():
    problem = logistic_v2(convex=True, seed=0)
    inst = pep.PEPInstance(lam=float(problem.lam), lam_bar=float(problem.lam_bar), rho=0.5, Ne=2)
    states, scale = 4, 3.0
    got = pep.logistic_contraction(inst, problem, np.random.default_rng(6), states=states, scale=scale)
    Xb, Zb = fixed_point(problem, 0.5)
    rng = np.random.default_rng(6)  # the same states, in the check's order
    best = 0.0
    for _ in range(states):
        r = scale * 10 ** rng.uniform(-2, 0)
        x = Xb + r * rng.standard_normal(Xb.shape)
        z = Zb + r * rng.standard_normal(Zb.shape)
        x1, z1, _ = fedplt_iteration_loop(x, z, problem, rho=0.5, Ne=2)
        num = math.sqrt(float(np.sum((x1 - Xb) ** 2) + np.sum((z1 - Zb) ** 2)))
        den = math.sqrt(float(np.sum((x - Xb) ** 2) + np.sum((z - Zb) ** 2)))
        best = max(best, num / den)
    assert got == pytest.approx(best, rel=1e-9)  # 1e-9 relative: round-off of two implementations
    assert 0 < best < 1


# ------------------------------------------------------------------ Jacobian of a round (logistic)
FD_H, FD_RTOL = 1e-5, 1e-5  # central differences: truncation O(h²) on O(1) curvatures, round-off 1e-16/h


def _fd_norm(problem, s, rho, Ne):
    """‖J‖₂ of one round of the reference loop, by central differences and numpy's SVD."""
    N, n = problem.N, problem.n
    d = s.size

    def T(v):
        x1, z1, _ = fedplt_iteration_loop(v[:N * n].reshape(N, n), v[N * n:].reshape(N, n), problem, rho=rho, Ne=Ne)
        return np.concatenate([x1.ravel(), z1.ravel()])
    cols = []
    for k in range(d):
        e = np.zeros(d)
        e[k] = FD_H
        cols.append((T(s + e) - T(s - e)) / (2 * FD_H))
    return np.linalg.svd(np.array(cols).T, compute_uv=False)[0]


def test_max_jacobian_norm_and_proposition1_check_by_finite_differences_of_the_reference_loop():
    inst = jacobian.JacobianInstance(N=2, rho=0.3, Ne=2, seed=1)
    sampling = jacobian.StateSampling(radii=(0.1, 10.0), per_radius=2, restarts=0)
    got = jacobian.max_jacobian_norm(inst, np.random.default_rng(3), sampling)
    problem = inst.problem()
    Xb, Zb = fixed_point(problem, inst.rho)
    s_bar = np.concatenate([Xb.ravel(), Zb.ravel()])
    rng = np.random.default_rng(3)  # the same states
    norms = [_fd_norm(problem, s_bar, inst.rho, inst.Ne)]
    for r in sampling.radii:
        for _ in range(sampling.per_radius):
            norms.append(_fd_norm(problem, s_bar + r * rng.standard_normal(s_bar.size), inst.rho, inst.Ne))
    assert got.max_norm == pytest.approx(max(norms), rel=FD_RTOL)  # FD_RTOL relative
    assert got.at_fixed_point == pytest.approx(norms[0], rel=FD_RTOL)
    assert got.evaluations == len(norms)
    res = jacobian.check_proposition1_logistic(inst, "paper", search=got)
    step = 2 / (problem.lam_bar + problem.lam + 2 / inst.rho)
    S = _S(problem.lam, problem.lam_bar, inst.rho, inst.Ne, step, corrected=False)
    assert res.bound == pytest.approx(np.linalg.svd(S, compute_uv=False)[0], rel=1e-12)  # Proposition 1
    assert res.observed == got.max_norm and res.holds == (got.max_norm <= res.bound * (1 + 1e-9))


@pytest.mark.parametrize("kappa, ell", [(4.0, 8), (100.0, 30)])
def test_agd_worst_case_by_running_agd_on_each_curvature(kappa, ell):
    grid = 201
    U, W = agd_worst_case(kappa, ell, grid)
    beta = (math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1)
    worst_x, worst_y = [0.0] * (ell + 1), [0.0] * (ell + 1)
    for h in np.linspace(1.0, kappa, grid):  # f = h x²/2, step 1/κ (λ = 1, λ̄ = κ), x⁰ = y⁰ = 1
        x_prev, y = 1.0, 1.0
        worst_x[0] = worst_y[0] = 1.0
        for step in range(1, ell + 1):
            x = y - (h * y) / kappa  # gradient step from the extrapolated point
            y = x + beta * (x - x_prev)  # momentum
            x_prev = x
            worst_x[step] = max(worst_x[step], abs(x))
            worst_y[step] = max(worst_y[step], abs(y))
    np.testing.assert_allclose(U, worst_x, rtol=1e-12)  # 1e-12 relative: the same scalar recursions
    np.testing.assert_allclose(W, worst_y, rtol=1e-12)
