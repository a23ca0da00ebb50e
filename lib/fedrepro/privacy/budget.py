"""How many steps of the Poisson-sampled Gaussian mechanism a privacy budget allows.

ALI-DPFL (§VI) quotes the iteration counts R_c that budgets ε ∈ {1.55, …, 3.75} allow at
q = 0.015, σ = 1.1. Two answers are computed:

* :func:`max_steps_bisection` — the search of the authors' public code: bisection on a
  *real* step count in [0, 100000] that stops once ε(high) − target ≤ 0.01 and returns
  ``int(high)``. It may exceed the budget by up to the tolerance;
* :func:`max_steps_exact` — the largest integer T with ε(T) ≤ target.

ε(T) = min_α [T·R(α) + c(α)] is non-decreasing in T for both conversions (a minimum of
non-decreasing functions), which is what makes both searches correct.

Both return an integer ≥ 1, or raise :class:`ValueError` naming ``target_epsilon`` when the
budget allows no step or is not exhausted within the search range.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from fedrepro.privacy.conversion import Conversion, check_conversion, epsilon_from_rdp
from fedrepro.privacy.rdp import ALIDPFL_PAPER_ORDERS, compose, rdp_sampled_gaussian
from fedrepro.privacy.validate import MAX_ORDER, check_delta, check_orders, check_positive

__all__ = ["epsilon_after_steps", "max_steps_bisection", "max_steps_exact"]

_EXACT_STEPS_CAP = 10**12


def epsilon_after_steps(
    steps: float | np.ndarray,
    q: float,
    sigma: float,
    delta: float,
    orders: Iterable[float] = ALIDPFL_PAPER_ORDERS,
    conversion: Conversion = "basic",
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """(ε, optimal order) after ``steps`` compositions (ALI-DPFL Theorem 3 for "basic").

    ``steps`` may be real or an array of step counts (then arrays are returned). ε ∈ [0, inf].
    """
    delta = check_delta(delta)
    check_conversion(conversion)
    orders = check_orders(orders, max_order=MAX_ORDER)
    rdp = rdp_sampled_gaussian(q, sigma, orders)
    return epsilon_from_rdp(compose(rdp, steps), orders, delta, conversion)


def _check_target(target_epsilon: float) -> float:
    return check_positive("target_epsilon", target_epsilon)


def max_steps_bisection(
    target_epsilon: float,
    q: float,
    sigma: float,
    delta: float,
    orders: Iterable[float] = ALIDPFL_PAPER_ORDERS,
    conversion: Conversion = "basic",
    steps_max: float = 100_000,
    tolerance: float = 0.01,
) -> int:
    """Step count of the ALI-DPFL code's bisection (tolerance 0.01 in ε, real steps).

    Keeps an interval [low, high] of real step counts with ε(high) > target, halves it
    until ε(high) − target ≤ ``tolerance`` and returns ``int(high)``.

    Raises ValueError when the budget exceeds what ``steps_max`` steps spend (the search
    interval is too short) or when the result is 0 steps (the budget allows no step).
    """
    target_epsilon = _check_target(target_epsilon)
    delta = check_delta(delta)
    steps_max = check_positive("steps_max", steps_max)
    tolerance = check_positive("tolerance", tolerance)
    check_conversion(conversion)
    orders = check_orders(orders, max_order=MAX_ORDER)
    rdp = rdp_sampled_gaussian(q, sigma, orders)

    def eps(steps: float) -> float:
        return float(epsilon_from_rdp(compose(rdp, steps), orders, delta, conversion)[0])

    low, high = 0.0, float(steps_max)
    eps_high = eps(high)
    if eps_high < target_epsilon:
        raise ValueError(
            f"target_epsilon={target_epsilon} exceeds ε after steps_max={steps_max} steps "
            f"({eps_high:.4g}); raise steps_max"
        )
    eps_one = eps(1.0)
    if eps_one - target_epsilon > tolerance:
        # ε(T) ≥ ε(0⁺) = min_α c(α) may exceed the budget for every T > 0; the search would
        # then shrink ``high`` towards 0 for ever.
        raise ValueError(
            f"target_epsilon={target_epsilon} allows no step: one step already spends "
            f"ε = {eps_one:.4g}"
        )
    while eps_high - target_epsilon > tolerance:
        mid = (low + high) / 2
        if not low < mid < high:  # adjacent floats: the interval cannot shrink further
            break
        eps_mid = eps(mid)
        if eps_mid > target_epsilon:
            high, eps_high = mid, eps_mid
        else:
            low = mid
    result = int(high)
    if result == 0:
        raise ValueError(
            f"target_epsilon={target_epsilon} allows no step (ε of one step exceeds it)"
        )
    return result


def _affine_guess(target: float, rdp: np.ndarray, orders: np.ndarray, delta: float,
                  conversion: Conversion) -> int | None:
    """max_α floor((target − c(α)) / R(α)), with c(α) the conversion's constant term
    (basic: log(1/δ)/(α − 1); improved: log(1 − 1/α) − (log δ + log α)/(α − 1))."""
    a = np.asarray(orders, dtype=float)
    if conversion == "basic":
        inv = 1 / delta  # −log δ where 1/δ overflows (subnormal δ)
        offsets = (np.log(inv) if np.isfinite(inv) else -np.log(delta)) / (a - 1)
    else:
        offsets = np.log1p(-1 / a) - (np.log(delta) + np.log(a)) / (a - 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        steps = np.floor((target - offsets) / rdp)
    steps = steps[np.isfinite(steps)]
    return int(steps.max()) if steps.size else None


def max_steps_exact(
    target_epsilon: float,
    q: float,
    sigma: float,
    delta: float,
    orders: Iterable[float] = ALIDPFL_PAPER_ORDERS,
    conversion: Conversion = "basic",
) -> int:
    """Largest integer T ≥ 1 with ε(T) ≤ ``target_epsilon`` (never exceeds the budget).

    Raises ValueError when even one step spends more than the budget, or when the budget
    is never exhausted (ε(T) ≤ target up to T = 10^12).
    """
    target_epsilon = _check_target(target_epsilon)
    delta = check_delta(delta)
    check_conversion(conversion)
    orders = check_orders(orders, max_order=MAX_ORDER)
    rdp = rdp_sampled_gaussian(q, sigma, orders)

    def eps(steps: int) -> float:
        return float(epsilon_from_rdp(compose(rdp, float(steps)), orders, delta, conversion)[0])

    if eps(1) > target_epsilon:
        raise ValueError(
            f"target_epsilon={target_epsilon} allows no step: one step already spends "
            f"ε = {eps(1):.4g}"
        )
    # Closed form: per order ε_α(T) = T·R(α) + c(α) is affine in T, so the largest T is
    # max_α floor((target − c(α)) / R(α)); confirmed below at T and T + 1 (rounding, and the
    # improved conversion's clipping at 0), falling back to the search if it is not.
    guess = _affine_guess(target_epsilon, rdp, orders, delta, conversion)
    if guess is not None and 1 <= guess < _EXACT_STEPS_CAP:
        if eps(guess) <= target_epsilon < eps(guess + 1):
            return guess
    low, high = 1, 2  # invariant: eps(low) <= target < eps(high)
    while eps(high) <= target_epsilon:
        low, high = high, high * 2
        if high > _EXACT_STEPS_CAP:
            raise ValueError(
                f"target_epsilon={target_epsilon} is not exhausted within {_EXACT_STEPS_CAP} steps"
            )
    while high - low > 1:
        mid = (low + high) // 2
        if eps(mid) <= target_epsilon:
            low = mid
        else:
            high = mid
    return low
