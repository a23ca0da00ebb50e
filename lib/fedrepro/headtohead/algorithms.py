"""The head-to-head interface, and the algorithms of task T1 behind it.

An algorithm is a frozen dataclass (its hyper-parameters) with these methods (the typed
interface: :class:`fedrepro.headtohead.interface.HeadToHeadAlgorithm`, checked by :func:`run`):

* ``message_bits(d)``: the uplink bits of one client message for a model of dimension d;
* ``downlink_bits(d)``: the bits the server sends to one participating client per round;
* ``privacy_plan(participations)``: the :class:`~fedrepro.headtohead.accounting.PrivacyPlan`
  of a client that sends ``participations`` messages (``None`` for a non-private reference);
* ``start(problem)``: the state of a run (a dict; the server's model and, for algorithms with
  client memory, the clients' variables);
* ``client_message(problem, state, client, noise_multiplier, rng)``: the message of one client
  in the current state, and the number of per-record gradients it computed;
* ``aggregate(problem, state, clients, messages)``: the server's step (in place);
* ``model(state)``: the model the run reports;
* optionally ``prepare(state, schedule, noise_multiplier)``: called once before the first
  round with the public participation schedule and the calibrated noise (an algorithm that
  plans with them, e.g. ALI-DPFL's step budget, :mod:`fedrepro.headtohead.alidpfl`).

:class:`UpdateAveraging` supplies the last three for algorithms whose message is a model
update that the server averages with weights n_i (FedAvg, DPFL, private FedPAQ).

:func:`run` does the rest, the same way for every algorithm: it turns an uplink budget into a
number of rounds, draws the public participation schedule, calibrates the noise multiplier
so that the most frequent client spends exactly the target ε (:func:`accounting.calibrate`),
runs the rounds and reports the accuracy, the bits and the ε spent. A reader adds an
algorithm by writing such a dataclass (the chapter's "add your algorithm" section).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_bool, check_int, check_interval, check_positive
from fedrepro.headtohead import accounting
from fedrepro.headtohead import softmax as engine
from fedrepro.headtohead.interface import HeadToHeadAlgorithm, check_algorithm
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["FLOAT_BITS", "UpdateAveraging", "FedAvg", "DPFL", "PrivateFedPAQ", "FedPLT", "run", "rounds_within"]

#: Bits of one float32 coordinate.
FLOAT_BITS = 32


def check_hyperparameters(algorithm: Any) -> None:
    """Validate the hyper-parameters an algorithm dataclass has, by name: ``lr``, ``rho``,
    ``clip`` finite and > 0; ``rate`` (Poisson sampling rate) in (0, 1]; ``local_steps``,
    ``mean_steps`` integers >= 1; ``levels`` None or an integer >= 1 (the quantizer's s).
    Called by every dataclass's ``__post_init__``, so a bad value fails when it is built."""
    for name in ("lr", "rho", "clip"):
        if hasattr(algorithm, name):
            check_positive(name, getattr(algorithm, name))
    if hasattr(algorithm, "rate"):
        check_interval("rate", algorithm.rate, 0.0, 1.0, closed_low=False)
    for name in ("local_steps", "mean_steps"):
        if hasattr(algorithm, name):
            check_int(name, getattr(algorithm, name), 1)
    if getattr(algorithm, "levels", None) is not None:
        check_int("levels", algorithm.levels, 1)


class UpdateAveraging:
    """The server of FedAvg-type algorithms: the state is the global model x (zeros at the
    start); the messages are model updates, averaged with weights n_i and added to x."""

    def downlink_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))  # the global model in float32

    def start(self, problem: SoftmaxProblem) -> dict[str, Any]:
        return {"x": np.zeros((N_FEATURES, N_CLASSES))}

    def aggregate(self, problem: SoftmaxProblem, state: dict[str, Any], clients: np.ndarray,
                  messages: np.ndarray) -> None:
        state["x"] = state["x"] + engine.average(messages, problem.sizes[clients].astype(np.float64))

    def model(self, state: dict[str, Any]) -> np.ndarray:
        return state["x"]


