"""RDP of the Poisson-sampled Gaussian mechanism and the RDP → (ε, δ) conversions,
cross-checked with independent implementations (dp-accounting, Opacus, mpmath quadrature)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from fedrepro.privacy import conversion, rdp

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as dpa  # noqa: E402

CODE_ORDERS = np.array(rdp.ALIDPFL_CODE_ORDERS, dtype=float)


def _random_q_sigma(seed: int, n: int) -> list[tuple[float, float]]:
    """Log-uniform q in [0.01, 1] and σ in [0.3, 5], plus extreme pairs (q → 1, q = 1, small σ).

    The domain keeps the per-step RDP above ~1e-6, where dp-accounting's own log-space
    summation (which forms log(1 + tiny)) is accurate to better than 1e-10; smaller values
    are checked against the closed form of α = 2 below instead.
    """
    gen = np.random.default_rng(seed)
    pairs = [(float(q), float(s)) for q, s in zip(10 ** gen.uniform(-2, 0, n), np.exp(gen.uniform(np.log(0.3), np.log(5), n)), strict=False)]
    return pairs + [(1 - 1e-9, 0.3), (1.0, 0.3), (1.0, 2.0), (0.999, 0.5), (0.5, 0.3), (0.015, 1.1)]


@pytest.mark.parametrize("q,sigma", _random_q_sigma(0, 14))
def test_integer_order_rdp_equals_dp_accounting(q, sigma):
    ours = rdp.rdp_sampled_gaussian(q, sigma, CODE_ORDERS)
    ref = dpa._compute_rdp_poisson_subsampled_gaussian(q, sigma, CODE_ORDERS)
    assert np.all(np.isfinite(ours))
    # 1e-10 relative: both sum eq. (17) in log space in double precision (the tolerance).
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=0)


@pytest.mark.parametrize("q,sigma", [(1e-6, 10.0), (1e-4, 3.0), (0.3, 100.0)])
def test_order_two_matches_closed_form_for_tiny_rdp(q, sigma):
    # A_2 = 1 + q²(e^{1/σ²} − 1) exactly, so RDP(2) = log1p(q² expm1(1/σ²)).
    expected = math.log1p(q * q * math.expm1(1 / sigma**2))
    # 1e-13 relative: the positive-terms form of eq. (17) loses no digits to cancellation.
    assert rdp.rdp_integer_order(q, sigma, 2) == pytest.approx(expected, rel=1e-13, abs=0)


def test_full_batch_is_the_gaussian_mechanism():
    for alpha in (2, 64, 512):
        # 1e-12 relative: q = 1 leaves a single term, exp((α²−α)/(2σ²)).
        assert rdp.rdp_integer_order(1.0, 0.3, alpha) == pytest.approx(alpha / (2 * 0.3**2), rel=1e-12)


@pytest.mark.parametrize("sigma", [0.3, 1.1, 4.0])
def test_full_batch_fractional_order_is_the_gaussian_mechanism(sigma):
    """q = 1 at non-integer orders: the Gaussian mechanism's RDP α/(2σ²) (Mironov 2017,
    Prop. 7), a closed form independent of the code."""
    for alpha in (1.5, 2.5, 7.25, 100.5):
        expected = alpha / (2 * sigma**2)
        # 1e-14 relative: one multiplication and one division.
        assert rdp.rdp_fractional_order(1.0, sigma, alpha) == pytest.approx(expected, rel=1e-14)
        assert rdp.rdp_sampled_gaussian(1.0, sigma, [alpha])[0] == pytest.approx(expected, rel=1e-14)


def test_fractional_order_is_continuous_as_q_tends_to_one():
    # q = 1 − 1e-9 goes through the series; it must approach the q = 1 closed form α/(2σ²)
    # (1e-6 relative: the RDP moves by O(1e-9·α) relatively from q = 1).
    for alpha in (1.5, 3.5):
        assert rdp.rdp_fractional_order(1 - 1e-9, 0.8, alpha) == pytest.approx(alpha / (2 * 0.8**2), rel=1e-6)


def _fractional_mpmath(q: float, sigma: float, alpha: float) -> float:
    """RDP at a real order from A_α − 1 = E_z[(1 + u)^α − 1 − αu], u = q(e^{(2z−1)/(2σ²)} − 1),
    z ~ N(0, σ²) (E[u] = 0), by 50-digit quadrature; the −1 − αu keeps the tiny A_α − 1 of
    large σ resolved."""
    mpmath.mp.dps = 50
    qq, ss, aa = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

    def integrand(t):
        u = qq * mpmath.expm1((2 * ss * t - 1) / (2 * ss**2))
        return mpmath.npdf(t) * ((1 + u) ** aa - 1 - aa * u)

    excess = mpmath.quad(integrand, [-mpmath.inf, -10, 0, 10, 40, mpmath.inf])
    return float(mpmath.log1p(excess) / (aa - 1))


@pytest.mark.parametrize("q,sigma,alpha", [(0.5, 1e6, 1.5), (0.5, 1e5, 200.5), (0.01, 1e6, 4.5),
                                           (1e-4, 1e3, 20.5), (0.001, 6.0, 1.05), (0.3, 1e10, 2.5)])
def test_fractional_orders_at_large_sigma_equal_high_precision_quadrature(q, sigma, alpha):
    """Large σ: the signed series sums terms of size ~1 to A_α − 1 ≈ 1e-10 or less and
    loses its digits (it used to return values off by up to 100 %, negative ones, or fail to
    converge); the value must still be the exact one. 1e-11 relative against 50 digits (and
    no absolute slack: the values are as small as 1e-21)."""
    expected = _fractional_mpmath(q, sigma, alpha)
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(expected, rel=1e-11, abs=0)


def test_fractional_orders_between_integer_orders():
    # RDP is non-decreasing in α (Mironov 2017, Prop. 10): the value at a fractional order
    # lies between the integer orders around it, which eq. (17) gives independently of the
    # fractional series — over a grid reaching tiny and huge σ.
    for q in (1e-6, 0.01, 0.5, 0.99):
        for sigma in (1e-3, 0.1, 1.0, 30.0, 1e4, 1e8):
            for alpha in (2.5, 4.5, 100.5):
                lo = rdp.rdp_integer_order(q, sigma, math.floor(alpha))
                hi = rdp.rdp_integer_order(q, sigma, math.ceil(alpha))
                value = rdp.rdp_fractional_order(q, sigma, alpha)
                # 1e-9 relative slack for rounding
                assert lo * (1 - 1e-9) <= value <= hi * (1 + 1e-9), (q, sigma, alpha, lo, value, hi)


def test_large_orders_and_small_noise_stay_finite_and_monotone():
    orders = np.arange(2, 513)
    for sigma in (0.1, 0.3, 1.1):
        values = rdp.rdp_sampled_gaussian(0.9, sigma, orders)
        assert np.all(np.isfinite(values))
        # RDP is non-decreasing in the order; 1e-12 relative slack for rounding.
        assert np.all(np.diff(values) >= -1e-12 * values[1:])


FRACTIONAL = [(0.015, 1.1), (0.2, 2.0), (0.5, 0.8), (0.9, 0.5), (0.05, 0.6)]


@pytest.mark.parametrize("q,sigma", FRACTIONAL)
def test_fractional_orders_equal_opacus(q, sigma):
    from opacus.accountants.analysis.rdp import compute_rdp

    orders = np.round(np.arange(1.1, 11.0, 0.1), 10)
    orders = orders[~np.isclose(orders, np.round(orders))]
    ours = rdp.rdp_sampled_gaussian(q, sigma, orders)
    ref = compute_rdp(q=q, noise_multiplier=sigma, steps=1, orders=orders)
    # 1e-7 relative: Opacus stops its series at terms below e^-30 in absolute value and adds
    # terms one by one; our sum stops at e^-40 relative to the total.
    np.testing.assert_allclose(ours, ref, rtol=1e-7, atol=0)


@pytest.mark.parametrize("q,sigma,alpha", [(0.015, 1.1, 1.5), (0.2, 2.0, 3.7), (0.5, 0.8, 2.25)])
def test_fractional_orders_equal_numerical_integration(q, sigma, alpha):
    mpmath.mp.dps = 30
    qq, ss, aa = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)
    integrand = lambda z: mpmath.npdf(z, 0, ss) * ((1 - qq) + qq * mpmath.exp((2 * z - 1) / (2 * ss**2))) ** aa  # noqa: E731
    a_alpha = mpmath.quad(integrand, [-mpmath.inf, -5, 0, 5, 15, mpmath.inf])
    expected = float(mpmath.log(a_alpha) / (aa - 1))
    # 1e-10 relative: 30-digit quadrature of A_α = E_{μ0}[(μ/μ0)^α] is far more accurate.
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(expected, rel=1e-10, abs=0)


@pytest.mark.parametrize("q,sigma", FRACTIONAL)
def test_dp_accounting_fractional_orders_are_an_upper_bound(q, sigma):
    """dp-accounting 0.6.0 adds the |terms| of the fractional-order series, dropping the
    alternating signs of the generalised binomial coefficients: its values are upper
    bounds on ours (valid but loose)."""
    orders = np.array([1.5, 2.5, 3.5, 5.5, 10.5])
    ours = rdp.rdp_sampled_gaussian(q, sigma, orders)
    ref = dpa._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    finite = np.isfinite(ref)  # it returns inf where its series does not converge
    # 1e-12 relative slack for rounding: theirs must never be below ours.
    assert np.all(ref[finite] >= ours[finite] * (1 - 1e-12))


def test_dp_accounting_fractional_gap_in_alidpfl_setting():
    ours = rdp.rdp_fractional_order(0.015, 1.1, 1.5)
    ref = float(dpa._compute_rdp_poisson_subsampled_gaussian(0.015, 1.1, [1.5])[0])
    # The gap is a finding, not rounding: dp-accounting exceeds the exact value by > 1 %.
    assert ref / ours - 1 > 0.01


def test_fractional_formula_is_continuous_at_integer_orders():
    for alpha in (2, 3, 7):
        exact = rdp.rdp_integer_order(0.05, 0.9, alpha)
        for shift in (-1e-7, 1e-7):
            # 1e-5 relative: RDP is smooth in α; a shift of 1e-7 moves it by O(1e-7) relatively.
            assert rdp.rdp_fractional_order(0.05, 0.9, alpha + shift) == pytest.approx(exact, rel=1e-5)


@pytest.mark.parametrize("seed", range(6))
def test_improved_conversion_equals_dp_accounting(seed):
    gen = np.random.default_rng(100 + seed)
    q = float(10 ** gen.uniform(-3, 0))
    sigma = float(np.exp(gen.uniform(np.log(0.5), np.log(5))))
    steps = int(gen.integers(1, 5000))
    delta = float(10 ** gen.uniform(-9, -3))
    acc = dpa.RdpAccountant(orders=list(CODE_ORDERS))
    acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    ref_eps, ref_order = acc.get_epsilon_and_optimal_order(delta)
    ours_eps, ours_order = conversion.epsilon_improved(
        rdp.compose(rdp.rdp_sampled_gaussian(q, sigma, CODE_ORDERS), steps), CODE_ORDERS, delta)
    # 1e-9 relative: the per-step RDPs agree to 1e-10 and the conversion is the same formula.
    assert ours_eps == pytest.approx(ref_eps, rel=1e-9, abs=1e-12)
    assert ours_order == ref_order


def test_basic_conversion_is_the_formula_and_never_below_improved():
    orders = np.array(rdp.ALIDPFL_PAPER_ORDERS, dtype=float)
    curve = rdp.compose(rdp.rdp_sampled_gaussian(0.015, 1.1, orders), 317)
    eps, alpha = conversion.epsilon_basic(curve, orders, 1e-5)
    by_hand = curve + math.log(1e5) / (orders - 1)
    assert eps == np.min(by_hand) and alpha == orders[np.argmin(by_hand)]
    assert conversion.epsilon_improved(curve, orders, 1e-5)[0] < eps


def test_conversion_vectorises_over_step_counts():
    """ε and the optimal order for an array of step counts equal, row by row, the basic
    conversion done by hand on dp-accounting's per-step RDP (an independent eq. 17), and
    the improved one equals dp-accounting's own conversion; the scalar calls agree."""
    orders = np.array(rdp.ALIDPFL_CODE_ORDERS, dtype=float)
    per_step = rdp.rdp_sampled_gaussian(0.015, 1.1, orders)
    ref_per_step = dpa._compute_rdp_poisson_subsampled_gaussian(0.015, 1.1, orders)
    steps = np.array([10.0, 100.0, 1000.0])
    eps, alpha = conversion.epsilon_basic(rdp.compose(per_step, steps), orders, 1e-5)
    eps_imp, alpha_imp = conversion.epsilon_improved(rdp.compose(per_step, steps), orders, 1e-5)
    assert eps.shape == alpha.shape == steps.shape
    for i, t in enumerate(steps):
        by_hand = t * ref_per_step + math.log(1e5) / (orders - 1)  # Mironov 2017, Prop. 3
        # 1e-9 relative: the two per-step RDPs agree to 1e-10.
        assert eps[i] == pytest.approx(np.min(by_hand), rel=1e-9) and alpha[i] == orders[np.argmin(by_hand)]
        scalar = conversion.epsilon_basic(rdp.compose(per_step, t), orders, 1e-5)
        assert scalar[0] == pytest.approx(np.min(by_hand), rel=1e-9) and scalar[1] == alpha[i]
        ref_eps, ref_order = dpa.compute_epsilon(orders, t * ref_per_step, 1e-5)
        assert eps_imp[i] == pytest.approx(ref_eps, rel=1e-9) and alpha_imp[i] == ref_order


