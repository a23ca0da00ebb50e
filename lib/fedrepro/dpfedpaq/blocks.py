"""The quantizer Q_s of eq. (20) applied block by block: QSGD with a block size n < d.

Mohammadi et al., remark after Assumption 4: for quantized-SGD the loss of Assumption 4 is
q = min(n/s², √n/s), "where n is the block-size and s is the quantization level. For
simplicity, we assume n = d." The paper's analysis and :mod:`fedrepro.dpfedpaq.quantizer`
use one block (n = d); the paper does not say which block size its experiments used.

Here a message of dimension d is cut into ⌈d/n⌉ consecutive blocks of n coordinates (the last
one shorter), and each block is quantized by eq. (20) with its own norm:

    Q_s^n(v) = (Q_s(v_[0:n]), Q_s(v_[n:2n]), …),

unbiased, with E‖Q_s^n(v) − v‖² = Σ_blocks E‖Q_s(v_b) − v_b‖² ≤ min(n/s², √n/s)‖v‖²
(Assumption 4 with the block's q). A message costs one float32 norm per block and
log2(2s + 1) bits per coordinate (:func:`block_bits`).

The blocks reuse :func:`fedrepro.dpfedpaq.quantizer.quantize` on a view of the rows as
(m·⌈d/n⌉, n) (the last block padded with zeros, which quantize to zero and leave its norm
unchanged): one uniform draw per coordinate and padding slot, in row-major order.
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.dpfedpaq.quantizer import FLOAT_BITS, quantize, variance_parameter

__all__ = ["block_bits", "block_count", "block_variance_parameter", "quantize_blocks"]


def block_count(d: int, block: int) -> int:
    """⌈d/n⌉: the number of blocks of a message of dimension ``d`` with block size ``block``."""
    d = check_int("d (dimension)", d, 1)
    block = check_int("block (block size n)", block, 1)
    return -(-d // block)


def quantize_blocks(v: np.ndarray, s: int | None, rng: np.random.Generator | None, *,
                    block: int) -> np.ndarray:
    """Q_s^n of each row of ``v`` (shape (m, d) or (d,)): eq. (20) on every block of ``block``
    consecutive coordinates, each with its own norm. ``s=None`` is the identity, as for
    :func:`~fedrepro.dpfedpaq.quantizer.quantize`; ``block >= d`` is one block (the same
    message and the same draws as ``quantize``). Returns float64 of the input's shape."""
    block = check_int("block (block size n)", block, 1)
    arr = np.asarray(v)
    if s is None or arr.ndim not in (1, 2) or arr.shape[-1] <= block:
        return quantize(arr, s, rng)  # the identity, one block, or quantize's own error for a bad shape
    rows = arr.reshape(-1, arr.shape[-1])
    m, d = rows.shape
    nb = block_count(d, block)
    padded = np.zeros((m, nb * block), dtype=rows.dtype if rows.dtype in (np.float32, np.float64) else np.float64)
    padded[:, :d] = rows
    out = quantize(padded.reshape(m * nb, block), s, rng).reshape(m, nb * block)[:, :d]
    return out.reshape(arr.shape)


def block_bits(d: int, s: int | None, block: int) -> float:
    """Bits of one message: ⌈d/n⌉ float32 norms and d·log2(2s + 1) for the levels (the ideal
    fixed-rate code of :func:`fedrepro.dpfedpaq.quantizer.bits`); ``s=None``: 32·d."""
    nb = block_count(d, block)
    if s is None:
        return float(FLOAT_BITS * d)
    s = check_int("s (quantization level)", s, 1)
    return d * math.log2(2 * s + 1) + FLOAT_BITS * nb


def block_variance_parameter(d: int, s: int | None, block: int) -> float:
    """q = min(n/s², √n/s) of Assumption 4 for blocks of n = min(block, d) coordinates (0
    without quantization): :func:`~fedrepro.dpfedpaq.quantizer.variance_parameter` of one block."""
    d = check_int("d (dimension)", d, 1)
    return variance_parameter(min(check_int("block (block size n)", block, 1), d), s)
