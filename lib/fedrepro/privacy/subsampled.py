"""Exact privacy profile of the subsampled Gaussian mechanism on its tight instance.

A mechanism adds N(0, σ²) noise to a sum over a random subset of the records, each record
being in the subset with probability p: Poisson sampling, or a subset of m of n records
drawn without replacement (DP-FedPAQ Algorithm 2, step 4: p = Eb/n = γ). Take the instance
where the record that differs contributes Δ (the L2 sensitivity) to the sum and every other
record contributes 0 (under substitution: x contributes Δ, its replacement x' contributes 0).
The two output laws are then

    P = (1 − p) N(0, σ²) + p N(Δ, σ²)   and   Q = N(0, σ²),

and the smallest δ for which the release is (ε, δ)-DP on this instance is
δ(ε) = max(H_{e^ε}(P‖Q), H_{e^ε}(Q‖P)), H_γ(P‖Q) = ∫ max(0, dP − γ dQ) the hockey-stick
divergence. Both likelihood ratios are monotone in the output, so each divergence is a
closed form in the normal CDF (computed here in log space):

* H_{e^ε}(P‖Q) = p[Φ(μ/2 − ε₁/μ) − e^{ε₁} Φ(−μ/2 − ε₁/μ)], μ = Δ/σ,
  ε₁ = log(1 + (e^ε − 1)/p): this is p times the Gaussian mechanism's δ at ε₁, so the
  amplification bound (ε', δ') = (log(1 + p(e^{ε₀} − 1)), pδ₀) of Balle, Barthe & Gaboardi
  (2018; DP-FedPAQ eq. 15) is attained on this instance;
* H_{e^ε}(Q‖P) = Φ(z) − e^ε[(1 − p) Φ(z) + p Φ(z − μ)] with
  z = log((e^{−ε} − 1 + p)/p)/μ + μ/2, and 0 once e^{−ε} ≤ 1 − p.

The pair is dp-accounting's add-or-remove pair of the Poisson-sampled Gaussian
(``NeighboringRelation.ADD_OR_REMOVE_ONE``), which :func:`composed_epsilon` uses to compose
rounds with a privacy-loss-distribution (PLD) accountant.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp

from fedrepro.privacy.validate import (
    check_delta,
    check_nonnegative,
    check_positive,
    check_sampling_rate,
)

__all__ = ["composed_epsilon", "subsampled_gaussian_delta", "subsampled_gaussian_epsilon",
           "subsampled_gaussian_log_delta"]


def _log_diff(log_a: float, log_b: float) -> float:
    """log(e^a − e^b), −inf when b ≥ a."""
    d = log_b - log_a
    if d >= 0:
        return -math.inf
    return log_a + (math.log(-math.expm1(d)) if d > -math.log(2) else math.log1p(-math.exp(d)))


def _log_delta_remove(epsilon: float, p: float, mu: float) -> float:
    """log H_{e^ε}(P‖Q): the direction in which the record's presence is detected."""
    eps1 = math.log1p(math.expm1(epsilon) / p)
    a = mu / 2 - eps1 / mu
    b = -mu / 2 - eps1 / mu
    return math.log(p) + _log_diff(float(log_ndtr(a)), eps1 + float(log_ndtr(b)))


def _log_delta_add(epsilon: float, p: float, mu: float) -> float:
    """log H_{e^ε}(Q‖P): the direction in which the record's absence is detected."""
    inner = -math.expm1(-epsilon)  # 1 − e^{−ε}
    if p <= inner:  # e^{−ε} ≤ 1 − p: Q/P never exceeds e^ε
        return -math.inf
    z = math.log((p - inner) / p) / mu + mu / 2
    log_pos = float(log_ndtr(z))
    terms = [epsilon + math.log1p(-p) + float(log_ndtr(z)) if p < 1 else -math.inf,
             epsilon + math.log(p) + float(log_ndtr(z - mu))]
    return _log_diff(log_pos, float(logsumexp(terms)))


def _check(probability: float, sensitivity: float, sigma: float) -> tuple[float, float]:
    p = check_sampling_rate(probability, "probability")
    mu = check_positive("sensitivity", sensitivity) / check_positive("sigma", sigma)
    return p, mu


def subsampled_gaussian_log_delta(epsilon: float, probability: float, sensitivity: float,
                                  sigma: float) -> float:
    """Natural log of :func:`subsampled_gaussian_delta` (finite where δ underflows)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    p, mu = _check(probability, sensitivity, sigma)
    return max(_log_delta_remove(epsilon, p, mu), _log_delta_add(epsilon, p, mu))


def subsampled_gaussian_delta(epsilon: float, probability: float, sensitivity: float,
                              sigma: float) -> float:
    """Exact δ(ε) of the p-subsampled Gaussian mechanism on the tight instance (module doc).

    At ``probability`` = 1 it is the Gaussian mechanism's δ(ε) (Balle & Wang 2018, Thm 8).
    """
    return math.exp(subsampled_gaussian_log_delta(epsilon, probability, sensitivity, sigma))


def subsampled_gaussian_epsilon(delta: float, probability: float, sensitivity: float,
                                sigma: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` on the tight instance (Brent's method on log δ)."""
    delta = check_delta(delta)
    p, mu = _check(probability, sensitivity, sigma)
    target = math.log(delta)

    def gap(eps: float) -> float:
        return max(_log_delta_remove(eps, p, mu), _log_delta_add(eps, p, mu)) - target

    if gap(0.0) <= 0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0:
        hi *= 2.0
    return float(brentq(gap, 0.0, hi, xtol=1e-14, rtol=1e-13))


def composed_epsilon(delta: float, probability: float, sensitivity: float, sigma: float,
                     rounds: int, discretization: float = 1e-4) -> float:
    """ε at ``delta`` after ``rounds`` independent releases, each the p-subsampled Gaussian
    mechanism, from dp-accounting's PLD accountant (pessimistic discretisation of width
    ``discretization``: an upper estimate within about ``rounds · discretization``)."""
    delta = check_delta(delta)
    p, _ = _check(probability, sensitivity, sigma)
    if isinstance(rounds, bool) or int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    discretization = check_positive("discretization", discretization)
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution

    pld = privacy_loss_distribution.from_gaussian_mechanism(
        float(sigma), sensitivity=float(sensitivity), sampling_prob=p,
        value_discretization_interval=discretization,
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    if rounds > 1:
        pld = pld.self_compose(int(rounds))
    return float(pld.get_epsilon_for_delta(delta))
