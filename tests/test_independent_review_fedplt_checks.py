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
from fedrepro.fedplt.checks import pep
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
