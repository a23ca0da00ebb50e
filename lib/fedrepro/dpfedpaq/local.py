"""Vectorised local SGD of the M scheduled devices and their mini-batch schedules (spec §3).

Every local loop of the FedPAQ family (eqs. 4–6, 7–8, Alg. 2) is run here for all scheduled
devices at once: the models are a stack (M, 785, 10), a step gathers the (M, b, 785)
mini-batches of all devices, and the cross-entropy gradients are the batched products
Ãᵀ(w ⊙ c ⊙ R) with R_j = p_j − e_j, w_j the batch weights (1/b_i, 0 on padding) and c_j the
per-sample clip factors min(1, C/(‖ã_j‖‖R_j‖)) (spec §5.4; ‖ã_j‖ is computed once per data
set, :attr:`SoftmaxProblem.sq_norms`). Devices with different batch sizes are padded to the
largest with weight 0. No Python loop runs over devices.

The local models are a float32 stack, as the data (and as a float32 PyTorch model), kept in
class-major layout (M, 10, 785) (:func:`class_major_updates`): the logits Y_iÃ_iᵀ and the
gradient R_iᵀÃ_i then read the gathered batch rows as they lie. A step
y ← y − η(g + μy + c) = (1 − ημ)y − ηg − ηc, with −η folded into the batch weights, is two
batched float32 products, one compiled pass over the (M, 10, b) logits
(:func:`._compiled.residual_weights`: softmax, residual, clip factor, weight) and one pass
over the (M, 7850) stack; the model change u_i = y_i − x is formed once at the end (float32,
so accurate to about 6·10⁻⁸·‖x‖ per entry; the server keeps x in float64).

Batch schedules (:class:`Schedule`: rows, weights, active steps) are drawn here too:

* :func:`fresh_batches` — vanilla FedPAQ: each step a fresh batch of b drawn without
  replacement from the whole local dataset, independently across steps;
* :func:`subsample_batches` — Alg. 2: one subset of E·b_i records without replacement, split
  by a random permutation into E disjoint batches of b_i;
* :func:`epoch_batches` — the authors' public code (spec §9): a subset of ⌊γn_i⌋ records,
  E epochs over it with batches of 64 (reshuffled per epoch, last partial batch kept).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_positive
from fedrepro.dpfedpaq._compiled import residual_weights
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["Schedule", "class_major_updates", "epoch_batches", "fresh_batches", "full_batches", "local_sgd",
           "local_updates", "subsample_batches"]

#: Largest gathered mini-batch tensor (bytes) built once for all steps; beyond it, per step.
_GATHER_ALL_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Schedule:
    """Mini-batches of S local steps for M devices: global ``rows`` (S, M, B) int64,
    ``weights`` (S, M, B) float32 (1/|batch| on real entries, 0 on padding) and ``active``
    (S, M) bool (False: the device does no step, e.g. an epoch with fewer batches)."""

    rows: np.ndarray
    weights: np.ndarray
    active: np.ndarray

    def __post_init__(self) -> None:
        rows, weights, active = (np.asarray(a) for a in (self.rows, self.weights, self.active))
        if rows.ndim != 3 or rows.dtype.kind not in "iu" or min(rows.shape) < 1:
            raise ValueError(f"rows must be a non-empty (S, M, B) integer array, got shape "
                             f"{rows.shape} dtype {rows.dtype}")
        if weights.shape != rows.shape or weights.dtype.kind != "f":
            raise ValueError(f"weights must be a float array of the shape of rows {rows.shape}, "
                             f"got {weights.shape} {weights.dtype}")
        if active.shape != rows.shape[:2] or active.dtype != bool:
            raise ValueError(f"active must be a bool array of shape (S, M) = {rows.shape[:2]}, "
                             f"got {active.shape} {active.dtype}")
        if np.any(rows < 0) or not np.all(weights >= 0):
            raise ValueError("rows must be >= 0 and weights in [0, inf)")

    @property
    def steps(self) -> int:
        return int(self.rows.shape[0])


def _check_problem(problem: SoftmaxProblem) -> SoftmaxProblem:
    if not isinstance(problem, SoftmaxProblem):
        raise ValueError(f"problem must be a SoftmaxProblem, got {type(problem).__name__}")
    return problem


def _check_devices(problem: SoftmaxProblem, devices: np.ndarray) -> np.ndarray:
    dev = np.asarray(devices)
    n = problem.n_devices
    if dev.ndim != 1 or dev.size < 1 or dev.dtype.kind not in "iu":
        raise ValueError(f"devices must be a non-empty 1-d integer array of device indices in "
                         f"[0, N-1] = [0, {n - 1}], got shape {dev.shape} dtype {dev.dtype}")
    if dev.min() < 0 or dev.max() >= n:
        raise ValueError(f"devices must lie in [0, N-1] = [0, {n - 1}], got {dev.min()}..{dev.max()}")
    return dev.astype(np.int64)


def _check_rng(rng: np.random.Generator) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_per_device(name: str, values: np.ndarray, sizes: np.ndarray, factor: int,
                      bound: str) -> np.ndarray:
    """One integer ≥ 1 per device with factor·value ≤ n_i."""
    arr = np.asarray(values)
    if arr.ndim == 0 and arr.dtype.kind in "iu":
        arr = np.full(sizes.shape, int(arr))
    if arr.shape != sizes.shape or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be {sizes.size} integers (one per scheduled device), "
                         f"got shape {arr.shape} dtype {arr.dtype}")
    if np.any(arr < 1) or np.any(factor * arr > sizes):
        raise ValueError(f"{name} must lie in [1, {bound}] for every device")
    return arr.astype(np.int64)


def _random_order(rng: np.random.Generator, sizes: np.ndarray, reps: int) -> np.ndarray:
    """(reps, M, max size) local positions: each row a uniformly random permutation of
    0..n_i−1 followed by padding (positions ≥ n_i sort last)."""
    nmax = int(sizes.max())
    keys = rng.random((reps, sizes.size, nmax))
    keys[:, np.arange(nmax)[None, :] >= sizes[:, None]] = 2.0
    return np.argsort(keys, axis=-1, kind="stable")


def fresh_batches(problem: SoftmaxProblem, devices: np.ndarray, steps: int, batch_size: int,
                  rng: np.random.Generator) -> Schedule:
    """Each of ``steps`` steps: b records of each device, without replacement within the
    step, independently across steps (vanilla FedPAQ / FedAvg / SCAFFOLD)."""
    devices = _check_devices(_check_problem(problem), devices)
    steps = check_int("steps (local steps E)", steps, 1)
    rng = _check_rng(rng)
    sizes = problem.sizes[devices]
    batch_size = check_int(f"batch_size (at most min n_i = {int(sizes.min())})", batch_size, 1,
                           int(sizes.min()))
    nmax = int(sizes.max())
    keys = rng.random((steps, devices.size, nmax))
    keys[:, np.arange(nmax)[None, :] >= sizes[:, None]] = 2.0
    pos = np.argpartition(keys, batch_size - 1, axis=-1)[..., :batch_size]
    rows = problem.offsets[devices][None, :, None] + pos
    weights = np.full(rows.shape, 1.0 / batch_size, dtype=np.float32)
    return Schedule(rows.astype(np.int64), weights, np.ones(rows.shape[:2], dtype=bool))


def full_batches(problem: SoftmaxProblem, devices: np.ndarray, steps: int) -> Schedule:
    """Every step uses all local records (local gradient descent)."""
    devices = _check_devices(_check_problem(problem), devices)
    steps = check_int("steps (local steps E)", steps, 1)
    sizes = problem.sizes[devices]
    nmax = int(sizes.max())
    pos = np.arange(nmax)[None, :]
    valid = pos < sizes[:, None]
    rows = problem.offsets[devices][:, None] + np.where(valid, pos, 0)
    weights = np.where(valid, 1.0 / sizes[:, None], 0.0).astype(np.float32)
    return Schedule(np.broadcast_to(rows, (steps, *rows.shape)),
                    np.broadcast_to(weights, (steps, *weights.shape)),
                    np.ones((steps, devices.size), dtype=bool))


def subsample_batches(problem: SoftmaxProblem, devices: np.ndarray, steps: int,
                      batch_sizes: np.ndarray, rng: np.random.Generator) -> Schedule:
    """Alg. 2: a subset D_s of E·b_i records drawn without replacement, split by a random
    permutation into E disjoint mini-batches of b_i (every selected record used once).
    Needs 1 ≤ b_i and E·b_i ≤ n_i (γ·n_i/E ≥ 1)."""
    devices = _check_devices(_check_problem(problem), devices)
    steps = check_int("steps (local steps E)", steps, 1)
    rng = _check_rng(rng)
    sizes = problem.sizes[devices]
    b = _check_per_device("batch_sizes (b_i)", batch_sizes, sizes, steps, "n_i/E (gamma*n_i/E >= 1)")
    order = _random_order(rng, sizes, 1)[0]  # (M, nmax)
    bmax = int(b.max())
    j = np.arange(bmax)
    t = np.arange(steps)
    idx = t[:, None, None] * b[None, :, None] + j[None, None, :]  # (E, M, bmax)
    valid = np.broadcast_to(j[None, None, :] < b[None, :, None], idx.shape)
    idx = np.where(valid, idx, 0)
    pos = np.take_along_axis(np.broadcast_to(order, (steps, *order.shape)), idx, axis=-1)
    rows = problem.offsets[devices][None, :, None] + pos
    weights = np.where(valid, 1.0 / b[None, :, None], 0.0).astype(np.float32)
    return Schedule(rows.astype(np.int64), weights, np.ones((steps, devices.size), dtype=bool))


def epoch_batches(problem: SoftmaxProblem, devices: np.ndarray, epochs: int, subset_sizes: np.ndarray,
                  rng: np.random.Generator, batch_size: int = 64) -> Schedule:
    """The authors' code (spec §9): a subset of ``subset_sizes[i]`` records without replacement,
    then ``epochs`` passes over it in batches of ``batch_size`` (reshuffled each epoch, last
    partial batch kept); devices with fewer batches per epoch idle on the extra steps."""
    devices = _check_devices(_check_problem(problem), devices)
    epochs = check_int("epochs (E)", epochs, 1)
    rng = _check_rng(rng)
    batch_size = check_int("batch_size", batch_size, 1)
    sizes = problem.sizes[devices]
    m = _check_per_device("subset_sizes", subset_sizes, sizes, 1, "n_i")
    subset = _random_order(rng, sizes, 1)[0]  # first m_i entries: the subset
    per_epoch = -(-m // batch_size)
    nb = int(per_epoch.max())
    mmax = int(m.max())
    perm = _random_order(rng, m, epochs)  # (epochs, M, mmax) positions within the subset
    j = np.arange(batch_size)
    t = np.arange(nb)
    idx = t[:, None, None] * batch_size + j[None, None, :]  # (nb, 1, B)
    valid = idx < m[None, :, None]  # (nb, M, B)
    idx = np.minimum(np.broadcast_to(idx, valid.shape), mmax - 1)
    counts = valid.sum(axis=-1)  # (nb, M)
    rows_list, w_list, act_list = [], [], []
    for e in range(epochs):  # loop over epochs, not devices
        within = np.take_along_axis(perm[e][None].repeat(nb, axis=0), idx, axis=-1)
        within = np.where(valid, within, 0)
        pos = np.take_along_axis(subset[None].repeat(nb, axis=0), within, axis=-1)
        rows_list.append(problem.offsets[devices][None, :, None] + pos)
        w_list.append(np.where(valid, 1.0 / np.maximum(counts, 1)[..., None], 0.0))
        act_list.append(counts > 0)
    return Schedule(np.concatenate(rows_list).astype(np.int64),
                    np.concatenate(w_list).astype(np.float32),
                    np.concatenate(act_list))


def _check_model(x: np.ndarray) -> np.ndarray:
    arr = np.asarray(x)
    if arr.shape == (N_FEATURES * N_CLASSES,):
        arr = arr.reshape(N_FEATURES, N_CLASSES)
    if arr.shape != (N_FEATURES, N_CLASSES) or arr.dtype.kind not in "fiu":
        raise ValueError(f"x must be a real array of shape ({N_FEATURES}, {N_CLASSES}) or "
                         f"({N_FEATURES * N_CLASSES},), got {np.shape(x)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must be finite (no nan or inf entries)")
    return arr


def class_major_updates(problem: SoftmaxProblem, x: np.ndarray, schedule: Schedule, lr: float, *,
                        clip: float | None = None, clip_mode: str = "sample",
                        correction: np.ndarray | None = None) -> np.ndarray:
    """The model changes u_i = y_i − x of :func:`local_updates` in class-major layout: float32
    (M, 10, 785), row c of device i the weights of class c (u_i transposed). The layout of the
    computation: both batched products of a step, the logits Y_iÃ_iᵀ (M, 10, b) and the
    gradient R_iᵀÃ_i (M, 10, 785), then read the gathered (b, 785) batch rows as they lie,
    about half the time of the (785, 10) layout's products. The server-side steps (noise,
    quantizer, average) act entry-wise, so they take this layout as it is."""
    _check_problem(problem)
    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    x = _check_model(x)
    lr = check_positive("lr (learning rate)", lr)
    if clip_mode not in ("sample", "batch"):
        raise ValueError(f"clip_mode must be 'sample' or 'batch', got {clip_mode!r}")
    if clip is not None:
        clip = check_positive("clip (C)", clip)
    steps, m, bmax = schedule.rows.shape
    if int(schedule.rows.max()) >= problem.labels.size:
        raise ValueError(f"schedule rows must lie in [0, n-1] = [0, {problem.labels.size - 1}]")
    shape = (m, N_FEATURES, N_CLASSES)
    xt = np.ascontiguousarray(np.asarray(x, dtype=np.float32).T)  # (10, 785)
    decay = np.float32(1.0 - lr * problem.mu)
    shift = None  # η·correction, subtracted every step (class-major)
    if correction is not None:
        corr = np.asarray(correction)
        if corr.shape != shape or corr.dtype.kind != "f":
            raise ValueError(f"correction must be a float array of shape {shape}, got {corr.shape}")
        shift = np.ascontiguousarray((np.float32(lr) * corr.astype(np.float32)).transpose(0, 2, 1))
    sample_clip = clip is not None and clip_mode == "sample"
    batch_clip = clip is not None and clip_mode == "batch"

    rows_all = schedule.rows
    shared = rows_all.strides[0] == 0  # the same batches every step (full_batches)
    gather_all = not shared and rows_all.size * N_FEATURES * 4 <= _GATHER_ALL_BYTES
    if shared:
        feats_shared = problem.features[rows_all[0]]
    elif gather_all:
        feats_all = np.take(problem.features, rows_all, axis=0)  # (S, M, B, 785), one gather
    labels_all = problem.labels[rows_all]
    # Fast path (no correction, every device active, per-sample or no clipping): keep
    # ỹ_t = y_t/(1 − ημ)^t, so that a step is ỹ ← ỹ − η(1 − ημ)^−(t+1)·g (one pass; the
    # factor goes into the batch weights) and the logits are (1 − ημ)^t·ỹ_tÃᵀ.
    scaled = (shift is None and not batch_clip and bool(schedule.active.all())
              and 0.0 < float(decay) and float(decay) ** steps >= 1e-3)
    factor = np.float32(-lr) * (decay ** -np.arange(1, steps + 1, dtype=np.float32) if scaled
                                else np.ones(steps, dtype=np.float32))
    w_all = np.ascontiguousarray(schedule.weights * factor[:, None, None], dtype=np.float32)
    if sample_clip:  # ‖ã_j‖²/C² once per schedule (‖ã_j‖² precomputed once per data set)
        a2_all = problem.sq_norms[rows_all] * np.float32(1.0 / (clip * clip))
    else:
        a2_all = w_all  # not read

    y = np.empty((m, N_CLASSES, N_FEATURES), dtype=np.float32)
    y[...] = xt
    g = np.empty_like(y)
    p = np.empty((m, N_CLASSES, bmax), dtype=np.float32)
    for t in range(steps):
        a = feats_shared if shared else (feats_all[t] if gather_all
                                         else np.take(problem.features, rows_all[t], axis=0))
        np.matmul(y, a.transpose(0, 2, 1), out=p)  # logits, class-major (M, 10, B)
        # p ← w·c·(softmax − e): −η, the batch weights and the clip factors in one pass
        residual_weights(p, float(decay) ** t if scaled else 1.0, labels_all[t], w_all[t],
                         a2_all[t], sample_clip)
        np.matmul(p, a, out=g)  # −η·(clipped) gradient (M, 10, 785)
        if scaled:
            y += g
            continue
        if batch_clip:
            gn = np.sqrt(np.einsum("mij,mij->m", g, g, dtype=np.float64))
            # the factor C·η/‖g‖ stays float64 (a float32 factor underflows to 0 below ~1e-45
            # while the clipped step itself is representable); the product is rounded once
            g *= np.minimum(1.0, clip * lr / np.maximum(gn, 1e-300))[:, None, None]
        act = schedule.active[t]
        if act.all():  # y ← (1 − ημ)y − ηg − η·correction
            y *= decay
            y += g
            if shift is not None:
                y -= shift
        else:
            step = decay * y[act] + g[act]
            y[act] = step if shift is None else step - shift[act]
    if scaled:
        y *= decay ** steps
    y -= xt
    return y


def local_updates(problem: SoftmaxProblem, x: np.ndarray, schedule: Schedule, lr: float, *,
                  clip: float | None = None, clip_mode: str = "sample",
                  correction: np.ndarray | None = None) -> np.ndarray:
    """The model changes u_i = y_i − x after the schedule's local steps from the global model
    ``x`` (785, 10), all M devices at once: float32 (M, 785, 10).

    Step: y ← y − lr·(g + μy + correction), with g the (clipped) weighted cross-entropy
    gradient of the batch; ``clip_mode="sample"`` clips each per-sample gradient to norm
    ``clip`` (Alg. 2 / Sec. IV; factor min(1, C/(‖ã_j‖‖p_j − e_j‖)), spec §5.4), ``"batch"``
    clips the batch-mean gradient (authors' code). ``correction`` (M, 785, 10): SCAFFOLD's
    c − c_i. Devices inactive at a step (``schedule.active``) keep their iterate. Computed by
    :func:`class_major_updates` and transposed.
    """
    u = class_major_updates(problem, x, schedule, lr, clip=clip, clip_mode=clip_mode,
                            correction=correction)
    return np.ascontiguousarray(u.transpose(0, 2, 1))


def local_sgd(problem: SoftmaxProblem, x: np.ndarray, schedule: Schedule, lr: float, *,
              clip: float | None = None, clip_mode: str = "sample",
              correction: np.ndarray | None = None) -> np.ndarray:
    """The local models y_i = x + u_i (float64, (M, 785, 10)) after the schedule's steps;
    see :func:`local_updates` for the step and the parameters."""
    u = local_updates(problem, x, schedule, lr, clip=clip, clip_mode=clip_mode,
                      correction=correction)
    return _check_model(x).astype(np.float64) + u
