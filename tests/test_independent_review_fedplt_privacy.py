"""Fed-PLT's Proposition 4 check and its counterexample against a plain construction of the
linear-Gaussian instance with one agent in one dimension: every quantity of the run (x_k, z_k
and the local iterates) is written as its mean under each dataset plus a linear combination of
the independent Gaussian noises (x_0's and one per local step), step by step from v2
Algorithm 1 with noisy GD, w ← w − γ(∇f(w) + (w − v)/ρ) + 𝒩(0, 2γτ²); the Rényi divergence of
what an observer sees is then α/2·ΔᵀC⁺Δ with C built from those coefficients. The bound is
Proposition 4 transcribed: αL²/(λτ²q²)(1 − e^{−λγKN_e/2}).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.fedplt.checks import counterexamples, privacy


def _views(inst):
    assert inst.N == 1 and inst.n == 1
    rng = np.random.default_rng(inst.seed)  # the instance's data: mean sample, changed direction
    b = float(rng.standard_normal((1, 1))[0, 0])
    direction = float(rng.standard_normal(1)[0])
    b2 = b + inst.L * math.copysign(1.0, direction) / inst.q
    lam = 1.0 + inst.r
    gamma = inst.theta * 2 / (lam + 1 / inst.rho)
    n_noise = 1 + inst.K * inst.Ne
    var = np.array([2 * inst.tau**2 / lam] + [2 * gamma * inst.tau**2] * (inst.K * inst.Ne))

    def unit(j):
        e = np.zeros(n_noise)
        e[j] = 1.0
        return e
    # a quantity: [mean under D, mean under D', noise coefficients]
    x = [0.0, 0.0, unit(0)]
    z = [0.0, 0.0, np.zeros(n_noise)]
    seen_z, j = [], 1
    for _ in range(inst.K):
        y = z  # line 2 with one agent
        v = [2 * y[0] - z[0], 2 * y[1] - z[1], 2 * y[2] - z[2]]  # line 5
        w = x
        for _ in range(inst.Ne):  # f(w) = λw²/2 − b·w
            w = [w[0] - gamma * (lam * w[0] - b + (w[0] - v[0]) / inst.rho),
                 w[1] - gamma * (lam * w[1] - b2 + (w[1] - v[1]) / inst.rho),
                 w[2] - gamma * (lam * w[2] + (w[2] - v[2]) / inst.rho) + unit(j)]
            j += 1
        z = [z[0] + 2 * (w[0] - y[0]), z[1] + 2 * (w[1] - y[1]), z[2] + 2 * (w[2] - y[2])]  # line 10
        x = w
        seen_z.append(z)

    def divergence(quantities):
        delta = np.array([q[0] - q[1] for q in quantities])
        A = np.array([q[2] for q in quantities])
        C = A @ np.diag(var) @ A.T
        sol = np.linalg.lstsq(C, delta, rcond=1e-13)[0]
        assert np.linalg.norm(C @ sol - delta) <= 1e-8 * max(np.linalg.norm(delta), 1e-300)  # Δ in range(C)
        return inst.alpha / 2 * float(delta @ sol)

    bound = inst.alpha * inst.L**2 / (lam * inst.tau**2 * inst.q**2) * (1 - math.exp(-lam * gamma * inst.K * inst.Ne / 2))
    return {"agent": divergence([x]), "state": divergence([x, z]), "transcript": divergence(seen_z + [x])}, bound


@pytest.mark.parametrize("kw", [dict(K=3, Ne=2, rho=1.0, q=2, r=0.5), dict(K=6, Ne=5, rho=0.1, q=1, r=1.0),
                                dict(K=2, Ne=1, rho=10.0, q=10, r=0.2, tau=0.5, alpha=5.0)])
def test_check_proposition4_against_the_plain_construction(kw):
    inst = privacy.Proposition4Instance(N=1, n=1, **kw)
    views, bound = _views(inst)
    for view in ("agent", "state", "transcript"):
        r = privacy.check_proposition4(inst, view)
        # 1e-8 relative: the same Gaussian divergences from two constructions (pseudo-inverses)
        assert r.observed == pytest.approx(views[view], rel=1e-8), view
        assert r.bound == pytest.approx(bound, rel=1e-13)  # Proposition 4 transcribed
    assert views["agent"] <= bound  # what the statement covers holds


def test_counterexample_proposition4_is_the_first_failure_of_the_scan():
    ce = counterexamples.counterexample_proposition4("transcript")
    inst = ce.instance
    assert inst.N == 1  # the scan finds a failure with one agent
    views, bound = _views(inst)
    assert ce.paper.observed == pytest.approx(views["transcript"], rel=1e-8) and views["transcript"] > bound
    assert ce.corrected.observed == pytest.approx(views["agent"], rel=1e-8) and views["agent"] <= bound
    # no failure at a smaller K (N = 1), and the largest ratio among the failures at this K
    def group(K):
        return [privacy.Proposition4Instance(N=1, n=1, q=1, r=1.0, rho=rho, Ne=Ne, K=K, tau=1.0, theta=0.5, seed=0)
                for Ne in (1, 2, 5) for rho in (0.1, 1.0, 10.0, 100.0)]
    for K in range(1, inst.K):
        for cand in group(K):
            v, bd = _views(cand)
            assert v["transcript"] <= bd * (1 + 1e-6)
    ratios = [(_views(c)[0]["transcript"] / _views(c)[1], c) for c in group(inst.K)]
    assert max(ratios, key=lambda t: t[0])[1] == inst
