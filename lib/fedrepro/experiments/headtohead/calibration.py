"""The accountant of the head-to-head part on task T1 (MNIST softmax regression, HET_MNIST(2),
100 clients, 10 per round): for each private algorithm at the part's uplink budget, the
number of rounds the budget pays for, how many messages the most frequent client sends, and
the noise multiplier that makes its whole run cost exactly each target ε at δ = 1e-5
(:func:`fedrepro.headtohead.accounting.calibrate`, PLD).

Beside the PLD ε (the target, to 1e-9), the same noise evaluated by two other accountants:
the library's Rényi accountant (improved conversion; never below PLD) and, for the sampled
Gaussian plans, Opacus's PRV accountant (an independent implementation of a numerically tight
accountant; its ``eps_error`` is 0.01).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.headtohead import accounting
from fedrepro.headtohead.algorithms import DPFL, FedPLT, PrivateFedPAQ, rounds_within

__all__ = ["CalibrationConfig", "ALGORITHMS", "load_calibration"]

#: The private algorithms of task T1 at their default hyper-parameters, by label.
ALGORITHMS: dict[str, Any] = {
    "DP-FedSGD (DPFL, τ = 1)": DPFL(local_steps=1),
    "DPFL (τ = 5)": DPFL(local_steps=5),
    "private FedPAQ (float32)": PrivateFedPAQ(levels=None),
    "private FedPAQ (s = 10)": PrivateFedPAQ(levels=10),
    "Fed-PLT (private, N_e = 2)": FedPLT(local_steps=2),
}


@dataclasses.dataclass(frozen=True)
class CalibrationConfig(ExperimentConfig):
    """Calibrations of :data:`ALGORITHMS` for ``epsilons`` at ``delta`` under the uplink budget
    ``budget_bits`` (``clients_per_round`` of ``n_clients`` per round, model dimension ``d``)."""

    part = "headtohead"
    experiment = "t1-calibration"
    verify_rtol = 1e-6
    verify_note = "closed-form accountants and root finding: identical on one machine, 1e-6 across machines"

    profile: str = "paper"
    epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    delta: float = 1e-5
    budget_bits: float = 4e8
    clients_per_round: int = 10
    n_clients: int = 100
    d: int = 7850

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.epsilons or any(not e > 0 for e in self.epsilons):
            raise ValueError(f"epsilons must be positive, got {self.epsilons!r}")

    @classmethod
    def for_profile(cls, profile: str) -> CalibrationConfig:
        check_profile(profile)
        return cls(profile="quick", epsilons=(1.0, 4.0), budget_bits=5e7) if profile == "quick" else cls()


def _prv_epsilon(plan: accounting.PrivacyPlan, sigma: float, delta: float) -> float:
    if plan.sampling_rate >= 1.0:
        return math.nan  # a plain Gaussian: the analytic mechanism is exact, no second opinion needed
    from opacus.accountants import PRVAccountant

    prv = PRVAccountant()
    prv.history = [(sigma, plan.sampling_rate, plan.compositions)]
    return float(prv.get_epsilon(delta, eps_error=0.01))


def _run(cfg: CalibrationConfig) -> dict[str, Any]:
    check_profile(cfg.profile)
    rows = []
    for label, algorithm in ALGORITHMS.items():
        bits = algorithm.message_bits(cfg.d)
        rounds = rounds_within(cfg.budget_bits, cfg.clients_per_round, bits)
        participations = -(-rounds * cfg.clients_per_round // cfg.n_clients)  # the balanced schedule's maximum
        plan = algorithm.privacy_plan(participations)
        for eps in cfg.epsilons:
            sigma = accounting.calibrate(plan, eps, cfg.delta)
            rows.append({"algorithm": label, "message_bits": bits, "rounds": rounds, "participations": participations,
                         "sampling_rate": plan.sampling_rate, "compositions": plan.compositions,
                         "epsilon_target": eps, "noise_multiplier": sigma,
                         "epsilon_pld": accounting.epsilon(plan, sigma, cfg.delta),
                         "epsilon_rdp": accounting.epsilon(plan, sigma, cfg.delta, "rdp"),
                         "epsilon_prv": _prv_epsilon(plan, sigma, cfg.delta)})
    return {"rows": rows}


def load_calibration(profile: str = "paper") -> dict[str, Any]:
    """The stored calibrations (computed when missing, where the store is writable)."""
    return load_or_run(CalibrationConfig.for_profile(profile), _run)