def test_improved_conversion_kl_branch_gives_zero():
    """δ² > 1 − e^{−R(α)}: ε = 0 outright (δ ≤ sqrt(1 − e^{−KL}), KL ≤ R(α)), although the
    Balle et al. formula alone is positive there: R = 0.08, α = 64, δ = 0.3."""
    r, a, d = 0.08, 64.0, 0.3
    formula = r + math.log1p(-1 / a) - (math.log(d) + math.log(a)) / (a - 1)
    assert formula > 0.01 and d**2 > -math.expm1(-r)  # the case really is the branch
    ref_eps, _ = dpa.compute_epsilon([a], [r], d)
    assert ref_eps == 0
    assert conversion.epsilon_improved([r], [a], d) == (0.0, a)


def test_improved_conversion_between_delta_squared_and_delta():
    """δ² < 1 − e^{−R(α)} < δ: the formula applies (no clipping to 0): R = 0.2, α = 64,
    δ = 0.3; dp-accounting's conversion is the reference (1e-12 relative)."""
    r, a, d = 0.2, 64.0, 0.3
    assert d**2 < -math.expm1(-r) < d
    ref_eps, ref_order = dpa.compute_epsilon([a], [r], d)
    assert ref_eps > 0.1
    eps, order = conversion.epsilon_improved([r], [a], d)
    assert eps == pytest.approx(ref_eps, rel=1e-12) and order == ref_order