@dataclasses.dataclass(frozen=True)
class FedAvg(UpdateAveraging):
    """Non-private FedAvg (the ceiling): ``local_steps`` minibatch SGD steps on Poisson samples
    at ``rate``, step ``lr``; the message is the model update in float32."""

    name: ClassVar[str] = "FedAvg (non-private)"
    lr: float = 0.5
    local_steps: int = 5
    rate: float = 0.05

    def __post_init__(self) -> None:
        check_hyperparameters(self)

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class DPFL(UpdateAveraging):
    """DPFL with a fixed number τ of local DP-SGD steps (ALI-DPFL's Algorithm 1; τ = 1 is
    DP-FedSGD): Poisson rate ``rate``, clipping ``clip``, step ``lr``; the message is the model
    update in float32. Each step is a sampled Gaussian release."""

    name: ClassVar[str] = "DPFL"
    lr: float = 0.5
    local_steps: int = 1
    rate: float = 0.05
    clip: float = 1.0

    def __post_init__(self) -> None:
        check_hyperparameters(self)

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, check_int("participations", participations, 1) * self.local_steps)

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class PrivateFedPAQ(UpdateAveraging):
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

    def __post_init__(self) -> None:
        check_hyperparameters(self)

    def message_bits(self, d: int) -> float:
        from fedrepro.dpfedpaq.quantizer import bits

        return float(bits(check_int("d", d, 1), self.levels))

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(1.0, check_int("participations", participations, 1))

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        return engine.fedpaq_update(problem, state["x"], client, local_steps=self.local_steps, rate=self.rate,
                                    lr=self.lr, clip=self.clip, noise_multiplier=noise_multiplier, levels=self.levels,
                                    rng=rng)


@dataclasses.dataclass(frozen=True)
class FedPLT:
    """Fed-PLT (v2 Algorithm 1, h = 0) with private local training: the coordinator's model is
    y = (1/N) Σ_i z_i; an active client runs ``local_steps`` (N_e) steps of noisy gradient
    descent, step ``lr`` (γ), on f_i(w) + ‖w − (2y − z_i)‖²/(2ρ) from its last local model
    x_i (:func:`engine.noisy_prox_steps`), and sends z_i + 2(x_i − y) in float32.

    The paper's eq. (13) assumes a Lipschitz loss; on MNIST the per-record gradients are
    clipped to ``clip`` so that each step is a Gaussian release of sensitivity C (the plan:
    N_e releases per message, no sampling)."""

    name: ClassVar[str] = "Fed-PLT (private)"
    lr: float = 0.3
    rho: float = 1.0
    local_steps: int = 2
    clip: float = 1.0

    def __post_init__(self) -> None:
        check_hyperparameters(self)

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def downlink_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))  # y in float32; z_i stays with the client

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(1.0, check_int("participations", participations, 1) * self.local_steps)

    def start(self, problem: SoftmaxProblem) -> dict[str, Any]:
        shape = (problem.n_devices, N_FEATURES, N_CLASSES)
        return {"z": np.zeros(shape), "x_local": np.zeros(shape), "y": np.zeros((N_FEATURES, N_CLASSES))}

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        y, z_i = state["y"], state["z"][client]
        w, sampled = engine.noisy_prox_steps(problem, state["x_local"][client], 2.0 * y - z_i, client,
                                             steps=self.local_steps, lr=self.lr, rho=self.rho, clip=self.clip,
                                             noise_multiplier=noise_multiplier, rng=rng)
        state["x_local"][client] = w  # the client's own memory: never sent
        return z_i + 2.0 * (w - y), sampled

    def aggregate(self, problem: SoftmaxProblem, state: dict[str, Any], clients: np.ndarray,
                  messages: np.ndarray) -> None:
        state["z"][clients] = messages
        state["y"] = state["z"].mean(axis=0)

    def model(self, state: dict[str, Any]) -> np.ndarray:
        return state["y"]


def rounds_within(budget_bits: float, clients_per_round: int, message_bits: float) -> int:
    """The number of whole rounds whose uplink (``clients_per_round`` messages of
    ``message_bits``) fits in ``budget_bits``."""
    budget = check_positive("budget_bits", budget_bits)
    m = check_int("clients_per_round", clients_per_round, 1)
    return int(math.floor(budget / (m * check_positive("message_bits", message_bits)) + 1e-9))


