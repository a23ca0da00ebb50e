"""DP-FedPAQ's amplification chain (eq. 15) and the calibrations of eq. (16): the chain's
entries by hand, the boundaries of every condition, and every message in full."""

from __future__ import annotations

import math

import mpmath
import pytest

from fedrepro.dpfedpaq import amplification as am


def test_chain_entries_by_hand():
    # E = 10, b = 12, n = 600: gamma = 0.2, p = 1 − 0.98^10; eps0 = 0.5
    steps = am.amplification_chain(0.5, 10, 12, 600)
    p = 1 - 0.98**10
    gamma = 0.2
    assert [s.value for s in steps] == pytest.approx(
        [math.log1p(p * math.expm1(0.5)), math.log1p(gamma * math.expm1(0.5)), gamma * math.expm1(0.5),
         2 * gamma * 0.5], rel=1e-14)
    assert [s.holds for s in steps] == [True, True, True, True]
    # the labels the book prints (a regression guard: they are ours, pinned here)
    assert [(s.name, s.condition) for s in steps] == [
        ("log(1 + (1-(1-b/n)^E)(e^eps0 - 1))", "b <= n"),
        ("log(1 + gamma (e^eps0 - 1))", "1-(1-b/n)^E <= gamma (Bernoulli's inequality)"),
        ("gamma (e^eps0 - 1)", "log(1 + x) <= x"),
        ("2 gamma eps0", f"e^eps0 - 1 <= 2 eps0, i.e. eps0 <= {am.CHAIN_THRESHOLD:.4f}"),
    ]


def test_chain_boundaries():
    # E = 1: p = b/n = gamma exactly, and Bernoulli's inequality holds with equality
    steps = am.amplification_chain(0.5, 1, 1, 2)
    assert steps[0].value == pytest.approx(steps[1].value, rel=1e-15) and steps[1].holds
    # the last link holds at eps0 = its threshold (e^x − 1 = 2x), not beyond
    assert am.amplification_chain(am.CHAIN_THRESHOLD, 10, 12, 600)[3].holds
    assert not am.amplification_chain(am.CHAIN_THRESHOLD * (1 + 1e-12), 10, 12, 600)[3].holds
    assert math.expm1(am.CHAIN_THRESHOLD) == pytest.approx(2 * am.CHAIN_THRESHOLD, rel=1e-14)
    # gamma·(e^eps0 − 1) is reported as inf from eps0 = 709.78 on (e^709.78 is near the float limit)
    assert am.amplification_chain(709.78, 1, 1, 2)[2].value == math.inf
    assert math.isfinite(am.amplification_chain(709.0, 1, 1, 2)[2].value)


def test_inclusion_probability_and_amplified_epsilon():
    assert am.inclusion_probability(3, 2, 10) == pytest.approx(1 - 0.8**3, rel=1e-15)
    assert am.inclusion_probability(3.0, 2.0, 10.0) == am.inclusion_probability(3, 2, 10)
    assert am.inclusion_probability(5, 10, 10) == 1.0
    assert am.amplified_epsilon(1.0, 1.0) == pytest.approx(1.0, rel=1e-15)  # p = 1: no amplification
    assert am.amplified_epsilon(1.0, 0.1) == pytest.approx(math.log1p(0.1 * math.expm1(1.0)), rel=1e-15)


def test_calibration_conditions_at_their_boundaries():
    # eps0 = eps/(2 gamma); gamma = 1/2 makes eps0 = eps
    at_one = am.paper_calibration_conditions(1.0, 0.5)
    assert at_one == {"epsilon0": 1.0, "classical_valid": False, "chain_valid": True}
    assert am.paper_calibration_conditions(1.5, 0.5)["classical_valid"] is False
    assert am.paper_calibration_conditions(0.999, 0.5)["classical_valid"] is True
    assert am.paper_calibration_conditions(am.CHAIN_THRESHOLD, 0.5)["chain_valid"] is True