@pytest.mark.parametrize("seed", range(8))
def test_improved_conversion_equals_dp_accounting_at_large_delta(seed):
    """Large δ and small RDP, where the KL branch and the clipping at 0 decide the answer;
    dp-accounting's compute_epsilon is the reference (RDP curves from its own eq. 17)."""
    gen = np.random.default_rng(200 + seed)
    q = float(10 ** gen.uniform(-2, 0))
    sigma = float(np.exp(gen.uniform(np.log(0.8), np.log(5))))
    steps = int(gen.integers(1, 200))
    delta = float(gen.uniform(0.05, 0.95))
    curve = steps * dpa._compute_rdp_poisson_subsampled_gaussian(q, sigma, CODE_ORDERS)
    ref_eps, ref_order = dpa.compute_epsilon(CODE_ORDERS, curve, delta)
    eps, order = conversion.epsilon_improved(curve, CODE_ORDERS, delta)
    # 1e-12 relative (absolute 1e-15 at ε = 0): the same formula on the same curve. At ε = 0
    # several orders tie; dp-accounting then reports the one with the most negative
    # unclipped formula, ours the first: the order is compared only where ε > 0.
    assert eps == pytest.approx(ref_eps, rel=1e-12, abs=1e-15)
    assert order == ref_order or ref_eps == 0


