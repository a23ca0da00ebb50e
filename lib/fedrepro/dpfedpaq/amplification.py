"""DP-FedPAQ's privacy mechanism: subsampling amplification (eq. 15) and noise (eq. 16).

Mohammadi et al., *Differential Privacy Meets Federated Learning under Communication
Constraints*, §II-C. A device runs E local steps on mini-batches of size b drawn without
replacement from its n records and releases its noisy update; with γ := Eb/n:

* eq. (15): an (ε₀, δ₀)-DP mechanism run on the subsample is
  (log(1 + (1 − (1 − b/n)^E)(e^{ε₀} − 1)), γδ₀)-DP, and the paper bounds
  log(1 + (1 − (1−b/n)^E)(e^{ε₀}−1)) ≤ log(1 + γ(e^{ε₀}−1)) ≤ γ(e^{ε₀}−1) ≤ 2γε₀;
* eq. (16): choosing ε₀ = ε/(2γ), δ₀ = δ/γ in the classical calibration (eq. 13) gives
  σ² = 2Δ² ln(1.25γ/δ)/(ε/(2γ))² = 8γ²Δ² ln(1.25γ/δ)/ε².

The last link of the chain needs e^{ε₀} − 1 ≤ 2ε₀, i.e. ε₀ ≤ :data:`CHAIN_THRESHOLD`
(≈ 1.2564), and the classical calibration needs ε₀ < 1; :func:`amplification_chain` and
:func:`paper_calibration_conditions` report both. The exact alternative inverts the
amplification and calibrates with the analytic Gaussian mechanism.

Range: ε values in [0, inf] (inf where they exceed the float range), probabilities in
(0, 1], noise σ in [0, inf] (0 or inf only where the exact value under- or overflows).
Counts E, b, n are integers up to 2^53 (integral floats accepted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from fedrepro.core.validate import check_int
from fedrepro.privacy._numerics import brentq_clipped, log1p_expm1_over, log1p_times_expm1
from fedrepro.privacy.gaussian import (
    analytic_gaussian_epsilon,
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
)
from fedrepro.privacy.validate import check_delta, check_nonnegative, check_positive

__all__ = [
    "CHAIN_THRESHOLD",
    "ChainStep",
    "amplification_chain",
    "amplified_epsilon",
    "exact_noise_std",
    "inclusion_probability",
    "paper_calibration_conditions",
    "paper_calibration_failure_epsilon",
    "paper_noise_std",
    "realized_epsilon",
]

#: Positive root of e^x − 1 = 2x: the last link of eq. (15) holds iff ε₀ ≤ this value.
CHAIN_THRESHOLD: float = float(brentq(lambda x: math.expm1(x) - 2 * x, 0.5, 2.0, xtol=1e-15))


def _check_gamma(gamma: float) -> float:
    gamma = check_positive("gamma", gamma)
    if gamma > 1:
        raise ValueError(f"gamma (= E·b/n, sampled fraction) must be in (0, 1], got {gamma!r}")
    return gamma


_MAX_COUNT = 2**53


def inclusion_probability(E: int, b: int, n: int) -> float:
    """Probability 1 − (1 − b/n)^E that a record is in one of E independent batches of b of n."""
    E = check_int("E", E, 1, _MAX_COUNT, strict=False)
    n = check_int("n", n, 1, _MAX_COUNT, strict=False)
    b = check_int(f"b (batch size, at most n={n})", b, 1, n, strict=False)
    return -math.expm1(E * math.log1p(-b / n)) if b < n else 1.0


def amplified_epsilon(epsilon0: float, probability: float) -> float:
    """ε' = log(1 + p(e^{ε₀} − 1)) of an ε₀-DP mechanism run on a p-subsample (eq. 15, exact)."""
    epsilon0 = check_nonnegative("epsilon0", epsilon0)
    probability = check_positive("probability", probability)
    if probability > 1:
        raise ValueError(f"probability must be in (0, 1], got {probability!r}")
    return log1p_times_expm1(probability, epsilon0)


@dataclass(frozen=True)
class ChainStep:
    """One expression of the chain (15) and whether it bounds the previous one."""

    name: str
    value: float
    condition: str
    holds: bool


def amplification_chain(epsilon0: float, E: int, b: int, n: int) -> list[ChainStep]:
    """The four expressions of eq. (15), each with the condition under which it bounds its
    predecessor and whether that condition holds at these arguments.

    Returns ``[exact, union bound, log(1+x) ≤ x, ≤ 2γε₀]``; the first entry's condition is
    b ≤ n (always true here). Link 2 holds by Bernoulli's inequality, link 3 since
    log(1 + x) ≤ x, link 4 iff ε₀ ≤ :data:`CHAIN_THRESHOLD`.
    """
    epsilon0 = check_nonnegative("epsilon0", epsilon0)
    p = inclusion_probability(E, b, n)
    gamma = int(E) * int(b) / int(n)
    x = gamma * math.expm1(epsilon0) if epsilon0 < 709.78 else math.inf  # inf: overflow
    return [
        ChainStep("log(1 + (1-(1-b/n)^E)(e^eps0 - 1))", log1p_times_expm1(p, epsilon0),
                  "b <= n", True),
        ChainStep("log(1 + gamma (e^eps0 - 1))", log1p_times_expm1(gamma, epsilon0),
                  "1-(1-b/n)^E <= gamma (Bernoulli's inequality)", p <= gamma * (1 + 1e-15)),
        ChainStep("gamma (e^eps0 - 1)", x, "log(1 + x) <= x", True),
        ChainStep("2 gamma eps0", 2 * gamma * epsilon0,
                  f"e^eps0 - 1 <= 2 eps0, i.e. eps0 <= {CHAIN_THRESHOLD:.4f}",
                  epsilon0 <= CHAIN_THRESHOLD),
    ]


