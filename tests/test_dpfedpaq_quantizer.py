"""Quantizer Q_s of eq. (20): unbiasedness, exact variance, symbols, bit count, bad input."""

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq import quantizer as qz


def test_unbiased_and_exact_variance_monte_carlo():
    rng = np.random.default_rng(0)
    v = rng.standard_normal(50)
    reps = 20000
    rows = np.broadcast_to(v, (reps, v.size))
    out = qz.quantize(rows, 3, np.random.default_rng(1))
    mean = out.mean(axis=0)
    se = out.std(axis=0) / math.sqrt(reps) + 1e-12
    assert np.all(np.abs(mean - v) < 5 * se + 1e-6)
    mc_var = np.mean(np.sum((out - v) ** 2, axis=1))
    # independent closed form: Bernoulli variance per coordinate, (‖v‖/s)² p(1−p)
    norm = np.linalg.norm(v)
    p = np.abs(v) * 3 / norm - np.floor(np.abs(v) * 3 / norm)
    expected = (norm / 3) ** 2 * np.sum(p * (1 - p))
    assert mc_var == pytest.approx(expected, rel=0.03)
    assert qz.exact_variance(v, 3)[0] == pytest.approx(expected, rel=1e-12)


def test_symbols_levels_and_edge_cases():
    rng = np.random.default_rng(2)
    v = rng.standard_normal((4, 30))
    v[1] = 0.0
    v[2] = 0.0
    v[2, 5] = -2.5  # one-hot: quantized exactly
    norms, h = qz.encode(v, 1, rng)
    assert h.dtype == np.int32 and np.abs(h).max() <= 1
    out = qz.decode(norms, h, 1)
    assert np.all(out[1] == 0)
    assert out[2, 5] == -2.5 and np.count_nonzero(out[2]) == 1
    # entries are ±‖v‖·l/s with signs of v
    assert np.all(np.sign(out[0][out[0] != 0]) == np.sign(v[0][out[0] != 0]))
    assert qz.quantize(v, None, rng) is not v and np.array_equal(qz.quantize(v, None, rng), v)


def test_variance_bounds_hold():
    rng = np.random.default_rng(3)
    v = rng.standard_normal((5, 200)) * rng.random((5, 200)) ** 4
    for s in (1, 10, 100):
        ex = qz.exact_variance(v, s)
        b = qz.variance_bound(v, s)
        assert np.all(ex <= b["tight"] * (1 + 1e-12))
        assert np.all(b["tight"] <= b["paper"] * (1 + 1e-12))


def test_bits_match_spec_table():
    # values of the spec's table (d = 7850), computed independently by hand: d·log2(2s+1) + 32
    assert round(qz.bits(7850, 1)) == 12474
    assert round(qz.bits(7850, 10)) == 34512
    assert round(qz.bits(7850, 100)) == 60093
    assert qz.bits(7850, None) == 251200
    assert qz.ceil_bits(7850, 10) == 39282
    assert qz.variance_parameter(7850, 10) == pytest.approx(8.86, abs=0.005)
    assert qz.variance_parameter(7850, 1) == pytest.approx(88.6, abs=0.05)


def test_deterministic():
    v = np.random.default_rng(4).standard_normal((3, 40))
    a = qz.quantize(v, 10, np.random.default_rng(9))
    b = qz.quantize(v, 10, np.random.default_rng(9))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("s", [0, -1, 2.5, "3", True])
def test_bad_levels(s):
    with pytest.raises(ValueError, match="s \\(quantization levels\\)"):
        qz.quantize(np.ones(3), s, np.random.default_rng(0))
    with pytest.raises(ValueError, match="s \\(quantization levels\\)"):
        qz.bits(10, s)


def test_bad_vectors_and_dims():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="v must be finite"):
        qz.quantize(np.array([1.0, np.nan]), 2, rng)
    with pytest.raises(ValueError, match="v must have shape"):
        qz.quantize(np.ones((2, 2, 2)), 2, rng)
    with pytest.raises(ValueError, match="d \\(dimension\\)"):
        qz.bits(0, 2)
    with pytest.raises(ValueError, match="rng"):
        qz.quantize(np.ones(3), 2, 0)
    with pytest.raises(ValueError, match="h entries"):
        qz.decode(np.ones(1), np.array([[3]]), 2)
