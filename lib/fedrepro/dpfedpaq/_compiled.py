"""Compiled loops of a DP-FedPAQ round (numba): what lies between the BLAS products.

A private FedPAQ round (Alg. 2) spends its time in three places besides the two batched
matrix products of each local step: the per-sample work on the (M, 10, b) logits of a step
(softmax, residual R_j = p_j − e_j, clip factor, batch weight), the 78,500 Gaussian draws of
the noise (Alg. 2, line 9) and the stochastic rounding of the quantizer Q_s (eq. 20). In NumPy
each is a dozen passes over small arrays or a slow float32 ziggurat; here each is one loop,
compiled once by numba (cached on disk next to this module) and called from the NumPy code of
:mod:`.local`, :mod:`.noise` and :mod:`.quantizer`. The laws are unchanged:

* :func:`residual_weights` — the softmax and the clip factor of the closed form
  ‖g_j‖ = ‖ã_j‖·‖p_j − e_j‖ (spec §5.4), computed per sample in float64 and stored float32;
* :func:`add_gaussian` — z = σ_i·ζ with ζ the float64 standard normals of the generator's
  ziggurat (the very numbers ``rng.standard_normal`` returns), rounded once to the update's
  precision and added in place;
* :func:`quantized_sum` — Σ_i w_i·⌊t_ij + U_ij⌋ clamped to [−s, s], t_ij = s·v_ij/‖v_i‖, with
  the float32 uniforms ``rng.random(dtype=float32)`` returns and the same float32 roundings
  as the NumPy path of :func:`.quantizer.quantized_mean` (bit-identical levels).

Both draw in the row-major order of the index of the array they are given, not of its
memory: a round passes the (M, 785, 10) view of its class-major (M, 10, 785) updates, so that
entry (f, c) of the model gets the same draw whichever layout computed it.

A private module: the functions check nothing (a label out of range would write out of
bounds); their callers in :mod:`.local`, :mod:`.noise` and :mod:`.quantizer` validate shapes,
dtypes and values first.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["add_gaussian", "quantized_sum", "residual_weights"]


@numba.njit(cache=True)
def residual_weights(p: np.ndarray, scale: float, labels: np.ndarray, weights: np.ndarray,
                     a2: np.ndarray, clip: bool) -> None:
    """In place on the logits ``p`` (M, K, B) float32 of a local step (class axis in the
    middle): p[i, :, j] ← c_ij·w_ij·(softmax(scale·p[i, :, j]) − e_{labels[i, j]}), with the
    batch weight ``weights[i, j]`` and, if ``clip``, the clip factor
    c_ij = 1/√max(1, a2[i, j]·‖R_ij‖²) = min(1, C/(‖ã_j‖‖R_ij‖)) (``a2`` = ‖ã_j‖²/C²); else
    c_ij = 1. The softmax subtracts the largest logit; arithmetic in float64."""
    m, k, b = p.shape
    e = np.empty(k)
    for i in range(m):
        for j in range(b):
            top = scale * p[i, 0, j]
            for c in range(1, k):
                top = max(top, scale * p[i, c, j])
            total = 0.0
            for c in range(k):
                e[c] = math.exp(scale * p[i, c, j] - top)
                total += e[c]
            inv = 1.0 / total
            e[labels[i, j]] -= total  # (p − e_label)·total
            sq = 0.0
            for c in range(k):
                e[c] *= inv
                sq += e[c] * e[c]
            factor = np.float64(weights[i, j])
            if clip:
                factor /= math.sqrt(max(1.0, np.float64(a2[i, j]) * sq))
            for c in range(k):
                p[i, c, j] = e[c] * factor


@numba.njit(cache=True)
def add_gaussian(u: np.ndarray, std: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """u[i, j, k] += round(std[i]·ζ_ijk) in place (``u`` (m, r, c) float32 or float64, any
    strides, rounded to its dtype), ζ the generator's float64 standard normals in the
    row-major order of the index (i, j, k), whatever the memory layout; returns Σ z_ijk² per
    i (float64 (m,), the rounded noise)."""
    m, r, c = u.shape
    out = np.empty(m)
    for i in range(m):
        s = std[i]
        acc = 0.0
        for j in range(r):
            for k in range(c):
                z = u.dtype.type(s * rng.standard_normal())
                u[i, j, k] += z
                zz = np.float64(z)  # the square of a float32 is exact in float64
                acc += zz * zz
        out[i] = acc
    return out


@numba.njit(cache=True)
def quantized_sum(v: np.ndarray, scale: np.ndarray, weights: np.ndarray, s: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Σ_i weights[i]·h_ijk (float64 (r, c)) with h_ijk = clamp(⌊v_ijk·scale[i] + U_ijk⌋, −s, s)
    and U the generator's float32 uniforms in the row-major order of (i, j, k), whatever the
    memory layout; ``v`` (m, r, c) and ``scale`` (m,) float32 (``scale`` = s/‖v_i‖, 0 for a
    zero row), float32 arithmetic up to the floor."""
    m, r, c = v.shape
    out = np.zeros((r, c))
    top = np.float32(s)
    for i in range(m):
        sc = scale[i]
        w = weights[i]
        for j in range(r):
            for k in range(c):
                t = np.floor(v[i, j, k] * sc + rng.random(dtype=np.float32))
                t = min(max(t, -top), top)
                out[j, k] += w * np.float64(t)
    return out
