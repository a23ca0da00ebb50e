"""The Gaussian mechanism (classical and analytic calibration) and DP-FedPAQ's eqs. (13)–(16)."""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
import pytest

from fedrepro.dpfedpaq import amplification
from fedrepro.privacy import gaussian, subsampled


def _delta_mp(eps: float, sens: float, sigma: float) -> float:
    mpmath.mp.dps = 60
    e, d, s = mpmath.mpf(eps), mpmath.mpf(sens), mpmath.mpf(sigma)
    return float(mpmath.ncdf(d / (2 * s) - e * s / d) - mpmath.exp(e) * mpmath.ncdf(-d / (2 * s) - e * s / d))


@pytest.mark.parametrize("eps,sens,sigma", [(0.5, 1.0, 1.0), (1.0, 1.0, 3.0), (5.0, 1.0, 0.7),
                                            (20.0, 2.0, 0.5), (0.01, 1.0, 50.0), (3.0, 1.0, 2.0)])
def test_analytic_delta_equals_high_precision_formula(eps, sens, sigma):
    # 1e-9 relative: log-CDF evaluation keeps relative accuracy even for tiny δ (60-digit reference).
    assert gaussian.analytic_gaussian_delta(eps, sens, sigma) == pytest.approx(_delta_mp(eps, sens, sigma), rel=1e-9, abs=0)


def test_analytic_delta_at_zero_and_decreasing():
    # δ(0) = 2Φ(Δ/(2σ)) − 1 (total variation of two Gaussians); 1e-12 relative.
    assert gaussian.analytic_gaussian_delta(0.0, 1.0, 2.0) == pytest.approx(2 * 0.5 * (1 + math.erf(0.25 / math.sqrt(2))) - 1, rel=1e-12)
    for sigma in (0.3, 1.0, 5.0):
        deltas = np.array([gaussian.analytic_gaussian_delta(e, 1.0, sigma) for e in np.linspace(0, 30, 301)])
        assert np.all((deltas >= 0) & (deltas <= 1))
        positive = deltas[deltas > 0]
        assert np.all(np.diff(positive) < 0)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (1.0, 1e-5), (4.0, 1e-8), (0.5, 0.1)])
def test_analytic_sigma_is_the_smallest_valid_noise(eps, delta):
    sigma = gaussian.analytic_gaussian_sigma(eps, delta, 1.0)
    # 1e-8 relative: the root finder solves log δ(σ) = log δ to ~1e-13 in log σ.
    assert gaussian.analytic_gaussian_delta(eps, 1.0, sigma) == pytest.approx(delta, rel=1e-8, abs=0)
    assert gaussian.analytic_gaussian_delta(eps, 1.0, sigma * 0.999) > delta
    # scaling: σ is proportional to the sensitivity (1e-10 relative).
    assert gaussian.analytic_gaussian_sigma(eps, delta, 3.0) == pytest.approx(3 * sigma, rel=1e-10)


def test_analytic_epsilon_inverts_delta():
    for sigma in (0.5, 2.0, 10.0):
        eps = gaussian.analytic_gaussian_epsilon(1e-5, 1.0, sigma)
        # 1e-8 relative: root finding on log δ(ε).
        assert gaussian.analytic_gaussian_delta(eps, 1.0, sigma) == pytest.approx(1e-5, rel=1e-8, abs=0)


def test_classical_calibration_is_valid_below_one():
    for delta in (1e-2, 1e-5, 1e-9):
        for eps in np.linspace(0.01, 0.99, 25):
            sigma_c = gaussian.classical_gaussian_sigma(eps, delta, 1.0)
            assert gaussian.analytic_gaussian_delta(eps, 1.0, sigma_c) <= delta
            assert gaussian.analytic_gaussian_sigma(eps, delta, 1.0) <= sigma_c


