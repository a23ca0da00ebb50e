"""The FedPAQ family and privacy-augmented FedPAQ (Mohammadi et al., Alg. 1–2; spec §3).

All are instances of the general loop of Alg. 1 (server step size 1): in round k the server
draws S_k, M of N devices uniformly without replacement; each scheduled device runs E local
steps from x_k with η_k = η₀/(1 + kE/τ) (τ = 100 in the paper) and sends Δx_i; the server sets
x_{k+1} = x_k + (1/M) Σ_{i∈S_k} Δx_i.

* :func:`distributed_sgd` (eq. 3): M = N, E = 1, no compression;
* :func:`fedavg` (eqs. 4–5): E local SGD steps, Δx_i = y_E − x_k;
* :func:`fedpaq` (eq. 6): Δx_i = Q_s(y_E − x_k), Q_s of eq. (20);
* :func:`scaffold` (eqs. 7–9): local direction g_i − c_i + c, option-II control variates
  c_i⁺ = c_i − c − Δx_i/(Eη_k), c ← c + (1/N) Σ Δc_i; uploads 2 messages;
* :func:`private_fedpaq` (Alg. 2): subsample of E·b_i records (γ_i = E·b_i/n_i,
  b_i = ⌊γn_i/E⌋), E disjoint batches, per-sample clipping at C, Gaussian noise of std
  σ_{i,k} = (σ/Δ)_i·Δ_{i,k} added to u_i, then Q_s (:mod:`.noise` for Δ and σ/Δ);
  ``profile="authors_code"`` emulates the authors' public code instead (spec §9: E epochs of
  batches of 64 over ⌊γn_i⌋ records, batch-gradient clipping, noise with Δ = C/n_i) — never
  the default.

Randomness: one ``SeedSequence`` per run spawns independent streams, one per purpose
(:data:`STREAMS`: scheduling, mini-batches, subsampling, quantizer, noise), so that e.g. the
schedule of devices is the same for runs that differ only in their privacy parameters.
One round of Alg. 2 after scheduling is :func:`private_round` (float32 local models in
class-major layout, float32 noise, the quantizer's average; the loops between the BLAS
products compiled by :mod:`._compiled`; ``benchmarks/dpfedpaq_round.py`` times it).
Every run returns a :class:`History`: the metrics at the evaluation rounds, the cumulative
uplink bits (K·M·β(s) counted message by message), the mean update and noise norms per round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_positive
from fedrepro.dpfedpaq import local as _local
from fedrepro.dpfedpaq.noise import CALIBRATIONS, SENSITIVITIES, add_noise, noise_multipliers, sensitivity
from fedrepro.dpfedpaq.quantizer import bits, quantize, quantized_mean, row_norms
from fedrepro.privacy.validate import check_delta
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = [
    "MIN_CLIP",
    "PROFILES",
    "STREAMS",
    "History",
    "RoundResult",
    "check_privacy_args",
    "distributed_sgd",
    "fedavg",
    "fedpaq",
    "learning_rate",
    "private_batch_sizes",
    "private_fedpaq",
    "private_round",
    "scaffold",
]

STREAMS: tuple[str, ...] = ("scheduling", "batches", "subsampling", "quantizer", "noise")
PROFILES: tuple[str, ...] = ("paper", "authors_code")


def learning_rate(k: int | np.ndarray, local_steps: int, lr0: float = 0.1, decay_iters: float = 100.0):
    """η_k = η₀/(1 + kE/τ) (Sec. IV; τ = ``decay_iters`` = 100): depends on kE only.

    Needs rounds k ≥ 0 (an integer or an integer array), E ≥ 1, η₀ > 0 and τ > 0, so that
    every η_k is positive."""
    local_steps = check_int("local_steps (E)", local_steps, 1)
    lr0 = check_positive("lr0 (initial learning rate)", lr0)
    decay_iters = check_positive("decay_iters (learning-rate decay scale tau)", decay_iters)
    karr = np.asarray(k)
    if karr.dtype.kind not in "iuf":
        raise ParameterTypeError(f"k (round) must be an integer or integer array in [0, inf), got {k!r}")
    if karr.dtype.kind not in "iu" or np.any(karr < 0):
        raise ValueError(f"k (round) must be an integer or integer array in [0, inf), got {k!r}")
    return lr0 / (1.0 + karr * local_steps / decay_iters)


@dataclass
class History:
    """Metrics of one run at the evaluation rounds (``rounds``; iterations = rounds·E).

    ``loss``: mean training cross-entropy over all samples; ``accuracy``: test accuracy (nan
    without a test set or when not asked); ``bits``: cumulative uplink bits after each
    evaluated round; ``update_norm``/``noise_norm``: per round, mean over scheduled devices of
    ‖u_i‖ and ‖z_i‖; ``x``: the final model.
    """

    rounds: np.ndarray
    local_steps: int
    loss: np.ndarray
    accuracy: np.ndarray
    bits: np.ndarray
    update_norm: np.ndarray
    noise_norm: np.ndarray
    x: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def iterations(self) -> np.ndarray:
        return self.rounds * self.local_steps

    def to_dict(self, *, with_model: bool = False) -> dict[str, Any]:
        out = {"rounds": self.rounds, "iterations": self.iterations, "loss": self.loss,
               "accuracy": self.accuracy, "bits": self.bits, "update_norm": self.update_norm,
               "noise_norm": self.noise_norm, **self.info}
        if with_model:
            out["x"] = self.x
        return out


def _streams(seed: int | np.random.SeedSequence) -> dict[str, np.random.Generator]:
    if isinstance(seed, np.random.SeedSequence):
        ss = seed
    else:
        ss = np.random.SeedSequence(check_int("seed", seed, 0))
    return {name: np.random.Generator(np.random.PCG64(child))
            for name, child in zip(STREAMS, ss.spawn(len(STREAMS)), strict=True)}


def _eval_rounds(eval_rounds: Sequence[int] | None, rounds: int) -> np.ndarray:
    if eval_rounds is None:
        return np.arange(rounds + 1)
    ev = np.unique(np.asarray(eval_rounds))
    if ev.dtype.kind not in "iu" or ev.size == 0 or ev[0] < 0 or ev[-1] > rounds:
        raise ValueError(f"eval_rounds must be integers in [0, rounds={rounds}]")
    return ev


def _check_common(problem: SoftmaxProblem, rounds: int, local_steps: int, m_per_round: int,
                  lr0: float, decay_iters: float, q_levels: int | None) -> tuple[int, int, int, float, float]:
    if not isinstance(problem, SoftmaxProblem):
        raise ValueError(f"problem must be a SoftmaxProblem, got {type(problem).__name__}")
    rounds = check_int("rounds (K)", rounds, 1)
    local_steps = check_int("local_steps (E)", local_steps, 1)
    m_per_round = check_int(f"m_per_round (M, at most N={problem.n_devices})", m_per_round, 1,
                            problem.n_devices)
    lr0 = check_positive("lr0 (initial learning rate)", lr0)
    decay_iters = check_positive("decay_iters (learning-rate decay scale)", decay_iters)
    if q_levels is not None:
        check_int("q_levels (s)", q_levels, 1)
    return rounds, local_steps, m_per_round, lr0, decay_iters


class _Recorder:
    def __init__(self, problem: SoftmaxProblem, rounds: int, eval_rounds: np.ndarray, accuracy: bool):
        self.problem, self.ev, self.acc = problem, eval_rounds, accuracy
        self.loss = np.full(eval_rounds.size, np.nan)
        self.accuracy = np.full(eval_rounds.size, np.nan)
        self.bits = np.zeros(eval_rounds.size)
        self.update_norm = np.full(rounds, np.nan)
        self.noise_norm = np.zeros(rounds)
        self.total_bits = 0.0
        self._next = 0

    def record(self, k: int, x: np.ndarray) -> None:
        while self._next < self.ev.size and self.ev[self._next] == k:
            j = self._next
            self.loss[j] = self.problem.loss(x)
            if self.acc and self.problem.test_features is not None:
                self.accuracy[j] = self.problem.accuracy(x)
            self.bits[j] = self.total_bits
            self._next += 1

    def history(self, local_steps: int, x: np.ndarray, info: dict[str, Any]) -> History:
        return History(self.ev, local_steps, self.loss, self.accuracy, self.bits,
                       self.update_norm, self.noise_norm, x, info)


def _norms(u: np.ndarray) -> np.ndarray:
    return row_norms(u.reshape(u.shape[0], -1))


def _check_batch_size(problem: SoftmaxProblem, batch_size: int | None) -> int | None:
    if batch_size is None:
        return None
    return check_int(f"batch_size (at most min n_i = {int(problem.sizes.min())})",
                     batch_size, 1, int(problem.sizes.min()))


def _check_x0(x0: np.ndarray) -> np.ndarray:
    arr = np.asarray(x0)
    shapes = ((N_FEATURES, N_CLASSES), (N_FEATURES * N_CLASSES,))
    if arr.shape not in shapes or arr.dtype.kind not in "fiu" or not np.all(np.isfinite(arr)):
        raise ValueError(f"x0 must be a finite real array of shape ({N_FEATURES}, {N_CLASSES}) or "
                         f"({N_FEATURES * N_CLASSES},), got shape {arr.shape}")
    return np.array(arr, dtype=float).reshape(N_FEATURES, N_CLASSES)


def _schedule_round(problem: SoftmaxProblem, rng: dict[str, np.random.Generator], m_per_round: int,
                    local_steps: int, batch_size: int | None) -> tuple[np.ndarray, _local.Schedule]:
    """S_k (M of N devices uniformly without replacement, sorted; stream ``scheduling``) and the
    mini-batches of its E local steps: fresh batches of ``batch_size`` (stream ``batches``) or,
    with ``batch_size=None``, the full local data sets (FedPAQ and SCAFFOLD)."""
    devices = np.sort(rng["scheduling"].choice(problem.n_devices, m_per_round, replace=False))
    if batch_size is None:
        return devices, _local.full_batches(problem, devices, local_steps)
    return devices, _local.fresh_batches(problem, devices, local_steps, batch_size, rng["batches"])


def fedpaq(problem: SoftmaxProblem, *, rounds: int, local_steps: int, m_per_round: int,
           batch_size: int | None = 64, q_levels: int | None = 10, lr0: float = 0.1,
           decay_iters: float = 100.0, seed: int | np.random.SeedSequence = 0,
           eval_rounds: Sequence[int] | None = None, accuracy: bool = False,
           x0: np.ndarray | None = None) -> History:
    """FedPAQ (eq. 6): E local SGD steps on fresh batches of ``batch_size`` (``None``: the
    full local dataset, i.e. local gradient descent), Δx_i = Q_s(y_E − x_k)
    (``q_levels=None``: no quantization, FedAvg)."""
    rounds, local_steps, m_per_round, lr0, decay_iters = _check_common(
        problem, rounds, local_steps, m_per_round, lr0, decay_iters, q_levels)
    batch_size = _check_batch_size(problem, batch_size)
    rng = _streams(seed)
    ev = _eval_rounds(eval_rounds, rounds)
    rec = _Recorder(problem, rounds, ev, accuracy)
    x = np.zeros((N_FEATURES, N_CLASSES)) if x0 is None else _check_x0(x0)
    beta = bits(problem.dim, q_levels)
    for k in range(rounds):
        rec.record(k, x)
        devices, sched = _schedule_round(problem, rng, m_per_round, local_steps, batch_size)
        lr = float(learning_rate(k, local_steps, lr0, decay_iters))
        # float32, computed class-major; the quantizer reads it in the model's index order
        u = _local.class_major_updates(problem, x, sched, lr)
        rec.update_norm[k] = float(np.mean(_norms(u)))
        x = x + quantized_mean(u.transpose(0, 2, 1), q_levels, rng["quantizer"])
        rec.total_bits += m_per_round * beta
    rec.record(rounds, x)
    return rec.history(local_steps, x, {"bits_per_message": beta})


def fedavg(problem: SoftmaxProblem, **kwargs: Any) -> History:
    """FedAvg (eqs. 4–5): :func:`fedpaq` without quantization."""
    if "q_levels" in kwargs:
        raise ValueError("fedavg takes no q_levels (no quantization); use fedpaq")
    return fedpaq(problem, q_levels=None, **kwargs)


def distributed_sgd(problem: SoftmaxProblem, *, rounds: int, batch_size: int | None = 64,
                    lr0: float = 0.1, decay_iters: float = 100.0,
                    seed: int | np.random.SeedSequence = 0, eval_rounds: Sequence[int] | None = None,
                    accuracy: bool = False) -> History:
    """Distributed SGD (eq. 3): all N devices, one local step, no compression."""
    return fedpaq(problem, rounds=rounds, local_steps=1, m_per_round=problem.n_devices,
                  batch_size=batch_size, q_levels=None, lr0=lr0, decay_iters=decay_iters,
                  seed=seed, eval_rounds=eval_rounds, accuracy=accuracy)


def scaffold(problem: SoftmaxProblem, *, rounds: int, local_steps: int, m_per_round: int,
             batch_size: int | None = 64, q_levels: int | None = None, lr0: float = 0.1,
             decay_iters: float = 100.0, seed: int | np.random.SeedSequence = 0,
             eval_rounds: Sequence[int] | None = None, accuracy: bool = False) -> History:
    """SCAFFOLD (eqs. 7–9, option II): local direction g_i(y) − c_i + c; after E steps
    c_i⁺ = c_i − c − Δx_i/(Eη_k); server x += mean Δx_i, c += (1/N) Σ_{S_k} Δc_i. With
    ``q_levels`` both uploaded vectors are quantized (2 messages per device and round).
    ``info`` holds the final c and the mean of the c_i (equal: an invariant)."""
    rounds, local_steps, m_per_round, lr0, decay_iters = _check_common(
        problem, rounds, local_steps, m_per_round, lr0, decay_iters, q_levels)
    batch_size = _check_batch_size(problem, batch_size)
    rng = _streams(seed)
    ev = _eval_rounds(eval_rounds, rounds)
    rec = _Recorder(problem, rounds, ev, accuracy)
    x = np.zeros((N_FEATURES, N_CLASSES))
    c = np.zeros_like(x)
    c_dev = np.zeros((problem.n_devices, N_FEATURES, N_CLASSES))
    beta = bits(problem.dim, q_levels)
    for k in range(rounds):
        rec.record(k, x)
        devices, sched = _schedule_round(problem, rng, m_per_round, local_steps, batch_size)
        lr = float(learning_rate(k, local_steps, lr0, decay_iters))
        u = _local.local_updates(problem, x, sched, lr,
                                 correction=c[None] - c_dev[devices]).astype(np.float64)
        rec.update_norm[k] = float(np.mean(_norms(u)))
        dc = -c[None] - u / (local_steps * lr)  # c_i⁺ − c_i
        both = np.concatenate([u, dc]).reshape(2 * m_per_round, -1)
        sent = quantize(both, q_levels, rng["quantizer"]).reshape(2 * m_per_round, N_FEATURES, N_CLASSES)
        x = x + sent[:m_per_round].mean(axis=0)
        c_dev[devices] += sent[m_per_round:]
        c = c + sent[m_per_round:].sum(axis=0) / problem.n_devices
        rec.total_bits += 2 * m_per_round * beta
    rec.record(rounds, x)
    return rec.history(local_steps, x, {"bits_per_message": beta, "c": c,
                                        "c_devices_mean": c_dev.mean(axis=0)})


def private_batch_sizes(sizes: np.ndarray, sample_ratio: float, local_steps: int) -> np.ndarray:
    """b_i = ⌊γ·n_i/E⌋ (Alg. 2: |D_s| = E·b_i); raises unless every b_i ≥ 1 (γ·n_i/E ≥ 1)."""
    sample_ratio = check_positive("sample_ratio (gamma)", sample_ratio)
    if sample_ratio > 1:
        raise ValueError(f"sample_ratio (gamma) must lie in (0, 1], got {sample_ratio!r}")
    local_steps = check_int("local_steps (E)", local_steps, 1)
    sizes = np.asarray(sizes)
    if sizes.dtype.kind not in "iuf":
        raise ParameterTypeError(f"sizes (n_i) must be a non-empty 1-d array of integers >= 1, got {sizes!r}")
    if sizes.ndim != 1 or sizes.size < 1 or sizes.dtype.kind not in "iu" or np.any(sizes < 1):
        raise ValueError(f"sizes (n_i) must be a non-empty 1-d array of integers >= 1, got {sizes!r}")
    sizes = sizes.astype(np.int64)
    # tiny tolerance so that e.g. 0.2·600/10 = 12 is not floored to 11 by round-off
    b = np.floor(sample_ratio * sizes / local_steps * (1 + 1e-12)).astype(np.int64)
    if np.any(b < 1):
        raise ValueError(f"sample_ratio·n_i/local_steps must be >= 1 for every device "
                         f"(gamma={sample_ratio}, E={local_steps}, min n_i={int(sizes.min())})")
    return b


#: The smallest clipping norm: the clipping forms ‖x‖²/C² in float32, finite for ‖x‖² < 3e8 only above it.
MIN_CLIP = 1e-15


def check_privacy_args(sensitivity_mode: str, calibration: str, clip: float | None,
                       epsilon: float | None, delta: float) -> tuple[float | None, float | None, float]:
    """The privacy parameters of Alg. 2 checked: ``sensitivity_mode`` in :data:`SENSITIVITIES`,
    ``calibration`` in :data:`CALIBRATIONS`, C > 0 or None, ε > 0 or None (no noise; noise
    needs a clip), 0 < δ < 1. Returns (clip, epsilon, delta) as floats."""
    for name, value, choices in (("sensitivity_mode", sensitivity_mode, SENSITIVITIES),
                                 ("calibration", calibration, CALIBRATIONS)):
        if not isinstance(value, str):
            raise ParameterTypeError(f"{name} must be one of {choices}, got {value!r}")
    if sensitivity_mode not in SENSITIVITIES:
        raise ValueError(f"sensitivity_mode must be one of {SENSITIVITIES}, got {sensitivity_mode!r}")
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    if clip is not None:
        clip = check_positive("clip (C)", clip)
        if clip < MIN_CLIP:
            raise ValueError(f"clip (C) must be at least {MIN_CLIP:g} (the clipping forms |x|^2/C^2 in float32), "
                             f"got {clip!r}")
    if epsilon is not None:
        epsilon = check_positive("epsilon", epsilon)
        if clip is None:
            raise ValueError("clip (C) must be given when noise is added (epsilon not None)")
    return clip, epsilon, check_delta(delta)


def private_fedpaq(problem: SoftmaxProblem, *, rounds: int, local_steps: int, m_per_round: int,
                   sample_ratio: float = 0.2, clip: float | None = 1.0, epsilon: float | None = 1.0,
                   delta: float = 1e-4, sensitivity_mode: str = "rigorous",
                   calibration: str = "paper", q_levels: int | None = 10, lr0: float = 0.1,
                   decay_iters: float = 100.0, profile: str = "paper",
                   seed: int | np.random.SeedSequence = 0, eval_rounds: Sequence[int] | None = None,
                   accuracy: bool = False) -> History:
    """Privacy-augmented FedPAQ (Alg. 2) with a selectable sensitivity (spec §5.2).

    ``epsilon=None``: no noise (clipping and subsampling only); ``clip=None``: no clipping
    (then only ``epsilon=None`` is allowed). ``profile="authors_code"`` emulates the authors'
    code: E *epochs* in batches of 64 over ⌊γn_i⌋ records, batch-mean clipping, Δ = C/n_i
    (``sensitivity_mode`` must then be ``"authors_code"``). ``info`` records the noise std per
    device at round 0 and the γ_i used.
    """
    rounds, local_steps, m_per_round, lr0, decay_iters = _check_common(
        problem, rounds, local_steps, m_per_round, lr0, decay_iters, q_levels)
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    clip, epsilon, delta = check_privacy_args(sensitivity_mode, calibration, clip, epsilon, delta)
    sizes = problem.sizes
    if profile == "authors_code":
        if sensitivity_mode != "authors_code":
            raise ValueError("profile='authors_code' needs sensitivity_mode='authors_code'")
        sample_ratio = check_positive("sample_ratio (gamma)", sample_ratio)
        if sample_ratio > 1:
            raise ValueError(f"sample_ratio (gamma) must lie in (0, 1], got {sample_ratio!r}")
        subset = np.floor(sample_ratio * sizes).astype(np.int64)
        if np.any(subset < 1):
            raise ValueError("sample_ratio·n_i must be >= 1 for every device")
        b_all = np.minimum(subset, 64)
        gamma = np.full(sizes.shape, sample_ratio)  # the code uses the nominal γ
    else:
        b_all = private_batch_sizes(sizes, sample_ratio, local_steps)
        gamma = local_steps * b_all / sizes  # γ_eff,i
    if epsilon is not None and np.any(gamma <= delta):
        raise ValueError(f"delta must be smaller than every gamma_i (min {gamma.min():.3g})")
    mult = (noise_multipliers(calibration, epsilon=epsilon, delta=delta, gamma=gamma)
            if epsilon is not None else np.zeros(sizes.shape))
    rng = _streams(seed)
    ev = _eval_rounds(eval_rounds, rounds)
    rec = _Recorder(problem, rounds, ev, accuracy)
    x = np.zeros((N_FEATURES, N_CLASSES))
    beta = bits(problem.dim, q_levels)
    clip_mode = "batch" if profile == "authors_code" else "sample"
    sigma0 = None
    for k in range(rounds):
        rec.record(k, x)
        devices = np.sort(rng["scheduling"].choice(problem.n_devices, m_per_round, replace=False))
        lr = float(learning_rate(k, local_steps, lr0, decay_iters))
        if profile == "authors_code":
            sched = _local.epoch_batches(problem, devices, local_steps, subset[devices], rng["subsampling"])
        else:
            sched = _local.subsample_batches(problem, devices, local_steps, b_all[devices], rng["subsampling"])
        std = None
        if epsilon is not None:
            delta_f = sensitivity(sensitivity_mode, lr=lr, local_steps=local_steps, clip=clip,
                                  batch_size=b_all[devices], n_samples=sizes[devices])
            std = mult[devices] * delta_f
            if sigma0 is None:
                sigma0 = float(np.mean(std))
        out = private_round(problem, x, sched, lr, clip=clip, clip_mode=clip_mode, noise_std=std,
                            q_levels=q_levels, rng_noise=rng["noise"], rng_quantizer=rng["quantizer"])
        x = out.x
        rec.update_norm[k], rec.noise_norm[k] = out.update_norm, out.noise_norm
        rec.total_bits += m_per_round * beta
    rec.record(rounds, x)
    return rec.history(local_steps, x, {
        "bits_per_message": beta, "gamma_mean": float(np.mean(gamma)),
        "batch_size_min": int(b_all.min()), "batch_size_max": int(b_all.max()),
        "noise_std_round0": math.nan if sigma0 is None else sigma0,
        "noise_multiplier_mean": float(np.mean(mult))})


class RoundResult(NamedTuple):
    """One round of :func:`private_round`: the new global model ``x`` (785, 10) float64 and
    the means over devices of ‖u_i‖ (``update_norm``) and ‖z_i‖ (``noise_norm``, 0 without
    noise)."""

    x: np.ndarray
    update_norm: float
    noise_norm: float


def private_round(problem: SoftmaxProblem, x: np.ndarray, schedule: _local.Schedule, lr: float, *,
                  clip: float | None, q_levels: int | None, noise_std: np.ndarray | None,
                  rng_noise: np.random.Generator, rng_quantizer: np.random.Generator,
                  clip_mode: str = "sample") -> RoundResult:
    """One round of Alg. 2 after scheduling: the M devices' clipped local steps
    (:func:`.local.local_updates`, float32 model changes u_i), Gaussian noise of std
    ``noise_std[i]`` added to u_i (:func:`.noise.add_noise`, stream ``rng_noise``; ``None``:
    no noise), Q_s (:func:`.quantizer.quantized_mean`, stream ``rng_quantizer``;
    ``q_levels=None``: none) and the server average x + (1/M) Σ_i Q_s(u_i + z_i)."""
    x = np.asarray(x)
    if x.shape != (N_FEATURES, N_CLASSES) or x.dtype.kind != "f":
        raise ValueError(f"x must be a float array of shape ({N_FEATURES}, {N_CLASSES}), got {x.shape}")
    u = _local.class_major_updates(problem, x, schedule, lr, clip=clip, clip_mode=clip_mode)
    update_norm = float(np.mean(_norms(u)))
    view = u.transpose(0, 2, 1)  # (M, 785, 10): the draws follow the model's index order
    noise_norm = 0.0
    if noise_std is not None:
        noise_norm = float(np.mean(add_noise(view, noise_std, rng_noise)))
    return RoundResult(x + quantized_mean(view, q_levels, rng_quantizer), update_norm, noise_norm)
