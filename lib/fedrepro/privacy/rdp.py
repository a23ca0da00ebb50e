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

Range: every function returns RDP in [0, inf]; +inf where the true value exceeds the float
range (σ so small that α/(2σ²) overflows), 0 where it underflows (σ so large that the value
is below the smallest float). Orders are limited to :data:`MAX_ORDER` (10 000): the cost and
memory of eq. (17) grow linearly with the order, so larger orders are rejected
(:class:`ValueError`), not allocated.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np
from scipy.integrate import IntegrationWarning, quad
from scipy.special import gammaln, log_ndtr, logsumexp

from fedrepro.privacy._numerics import log1p_times_expm1, square
from fedrepro.privacy.validate import (
    MAX_ORDER,
    check_integer_order,
    check_nonnegative,
    check_order,
    check_orders,
    check_positive,
    check_sampling_rate,
    real_array,
)

__all__ = [
    "ALIDPFL_CODE_ORDERS",
    "ALIDPFL_PAPER_ORDERS",
    "MAX_ORDER",
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
_FRACTIONAL_MAX_TERMS = 1 << 18  # beyond, the quadrature of _log_a_fractional_quad is used
# The series' sum of n signed terms is trusted while its estimated relative error in log A_α,
# sqrt(n) · 2^-52 · (Σ|terms| / |Σ terms|) / log A_α, is below this (else: the quadrature).
_FRACTIONAL_MAX_REL_ERROR = 1e-9


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

    ``alpha``: an integer in [2, :data:`MAX_ORDER`] (an integral float such as 4.0 is
    accepted). Returns a value in [0, inf] (inf where it exceeds the float range).
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    alpha = check_integer_order(alpha, "alpha", MAX_ORDER)
    k = np.arange(2, alpha + 1, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_gain = _log_expm1((k * k - k) / (2 * square(sigma)))
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
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_gain = _log_expm1((k * k - k) / (2 * square(sigma)))
        if q == 1.0:
            log_excess = log_gain[0, alphas.astype(int) - 2]  # only k = α survives
        else:
            log_binom = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(np.where(valid, a - k, 0.0) + 1.0)
            log_terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + log_gain
            log_excess = logsumexp(np.where(valid, log_terms, -np.inf), axis=1)
        return np.logaddexp(0.0, log_excess) / (alphas - 1)  # log A_α = log(1 + (A_α − 1))


def _excess_moment(u: float, log1p_u: float, alpha: float) -> tuple[float, float]:
    """h(u) = (1 + u)^α − 1 − αu ≥ 0 (u > −1, α > 1) as (scale, log-factor): h = scale·e^{log}.

    ``log1p_u`` is log(1 + u) (``u`` may be inf where only it is finite). Without
    cancellation: a series Σ_{k≥2} C(α,k) u^k when α|u| ≤ 1/4 (ratios of successive terms
    ≤ 1/4); (1 + u)·expm1((α−1)·log1p(u)) − (α−1)u for moderate (1 + u)^α; in log space,
    (1 + u)^α (1 − (1 + αu)/(1 + u)^α), where (1 + u)^α would overflow.
    """
    if abs(alpha * u) <= 0.25:
        term = alpha * (alpha - 1) / 2 * u * u
        total, k = term, 2
        while k < 200:
            term *= (alpha - k) / (k + 1) * u
            k += 1
            total += term
            if abs(term) <= 1e-17 * abs(total):
                break
        return total, 0.0
    if alpha * log1p_u <= 700.0:
        beta = alpha - 1
        return (1 + u) * math.expm1(beta * log1p_u) - beta * u, 0.0
    log_pow = alpha * log1p_u  # u > 0 here, so 1 + αu < (1 + u)^α (Bernoulli)
    log_lin = math.log1p(alpha * u) if math.isfinite(alpha * u) else math.log(alpha) + log1p_u
    return -math.expm1(log_lin - log_pow), log_pow


def _log_a_fractional_quad(q: float, sigma: float, alpha: float) -> float:
    """log A_α by quadrature of the non-negative integrand of A_α − 1 (any real α > 1).

    With z ~ N(0, σ²) and u(z) = q·(e^{(2z−1)/(2σ²)} − 1) (the likelihood ratio minus one,
    E[u] = 0), A_α = E[(1 + u)^α] = 1 + E[(1 + u)^α − 1 − αu] (Mironov, Talwar & Zhang 2019,
    §3.1). The integrand is ≥ 0 (convexity), so no digits are lost to cancellation when
    A_α − 1 is tiny (large σ), where the signed series of :func:`_log_a_fractional` is not
    accurate. Integrated over t = z/σ against the standard normal density (QUADPACK), split
    at 0 and at the peak t ≈ α/σ of the (1 + u)^α growth.
    """
    half_inv_var = 0.5 / square(sigma)
    log_norm = -0.5 * math.log(2 * math.pi)

    def integrand(t: float) -> float:
        x = t / sigma - half_inv_var
        if x < 700.0:
            u = q * math.expm1(x)
            log1p_u = math.log1p(u)
        else:
            log1p_u = log1p_times_expm1(q, x)
            u = math.expm1(log1p_u) if log1p_u < 700.0 else math.inf
        scale, log_factor = _excess_moment(u, log1p_u, alpha)
        if scale <= 0.0:
            return 0.0
        log_value = log_norm - 0.5 * t * t + log_factor + math.log(scale)
        return math.exp(log_value) if log_value < 709.0 else math.inf

    peak = min(alpha / sigma, 1e3)
    cuts = [-math.inf, 0.0] + ([peak] if peak > 1.0 else []) + [math.inf]
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            total += quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)[0]
    return math.log1p(total) if math.isfinite(total) else math.inf


def _log_a_fractional(q: float, sigma: float, alpha: float) -> float:
    """log A_α from the two series of Mironov, Talwar & Zhang (2019, §3.3), any real α > 1.

    Two regimes are handled without the series: tiny σ, where
    α log q + G ≤ log A_α ≤ log(1 + e^G), G = (α² − α)/(2σ²), pins log A_α to double
    precision (the bounds follow from (qL)^α ≤ (1 − q + qL)^α ≤ 1 + L^α and E[L^α] = e^G for
    the likelihood ratio L); and series whose signed terms cancel to below their rounding
    error, or that do not converge within 2^18 terms (large σ): the quadrature of
    :func:`_log_a_fractional_quad`.
    """
    var = square(sigma)
    gain = (alpha * alpha - alpha) / (2 * var) if var > 0 else math.inf
    if gain >= 1e16 * (1.0 - alpha * math.log(q)):
        return gain + math.log1p(math.exp(-gain))  # the upper bound; = gain in floating point
    if not math.isfinite(var):
        return _log_a_fractional_quad(q, sigma, alpha)
    z0 = var * math.log(1 / q - 1) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    floor_alpha = math.floor(alpha)
    n_terms = max(256, 4 * int(math.ceil(alpha)))
    while True:
        i = np.arange(n_terms, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_binom = gammaln(alpha + 1) - gammaln(i + 1) - gammaln(alpha - i + 1)
            # gammaln returns log|Γ|: at α − i + 1 a non-positive integer Γ has a pole, C(α, i) = 0.
            log_binom = np.where(np.isfinite(log_binom), log_binom, -np.inf)
            sign = np.where(np.maximum(0, i - floor_alpha - 1) % 2 == 0, 1.0, -1.0)
            j = alpha - i
            first = (
                log_binom + j * log_1mq + i * log_q + (i * i - i) / (2 * var)
                + log_ndtr((z0 - i) / sigma)
            )
            second = (
                log_binom + i * log_1mq + j * log_q + (j * j - j) / (2 * var)
                + log_ndtr((j - z0) / sigma)
            )
            terms = np.concatenate([first, second])
            signs = np.concatenate([sign, sign])
            log_sum, sum_sign = logsumexp(terms, b=signs, return_sign=True)
        tail = max(float(np.max(first[-16:])), float(np.max(second[-16:])))
        if sum_sign > 0 and tail < log_sum - _FRACTIONAL_REL_TOL:
            log_abs = float(logsumexp(terms))
            error = math.sqrt(terms.size) * 2.0**-52 * math.exp(min(log_abs - log_sum, 700.0))
            if log_sum > 0 and error < _FRACTIONAL_MAX_REL_ERROR * log_sum:
                return float(log_sum)
            return _log_a_fractional_quad(q, sigma, alpha)
        if n_terms >= _FRACTIONAL_MAX_TERMS or not np.all(np.isfinite(terms) | (terms == -np.inf)):
            return _log_a_fractional_quad(q, sigma, alpha)
        n_terms *= 4


def rdp_fractional_order(q: float, sigma: float, alpha: float) -> float:
    """RDP of the Poisson-sampled Gaussian mechanism at any real order α ∈ (1, MAX_ORDER].

    Mironov, Talwar & Zhang (2019, §3.3): A_α = Σ_i C(α,i) [(1−q)^{α−i} q^i
    e^{(i²−i)/(2σ²)} Φ((z₀−i)/σ) + (1−q)^i q^{α−i} e^{((α−i)²−(α−i))/(2σ²)} Φ((α−i−z₀)/σ)],
    a series with generalised (eventually alternating) binomial coefficients, summed in
    log space with signs until the terms fall below e^-40 of the sum. Where that sum is not
    accurate (large σ: the terms cancel to a tiny A_α − 1) a quadrature of a non-negative
    integrand is used instead, and for tiny σ the closed-form bounds described in
    :func:`_log_a_fractional`. For q = 1 the mechanism is the Gaussian mechanism, RDP
    α/(2σ²) (Mironov 2017, Prop. 7). Returns a value in [0, inf].
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    alpha = check_order(alpha, max_order=MAX_ORDER)
    if q == 1.0:
        two_var = 2 * square(sigma)
        return alpha / two_var if two_var > 0 else math.inf
    return _log_a_fractional(q, sigma, alpha) / (alpha - 1)


def rdp_sampled_gaussian(q: float, sigma: float, orders: float | Iterable[float]) -> np.ndarray:
    """Per-step RDP of the Poisson-sampled Gaussian mechanism at each order (array).

    Integer orders use eq. (17) as :func:`rdp_integer_order`, all at once (one masked
    array), other orders :func:`rdp_fractional_order`. ``sigma`` is the noise multiplier (noise std divided by the
    L2 sensitivity); ``q`` ∈ (0, 1] the Poisson sampling rate; ``orders`` real numbers in
    (1, :data:`MAX_ORDER`]. Values in [0, inf].
    """
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    orders_arr = np.asarray(check_orders(orders, max_order=MAX_ORDER), dtype=float)
    integer = orders_arr == np.floor(orders_arr)
    out = np.empty(orders_arr.shape, dtype=float)
    if integer.any():
        out[integer] = _rdp_integer_orders(q, sigma, orders_arr[integer])
    for idx in np.flatnonzero(~integer):
        out[idx] = rdp_fractional_order(q, sigma, float(orders_arr[idx]))
    return out


def compose(rdp: np.ndarray | Iterable[float], steps: float | np.ndarray) -> np.ndarray:
    """RDP of ``steps`` adaptive compositions: steps × per-step RDP (ALI-DPFL Def. 4, Lemma 2).

    ``rdp``: values in [0, inf]; ``steps``: a real number in [0, inf) (the authors' bisection
    evaluates real step counts) or an array of them, giving an array of shape
    ``steps.shape + rdp.shape``. Zero steps compose to RDP 0, even where ``rdp`` is inf.
    """
    rdp_arr = real_array("rdp", rdp)
    if np.any(rdp_arr < 0):
        raise ValueError(f"rdp must be non-negative (in [0, inf]) at every order, got {rdp!r}")
    if np.ndim(steps) == 0 and not isinstance(steps, np.ndarray):
        steps_arr = np.asarray(check_nonnegative("steps", steps))
    else:
        steps_arr = real_array("steps", steps)
        if np.any(steps_arr < 0) or not np.all(np.isfinite(steps_arr)):
            raise ValueError(f"steps must be in [0, inf), got {steps!r}")
    with np.errstate(invalid="ignore", over="ignore"):
        out = steps_arr[..., None] * rdp_arr if steps_arr.ndim else float(steps_arr) * rdp_arr
    return np.where(np.isnan(out), 0.0, out)  # 0 steps × inf = 0 (no composition)
