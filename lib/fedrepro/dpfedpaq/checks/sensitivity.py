"""Sensitivity of the released update and per-sample clipping on the softmax problem (spec §8
items 5–6, §5.2, §5.4).

* :func:`coupled_differences`: for random substitution neighbours D_i, D_i′ (one record of
  the round's subsample replaced by a record of another device), the local part of Alg. 2
  run twice with the same subsample positions and batch split (coupled randomness), and
  ‖u(D) − u(D′)‖ measured;
* :func:`check_sensitivity`: the largest measured difference against a sensitivity:
  ``rigorous`` 2η_kEC (valid: must hold), ``per_step`` 2η_kC/b (heuristic) and
  ``authors_code`` C/n_i (the public code; the paper claims (ε, δ) with it);
* :func:`check_clip_norms`: the closed-form per-sample norm ‖ã_j‖·‖p_j − e_j‖ against the
  norm of the materialised outer product, and the clipped norms against C.
"""

from __future__ import annotations

import numpy as np

from fedrepro.core.validate import check_int, check_positive
from fedrepro.dpfedpaq import local as _local
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result
from fedrepro.problems.softmax import SoftmaxProblem

__all__ = ["SENSITIVITY_BOUNDS", "check_clip_norms", "check_sensitivity", "coupled_differences"]

SENSITIVITY_BOUNDS: tuple[str, ...] = ("rigorous", "per_step", "authors_code")


def coupled_differences(problem: SoftmaxProblem, x: np.ndarray, eta: float, E: int, gamma: float,
                        clip: float, pairs: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """‖u(D_i) − u(D_i′)‖ for ``pairs`` random (device, substituted record, replacement) triples.

    Devices are drawn uniformly (with repetition across pairs); b_i = ⌊γn_i/E⌋; the
    substituted record is one of the E·b_i records of the subsample (uniform over step and
    position), the replacement a uniform record of another device. Returns the differences,
    b_i and n_i per pair."""
    eta = check_positive("eta", eta)
    E = check_int("E", E, 1)
    gamma = check_positive("gamma", gamma)
    if gamma > 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    clip = check_positive("clip", clip)
    pairs = check_int("pairs", pairs, 1)
    devices = rng.integers(0, problem.n_devices, size=pairs)
    sizes = problem.sizes[devices]
    b = np.floor(gamma * sizes / E * (1 + 1e-12)).astype(np.int64)
    if np.any(b < 1):
        raise ValueError(f"gamma·n_i/E must be >= 1 (gamma={gamma}, E={E})")
    sched = _local.subsample_batches(problem, devices, E, b, rng)
    t = rng.integers(0, E, size=pairs)
    j = np.floor(rng.random(pairs) * b).astype(np.int64)
    # replacement: a uniform record outside the device's rows
    total = problem.labels.size
    off = problem.offsets
    draw = rng.integers(0, total - sizes)
    repl = np.where(draw >= off[devices], draw + sizes, draw)
    rows2 = sched.rows.copy()
    rows2[t, np.arange(pairs), j] = repl
    sched2 = _local.Schedule(rows2, sched.weights, sched.active)
    y1 = _local.local_sgd(problem, x, sched, eta, clip=clip)
    y2 = _local.local_sgd(problem, x, sched2, eta, clip=clip)
    diff = np.sqrt(np.einsum("mij,mij->m", y1 - y2, y1 - y2))
    return {"diff": diff, "b": b, "n": sizes, "step": t}


def check_sensitivity(diffs: dict[str, np.ndarray], mode: str, eta: float, E: int, clip: float) -> CheckResult:
    """The pair with the largest ratio ‖u − u′‖/Δ_i: its difference (``observed``) against its
    Δ_i of ``mode`` (``bound``; Δ_i depends on the pair's b_i, n_i for ``per_step`` and
    ``authors_code``); also the median ratio and the fraction of pairs above Δ_i.

    Tolerance: rtol 1e-5 (the local steps compute logits and products in float32)."""
    if mode not in SENSITIVITY_BOUNDS:
        raise ValueError(f"mode must be one of {SENSITIVITY_BOUNDS}, got {mode!r}")
    d = np.asarray(diffs["diff"], dtype=float)
    if mode == "rigorous":
        bound = np.full(d.shape, 2 * eta * E * clip)
    elif mode == "per_step":
        bound = 2 * eta * clip / diffs["b"]
    else:
        bound = clip / diffs["n"]
    ratio = d / bound
    worst = int(np.argmax(ratio))
    return make_result(float(d[worst]), float(bound[worst]), rtol=1e-5, mode=mode,
                       max_ratio=float(ratio.max()), median_ratio=float(np.median(ratio)),
                       fraction_exceeding=float(np.mean(ratio > 1 + 1e-5)), pairs=int(d.size))


def check_clip_norms(problem: SoftmaxProblem, x: np.ndarray, rows: np.ndarray, clip: float) -> dict[str, CheckResult]:
    """``closed_form``: max relative gap between ‖ã_j‖‖p_j − e_j‖ and the Frobenius norm of the
    materialised ã_j(p_j − e_j)ᵀ (bound 1e-5: float32 products); ``clipped``: max norm of the
    clipped per-sample gradients against C (rtol 1e-6)."""
    clip = check_positive("clip", clip)
    rows = np.asarray(rows)
    fast = problem.per_sample_grad_norms(x, rows)
    full = problem.per_sample_gradients(x, rows)
    brute = np.sqrt(np.einsum("mij,mij->m", full, full))
    gap = float(np.max(np.abs(fast - brute) / np.maximum(brute, 1e-300)))
    factor = np.minimum(1.0, clip / np.maximum(fast, 1e-300))
    clipped = np.sqrt(np.einsum("mij,mij->m", full, full)) * factor
    return {"closed_form": make_result(gap, 1e-5, rtol=0.0, samples=int(rows.size)),
            "clipped": make_result(float(clipped.max()), clip, rtol=1e-6,
                                   fraction_clipped=float(np.mean(fast > clip)),
                                   median_norm=float(np.median(fast)))}
