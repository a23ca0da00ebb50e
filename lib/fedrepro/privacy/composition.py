"""Exact ε of a sequence of p-subsampled Gaussian releases with different parameters.

A whole training releases T messages; the part of message k an auditor looks at is, on its tight
instance (:mod:`fedrepro.privacy.subsampled`), N(0, 1) without the canary and
(1 − p_k) N(0, 1) + p_k N(μ_k, 1) with it (μ_k = Δ_k/σ_k). The rounds draw fresh noise and a
fresh subsample, so the view of the training is the product of the T pairs, adaptively composed
(the broadcast model of round k may depend on the earlier messages, never on the canary beyond
them). Its privacy profile is the hockey-stick divergence of the product pair, which the
privacy-loss distribution (PLD) of each round, convolved over the rounds, gives
(Koskela, Jälkö and Honkela 2020; Doroshenko et al. 2022): dp-accounting's ``PrivacyLossDistribution``
with ``compose``, in both directions (add and remove, ``NeighboringRelation.ADD_OR_REMOVE_ONE``),
with pessimistic discretisation (an upper estimate within about T · ``discretization``).

:func:`composed_epsilon_rounds` is :func:`fedrepro.privacy.subsampled.composed_epsilon` with one
(p_k, μ_k) per round; with equal rounds the two agree to the discretisation (the tests check it).
:func:`basic_composition` is the composition theorem any per-round (ε, δ) claim implies
(Dwork and Roth 2014, Thm. 3.16): T rounds of (ε, δ) are (Tε, Tδ)-DP.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fedrepro.core.validate import check_int, check_interval
from fedrepro.privacy.validate import check_delta

__all__ = ["basic_composition", "composed_epsilon_rounds"]


def basic_composition(epsilon: float, delta: float, rounds: int) -> tuple[float, float]:
    """(T·ε, T·δ): the guarantee of ``rounds`` = T releases each (``epsilon``, ``delta``)-DP
    (basic composition; ε ≥ 0, δ ∈ [0, 1), T ≥ 1; δ is capped at 1)."""
    epsilon = check_interval("epsilon", epsilon, 0.0, math.inf, closed_high=False)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_high=False)
    rounds = check_int("rounds", rounds, 1)
    return float(rounds * epsilon), float(min(1.0, rounds * delta))


def composed_epsilon_rounds(delta: float, probabilities: Sequence[float], mus: Sequence[float],
                            discretization: float = 1e-3) -> float:
    """ε at ``delta`` of T adaptively composed releases, release k the ``probabilities[k]``-subsampled
    Gaussian mechanism with sensitivity/noise ratio ``mus[k]`` (module docstring). Each p_k ∈ (0, 1],
    each μ_k ∈ (0, 1e3]; ``discretization`` ∈ (0, 1]. Returns ε ∈ [0, inf)."""
    delta = check_delta(delta)
    p = np.asarray(probabilities, dtype=float)
    mu = np.asarray(mus, dtype=float)
    if p.ndim != 1 or p.size < 1 or p.shape != mu.shape:
        raise ValueError(f"probabilities and mus must be non-empty 1-d sequences of one length, got shapes "
                         f"{p.shape} and {mu.shape}")
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError(f"probabilities must lie in (0, 1], got {p!r}")
    if not np.all((mu > 0) & (mu <= 1e3)):
        raise ValueError(f"mus must lie in (0, 1e3], got {mu!r}")
    discretization = check_interval("discretization", discretization, 0.0, 1.0, closed_low=False)
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution

    pld = None
    for pk, mk in zip(p, mu, strict=True):
        with np.errstate(divide="ignore", over="ignore"):
            one = privacy_loss_distribution.from_gaussian_mechanism(
                1.0 / float(mk), sensitivity=1.0, sampling_prob=float(pk),
                value_discretization_interval=discretization,
                neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
        pld = one if pld is None else pld.compose(one)
    return float(max(0.0, pld.get_epsilon_for_delta(delta)))
