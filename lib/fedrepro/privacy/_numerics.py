"""Floating-point helpers of the privacy accountants: exact limits instead of exceptions.

Python's ``x ** 2``, ``math.exp`` and ``math.expm1`` raise :class:`OverflowError` where the
true value exceeds the float range, and a division by an underflowed 0 raises
:class:`ZeroDivisionError`. These helpers return the exact limits instead (``inf``, ``0``),
or work in log space, and return *exactly* what the plain expression returns whenever that
expression succeeds, so that results for ordinary inputs are bit-for-bit unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy.optimize import brentq

#: Just below the largest x with math.exp(x) finite (log of the largest float, 709.7827).
_LOG_MAX = 709.78


def square(x: float) -> float:
    """``x ** 2``, or ``inf`` where it overflows."""
    try:
        return x**2
    except OverflowError:
        return math.inf


def exp(x: float) -> float:
    """``math.exp(x)``, or ``inf`` where it overflows."""
    return math.exp(x) if x < _LOG_MAX else math.inf


def log_inv(x: float) -> float:
    """``log(1/x)`` for x > 0: ``math.log(1 / x)``, or ``−log x`` where ``1/x`` overflows."""
    inv = 1 / x
    return math.log(inv) if math.isfinite(inv) else -math.log(x)


def log_expm1(x: float) -> float:
    """log(e^x − 1) for x ≥ 0 (−inf at 0), without overflow for large x."""
    if x > 30.0:
        return x + math.log1p(-math.exp(-x))
    return math.log(math.expm1(x)) if x > 0 else -math.inf


def log1p_expm1_over(x: float, p: float) -> float:
    """log(1 + (e^x − 1)/p) for x ≥ 0, p ∈ (0, 1]: ``log1p(expm1(x)/p)`` where that is
    finite, else in log space (large x)."""
    if x < _LOG_MAX:
        v = math.expm1(x) / p
        if math.isfinite(v):
            return math.log1p(v)
    t = log_expm1(x) - math.log(p)
    return t + math.log1p(math.exp(-t))


def log1p_times_expm1(p: float, x: float) -> float:
    """log(1 + p(e^x − 1)) for x ≥ 0 (inf allowed), p > 0: ``log1p(p*expm1(x))`` where
    ``expm1(x)`` is finite, else x + log p + log1p((1 − p)e^{−x}/p) (large x)."""
    if x < _LOG_MAX:
        return math.log1p(p * math.expm1(x))
    a = math.log(p) + x
    return a + math.log1p((1 - p) * math.exp(-a))


def log_diff(log_a: float, log_b: float) -> float:
    """log(e^a − e^b); −inf when b ≥ a (or a = −inf)."""
    if log_a == -math.inf:
        return -math.inf
    d = log_b - log_a
    if d >= 0:
        return -math.inf
    return log_a + (math.log(-math.expm1(d)) if d > -math.log(2) else math.log1p(-math.exp(d)))


_BIG = 1e300


def brentq_clipped(f: Callable[[float], float], a: float, b: float, **kwargs) -> float:
    """Brent's method on ``f`` clipped to [−1e300, 1e300].

    Brent's method needs only a sign change; clipping keeps its interpolation steps finite
    where ``f`` is ±inf (an underflowed log δ, an unbounded ε) at or near an end point.
    """
    def g(x: float) -> float:
        v = f(x)
        return v if -_BIG <= v <= _BIG else math.copysign(_BIG, v)

    # Near a jump to ±1e300 the interpolation steps are short, and Brent falls back to
    # bisection only gradually: allow more than scipy's default 100 iterations (a run that
    # converges within 100 takes the same steps either way).
    kwargs.setdefault("maxiter", 2000)
    return float(brentq(g, a, b, **kwargs))