@functools.lru_cache(maxsize=256)
def _calibrated(plan: accounting.PrivacyPlan, epsilon: float, delta: float) -> float:
    return accounting.calibrate(plan, epsilon, delta)


def _evaluate(problem: SoftmaxProblem, x: np.ndarray) -> tuple[float, float]:
    if not np.all(np.isfinite(x)):
        return math.nan, math.nan
    return problem.accuracy(x), problem.loss(x)


def run(problem: SoftmaxProblem, algorithm: HeadToHeadAlgorithm, *, epsilon: float | None, delta: float,
        uplink_budget_bits: float,
        clients_per_round: int, seed: np.random.SeedSequence | int, eval_rounds: int = 10,
        progress: bool = False) -> dict[str, Any]:
    """One run of ``algorithm`` under an uplink budget (module docstring); ``epsilon=None`` for
    a non-private algorithm. Returns the rounds run, the uplink bits sent, the noise
    multiplier, the ε spent by the most frequent client (PLD; and RDP), the test accuracy and
    training loss at ``eval_rounds`` evenly spaced rounds (NaN once the model is no longer
    finite: the run stops there and ``diverged`` is set), and the per-record gradients computed."""
    algorithm = check_algorithm(algorithm)
    for attr in ("dim", "n_devices", "sizes"):
        if not hasattr(problem, attr):
            raise ParameterTypeError(f"problem must be a federated problem (a SoftmaxProblem or CNNProblem), "
                                     f"got {type(problem).__name__}")
    if epsilon is not None:
        check_positive("epsilon", epsilon)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    check_positive("uplink_budget_bits", uplink_budget_bits)
    check_int("clients_per_round", clients_per_round, 1, problem.n_devices)
    if not isinstance(seed, np.random.SeedSequence):
        check_int("seed", seed, 0)
    eval_rounds = check_int("eval_rounds", eval_rounds, 1)
    check_bool("progress", progress)
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
    sigma = _calibrated(plan, float(epsilon), delta) if plan is not None else 0.0
    rng = np.random.default_rng(run_ss)
    state = algorithm.start(problem)
    if hasattr(algorithm, "prepare"):
        algorithm.prepare(state, schedule, sigma)
    marks = sorted({max(1, round(rounds * (k + 1) / eval_rounds)) for k in range(eval_rounds)})
    acc, loss, sampled, diverged = [], [], 0, False
    steps = range(rounds)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=algorithm.name, leave=False)
    rounds_run = 0
    for k in steps:
        rounds_run = k + 1
        clients = schedule[k]
        msgs = []
        for c in clients:
            m, s = algorithm.client_message(problem, state, int(c), sigma, rng)
            msgs.append(m)
            sampled += s
        algorithm.aggregate(problem, state, clients, np.stack(msgs))
        finite = bool(np.isfinite(algorithm.model(state)).all())
        if k + 1 in marks or not finite:
            a, lo = _evaluate(problem, algorithm.model(state))
            acc.append(a)
            loss.append(lo)
        if not finite:
            diverged = True
            break
    acc += [math.nan] * (len(marks) - len(acc))
    loss += [math.nan] * (len(marks) - len(loss))
    spent = accounting.epsilon(plan, sigma, delta) if plan is not None else math.inf
    spent_rdp = accounting.epsilon(plan, sigma, delta, "rdp") if plan is not None else math.inf
    return {"rounds": rounds, "rounds_run": rounds_run, "uplink_bits": rounds_run * clients_per_round * bits,
            "downlink_bits": rounds_run * clients_per_round * algorithm.downlink_bits(d), "message_bits": bits,
            "participations": participations, "noise_multiplier": sigma, "epsilon_spent": spent,
            "epsilon_spent_rdp": spent_rdp, "eval_rounds": np.asarray(marks), "test_accuracy": np.asarray(acc),
            "train_loss": np.asarray(loss), "sampled_records": sampled, "diverged": diverged}