@pytest.mark.parametrize("kwargs,name", [
    (dict(q=0.0, sigma=1.0, orders=[2]), "q"),
    (dict(q=1.5, sigma=1.0, orders=[2]), "q"),
    (dict(q=0.1, sigma=0.0, orders=[2]), "sigma"),
    (dict(q=0.1, sigma=-1.0, orders=[2]), "sigma"),
    (dict(q=0.1, sigma=1.0, orders=[1.0]), "orders"),
    (dict(q=0.1, sigma=1.0, orders=[0.5, 2]), "orders"),
])
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        rdp.rdp_sampled_gaussian(**kwargs)


def test_bad_conversion_inputs():
    with pytest.raises(ValueError, match="delta"):
        conversion.epsilon_basic([0.1], [2], 0.0)
    with pytest.raises(ValueError, match="delta"):
        conversion.epsilon_improved([0.1], [2], 1.0)
    with pytest.raises(ValueError, match="orders"):
        conversion.epsilon_basic([0.1], [1.0], 1e-5)
    with pytest.raises(ValueError, match="conversion"):
        conversion.epsilon_from_rdp([0.1], [2], 1e-5, "tight")
    with pytest.raises(ValueError, match="rdp"):
        conversion.epsilon_basic([0.1, 0.2], [2], 1e-5)