def test_paper_noise_that_underflows_is_zero():
    # eps0 = eps/(2 gamma) overflows to inf: sigma = Δ·sqrt(2 ln(1.25/δ0))/eps0 is 0
    assert am.paper_noise_std(1e308, 1e-12, 1.0, 1e-10) == 0.0


def test_failure_epsilon_search_and_its_limits():
    # gamma = 0.2, delta = 1e-5: eq. (16) fails from about 1.24 on; realized_epsilon of the paper's
    # noise crosses the target there (checked on both sides)
    eps = am.paper_calibration_failure_epsilon(1e-5, 0.2)
    for target, fails in ((eps * 0.99, False), (eps * 1.01, True)):
        sigma = am.paper_noise_std(target, 1e-5, 1.0, 0.2)
        assert (am.realized_epsilon(sigma, 1e-5, 1.0, 0.2) > target) is fails
    # epsilon_max just above 2·gamma: the search starts at eps0 = 1 and finds nothing
    with pytest.raises(ValueError, match=r"^eq\. \(16\) stays valid up to epsilon_max=0\.41 \(gamma=0\.2\)$"):
        am.paper_calibration_failure_epsilon(1e-5, 0.2, epsilon_max=0.41)


@pytest.mark.parametrize("call, message", [
    (lambda: am.inclusion_probability(2**53 + 1, 1, 10), r"^E must be an integer in \[1, 9007199254740992\], got 9007199254740993$"),
    (lambda: am.inclusion_probability(2, 1, 2**53 + 1), r"^n must be an integer in \[1, 9007199254740992\], got 9007199254740993$"),
    (lambda: am.inclusion_probability(2, 11, 10), r"^b \(batch size, at most n=10\) must be an integer in \[1, 10\], got 11$"),
    (lambda: am.amplified_epsilon(1.0, 1.5), r"^probability must be in \(0, 1\], got 1\.5$"),
    (lambda: am.paper_noise_std(1.0, 0.2, 1.0, 0.2), r"^delta must be smaller than gamma=0\.2 \(δ₀ = δ/γ < 1\), got 0\.2$"),
    (lambda: am.exact_noise_std(1.0, 0.2, 1.0, 0.2), r"^delta must be smaller than gamma=0\.2 \(δ₀ = δ/γ < 1\), got 0\.2$"),
    (lambda: am.realized_epsilon(1.0, 0.2, 1.0, 0.2), r"^delta must be smaller than gamma=0\.2 \(δ₀ = δ/γ < 1\), got 0\.2$"),
    (lambda: am.paper_calibration_failure_epsilon(0.2, 0.2), r"^delta must be smaller than gamma=0\.2 \(δ₀ = δ/γ < 1\), got 0\.2$"),
    # δ is checked before epsilon_max (both bad here)
    (lambda: am.paper_calibration_failure_epsilon(0.2, 0.2, epsilon_max=0.3),
     r"^delta must be smaller than gamma=0\.2 \(δ₀ = δ/γ < 1\), got 0\.2$"),
    (lambda: am.paper_calibration_failure_epsilon(1e-5, 0.2, epsilon_max=0.0), r"^epsilon_max must be in \(0, inf\), got 0\.0$"),
    (lambda: am.paper_calibration_failure_epsilon(1e-5, 0.2, epsilon_max=0.4),
     r"^epsilon_max must exceed 2·gamma=0\.4 \(ε₀ = 1, where the search starts\), got 0\.4$"),
])
def test_messages_in_full(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# The failure ε of eq. (16) against an independent 30-digit evaluation: the analytic Gaussian
# mechanism's ε (Balle & Wang 2018, Thm 8: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), μ = Δ/σ)
# solved by bisection in mpmath, then amplified as log(1 + γ(e^ε₀' − 1)) (eq. 15, exact).


def _realized_mpmath(eps: float, delta: float, gamma: float) -> mpmath.mpf:
    """ε realised by eq. (16)'s noise for target ε (σ/Δ = sqrt(2 ln(1.25γ/δ))/ε₀, ε₀ = ε/(2γ))."""
    with mpmath.workdps(30):
        eps, delta, gamma = mpmath.mpf(eps), mpmath.mpf(delta), mpmath.mpf(gamma)
        d0 = delta / gamma
        mu = eps / (2 * gamma) / mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / d0))

        def excess_delta(e):
            return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu) - d0

        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        if excess_delta(lo) <= 0:
            return mpmath.mpf(0)
        while excess_delta(hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(100):  # 2^-100 of the bracket: far below the 1e-9 checked
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess_delta(mid) > 0 else (lo, mid)
        return mpmath.log1p(gamma * mpmath.expm1((lo + hi) / 2))


@pytest.mark.parametrize("delta, gamma, epsilon_max", [
    (1e-5, 0.2, 50.0),        # the usual case: the root in an inner cell of the 400-point grid
    (1e-100, 1e-3, 50.0),     # fails at ε₀ ≈ 1.32, between 1 and 1.5, just after the search's start
    (1e-12, 0.6, 1e5),        # the root (ε ≈ 38.4) in a first cell 250 wide: narrowed by doubling
    (1e-5, 0.2, 1.2428302),   # epsilon_max just above the root: the root in the last cell
])
def test_failure_epsilon_against_an_independent_reference(delta, gamma, epsilon_max):
    eps = am.paper_calibration_failure_epsilon(delta, gamma, epsilon_max=epsilon_max)
    # the independent excess realised − target changes sign within 1e-9 relative of the root found
    # (Brent's tolerance: 1e-12 absolute + 1e-12 relative), and is negative at ε₀ = 1
    assert _realized_mpmath(eps * (1 - 1e-9), delta, gamma) < eps * (1 - 1e-9)
    assert _realized_mpmath(eps * (1 + 1e-9), delta, gamma) > eps * (1 + 1e-9)
    assert _realized_mpmath(2 * gamma, delta, gamma) < 2 * gamma


def test_failure_epsilon_default_search_range():
    # γ = 0.9, δ = 1e-5: eq. (16) stays valid up to the default epsilon_max = 50 (the independent
    # excess is negative at ε = 25 and 50), so the search reports that range
    for eps in (25.0, 50.0):
        assert _realized_mpmath(eps, 1e-5, 0.9) < eps
    with pytest.raises(ValueError, match=r"^eq\. \(16\) stays valid up to epsilon_max=50\.0 \(gamma=0\.9\)$"):
        am.paper_calibration_failure_epsilon(1e-5, 0.9)


def test_failure_epsilon_with_noise_beyond_the_float_range():
    # Δ = 1.7e308: the noise of eq. (16), σ = Δ·sqrt(2 ln(1.25γ/δ))/ε₀, exceeds the float range at
    # every ε ≤ epsilon_max = 1 (ε₀ ≤ 2.5), so it is inf there (realised ε = 0). The realised ε
    # depends on σ/Δ only, and at Δ = 1 the failure point is above 1 (the reference above
    # is negative at ε = 1): either way eq. (16) stays valid up to epsilon_max.
    delta, gamma, sens = 1e-5, 0.2, 1.7e308
    sigma_at_max = mpmath.mpf(sens) * mpmath.sqrt(2 * mpmath.log(1.25 * gamma / mpmath.mpf(delta))) / (1.0 / (2 * gamma))
    assert sigma_at_max > 1.7976931348623157e308
    assert _realized_mpmath(1.0, delta, gamma) < 1.0
    with pytest.raises(ValueError, match=r"^eq\. \(16\) stays valid up to epsilon_max=1\.0 \(gamma=0\.2\)$"):
        am.paper_calibration_failure_epsilon(delta, gamma, sens, epsilon_max=1.0)
