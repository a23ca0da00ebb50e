"""The stochastic quantizer Q_s of eq. (20) (QSGD with one block) and its bit cost β(s).

Mohammadi et al., §III-A-2, eq. (20). For v ∈ R^d and an integer level s ≥ 1, with
r_i = |v_i|/‖v‖₂, l_i = ⌊s·r_i⌋ and p_i = s·r_i − l_i:

    Q_i(v) = ‖v‖₂ · sign(v_i) · ξ_i,   ξ_i = (l_i + 1)/s with probability p_i, else l_i/s,

and Q(0) = 0. Q is unbiased, E[Q(v)] = v, with exact variance
E‖Q(v) − v‖² = (‖v‖²/s²) Σ_i p_i(1 − p_i) ≤ min(d/s², √d/s)‖v‖² (Assumption 4 with
q = min(d/s², √d/s)).

A message is the norm ‖v‖₂ as a float32 (32 bits) and d signed integers
h_i = sign(v_i)·s·ξ_i ∈ {−s, …, s}; coded at the ideal fixed rate over 2s + 1 symbols it costs
β(s) = d·log2(2s + 1) + 32 bits (:func:`bits`). Unquantized, β = 32·d.

All functions act on the rows of an (m, d) array at once (one norm per row), so that the M
scheduled devices of a round are quantized in one call.
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import check_int

__all__ = [
    "FLOAT_BITS",
    "bits",
    "ceil_bits",
    "decode",
    "encode",
    "exact_variance",
    "quantize",
    "variance_bound",
    "variance_parameter",
]

#: Bits of one uploaded float (the norm of a quantized message, every entry unquantized).
FLOAT_BITS: int = 32


def _check_levels(s: int | None, *, allow_none: bool = False) -> int | None:
    if s is None and allow_none:
        return None
    return check_int("s (quantization levels)", s, 1)


def _as_rows(v: np.ndarray, name: str = "v") -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a real array, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (m, d) or (d,) with d >= 1, got {np.shape(v)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no nan or inf entries)")
    return arr


def encode(v: np.ndarray, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The transmitted message of each row: (norms, h) with h[i, j] = sign(v_ij)·s·ξ_ij.

    ``norms`` has shape (m,) (float32, as sent), ``h`` shape (m, d) with integer entries in
    {−s, …, s} (int32). Rows equal to 0 encode to norm 0 and h = 0.
    """
    s = int(_check_levels(s))  # type: ignore[arg-type]
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    arr = _as_rows(v)
    work = arr.astype(np.float64, copy=False)
    norms = np.sqrt(np.einsum("ij,ij->i", work, work))
    safe = np.where(norms > 0, norms, 1.0)
    scaled = np.abs(work) * (s / safe)[:, None]  # s·r_i in [0, s]
    low = np.floor(scaled)
    up = rng.random(scaled.shape) < (scaled - low)
    levels = np.minimum(low + up, s)
    h = (np.sign(work) * levels).astype(np.int32)
    return norms.astype(np.float32), h


def decode(norms: np.ndarray, h: np.ndarray, s: int) -> np.ndarray:
    """Q(v) from its message: norms[:, None] · h / s (float64 array of shape (m, d))."""
    s = int(_check_levels(s))  # type: ignore[arg-type]
    h = np.asarray(h)
    norms = np.asarray(norms, dtype=np.float64).reshape(-1)
    if h.ndim != 2 or h.shape[0] != norms.shape[0]:
        raise ValueError(f"h must have shape (m, d) with m = len(norms) = {norms.shape[0]}, "
                         f"got {h.shape}")
    if h.size and int(np.abs(h).max()) > s:
        raise ValueError(f"h entries must lie in [-s, s] = [{-s}, {s}]")
    return norms[:, None] * (h / s)


def quantize(v: np.ndarray, s: int | None, rng: np.random.Generator) -> np.ndarray:
    """Q_s applied to each row of ``v`` (shape (m, d) or (d,)); ``s=None`` is the identity.

    The norm is quantized to float32 as it is sent. Returns float64 of the input's shape.
    """
    if s is None:
        return np.array(_as_rows(v), dtype=np.float64).reshape(np.shape(v))
    norms, h = encode(v, s, rng)
    return decode(norms, h, s).reshape(np.shape(v))


def bits(d: int, s: int | None) -> float:
    """Bits of one message, β(s) = d·log2(2s + 1) + 32 (ideal fixed-rate code over the 2s + 1
    symbols, plus the float32 norm); ``s=None`` (no quantization): 32·d.

    Examples at d = 7850: β(1) ≈ 12,474, β(10) ≈ 34,512, β(100) ≈ 60,093, unquantized 251,200.
    """
    d = check_int("d (dimension)", d, 1)
    s = _check_levels(s, allow_none=True)
    if s is None:
        return float(FLOAT_BITS * d)
    return d * math.log2(2 * s + 1) + FLOAT_BITS


def ceil_bits(d: int, s: int | None) -> int:
    """Bits with a fixed-length code per coordinate: d·⌈log2(2s + 1)⌉ + 32 (32·d unquantized)."""
    d = check_int("d (dimension)", d, 1)
    s = _check_levels(s, allow_none=True)
    if s is None:
        return FLOAT_BITS * d
    return d * math.ceil(math.log2(2 * s + 1)) + FLOAT_BITS


def variance_parameter(d: int, s: int | None) -> float:
    """q = min(d/s², √d/s) of Assumption 4 for Q_s (0 without quantization)."""
    d = check_int("d (dimension)", d, 1)
    s = _check_levels(s, allow_none=True)
    if s is None:
        return 0.0
    return min(d / s**2, math.sqrt(d) / s)


def exact_variance(v: np.ndarray, s: int) -> np.ndarray:
    """E‖Q_s(v) − v‖² = (‖v‖²/s²) Σ_i p_i(1 − p_i) per row (float64, shape (m,)).

    Exact for real-valued norms; :func:`quantize` also rounds the norm to float32 (relative
    error ≤ 2^-24), which this formula ignores.
    """
    s = int(_check_levels(s))  # type: ignore[arg-type]
    arr = _as_rows(v).astype(np.float64, copy=False)
    sq = np.einsum("ij,ij->i", arr, arr)
    norms = np.sqrt(sq)
    safe = np.where(norms > 0, norms, 1.0)
    scaled = np.abs(arr) * (s / safe)[:, None]
    p = scaled - np.floor(scaled)
    return sq / s**2 * np.sum(p * (1 - p), axis=1)


def variance_bound(v: np.ndarray, s: int) -> dict[str, np.ndarray]:
    """The two bounds on E‖Q_s(v) − v‖² per row: ``paper`` = q‖v‖² with q = min(d/s², √d/s)
    and ``tight`` = min(d/(4s²), ‖v‖₁/(s‖v‖₂))·‖v‖²."""
    s = int(_check_levels(s))  # type: ignore[arg-type]
    arr = _as_rows(v).astype(np.float64, copy=False)
    d = arr.shape[1]
    sq = np.einsum("ij,ij->i", arr, arr)
    norms = np.sqrt(sq)
    l1 = np.abs(arr).sum(axis=1)
    ratio = np.where(norms > 0, l1 / np.where(norms > 0, norms, 1.0), 0.0)
    return {"paper": variance_parameter(d, s) * sq,
            "tight": np.minimum(d / (4 * s**2), ratio / s) * sq}