# ---------------------------------------------------------------------------------------
# written against mutants that survived `make mutation` (tests/MUTATION.md)
# ---------------------------------------------------------------------------------------
def test_epsilon_from_rdp_defaults_to_the_basic_conversion():
    """No conversion named: the basic one, eps = min_a R(a) + log(1/delta)/(a - 1),
    written out here."""
    rdp_values, orders, delta = [0.5, 0.8, 2.0], [2.0, 8.0, 32.0], 1e-5
    values = [r + math.log(1 / delta) / (a - 1) for r, a in zip(rdp_values, orders, strict=True)]
    best = int(np.argmin(values))
    eps, order = conversion.epsilon_from_rdp(rdp_values, orders, delta)
    assert eps == pytest.approx(values[best], rel=1e-12)
    assert order == orders[best]


def test_check_conversion_names_the_type_of_a_bad_value():
    with pytest.raises(TypeError, match=r"got 3 \(int\)"):
        conversion.check_conversion(3)
    assert conversion.check_conversion("improved") == "improved"


def test_improved_conversion_zero_branch_is_strict():
    """The ε = 0 branch needs δ² > 1 − e^{−R(α)} strictly: on an exact tie the formula
    R + log1p(−1/α) − (log δ + log α)/(α − 1) (written out here, about 0.406) applies."""
    delta, alpha = 1e-3, 10.0
    r = -np.log1p(-delta ** 2)
    for _ in range(200):  # the float nearest the tie, found by stepping one ulp at a time
        if delta ** 2 + np.expm1(-r) == 0:
            break
        r = np.nextafter(r, np.inf if delta ** 2 + np.expm1(-r) > 0 else -np.inf)
    assert delta ** 2 + np.expm1(-r) == 0
    expected = r + math.log1p(-1 / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1)
    eps, order = conversion.epsilon_improved([r], [alpha], delta)
    assert expected > 0.4 and eps == pytest.approx(expected, rel=1e-12) and order == alpha


# ---------------------------------------------------------------------------------------
# written against mutants of privacy/rdp that survived `make mutation` (tests/MUTATION.md)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("q", [0.5, 1.0])
@pytest.mark.parametrize("sigma, expected", [
    (1e-200, math.inf),   # σ² underflows to 0: (k² − k)/(2σ²) is a division by zero (RDP beyond floats)
    (1e-160, math.inf),   # σ² subnormal: (k² − k)/(2σ²) overflows
    (1e300, 0.0),         # σ² overflows: the gains e^0 − 1 are 0, log 0 = −inf (RDP below floats)
])
def test_integer_order_rdp_at_float_range_limits_is_exact_and_silent(q, sigma, expected):
    # The limits of α/(2σ²)-like growth, without a RuntimeWarning (the code silences the
    # divide/overflow/invalid steps it takes on purpose; a warning turned into an error here).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alpha in (2, 32):
            assert rdp.rdp_integer_order(q, sigma, alpha) == expected
            assert rdp.rdp_sampled_gaussian(q, sigma, [alpha, 3])[0] == expected


def test_compose_of_scalars_keeps_the_scalar_shape():
    # steps.shape + rdp.shape = () for a scalar step count and a scalar RDP: 2 × 0.5 = 1.
    out = rdp.compose(0.5, 2.0)
    assert np.shape(out) == () and float(out) == 1.0


def test_compose_limits_are_exact_and_silent():
    # 0 steps of an infinite RDP compose to 0; 1e10 steps of RDP 1e300 overflow to inf; no
    # RuntimeWarning on the way (turned into an error here).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(rdp.compose([math.inf, 1.0], 0.0), [0.0, 0.0])
        np.testing.assert_array_equal(rdp.compose([1e300], 1e10), [math.inf])
        np.testing.assert_array_equal(rdp.compose([math.inf, 1.0], np.array([0.0, 2.0])),
                                      [[0.0, 0.0], [math.inf, 2.0]])


@pytest.mark.parametrize("q, alpha", [(0.5, 1.5), (0.01, 2.5)])
def test_fractional_order_at_small_sigma_is_the_gaussian_rdp(q, alpha):
    # σ = 1e-9: G = (α² − α)/(2σ²) ≥ 1e17 and α log q + G ≤ log A_α ≤ log(1 + e^G) pin
    # RDP = log A_α/(α − 1) to G/(α − 1) = α/(2σ²) within |α log q|/G < 1e-15 relative.
    sigma = 1e-9
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(alpha / (2 * sigma**2), rel=1e-12, abs=0)


