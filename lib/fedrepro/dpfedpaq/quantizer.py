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
scheduled devices of a round are quantized in one call. The integers are drawn by
stochastic rounding, h_i = ⌊s·v_i/‖v‖ + U_i⌋ with U_i ~ U[0, 1) (the law of eq. (20) for
either sign, see :func:`_levels`), in the input's precision (float32 rows in float32):
four passes over the data. :func:`quantized_mean` returns the server's average of the
decoded messages without forming them (for float32 rows in one compiled pass with the same
draws, :func:`._compiled.quantized_sum`).
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int
from fedrepro.dpfedpaq._compiled import quantized_sum

__all__ = [
    "FLOAT_BITS",
    "MAX_LEVELS",
    "bits",
    "ceil_bits",
    "decode",
    "encode",
    "exact_variance",
    "quantize",
    "quantized_mean",
    "row_norms",
    "variance_bound",
    "variance_parameter",
]

#: Bits of one uploaded float (the norm of a quantized message, every entry unquantized).
FLOAT_BITS: int = 32


#: The largest number of levels: the levels are computed in float32 (exact integers up to 2^24)
#: and sent as int32; more levels than this would be silently wrong (and cost more bits than a float).
MAX_LEVELS = 2 ** 24


def _check_levels(s: int | None, *, allow_none: bool = False) -> int | None:
    if s is None and allow_none:
        return None
    return check_int("s (quantization levels)", s, 1, MAX_LEVELS)


def _check_rng(rng: np.random.Generator) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _as_rows(v: np.ndarray, name: str = "v", *, finite: bool = True) -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiu":
        raise ParameterTypeError(f"{name} must be a real array, got dtype {arr.dtype}")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (m, d) or (d,) with d >= 1, got {np.shape(v)}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no nan or inf entries)")
    return arr


def _checked_norms(arr: np.ndarray) -> np.ndarray:
    """Row norms, raising unless every row is finite (a nan or inf entry makes its norm
    nan or inf: one check on m numbers instead of a pass over the array)."""
    norms = _norms(arr)
    if not np.all(np.isfinite(norms)):
        raise ValueError("v must be finite (no nan or inf entries, finite norms)")
    return norms


def _norms(arr: np.ndarray) -> np.ndarray:
    wide = arr.astype(np.float64) if arr.dtype != np.float64 else arr
    return np.sqrt(np.matmul(wide[:, None, :], wide[:, :, None]).reshape(-1))  # BLAS dot per row


def row_norms(v: np.ndarray) -> np.ndarray:
    """‖v_i‖₂ per row of ``v`` (shape (m, d) or (d,)), float64 (m,), accumulated in float64
    (BLAS dot products of the rows widened to float64: the squares of float32 entries are
    exact, so the norm does not depend, to float32 precision, on the order of the entries,
    e.g. on the memory layout of a round's updates); a row with a nan or inf entry has a nan
    or inf norm."""
    return _norms(_as_float(_as_rows(v, finite=False)))


def _scale(norms: np.ndarray, s: int, dtype: np.dtype) -> np.ndarray:
    """s/‖v_i‖ per row in ``dtype`` (0 for a zero row)."""
    return np.where(norms > 0, s / np.where(norms > 0, norms, 1.0), 0.0).astype(dtype)