@pytest.mark.parametrize("delta", [1e-5, 1e-4])
def test_classical_calibration_fails_beyond_a_large_epsilon(delta):
    fail = gaussian.classical_calibration_failure_epsilon(delta)
    assert fail > 1.0
    below, above = fail * 0.99, fail * 1.01
    assert gaussian.analytic_gaussian_delta(below, 1.0, gaussian.classical_gaussian_sigma(below, delta, 1.0)) <= delta
    assert gaussian.analytic_gaussian_delta(above, 1.0, gaussian.classical_gaussian_sigma(above, delta, 1.0)) > delta


def _classical_failure_mp(delta: float) -> float:
    """Root ε > 1 of δ_exact(ε; σ_classical(ε)) = δ (Balle & Wang 2018, Thm 8, with
    σ = sqrt(2 ln(1.25/δ))/ε, Δ = 1) by 40-digit mpmath (Anderson–Björck on [2, 50])."""
    mpmath.mp.dps = 40
    d = mpmath.mpf(delta)

    def excess(e):
        s = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / d)) / e
        return mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s) - d

    assert excess(mpmath.mpf(2)) < 0 < excess(mpmath.mpf(50))
    return float(mpmath.findroot(excess, (mpmath.mpf(2), mpmath.mpf(50)), solver="anderson"))


@pytest.mark.parametrize("delta,quoted", [(1e-5, 8.420), (1e-4, 7.991)])
def test_classical_calibration_failure_points(delta, quoted):
    fail = gaussian.classical_calibration_failure_epsilon(delta)
    # 1e-9 relative against the 40-digit root (Brent's method to 1e-12 on a log-ratio).
    assert fail == pytest.approx(_classical_failure_mp(delta), rel=1e-9)
    # regression guard: the three decimals quoted in the chapter (2e-3 absolute); the value
    # itself is checked against mpmath just above.
    assert fail == pytest.approx(quoted, abs=2e-3)


def test_gaussian_rdp_formula():
    # Mironov 2017 Prop. 7; 1e-15 relative (one multiplication and division).
    assert gaussian.gaussian_rdp(3.0, 2.0, 4.0) == pytest.approx(3 * 4 / (2 * 16), rel=1e-15, abs=0)


# --------------------------------------------------------------------------- DP-FedPAQ eq. (15)/(16)


def test_chain_threshold_solves_its_equation():
    t = amplification.CHAIN_THRESHOLD
    # 1e-12 absolute: Brent's method to xtol 1e-15.
    assert math.expm1(t) == pytest.approx(2 * t, abs=1e-12)
    assert 1.25 < t < 1.26


@pytest.mark.parametrize("eps0", [0.05, 0.5, 1.0, 1.25, 1.26, 2.0, 5.0])
def test_amplification_chain_links(eps0):
    steps = amplification.amplification_chain(eps0, E=10, b=12, n=600)
    values = [s.value for s in steps]
    for prev, step in zip(values, steps[1:], strict=False):
        if step.holds:  # where its condition holds, each expression bounds its predecessor
            assert step.value >= prev * (1 - 1e-14)
    assert steps[-1].holds == (eps0 <= amplification.CHAIN_THRESHOLD)
    if eps0 > amplification.CHAIN_THRESHOLD:
        assert values[3] < values[2]  # the last link of eq. (15) is then false


def test_inclusion_probability_below_gamma():
    for E, b, n in ((10, 12, 600), (1, 600, 600), (5, 1, 7)):
        assert amplification.inclusion_probability(E, b, n) <= E * b / n


def test_eq16_is_the_printed_formula():
    eps, delta, sens, gamma = 0.7, 1e-4, 2.0, 0.2
    expected = math.sqrt(8 * gamma**2 * sens**2 * math.log(1.25 * gamma / delta) / eps**2)
    # 1e-12 relative: the same algebra in another order.
    assert amplification.paper_noise_std(eps, delta, sens, gamma) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("gamma", [0.2, 0.8])
def test_exact_calibration_attains_the_target(gamma):
    for eps in (0.1, 1.0, 3.0):
        sigma = amplification.exact_noise_std(eps, 1e-4, 1.0, gamma)
        # 1e-7 relative: two root findings in sequence.
        assert amplification.realized_epsilon(sigma, 1e-4, 1.0, gamma) == pytest.approx(eps, rel=1e-7)


