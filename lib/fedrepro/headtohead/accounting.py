"""One accountant for every algorithm of the head-to-head part: what one client's messages
cost over a whole planned run, and the noise that makes that cost exactly a target (ε, δ).

Threat model (the same for every algorithm): record-level differential privacy of one
client's local dataset against whoever sees everything the client sends (the local-model
setting the three papers share), with add/remove-one-record neighbours.

Every private client mechanism of the part is a sequence of Gaussian releases, each either

* a **sampled Gaussian**: Poisson sampling of the records at rate ``q``, per-record clipping,
  Gaussian noise of standard deviation σ·C on the clipped sum (DP-SGD; DP-FedSGD, DPFL and
  ALI-DPFL's local steps), or
* a **Gaussian** release of a quantity whose sensitivity is Δ with noise σ·Δ (``q = 1``; the
  private FedPAQ round with Δ = 2ηEC, a noisy gradient step of Fed-PLT),

composed adaptively ``compositions`` times (a client's participations times its releases per
participation). :class:`PrivacyPlan` describes one; σ (the noise multiplier) is what the
calibration chooses.

Two accountants: the privacy-loss distribution of dp-accounting (``"pld"``, the tightest; the
tables use it) and the library's Rényi accountant (``"rdp"``, :mod:`fedrepro.privacy.rdp` with
the improved conversion, a cross-check that must never be smaller than PLD by more than the
PLD's discretisation). :func:`calibrate` solves ε(σ) = target for σ with the PLD accountant
(Brent's method on log σ, to 1e-9 relative in ε).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import optimize

from fedrepro.core.validate import check_int, check_interval, check_positive
from fedrepro.privacy.mechanism import SampledGaussian

__all__ = ["ACCOUNTANTS", "PrivacyPlan", "epsilon", "calibrate", "RDP_ORDERS"]

#: The accountants :func:`epsilon` knows.
ACCOUNTANTS: tuple[str, ...] = ("pld", "rdp")
#: Rényi orders of the cross-check.
RDP_ORDERS: np.ndarray = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11, 257)])
#: Discretisation of the privacy-loss distributions (dp-accounting's default).
PLD_DISCRETIZATION = 1e-4
_SIGMA_RANGE = (1e-1, 1e4)


@dataclasses.dataclass(frozen=True)
class PrivacyPlan:
    """``compositions`` Gaussian releases, each on a Poisson sample of the records at rate
    ``sampling_rate`` (1: no sampling, a plain Gaussian mechanism)."""

    sampling_rate: float
    compositions: int

    def __post_init__(self) -> None:
        check_interval("sampling_rate", self.sampling_rate, 0.0, 1.0, closed_low=False)
        check_int("compositions", self.compositions, 1)

    def event(self, noise_multiplier: float) -> SampledGaussian:
        """The accountant event of the plan's releases with noise multiplier σ
        (:class:`fedrepro.privacy.mechanism.SampledGaussian`)."""
        return SampledGaussian(self.sampling_rate, noise_multiplier, self.compositions)


def _pld_epsilon(plan: PrivacyPlan, sigma: float, delta: float) -> float:
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=PLD_DISCRETIZATION)
    accountant.compose(plan.event(sigma).dp_event())
    return float(accountant.get_epsilon(delta))


def _rdp_epsilon(plan: PrivacyPlan, sigma: float, delta: float) -> float:
    return plan.event(sigma).epsilon_rdp(delta, RDP_ORDERS, "improved")


def epsilon(plan: PrivacyPlan, noise_multiplier: float, delta: float, accountant: str = "pld") -> float:
    """The ε at ``delta`` of ``plan`` with noise multiplier ``noise_multiplier`` (σ) by
    ``accountant`` (``"pld"`` or ``"rdp"``)."""
    if not isinstance(plan, PrivacyPlan):
        raise TypeError(f"plan must be a PrivacyPlan, got {type(plan).__name__}")
    sigma = check_positive("noise_multiplier", noise_multiplier)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    return _pld_epsilon(plan, sigma, delta) if accountant == "pld" else _rdp_epsilon(plan, sigma, delta)


def _root(gap, lo: float, hi: float) -> float:
    return float(math.exp(optimize.brentq(gap, math.log(lo), math.log(hi), xtol=1e-12, rtol=1e-12, maxiter=200)))


def calibrate(plan: PrivacyPlan, target_epsilon: float, delta: float) -> float:
    """The noise multiplier σ at which the PLD accountant gives exactly ``target_epsilon`` at
    ``delta`` for ``plan`` (to 1e-9 relative); ValueError when the target is out of reach
    within σ ∈ [0.1, 10⁴].

    The Rényi accountant's σ (cheap) brackets the search: PLD is tighter, so its σ is
    smaller; the PLD root is sought between half of it and it (widened if needed)."""
    target = check_positive("target_epsilon", target_epsilon)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    if not isinstance(plan, PrivacyPlan):
        raise TypeError(f"plan must be a PrivacyPlan, got {type(plan).__name__}")
    lo, hi = _SIGMA_RANGE

    def rdp_gap(log_sigma: float) -> float:
        return math.log(max(_rdp_epsilon(plan, math.exp(log_sigma), delta), 1e-300) / target)

    if not rdp_gap(math.log(lo)) > 0 > rdp_gap(math.log(hi)):
        raise ValueError(f"target_epsilon {target!r} is out of reach for {plan} at delta {delta!r} with a noise "
                         f"multiplier in [{lo}, {hi}]")
    sigma_rdp = _root(rdp_gap, lo, hi)

    def gap(log_sigma: float) -> float:
        return math.log(max(_pld_epsilon(plan, math.exp(log_sigma), delta), 1e-300) / target)

    a, b = max(lo, 0.5 * sigma_rdp), 1.01 * sigma_rdp
    for _ in range(6):  # PLD's σ lies below the RDP one, never far below it in practice
        if gap(math.log(a)) > 0:
            break
        b, a = a, max(lo, 0.5 * a)
    else:
        raise ValueError(f"no PLD root found below σ = {a:.4g} for {plan}")
    while gap(math.log(b)) > 0:  # only when the RDP conversion is tighter than the discretised PLD
        b *= 1.05
    return _root(gap, a, b)
