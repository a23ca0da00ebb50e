"""Proofs as checks of Fed-PLT (fedrepro.fedplt.checks): every statement on random
instances, every confirmed counterexample pinned, the corrected statements, determinism and
bad inputs. Tolerances are stated next to each check (in the check's docstring and here)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fedrepro.fedplt import checks
from fedrepro.fedplt.checks import counterexamples as ce

# --------------------------------------------------------------------------- implementation


@pytest.mark.parametrize("solver", ["gd", "agd"])
def test_affine_round_of_the_implementation_matches_the_reference(solver):
    # the implementation and an independent transcription of Algorithm 1 agree to round-off
    # (1e-12 absolute on entries of order 1)
    problem = checks.quadratic_problem(3, 2, 0.5, 4.0, np.random.default_rng(1))
    kw = {"gamma": 0.2} if solver == "gd" else {}
    a = checks.affine_round(problem, rho=0.7, Ne=3, solver=solver, engine="implementation", **kw)
    b = checks.affine_round(problem, rho=0.7, Ne=3, solver=solver, engine="reference", **kw)
    np.testing.assert_allclose(a.M, b.M, atol=1e-12)
    np.testing.assert_allclose(a.m, b.m, atol=1e-12)
    # the fixed point of Proposition 1 is a fixed point of the implemented round (1e-12)
    assert np.linalg.norm(a.M @ a.s_bar + a.m - a.s_bar) < 1e-12 * (1 + np.linalg.norm(a.s_bar))


# --------------------------------------------------------------------------- statements that hold

# (statement, variant, number of random instances, minimum number of applicable instances);
# each check carries its own tolerance: closed forms rtol 1e-9 (round-off), Monte Carlo 4
# standard errors, Lemma 6 1e-10 (1 + max|z|). An instance outside a statement's hypotheses
# (e.g. an unstable S in Propositions 1-3) is "not applicable": the statement claims nothing
# there, so it is counted apart and never as a success; a statement with fewer applicable
# instances than its minimum fails the test (the minimum is stated here, before the run,
# from the share of the box that satisfies the hypotheses: about 40 % for Proposition 1,
# 70 % for Proposition 3, 50-75 % for Proposition 2 and Corollary 1).
HOLDING = [
    ("lemma2", "paper", 40, 40),
    ("lemma3", "paper", 40, 40),
    ("lemma4", "paper", 3, 3),
    ("lemma5", "paper", 10, 10),
    ("lemma6", "paper", 40, 40),
    ("proposition1", "corrected", 80, 25),
    ("lemma7", "paper", 3, 3),
    ("lemma7", "corrected", 3, 3),
    ("proposition2", "corrected", 6, 3),
    ("lemma8", "corrected", 40, 40),
    ("proposition3", "corrected", 40, 20),
    ("proposition4", "agent", 30, 30),
    ("proposition4", "models", 30, 30),
    ("corollary1", "corrected", 8, 5),
    ("corollary1-noise", "paper", 3, 3),
]


def tally(results) -> dict[str, list]:
    """Split check results into ``applicable`` (the statement's hypotheses hold) and
    ``not_applicable``; ``failed`` lists the applicable ones that do not hold."""
    applicable = [r for r in results if r.details["applicable"]]
    return {"applicable": applicable,
            "not_applicable": [r for r in results if not r.details["applicable"]],
            "failed": [r for r in applicable if not r.holds]}


@pytest.mark.parametrize("name, variant, count, minimum", HOLDING, ids=[f"{s}-{v}" for s, v, _, _ in HOLDING])
def test_statement_holds_on_random_instances(name, variant, count, minimum):
    rng = np.random.default_rng(2024)
    instances = checks.random_instances(name, count, rng)
    t = tally([checks.evaluate(name, inst, variant) for inst in instances])
    n_app, n_out = len(t["applicable"]), len(t["not_applicable"])
    assert n_app + n_out == count
    assert not t["failed"], t["failed"]
    assert n_app >= minimum, f"{name}: only {n_app} of {count} instances applicable ({n_out} not), minimum {minimum}"
    for r in t["applicable"]:
        assert math.isfinite(r.ratio) and r.ratio <= 1 + r.details["rtol"] + r.details["atol"] / max(r.bound, 1e-300)
    for r in t["not_applicable"]:
        assert math.isnan(r.ratio)


def test_tally_counts_non_applicable_instances_apart():
    """A statement whose instances are all outside its hypotheses has no applicable instance:
    the test above would fail it (minimum >= 3), it does not pass vacuously."""
    unstable = checks.Proposition1Instance(N=1, n=1, lam=1.0, lam_bar=10.0, rho=100.0, Ne=1, theta=0.99)
    res = checks.check_proposition1(unstable, "corrected")
    assert res.details["radius_S"] >= 1 and not res.details["applicable"]
    t = tally([res, res])
    assert len(t["applicable"]) == 0 and len(t["not_applicable"]) == 2 and not t["failed"]
    assert min(m for *_, m in HOLDING) >= 3


@pytest.mark.parametrize("name", ["proposition1", "proposition3"])
def test_non_applicable_means_an_unstable_S(name):
    """Not applicable exactly when rho(S) >= 1, the hypothesis of Propositions 1 and 3
    (recomputed here from the eigenvalues of the instance's S)."""
    S_of = checks.proposition1_S if name == "proposition1" else checks.proposition3_S
    for inst in checks.random_instances(name, 40, np.random.default_rng(5)):
        res = checks.evaluate(name, inst, "corrected")
        radius = np.max(np.abs(np.linalg.eigvals(S_of(inst, "corrected"))))
        assert res.details["applicable"] == bool(radius < 1)


def test_lemma3_v2_is_tight_and_lemma2_is_exact_on_quadratics():
    # Lemma 3's zeta is attained on the consensus problem (ratio 1 to 1e-9)
    res = checks.check_lemma3(checks.Lemma3Instance(N=3, n=2, lam=1.0, lam_bar=10.0, rho=0.5))
    assert res.ratio == pytest.approx(1.0, abs=1e-9)
    res = checks.check_lemma2(checks.Lemma2Instance(kind="quadratic", n=3, lam=1.0, lam_bar=10.0, step_factor=0.7))
    assert res.ratio == pytest.approx(1.0, abs=1e-12)


def test_proposition4_released_model_is_below_the_bound_with_margin():
    # the default linear-Gaussian instance: exact divergence of the released model well below
    # the bound (ratio < 0.9; it is about 0.3 here)
    res = checks.check_proposition4(checks.Proposition4Instance())
    assert res.holds and res.ratio < 0.9


# --------------------------------------------------------------------------- counterexamples

# (counterexample, margin by which the printed statement is violated: ratio > 1 + margin)
PINNED = [
    ("eq11", 0.5),
    ("proposition1", 0.5),
    ("proposition1-contractive", 0.05),
    ("lemma7-proof", 0.02),
    ("proposition2", 0.3),
    ("lemma8", 0.3),
    ("proposition3", 0.5),
    ("proposition4", 0.1),
    ("corollary1", 0.4),
]


@pytest.mark.parametrize("name, margin", PINNED, ids=[p[0] for p in PINNED])
def test_counterexample_violates_the_statement_and_satisfies_the_correction(name, margin):
    c = ce.COUNTEREXAMPLES[name]()
    assert not c.paper.holds
    assert c.paper.ratio > 1 + margin, c
    assert c.corrected is not None and c.corrected.holds, c


def test_lemma3_v1_as_printed_counterexample():
    c = ce.counterexample_lemma3_v1()
    # v1's printed zeta is 0 while the true PRS constant is 0.2 (N = 1, n = 2, lam_bar = 1.5, rho = 1)
    assert c.paper.bound == 0.0 and c.paper.observed > 0.19 and not c.paper.holds
    assert c.corrected.holds and c.corrected.ratio == pytest.approx(1.0, abs=1e-9)


def test_proposition1_counterexample_in_closed_form():
    # N = 1, n = 1, f = x^2/2 (lam = lam_bar = 1), exact prox: the round is
    # x+ = z/(1+rho), z+ = z (1-rho)/(1+rho), so ||M|| = sqrt(1 + (1-rho)^2)/(1+rho), while the
    # printed ||S|| = sqrt(rho^2 + (1-rho)^2)/(1+rho); at rho = 0.3: 0.939 against 0.586.
    rho = 0.3
    inst = checks.Proposition1Instance(N=1, n=1, lam=1.0, lam_bar=1.0, rho=rho, Ne=1, theta=0.5)
    paper = checks.check_proposition1(inst, "paper")
    corrected = checks.check_proposition1(inst, "corrected")
    assert paper.observed == pytest.approx(math.sqrt(1 + (1 - rho) ** 2) / (1 + rho), rel=1e-12)
    assert paper.bound == pytest.approx(math.sqrt(rho ** 2 + (1 - rho) ** 2) / (1 + rho), rel=1e-12)
    assert paper.details["radius_S"] < 1 and not paper.holds
    assert corrected.ratio == pytest.approx(1.0, abs=1e-9)  # the corrected bound is attained
    # for rho >= 1 the printed statement holds on the same family
    assert checks.check_proposition1(dataclasses.replace(inst, rho=2.0)).holds


def test_lemma8_counterexample_of_the_spec():
    # kappa = 2, l = 3: worst |u^3| = 0.0784 against the bound 0.0754 (exact scalar recursion)
    res = checks.check_lemma8(checks.Lemma8Instance(kappa=2.0, ell=3, sequence="u"))
    assert res.observed == pytest.approx(0.0784, abs=5e-5) and res.bound == pytest.approx(0.0754, abs=5e-5)
    assert not res.holds
    assert checks.check_lemma8(checks.Lemma8Instance(kappa=2.0, ell=3, sequence="u"), "corrected").holds


def test_proposition3_premise_fails_through_lemma8():
    # rho = 3, Ne = 10: the accelerated local map's exact Lipschitz constant exceeds chi(Ne)
    res = checks.check_proposition3(checks.Proposition3Instance(rho=3.0, Ne=10))
    assert res.details["local_lipschitz"] > 1.05 * res.details["chi_Ne"]


def test_proposition4_state_and_messages_exceed_the_bound():
    inst = checks.Proposition4Instance(N=3, n=1, q=1, r=1.0, rho=10.0, Ne=2, K=20, tau=1.0, theta=0.5)
    released = checks.check_proposition4(inst, "agent")
    state = checks.check_proposition4(inst, "state")
    messages = checks.check_proposition4(inst, "transcript")
    assert released.holds
    assert messages.observed >= state.observed >= checks.check_proposition4(inst, "models").observed
    assert not messages.holds and messages.ratio > 1.1
    # the implementation and the reference give the same divergence (1e-9 relative)
    assert messages.observed == pytest.approx(checks.check_proposition4(inst, "transcript", "reference").observed,
                                              rel=1e-9)


def test_lemma7_printed_condition_is_reversed():
    counts = checks.lemma7_condition_agreement(5000, np.random.default_rng(3))
    assert counts["mismatch_corrected"] == 0 and counts["complex_eigenvalues"] == 0
    assert counts["mismatch_printed"] == counts["count"]
    # the lemma itself holds: a stabilising (rho, Ne, gamma) exists even where Ne = 1 cannot work
    assert not checks.check_lemma7_one_step(1.0, 1.0, 10.0).holds
    assert checks.check_lemma7(checks.Lemma7Instance(lam=1.0, lam_bar=10.0)).holds


# --------------------------------------------------------------------------- search, determinism


def test_adversarial_search_finds_the_proposition1_failure():
    found = checks.adversarial_search("proposition1", np.random.default_rng(5), restarts=1, samples=20, maxiter=15)
    assert found.result.ratio > 1.2 and not found.result.holds
    assert found.instance.rho < 1


def test_searches_and_monte_carlo_checks_are_deterministic():
    a = checks.random_instances("proposition2", 3, np.random.default_rng(9))
    b = checks.random_instances("proposition2", 3, np.random.default_rng(9))
    assert a == b
    inst = checks.Lemma4Instance(trials=200, noise=0.1)
    assert checks.check_lemma4(inst) == checks.check_lemma4(inst)
    c1 = checks.Corollary1Instance(trials=50, K=3)
    assert checks.check_corollary1(c1, "corrected") == checks.check_corollary1(c1, "corrected")


def test_fit_rate_recovers_a_geometric_rate():
    from fedrepro.chapters.fedplt.theory.checks import fit_rate

    k = np.arange(200)
    assert fit_rate(0.8 ** k * 3.0) == pytest.approx(0.8, rel=1e-12)
    assert math.isnan(fit_rate(np.ones(10)))


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("call, name", [
    (lambda: checks.evaluate("lemma9", None), "statement"),
    (lambda: checks.evaluate("lemma2", checks.Lemma2Instance(), "corrected"), "variant"),
    (lambda: checks.check_lemma2(checks.Lemma2Instance(step_factor=1.5)), "step_factor"),
    (lambda: checks.check_lemma3(checks.Lemma3Instance(), "v3"), "version"),
    (lambda: checks.check_lemma4(checks.Lemma4Instance(p_min=0.9, p_max=0.5)), "p_min"),
    (lambda: checks.check_lemma6(checks.Lemma6Instance(kind="ball")), "kind"),
    (lambda: checks.check_lemma8(checks.Lemma8Instance(sequence="v")), "sequence"),
    (lambda: checks.check_proposition4(checks.Proposition4Instance(), "everything"), "view"),
    (lambda: checks.check_proposition4(checks.Proposition4Instance(theta=1.2)), "theta"),
    (lambda: checks.check_proposition1(checks.Proposition1Instance(), "revised"), "variant"),
    (lambda: checks.random_instances("lemma2", -1, np.random.default_rng(0)), "count"),
    (lambda: checks.adversarial_search("lemma2", np.random.default_rng(0), restarts=0), "restarts"),
    (lambda: checks.affine_round(checks.quadratic_problem(1, 1, 1.0, 1.0, np.random.default_rng(0)),
                                 rho=1.0, Ne=1, engine="other"), "engine"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- scorecard provider


def test_scorecard_provider_reports_every_statement(results_dir, monkeypatch):
    """The provider on the quick profile (its paper results are the committed ones): one check
    item per statement, with the status following the stored verdicts."""
    from fedrepro.chapters.fedplt import problems as problems_report
    from fedrepro.chapters.fedplt.theory import checks as theory
    from fedrepro.chapters.fedplt.theory import jacobian as theory_jacobian
    from fedrepro.chapters.fedplt.theory import scorecard
    from fedrepro.report.scorecard import build

    # every loader the provider calls, on the quick profile: a test never computes a paper one
    for module, name in ((theory, "load_checks"), (theory, "load_counterexamples"), (theory, "load_stability"),
                         (theory, "load_rate"), (theory_jacobian, "load_jacobian"), (problems_report, "load")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda profile, original=original: original("quick"))
    out = scorecard.outcomes()
    assert set(scorecard.CHECK_ITEMS) <= set(out)
    assert out["fedplt-v2-check-prop1"].status == "erratum"
    assert out["fedplt-v2-check-lemma8"].status == "erratum"
    assert out["fedplt-v2-check-lemma3"].status == "match"
    assert out["fedplt-v2-check-prop4"].status == "match"
    assert out["fedplt-v2-check-prop4-messages"].status == "erratum"
    assert all(o.kind == "check" and o.paper == "fedplt" for k, o in out.items() if "-check-" in k)
    items = {it.id: it for it in build(out)}  # the claim ids exist in data/paper
    assert items["fedplt-v2-C12"].status in ("match", "miss")
    assert items["fedplt-v2-check-prop1"].ref == "Proposition 1"


# --------------------------------------------------------------------------- S against the round's Jacobian

# S bounds the blocks of one round entry by entry (the proof of Proposition 1):
#   ||dx+/dx|| <= a, ||dx+/dz|| <= c (1 + a), ||dz+/dx|| <= 2a, ||dz+/dz|| <= zeta + 2ca,
# with a = chi^Ne (GD) or the AGD output factor (Proposition 3), zeta of Lemma 3 and the
# corrected c = 1/(1 + rho lam). The Jacobian is taken numerically from the implementation of
# Algorithm 1 (fedplt_iteration), by central differences written here (exact up to
# round-off: a round on quadratics is affine). Tolerance 1e-9 relative + 1e-12 absolute.
S_RTOL, S_ATOL = 1e-9, 1e-12


def _round_jacobian_by_differences(problem, *, rho, Ne, solver, gamma=None):
    from fedrepro.fedplt.algorithm import fedplt_iteration

    N, n = problem.N, problem.n
    d = 2 * N * n
    base = np.random.default_rng(0).standard_normal(d)
    J = np.empty((d, d))
    for j in range(d):
        cols = []
        for sign in (1.0, -1.0):
            s = base.copy()
            s[j] += sign
            x, z, _ = fedplt_iteration(s[:N * n].reshape(N, n), s[N * n:].reshape(N, n), problem, rho=rho,
                                       Ne=Ne, solver=solver, gamma=gamma)
            cols.append(np.concatenate([x.ravel(), z.ravel()]))
        J[:, j] = (cols[0] - cols[1]) / 2.0
    return J


def _block_norms(J, N, n):
    k = N * n
    blocks = ((J[:k, :k], J[:k, k:]), (J[k:, :k], J[k:, k:]))
    return np.array([[np.linalg.norm(b, 2) for b in row] for row in blocks])


def _assert_S_bounds_blocks(S, J, N, n, inst):
    B = _block_norms(J, N, n)
    assert np.all(B <= S * (1 + S_RTOL) + S_ATOL), (inst, B, S)


def test_S_of_proposition1_bounds_the_blocks_of_the_round_jacobian():
    """On 40 random Proposition 1 instances (stable or not: the entrywise bound needs no
    stability), with GD local training."""
    for inst in checks.random_instances("proposition1", 40, np.random.default_rng(31)):
        S = checks.proposition1_S(inst, "corrected")
        J = _round_jacobian_by_differences(inst.problem(), rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma)
        _assert_S_bounds_blocks(S, J, inst.N, inst.n, inst)


def test_S_of_proposition3_bounds_the_blocks_of_the_round_jacobian():
    """The same with accelerated local training (a = the AGD output factor)."""
    for inst in checks.random_instances("proposition3", 30, np.random.default_rng(32)):
        S = checks.proposition3_S(inst, "corrected")
        J = _round_jacobian_by_differences(inst.problem(), rho=inst.rho, Ne=inst.Ne, solver="agd")
        _assert_S_bounds_blocks(S, J, inst.N, inst.n, inst)


@pytest.mark.parametrize("rho, theta, Ne", [(0.5, 0.75, 3), (0.2, 0.9, 1), (1.0, 0.6, 5)])
def test_S_is_attained_entry_by_entry_on_the_scalar_quadratic(rho, theta, Ne):
    """N = n = 1, f = x^2/2, rho lam <= 1, a GD step with g = 1 - gamma (lam + 1/rho) < 0 and
    Ne odd: the round is x+ = g^Ne x + (1 - g^Ne) c z, z+ = 2 g^Ne x + (2 c (1 - g^Ne) - 1) z
    with c = 1/(1 + rho), so |g^Ne| = a, (1 + a) c, 2a and 2c(1 + a) - 1 = zeta + 2ca: every
    entry of S is attained (to 1e-9), and a wrong entry is caught."""
    inst = checks.Proposition1Instance(N=1, n=1, lam=1.0, lam_bar=1.0, rho=rho, Ne=Ne, theta=theta)
    S = checks.proposition1_S(inst, "corrected")
    J = _round_jacobian_by_differences(inst.problem(), rho=rho, Ne=Ne, solver="gd", gamma=inst.gamma)
    g = 1 - inst.gamma * (1 + 1 / rho)
    a, c, zeta = abs(g) ** Ne, 1 / (1 + rho), (1 - rho) / (1 + rho)
    assert g < 0 and Ne % 2 == 1 and rho <= 1
    expected = np.array([[a, (1 + a) * c], [2 * a, zeta + 2 * c * a]])
    np.testing.assert_allclose(np.abs(J), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(S, expected, rtol=1e-9, atol=1e-12)