def _eq17_mp(q: float, sigma: float, alpha: int) -> float:
    """RDP at an integer order by eq. (17), 40-digit mpmath: log Σ_k C(α,k)(1−q)^{α−k} q^k
    e^{(k²−k)/(2σ²)} / (α − 1)."""
    mpmath.mp.dps = 40
    q_, s2 = mpmath.mpf(q), mpmath.mpf(sigma) ** 2
    a = mpmath.fsum(mpmath.binomial(alpha, k) * (1 - q_) ** (alpha - k) * q_**k * mpmath.exp((k * k - k) / (2 * s2))
                    for k in range(alpha + 1))
    return float(mpmath.log(a) / (alpha - 1))


@pytest.mark.parametrize("q, sigma, alpha", [(0.1, 1.0, 3), (0.01, 0.7, 6),
                                             (0.5, 0.3, 50)])  # A_50 ≈ e^13576, beyond exp's range
def test_fractional_formula_at_an_integer_order_is_eq17(q, sigma, alpha):
    # The generalised binomial coefficients C(α, i) vanish for i > α at an integer α (poles of
    # Γ(α − i + 1)); 1e-10 relative against eq. (17) in 40 digits.
    assert rdp.rdp_fractional_order(q, sigma, float(alpha)) == pytest.approx(_eq17_mp(q, sigma, alpha), rel=1e-10, abs=0)


def test_fractional_order_at_a_tiny_rate_and_a_large_order():
    # q = 1e-10, α = 9999.5, σ ≈ 0.0316 (G = (α² − α)/(2σ²) = 5e10): the term k = α dominates,
    # log A_α = α log q + G up to e^{−(α − 1)/σ²}; the upper bound log(1 + e^G) is 2.3e5 higher.
    q, alpha = 1e-10, 9999.5
    sigma = math.sqrt((alpha * alpha - alpha) / (2 * 5e10))
    mpmath.mp.dps = 40
    expected = float((alpha * mpmath.log(mpmath.mpf(q)) + (mpmath.mpf(alpha) ** 2 - alpha) / (2 * mpmath.mpf(sigma) ** 2))
                     / (alpha - 1))
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(expected, rel=1e-9, abs=0)


@pytest.mark.parametrize("q, sigma, alpha", [(0.01, 1.0, 2.5), (0.5, 0.8, 2.25), (0.01, 0.1, 50.5),
                                             (1e-4, 1e-3, 3.5), (0.5, 1e5, 200.5), (0.2, 2.0, 700.5)])
def test_fractional_orders_are_silent(q, sigma, alpha):
    # no RuntimeWarning from the series or the quadrature (a warning is an error here)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = rdp.rdp_fractional_order(q, sigma, alpha)
    assert 0 <= value <= math.inf


def test_full_batch_fractional_order_with_an_underflowed_sigma_square_is_inf():
    # q = 1: α/(2σ²) with σ² = 1e-400 underflowed to 0 is beyond the float range.
    assert rdp.rdp_fractional_order(1.0, 1e-200, 1.5) == math.inf


# ---------------------------------------------------------------------------------------
# second round against the survivors of privacy/rdp (tests/MUTATION.md)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [30.0000001, 30.5, 31.0])
def test_full_batch_order_two_just_above_the_log_expm1_switch(x):
    # q = 1, α = 2: RDP = (k² − k)/(2σ²) at k = 2 = 1/σ² exactly (Mironov 2017, Prop. 7), here
    # just above 30, where log(e^x − 1) is taken as x + log1p(−e^−x); a wrong sign or clip of
    # that correction moves the value by about 2e^−30 ≈ 2e-13 (5–30 ulp). 1e-15 relative: a
    # handful of roundings; the reference is 1/σ² of the float σ in 40 digits.
    sigma = 1 / math.sqrt(x)
    mpmath.mp.dps = 40
    expected = float(1 / mpmath.mpf(sigma) ** 2)
    assert rdp.rdp_integer_order(1.0, sigma, 2) == pytest.approx(expected, rel=1e-15, abs=0)
    assert rdp.rdp_sampled_gaussian(1.0, sigma, [2.0])[0] == pytest.approx(expected, rel=1e-15, abs=0)


@pytest.mark.parametrize("u, log1p_u, alpha", [
    (1e304, math.log1p(1e304), 1.001),   # α log(1 + u) = 700.7: the log-space branch, αu finite
    (math.inf, 800.0, 1.001),             # u beyond the float range, only log(1 + u) = 800 known
    (1e300, math.log1p(1e300), 2.5),
])
def test_excess_moment_in_log_space(u, log1p_u, alpha):
    # h(u) = (1 + u)^α − 1 − αu, returned as scale · e^log_factor; 1e-13 relative on log h
    # against 40 digits (u taken as e^{log1p_u} − 1 there).
    mpmath.mp.dps = 40
    uu = mpmath.expm1(mpmath.mpf(log1p_u))
    expected = float(mpmath.log((1 + uu) ** alpha - 1 - alpha * uu))
    scale, log_factor = rdp._excess_moment(u, log1p_u, alpha)
    assert scale > 0
    assert math.log(scale) + log_factor == pytest.approx(expected, rel=1e-13, abs=0)


