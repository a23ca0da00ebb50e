"""Vectorised local SGD of the M scheduled devices and their mini-batch schedules (spec §3).

Every local loop of the FedPAQ family (eqs. 4–6, 7–8, Alg. 2) is run here for all scheduled
devices at once: the models are a stack (M, 785, 10), a step gathers the (M, b, 785)
mini-batches of all devices, and the cross-entropy gradients are the batched products
Ãᵀ(w ⊙ c ⊙ R) with R_j = p_j − e_j, w_j the batch weights (1/b_i, 0 on padding) and c_j the
per-sample clip factors min(1, C/(‖ã_j‖‖R_j‖)) (spec §5.4). Devices with different batch sizes
are padded to the largest with weight 0. No Python loop runs over devices.

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

from fedrepro.problems.softmax import SoftmaxProblem

__all__ = ["Schedule", "epoch_batches", "fresh_batches", "full_batches", "local_sgd",
           "subsample_batches"]


@dataclass(frozen=True)
class Schedule:
    """Mini-batches of S local steps for M devices: global ``rows`` (S, M, B) int64,
    ``weights`` (S, M, B) float32 (1/|batch| on real entries, 0 on padding) and ``active``
    (S, M) bool (False: the device does no step, e.g. an epoch with fewer batches)."""

    rows: np.ndarray
    weights: np.ndarray
    active: np.ndarray

    @property
    def steps(self) -> int:
        return int(self.rows.shape[0])


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
    sizes = problem.sizes[devices]
    if batch_size > int(sizes.min()):
        raise ValueError(f"batch_size must be in [1, min n_i = {int(sizes.min())}], got {batch_size}")
    nmax = int(sizes.max())
    keys = rng.random((steps, devices.size, nmax))
    keys[:, np.arange(nmax)[None, :] >= sizes[:, None]] = 2.0
    pos = np.argpartition(keys, batch_size - 1, axis=-1)[..., :batch_size]
    rows = problem.offsets[devices][None, :, None] + pos
    weights = np.full(rows.shape, 1.0 / batch_size, dtype=np.float32)
    return Schedule(rows.astype(np.int64), weights, np.ones(rows.shape[:2], dtype=bool))


def full_batches(problem: SoftmaxProblem, devices: np.ndarray, steps: int) -> Schedule:
    """Every step uses all local records (local gradient descent)."""
    sizes = problem.sizes[devices]
    nmax = int(sizes.max())
    pos = np.arange(nmax)[None, :]
    valid = pos < sizes[:, None]
    rows = problem.offsets[devices][:, None] + np.where(valid, pos, 0)
    weights = np.where(valid, 1.0 / sizes[:, None], 0.0).astype(np.float32)
    return Schedule(np.broadcast_to(rows, (steps, *rows.shape)).astype(np.int64),
                    np.broadcast_to(weights, (steps, *weights.shape)),
                    np.ones((steps, devices.size), dtype=bool))


def subsample_batches(problem: SoftmaxProblem, devices: np.ndarray, steps: int,
                      batch_sizes: np.ndarray, rng: np.random.Generator) -> Schedule:
    """Alg. 2: a subset D_s of E·b_i records drawn without replacement, split by a random
    permutation into E disjoint mini-batches of b_i (every selected record used once)."""
    sizes = problem.sizes[devices]
    b = np.asarray(batch_sizes, dtype=np.int64)
    if np.any(steps * b > sizes):
        raise ValueError("local_steps·b_i must not exceed n_i (gamma·n_i/E >= 1 per device)")
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
    sizes = problem.sizes[devices]
    m = np.asarray(subset_sizes, dtype=np.int64)
    if np.any(m < 1) or np.any(m > sizes):
        raise ValueError("subset sizes must lie in [1, n_i]")
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


def local_sgd(problem: SoftmaxProblem, x: np.ndarray, schedule: Schedule, lr: float, *,
              clip: float | None = None, clip_mode: str = "sample",
              correction: np.ndarray | None = None) -> np.ndarray:
    """Run the schedule's local steps from the global model ``x`` (785, 10) for all M devices.

    Step: y ← y − lr·(g + μy + correction), with g the (clipped) weighted cross-entropy
    gradient of the batch; ``clip_mode="sample"`` clips each per-sample gradient to norm
    ``clip`` (Alg. 2 / Sec. IV), ``"batch"`` clips the batch-mean gradient (authors' code).
    ``correction`` (M, 785, 10): SCAFFOLD's c − c_i. Returns the local models (M, 785, 10),
    float64.
    """
    if clip_mode not in ("sample", "batch"):
        raise ValueError(f"clip_mode must be 'sample' or 'batch', got {clip_mode!r}")
    steps, m, _ = schedule.rows.shape
    y = np.broadcast_to(np.asarray(x, dtype=np.float64), (m, *np.shape(x))).copy()
    feats, labels, sq = problem.features, problem.labels, problem.sq_norms
    arange_m = np.arange(m)[:, None]
    arange_b = np.arange(schedule.rows.shape[2])[None, :]
    for t in range(steps):
        rows = schedule.rows[t]
        a = feats[rows]  # (M, B, 785) float32
        logits = np.matmul(a, y.astype(np.float32))
        logits -= logits.max(axis=-1, keepdims=True)
        np.exp(logits, out=logits)
        r = logits / logits.sum(axis=-1, keepdims=True)
        r[arange_m, arange_b, labels[rows]] -= 1.0
        w = schedule.weights[t]
        if clip is not None and clip_mode == "sample":
            norms = np.sqrt(sq[rows] * np.einsum("mbk,mbk->mb", r, r))
            w = w * np.minimum(1.0, clip / np.maximum(norms, 1e-30)).astype(np.float32)
        r *= w[..., None]
        g = np.matmul(a.transpose(0, 2, 1), r).astype(np.float64)  # (M, 785, 10)
        if clip is not None and clip_mode == "batch":
            gn = np.sqrt(np.einsum("mij,mij->m", g, g))
            g *= np.minimum(1.0, clip / np.maximum(gn, 1e-300))[:, None, None]
        g += problem.mu * y
        if correction is not None:
            g += correction
        act = schedule.active[t]
        if act.all():
            y -= lr * g
        else:
            y[act] -= lr * g[act]
    return y
