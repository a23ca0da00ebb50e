"""The head-to-head interface, and the algorithms of task T1 behind it.

An algorithm is a frozen dataclass (its hyper-parameters) with three methods:

* ``message_bits(d)``: the uplink bits of one client message for a model of dimension d;
* ``privacy_plan(participations)``: the :class:`~fedrepro.headtohead.accounting.PrivacyPlan`
  of a client that sends ``participations`` messages (``None`` for a non-private reference);
* ``client_message(problem, x, client, noise_multiplier, rng)``: the message of one client
  from the global model x, and the number of per-record gradients it computed.

:func:`run` does the rest, the same way for every algorithm: it turns an uplink budget into a
number of rounds, draws the public participation schedule, calibrates the noise multiplier
so that the most frequent client spends exactly the target ε (:func:`accounting.calibrate`),
runs the rounds (the server adds the n_i-weighted mean of the messages to x) and reports
the accuracy, the bits and the ε spent. A reader adds an algorithm by writing such a
dataclass (the chapter's "add your algorithm" section).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.validate import check_int, check_interval, check_positive
from fedrepro.headtohead import accounting
from fedrepro.headtohead import softmax as engine
from fedrepro.problems.softmax import SoftmaxProblem

__all__ = ["FLOAT_BITS", "FedAvg", "DPFL", "PrivateFedPAQ", "run", "rounds_within"]

#: Bits of one float32 coordinate.
FLOAT_BITS = 32


@dataclasses.dataclass(frozen=True)
class FedAvg:
    """Non-private FedAvg (the ceiling): ``local_steps`` minibatch SGD steps on Poisson samples
    at ``rate``, step ``lr``; the message is the model update in float32."""

    name: ClassVar[str] = "FedAvg (non-private)"
    lr: float = 0.5
    local_steps: int = 5
    rate: float = 0.05

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: SoftmaxProblem, x: np.ndarray, client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class DPFL:
    """DPFL with a fixed number τ of local DP-SGD steps (ALI-DPFL's Algorithm 1; τ = 1 is
    DP-FedSGD): Poisson rate ``rate``, clipping ``clip``, step ``lr``; the message is the model
    update in float32. Each step is a sampled Gaussian release."""

    name: ClassVar[str] = "DPFL"
    lr: float = 0.5
    local_steps: int = 1
    rate: float = 0.05
    clip: float = 1.0

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, check_int("participations", participations, 1) * self.local_steps)

    def client_message(self, problem: SoftmaxProblem, x: np.ndarray, client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class PrivateFedPAQ:
    """Privacy-augmented FedPAQ with the valid sensitivity 2ηEC (DP-FedPAQ Alg. 2): E local
    steps of clipped minibatch SGD (Poisson rate ``rate`` per step), Gaussian noise on the
    update, the quantizer Q_s (``levels=None``: float32). One Gaussian release per round
    (no amplification by the local subsampling is claimed)."""

    name: ClassVar[str] = "private FedPAQ"
    lr: float = 0.5
    local_steps: int = 5
    rate: float = 0.05
    clip: float = 1.0
    levels: int | None = None

    def message_bits(self, d: int) -> float:
        from fedrepro.dpfedpaq.quantizer import bits

        return float(bits(check_int("d", d, 1), self.levels))

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(1.0, check_int("participations", participations, 1))

    def client_message(self, problem: SoftmaxProblem, x: np.ndarray, client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        return engine.fedpaq_update(problem, x, client, local_steps=self.local_steps, rate=self.rate, lr=self.lr,
                                    clip=self.clip, noise_multiplier=noise_multiplier, levels=self.levels, rng=rng)


def rounds_within(budget_bits: float, clients_per_round: int, message_bits: float) -> int:
    """The number of whole rounds whose uplink (``clients_per_round`` messages of
    ``message_bits``) fits in ``budget_bits``."""
    budget = check_positive("budget_bits", budget_bits)
    m = check_int("clients_per_round", clients_per_round, 1)
    return int(math.floor(budget / (m * check_positive("message_bits", message_bits)) + 1e-9))


def run(problem: SoftmaxProblem, algorithm: Any, *, epsilon: float | None, delta: float, uplink_budget_bits: float,
        clients_per_round: int, seed: np.random.SeedSequence | int, eval_rounds: int = 10) -> dict[str, Any]:
    """One run of ``algorithm`` under an uplink budget (module docstring); ``epsilon=None`` for
    a non-private algorithm. Returns the rounds run, the uplink bits sent, the noise
    multiplier, the ε spent by the most frequent client (PLD; and RDP), the test accuracy and
    training loss at ``eval_rounds`` evenly spaced rounds, and the per-record gradients computed."""
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    d = problem.dim
    bits = algorithm.message_bits(d)
    rounds = rounds_within(uplink_budget_bits, clients_per_round, bits)
    if rounds < 1:
        raise ValueError(f"the uplink budget {uplink_budget_bits!r} bits does not pay for one round of "
                         f"{clients_per_round} messages of {bits:.0f} bits")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    schedule_ss, run_ss = ss.spawn(2)
    schedule = engine.participation_schedule(problem.n_devices, clients_per_round, rounds,
                                             np.random.default_rng(schedule_ss))
    participations = int(np.bincount(schedule.ravel(), minlength=problem.n_devices).max())
    plan = algorithm.privacy_plan(participations)
    if (plan is None) != (epsilon is None):
        raise ValueError(f"{algorithm.name}: epsilon must be None exactly for a non-private algorithm")
    sigma = accounting.calibrate(plan, epsilon, delta) if plan is not None else 0.0
    rng = np.random.default_rng(run_ss)
    x = np.zeros((problem.features.shape[1], int(problem.labels.max()) + 1))
    sizes = problem.sizes.astype(np.float64)
    marks = sorted({max(1, round(rounds * (k + 1) / eval_rounds)) for k in range(eval_rounds)})
    acc, loss, sampled = [], [], 0
    for k in range(rounds):
        msgs = []
        for c in schedule[k]:
            m, s = algorithm.client_message(problem, x, int(c), sigma, rng)
            msgs.append(m)
            sampled += s
        x = x + engine.average(np.stack(msgs), sizes[schedule[k]])
        if k + 1 in marks:
            acc.append(problem.accuracy(x))
            loss.append(problem.loss(x))
    spent = accounting.epsilon(plan, sigma, delta) if plan is not None else math.inf
    spent_rdp = accounting.epsilon(plan, sigma, delta, "rdp") if plan is not None else math.inf
    return {"rounds": rounds, "uplink_bits": rounds * clients_per_round * bits, "message_bits": bits,
            "participations": participations, "noise_multiplier": sigma, "epsilon_spent": spent,
            "epsilon_spent_rdp": spent_rdp, "eval_rounds": np.asarray(marks), "test_accuracy": np.asarray(acc),
            "train_loss": np.asarray(loss), "sampled_records": sampled}