def test_eq16_is_violated_at_gamma_0p2_and_large_epsilon():
    sigma = amplification.paper_noise_std(1.5, 1e-4, 1.0, 0.2)
    assert amplification.realized_epsilon(sigma, 1e-4, 1.0, 0.2) > 1.5
    fail = amplification.paper_calibration_failure_epsilon(1e-4, 0.2)
    assert 0.4 < fail < 1.5  # beyond ε₀ = 1 (ε = 0.4) and before 1.5
    cond = amplification.paper_calibration_conditions(1.5, 0.2)
    assert not cond["classical_valid"] and not cond["chain_valid"]


@pytest.mark.parametrize("call,name", [
    (lambda: gaussian.analytic_gaussian_delta(-1.0, 1.0, 1.0), "epsilon"),
    (lambda: gaussian.analytic_gaussian_delta(1.0, 0.0, 1.0), "sensitivity"),
    (lambda: gaussian.analytic_gaussian_delta(1.0, 1.0, 0.0), "sigma"),
    (lambda: gaussian.analytic_gaussian_sigma(1.0, 1.5, 1.0), "delta"),
    (lambda: gaussian.classical_gaussian_sigma(0.0, 1e-5, 1.0), "epsilon"),
    (lambda: gaussian.gaussian_rdp(1.0, 1.0, 1.0), "alpha"),
    (lambda: amplification.paper_noise_std(1.0, 1e-4, 1.0, 1.5), "gamma"),
    (lambda: amplification.paper_noise_std(1.0, 0.3, 1.0, 0.2), "delta"),
    (lambda: amplification.inclusion_probability(10, 700, 600), "b"),
    (lambda: amplification.amplified_epsilon(1.0, 0.0), "probability"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------------------------------
# written against mutants that survived `make mutation` (tests/MUTATION.md)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha, sensitivity, sigma, expected", [
    (3.0, 2e200, 1e200, 6.0),          # Δ² overflows: α/2 (Δ/σ)² = 1.5 · 4
    (3.0, 1e150, 1e200, 1.5e-100),     # 2σ² overflows, Δ² does not
    (2.0, 1e-170, 1e-160, 1e-20),      # Δ² underflows to 0, 2σ² is subnormal
    (3.0, 1e200, 1e100, 1.5e200),      # αΔ² overflows, 2σ² does not
])
def test_gaussian_rdp_outside_the_float_range_of_the_squares(alpha, sensitivity, sigma, expected):
    # abs=0: pytest.approx's default absolute tolerance (1e-12) would accept 0 for 1e-20.
    assert gaussian.gaussian_rdp(alpha, sensitivity, sigma) == pytest.approx(expected, rel=1e-12, abs=0)


def test_gaussian_rdp_names_alpha():
    with pytest.raises(ValueError, match=r"^alpha"):
        gaussian.gaussian_rdp(0.5, 1.0, 1.0)


# --------------------------------------------------------------------------- second pass over the
# survivors of `make mutation` on privacy/gaussian (tests/MUTATION.md): float-range edges,
# bracket walks of the root searches, the messages of classical_calibration_failure_epsilon.
def _bisect_mp(f, lo, hi, steps=110):
    """Root of ``f`` on [lo, hi] (a sign change) by plain bisection in mpmath."""
    f_lo = f(lo)
    for _ in range(steps):
        mid = (lo + hi) / 2
        f_mid = f(mid)
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return (lo + hi) / 2


def _delta_mu_mp(e, mu):
    return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


def _analytic_ratio_mp(eps: float, delta: float):
    """σ/Δ of the analytic Gaussian mechanism: the root of δ(ε; Δ/σ) = δ (Balle & Wang 2018,
    Thm 8), 40-digit mpmath, bisection on log(σ/Δ) ∈ [−12, 12] (110 halvings: ~1e-32)."""
    mpmath.mp.dps = 40
    e, d = mpmath.mpf(eps), mpmath.mpf(delta)
    return mpmath.exp(_bisect_mp(lambda t: _delta_mu_mp(e, 1 / mpmath.exp(t)) - d, mpmath.mpf(-12), mpmath.mpf(12)))


def _analytic_epsilon_mp(delta: float, mu: float):
    """Root ε ∈ [0, 200] of δ(ε; μ) = δ, 40-digit mpmath bisection."""
    mpmath.mp.dps = 40
    return _bisect_mp(lambda e: _delta_mu_mp(e, mpmath.mpf(mu)) - mpmath.mpf(delta), mpmath.mpf(0), mpmath.mpf(200))


def test_gaussian_rdp_of_ordinary_inputs_is_the_plain_formula_bit_for_bit():
    # αΔ²/(2σ²) evaluated directly (the log-space form differs in the last bits here).
    assert gaussian.gaussian_rdp(2.0, 1.5, 0.5) == 9.0                       # 2σ² = 0.5 < 1 < αΔ² = 4.5
    assert gaussian.gaussian_rdp(3.0, 0.3, 1.0) == 3.0 * 0.3**2 / (2 * 1.0**2)  # αΔ² = 0.27 < 1


def test_gaussian_rdp_with_an_underflowed_sigma_square_is_inf():
    # α/(2σ²) = 1e340 at σ = 1e-170 exceeds the float range (σ² underflows to 0).
    assert gaussian.gaussian_rdp(2.0, 1.0, 1e-170) == math.inf


def test_classical_sigma_is_the_plain_formula_bit_for_bit():
    assert gaussian.classical_gaussian_sigma(0.7, 1e-5, 1.0) == 1.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.7


@pytest.mark.parametrize("delta", [5e-324, 1e-310])
def test_classical_sigma_at_a_subnormal_delta(delta):
    # 1.25/δ overflows for the smallest δ: sqrt(2 ln(1.25/δ))/ε from 40-digit mpmath, 1e-14 relative.
    mpmath.mp.dps = 40
    expected = float(mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / mpmath.mpf(delta))) / mpmath.mpf(0.5))
    assert gaussian.classical_gaussian_sigma(0.5, delta, 1.0) == pytest.approx(expected, rel=1e-14, abs=0)


