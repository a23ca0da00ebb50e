"""Every audit beside the exact ε: the ceiling of an audit, the joint confidence of the reported
bound, the fixed-threshold audit of the tight one-release reductions, and the stored records
(``fedrepro.privacy.audit``, ``fedrepro.experiments.privacy.audit_*``).

Soundness is tested as in ``test_privacy_audit.py``: R seeded audits of a mechanism of known ε,
and the number whose bound exceeds the truth compared with Binomial(R, 1 − confidence)
(one-sided binomial test, p > 0.001)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fedrepro.chapters.privacy_audit import alidpfl, dpfedpaq, estimates, fedplt, tables, tight
from fedrepro.privacy import audit
from fedrepro.privacy.gaussian import analytic_gaussian_epsilon
from fedrepro.privacy.subsampled import subsampled_gaussian_epsilon

DELTA = 1e-5


def _p_above(failures: int, trials: int, rate: float = 0.05) -> float:
    return float(stats.binom.sf(failures - 1, trials, rate))


# --- the ceiling ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n, confidence", [(1000, 0.95), (50_000, 0.975), (7, 0.9)])
def test_the_ceiling_is_the_bound_of_an_error_free_audit(n, confidence):
    u = 1.0 - ((1.0 - confidence) / 2) ** (1.0 / n)  # Clopper-Pearson upper bound of 0 events
    assert audit.epsilon_ceiling(n, delta=DELTA, confidence=confidence) == pytest.approx(
        math.log((1 - DELTA - u) / u), rel=1e-12)
    assert audit.mu_ceiling(n, confidence=confidence) == pytest.approx(2 * stats.norm.ppf(1 - u), rel=1e-12)


def test_perfectly_separated_scores_reach_the_ceiling_and_nothing_exceeds_it():
    n = 4000
    res = audit.audit(np.zeros(n), np.ones(n), delta=DELTA, seed=0)
    assert res.epsilon_lower == pytest.approx(audit.epsilon_ceiling(res.evaluated, delta=DELTA), rel=1e-12)
    assert res.mu_lower == pytest.approx(audit.mu_ceiling(res.evaluated), rel=1e-12)
    rng = np.random.default_rng(3)
    for shift in (0.5, 2.0, 8.0):
        r = audit.audit(rng.normal(0, 1, n), rng.normal(shift, 1, n), delta=DELTA, seed=1)
        assert r.epsilon_lower <= audit.epsilon_ceiling(r.evaluated, delta=DELTA) + 1e-12
        assert r.mu_lower <= audit.mu_ceiling(r.evaluated) + 1e-12


@pytest.mark.parametrize("kw, match", [(dict(evaluated=0), "evaluated"), (dict(evaluated=10, delta=1.5), "delta"),
                                       (dict(evaluated=10, confidence=1.0), "confidence")])
def test_the_ceiling_refuses_bad_input(kw, match):
    kw.setdefault("delta", DELTA)
    with pytest.raises(ValueError, match=match):
        audit.epsilon_ceiling(**kw)


# --- joint confidence ----------------------------------------------------------------------------

def test_the_joint_audit_runs_each_route_at_half_the_error_probability():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 5000), rng.normal(1, 1, 5000)
    joint = audit.joint_audit(a, b, delta=DELTA, gaussian=True, confidence=0.95, seed=4)
    each = audit.audit(a, b, delta=DELTA, confidence=0.975, seed=4)
    assert joint["route_confidence"] == 0.975 and joint["confidence"] == 0.95
    assert joint["empirical_epsilon_lower"] == max(each.epsilon_lower, each.epsilon_from_mu)
    alone = audit.joint_audit(a, b, delta=DELTA, gaussian=False, confidence=0.95, seed=4)
    assert alone["empirical_epsilon_lower"] == audit.audit(a, b, delta=DELTA, seed=4).epsilon_lower
    assert alone["epsilon_lower_mu"] is None and alone["routes"] == ["rates"]
    assert audit.route_confidence(0.95, 2) == pytest.approx(0.975)
    with pytest.raises(ValueError, match="routes"):
        audit.route_confidence(0.95, 0)


@pytest.mark.slow
def test_the_reported_maximum_holds_at_the_stated_confidence():
    # the Gaussian mechanism, mu = 1 (sigma = 1), n = 2000 per world: the larger of the two
    # routes exceeds the true eps in at most 5 % of R = 200 audits (p > 0.001). Measured: 0.
    R, true = 200, analytic_gaussian_epsilon(DELTA, 1.0, 1.0)
    fails = 0
    for r in range(R):
        rng = np.random.default_rng([r, 52])
        res = audit.joint_audit(rng.normal(0, 1, 2000), rng.normal(1, 1, 2000), delta=DELTA, gaussian=True, seed=r)
        fails += res["empirical_epsilon_lower"] > true
    assert _p_above(fails, R) > 1e-3, fails


# --- the fixed-threshold audit of the exact reductions ---------------------------------------------

@pytest.mark.parametrize("p, mu, n", [(1.0, 1.0, 20_000), (0.2, 2.0, 20_000), (0.015, 1 / 1.1, 200_000)])
def test_the_fixed_threshold_audit_holds_at_its_confidence(p, mu, n):
    # the counts at a threshold fixed before the draws are binomial: drawn directly, R = 2000
    # audits; the bound exceeds the exact eps in at most 5 % of them (p > 0.001)
    R, exact = 2000, subsampled_gaussian_epsilon(DELTA, p, mu, 1.0)
    t = tight.choose_threshold(p, mu, DELTA, n, 0.95, "rates")
    fpr, tpr = stats.norm.sf(t), (1 - p) * stats.norm.sf(t) + p * stats.norm.sf(t - mu)
    rng = np.random.default_rng(int(1000 * p + mu))
    fp, tp = rng.binomial(n, fpr, R), rng.binomial(n, tpr, R)
    bounds = [audit.audit_counts(int(a), int(n - b), n, delta=DELTA) for a, b in zip(fp, tp, strict=True)]
    fails = sum(b > exact for b in bounds)
    assert _p_above(fails, R) > 1e-3, (fails, exact, max(bounds))


def test_draw_counts_agree_with_the_distributions():
    # 1e6 draws: the counts within 5 standard deviations of their binomial means
    n, p, mu, t = 1_000_000, 0.3, 1.5, np.array([1.0, 2.5])
    fp, fn = tight.draw_counts(p, mu, t, n, np.random.default_rng(0))
    fpr = stats.norm.sf(t)
    fnr = 1 - ((1 - p) * fpr + p * stats.norm.sf(t - mu))
    for k, r in ((fp, fpr), (fn, fnr)):
        assert np.all(np.abs(k - n * r) <= 5 * np.sqrt(n * r * (1 - r))), (k, n * r)


# --- the stored records ----------------------------------------------------------------------------

def _records():
    out = [("dpfedpaq", m) for m in dpfedpaq.load_fedpaq_audit("paper")["mechanisms"]]
    out += [("dpsgd", r) for r in alidpfl.load_dpsgd_audit("paper")["rounds"]]
    out += [("estimates", r) for r in estimates.load_estimates_audit("paper")["rows"]]
    out += [("fedplt", r) for r in fedplt.load_fedplt_audit("paper")["rows"]]
    out += [("tight", r) for r in tight.load_tight_audit("paper")["rows"]]
    return out


def test_every_stored_record_carries_exact_tightness_ceiling_and_scope():
    for name, r in _records():
        assert {"empirical_epsilon_lower", "exact_epsilon", "tightness", "epsilon_ceiling", "scope",
                "confidence"} <= set(r), name
        assert r["scope"] in audit.SCOPES
        assert r["confidence"] == 0.95
        assert r["empirical_epsilon_lower"] <= r["epsilon_ceiling"] + 1e-9, name
        if r["exact_epsilon"] is None:
            assert r["exact_reason"] and r["tightness"] is None, name
        elif r["exact_epsilon"] > 0:
            assert r["tightness"] == pytest.approx(r["empirical_epsilon_lower"] / r["exact_epsilon"], rel=1e-12)


def test_no_stored_bound_exceeds_its_exact_epsilon():
    # each bound may exceed the truth with probability 5 %; with the records stored, none does
    over = [(name, r["empirical_epsilon_lower"], r["exact_epsilon"]) for name, r in _records()
            if r["exact_epsilon"] is not None and r["empirical_epsilon_lower"] > r["exact_epsilon"]]
    assert not over, over


def test_the_tight_audits_reach_eight_tenths_of_the_exact_epsilon_below_their_ceiling():
    # tightness >= 0.8 wherever the exact eps lies below the rates route's ceiling at the draws
    # made (a bound cannot come near an eps its trial count cannot certify)
    rows = tight.load_tight_audit("paper")["rows"]
    reachable = [r for r in rows if r["exact_epsilon"] < audit.epsilon_ceiling(r["trials"], delta=r["delta"],
                                                                            confidence=r["route_confidence"])]
    assert len(reachable) >= 3
    for r in reachable:
        assert r["tightness"] >= 0.8, (r["name"], r["tightness"])


def test_the_exact_epsilons_agree_across_routes():
    # ALI-DPFL: the PLD of the mechanism's dp-accounting event against the closed form of the
    # subsampled Gaussian's tight instance (discretisation 1e-4: agreement to 1e-3)
    cfg = alidpfl.DPSGDAuditConfig()
    assert alidpfl.exact_epsilon(cfg, 0.015, 1) == pytest.approx(
        subsampled_gaussian_epsilon(cfg.delta, 0.015, 1.0, cfg.sigma), abs=1e-3)
    assert alidpfl.exact_epsilon(cfg, 1.0, 1) == pytest.approx(analytic_gaussian_epsilon(cfg.delta, 1.0, cfg.sigma))
    rows = {r["name"]: r for r in tight.load_tight_audit("paper")["rows"]}
    full = next(r for r in alidpfl.load_dpsgd_audit("paper")["rounds"] if r["q"] == 1.0)
    assert rows["dpsgd-q1"]["exact_epsilon"] == pytest.approx(full["exact_epsilon"], rel=1e-9)
    small = next(m for m in dpfedpaq.load_fedpaq_audit("paper")["mechanisms"]
                 if m["sensitivity"] == "authors_code" and m["epsilon"] == 0.1 and not m["levels"])
    assert rows["fedpaq-authors-0.1"]["exact_epsilon"] == pytest.approx(small["exact_epsilon"], rel=1e-12)


def test_the_overview_marks_claims_above_the_ceiling_as_not_refutable():
    frame = tables.overview_frame(dpfedpaq.load_fedpaq_audit("paper"), alidpfl.load_dpsgd_audit("paper"),
                                  estimates.load_estimates_audit("paper"), fedplt.load_fedplt_audit("paper"),
                                  tight.load_tight_audit("paper"))
    for _, row in frame.iterrows():
        if row["claimed ε"] >= row["ceiling"]:
            assert row["verdict"].startswith("not refutable")
        assert row["verdict"] != "refuted" or row["ε lower bound"] > row["claimed ε"]


# --- the quantization-aware attack -----------------------------------------------------------------

@pytest.mark.parametrize("mean, std, step", [(0.0, 0.01, 0.05), (0.013, 0.002, 0.05), (0.3, 0.2, 0.1)])
def test_level_probabilities_are_a_distribution_and_match_stochastic_rounding(mean, std, step):
    from fedrepro.chapters.privacy_audit import quantized

    k = np.arange(-40, 41)
    prob = quantized.level_probability(k, mean, std, step)
    assert prob.sum() == pytest.approx(1.0, abs=1e-12)
    # 10^6 draws of stochastic rounding: each probability within 5 binomial standard errors
    rng = np.random.default_rng(0)
    x = rng.normal(mean, std, 1_000_000) / step
    low = np.floor(x)
    levels = (low + (rng.random(x.size) < x - low)).astype(int)
    freq = np.array([(levels == j).mean() for j in k])
    assert np.all(np.abs(freq - prob) <= 5 * np.sqrt(prob * (1 - prob) / x.size) + 1e-9)


def test_stored_quantized_audit_has_both_attacks_on_the_same_mechanisms():
    from fedrepro.chapters.privacy_audit import quantized

    rows = quantized.load_quantized_audit("paper")["rows"]
    cfg = quantized.QuantizedAuditConfig()
    assert [(r["epsilon"], r["attack"]) for r in rows] == [(e, a) for e in cfg.epsilons for a in quantized.ATTACKS]
    for r in rows:
        assert r["exact_epsilon"] is None and r["exact_reason"] and r["scope"] == "round"
        assert r["empirical_epsilon_lower"] <= r["epsilon_ceiling"]


def test_what_the_page_says_of_the_tight_audits():
    # the page: the tight audit refutes the authors' C/n at eps = 0.1, and the sampled step
    # needs 10^8 draws per world
    rows = {r["name"]: r for r in tight.load_tight_audit("paper")["rows"]}
    assert rows["fedpaq-authors-0.1"]["empirical_epsilon_lower"] > rows["fedpaq-authors-0.1"]["claimed_epsilon"]
    assert rows["dpsgd-paper-q"]["trials"] == 100_000_000


def test_what_the_page_says_of_the_other_audits():
    # the estimates audit's bound (paper reading) equals its ceiling; at q = 1 the DP-SGD scores
    # are Gaussian with mu = 1/sigma (2000 trials: estimate within 0.1) and the claim exceeds the
    # exact eps; the Fed-PLT released model's claim exceeds its exact eps
    paper = next(r for r in estimates.load_estimates_audit("paper")["rows"] if r["reading"] == "paper")
    assert paper["empirical_epsilon_lower"] == pytest.approx(paper["epsilon_ceiling"], rel=1e-12)
    facts = tables.dpsgd_facts(alidpfl.load_dpsgd_audit("paper"))
    assert abs(facts["full_mu_estimate"] - facts["full_mu_exact"]) < 0.1
    assert facts["full_accounting_slack"] > 0
    model = next(r for r in fedplt.load_fedplt_audit("paper")["rows"] if r["view"] == "model")
    assert model["claimed_epsilon"] > 5 * model["exact_epsilon"]
