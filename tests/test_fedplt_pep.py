"""Exact worst-case rates of Fed-PLT by performance estimation (fedrepro.fedplt.checks.pep).

Independent expectations: the closed-form PRS factor zeta written out here (Lemma 3), and a
hand transcription of one round on a one-dimensional quadratic (a 2x2 linear map); the
measured contractions come from the library's implementation of Algorithm 1 on generated
instances. Tolerances: pep.RATE_RTOL (1e-5 relative on a one-agent rate; Clarabel's SDP
tolerance is 1e-8 on the squared rate) and pep.ATTAINED_RTOL (1e-3: N = 2, 3 agents and the
rebuilt worst case).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.fedplt.checks import pep

LAM, LAM_BAR = 0.5, 7.5


def _zeta(rho: float, lam: float, lam_bar: float) -> float:
    return max(abs(1 - rho * lam) / (1 + rho * lam), abs(1 - rho * lam_bar) / (1 + rho * lam_bar))


def _quadratic_1d_rate(rho: float, Ne: int, solver: str, lam: float, lam_bar: float, grid: int = 4001) -> float:
    """max over curvatures a in [lam, lam_bar] of the spectral norm of one round on
    f(x) = a x^2 / 2 with N = 1 (then y = z, v = z, x* = 0, z* = 0):
    x+ = A x + (1 - A) z / (1 + rho a), z+ = 2 x+ - z, with A the local solver's factor."""
    best = 0.0
    L, mu = lam_bar + 1 / rho, lam + 1 / rho
    for a in np.linspace(lam, lam_bar, grid):
        h = a + 1 / rho
        if solver == "gd":
            A = (1 - 2 / (L + mu) * h) ** Ne
        else:
            beta = (math.sqrt(L) - math.sqrt(mu)) / (math.sqrt(L) + math.sqrt(mu))
            w = u = 1.0
            for _ in range(Ne):
                u_new = w - h * w / L
                w, u = u_new + beta * (u_new - u), u_new
            A = w
        B = (1 - A) / (1 + rho * a)
        best = max(best, float(np.linalg.norm(np.array([[A, B], [2 * A, 2 * B - 1]]), 2)))
    return best


@pytest.mark.parametrize("rho", [0.1, 1.0, 10.0])
def test_exact_prox_pep_equals_closed_form_prs_rate(rho):
    res = pep.check_prox_rate(pep.PEPInstance(LAM, LAM_BAR, rho, N=2))
    assert res.bound == pytest.approx(_zeta(rho, LAM, LAM_BAR), rel=1e-15)
    assert abs(res.observed - _zeta(rho, LAM, LAM_BAR)) <= pep.RATE_RTOL * res.bound
    assert res.holds


@pytest.mark.parametrize("rho,Ne", [(0.1, 1), (1.0, 2), (3.0, 5)])
def test_gd_worst_case_is_a_one_dimensional_quadratic(rho, Ne):
    rate = pep.worst_case_rate(pep.PEPInstance(LAM, LAM_BAR, rho, Ne, "gd")).rate
    assert rate == pytest.approx(_quadratic_1d_rate(rho, Ne, "gd", LAM, LAM_BAR), rel=pep.RATE_RTOL)


def test_agd_worst_case_exceeds_every_quadratic():
    """AGD with constant momentum: the worst case over F(lam, lam_bar) is not a quadratic
    (the chapter's finding); it is never below the quadratic one."""
    rate = pep.worst_case_rate(pep.PEPInstance(LAM, LAM_BAR, 3.0, 5, "agd")).rate
    quad = _quadratic_1d_rate(3.0, 5, "agd", LAM, LAM_BAR)
    assert rate >= quad * (1 - pep.RATE_RTOL)
    assert rate > 1.1 * quad


def test_agents_give_the_same_worst_case():
    rates = [pep.worst_case_rate(pep.PEPInstance(LAM, LAM_BAR, 1.0, 2, "gd", N=N)).rate for N in (1, 2, 3)]
    assert max(rates) - min(rates) <= pep.ATTAINED_RTOL * min(rates)


def test_pep_bounds_every_measured_contraction_on_50_instances():
    rng = np.random.default_rng(2024)
    checked = 0
    for k in range(50):
        solver = ("gd", "agd")[k % 2]
        Ne = int(rng.choice([1, 2, 3]))
        rho = float(10 ** rng.uniform(-1, 1))
        N = int(rng.integers(1, 3))
        if k % 5 == 4:  # logistic instance (v2 generator, small)
            from fedrepro.problems.logistic import logistic_v2

            problem = logistic_v2(convex=True, N=N, n=2, q=10, rng=rng)
            inst = pep.PEPInstance(problem.lam, problem.lam_bar, rho, Ne, solver, N=N)
            measured = pep.logistic_contraction(inst, problem, rng, states=6)
        else:
            lam = float(rng.uniform(0.2, 1.0))
            lam_bar = lam * float(10 ** rng.uniform(0.3, 1.2))
            gamma = None if solver == "agd" else float(rng.uniform(0.2, 0.99)) * 2 / (lam_bar + 1 / rho)
            inst = pep.PEPInstance(lam, lam_bar, rho, Ne, solver, gamma=gamma, N=N)
            measured = pep.quadratic_contraction(inst, int(rng.integers(2, 4)), rng)
        res = pep.check_measured_below(inst, measured)
        assert res.holds, (inst, res)
        assert measured > 0.05  # a real contraction was measured
        checked += 1
    assert checked >= 50