def test_analytic_log_delta_where_mu_or_the_cdf_argument_leave_the_float_range():
    # Δ/σ = 1e-600 underflows to 0 (P = Q up to the float range): δ = 0.
    assert gaussian.analytic_gaussian_log_delta(1.0, 1e-300, 1e300) == -math.inf
    # ε/μ = 1e310 overflows: log δ ≈ −(ε/μ)²/2 is far below the float range.
    assert gaussian.analytic_gaussian_log_delta(1e10, 1e-300, 1.0) == -math.inf
    assert gaussian.analytic_gaussian_delta(1e10, 1e-300, 1.0) == 0.0


def test_analytic_delta_where_both_cdf_terms_round_to_one_half():
    # μ = 1e-20, ε = 0: δ = 2Φ(μ/2) − 1 ≈ μ/sqrt(2π) = 4.0e-21 while both log-CDFs round to
    # log(1/2); the result must be a number in [0, exact δ], not an error.
    exact = 1e-20 / math.sqrt(2 * math.pi)
    assert 0.0 <= gaussian.analytic_gaussian_delta(0.0, 1e-20, 1.0) <= exact * (1 + 1e-9)
    assert gaussian.analytic_gaussian_log_delta(0.0, 1e-20, 1.0) <= math.log(exact) + 1e-9


def _delta_at_sigma_e() -> float:
    # δ(ε = 1) at σ/Δ = e, where the bracket of analytic_gaussian_sigma starts (40-digit mpmath)
    mpmath.mp.dps = 40
    return float(_delta_mu_mp(mpmath.mpf(1), 1 / mpmath.e))


