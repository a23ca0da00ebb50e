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
import sys

import numpy as np
from scipy.special import log_ndtr, logsumexp

from fedrepro.core.validate import check_int, check_interval
from fedrepro.privacy._numerics import brentq_clipped, log1p_expm1_over, log_diff
from fedrepro.privacy.validate import (
    check_delta,
    check_nonnegative,
    check_positive,
    check_sampling_rate,
)

__all__ = ["MAX_PLD_POINTS", "composed_epsilon", "subsampled_gaussian_delta",
           "subsampled_gaussian_epsilon", "subsampled_gaussian_log_delta"]

_FLOAT_MAX = sys.float_info.max

#: Largest privacy-loss grid (points, single round or composed) :func:`composed_epsilon`
#: builds; beyond it raises ValueError instead of allocating (8 bytes per point, and the FFT
#: of the composition several times that).
MAX_PLD_POINTS: int = 4_000_000


_log_diff = log_diff  # log(e^a − e^b), −inf when b ≥ a or a = −inf


def _log_delta_remove(epsilon: float, p: float, mu: float) -> float:
    """log H_{e^ε}(P‖Q): the direction in which the record's presence is detected."""
    if mu == 0:
        return -math.inf  # P = Q
    eps1 = log1p_expm1_over(epsilon, p)  # log(1 + (e^ε − 1)/p), in log space for large ε
    a = mu / 2 - eps1 / mu
    b = -mu / 2 - eps1 / mu
    return math.log(p) + _log_diff(float(log_ndtr(a)), eps1 + float(log_ndtr(b)))


def _log_delta_add(epsilon: float, p: float, mu: float) -> float:
    """log H_{e^ε}(Q‖P): the direction in which the record's absence is detected."""
    inner = -math.expm1(-epsilon)  # 1 − e^{−ε}
    if p <= inner or mu == 0:  # e^{−ε} ≤ 1 − p: Q/P never exceeds e^ε; or P = Q
        return -math.inf
    if mu == math.inf:  # P = (1 − p)Q + p·(point mass far away): H = 1 − e^ε(1 − p)
        return math.log(-math.expm1(epsilon + math.log1p(-p))) if p < 1 else 0.0
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
        if hi == _FLOAT_MAX:
            return math.inf  # δ(ε) > δ up to the largest float: ε is beyond the float range
        hi = min(2.0 * hi, _FLOAT_MAX)
    return brentq_clipped(gap, 0.0, hi, xtol=1e-14, rtol=1e-13)


def _pld_points(sigma: float, p: float, discretization: float) -> float:
    """Number of grid points of the single-round PLD of the p-subsampled Gaussian mechanism
    with sensitivity 1 and noise ``sigma`` (its connect-the-dots loss range over the width)."""
    from dp_accounting.pld import privacy_loss_mechanism as plm

    adjacencies = [plm.AdjacencyType.REMOVE] + ([plm.AdjacencyType.ADD] if p < 1 else [])
    points = 0.0
    for adjacency in adjacencies:
        try:
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                bounds = plm.GaussianPrivacyLoss(sigma, sensitivity=1.0, sampling_prob=p,
                                                 adjacency_type=adjacency).connect_dots_bounds()
            span = (bounds.epsilon_upper - bounds.epsilon_lower) / discretization
        except (OverflowError, ZeroDivisionError, ValueError):
            span = math.inf
        points = max(points, span + 2 if math.isfinite(span) else math.inf)
    return points


def _self_compose(pmf, rounds: int):
    """``pmf.self_compose(rounds)`` as dp-accounting's ``PrivacyLossDistribution.self_compose``
    does it, after checking that the composed grid has at most :data:`MAX_PLD_POINTS` points.

    dp-accounting composes a sparse PMF pairwise (``rounds`` − 1 compositions) while
    size^rounds ≤ 1000, and densifies it beyond; the same decision is taken here without
    forming the integer size^rounds, and a one-point PMF is densified beyond 1000 rounds
    instead of being composed pairwise a million times.
    """
    from dp_accounting.pld import common, pld_pmf

    if isinstance(pmf, pld_pmf.SparsePLDPmf):
        small = rounds <= 1000 if pmf.size <= 1 else rounds <= 64 and pmf.size**rounds <= 1000
        if small:
            return pmf.self_compose(rounds, 1e-15)
        pmf = pmf.to_dense_pmf()
    # The truncation bounds dp-accounting's FFT convolution will use (Chernoff bound).
    lower, upper = common.compute_self_convolve_bounds(pmf._probs, rounds, 1e-15)
    if upper - lower + 1 > MAX_PLD_POINTS:
        raise ValueError(
            f"rounds={rounds} too many for this PLD: the composed privacy-loss grid would need "
            f"{upper - lower + 1:.3g} points (at most {MAX_PLD_POINTS:g}); use a coarser "
            f"discretization or fewer rounds")
    return pmf.self_compose(rounds, 1e-15)