@pytest.mark.parametrize("solver,Ne,rho,N", [("gd", 2, 1.0, 2), ("agd", 3, 3.0, 1)])
def test_worst_case_instance_attains_the_pep_value(solver, Ne, rho, N):
    inst = pep.PEPInstance(LAM, LAM_BAR, rho, Ne, solver, N=N)
    res = pep.check_worst_case_attained(inst)
    assert res.holds, res
    assert abs(res.observed - res.bound) <= pep.ATTAINED_RTOL * res.bound
    assert res.details["interpolation_violation"] <= 1e-6


def test_interpolated_problem_reproduces_its_data():
    """The interpolant returns the data's gradients at the data points (Theorem 4 of Taylor et al.)."""
    _, wc = pep.worst_case_instance(pep.PEPInstance(LAM, LAM_BAR, 1.0, 2, "gd", N=2))
    problem = wc.problem(LAM, LAM_BAR)
    for i in range(problem.N):
        for x, g in zip(wc.points[i], wc.grads[i], strict=True):
            X = np.tile(x, (problem.N, 1))
            got = problem.grad(X)[i]
            assert np.linalg.norm(got - g) <= 1e-4 * (1 + np.linalg.norm(g))


def test_printed_bound_can_fall_below_the_exact_worst_case():
    """Proposition 1 as printed (coupling 1/(lam + 1/rho)) at rho < 1: below the exact rate
    (a point of the chapter's grid where the printed bound fails)."""
    inst = pep.PEPInstance(LAM, LAM_BAR, 0.05, 2, "gd")
    exact = pep.worst_case_rate(inst).rate
    assert pep.proposition_bound(inst, corrected=False) < exact * (1 - pep.RATE_RTOL)
    assert pep.proposition_bound(inst, corrected=True) >= exact * (1 - pep.RATE_RTOL)


@pytest.mark.parametrize("kwargs,match", [
    ({"lam": 2.0, "lam_bar": 1.0}, "lam_bar must be >= lam"),
    ({"lam": 1.0, "lam_bar": 1.0}, "0 < lam < lam_bar"),
    ({"rho": 0.0}, "rho"),
    ({"Ne": 0}, "Ne"),
    ({"solver": "sgd"}, "solver"),
    ({"norm": "z"}, "norm='z' needs solver='prox'"),
    ({"gamma": 5.0}, "gamma must lie in"),
    ({"solver": "agd", "gamma": 0.1}, "gamma is only used"),
    ({"rounds": 0}, "rounds"),
])
def test_bad_inputs_name_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pep.PEPInstance(**kwargs)


def test_quadratic_contraction_needs_both_extremes():
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        pep.quadratic_contraction(pep.PEPInstance(), 1, np.random.default_rng(0))


def test_bad_sdp_solver():
    with pytest.raises(ValueError, match="sdp_solver"):
        pep.worst_case_rate(pep.PEPInstance(), sdp_solver="MOSEK")



def test_best_rho_check_reads_the_papers_grid_of_three_values():
    """The scorecard's best-rho check compares with what §VII-D says (rho around 1 best among
    Table VIII's 0.1, 1 and 10 at Ne = 5), not with a value of ours: the nearest of the three on
    a log scale decides, so a worst-case optimum of 0.5 counts as 1, 0.2 as 0.1 and 4 as 10."""
    from fedrepro.chapters.fedplt.worst_case import scorecard

    def decide(worst5: float) -> str:
        best = {"Ne": np.array([1, 5]), "worst_case_rho": np.array([0.2, worst5]),
                "tuned_rho": np.array([10.0, 1.78]), "agree": np.array([False, False])}
        return scorecard.best_rho_outcome(best).status

    assert decide(0.5) == "match" and decide(2.5) == "match"
    assert decide(0.2) == "miss" and decide(4.0) == "miss"
    item = scorecard.best_rho_outcome({"Ne": np.array([5]), "worst_case_rho": np.array([0.7]),
                                       "tuned_rho": np.array([1.8]), "agree": np.array([False])})
    assert "around rho = 1" in item.paper_value and "0.7" in item.ours
