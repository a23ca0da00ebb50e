"""The Gaussian mechanism: classical calibration, analytic (exact) calibration, RDP.

* Classical calibration (Dwork & Roth 2014, Thm A.1; DP-FedPAQ eq. 13):
  σ = Δ·sqrt(2 ln(1.25/δ))/ε, proven only for ε < 1.
* Analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8): the Gaussian mechanism with
  L2 sensitivity Δ and noise σ is (ε, δ)-DP iff
  δ ≥ Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ); this is the exact privacy profile, used
  here as the reference against which the classical calibration is checked.
* Rényi DP (Mironov 2017, Prop. 7): the Gaussian mechanism is (α, αΔ²/(2σ²))-RDP.

Range: δ ∈ [0, 1] (0 where it underflows), log δ ∈ [−inf, 0], ε ∈ [0, inf] (inf where the
smallest valid ε exceeds the float range), RDP ∈ [0, inf], calibrated σ ∈ [0, inf] (0 or inf
only where the exact value underflows or overflows the float range).
"""

from __future__ import annotations

import math
import sys

from scipy.special import log_ndtr

from fedrepro.privacy._numerics import brentq_clipped, exp, square
from fedrepro.privacy.validate import check_delta, check_nonnegative, check_order, check_positive

__all__ = [
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "analytic_gaussian_log_delta",
    "analytic_gaussian_sigma",
    "classical_calibration_failure_epsilon",
    "classical_gaussian_sigma",
    "gaussian_rdp",
]

_FLOAT_MAX = sys.float_info.max


def gaussian_rdp(alpha: float, sensitivity: float, sigma: float) -> float:
    """RDP of the Gaussian mechanism at order α: αΔ²/(2σ²) (Mironov 2017, Prop. 7)."""
    alpha = check_order(alpha, "alpha")
    sensitivity = check_positive("sensitivity", sensitivity)
    sigma = check_positive("sigma", sigma)
    num, den = alpha * square(sensitivity), 2 * square(sigma)
    if 0 < num < math.inf and 0 < den < math.inf:
        return num / den
    # Δ² or σ² outside the float range: α/2 · (Δ/σ)² in log space (0 or inf at the limits).
    return exp(math.log(alpha / 2) + 2 * (math.log(sensitivity) - math.log(sigma)))


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classical calibration σ = Δ·sqrt(2 ln(1.25/δ))/ε (DP-FedPAQ eq. 13).

    Returned for any ε > 0 so that it can be compared with the exact calibration; the
    (ε, δ)-DP guarantee is proven only for ε < 1 (Dwork & Roth 2014, Thm A.1), and the
    paper's "δ ∈ (0, 1]" is accepted here as δ ∈ (0, 1).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    ratio = 1.25 / delta
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(1.25) - math.log(delta)
    return sensitivity * math.sqrt(2 * log_ratio) / epsilon


def _log_delta(epsilon: float, mu: float) -> float:
    """log δ(ε) of the Gaussian mechanism with Δ/σ = mu, in log space (no cancellation blow-up).

    Exact limits: −inf (δ = 0) where Φ(μ/2 − ε/μ) underflows (then δ, below it, does too)
    or μ = 0; 0 (δ = 1) at μ = inf.
    """
    if mu == 0:
        return -math.inf
    a = mu / 2 - epsilon / mu
    b = -mu / 2 - epsilon / mu
    log_first = float(log_ndtr(a))
    if log_first == -math.inf:
        return -math.inf
    log_second = epsilon + float(log_ndtr(b))
    diff = log_second - log_first  # < 0 in exact arithmetic
    if diff >= 0:
        return -math.inf
    # log(e^x - e^y) = x + log(1 - e^{y-x}); log1p(-e^d) for d near 0, log(-expm1(d)) else.
    tail = math.log(-math.expm1(diff)) if diff > -math.log(2) else math.log1p(-math.exp(diff))
    return log_first + tail


def analytic_gaussian_log_delta(epsilon: float, sensitivity: float, sigma: float) -> float:
    """Natural log of :func:`analytic_gaussian_delta` (finite even when δ underflows)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    sigma = check_positive("sigma", sigma)
    return _log_delta(epsilon, sensitivity / sigma)


def analytic_gaussian_delta(epsilon: float, sensitivity: float, sigma: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ), the smallest δ for which adding
    N(0, σ²I) to a query of L2 sensitivity Δ is (ε, δ)-DP. Computed from log-CDFs
    (``scipy.special.log_ndtr``) so that neither term overflows or loses all digits.
    """
    return math.exp(analytic_gaussian_log_delta(epsilon, sensitivity, sigma))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest σ with δ(ε; σ) ≤ δ: the analytic Gaussian mechanism's calibration.

    δ(ε; σ) decreases in σ, so the root of log δ(ε; σ) = log δ is bracketed and found
    with Brent's method on log σ (relative accuracy about 1e-12).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    target = math.log(delta)
    log_sensitivity = math.log(sensitivity)

    def gap(log_sigma: float) -> float:
        sigma = math.exp(log_sigma) if log_sigma < 709.0 else math.inf
        mu = sensitivity / sigma if 0 < sigma < math.inf else exp(log_sensitivity - log_sigma)
        return _log_delta(epsilon, mu) - target

    lo, hi = log_sensitivity - 1.0, log_sensitivity + 1.0
    while gap(lo) <= 0:
        lo -= 2.0
    while gap(hi) > 0:
        hi += 2.0
    return exp(brentq_clipped(gap, lo, hi, xtol=1e-14, rtol=1e-13))


def analytic_gaussian_epsilon(delta: float, sensitivity: float, sigma: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ δ for the Gaussian mechanism (inverse of Theorem 8)."""
    delta = check_delta(delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    sigma = check_positive("sigma", sigma)
    mu = sensitivity / sigma  # 0 or inf where it under- or overflows: exact limits below
    target = math.log(delta)
    if _log_delta(0.0, mu) <= target:
        return 0.0
    hi = 1.0
    while _log_delta(hi, mu) > target:
        if hi == _FLOAT_MAX:
            return math.inf  # δ(ε) > δ up to the largest float: ε is beyond the float range
        hi = min(2.0 * hi, _FLOAT_MAX)
    return brentq_clipped(lambda e: _log_delta(e, mu) - target, 0.0, hi, xtol=1e-14, rtol=1e-13)


def classical_calibration_failure_epsilon(delta: float, epsilon_max: float = 100.0) -> float:
    """Smallest ε ≥ 1 at which the classical σ (eq. 13) no longer gives (ε, δ)-DP.

    Below it δ_exact(ε; σ_classical) ≤ δ (the classical σ is at least the analytic one);
    the classical proof covers only ε < 1, so the range [1, returned value) is valid but
    unproven. Found as the root of σ_classical/σ_analytic = 1 (Brent's method); raises
    ValueError if the classical σ stays valid up to ``epsilon_max``.
    """
    delta = check_delta(delta)
    epsilon_max = check_positive("epsilon_max", epsilon_max)
    if not epsilon_max > 1:
        raise ValueError(f"epsilon_max must be in (1, inf) (the search starts at ε = 1), got {epsilon_max!r}")

    def margin(eps: float) -> float:
        return math.log(classical_gaussian_sigma(eps, delta, 1.0) / analytic_gaussian_sigma(eps, delta, 1.0))

    if margin(1.0) <= 0:
        return 1.0
    if margin(epsilon_max) > 0:
        raise ValueError(f"classical calibration is valid up to epsilon_max={epsilon_max} at delta={delta}")
    return brentq_clipped(margin, 1.0, epsilon_max, xtol=1e-12, rtol=1e-12)
