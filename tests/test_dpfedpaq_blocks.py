"""The block quantizer (``fedrepro.dpfedpaq.blocks``) against a plain loop written from eq. (20)
and the QSGD definition of a block: every block of n coordinates quantized with its own norm,
on the same uniform draws; its law (unbiased, variance = sum of the blocks' exact variances,
within Assumption 4's q for the block size); its bit count; its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq import blocks
from fedrepro.dpfedpaq.quantizer import quantize


def _reference(v: np.ndarray, s: int, uniforms: np.ndarray, n: int) -> np.ndarray:
    """Eq. (20) block by block, one coordinate at a time: for the block b of row i (coordinates
    j*n .. j*n + n - 1), r = |v_k|/‖b‖, l = ⌊s·r⌋, p = s·r − l; ξ = (l + 1)/s when the uniform
    u_k < p, else l/s; Q_k = ‖b‖ (sent as float32) · sign(v_k) · ξ. The uniforms are those of
    row-major (row, block, slot) order with the last block padded to n slots."""
    m, d = v.shape
    nb = math.ceil(d / n)
    u = uniforms.reshape(m, nb, n)
    out = np.zeros((m, d))
    for i in range(m):
        for j in range(nb):
            idx = range(j * n, min((j + 1) * n, d))
            norm = math.sqrt(sum(float(v[i, k]) ** 2 for k in idx))
            if norm == 0.0:
                continue
            sent = float(np.float32(norm))
            for slot, k in enumerate(idx):
                x = float(v[i, k])
                # sign(x)·s·ξ is ⌊s·x/‖b‖ + u⌋: for x < 0 the round-up goes toward zero
                t = s * x / norm
                level = math.floor(t + u[i, j, slot])
                out[i, k] = sent * max(-s, min(s, level)) / s
    return out


@pytest.mark.parametrize(("d", "n", "s"), [(23, 5, 1), (23, 5, 3), (40, 8, 2), (17, 17, 4), (50, 7, 10)])
def test_blocks_agree_with_the_plain_loop_on_the_same_draws(d, n, s):
    rng = np.random.default_rng(d * 100 + n)
    v = rng.standard_normal((3, d)) * rng.uniform(0.1, 5.0, size=(3, 1))
    v[1, : min(n, d)] = 0.0  # a zero block
    got = blocks.quantize_blocks(v, s, np.random.default_rng(7), block=n)
    width = min(n, d)  # one block (n >= d) draws d uniforms per row, as quantize does
    uniforms = np.random.default_rng(7).random((3 * math.ceil(d / width), width))
    want = _reference(v, s, uniforms, width)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)  # float64 input: same levels, round-off in the norm only


def test_one_block_is_quantize_itself_and_no_levels_is_the_identity():
    v = np.random.default_rng(0).standard_normal((4, 30)).astype(np.float32)
    for n in (30, 31, 1000):
        np.testing.assert_array_equal(blocks.quantize_blocks(v, 2, np.random.default_rng(1), block=n),
                                      quantize(v, 2, np.random.default_rng(1)))
    np.testing.assert_array_equal(blocks.quantize_blocks(v, None, None, block=4), v.astype(np.float64))
    one = blocks.quantize_blocks(v[0], 3, np.random.default_rng(2), block=7)
    assert one.shape == (30,)
    np.testing.assert_array_equal(one, blocks.quantize_blocks(v[:1], 3, np.random.default_rng(2), block=7)[0])


def test_law_unbiased_and_variance_is_the_sum_over_blocks_within_the_block_bound():
    """Monte Carlo over 20,000 draws of one vector: the mean is v (tolerance 5 standard errors)
    and E‖Q − v‖² the sum of the blocks' exact variances (‖b‖²/s²)·Σ p(1 − p) (within 3 %),
    which is at most q‖v‖² with q = min(n/s², √n/s)."""
    rng = np.random.default_rng(3)
    d, n, s, trials = 26, 6, 2, 20_000
    v = rng.standard_normal(d)
    draws = blocks.quantize_blocks(np.tile(v, (trials, 1)), s, np.random.default_rng(4), block=n)
    se = draws.std(axis=0) / math.sqrt(trials)
    assert np.all(np.abs(draws.mean(axis=0) - v) <= 5 * se + 1e-12)
    exact = 0.0
    for j in range(0, d, n):
        b = v[j:j + n]
        r = s * np.abs(b) / np.linalg.norm(b)
        p = r - np.floor(r)
        exact += float(b @ b) / s**2 * float(np.sum(p * (1 - p)))
    measured = float(np.mean(np.sum((draws - v) ** 2, axis=1)))
    assert measured == pytest.approx(exact, rel=0.03)
    assert exact <= blocks.block_variance_parameter(d, s, n) * float(v @ v)


def test_bits_and_counts():
    assert blocks.block_count(50_890, 512) == 100 and blocks.block_count(512, 512) == 1
    assert blocks.block_bits(50_890, 1, 512) == pytest.approx(50_890 * math.log2(3) + 32 * 100)
    assert blocks.block_bits(10, None, 3) == 320.0
    assert blocks.block_variance_parameter(50_890, 1, 512) == pytest.approx(math.sqrt(512))
    assert blocks.block_variance_parameter(100, 10, 10_000) == pytest.approx(1.0)  # n = min(block, d): min(100/100, 10/10)
    assert blocks.block_variance_parameter(100, None, 10) == 0.0


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "8"])
def test_a_bad_block_size_is_refused(bad):
    with pytest.raises((ValueError, TypeError), match="block"):
        blocks.quantize_blocks(np.ones((2, 5)), 1, np.random.default_rng(0), block=bad)
    with pytest.raises((ValueError, TypeError), match="block"):
        blocks.block_bits(5, 1, bad)