def paper_noise_std(epsilon: float, delta: float, sensitivity: float, gamma: float) -> float:
    """Noise std of eq. (16): σ = sqrt(8γ²Δ² ln(1.25γ/δ))/ε (classical calibration at
    ε₀ = ε/(2γ), δ₀ = δ/γ). Requires δ < γ so that δ₀ < 1."""
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    gamma = _check_gamma(gamma)
    if delta >= gamma:
        raise ValueError(f"delta must be smaller than gamma={gamma} (δ₀ = δ/γ < 1), got {delta!r}")
    sensitivity = check_positive("sensitivity", sensitivity)
    eps0 = epsilon / (2 * gamma)
    if eps0 == math.inf:
        return 0.0  # σ = Δ·sqrt(2 ln(1.25/δ₀))/ε₀ underflows: ε₀ exceeds the float range
    return classical_gaussian_sigma(eps0, delta / gamma, sensitivity)


def paper_calibration_conditions(epsilon: float, gamma: float) -> dict[str, float | bool]:
    """ε₀ = ε/(2γ) of eq. (16) and whether the two conditions behind it hold.

    ``classical_valid``: ε₀ < 1 (classical Gaussian calibration, Dwork & Roth Thm A.1);
    ``chain_valid``: ε₀ ≤ :data:`CHAIN_THRESHOLD` (last link of eq. 15).
    """
    epsilon = check_positive("epsilon", epsilon)
    gamma = _check_gamma(gamma)
    eps0 = epsilon / (2 * gamma)
    return {"epsilon0": eps0, "classical_valid": eps0 < 1, "chain_valid": eps0 <= CHAIN_THRESHOLD}


def exact_noise_std(epsilon: float, delta: float, sensitivity: float, gamma: float) -> float:
    """Smallest σ that makes the subsampled release (ε, δ)-DP under eq. (15)'s amplification.

    Inverts the amplification exactly, ε₀ = log(1 + (e^ε − 1)/γ), δ₀ = δ/γ, and calibrates
    with the analytic Gaussian mechanism (Balle & Wang 2018).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    gamma = _check_gamma(gamma)
    if delta >= gamma:
        raise ValueError(f"delta must be smaller than gamma={gamma} (δ₀ = δ/γ < 1), got {delta!r}")
    eps0 = log1p_expm1_over(epsilon, gamma)  # log(1 + (e^ε − 1)/γ), log space for large ε
    return analytic_gaussian_sigma(eps0, delta / gamma, sensitivity)


def realized_epsilon(sigma: float, delta: float, sensitivity: float, gamma: float) -> float:
    """ε actually guaranteed by noise σ after amplification: log(1 + γ(e^{ε₀} − 1)) with ε₀
    the analytic Gaussian mechanism's ε at δ₀ = δ/γ."""
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    gamma = _check_gamma(gamma)
    if delta >= gamma:
        raise ValueError(f"delta must be smaller than gamma={gamma} (δ₀ = δ/γ < 1), got {delta!r}")
    eps0 = analytic_gaussian_epsilon(delta / gamma, sensitivity, sigma)
    return log1p_times_expm1(gamma, eps0)


def paper_calibration_failure_epsilon(
    delta: float, gamma: float, sensitivity: float = 1.0, epsilon_max: float = 50.0
) -> float:
    """Smallest target ε at which eq. (16)'s noise no longer gives (ε, δ) after amplification.

    Root of realized_epsilon(paper_noise_std(ε)) = ε (Brent's method), searched from the
    smallest ε whose ε₀ = ε/(2γ) reaches 1 (below that, the classical calibration and the
    chain are both valid). Raises ValueError if none is found up to ``epsilon_max``.
    """
    delta = check_delta(delta)
    gamma = _check_gamma(gamma)
    sensitivity = check_positive("sensitivity", sensitivity)
    epsilon_max = check_positive("epsilon_max", epsilon_max)
    if delta >= gamma:
        raise ValueError(f"delta must be smaller than gamma={gamma} (δ₀ = δ/γ < 1), got {delta!r}")
    if not epsilon_max > 2 * gamma:
        raise ValueError(f"epsilon_max must exceed 2·gamma={2 * gamma} (ε₀ = 1, where the search "
                         f"starts), got {epsilon_max!r}")

    def excess(eps: float) -> float:
        sigma = paper_noise_std(eps, delta, sensitivity, gamma)
        if sigma == 0.0:  # underflowed noise: no privacy
            return math.inf
        if sigma == math.inf:  # overflowed noise (huge sensitivity): ε = 0 is realised
            return -eps
        return realized_epsilon(sigma, delta, sensitivity, gamma) - eps

    low = 2 * gamma  # ε₀ = 1
    if excess(low) > 0:
        raise ValueError(f"eq. (16) already fails at eps0 = 1 (gamma={gamma}, delta={delta})")
    grid = np.linspace(low, epsilon_max, 400)
    for a, b in zip(grid[:-1], grid[1:], strict=False):
        if excess(b) > 0:
            # A wide cell (huge epsilon_max: b − a > 1 and b > 2a) is first narrowed to
            # [x, 2x] by doubling from its left end, so that Brent's method starts from a
            # bracket of moderate width; other cells (the usual case) are used as they are.
            if b - a > 1 and b > 2 * a:
                hi = 2 * a
                while hi < b and excess(hi) <= 0:
                    a, hi = hi, 2 * hi
                b = min(hi, b)
            return brentq_clipped(excess, a, b, xtol=1e-12, rtol=1e-12)
    raise ValueError(f"eq. (16) stays valid up to epsilon_max={epsilon_max} (gamma={gamma})")