@pytest.mark.parametrize("eps, delta, sensitivity", [
    (1.0, 0.5, 1.0),                  # δ > 1/e: log δ(σ → 0) − log δ stays below 1
    (50.0, 1e-5, 1.0),                # σ/Δ ≈ 0.15 < 1/e: the lower end of the bracket walks down
    (1.0, "half", 1.0),               # log δ(σ = eΔ) − log δ = log 2 ∈ (0, 1]
    (0.1, 1e-5, "huge"),              # log σ ≈ 709.4: σ = e^{log σ} close to the float limit
    (0.1, 1e-5, 5e-324),              # σ and the lower bracket end underflow (subnormal result)
])
def test_analytic_sigma_against_a_high_precision_root(eps, delta, sensitivity):
    if delta == "half":
        delta = _delta_at_sigma_e() / 2
    ratio = _analytic_ratio_mp(eps, delta)
    if sensitivity == "huge":
        sensitivity = math.exp(709.4 - float(mpmath.log(ratio)))
    expected = float(ratio * mpmath.mpf(sensitivity))
    sigma = gaussian.analytic_gaussian_sigma(eps, delta, sensitivity)
    if sensitivity < 1e-300:  # a subnormal result: one step of 4.9e-324
        assert sigma == pytest.approx(expected, abs=5e-324)
    else:  # 1e-9 relative: Brent's method to ~1e-13 in log σ
        assert sigma == pytest.approx(expected, rel=1e-9, abs=0)


@pytest.mark.parametrize("sigma", [10.0, 0.5, 1000.0])
def test_analytic_epsilon_against_a_high_precision_root(sigma):
    # 1e-11 relative against a 40-digit bisection: Brent's method stops at 1e-14 absolute +
    # 1e-13 relative, which matters for a small ε (0.0019 at σ = 1000).
    assert gaussian.analytic_gaussian_epsilon(1e-5, 1.0, sigma) == pytest.approx(
        float(_analytic_epsilon_mp(1e-5, 1.0 / sigma)), rel=1e-11, abs=0)


def test_analytic_sigma_beyond_the_float_range_is_inf():
    # σ/Δ = 30.7 at (ε, δ) = (0.1, 1e-5) and Δ = e^706.9: σ = e^710.3 exceeds the largest float.
    ratio = _analytic_ratio_mp(0.1, 1e-5)
    assert mpmath.log(ratio) + mpmath.mpf(706.9) > mpmath.log(mpmath.mpf(sys.float_info.max))
    assert gaussian.analytic_gaussian_sigma(0.1, 1e-5, math.exp(706.9)) == math.inf


def test_analytic_epsilon_zero_and_beyond_the_float_range():
    # δ(0) = 2Φ(1/2) − 1 = erf(1/(2√2)) ≈ 0.383 ≤ 0.5: ε = 0.
    assert math.erf(0.5 / math.sqrt(2)) <= 0.5
    assert gaussian.analytic_gaussian_epsilon(0.5, 1.0, 1.0) == 0.0
    # Δ/σ = 1e310 overflows: δ(ε) = 1 > δ for every float ε.
    assert gaussian.analytic_gaussian_epsilon(1e-5, 1e300, 1e-10) == math.inf


@pytest.mark.parametrize("epsilon_max, message", [
    (1.0, r"epsilon_max must be in \(1, inf\)"),
    (1.5, r"valid up to epsilon_max=1.5"),
    (5.0, r"valid up to epsilon_max=5.0"),   # the failure point at δ = 1e-5 is 8.42 (test above)
])
def test_classical_failure_epsilon_messages(epsilon_max, message):
    with pytest.raises(ValueError, match=message):
        gaussian.classical_calibration_failure_epsilon(1e-5, epsilon_max=epsilon_max)


# ---------------------------------------------------------------------------------------
# privacy/subsampled: composed_epsilon (dp-accounting's PLD) against closed forms in mpmath
# ---------------------------------------------------------------------------------------
def _eps_from_delta_mp(delta_of_eps, delta: float) -> float:
    """Root ε of δ(ε) = δ in 40 digits (δ(ε) decreasing), by bisection on [0, 200]."""
    mpmath.mp.dps = 40
    lo, hi = mpmath.mpf(0), mpmath.mpf(200)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of_eps(mid) > delta else (lo, mid)
    return float(hi)


