"""Rényi DP of the Poisson-sampled Gaussian mechanism, and composition.

The sampled Gaussian mechanism adds N(0, σ²) noise (σ in units of the L2 sensitivity) to a
sum over a Poisson sample that contains each record with probability q (DP-SGD's step,
ALI-DPFL Algorithm 2). Its RDP at order α is log(A_α)/(α − 1) (ALI-DPFL Definition 3,
Mironov, Talwar & Zhang 2019):

* integer α (ALI-DPFL eq. 17): A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²));
* fractional α (Mironov, Talwar & Zhang 2019, §3.3): A_α is the sum of two convergent series
  obtained by splitting the integral at z₀ = σ² log(1/q − 1) + 1/2.

Both are evaluated in log space (``logsumexp``), so they stay finite for large orders (512)
and small σ. RDP composes additively over steps (ALI-DPFL Definition 4, Lemma 2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy.special import gammaln, log_ndtr, logsumexp

from fedrepro.privacy.validate import (
    check_nonnegative,
    check_order,
    check_orders,
    check_positive,
    check_sampling_rate,
)

__all__ = [
    "ALIDPFL_CODE_ORDERS",
    "ALIDPFL_PAPER_ORDERS",
    "compose",
    "rdp_fractional_order",
    "rdp_integer_order",
    "rdp_sampled_gaussian",
]

#: Orders of the ALI-DPFL paper (§V: "we select α from {2, 3, ..., 64}").
ALIDPFL_PAPER_ORDERS: tuple[int, ...] = tuple(range(2, 65))
#: Orders of the authors' public code: 2..63 and 128, 256, 512.
ALIDPFL_CODE_ORDERS: tuple[int, ...] = tuple(range(2, 64)) + (128, 256, 512)

_FRACTIONAL_REL_TOL = 40.0  # stop the series once a term is below e^-40 times the sum
_FRACTIONAL_MAX_TERMS = 1 << 24


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x − 1) for x > 0, accurate for small and for large x."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.minimum(x, 30.0)))
    return np.where(x > 30.0, x + np.log1p(-np.exp(-np.maximum(x, 30.0))), small)


def rdp_integer_order(q: float, sigma: float, alpha: int) -> float:
    """RDP of the Poisson-sampled Gaussian mechanism at an integer order α ≥ 2 (ALI-DPFL eq. 17).

    Uses A_α − 1 = Σ_{k=2}^{α} C(α,k)(1−q)^{α−k} q^k (exp((k²−k)/(2σ²)) − 1) — the binomial
    weights sum to one and the k = 0, 1 terms vanish — so every summand is positive and
    log A_α = log1p(exp(logsumexp(...))) keeps full relative accuracy even when the RDP is
    tiny (small q, large σ), and never overflows (large α, small σ).
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    if isinstance(alpha, bool) or not float(alpha).is_integer() or alpha < 2:
        raise ValueError(f"alpha must be an integer order >= 2, got {alpha!r}")
    alpha = int(alpha)
    k = np.arange(2, alpha + 1, dtype=float)
    log_gain = _log_expm1((k * k - k) / (2 * sigma**2))
    if q == 1.0:
        log_excess = float(log_gain[-1])  # only k = α survives
    else:
        log_binom = gammaln(alpha + 1.0) - gammaln(k + 1.0) - gammaln(alpha - k + 1.0)
        log_terms = log_binom + (alpha - k) * math.log1p(-q) + k * math.log(q) + log_gain
        log_excess = float(logsumexp(log_terms))
    log_a = log_excess + math.log1p(math.exp(-log_excess)) if log_excess > 0 else math.log1p(
        math.exp(log_excess)
    )
    return log_a / (alpha - 1)


