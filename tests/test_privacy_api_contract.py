"""Contract of the public privacy API (``fedrepro.privacy.{rdp, conversion, budget, gaussian,
subsampled, amplification, fedplt, validate}`` and ``fedrepro.core.validate``).

Every public function either returns values in their documented range — δ ∈ [0, 1] (0 where
it underflows), log δ ∈ [−inf, 0], ε ≥ 0 or +inf (where unbounded in floating point),
RDP ≥ 0 or +inf, step counts integers ≥ 1, noise σ ∈ [0, inf] — or raises ValueError /
TypeError whose message names the offending parameter. Strings (even numeric-looking ones)
and booleans are TypeErrors; orders beyond the documented maximum are ValueErrors.

Part 1 pins each reported finding with an explicit test whose expected value comes from
outside the code (a closed form, a bound, or mpmath at high precision). Part 2 checks the
contract on every public function with hypothesis (derandomised: deterministic in CI).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import strategies as st

from fedrepro.core import validate as core_validate
from fedrepro.dpfedpaq import amplification
from fedrepro.fedplt import privacy_bounds as fedplt
from fedrepro.privacy import budget, conversion, gaussian, rdp, subsampled
from fedrepro.privacy import validate as privacy_validate
from tests._contract import Kind, Spec, check_contract

TINY_FLOAT = 2.2250738585072014e-308  # smallest normal float
FLOAT_MAX = 1.7976931348623157e308


def _mp_log_ncdf_bound(x: mpmath.mpf) -> mpmath.mpf:
    """Upper bound on log Φ(x) for x < 0 from the Mills ratio, Φ(x) ≤ φ(x)/|x|:
    −x²/2 − log(|x|·√(2π)), in mpmath (no underflow for astronomically negative x)."""
    assert x < 0
    return -x * x / 2 - mpmath.log(-x * mpmath.sqrt(2 * mpmath.pi))


# =========================================================================== Part 1: findings

# --------------------------------------------------------------- strings and booleans accepted


@pytest.mark.parametrize("args,name", [
    (("0.5", "1", ["2"]), "q"),
    ((0.5, "1", [2]), "sigma"),
    ((0.5, 1.0, ["2"]), "orders"),
])
def test_numeric_strings_are_rejected_by_rdp_sampled_gaussian(args, name):
    # Finding: rdp_sampled_gaussian("0.5", "1", ["2"]) returned [0.357].
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        rdp.rdp_sampled_gaussian(*args)


@pytest.mark.parametrize("position,name", [(0, "target_epsilon"), (1, "q"), (2, "sigma"), (3, "delta")])
def test_numeric_strings_are_rejected_by_max_steps_exact(position, name):
    # Finding: max_steps_exact("2", "0.01", "1.1", "1e-5") returned 892.
    with pytest.raises(TypeError, match="target_epsilon"):
        budget.max_steps_exact("2", "0.01", "1.1", "1e-5")
    args = [2.0, 0.01, 1.1, 1e-5]
    args[position] = str(args[position])  # one string at a time: each is named
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        budget.max_steps_exact(*args)


@pytest.mark.parametrize("flag", [True, False, np.bool_(True)])
def test_boolean_sampling_rate_is_rejected(flag):
    # Finding: rdp_sampled_gaussian(True, 1.0, [2]) read q = 1.
    with pytest.raises(TypeError, match=r"\bq\b"):
        rdp.rdp_sampled_gaussian(flag, 1.0, [2])


@pytest.mark.parametrize("steps", [True, False, [True, False], np.array([True])])
def test_boolean_step_count_is_rejected(steps):
    # Finding: compose(r, True) composed one step.
    with pytest.raises(TypeError, match=r"\bsteps\b"):
        rdp.compose([0.1, 0.2], steps)


# --------------------------------------------------------------- NaN returned silently


def test_analytic_delta_underflows_to_zero_at_huge_sigma():
    # Finding: analytic_gaussian_delta(1, 1, 1e155) was nan. δ ≤ Φ(Δ/(2σ) − εσ/Δ), whose log
    # is below −5e309 (Mills-ratio bound in mpmath): δ is 0 in floating point, log δ is −inf.
    mpmath.mp.dps = 30
    bound = _mp_log_ncdf_bound(mpmath.mpf(0.5) / mpmath.mpf(1e155) - mpmath.mpf(1e155))
    assert bound < math.log(TINY_FLOAT) and float(bound) == -math.inf
    assert gaussian.analytic_gaussian_delta(1.0, 1.0, 1e155) == 0.0


def test_analytic_log_delta_is_minus_inf_at_huge_sigma():
    # Finding: analytic_gaussian_log_delta(1, 1, 1e155) was nan; log δ ≤ −5e309 (above).
    assert gaussian.analytic_gaussian_log_delta(1.0, 1.0, 1e155) == -math.inf
    # and where log δ is representable it stays finite and equals the mpmath value
    mpmath.mp.dps = 60
    eps, mu = mpmath.mpf(1), mpmath.mpf(1) / mpmath.mpf(1e3)
    exact = mpmath.log(mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu))
    # 1e-9 relative: log δ ≈ −5e5 is the log of a difference of two log-CDFs of that size,
    # each with ~1e-16 relative error: ~1e-5 absolute, 2e-11 relative (60-digit reference).
    assert gaussian.analytic_gaussian_log_delta(1.0, 1.0, 1e3) == pytest.approx(float(exact), rel=1e-9)


def test_subsampled_delta_underflows_to_zero_at_huge_sigma():
    # Finding: subsampled_gaussian_delta(1, 0.01, 1, 1e160) was nan. Remove direction:
    # δ ≤ p Φ(μ/2 − ε₁/μ), ε₁ = log(1 + (e − 1)/p), μ = 1e-160; add direction: 0, since
    # e^{−ε} ≤ 1 − p.
    mpmath.mp.dps = 30
    p, mu = mpmath.mpf(0.01), mpmath.mpf(1) / mpmath.mpf(1e160)
    eps1 = mpmath.log(1 + (mpmath.e - 1) / p)
    assert mpmath.exp(-1) <= 1 - p
    assert float(mpmath.log(p) + _mp_log_ncdf_bound(mu / 2 - eps1 / mu)) == -math.inf
    assert subsampled.subsampled_gaussian_delta(1.0, 0.01, 1.0, 1e160) == 0.0
    assert subsampled.subsampled_gaussian_log_delta(1.0, 0.01, 1.0, 1e160) == -math.inf


def test_analytic_delta_underflows_to_zero_at_tiny_sensitivity():
    # Finding: analytic_gaussian_delta(1, 1e-160, 1) was nan (μ = Δ/σ = 1e-160 as above).
    mpmath.mp.dps = 30
    mu = mpmath.mpf(1e-160)
    assert float(_mp_log_ncdf_bound(mu / 2 - 1 / mu)) == -math.inf
    assert gaussian.analytic_gaussian_delta(1.0, 1e-160, 1.0) == 0.0


def test_zero_compositions_of_infinite_rdp_are_zero():
    # Finding: compose([inf, 0.1], 0) gave [nan, 0]. Zero compositions release nothing:
    # RDP 0 at every order (ALI-DPFL Def. 4 with an empty composition).
    out = rdp.compose([np.inf, 0.1], 0)
    assert out.tolist() == [0.0, 0.0]
    assert rdp.compose([np.inf, 0.1], np.array([0.0, 2.0])).tolist() == [[0.0, 0.0], [np.inf, 0.2]]


# --------------------------------------------------------------- obscure crashes on finite inputs


def test_sampled_gaussian_rdp_at_huge_sigma_is_the_closed_form():
    # Finding: rdp_sampled_gaussian(0.01, 1e155, [2]) raised OverflowError. Closed form at
    # α = 2: A_2 = 1 + q²(e^{1/σ²} − 1), RDP = log A_2 ≈ 1e-314 (subnormal: flushed to 0 is
    # accepted, 1e-300 absolute).
    mpmath.mp.dps = 30
    q, s = mpmath.mpf(0.01), mpmath.mpf(1e155)
    expected = float(mpmath.log1p(q * q * mpmath.expm1(1 / s**2)))
    value = rdp.rdp_sampled_gaussian(0.01, 1e155, [2])
    assert value.shape == (1,) and 0.0 <= value[0] == pytest.approx(expected, abs=1e-300)


@pytest.mark.parametrize("call", [
    lambda: rdp.rdp_integer_order(0.01, 1e300, 2),
    lambda: rdp.rdp_fractional_order(0.01, 1e300, 2.5),
    lambda: float(rdp.rdp_sampled_gaussian(0.01, 1e300, [2, 2.5, 64])[2]),
    lambda: gaussian.gaussian_rdp(2.0, 1.0, 1e300),
], ids=["integer", "fractional", "sampled", "gaussian_rdp"])
def test_rdp_at_sigma_1e300_underflows_to_zero(call):
    # Finding: OverflowError at σ = 1e300. The RDP is at most that of the Gaussian mechanism,
    # α/(2σ²) ≤ 32e-600 (Mironov 2017 Prop. 7; subsampling only lowers it): 0 in floats.
    assert call() == 0.0


def test_epsilon_after_steps_at_sigma_1e300_is_the_conversion_constant():
    # Finding: OverflowError. With RDP 0, the basic conversion gives
    # min_α log(1/δ)/(α − 1) = log(1e5)/63 at α = 64 (orders 2..64).
    eps, order = budget.epsilon_after_steps(10, 0.01, 1e300, 1e-5)
    assert eps == pytest.approx(math.log(1e5) / 63, rel=1e-14) and order == 64


def test_max_steps_at_sigma_1e300_report_an_unexhausted_budget():
    # Finding: OverflowError. ε(T) = log(1e5)/63 ≈ 0.18 < 1 for every T: the budget is never
    # spent, which both searches report as a ValueError naming target_epsilon.
    with pytest.raises(ValueError, match="target_epsilon"):
        budget.max_steps_exact(1.0, 0.01, 1e300, 1e-5)
    with pytest.raises(ValueError, match="target_epsilon"):
        budget.max_steps_bisection(1.0, 0.01, 1e300, 1e-5)


def test_composed_epsilon_at_sigma_1e300_is_zero():
    # Finding: OverflowError. δ(0) after 10 rounds is at most 10·p·TV(N(0,σ²), N(Δ,σ²))
    # ≤ 10·p·Δ/(σ√(2π)) ≈ 4e-302 < δ = 1e-5, so ε = 0.
    assert 10 * 0.01 * 1.0 / (1e300 * math.sqrt(2 * math.pi)) < 1e-5
    assert subsampled.composed_epsilon(1e-5, 0.01, 1.0, 1e300, 10) == 0.0


def test_gaussian_rdp_at_tiny_sigma_is_inf():
    # Finding: gaussian_rdp(2, 1, 1e-300) raised ZeroDivisionError; α/(2σ²) = 1e600 > max float.
    assert 2.0 / 2 * mpmath.mpf(10) ** 600 > FLOAT_MAX
    assert gaussian.gaussian_rdp(2.0, 1.0, 1e-300) == math.inf


def test_fractional_order_at_tiny_sigma_is_inf():
    # Finding: rdp_fractional_order(0.01, 1e-300, 4.5) raised ArithmeticError after 2^24
    # terms. Lower bound (1 − q + qL)^α ≥ (qL)^α: RDP ≥ (α log q + (α² − α)/(2σ²))/(α − 1),
    # about 1.8e600 > max float.
    a, q, s = mpmath.mpf(4.5), mpmath.mpf(0.01), mpmath.mpf(1e-300)
    assert (a * mpmath.log(q) + (a * a - a) / (2 * s * s)) / (a - 1) > FLOAT_MAX
    assert rdp.rdp_fractional_order(0.01, 1e-300, 4.5) == math.inf


def test_analytic_epsilon_beyond_the_float_range_is_inf():
    # Finding: analytic_gaussian_epsilon(1e-5, 1, 1e-160) raised scipy's root-finder error.
    # μ = 1e160: even at ε = max float, δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) ≈ 1 > 1e-5.
    mpmath.mp.dps = 30
    mu, eps = mpmath.mpf(1e160), mpmath.mpf(FLOAT_MAX)
    first = mpmath.ncdf(mu / 2 - eps / mu)
    log_second = eps + _mp_log_ncdf_bound(-mu / 2 - eps / mu)
    assert first - mpmath.exp(log_second) > 1e-5
    assert gaussian.analytic_gaussian_epsilon(1e-5, 1.0, 1e-160) == math.inf


def test_subsampled_delta_at_epsilon_710():
    # Finding: subsampled_gaussian_delta(710, 0.5, 1, 1) raised "math range error" (e^710).
    # 60-digit mpmath of the closed form (module doc): H(P‖Q) = p[Φ(μ/2 − ε₁/μ) −
    # e^{ε₁}Φ(−μ/2 − ε₁/μ)]; the other direction is 0 since e^{−ε} ≤ 1 − p.
    mpmath.mp.dps = 60
    p, mu, eps = mpmath.mpf(0.5), mpmath.mpf(1), mpmath.mpf(710)
    eps1 = mpmath.log(1 + mpmath.expm1(eps) / p)
    delta = p * (mpmath.ncdf(mu / 2 - eps1 / mu) - mpmath.exp(eps1) * mpmath.ncdf(-mu / 2 - eps1 / mu))
    assert subsampled.subsampled_gaussian_delta(710, 0.5, 1, 1) == float(delta) == 0.0
    # its log is representable: 1e-9 relative (log-CDF differences in double precision)
    assert subsampled.subsampled_gaussian_log_delta(710, 0.5, 1, 1) == pytest.approx(
        float(mpmath.log(delta)), rel=1e-9)


def test_amplified_epsilon_at_epsilon0_710():
    # Finding: amplified_epsilon(710, 0.5) raised "math range error". Exact value
    # log(1 + p(e^{ε₀} − 1)) by mpmath (30 digits); 1e-15 relative.
    mpmath.mp.dps = 30
    expected = float(mpmath.log(1 + mpmath.mpf(0.5) * mpmath.expm1(710)))
    assert amplification.amplified_epsilon(710, 0.5) == pytest.approx(expected, rel=1e-15)


def test_huge_integer_order_is_rejected_not_allocated():
    # Finding: rdp_integer_order(0.01, 1.0, 2**40) raised MemoryError (an 8 TiB array).
    with pytest.raises(ValueError, match=r"\balpha\b"):
        rdp.rdp_integer_order(0.01, 1.0, 2**40)
    with pytest.raises(ValueError, match=r"\borders\b"):
        rdp.rdp_sampled_gaussian(0.01, 1.0, [2, 2**40])
    with pytest.raises(ValueError, match=r"\balpha\b"):
        rdp.rdp_fractional_order(0.01, 1.0, 2.0**40 + 0.5)


# --------------------------------------------------------------- messages naming the parameter


@pytest.mark.parametrize("call,exc,name", [
    (lambda: rdp.rdp_sampled_gaussian(0.01, 1.0, ["abc"]), TypeError, "orders"),
    (lambda: rdp.compose("abc", 10), TypeError, "rdp"),
    (lambda: rdp.rdp_integer_order(0.01, 1.0, "4"), TypeError, "alpha"),
    (lambda: rdp.rdp_integer_order(0.01, 1.0, None), TypeError, "alpha"),
    (lambda: subsampled.composed_epsilon(1e-5, 0.01, 1.0, 1.0, rounds=float("nan")), ValueError, "rounds"),
    (lambda: subsampled.composed_epsilon(1e-5, 0.01, 1.0, 1.0, rounds=float("inf")), ValueError, "rounds"),
], ids=["orders-abc", "compose-abc", "alpha-str", "alpha-None", "rounds-nan", "rounds-inf"])
def test_messages_name_the_parameter(call, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        call()


# =========================================================================== Part 2: hypothesis

MODULES = (rdp, conversion, budget, gaussian, subsampled, amplification, fedplt, privacy_validate,
           core_validate)


def _public_functions() -> dict[str, Callable]:
    """Every function listed in the ``__all__`` of the modules under contract."""
    out = {}
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                out.setdefault(f"{obj.__module__.rsplit('.', 1)[-1]}.{obj.__name__}", obj)
    return out


def _log_uniform(lo: float, hi: float) -> st.SearchStrategy:
    return st.floats(lo, hi).map(lambda e: 10.0**e)


_GARBAGE = ["0.5", "1", "abc", "", "nan", b"1", True, False, np.bool_(True), None, [0.5], (), {}, 1j]
_SEQ_GARBAGE = ["2", "abc", True, None, ["2"], [2, "3"], [True], [None], [[2], [3, 4]], np.array(["2"]),
                np.array([True]), [2, 1j]]
GARBAGE = st.sampled_from(_GARBAGE)
SEQ_GARBAGE = st.sampled_from(_SEQ_GARBAGE)
NON_FINITE = [math.inf, -math.inf, math.nan]


def _kind(valid: list[st.SearchStrategy], bad_range: list, bad_type=GARBAGE) -> Kind:
    return Kind(st.one_of(*valid), st.sampled_from(bad_range) if bad_range else None, bad_type)


POS = _kind([st.floats(0.01, 100.0), _log_uniform(-300, 300),
             st.sampled_from([5e-324, 1e-300, 1e-160, 1e155, 1e300, FLOAT_MAX, 1, np.float64(0.7), np.int64(3)])],
            [0.0, -0.0, -1.0, -1e-300] + NON_FINITE)
NONNEG = _kind([st.floats(0.0, 50.0), _log_uniform(-300, 300), st.sampled_from([0.0, -0.0, 0, 709.0, 710.0, 1e300, FLOAT_MAX])],
               [-1.0, -1e-300] + NON_FINITE)
PROB = _kind([st.floats(0.0, 1.0, exclude_min=True), _log_uniform(-300, 0),
              st.sampled_from([1.0, 1, 5e-324, 1 - 1e-16, 0.5, np.float64(0.015)])],
             [0.0, -0.1, 1.0000001, 2.0, 1e300] + NON_FINITE)
DELTA = _kind([st.floats(0.0, 1.0, exclude_min=True, exclude_max=True), _log_uniform(-300, -0.01),
               st.sampled_from([5e-324, 1e-300, 1 - 1e-16, 0.5, np.float64(1e-5)])],
              [0.0, 1.0, 1, -0.5, 1.5] + NON_FINITE)
_ORDERS_VALID = [1 + 1e-9, 1.5, 2, 2.5, 3, 7.25, 64, 100.5, 512, 1024.0]


def _order(cap: float) -> Kind:
    extra = [cap, cap - 0.5, 2**13] if math.isfinite(cap) else [1e6, 1e300, 2.0**40]
    bad = [1.0, 0.5, 0, -2] + NON_FINITE + ([cap + 1, 2**40, 1e300] if math.isfinite(cap) else [])
    return _kind([st.floats(1.01, 100.0), st.sampled_from(_ORDERS_VALID + extra)], bad)


MAX_ORDER = privacy_validate.MAX_ORDER
ORDER = _order(math.inf)
ORDER_CAPPED = _order(MAX_ORDER)
INT_ORDER = _kind([st.integers(2, 80), st.sampled_from([2, 64, 512, MAX_ORDER, 4.0, np.int64(7)])],
                  [1, 0, -3, MAX_ORDER + 1, 2**40, 2.5] + NON_FINITE,
                  st.sampled_from(["4", True, None, [4], b"4"]))


def _count(low: int, high: float) -> Kind:
    top = int(min(high, 10**6))
    valid = [st.integers(low, top), st.sampled_from([low, float(low + 1), np.int64(low + 2)] + ([int(high)] if high < 2**70 else []))]
    bad = [low - 1, 2.5, low + 0.5] + NON_FINITE + ([int(high) + 1] if high < 2**70 else [])
    return _kind(valid, bad, st.sampled_from(["5", True, None, [5], b"5"]))


def _orders(cap: float) -> Kind:
    elements = _order(cap).valid
    valid = [st.lists(elements, min_size=1, max_size=5),
             st.lists(elements, min_size=1, max_size=5).map(tuple),
             st.lists(elements, min_size=1, max_size=5).map(np.array),
             st.sampled_from([rdp.ALIDPFL_PAPER_ORDERS, range(2, 10), 3.5])]
    bad = [[], [1.0], [0.5, 2], [2, math.nan], [2, math.inf], [[2, 3], [4, 5]], np.array([])]
    if math.isfinite(cap):
        bad += [[2, cap + 1], [2**40]]
    return _kind(valid, bad, SEQ_GARBAGE)


ORDERS = _orders(math.inf)
ORDERS_CAPPED = _orders(MAX_ORDER)
RDP_VALUES = st.one_of(st.floats(0.0, 10.0), _log_uniform(-300, 300), st.sampled_from([0.0, math.inf, 1e-320]))


def _rdp_for(n: int) -> Kind:
    """RDP curves of n orders (1-d, or 2-d with one row per step count)."""
    valid = [st.lists(RDP_VALUES, min_size=n, max_size=n),
             st.lists(st.lists(RDP_VALUES, min_size=n, max_size=n), min_size=1, max_size=3).map(np.array)]
    bad = [[-0.1] * n, [math.nan] * n, [0.1] * (n + 1), 0.1 if n > 1 else [0.1, 0.2]]
    return _kind(valid, bad, SEQ_GARBAGE)


RDP_VEC = _kind([st.lists(RDP_VALUES, min_size=1, max_size=5)], [[-0.1], [math.nan, 0.1]], SEQ_GARBAGE)
STEPS = _kind([st.floats(0.0, 1e6), st.sampled_from([0, 0.0, 1, 1e300, np.float64(3.0)]),
               st.lists(st.floats(0.0, 1e6), min_size=1, max_size=3)],
              [-1.0, [-1.0], [math.inf], [math.nan]] + NON_FINITE,
              st.sampled_from(["10", True, None, ["1"], [True], b"1", np.array([True])]))
CONVERSION = _kind([st.sampled_from(["basic", "improved"])], ["tight", "", "Basic"],
                   st.sampled_from([None, 1, True, b"basic", ["basic"]]))
DISCRETIZATION = _kind([st.floats(1e-2, 1.0), st.sampled_from([1.0, 0.5, 1e-2])],
                       [0.0, -1e-4, 1.5, 1e300] + NON_FINITE)
EPSILON_MAX_CLASSICAL = _kind([st.floats(1.001, 1e3), st.sampled_from([1 + 1e-9, 100.0, 1e300])],
                              [1.0, 0.5, 0.0, -1.0] + NON_FINITE)
# composed_epsilon: the PLD costs grow with Δ/σ / discretization; extremes are cheap (rejected
# or trivial).
SIGMA_PLD = _kind([st.floats(0.3, 50.0), st.sampled_from([1e-300, 1e-160, 0.05, 1e155, 1e300, FLOAT_MAX])],
                  [0.0, -1.0] + NON_FINITE)
ROUNDS = _kind([st.integers(1, 200), st.sampled_from([1, 3.0, np.int64(10), 10**12, 2**70])],
               [0, -1, 2.5] + NON_FINITE, st.sampled_from(["5", True, None, [5]]))
SENS_PLD = _kind([st.floats(0.1, 3.0), st.sampled_from([1e-300, 1e300, 1.0])], [0.0, -1.0] + NON_FINITE)


def _below(bound_name: str, kind: Kind) -> Callable[[dict], Kind]:
    """A δ strictly below another (already drawn) parameter, e.g. δ < γ (the bound is at
    least 1e-300, see GAMMA, so that such a δ exists)."""
    def make(args: dict) -> Kind:
        bound = args.get(bound_name)
        if isinstance(bound, float | int) and not isinstance(bound, bool) and 1e-300 <= bound <= 1:
            valid = st.one_of(st.floats(1e-6, 1.0, exclude_max=True), st.sampled_from([0.5, 1e-3, 1e-100]))
            return Kind(valid.map(lambda f: f * bound).filter(lambda d: 0 < d < bound), kind.bad_range, kind.bad_type)
        return kind
    return make


# γ = E·b/n of DP-FedPAQ, in (0, 1]; the valid draws stay ≥ 1e-300 so that δ < γ exists
GAMMA = _kind([st.floats(1e-6, 1.0), _log_uniform(-300, 0), st.sampled_from([1.0, 0.5, 0.2, 1e-300])],
              [0.0, -0.1, 1.0000001, 2.0, 1e300] + NON_FINITE)


def _above_two_gamma(args: dict) -> Kind:
    gamma = args.get("gamma")
    if isinstance(gamma, float | int) and not isinstance(gamma, bool) and 0 < gamma <= 1:
        return Kind(st.floats(1.001, 30.0).map(lambda f: 2 * gamma * f) | st.just(1e300),
                    st.sampled_from([2 * gamma, gamma, 0.0, -1.0] + NON_FINITE), GARBAGE)
    return POS


def _batch(args: dict) -> Kind:
    n = args.get("n")
    if isinstance(n, int | np.integer | float) and not isinstance(n, bool) and float(n).is_integer() and 1 <= n <= 2**53:
        n = int(n)
        return _kind([st.integers(1, min(n, 10**6)), st.just(n)], [0, n + 1, 1.5] + NON_FINITE,
                     st.sampled_from(["5", True, None, [5]]))
    return _count(1, 2**53)


def _rdp_matching(args: dict) -> Kind:
    orders = args.get("orders")
    try:
        n = np.atleast_1d(np.asarray(orders, dtype=float)).size
    except (TypeError, ValueError):
        n = 3
    return _rdp_for(max(n, 1))


# ------------------------------------------------------------------------- output checks


def _real(x: Any) -> bool:
    return isinstance(x, float | int | np.floating | np.integer) and not isinstance(x, bool | np.bool_)


def _nonneg_or_inf(x: Any) -> bool:
    return _real(x) and not math.isnan(x) and x >= 0


def out_rdp(result, args):
    assert _nonneg_or_inf(result), result


def out_rdp_array(result, args):
    assert isinstance(result, np.ndarray) and result.dtype == float, result
    assert not np.any(np.isnan(result)) and np.all(result >= 0), result
    if "orders" in args:
        assert result.shape == np.atleast_1d(np.asarray(args["orders"], dtype=float)).shape


def out_compose(result, args):
    out_rdp_array(result, args)
    expected = np.shape(np.asarray(args["steps"], dtype=float)) + np.shape(np.asarray(args["rdp"], dtype=float))
    assert result.shape == expected


def out_eps_order(result, args):
    eps, order = result
    orders = set(np.atleast_1d(np.asarray(args["orders"], dtype=float)).tolist())
    eps_a, order_a = np.atleast_1d(eps), np.atleast_1d(order)
    assert eps_a.dtype == float and not np.any(np.isnan(eps_a)) and np.all(eps_a >= 0), eps
    assert set(order_a.tolist()) <= orders, (order, orders)


def out_eps(result, args):
    assert _nonneg_or_inf(result) and isinstance(result, float), result


def out_eps_ge_1(result, args):
    assert isinstance(result, float) and 1.0 <= result < math.inf, result


def out_delta(result, args):
    assert isinstance(result, float) and 0.0 <= result <= 1.0, result


def out_log_delta(result, args):
    assert isinstance(result, float) and not math.isnan(result) and result <= 0.0, result


def out_steps(result, args):
    assert isinstance(result, int) and not isinstance(result, bool) and result >= 1, result


def out_sigma(result, args):
    assert isinstance(result, float) and _nonneg_or_inf(result), result


def out_probability(result, args):
    assert isinstance(result, float) and 0.0 < result <= 1.0, result


def out_chain(result, args):
    assert len(result) == 4
    for step in result:
        assert _nonneg_or_inf(step.value) and isinstance(step.holds, bool), step


def out_conditions(result, args):
    assert _nonneg_or_inf(result["epsilon0"])
    assert isinstance(result["classical_valid"], bool) and isinstance(result["chain_valid"], bool)


def out_adp(result, args):
    eps, alpha = result
    assert _nonneg_or_inf(eps) and _real(alpha) and not math.isnan(alpha) and alpha >= 1, result


def out_same_real(result, args):
    """Validators: the value back as a float (int for check_int), unchanged."""
    value = args.get("value")
    assert _real(result) and not math.isnan(result) and result == float(value), (result, value)


def out_real_array(result, args):
    assert isinstance(result, np.ndarray) and result.dtype == float and not np.any(np.isnan(result))


def out_orders(result, args):
    out_real_array(result, args)
    cap = args.get("max_order", math.inf)
    assert result.ndim == 1 and result.size >= 1 and np.all((result > 1) & (result <= cap))


def out_conversion(result, args):
    assert result in conversion.CONVERSIONS


# ------------------------------------------------------------------------- the specifications


def _validator(value_kind: Kind, out=out_same_real, **fixed) -> Spec:
    return Spec({"value": value_kind}, out, fixed={"name": "the_parameter", **fixed},
                reported_as={"value": "the_parameter", "values": "the_parameter"}, examples=100)


REAL = _kind([st.floats(allow_nan=False), st.integers(-10**6, 10**6), st.sampled_from([math.inf, -math.inf, np.float64(2.5)])],
             [math.nan])
FINITE = _kind([st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**6, 10**6)], NON_FINITE)
INTERVAL = _kind([st.floats(-1.0, 2.0, exclude_min=True, exclude_max=True), st.just(0)],
                 [-1.5, 2.5, 1e300] + NON_FINITE)
INTEGER = _kind([st.integers(0, 10), st.just(np.int64(3))], [-1, 11, 2**70],  # strict: any float is
                st.sampled_from(["5", True, None, [5], b"5", 2.0, math.inf, math.nan]))  # a wrong type
REAL_ARRAY = _kind([st.lists(st.floats(allow_nan=False), max_size=4), st.floats(allow_nan=False),
                    st.lists(st.lists(st.floats(-1, 1), min_size=2, max_size=2), min_size=1, max_size=2)],
                   [[math.nan], [1.0, math.nan]], SEQ_GARBAGE)

P = dict  # parameter tables read as P(name=kind, ...)

SPECS: dict[str, Spec] = {
    # ----------------------------------------------------------------- rdp
    "rdp.rdp_integer_order": Spec(P(q=PROB, sigma=POS, alpha=INT_ORDER), out_rdp),
    "rdp.rdp_fractional_order": Spec(P(q=PROB, sigma=POS, alpha=ORDER_CAPPED), out_rdp, examples=60),
    "rdp.rdp_sampled_gaussian": Spec(P(q=PROB, sigma=POS, orders=ORDERS_CAPPED), out_rdp_array, examples=60),
    "rdp.compose": Spec(P(rdp=RDP_VEC, steps=STEPS), out_compose),
    # ----------------------------------------------------------------- conversion
    "conversion.epsilon_basic": Spec(P(orders=ORDERS, rdp=_rdp_matching, delta=DELTA), out_eps_order),
    "conversion.epsilon_improved": Spec(P(orders=ORDERS, rdp=_rdp_matching, delta=DELTA), out_eps_order),
    "conversion.epsilon_from_rdp": Spec(P(orders=ORDERS, rdp=_rdp_matching, delta=DELTA, conversion=CONVERSION),
                                        out_eps_order),
    "conversion.check_conversion": Spec(P(conversion=CONVERSION), out_conversion),
    # ----------------------------------------------------------------- budget
    "budget.epsilon_after_steps": Spec(P(steps=STEPS, q=PROB, sigma=POS, delta=DELTA, orders=ORDERS_CAPPED,
                                         conversion=CONVERSION), out_eps_order, examples=50),
    "budget.max_steps_bisection": Spec(
        P(target_epsilon=POS, q=PROB, sigma=POS, delta=DELTA, orders=ORDERS_CAPPED, conversion=CONVERSION,
          steps_max=_kind([st.floats(1.0, 1e6), st.sampled_from([1e-300, 0.5, 1e300])], [0.0, -1.0] + NON_FINITE),
          tolerance=_kind([st.floats(1e-4, 1.0), st.sampled_from([1e-300, 1e300])], [0.0, -1.0] + NON_FINITE)),
        out_steps, examples=50),
    "budget.max_steps_exact": Spec(P(target_epsilon=POS, q=PROB, sigma=POS, delta=DELTA, orders=ORDERS_CAPPED,
                                     conversion=CONVERSION), out_steps, examples=50),
    # ----------------------------------------------------------------- gaussian
    "gaussian.gaussian_rdp": Spec(P(alpha=ORDER, sensitivity=POS, sigma=POS), out_rdp),
    "gaussian.classical_gaussian_sigma": Spec(P(epsilon=POS, delta=DELTA, sensitivity=POS), out_sigma),
    "gaussian.analytic_gaussian_log_delta": Spec(P(epsilon=NONNEG, sensitivity=POS, sigma=POS), out_log_delta),
    "gaussian.analytic_gaussian_delta": Spec(P(epsilon=NONNEG, sensitivity=POS, sigma=POS), out_delta),
    "gaussian.analytic_gaussian_sigma": Spec(P(epsilon=POS, delta=DELTA, sensitivity=POS), out_sigma),
    "gaussian.analytic_gaussian_epsilon": Spec(P(delta=DELTA, sensitivity=POS, sigma=POS), out_eps),
    "gaussian.classical_calibration_failure_epsilon": Spec(P(delta=DELTA, epsilon_max=EPSILON_MAX_CLASSICAL),
                                                           out_eps_ge_1, examples=40),
    # ----------------------------------------------------------------- subsampled
    "subsampled.subsampled_gaussian_log_delta": Spec(P(epsilon=NONNEG, probability=PROB, sensitivity=POS, sigma=POS),
                                                     out_log_delta),
    "subsampled.subsampled_gaussian_delta": Spec(P(epsilon=NONNEG, probability=PROB, sensitivity=POS, sigma=POS),
                                                 out_delta),
    "subsampled.subsampled_gaussian_epsilon": Spec(P(delta=DELTA, probability=PROB, sensitivity=POS, sigma=POS), out_eps),
    "subsampled.composed_epsilon": Spec(P(delta=DELTA, probability=PROB, sensitivity=SENS_PLD, sigma=SIGMA_PLD,
                                          rounds=ROUNDS, discretization=DISCRETIZATION), out_eps, examples=30),
    # ----------------------------------------------------------------- amplification
    "amplification.inclusion_probability": Spec(P(E=_count(1, 2**53), n=_count(1, 2**53), b=_batch), out_probability),
    "amplification.amplified_epsilon": Spec(P(epsilon0=NONNEG, probability=PROB), out_eps),
    "amplification.amplification_chain": Spec(P(epsilon0=NONNEG, E=_count(1, 2**53), n=_count(1, 2**53), b=_batch),
                                              out_chain),
    "amplification.paper_noise_std": Spec(P(epsilon=POS, gamma=GAMMA, delta=_below("gamma", DELTA), sensitivity=POS),
                                          out_sigma),
    "amplification.paper_calibration_conditions": Spec(P(epsilon=POS, gamma=GAMMA), out_conditions),
    "amplification.exact_noise_std": Spec(P(epsilon=POS, gamma=GAMMA, delta=_below("gamma", DELTA), sensitivity=POS),
                                          out_sigma),
    "amplification.realized_epsilon": Spec(P(sigma=POS, gamma=GAMMA, delta=_below("gamma", DELTA), sensitivity=POS),
                                           out_eps),
    "amplification.paper_calibration_failure_epsilon": Spec(
        P(gamma=GAMMA, delta=_below("gamma", DELTA), sensitivity=POS, epsilon_max=_above_two_gamma),
        out_eps, examples=16),
    # ----------------------------------------------------------------- fedplt
    "privacy_bounds.proposition4_rdp_bound": Spec(P(alpha=ORDER, L=POS, lam=POS, tau=POS, q=POS, gamma=POS,
                                            K=_count(0, 2**63), Ne=_count(1, 2**63)), out_rdp),
    "privacy_bounds.proposition4_limit": Spec(P(alpha=ORDER, L=POS, lam=POS, tau=POS, q=POS), out_rdp),
    "privacy_bounds.lemma5_rdp_to_dp": Spec(P(rdp_epsilon=NONNEG, alpha=ORDER, delta=DELTA), out_eps),
    "privacy_bounds.proposition4_adp_epsilon": Spec(P(L=POS, lam=POS, tau=POS, q=POS, gamma=POS, K=_count(0, 2**63),
                                              Ne=_count(1, 2**63), delta=DELTA), out_adp),
    # ----------------------------------------------------------------- validators
    "validate.check_delta": _validator(DELTA),
    "validate.check_sampling_rate": _validator(PROB),
    "validate.check_order": _validator(ORDER_CAPPED, max_order=MAX_ORDER),
    "validate.check_integer_order": _validator(INT_ORDER, max_order=MAX_ORDER),
    "validate.check_orders": Spec({"values": ORDERS_CAPPED}, out_orders, fixed={"name": "the_parameter", "max_order": MAX_ORDER},
                                  reported_as={"values": "the_parameter"}, examples=100),
    "validate.real_array": Spec({"values": REAL_ARRAY}, out_real_array, fixed={"name": "the_parameter"},
                                reported_as={"values": "the_parameter"}, examples=100),
    "validate.as_real": _validator(REAL),
    "validate.check_finite": _validator(FINITE),
    "validate.check_positive": _validator(POS),
    "validate.check_nonnegative": _validator(NONNEG),
    "validate.check_interval": _validator(INTERVAL, low=-1.0, high=2.0, closed_low=False, closed_high=False),
    "validate.check_int": _validator(INTEGER, low=0, high=10, strict=True),
    "validate.check_bool": _validator(Kind(st.sampled_from([True, False, np.bool_(True)]), None,
                                           st.sampled_from([1, 0, 0.0, "yes", None, [True]])),
                                      lambda res, args: None if res is bool(args["value"]) else pytest.fail(str(res))),
    "validate.check_choice": _validator(_kind([st.sampled_from(["a", "b"])], ["", "c", "A"],
                                              st.sampled_from([None, 1, True, ["a"], b"a"])),
                                        lambda res, args: None if res == args["value"] else pytest.fail(str(res)),
                                        options=("a", "b")),
    "validate.check_callable": _validator(Kind(st.sampled_from([len, math.sqrt, np.zeros]), None,
                                               st.sampled_from([None, 1, "f", [len]])),
                                          lambda res, args: None if res is args["value"] else pytest.fail(str(res))),
    "validate.check_array": _validator(
        Kind(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=4).map(np.array),
             st.sampled_from([np.zeros(0), np.array([np.nan]), np.array([1.0, np.inf]), np.zeros((1, 2))]),
             st.sampled_from([None, "a", True, np.array(["a"]), np.array([True]), [None]])),
        lambda res, args: None if isinstance(res, np.ndarray) and res.dtype == float and np.all(np.isfinite(res))
        else pytest.fail(str(res)), ndim=1),
}


def test_every_public_function_has_a_contract():
    """A public function added to these modules without a specification here fails."""
    assert set(_public_functions()) == set(SPECS)


@pytest.mark.parametrize("qualname", sorted(SPECS))
def test_public_api_contract(qualname):
    """Random, extreme and malformed inputs: either the output is in its documented range,
    or a ValueError/TypeError names the offending parameter (TypeError for a wrong type,
    ValueError for an out-of-range number; with all inputs valid only a documented
    ValueError naming a parameter, e.g. an exhausted budget, may be raised)."""
    check_contract(_public_functions()[qualname], SPECS[qualname])