def _gaussian_delta_mp(mu):
    """δ(ε) of the Gaussian mechanism with Δ/σ = μ (Balle & Wang 2018, Thm 8)."""
    return lambda e: mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)


def _subsampled_delta_mp(p, mu):
    """δ(ε) = max(H_{e^ε}(P‖Q), H_{e^ε}(Q‖P)), P = (1 − p)N(0, 1) + pN(μ, 1), Q = N(0, 1): the
    likelihood ratio P/Q = 1 − p + p e^{μx − μ²/2} is increasing, so each divergence is the mass
    beyond its crossing point."""
    p, mu = mpmath.mpf(p), mpmath.mpf(mu)

    def delta(e):
        g = mpmath.exp(e)
        x = (mpmath.log((g - 1 + p) / p) + mu**2 / 2) / mu  # P/Q = γ
        remove = (1 - p) * mpmath.ncdf(-x) + p * mpmath.ncdf(mu - x) - g * mpmath.ncdf(-x)
        add = mpmath.mpf(0)
        if 1 / g - 1 + p > 0:
            y = (mpmath.log((1 / g - 1 + p) / p) + mu**2 / 2) / mu  # Q/P = γ
            add = mpmath.ncdf(y) - g * ((1 - p) * mpmath.ncdf(y) + p * mpmath.ncdf(y - mu))
        return max(remove, add)

    return delta


@pytest.mark.parametrize("delta, sens, sigma, rounds", [(1e-5, 1.0, 2.0, 10), (1e-3, 0.5, 1.0, 4), (1e-5, 1.0, 1.0, 1)])
def test_composed_epsilon_of_the_full_batch_gaussian_is_the_gaussian_with_sqrt_t(delta, sens, sigma, rounds):
    # p = 1: T Gaussian releases compose to one with Δ/σ multiplied by √T (Dong, Roth & Su 2019);
    # the PLD's pessimistic discretisation (width 1e-3) gives an upper estimate within T·1e-3.
    disc = 1e-3
    exact = _eps_from_delta_mp(_gaussian_delta_mp(mpmath.sqrt(rounds) * sens / sigma), delta)
    value = subsampled.composed_epsilon(delta, 1.0, sens, sigma, rounds, discretization=disc)
    assert exact - 1e-9 <= value <= exact + rounds * disc


@pytest.mark.parametrize("delta, p, sens, sigma", [(1e-5, 0.3, 1.0, 1.5), (1e-3, 0.05, 2.0, 1.0), (1e-6, 0.9, 1.0, 3.0)])
def test_composed_epsilon_of_one_round_is_the_subsampled_gaussian_epsilon(delta, p, sens, sigma):
    # One round: the PLD's ε at δ is the closed-form hockey-stick root, up to the discretisation
    # (an upper estimate within 2·1e-3); the closed-form ε of the module agrees to 1e-9.
    disc = 1e-3
    exact = _eps_from_delta_mp(_subsampled_delta_mp(p, sens / sigma), delta)
    assert subsampled.composed_epsilon(delta, p, sens, sigma, 1, discretization=disc) == pytest.approx(
        exact + disc, abs=disc)
    assert subsampled.subsampled_gaussian_epsilon(delta, p, sens, sigma) == pytest.approx(exact, rel=1e-9, abs=0)


def test_composed_epsilon_rejects_grids_beyond_the_limit():
    # messages checked from their start (the limit is MAX_PLD_POINTS = 4e6 points)
    with pytest.raises(ValueError, match=r"^sigma=0\.05 \(sensitivity=1\.0\) is too small for discretization=1e-06: "
                                         r"the privacy-loss grid would exceed 4e\+06 points"):
        subsampled.composed_epsilon(1e-5, 0.5, 1.0, 0.05, 1, discretization=1e-6)
    with pytest.raises(ValueError, match=r"^rounds=1000000 too many for this PLD: the composed privacy-loss grid "
                                         r"would need \S+ points \(at most 4e\+06\)"):
        subsampled.composed_epsilon(1e-5, 0.5, 1.0, 1.0, 10**6)
