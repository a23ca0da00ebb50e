"""The baselines of task T1 that show what the threat model costs: the same data, the same
accountant (:mod:`fedrepro.headtohead.accounting`, δ = 1e-5), other trust assumptions.

* **Non-private ceilings** of the private T1 algorithms (:class:`DPFLCeiling`,
  :class:`FedPAQCeiling`, :class:`FedPLTCeiling`): the same client computation with the
  per-record clipping and the noise removed (everything else as in
  :mod:`fedrepro.headtohead.algorithms`: the same steps, the same normalisation, the same
  quantizer, the same messages), run by the same driver
  (:func:`fedrepro.headtohead.algorithms.run`) under the same uplink budget. They bound what
  each algorithm could reach if privacy cost nothing.
* **Central DP-SGD** (:class:`CentralDPSGD`, :func:`run_central`; Abadi et al. 2016): a
  trusted curator holds every training record and runs DP-SGD on the pooled data: each step
  samples every record with probability q (Poisson), clips each per-record gradient to norm
  C, adds N(0, σ²C²I) to the clipped sum, divides by the expected batch qn and takes a step η
  (plus the regulariser μx). Record-level add/remove DP of the released model sequence: T
  sampled Gaussian releases, ``PrivacyPlan(q, T)``. Nothing is sent: the uplink budget does not
  bind it; it trains for a fixed number of epochs (T = round(epochs / q) steps).
* **Client-level DP-FedAvg with a trusted server** (:class:`DPFedAvgClient`,
  :func:`run_client_level`; McMahan et al. 2018, Algorithm 1 with uniform client weights and
  the fixed-denominator estimator): each round every client joins independently with
  probability q = (clients per round)/N (Poisson), runs FedAvg's local SGD (no clipping of
  records, no noise) and sends its update clipped to norm S in float32; the server adds
  N(0, σ²S²I) to the sum of the received updates, divides by the expected number qN of
  clients and adds the result to the model. The guarantee protects whole clients (add/remove
  one client) against everyone who sees the models, but the server sees every clipped update
  in the clear: against the server there is no protection. Accounting: R rounds of the
  sampled Gaussian mechanism at rate q, ``PrivacyPlan(q, R)``, calibrated by the same
  accountant. (A change of one record moves one clipped update by up to 2S: against the
  outside world the record-level guarantee is at worst that of a group of two clients.)
  The number of rounds R is the largest whose *expected* uplink (R·qN messages) fits in the
  budget; the realised uplink, reported, differs from it by the Poisson fluctuation of the
  number of messages (a few per cent at T1's budgets). Stopping on the realised count would
  make the number of releases depend on which clients exist, which the accounting does not
  cover.

Every driver returns the fields of :func:`fedrepro.headtohead.algorithms.run`, so that the T1
protocol (tuning, final runs, records) treats the baselines like the algorithms they bound.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive
from fedrepro.headtohead import accounting
from fedrepro.headtohead import softmax as engine
from fedrepro.headtohead.algorithms import FLOAT_BITS, FedPLT, UpdateAveraging, _calibrated, _evaluate
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["sgd_steps", "DPFLCeiling", "FedPAQCeiling", "FedPLTCeiling", "pooled", "CentralDPSGD", "run_central",
           "clip_update", "DPFedAvgClient", "server_step", "run_client_level"]


class _Curve:
    """The evaluation marks of a driver: the accuracy and loss at each mark (and at the first
    non-finite model, where the run stops), padded with NaN to one value per mark."""

    def __init__(self, problem: SoftmaxProblem, total: int, eval_rounds: int) -> None:
        self.problem = problem
        self.marks = sorted({max(1, round(total * (k + 1) / eval_rounds)) for k in range(eval_rounds)})
        self.acc: list[float] = []
        self.loss: list[float] = []

    def record(self, k: int, x: np.ndarray) -> bool:
        """Evaluates ``x`` after step/round ``k`` (0-based) where due; True when ``x`` is not finite."""
        finite = bool(np.isfinite(x).all())
        if k + 1 in self.marks or not finite:
            a, lo = _evaluate(self.problem, x)
            self.acc.append(a)
            self.loss.append(lo)
        return not finite

    def fields(self) -> dict[str, np.ndarray]:
        pad = [math.nan] * (len(self.marks) - len(self.acc))
        return {"eval_rounds": np.asarray(self.marks), "test_accuracy": np.asarray(self.acc + pad),
                "train_loss": np.asarray(self.loss + pad)}


def _sample(rng: np.random.Generator, start: int, n: int, rate: float) -> np.ndarray:
    """Poisson sample of the rows ``start .. start + n - 1`` at ``rate`` (n uniforms)."""
    return start + np.flatnonzero(rng.random(n) < rate)


# ----------------------------------------------------------------------------- ceilings

def sgd_steps(problem: SoftmaxProblem, x: np.ndarray, client: int, *, steps: int, rate: float, lr: float,
              rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """DPFL's local DP-SGD steps (:func:`fedrepro.headtohead.softmax.dpsgd_steps`) with the
    clipping and the noise removed: per step, a Poisson sample at ``rate``, the sum of the
    per-record gradients divided by the expected batch q·n_i, step ``lr`` (plus μx). Returns
    the model and the number of records sampled."""
    steps = check_int("steps", steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    lr = check_positive("lr", lr)
    rows_of = problem.device_rows(client)
    start, n = rows_of.start, rows_of.stop - rows_of.start
    x = np.array(x, dtype=np.float64, copy=True)
    sampled = 0
    for _ in range(steps):
        rows = _sample(rng, start, n, rate)
        sampled += rows.size
        g = engine.clipped_sum(problem, x, rows, None) / (rate * n)
        x -= lr * (g + problem.mu * x)
        if not np.isfinite(x).all():
            break
    return x, sampled


@dataclasses.dataclass(frozen=True)
class DPFLCeiling(UpdateAveraging):
    """DPFL (τ = ``local_steps``; τ = 1: DP-FedSGD) without clipping or noise
    (:func:`sgd_steps`); the message is the model update in float32. Not private."""

    name: ClassVar[str] = "DPFL ceiling (non-private)"
    lr: float = 0.5
    local_steps: int = 1
    rate: float = 0.05

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_int("local_steps", self.local_steps, 1)
        check_interval("rate", self.rate, 0.0, 1.0, closed_low=False)

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = sgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class FedPAQCeiling(UpdateAveraging):
    """Private FedPAQ's local update (:func:`fedrepro.headtohead.softmax.fedpaq_update`)
    without clipping or noise: E steps on Poisson samples at ``rate`` with the mean gradient
    over the realised batch (zero on an empty batch), then the quantizer Q_s (``levels=None``:
    float32). Not private."""

    name: ClassVar[str] = "FedPAQ ceiling (non-private)"
    lr: float = 0.5
    local_steps: int = 5
    rate: float = 0.05
    levels: int | None = None

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_int("local_steps", self.local_steps, 1)
        check_interval("rate", self.rate, 0.0, 1.0, closed_low=False)
        if self.levels is not None:
            check_int("levels", self.levels, 1)

    def message_bits(self, d: int) -> float:
        from fedrepro.dpfedpaq.quantizer import bits

        return float(bits(check_int("d", d, 1), self.levels))

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        from fedrepro.dpfedpaq import quantizer

        rows_of = problem.device_rows(client)
        start, n = rows_of.start, rows_of.stop - rows_of.start
        x0 = np.asarray(state["x"], dtype=np.float64)
        w = x0.copy()
        sampled = 0
        for _ in range(self.local_steps):
            rows = _sample(rng, start, n, self.rate)
            sampled += rows.size
            g = engine.clipped_sum(problem, w, rows, None) / max(rows.size, 1)
            w -= self.lr * (g + problem.mu * w)
            if not np.isfinite(w).all():
                return w - x0, sampled
        return quantizer.quantize((w - x0).reshape(-1), self.levels, rng).reshape(x0.shape), sampled


@dataclasses.dataclass(frozen=True)
class FedPLTCeiling:
    """Fed-PLT (:class:`fedrepro.headtohead.algorithms.FedPLT`) with exact local gradient
    steps: ``local_steps`` full-batch gradient steps on f_i(w) + ‖w − (2y − z_i)‖²/(2ρ), no
    clipping, no noise. Not private."""

    name: ClassVar[str] = "Fed-PLT ceiling (non-private)"
    lr: float = 0.3
    rho: float = 1.0
    local_steps: int = 2

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_positive("rho", self.rho)
        check_int("local_steps", self.local_steps, 1)

    message_bits = FedPLT.message_bits
    downlink_bits = FedPLT.downlink_bits
    start = FedPLT.start
    aggregate = FedPLT.aggregate
    model = FedPLT.model

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        y, z_i = state["y"], state["z"][client]
        v = 2.0 * y - z_i
        rows_of = problem.device_rows(client)
        rows = np.arange(rows_of.start, rows_of.stop)
        w = np.array(state["x_local"][client], dtype=np.float64, copy=True)
        for _ in range(self.local_steps):
            g = engine.clipped_sum(problem, w, rows, None)
            w -= self.lr * (g / rows.size + problem.mu * w + (w - v) / self.rho)
            if not np.isfinite(w).all():
                break
        state["x_local"][client] = w
        return z_i + 2.0 * (w - y), self.local_steps * rows.size


# ----------------------------------------------------------------------------- central DP-SGD

def pooled(problem: SoftmaxProblem) -> SoftmaxProblem:
    """The problem with every training record held by one party (the trusted curator): the
    same records, labels, regulariser and test set, one device."""
    from fedrepro.problems.softmax import SoftmaxProblem as Problem

    return Problem(problem.features, problem.labels, np.array([0, problem.labels.size]), problem.mu,
                   test_features=problem.test_features, test_labels=problem.test_labels)


@dataclasses.dataclass(frozen=True)
class CentralDPSGD:
    """DP-SGD on the pooled training data (module docstring): Poisson rate ``rate`` (q),
    clipping ``clip`` (C), step ``lr`` (η), ``epochs`` expected passes (T = round(epochs/q))."""

    name: ClassVar[str] = "central DP-SGD (trusted curator)"
    lr: float = 1.0
    clip: float = 1.0
    rate: float = 0.01
    epochs: float = 10.0

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_positive("clip", self.clip)
        check_interval("rate", self.rate, 0.0, 1.0, closed_low=False)
        check_positive("epochs", self.epochs)
        if self.steps < 1:
            raise ValueError(f"epochs {self.epochs!r} at rate {self.rate!r} make no step")

    @property
    def steps(self) -> int:
        """T = round(epochs / q)."""
        return int(round(self.epochs / self.rate))

    def privacy_plan(self) -> accounting.PrivacyPlan:
        """T sampled Gaussian releases at rate q (record level)."""
        return accounting.PrivacyPlan(self.rate, self.steps)

    def step(self, data: SoftmaxProblem, x: np.ndarray, noise_multiplier: float,
             rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """One DP-SGD step on the pooled problem ``data`` (:func:`pooled`): the DP-SGD step of
        :func:`fedrepro.headtohead.softmax.dpsgd_steps` on its single device. Returns the new
        model and the number of records sampled."""
        if data.n_devices != 1:
            raise ValueError(f"data must be a pooled problem (one device), got {data.n_devices} devices")
        return engine.dpsgd_steps(data, x, 0, steps=1, rate=self.rate, lr=self.lr, clip=self.clip,
                                  noise_multiplier=check_nonnegative("noise_multiplier", noise_multiplier), rng=rng)


def run_central(problem: SoftmaxProblem, algorithm: CentralDPSGD, *, epsilon: float, delta: float,
                uplink_budget_bits: float, clients_per_round: int, seed: np.random.SeedSequence | int,
                eval_rounds: int = 10) -> dict[str, Any]:
    """One run of central DP-SGD on the pooled training data of ``problem``, calibrated to
    exactly (``epsilon``, ``delta``) at the record level; the fields of
    :func:`fedrepro.headtohead.algorithms.run` ("rounds" are the T steps, "participations"
    the T releases every record may join, no bits are sent). ``uplink_budget_bits`` and
    ``clients_per_round`` are checked and otherwise unused: a curator sends nothing."""
    if not isinstance(algorithm, CentralDPSGD):
        raise TypeError(f"algorithm must be a CentralDPSGD, got {type(algorithm).__name__}")
    epsilon = check_positive("epsilon", epsilon)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    check_positive("uplink_budget_bits", uplink_budget_bits)
    check_int("clients_per_round", clients_per_round, 1)
    eval_rounds = check_int("eval_rounds", eval_rounds, 1)
    plan = algorithm.privacy_plan()
    sigma = _calibrated(plan, float(epsilon), delta)
    data = pooled(problem)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    rng = np.random.default_rng(ss)
    steps = algorithm.steps
    curve = _Curve(problem, steps, eval_rounds)
    x = np.zeros((N_FEATURES, N_CLASSES))
    sampled, diverged, run_steps = 0, False, 0
    for k in range(steps):
        run_steps = k + 1
        x, s = algorithm.step(data, x, sigma, rng)
        sampled += s
        if curve.record(k, x):
            diverged = True
            break
    return {"rounds": steps, "rounds_run": run_steps, "uplink_bits": 0.0, "downlink_bits": 0.0, "message_bits": 0.0,
            "participations": steps, "noise_multiplier": sigma,
            "epsilon_spent": accounting.epsilon(plan, sigma, delta),
            "epsilon_spent_rdp": accounting.epsilon(plan, sigma, delta, "rdp"), **curve.fields(),
            "sampled_records": sampled, "diverged": diverged}


# ----------------------------------------------------------------------------- client-level DP-FedAvg

def clip_update(update: np.ndarray, clip: float) -> np.ndarray:
    """``update`` scaled to norm at most ``clip`` (S): Δ·min(1, S/‖Δ‖)."""
    clip = check_positive("clip", clip)
    u = np.asarray(update, dtype=np.float64)
    norm = float(np.sqrt(np.sum(u * u)))
    return u * min(1.0, clip / max(norm, 1e-300))


def server_step(x: np.ndarray, clipped: np.ndarray, *, clip: float, noise_multiplier: float, expected_clients: float,
                rng: np.random.Generator) -> np.ndarray:
    """The trusted server's step of client-level DP-FedAvg: x + (Σ_k Δ̄_k + N(0, σ²S²I))/(qN),
    ``clipped`` the (m, 785, 10) clipped updates received (m may be 0), ``expected_clients``
    qN (the noise: one (785, 10) draw of standard normals from ``rng``)."""
    clip = check_positive("clip", clip)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    expected = check_positive("expected_clients", expected_clients)
    x = np.asarray(x, dtype=np.float64)
    total = np.asarray(clipped, dtype=np.float64).reshape(-1, *x.shape).sum(axis=0)
    return x + (total + sigma * clip * rng.standard_normal(x.shape)) / expected


@dataclasses.dataclass(frozen=True)
class DPFedAvgClient:
    """Client-level DP-FedAvg with a trusted server (module docstring): clients join each
    round with probability ``client_rate`` (q); local FedAvg SGD (``local_steps`` steps on
    Poisson samples at ``rate``, step ``lr``, mean over the realised batch); the update
    clipped to ``clip`` (S) in float32."""

    name: ClassVar[str] = "client-level DP-FedAvg (trusted server)"
    lr: float = 0.3
    local_steps: int = 5
    rate: float = 0.2
    clip: float = 1.0

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_int("local_steps", self.local_steps, 1)
        check_interval("rate", self.rate, 0.0, 1.0, closed_low=False)
        check_positive("clip", self.clip)

    def message_bits(self, d: int) -> float:
        return float(FLOAT_BITS * check_int("d", d, 1))

    def privacy_plan(self, rounds: int, client_rate: float) -> accounting.PrivacyPlan:
        """R sampled Gaussian releases at client rate q (client level)."""
        return accounting.PrivacyPlan(client_rate, check_int("rounds", rounds, 1))

    def client_update(self, problem: SoftmaxProblem, x: np.ndarray, client: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """The clipped local update of ``client`` from ``x`` and the records it sampled."""
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        u = w - np.asarray(x, dtype=np.float64)
        if not np.isfinite(u).all():
            return u, sampled
        return clip_update(u, self.clip), sampled


def run_client_level(problem: SoftmaxProblem, algorithm: DPFedAvgClient, *, epsilon: float, delta: float,
                     uplink_budget_bits: float, clients_per_round: int, seed: np.random.SeedSequence | int,
                     eval_rounds: int = 10) -> dict[str, Any]:
    """One run of client-level DP-FedAvg (module docstring) with client rate
    q = ``clients_per_round``/N, R = the rounds whose expected uplink fits in
    ``uplink_budget_bits``, σ calibrated to exactly (``epsilon``, ``delta``) at the client
    level; the fields of :func:`fedrepro.headtohead.algorithms.run` ("participations": the most
    messages any client sent; the uplink bits: those realised)."""
    if not isinstance(algorithm, DPFedAvgClient):
        raise TypeError(f"algorithm must be a DPFedAvgClient, got {type(algorithm).__name__}")
    epsilon = check_positive("epsilon", epsilon)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    budget = check_positive("uplink_budget_bits", uplink_budget_bits)
    n = problem.n_devices
    m = check_int("clients_per_round", clients_per_round, 1, n)
    eval_rounds = check_int("eval_rounds", eval_rounds, 1)
    q = m / n
    bits = algorithm.message_bits(problem.dim)
    rounds = int(math.floor(budget / (q * n * bits) + 1e-9))
    if rounds < 1:
        raise ValueError(f"the uplink budget {uplink_budget_bits!r} bits does not pay for one round of "
                         f"{m} expected messages of {bits:.0f} bits")
    plan = algorithm.privacy_plan(rounds, q)
    sigma = _calibrated(plan, float(epsilon), delta)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    sampling_ss, run_ss = ss.spawn(2)
    sampling = np.random.default_rng(sampling_ss)
    rng = np.random.default_rng(run_ss)
    curve = _Curve(problem, rounds, eval_rounds)
    x = np.zeros((N_FEATURES, N_CLASSES))
    counts = np.zeros(n, dtype=np.int64)
    sampled, diverged, rounds_run = 0, False, 0
    for k in range(rounds):
        rounds_run = k + 1
        clients = np.flatnonzero(sampling.random(n) < q)
        counts[clients] += 1
        updates = []
        for c in clients:
            u, s = algorithm.client_update(problem, x, int(c), rng)
            updates.append(u)
            sampled += s
        stacked = np.stack(updates) if updates else np.zeros((0, N_FEATURES, N_CLASSES))
        x = server_step(x, stacked, clip=algorithm.clip, noise_multiplier=sigma, expected_clients=q * n, rng=rng)
        if curve.record(k, x):
            diverged = True
            break
    sent = int(counts.sum())
    return {"rounds": rounds, "rounds_run": rounds_run, "uplink_bits": sent * bits, "downlink_bits": sent * bits,
            "message_bits": bits, "participations": int(counts.max()), "noise_multiplier": sigma,
            "epsilon_spent": accounting.epsilon(plan, sigma, delta),
            "epsilon_spent_rdp": accounting.epsilon(plan, sigma, delta, "rdp"), **curve.fields(),
            "sampled_records": sampled, "diverged": diverged}
