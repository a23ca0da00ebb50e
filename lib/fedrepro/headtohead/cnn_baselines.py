"""The baselines of task T2 (the ALI-DPFL CNN on Fashion-MNIST, :mod:`fedrepro.headtohead.t2_task`):
T1's baselines (:mod:`fedrepro.headtohead.baselines`) on the CNN, with the same accountant
(:mod:`fedrepro.headtohead.accounting`, δ = 1e-5) and the CNN engine's client computations
(:mod:`fedrepro.headtohead.cnn`: per-record gradients, clipping, noise).

* **Non-private ceilings** of the private T2 algorithms (:mod:`fedrepro.headtohead.cnn_algorithms`):
  the same client computation with the per-record clipping and the noise removed, run by the
  same driver (:func:`fedrepro.headtohead.algorithms.run`) under the same uplink budget.

  - :class:`DPFLCeilingCNN` (DP-FedSGD, DPFL): τ steps on a Poisson sample at rate q, the
    plain gradient sum divided by the expected batch q·n_i (:func:`sgd_steps`).
  - :class:`FedPAQCeilingCNN` (private FedPAQ, float32 or quantized): E steps of the mean
    gradient over the realised Poisson sample, then the quantizer Q_s.
  - :class:`FedPLTCeilingCNN` (Fed-PLT, subsampled local steps): N_e steps on
    f_i(w) + ‖w − v‖²/(2ρ) with the data term the plain sum over a Poisson sample divided by
    q·n_i (:func:`prox_sgd_steps`).

  Removing the noise removes its draws: a ceiling's random stream is its algorithm's without
  the d standard normals of each noisy release, so with one local step (or noise drawn after
  the last step, as in FedPAQ) it is its algorithm with C → ∞ and σ = 0 on the same draws.
* **Central DP-SGD** (:class:`CentralDPSGDCNN`, :func:`run_central`; Abadi et al. 2016): a
  trusted curator holds the pooled training records of the ten clients (:func:`pooled`) and
  runs DP-SGD on them: each step samples every record with probability q (Poisson), clips
  each per-record gradient to C, adds N(0, σ²C²I) to the clipped sum and divides by the
  expected batch q·n (:func:`fedrepro.headtohead.cnn.dpsgd_steps` on one client holding
  everything). Record-level add/remove DP of the released models: T sampled Gaussian
  releases, ``PrivacyPlan(q, T)``, T = round(epochs/q). Nothing is sent.
* **Client-level DP-FedAvg with a trusted server** (:class:`DPFedAvgClientCNN`,
  :func:`run_client_level`; McMahan et al. 2018, Algorithm 1 with uniform weights and the
  fixed-denominator estimator): each round every client joins with probability
  q_c = (clients per round)/N (Poisson; on T2, 10 of 10: q_c = 1, every client every round,
  and the accountant composes plain Gaussian releases), runs FedAvg's local SGD on the CNN
  (mean over the realised batch, no clipping, no noise) and sends its update clipped to S
  (:func:`fedrepro.headtohead.baselines.clip_update`; a float32 message); the server adds
  N(0, σ²S²I) to the sum and divides by q_c·N
  (:func:`fedrepro.headtohead.baselines.server_step`). Client-level guarantee against
  whoever sees the models, none against the server. R is the largest number of rounds whose
  *expected* uplink fits in the budget, as on T1.

Every driver returns the fields of :func:`fedrepro.headtohead.algorithms.run` (the loss is the
evaluation set's, as T2 reports it), so that T2's protocol treats the baselines like the
algorithms they bound.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np
import torch

from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive
from fedrepro.headtohead import accounting
from fedrepro.headtohead import baselines as t1
from fedrepro.headtohead import cnn as engine
from fedrepro.headtohead.algorithms import FedPLT, _calibrated
from fedrepro.headtohead.cnn import CNNProblem
from fedrepro.headtohead.cnn_algorithms import FedPLTCNN

__all__ = ["sgd_steps", "prox_sgd_steps", "DPFLCeilingCNN", "FedPAQCeilingCNN", "FedPLTCeilingCNN", "pooled",
           "CentralDPSGDCNN", "run_central", "DPFedAvgClientCNN", "run_client_level"]


# ----------------------------------------------------------------------------- ceilings

def prox_sgd_steps(problem: CNNProblem, w0: np.ndarray, client: int, *, steps: int, rate: float, lr: float,
                   v: np.ndarray | None = None, rho: float | None = None,
                   rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``steps`` steps of ``client`` from ``w0``: per step a Poisson sample at ``rate`` (q),
    the plain per-record gradient sum divided by the expected batch q·n_i, plus
    (w − ``v``)/``rho`` when ``v`` is given (Fed-PLT's proximal term); step ``lr``. This is
    :func:`fedrepro.headtohead.cnn.noisy_prox_steps` (``v`` given) or DP-SGD's step
    (``v=None``) with the clipping and the noise removed. Returns the model and the number
    of records sampled."""
    steps = check_int("steps", steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    lr = check_positive("lr", lr)
    if (v is None) != (rho is None):
        raise ValueError("v and rho must be given together (the proximal term) or not at all")
    v_t = None
    if v is not None:
        rho = check_positive("rho", rho)
        v_t = torch.from_numpy(np.asarray(v, dtype=np.float32)).to(problem.device)
    n = int(problem.sizes[client])
    engine.load_into(problem.net, w0)
    sampled = 0
    for _ in range(steps):
        rows = engine._sample(rng, n, rate)
        sampled += rows.size
        g = engine._gradient_sum(problem, client, rows, None) / (rate * n)
        if v_t is not None:
            with torch.no_grad():
                w = torch.cat([p.reshape(-1) for p in problem.net.parameters()])
            g = g + (w - v_t) / rho
        if not engine._step(problem.net, g, lr):
            break
    return engine.flat_parameters(problem.net), sampled


def sgd_steps(problem: CNNProblem, x: np.ndarray, client: int, *, steps: int, rate: float, lr: float,
              rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """DPFL's local DP-SGD steps on the CNN (:func:`fedrepro.headtohead.cnn.dpsgd_steps`) with
    the clipping and the noise removed: the gradient sum over the Poisson sample divided by
    the expected batch q·n_i (:func:`prox_sgd_steps` without the proximal term)."""
    return prox_sgd_steps(problem, x, client, steps=steps, rate=rate, lr=lr, rng=rng)


class _CNNStart:
    def start(self, problem: CNNProblem) -> dict[str, Any]:
        return {"x": problem.initial_model()}


@dataclasses.dataclass(frozen=True)
class DPFLCeilingCNN(_CNNStart, t1.DPFLCeiling):
    """:class:`~fedrepro.headtohead.cnn_algorithms.DPFLCNN` (τ = ``local_steps``; τ = 1:
    DP-FedSGD) without clipping or noise (:func:`sgd_steps`); the message is the model update
    in float32. Not private."""

    lr: float = 0.5
    rate: float = 0.015

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = sgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class FedPAQCeilingCNN(_CNNStart, t1.FedPAQCeiling):
    """:class:`~fedrepro.headtohead.cnn_algorithms.PrivateFedPAQCNN` without clipping or noise:
    E steps of the mean gradient over a Poisson sample at ``rate`` (zero on an empty sample:
    :func:`fedrepro.headtohead.cnn.dpsgd_steps` with ``clip=None``), then Q_s (``levels=None``:
    float32). Not private."""

    lr: float = 0.5
    rate: float = 0.015

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        from fedrepro.dpfedpaq import quantizer

        x0 = np.asarray(state["x"], dtype=np.float64)
        w, sampled = engine.dpsgd_steps(problem, x0, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        u = w - x0
        if not np.isfinite(u).all():  # diverged: returned as it is, unquantized
            return u, sampled
        return quantizer.quantize(u, self.levels, rng), sampled


@dataclasses.dataclass(frozen=True)
class FedPLTCeilingCNN:
    """:class:`~fedrepro.headtohead.cnn_algorithms.FedPLTCNN` without clipping or noise:
    ``local_steps`` subsampled steps on f_i(w) + ‖w − (2y − z_i)‖²/(2ρ) at rate ``rate``
    (:func:`prox_sgd_steps`). Not private."""

    name: ClassVar[str] = "Fed-PLT ceiling (non-private)"
    lr: float = 0.5
    rho: float = 1.0
    local_steps: int = 2
    rate: float = 0.015

    def __post_init__(self) -> None:
        check_positive("lr", self.lr)
        check_positive("rho", self.rho)
        check_int("local_steps", self.local_steps, 1)
        check_interval("rate", self.rate, 0.0, 1.0, closed_low=False)

    message_bits = FedPLT.message_bits
    downlink_bits = FedPLT.downlink_bits
    start = FedPLTCNN.start
    aggregate = FedPLT.aggregate
    model = FedPLT.model

    def privacy_plan(self, participations: int) -> None:
        return None

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        y, z_i = state["y"], state["z"][client]
        w, sampled = prox_sgd_steps(problem, state["x_local"][client], client, steps=self.local_steps,
                                    rate=self.rate, lr=self.lr, v=2.0 * y - z_i, rho=self.rho, rng=rng)
        state["x_local"][client] = w  # the client's own memory: never sent
        return z_i + 2.0 * (w - y), sampled


# ----------------------------------------------------------------------------- central DP-SGD

def pooled(problem: CNNProblem) -> CNNProblem:
    """The problem with every training record held by one party (the trusted curator): the
    clients' records concatenated in client order, the same evaluation set and the same
    seeded initial model, on the same device."""
    x = torch.cat(problem.xs).cpu().numpy()
    y = torch.cat(problem.ys).cpu().numpy()
    return CNNProblem([(x, y)], problem.eval_x.cpu().numpy(), problem.eval_y.cpu().numpy(),
                      init_seed=problem.init_seed, device=problem.device)


@dataclasses.dataclass(frozen=True)
class CentralDPSGDCNN(t1.CentralDPSGD):
    """DP-SGD on the pooled T2 training data (module docstring): Poisson rate ``rate`` (q),
    clipping ``clip`` (C), step ``lr`` (η), ``epochs`` expected passes (T = round(epochs/q));
    the defaults are ALI-DPFL's (q = 0.015, C = 0.1, η = 0.5)."""

    lr: float = 0.5
    clip: float = 0.1
    rate: float = 0.015
    epochs: float = 2.0

    def step(self, data: CNNProblem, x: np.ndarray, noise_multiplier: float, rng: np.random.Generator,
             steps: int = 1) -> tuple[np.ndarray, int]:
        """``steps`` DP-SGD steps on the pooled problem ``data`` (:func:`pooled`) from ``x``:
        :func:`fedrepro.headtohead.cnn.dpsgd_steps` on its single client. Returns the new
        model and the number of records sampled."""
        if data.n_devices != 1:
            raise ValueError(f"data must be a pooled problem (one device), got {data.n_devices} devices")
        return engine.dpsgd_steps(data, x, 0, steps=steps, rate=self.rate, lr=self.lr, clip=self.clip,
                                  noise_multiplier=check_nonnegative("noise_multiplier", noise_multiplier), rng=rng)


def _checked(epsilon: float, delta: float, uplink_budget_bits: float, eval_rounds: int) -> tuple[float, float, int]:
    epsilon = check_positive("epsilon", epsilon)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    check_positive("uplink_budget_bits", uplink_budget_bits)
    return epsilon, delta, check_int("eval_rounds", eval_rounds, 1)


def _seed(seed: np.random.SeedSequence | int) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(check_int("seed", seed, 0))


def run_central(problem: CNNProblem, algorithm: CentralDPSGDCNN, *, epsilon: float, delta: float,
                uplink_budget_bits: float, clients_per_round: int, seed: np.random.SeedSequence | int,
                eval_rounds: int = 10) -> dict[str, Any]:
    """One run of central DP-SGD on the pooled training data of ``problem`` from its initial
    model, calibrated to exactly (``epsilon``, ``delta``) at the record level; the fields of
    :func:`fedrepro.headtohead.algorithms.run` ("rounds": the T steps; "participations": the
    T releases every record may join; no bits are sent). ``uplink_budget_bits`` and
    ``clients_per_round`` are checked and otherwise unused: a curator sends nothing."""
    if not isinstance(algorithm, CentralDPSGDCNN):
        raise TypeError(f"algorithm must be a CentralDPSGDCNN, got {type(algorithm).__name__}")
    epsilon, delta, eval_rounds = _checked(epsilon, delta, uplink_budget_bits, eval_rounds)
    check_int("clients_per_round", clients_per_round, 1)
    plan = algorithm.privacy_plan()
    sigma = _calibrated(plan, float(epsilon), delta)
    data = pooled(problem)
    rng = np.random.default_rng(_seed(seed))
    steps = algorithm.steps
    curve = t1._Curve(problem, steps, eval_rounds)
    x = data.initial_model()
    sampled, diverged, done = 0, False, 0
    for k in range(steps):
        done = k + 1
        x, s = algorithm.step(data, x, sigma, rng)
        sampled += s
        if curve.record(k, x):
            diverged = True
            break
    return {"rounds": steps, "rounds_run": done, "uplink_bits": 0.0, "downlink_bits": 0.0, "message_bits": 0.0,
            "participations": steps, "noise_multiplier": sigma, "epsilon_spent": accounting.epsilon(plan, sigma, delta),
            "epsilon_spent_rdp": accounting.epsilon(plan, sigma, delta, "rdp"), **curve.fields(),
            "sampled_records": sampled, "diverged": diverged}


# ----------------------------------------------------------------------------- client-level DP-FedAvg

@dataclasses.dataclass(frozen=True)
class DPFedAvgClientCNN(t1.DPFedAvgClient):
    """Client-level DP-FedAvg with a trusted server on the CNN (module docstring): local
    FedAvg SGD (``local_steps`` steps on Poisson samples at ``rate``, step ``lr``, mean over
    the realised batch), the update clipped to ``clip`` (S)."""

    lr: float = 0.1
    local_steps: int = 5
    rate: float = 0.015
    clip: float = 1.0

    def client_update(self, problem: CNNProblem, x: np.ndarray, client: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """The clipped local update of ``client`` from ``x`` and the records it sampled."""
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        u = w - np.asarray(x, dtype=np.float64)
        if not np.isfinite(u).all():
            return u, sampled
        return t1.clip_update(u, self.clip), sampled


def run_client_level(problem: CNNProblem, algorithm: DPFedAvgClientCNN, *, epsilon: float, delta: float,
                     uplink_budget_bits: float, clients_per_round: int, seed: np.random.SeedSequence | int,
                     eval_rounds: int = 10) -> dict[str, Any]:
    """One run of client-level DP-FedAvg on the CNN (module docstring) from the problem's
    initial model, client rate q = ``clients_per_round``/N, R = the rounds whose expected
    uplink fits in ``uplink_budget_bits``, σ calibrated to exactly (``epsilon``, ``delta``)
    at the client level; the fields of :func:`fedrepro.headtohead.algorithms.run`
    ("participations": the most messages any client sent; the uplink bits: those realised).
    The random streams are those of :func:`fedrepro.headtohead.baselines.run_client_level`:
    the client sampling from the first child of ``seed``, the local SGD and the server's
    noise (after the round's clients, d normals) from the second."""
    if not isinstance(algorithm, DPFedAvgClientCNN):
        raise TypeError(f"algorithm must be a DPFedAvgClientCNN, got {type(algorithm).__name__}")
    epsilon, delta, eval_rounds = _checked(epsilon, delta, uplink_budget_bits, eval_rounds)
    n = problem.n_devices
    m = check_int("clients_per_round", clients_per_round, 1, n)
    q = m / n
    bits = algorithm.message_bits(problem.dim)
    rounds = int(math.floor(uplink_budget_bits / (q * n * bits) + 1e-9))
    if rounds < 1:
        raise ValueError(f"the uplink budget {uplink_budget_bits!r} bits does not pay for one round of "
                         f"{m} expected messages of {bits:.0f} bits")
    plan = algorithm.privacy_plan(rounds, q)
    sigma = _calibrated(plan, float(epsilon), delta)
    sampling_ss, run_ss = _seed(seed).spawn(2)
    sampling = np.random.default_rng(sampling_ss)
    rng = np.random.default_rng(run_ss)
    curve = t1._Curve(problem, rounds, eval_rounds)
    x = problem.initial_model()
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
        stacked = np.stack(updates) if updates else np.zeros((0, x.size))
        x = t1.server_step(x, stacked, clip=algorithm.clip, noise_multiplier=sigma, expected_clients=q * n, rng=rng)
        if curve.record(k, x):
            diverged = True
            break
    sent = int(counts.sum())
    return {"rounds": rounds, "rounds_run": rounds_run, "uplink_bits": sent * bits, "downlink_bits": sent * bits,
            "message_bits": bits, "participations": int(counts.max()), "noise_multiplier": sigma,
            "epsilon_spent": accounting.epsilon(plan, sigma, delta),
            "epsilon_spent_rdp": accounting.epsilon(plan, sigma, delta, "rdp"), **curve.fields(),
            "sampled_records": sampled, "diverged": diverged}
