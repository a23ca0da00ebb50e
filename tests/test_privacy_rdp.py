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
    assert rdp.rdp_integer_order(q, sigma, 2) == pytest.approx(expected, rel=1e-13)


def test_full_batch_is_the_gaussian_mechanism():
    for alpha in (2, 64, 512):
        # 1e-12 relative: q = 1 leaves a single term, exp((α²−α)/(2σ²)).
        assert rdp.rdp_integer_order(1.0, 0.3, alpha) == pytest.approx(alpha / (2 * 0.3**2), rel=1e-12)


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
    assert rdp.rdp_fractional_order(q, sigma, alpha) == pytest.approx(expected, rel=1e-10)


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
    orders = np.array(rdp.ALIDPFL_CODE_ORDERS, dtype=float)
    per_step = rdp.rdp_sampled_gaussian(0.015, 1.1, orders)
    steps = np.array([10.0, 100.0, 1000.0])
    eps, alpha = conversion.epsilon_basic(rdp.compose(per_step, steps), orders, 1e-5)
    for i, t in enumerate(steps):
        assert (eps[i], alpha[i]) == conversion.epsilon_basic(rdp.compose(per_step, t), orders, 1e-5)


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
