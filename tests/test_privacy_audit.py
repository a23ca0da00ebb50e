"""The privacy auditor (``fedrepro.privacy.audit``), validated on mechanisms whose ε is known
exactly: the Gaussian mechanism (ε at δ from the analytic formula, cross-checked with
dp-accounting) and randomized response (ε₀, δ = 0).

Soundness is a statement about repeated audits: a bound at confidence 0.95 may exceed the
truth in at most 5 % of them. Each soundness test runs R seeded audits and compares the
number of failures with Binomial(R, 0.05): the sound auditor must not be significantly above
it (one-sided binomial test, p > 0.001), and the variants without the held-out split or
without confidence intervals must be (p < 0.01): the test can tell a broken auditor apart."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fedrepro.privacy import audit
from fedrepro.privacy.gaussian import analytic_gaussian_epsilon

DELTA = 1e-5
R = 200  # audits per soundness test


def _gaussian_failures(sigma: float, n: int, **kw) -> tuple[int, int]:
    """Failures of the ε and μ bounds over R audits of the Gaussian mechanism (sensitivity 1,
    noise σ; the attack score is the output itself)."""
    true_eps, true_mu = analytic_gaussian_epsilon(DELTA, 1.0, sigma), 1.0 / sigma
    fe = fm = 0
    for r in range(R):
        rng = np.random.default_rng([r, int(10 * sigma)])
        res = audit.audit(rng.normal(0.0, sigma, n), rng.normal(1.0, sigma, n), delta=DELTA, seed=r, **kw)
        fe += res.epsilon_lower > true_eps
        fm += res.mu_lower > true_mu
    return fe, fm


def _p_above(failures: int) -> float:
    """P(X >= failures) for X ~ Binomial(R, 0.05): small when the failures are too many."""
    return float(stats.binom.sf(failures - 1, R, 0.05))


@pytest.mark.slow
@pytest.mark.parametrize("sigma, n", [(1.0, 2000), (4.0, 200)])
def test_the_bounds_hold_on_the_gaussian_mechanism(sigma, n):
    # measured: 0 and 1 failures of 200 (sigma = 1), 0 and 0 (sigma = 4)
    fe, fm = _gaussian_failures(sigma, n)
    assert _p_above(fe) > 1e-3 and _p_above(fm) > 1e-3, (fe, fm)


@pytest.mark.slow
@pytest.mark.parametrize("variant", [{"heldout": False}, {"interval": False}])
def test_without_the_heldout_split_or_the_intervals_the_bounds_break(variant):
    # measured (sigma = 1, n = 2000): no held-out split: the mu bound fails 24 of 200 times
    # (p = 0.0011); no intervals: 73 of 200 (its eps bound fails 18 of 200 at sigma = 4, n = 200:
    # 9 %, above the 5 % allowed but not significantly at this R)
    _, fm = _gaussian_failures(1.0, 2000, **variant)
    assert _p_above(fm) < 1e-2, fm


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_the_bound_holds_on_randomized_response(eps0):
    p = math.exp(eps0) / (1 + math.exp(eps0))
    failures = 0
    for r in range(R):
        rng = np.random.default_rng([r, 7])
        out = (rng.random(1000) > p).astype(float)  # D: the true bit 0, reported 1 w.p. 1 - p
        inn = (rng.random(1000) < p).astype(float)  # D': the true bit 1
        failures += audit.audit(out, inn, delta=0.0, seed=r).epsilon_lower > eps0
    assert _p_above(failures) > 1e-3, failures


def test_the_bounds_are_tight_at_the_sample_sizes_used():
    """Ratios measured: μ 0.95, ε from μ 0.95 of the truth (σ = 1, 20,000 scores per world);
    the rate-based ε at δ = 1e-5 0.50 (it needs the rare tail); randomized response 0.98 of ε₀
    with 100,000 reports."""
    rng = np.random.default_rng(0)
    res = audit.audit(rng.normal(0, 1, 20_000), rng.normal(1, 1, 20_000), delta=DELTA, seed=1)
    true = analytic_gaussian_epsilon(DELTA, 1.0, 1.0)
    assert res.mu_lower >= 0.9 and res.epsilon_from_mu >= 0.85 * true
    assert res.epsilon_lower >= 0.4 * true
    assert abs(res.mu_estimate - 1.0) < 0.05
    p = math.exp(1.0) / (1 + math.exp(1.0))
    rr = audit.audit((rng.random(100_000) > p).astype(float), (rng.random(100_000) < p).astype(float),
                     delta=0.0, seed=2)
    assert 0.9 <= rr.epsilon_lower <= 1.0


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_the_gdp_conversion_agrees_with_dp_accounting(mu):
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref = pld.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0,
                                      value_discretization_interval=1e-4).get_epsilon_for_delta(DELTA)
    # the PLD is pessimistic by its discretisation: agreement to 1e-3 relative
    assert audit.epsilon_from_mu(mu, DELTA) == pytest.approx(ref, rel=1e-3)


def test_rates_to_epsilon_and_mu_are_the_hypothesis_testing_bounds():
    # a test with FPR = FNR = 0.1 refutes eps < log(0.9/0.1) at delta = 0
    assert audit.epsilon_from_rates(0.1, 0.1, 0.0) == pytest.approx(math.log(9.0))
    assert audit.epsilon_from_rates(0.5, 0.5, 0.0) == 0.0
    assert audit.gdp_mu_from_rates(0.1, 0.1) == pytest.approx(2 * stats.norm.ppf(0.9))
    assert audit.clopper_pearson_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))


@pytest.mark.parametrize("kw, match", [
    (dict(scores_out=[1.0, 2.0], scores_in=[1.0, 2.0, 3.0, 4.0]), "at least 4"),
    (dict(scores_out=[1.0, 2.0, np.nan, 4.0], scores_in=[1.0, 2.0, 3.0, 4.0]), "finite"),
    (dict(scores_out=["1", "2", "3", "4"], scores_in=[1.0, 2.0, 3.0, 4.0]), "scores_out"),
    (dict(scores_out=[1.0, 2.0, 3.0, 4.0], scores_in=[1.0, 2.0, 3.0, 4.0], confidence=1.0), "confidence"),
    (dict(scores_out=[1.0, 2.0, 3.0, 4.0], scores_in=[1.0, 2.0, 3.0, 4.0], delta=-1e-5), "delta"),
    (dict(scores_out=[1.0, 2.0, 3.0, 4.0], scores_in=[1.0, 2.0, 3.0, 4.0], heldout=1), "heldout"),
])
def test_bad_input_is_refused_naming_the_parameter(kw, match):
    kw.setdefault("delta", DELTA)
    with pytest.raises((ValueError, TypeError), match=match):
        audit.audit(**kw)