def _log_a_mp(q: float, sigma: float, alpha: float) -> float:
    """log A_α = log E_t[(1 − q + q e^{t/σ − 1/(2σ²)})^α], t ~ N(0, 1), by 40-digit quadrature
    split around the peak t = α/σ of the tilted density."""
    mpmath.mp.dps = 40
    q_, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)
    peak = a / s
    a_alpha = mpmath.quad(lambda t: mpmath.npdf(t) * (1 - q_ + q_ * mpmath.exp(t / s - 1 / (2 * s * s))) ** a,
                          [-mpmath.inf, 0, peak / 2, peak - 5, peak, peak + 5, 2 * peak, mpmath.inf])
    return float(mpmath.log(a_alpha))


@pytest.mark.parametrize("q, sigma, alpha", [(4.5e-5, 2.22, 100.0), (1e-3, 1.0, 30.5),
                                             (1e-20, 1.0, 100.5),   # a narrow peak at t = 100.5
                                             (1e-40, 0.5, 50.5)])   # at t = α/σ = 101, not ασ
def test_quadrature_where_its_integrand_is_taken_in_log_space(q, sigma, alpha):
    # The quadrature of log A_α (documented for any α > 1) at inputs where (1 + u)^α exceeds
    # e^700 around the peak, so the integrand is evaluated in log space where it matters;
    # 1e-12 relative against 40 digits.
    assert rdp._log_a_fractional_quad(q, sigma, alpha) == pytest.approx(_log_a_mp(q, sigma, alpha), rel=1e-12, abs=0)


@pytest.mark.parametrize("q, alpha", [(0.5, 1.5), (0.01, 2.5)])
def test_fractional_order_at_a_subnormal_sigma_square_is_inf(q, alpha):
    # σ = 1e-160: σ² = 1e-320 is subnormal and G = (α² − α)/(2σ²) overflows; RDP ≥ (G + α log q)/(α − 1)
    # is beyond the float range.
    assert rdp.rdp_fractional_order(q, 1e-160, alpha) == math.inf


@pytest.mark.parametrize("q, sigma", [(1e-100, 1e-5), (1e-300, 1e-6)])
def test_fractional_order_at_tiny_rate_and_sigma_keeps_the_alpha_log_q_term(q, sigma):
    # α = 9999.5: G = (α² − α)/(2σ²) ≥ 5e17 but below the closed form's threshold 1e16(1 − α log q);
    # the k = α term dominates, log A_α = G + α log q (as in the test at q = 1e-10 above), which
    # differs from the upper bound G by 2.3e6 (5e-12 relative) or 6.9e6 (1.4e-13). 1e-14
    # relative against 40 digits.
    alpha = 9999.5
    mpmath.mp.dps = 40
    a, s = mpmath.mpf(alpha), mpmath.mpf(sigma)
    expected = float((a * mpmath.log(mpmath.mpf(q)) + (a * a - a) / (2 * s * s)) / (a - 1))
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(expected, rel=1e-14, abs=0)


SLOW_SERIES = [(0.5, 10.0, 1.5), (0.2, 1.0, 1.5), (0.5, 1.0, 1.5), (0.5, 3.0, 2.5)]


@pytest.mark.parametrize("q, sigma, alpha", SLOW_SERIES)
def test_slowly_converging_series_against_high_precision_quadrature(q, sigma, alpha):
    # The generalised binomial coefficients decay like i^−α−1: these need 4096 to 2^18 terms
    # before the tail is below e^−40 of the sum. 1e-11 relative against 50 digits.
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(_fractional_mpmath(q, sigma, alpha), rel=1e-11, abs=0)


@pytest.mark.parametrize("q, sigma, alpha", SLOW_SERIES)
def test_series_that_converges_is_not_replaced_by_the_quadrature(q, sigma, alpha, monkeypatch):
    # Documented routing of _log_a_fractional: the quadrature only where the series cancels
    # below its rounding error or does not converge within 2^18 terms. These converge (more
    # than 256 terms) with no cancellation.
    calls = []
    monkeypatch.setattr(rdp, "_log_a_fractional_quad", lambda *args: calls.append(args) or math.nan)
    value = rdp.rdp_fractional_order(q, sigma, alpha)
    assert calls == [] and math.isfinite(value)