def _levels(arr: np.ndarray, norms: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    """The signed integers h_i = sign(v_i)·s·ξ_i of eq. (20), as floats of ``arr``'s dtype.

    Stochastic rounding of t_i = s·v_i/‖v‖: h_i = ⌊t_i + U_i⌋ with U_i ~ U[0, 1) gives
    ⌊t_i⌋ + 1 with probability t_i − ⌊t_i⌋, else ⌊t_i⌋. For v_i ≥ 0 that is l_i + 1 with
    probability p_i; for v_i < 0 it is −l_i with probability p_i and −(l_i + 1) otherwise
    (⌊t_i⌋ = −l_i − 1 when p_i > 0): the law of sign(v_i)·s·ξ_i in eq. (20) in both cases,
    in four passes (scale, add U, floor, clamp) and no separate sign pass. The clamp to
    [−s, s] only undoes a round-up of t_i + U_i when |t_i| = s (one nonzero entry)."""
    t = np.multiply(arr, _scale(norms, s, arr.dtype)[:, None])
    t += rng.random(t.shape, dtype=arr.dtype)
    np.floor(t, out=t)
    np.clip(t, -s, s, out=t)
    return t


def _as_float(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype in (np.float32, np.float64) else arr.astype(np.float64)


def encode(v: np.ndarray, s: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The transmitted message of each row: (norms, h) with h[i, j] = sign(v_ij)·s·ξ_ij.

    ``norms`` has shape (m,) (float32, as sent), ``h`` shape (m, d) with integer entries in
    {−s, …, s} (int32). Rows equal to 0 encode to norm 0 and h = 0. float32 input is
    quantized in float32 arithmetic, anything else in float64 (one uniform draw per entry
    in that precision).
    """
    s = int(_check_levels(s))  # type: ignore[arg-type]
    rng = _check_rng(rng)
    arr = _as_float(_as_rows(v, finite=False))
    norms = _checked_norms(arr)
    return norms.astype(np.float32), _levels(arr, norms, s, rng).astype(np.int32)


def quantized_mean(v: np.ndarray, s: int | None, rng: np.random.Generator) -> np.ndarray:
    """(1/m) Σ_i Q_s(v_i) over the m rows ``v[i]`` of ``v`` (shape (m, d) or (m, r, c), any
    strides): the server's average of the decoded messages, float64 of shape ``v.shape[1:]``;
    ``s=None``: the plain mean (no quantization).

    Same law and same draws as :func:`quantize` of ``v.reshape(m, -1)`` followed by a mean
    over rows (the uniforms in the row-major order of the index, whatever the memory layout),
    without forming the int32 message: each row's float32 norm/s weighs its levels. float32
    rows take one compiled pass (:func:`._compiled.quantized_sum`: the same float32 levels,
    summed in float64 row by row); other rows the NumPy passes of :func:`_levels` and one
    product.
    """
    arr = np.asarray(v)
    if arr.ndim == 3:  # rows in memory order for the checks and norms (order-invariant)
        rows = _as_float(_as_rows(_rows_in_memory_order(arr), finite=s is None))
    else:
        rows = arr = _as_float(_as_rows(arr, finite=s is None))
    arr = _as_float(arr)
    if s is None:
        if rng is not None:  # unused by the plain mean (None allowed), checked all the same
            _check_rng(rng)
        return arr.mean(axis=0, dtype=np.float64)
    s = int(_check_levels(s))  # type: ignore[arg-type]
    rng = _check_rng(rng)
    norms = _checked_norms(rows)
    weights = norms.astype(np.float32).astype(np.float64) / (s * arr.shape[0])
    if arr.dtype == np.float32:  # one compiled pass, the same draws
        out = quantized_sum(arr if arr.ndim == 3 else arr[:, :, None],
                            _scale(norms, s, arr.dtype), weights, s, rng)
        return out.reshape(arr.shape[1:])
    flat = arr.reshape(arr.shape[0], -1)  # the row-major order of the index
    return (weights @ _levels(flat, norms, s, rng).astype(np.float64)).reshape(arr.shape[1:])


def _rows_in_memory_order(arr: np.ndarray) -> np.ndarray:
    """The (m, r·c) rows of an (m, r, c) array in its memory order (a view when the rows are
    contiguous in some axis order, e.g. a transposed C-contiguous stack)."""
    if arr.shape[0] < 1 or min(arr.shape[1:]) < 1:
        raise ValueError(f"v must have shape (m, d) or (m, r, c) with every size >= 1, got {arr.shape}")
    order = sorted((1, 2), key=lambda ax: -abs(arr.strides[ax]))
    view = arr.transpose(0, *order)
    return view.reshape(arr.shape[0], -1)


def decode(norms: np.ndarray, h: np.ndarray, s: int) -> np.ndarray:
    """Q(v) from its message: norms[:, None] · h / s (float64 array of shape (m, d))."""
    s = int(_check_levels(s))  # type: ignore[arg-type]
    h = np.asarray(h)
    norms = np.asarray(norms)
    if norms.dtype.kind not in "fiu" or not np.all(np.isfinite(norms)) or np.any(norms < 0):
        raise ValueError("norms must be finite reals in [0, inf)")
    norms = norms.astype(np.float64).reshape(-1)
    if h.dtype.kind not in "iu":
        raise ValueError(f"h must be an integer array with entries in [-s, s], got dtype {h.dtype}")
    if h.ndim != 2 or h.shape[0] != norms.shape[0]:
        raise ValueError(f"h must have shape (m, d) with m = len(norms) = {norms.shape[0]}, "
                         f"got {h.shape}")
    if h.size and int(np.abs(h).max()) > s:
        raise ValueError(f"h entries must lie in [-s, s] = [{-s}, {s}]")
    return norms[:, None] * (h / s)


def quantize(v: np.ndarray, s: int | None, rng: np.random.Generator) -> np.ndarray:
    """Q_s applied to each row of ``v`` (shape (m, d) or (d,)); ``s=None`` is the identity
    (``rng`` is then unused and may be None).

    The norm is quantized to float32 as it is sent. Returns float64 of the input's shape.
    """
    if s is None:
        if rng is not None:  # unused by the identity (None allowed), checked all the same
            _check_rng(rng)
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