def _rdp_integer_orders(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """:func:`rdp_integer_order` at many integer orders at once: one (orders × k) array of
    log-terms of eq. (17), masked above each order, and one ``logsumexp`` along k."""
    alphas = np.asarray(alphas, dtype=float)
    a = alphas[:, None]
    k = np.arange(2, int(alphas.max()) + 1, dtype=float)[None, :]
    valid = k <= a
    log_gain = _log_expm1((k * k - k) / (2 * sigma**2))
    if q == 1.0:
        log_excess = log_gain[0, alphas.astype(int) - 2]  # only k = α survives
    else:
        log_binom = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(np.where(valid, a - k, 0.0) + 1.0)
        log_terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + log_gain
        log_excess = logsumexp(np.where(valid, log_terms, -np.inf), axis=1)
    return np.logaddexp(0.0, log_excess) / (alphas - 1)  # log A_α = log(1 + (A_α − 1))


def _log_a_fractional(q: float, sigma: float, alpha: float) -> float:
    """log A_α from the two series of Mironov, Talwar & Zhang (2019, §3.3), any real α > 1."""
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    floor_alpha = math.floor(alpha)
    n_terms = max(256, 4 * int(math.ceil(alpha)))
    while True:
        i = np.arange(n_terms, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_binom = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(alpha - i + 1)
        # gammaln returns log|Γ|: at α − i + 1 a non-positive integer Γ has a pole, C(α, i) = 0.
        log_binom = np.where(np.isfinite(log_binom), log_binom, -np.inf)
        sign = np.where(np.maximum(0, i - floor_alpha - 1) % 2 == 0, 1.0, -1.0)
        j = alpha - i
        first = (
            log_binom + j * log_1mq + i * log_q + (i * i - i) / (2 * sigma**2)
            + log_ndtr((z0 - i) / sigma)
        )
        second = (
            log_binom + i * log_1mq + j * log_q + (j * j - j) / (2 * sigma**2)
            + log_ndtr((j - z0) / sigma)
        )
        terms = np.concatenate([first, second])
        signs = np.concatenate([sign, sign])
        log_sum, sum_sign = logsumexp(terms, b=signs, return_sign=True)
        tail = max(float(np.max(first[-16:])), float(np.max(second[-16:])))
        if sum_sign > 0 and tail < log_sum - _FRACTIONAL_REL_TOL:
            return float(log_sum)
        if n_terms >= _FRACTIONAL_MAX_TERMS:
            raise ArithmeticError(
                f"fractional-order RDP series did not converge within {n_terms} terms "
                f"(q={q}, sigma={sigma}, alpha={alpha})"
            )
        n_terms *= 4


def rdp_fractional_order(q: float, sigma: float, alpha: float) -> float:
    """RDP of the Poisson-sampled Gaussian mechanism at any real order α > 1.

    Mironov, Talwar & Zhang (2019, §3.3): A_α = Σ_i C(α,i) [(1−q)^{α−i} q^i
    e^{(i²−i)/(2σ²)} Φ((z₀−i)/σ) + (1−q)^i q^{α−i} e^{((α−i)²−(α−i))/(2σ²)} Φ((α−i−z₀)/σ)],
    a series with generalised (eventually alternating) binomial coefficients, summed in
    log space with signs until the terms fall below e^-40 of the sum. For q = 1 the
    mechanism is the Gaussian mechanism, RDP α/(2σ²).
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    alpha = check_order(alpha)
    if q == 1.0:
        return alpha / (2 * sigma**2)
    return _log_a_fractional(q, sigma, alpha) / (alpha - 1)


def rdp_sampled_gaussian(q: float, sigma: float, orders: float | Iterable[float]) -> np.ndarray:
    """Per-step RDP of the Poisson-sampled Gaussian mechanism at each order (array).

    Integer orders use eq. (17) as :func:`rdp_integer_order`, all at once (one masked
    array), other orders :func:`rdp_fractional_order`. ``sigma`` is the noise multiplier (noise std divided by the
    L2 sensitivity); ``q`` ∈ (0, 1] the Poisson sampling rate.
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    orders_arr = np.asarray(check_orders(orders), dtype=float)
    integer = orders_arr == np.floor(orders_arr)
    out = np.empty(orders_arr.shape, dtype=float)
    if integer.any():
        out[integer] = _rdp_integer_orders(q, sigma, orders_arr[integer])
    for idx in np.flatnonzero(~integer):
        out[idx] = rdp_fractional_order(q, sigma, float(orders_arr[idx]))
    return out


def compose(rdp: np.ndarray | Iterable[float], steps: float | np.ndarray) -> np.ndarray:
    """RDP of ``steps`` adaptive compositions: steps × per-step RDP (ALI-DPFL Def. 4, Lemma 2).

    ``steps`` may be real (the authors' bisection evaluates real step counts) or an array,
    giving an array of shape ``steps.shape + rdp.shape``.
    """
    rdp_arr = np.asarray(rdp, dtype=float)
    if np.any(rdp_arr < 0) or np.any(np.isnan(rdp_arr)):
        raise ValueError("rdp must be non-negative at every order")
    steps_arr = np.asarray(steps, dtype=float)
    if steps_arr.ndim == 0:
        check_nonnegative("steps", float(steps_arr))
    elif np.any(steps_arr < 0) or not np.all(np.isfinite(steps_arr)):
        raise ValueError("steps must be in [0, inf)")
    return steps_arr[..., None] * rdp_arr if steps_arr.ndim else float(steps_arr) * rdp_arr