def test_series_stops_at_2_to_the_18_terms(monkeypatch):
    # q = 0.5, σ = 1e6, α = 1.5: the series does not converge within 2^18 terms; it must stop
    # there (two parts of at most 2^18 terms each go into logsumexp) and use the quadrature,
    # whose value is checked against 50 digits (1e-11 relative).
    real_logsumexp = rdp.logsumexp
    sizes = []

    def logsumexp(a, *args, **kwargs):
        sizes.append(np.size(a))
        if np.size(a) > 2 * 2**18:
            raise AssertionError(f"series of {np.size(a)} terms")
        return real_logsumexp(a, *args, **kwargs)

    monkeypatch.setattr(rdp, "logsumexp", logsumexp)
    value = rdp.rdp_fractional_order(0.5, 1e6, 1.5)
    assert max(sizes) == 2 * 2**18
    assert value == pytest.approx(_fractional_mpmath(0.5, 1e6, 1.5), rel=1e-11, abs=0)


def _fractional_mpmath_peaked(q: float, sigma: float, alpha: float) -> float:
    """As :func:`_fractional_mpmath`, with the quadrature also split around the peak t = α/σ
    of (1 + u)^α φ(t) (large orders)."""
    mpmath.mp.dps = 50
    qq, ss, aa = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(alpha)

    def integrand(t):
        u = qq * mpmath.expm1((2 * ss * t - 1) / (2 * ss**2))
        return mpmath.npdf(t) * ((1 + u) ** aa - 1 - aa * u)

    peak = aa / ss
    cuts = sorted({-mpmath.inf, -10, 0, 10, 40, peak / 2, peak - 10, peak, peak + 10, 2 * peak, mpmath.inf})
    return float(mpmath.log1p(mpmath.quad(integrand, cuts)) / (aa - 1))


@pytest.mark.parametrize("q, sigma, alpha", [(7.5e-5, 74.0, 4891.3), (1e-4, 77.0, 2659.5)])
def test_large_fractional_orders_at_moderate_sigma(q, sigma, alpha):
    # Large α (the series starts with 4⌈α⌉ terms): a sum cut after 256 terms passes the tail
    # test here but is off by ~1.5e-7. 1e-11 relative against 50 digits.
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(
        _fractional_mpmath_peaked(q, sigma, alpha), rel=1e-11, abs=0)


@pytest.mark.parametrize("log10_q", [-7.8, -7.7, -7.66, -7.62])
def test_quadrature_beyond_the_float_range_of_a_alpha_is_inf(log10_q):
    # The quadrature sums A_α − 1 in linear scale: where A_α exceeds the largest float
    # (log A_α > 709.78, from 40 digits) it returns +inf, an upper bound, and never raises
    # (math.exp overflows above 709.78 on the integrand's way there).
    q, sigma, alpha = 10.0**log10_q, 1.0, 60.5
    assert _log_a_mp(q, sigma, alpha) > math.log(np.finfo(float).max)
    assert rdp._log_a_fractional_quad(q, sigma, alpha) == math.inf


def test_series_stops_at_its_term_cap(monkeypatch):
    # The same stop with the cap lowered to 1024 terms (fast): q = 0.5, σ = 1e6, α = 1.5 is not
    # converged after 256 or 1024 terms, so the series must stop there and call the quadrature.
    monkeypatch.setattr(rdp, "_FRACTIONAL_MAX_TERMS", 1024)
    real_logsumexp, real_quad = rdp.logsumexp, rdp._log_a_fractional_quad
    sizes, quad_calls = [], []

    def logsumexp(a, *args, **kwargs):
        sizes.append(np.size(a))
        if np.size(a) > 2 * 1024:
            raise AssertionError(f"series of {np.size(a)} terms")
        return real_logsumexp(a, *args, **kwargs)

    def quad(*args):
        quad_calls.append(args)
        return real_quad(*args)

    monkeypatch.setattr(rdp, "logsumexp", logsumexp)
    monkeypatch.setattr(rdp, "_log_a_fractional_quad", quad)
    value = rdp.rdp_fractional_order(0.5, 1e6, 1.5)
    assert max(sizes) == 2 * 1024 and quad_calls == [(0.5, 1e6, 1.5)]
    # RDP ≈ q²α/(2σ²) for large σ (second-order expansion): 1.875e-13, to 1e-6 relative
    assert value == pytest.approx(0.5**2 * 1.5 / (2 * 1e6**2), rel=1e-6)