def composed_epsilon(delta: float, probability: float, sensitivity: float, sigma: float,
                     rounds: int, discretization: float = 1e-4) -> float:
    """ε at ``delta`` after ``rounds`` independent releases, each the p-subsampled Gaussian
    mechanism, from dp-accounting's PLD accountant (pessimistic discretisation of width
    ``discretization``: an upper estimate within about ``rounds · discretization``).

    ``rounds``: an integer ≥ 1; ``discretization`` ∈ (0, 1]. The PLD depends on Δ/σ only;
    where σ or Δ lies outside [1e-150, 1e150] (σ² or Δ² outside the float range) it is built
    with sensitivity 1 and noise min(σ/Δ, 1e150) — ε is non-increasing in σ/Δ, so the clamp
    keeps an upper estimate. Raises :class:`ValueError` (naming ``sigma``/``discretization``
    or ``rounds``) where the privacy-loss grid would exceed :data:`MAX_PLD_POINTS` points
    instead of allocating it. Returns ε ∈ [0, inf].
    """
    delta = check_delta(delta)
    p, _ = _check(probability, sensitivity, sigma)
    rounds = check_int("rounds", rounds, 1, strict=False)
    discretization = check_interval("discretization", discretization, 0.0, 1.0, closed_low=False)
    sensitivity, sigma = float(sensitivity), float(sigma)
    if p < sys.float_info.min:
        # dp-accounting cannot handle a subnormal rate. Each round is (0, p·TV)-DP, TV the
        # total variation 2Φ(μ/2) − 1 of the Gaussian pair, and (0, δᵢ) guarantees compose
        # to (0, Σδᵢ): ε = 0 whenever rounds·p·TV ≤ δ; otherwise p is raised to the smallest
        # normal float (δ(ε) grows with p: an upper estimate).
        if rounds * p * math.erf(sensitivity / sigma / (2 * math.sqrt(2))) <= delta:
            return 0.0
        p = sys.float_info.min
    ordinary = all(1e-150 <= v <= 1e150 for v in (sensitivity, sigma))
    sigma_1 = sigma / sensitivity if ordinary else min(sigma / sensitivity, 1e150)
    # the grid shrinks as σ/Δ grows: beyond 1e150 (where dp-accounting's loss bounds overflow)
    # the grid at 1e150 bounds it
    if _pld_points(min(sigma_1, 1e150), p, discretization) > MAX_PLD_POINTS:
        raise ValueError(
            f"sigma={sigma!r} (sensitivity={sensitivity!r}) is too small for "
            f"discretization={discretization!r}: the privacy-loss grid would exceed "
            f"{MAX_PLD_POINTS:g} points; use a coarser discretization")
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution

    def single_round(rate: float):
        with np.errstate(divide="ignore", over="ignore"):  # dp-accounting's tails at extreme σ
            return privacy_loss_distribution.from_gaussian_mechanism(
                sigma if ordinary else sigma_1, sensitivity=sensitivity if ordinary else 1.0,
                sampling_prob=rate, value_discretization_interval=discretization,
                neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)

    try:
        pld = single_round(p)
    except ValueError as exc:
        # dp-accounting 0.6.0 fails for rates within ~1e-12 of 1 ("a must be greater than
        # b": its discretised ADD-direction loss falls below log(1 − p)). The release at
        # rate p is a post-processing of the one at rate 1 (keep the output with probability
        # p, else resample the noise alone), so ε at rate 1 is an upper estimate — and, that
        # close to 1, the same to within the discretisation.
        if not 1 - p <= 1e-6:
            raise ValueError(f"dp-accounting's PLD failed for probability={p!r}, sigma={sigma!r}, "
                             f"sensitivity={sensitivity!r}, discretization={discretization!r}: {exc}") from exc
        pld = single_round(1.0)
    if rounds > 1:
        # PrivacyLossDistribution.self_compose, with the size checks of _self_compose.
        remove = _self_compose(pld._pmf_remove, rounds)
        add = None if pld._symmetric else _self_compose(pld._pmf_add, rounds)
        pld = privacy_loss_distribution.PrivacyLossDistribution(remove, add)
    return float(pld.get_epsilon_for_delta(delta))
