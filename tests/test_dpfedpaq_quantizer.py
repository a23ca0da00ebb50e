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


# --- closed forms and messages of every function (expected values written out here) ---------


def test_levels_are_the_two_neighbours_of_s_v_over_norm():
    rng = np.random.default_rng(5)
    v = rng.standard_normal((6, 40))
    v[3] = 0.0
    v[4] = 0.0
    v[4, 7] = -3.0  # one-hot: exactly -s
    v[5] = 0.0
    v[5, 0] = 2.0  # one-hot: exactly +s
    for s in (1, 4, 9):
        norms, h = qz.encode(v, s, np.random.default_rng(s))
        ref = np.linalg.norm(v, axis=1)
        np.testing.assert_allclose(norms, ref, rtol=1e-7)
        assert norms.dtype == np.float32 and h.dtype == np.int32 and h.shape == v.shape
        t = s * v / np.where(ref > 0, ref, 1.0)[:, None]
        assert np.all((h == np.floor(t)) | (h == np.floor(t) + 1))
        assert np.all(h[3] == 0)
        assert h[4, 7] == -s and np.count_nonzero(h[4]) == 1
        assert h[5, 0] == s and np.count_nonzero(h[5]) == 1


def test_round_up_frequency_is_p_for_both_signs():
    # v = (0.6, -0.8): t = s·v/‖v‖ = (1.8, -2.4) at s = 3; P(h = 2) = 0.8, P(h = -2) = 0.6
    reps = 40000
    rows = np.broadcast_to(np.array([0.6, -0.8]), (reps, 2))
    _, h = qz.encode(rows, 3, np.random.default_rng(11))
    assert set(np.unique(h[:, 0])) == {1, 2} and set(np.unique(h[:, 1])) == {-3, -2}
    se = 0.5 / math.sqrt(reps)
    assert abs(np.mean(h[:, 0] == 2) - 0.8) < 5 * se
    assert abs(np.mean(h[:, 1] == -2) - 0.6) < 5 * se


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_draws_as_stochastic_rounding(dtype):
    v = np.random.default_rng(6).standard_normal((3, 25)).astype(dtype)
    s = 5
    norms, h = qz.encode(v, s, np.random.default_rng(7))
    ref = np.linalg.norm(v.astype(np.float64), axis=1)
    scale = (s / ref).astype(dtype)
    u = np.random.default_rng(7).random(v.shape, dtype=dtype)
    expected = np.clip(np.floor(v * scale[:, None] + u), -s, s)
    np.testing.assert_array_equal(h, expected.astype(np.int32))
    mean = qz.quantized_mean(v, s, np.random.default_rng(7))
    dec = norms.astype(np.float64)[:, None] * expected / s
    assert mean.dtype == np.float64 and mean.shape == (25,)
    np.testing.assert_allclose(mean, dec.mean(axis=0), rtol=1e-12, atol=1e-15)
    q = qz.quantize(v, s, np.random.default_rng(7))
    np.testing.assert_allclose(q, dec, rtol=1e-15, atol=0)
    assert q.dtype == np.float64


def test_integer_rows_and_one_dimensional_input():
    v = np.array([3, -4, 0])
    q = qz.quantize(v, 5, np.random.default_rng(0))
    assert q.shape == (3,)
    np.testing.assert_allclose(q, [3.0, -4.0, 0.0], rtol=1e-7)  # s·v/‖v‖ = (3, -4, 0): integers
    np.testing.assert_allclose(qz.quantized_mean(v, 5, np.random.default_rng(0)), [3.0, -4.0, 0.0],
                               rtol=1e-7)
    np.testing.assert_array_equal(qz.quantized_mean(np.array([[1, 2], [3, 6]]), None, None), [2.0, 4.0])
    ident = qz.quantize(np.array([1, 2, 3]), None, None)
    assert ident.dtype == np.float64 and ident.shape == (3,)
    np.testing.assert_array_equal(ident, [1.0, 2.0, 3.0])
    mean = qz.quantized_mean(np.array([[0.0, 0.0], [0.0, 0.0]]), 2, np.random.default_rng(0))
    np.testing.assert_array_equal(mean, [0.0, 0.0])


def test_quantized_mean_matches_the_mean_of_decoded_rows():
    v = np.random.default_rng(8).standard_normal((4, 30))
    v[2] = 0.0
    mean = qz.quantized_mean(v, 3, np.random.default_rng(1))
    norms, h = qz.encode(v, 3, np.random.default_rng(1))
    expected = np.mean(norms.astype(np.float64)[:, None] * h / 3, axis=0)
    np.testing.assert_allclose(mean, expected, rtol=1e-12, atol=1e-15)


def test_row_norms():
    v = np.array([[3.0, 4.0], [0.0, 0.0], [np.inf, 1.0], [np.nan, 1.0]])
    out = qz.row_norms(v)
    assert out.dtype == np.float64
    assert out[0] == 5.0 and out[1] == 0.0 and out[2] == np.inf and np.isnan(out[3])
    np.testing.assert_array_equal(qz.row_norms(np.array([3, 4])), [5.0])
    x = np.random.default_rng(0).standard_normal((3, 1000)).astype(np.float32)
    r32 = qz.row_norms(x)
    assert r32.dtype == np.float64
    np.testing.assert_allclose(r32, np.linalg.norm(x.astype(np.float64), axis=1), rtol=2e-6)


def test_bit_counts_closed_forms():
    for d in (1, 7, 100):
        assert qz.bits(d, None) == 32.0 * d and isinstance(qz.bits(d, None), float)
        assert qz.ceil_bits(d, None) == 32 * d and isinstance(qz.ceil_bits(d, None), int)
        for s, width in ((1, 2), (2, 3), (3, 3), (4, 4), (7, 4), (8, 5), (1000, 11)):
            assert qz.ceil_bits(d, s) == d * width + 32
            assert qz.bits(d, s) == pytest.approx(d * math.log(2 * s + 1, 2) + 32, rel=1e-14)


def test_variance_parameter_both_branches():
    assert qz.variance_parameter(4, None) == 0.0
    assert qz.variance_parameter(4, 4) == 0.25  # d/s² = 0.25 < √d/s = 0.5
    assert qz.variance_parameter(100, 1) == 10.0  # √d/s = 10 < d/s² = 100
    assert qz.variance_parameter(9, 3) == 1.0
    assert qz.variance_parameter(1, 1) == 1.0
    with pytest.raises(ValueError, match=r"d \(dimension\)"):
        qz.variance_parameter(0, 1)
    with pytest.raises(ValueError, match=r"s \(quantization levels\)"):
        qz.variance_parameter(3, 0)
    with pytest.raises(ValueError, match=r"d \(dimension\)"):
        qz.ceil_bits(0, 1)
    with pytest.raises(ValueError, match=r"s \(quantization levels\)"):
        qz.ceil_bits(3, 0)


def test_exact_variance_closed_form():
    # v = (3, -4): r = (0.6, 0.8); s = 2: s·r = (1.2, 1.6), p = (0.2, 0.6)
    # E‖Q − v‖² = (25/4)(0.2·0.8 + 0.6·0.4) = 6.25·0.4 = 2.5
    out = qz.exact_variance(np.array([[3.0, -4.0], [0.0, 0.0], [0.0, 5.0]]), 2)
    np.testing.assert_allclose(out, [2.5, 0.0, 0.0], atol=1e-14)
    np.testing.assert_allclose(qz.exact_variance(np.array([3, -4]), 2), [2.5], rtol=1e-14)
    # s = 3: s·r = (1.8, 2.4), p = (0.8, 0.4): (25/9)(0.16 + 0.24)
    np.testing.assert_allclose(qz.exact_variance(np.array([3.0, 4.0]), 3), [25 / 9 * 0.4], rtol=1e-13)
    with pytest.raises(ValueError, match="v must be finite"):
        qz.exact_variance(np.array([1.0, np.inf]), 2)
    with pytest.raises(ValueError, match=r"s \(quantization levels\)"):
        qz.exact_variance(np.array([1.0]), None)


def test_variance_bound_closed_forms():
    # row 1: v = (3, -4), d = 2, ‖v‖² = 25, ‖v‖₁/‖v‖₂ = 7/5
    # row 2: one-hot (0, 2): ‖v‖₁/‖v‖₂ = 1; row 3: zero
    v = np.array([[3.0, -4.0], [0.0, 2.0], [0.0, 0.0]])
    for s in (1, 2, 5):
        b = qz.variance_bound(v, s)
        q = min(2 / s**2, math.sqrt(2) / s)
        np.testing.assert_allclose(b["paper"], [25 * q, 4 * q, 0.0], rtol=1e-14)
        np.testing.assert_allclose(b["tight"], [25 * min(2 / (4 * s**2), 1.4 / s),
                                                4 * min(2 / (4 * s**2), 1.0 / s), 0.0], rtol=1e-14)
    # a long flat row, where ‖v‖₁/(s‖v‖₂) = √d/s < d/(4s²)
    b = qz.variance_bound(np.ones(400), 2)
    np.testing.assert_allclose(b["tight"], [400 * 20 / 2], rtol=1e-14)
    np.testing.assert_allclose(b["paper"], [400 * 10.0], rtol=1e-14)
    b = qz.variance_bound(np.array([1, 2]), 1)
    np.testing.assert_allclose(b["paper"], [5 * math.sqrt(2)], rtol=1e-14)
    with pytest.raises(ValueError, match=r"s \(quantization levels\)"):
        qz.variance_bound(np.ones(3), 0)
    with pytest.raises(ValueError, match="v must be finite"):
        qz.variance_bound(np.array([np.nan]), 1)


@pytest.mark.parametrize("fn", ["quantize", "encode", "quantized_mean"])
def test_messages_of_the_quantizing_functions(fn):
    f = getattr(qz, fn)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^v must be a real array, got dtype complex128$"):
        f(np.ones(3, dtype=complex), 2, rng)
    with pytest.raises(ValueError, match=r"^v must be a real array, got dtype bool$"):
        f(np.ones(3, dtype=bool), 2, rng)
    with pytest.raises(ValueError, match=r"^v must have shape \(m, d\) or \(d,\) with d >= 1, got \(2, 0\)$"):
        f(np.ones((2, 0)), 2, rng)
    with pytest.raises(ValueError, match=r"^v must have shape .* got \(0,\)$"):
        f(np.ones(0), 2, rng)
    with pytest.raises(ValueError, match=r"^v must be finite \(no nan or inf entries, finite norms\)$"):
        f(np.array([[1.0, 2.0], [np.inf, 0.0]]), 2, rng)
    with pytest.raises(ValueError, match=r"^v must be finite"):
        f(np.array([1.0, np.nan], dtype=np.float32), 2, rng)
    with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator, got RandomState$"):
        f(np.ones(3), 2, np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"^s \(quantization levels\)"):
        f(np.ones(3), 0, rng)
    if fn != "encode":
        with pytest.raises(ValueError, match=r"^v must be finite \(no nan or inf entries\)$"):
            f(np.array([[1.0, np.nan]]), None, None)
        with pytest.raises(ValueError, match=r"^v must be a real array"):
            f(np.array(["a"]), None, None)
    else:
        with pytest.raises(ValueError, match=r"^s \(quantization levels\)"):
            f(np.ones(3), None, rng)


def test_decode_checks_and_values():
    np.testing.assert_array_equal(qz.decode(np.array([2.0, 4.0]), np.array([[1, -2], [0, 2]]), 2),
                                  [[1.0, -2.0], [0.0, 4.0]])
    out = qz.decode(np.array([[3]]), np.array([[-1, 1]], dtype=np.int8), 1)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[-3.0, 3.0]])
    np.testing.assert_array_equal(qz.decode(np.array([0.0]), np.array([[-2, 2]]), 2), [[-0.0, 0.0]])
    assert qz.decode(np.zeros(0), np.zeros((0, 3), dtype=np.int32), 2).shape == (0, 3)
    bad_norms = r"^norms must be finite reals in \[0, inf\)$"
    for norms in (np.array([-1e-300]), np.array([np.nan]), np.array([np.inf]), np.array([1j]),
                  np.array(["1"])):
        with pytest.raises(ValueError, match=bad_norms):
            qz.decode(norms, np.array([[1]]), 2)
    with pytest.raises(ValueError, match=r"^h must be an integer array with entries in \[-s, s\], got dtype float64$"):
        qz.decode(np.ones(1), np.array([[1.0]]), 2)
    with pytest.raises(ValueError, match=r"^h must have shape \(m, d\) with m = len\(norms\) = 2, got \(2,\)$"):
        qz.decode(np.ones(2), np.array([1, 1]), 2)
    with pytest.raises(ValueError, match=r"^h must have shape \(m, d\) with m = len\(norms\) = 2, got \(1, 2\)$"):
        qz.decode(np.ones(2), np.array([[1, 1]]), 2)
    with pytest.raises(ValueError, match=r"^h entries must lie in \[-s, s\] = \[-2, 2\]$"):
        qz.decode(np.ones(1), np.array([[0, -3]]), 2)
    with pytest.raises(ValueError, match=r"^h entries must lie in \[-s, s\] = \[-2, 2\]$"):
        qz.decode(np.ones(1), np.array([[3, 0]]), 2)
    with pytest.raises(ValueError, match=r"^s \(quantization levels\)"):
        qz.decode(np.ones(1), np.array([[0]]), None)


def test_one_hot_rows_stay_at_plus_minus_s_in_float32():
    # float32 rounding makes s·v/‖v‖ = s + 1/16 here (s = 1000003, v = 0.10495248): without the
    # clamp to [-s, s] about one draw in sixteen would round up to ±(s + 1)
    s = 1000003
    x = np.float32(0.10495248)
    rows = np.zeros((400, 2), dtype=np.float32)
    rows[::2, 0] = x
    rows[1::2, 0] = -x
    _, h = qz.encode(rows, s, np.random.default_rng(0))
    np.testing.assert_array_equal(h[:, 0], np.where(np.arange(400) % 2 == 0, s, -s))
    np.testing.assert_array_equal(h[:, 1], 0)


def test_small_norm_rows_in_the_variances():
    # v = (0.3, -0.4): ‖v‖ = 0.5 < 1; s = 2: s·r = (1.2, 1.6), p = (0.2, 0.6)
    v = np.array([[0.3, -0.4]])
    np.testing.assert_allclose(qz.exact_variance(v, 2), [0.25 / 4 * 0.4], rtol=1e-13)
    b = qz.variance_bound(v, 2)
    np.testing.assert_allclose(b["tight"], [0.25 * min(2 / 16, 1.4 / 2)], rtol=1e-14)
    b = qz.variance_bound(np.full((1, 100), 0.01), 2)  # ‖v‖₁/‖v‖₂ = 10 < d/(4s) = 12.5
    np.testing.assert_allclose(b["tight"], [0.01 * 10 / 2], rtol=1e-13)


def test_plain_mean_is_float64():
    v = np.array([[1.0, 2.0], [np.float32(0.1), 3.0]], dtype=np.float32)
    out = qz.quantized_mean(v, None, None)
    assert out.dtype == np.float64
    assert out[0] == (1.0 + float(np.float32(0.1))) / 2


@pytest.mark.parametrize("fn", [qz.bits, qz.ceil_bits, qz.variance_parameter])
def test_dimension_message(fn):
    with pytest.raises(ValueError, match=r"^d \(dimension\) must"):
        fn(0, 2)


def test_exact_variance_of_a_row_with_norm_below_one():
    """v = (0.1, 0.2), ‖v‖ = √0.05, s = 3: the levels are s|v_i|/‖v‖ (not s|v_i|) also when
    ‖v‖ < 1; the closed form (‖v‖²/s²)·Σ p_i(1 − p_i) written out by hand."""
    norm = math.sqrt(0.05)
    r = [3 * 0.1 / norm, 3 * 0.2 / norm]  # 1.342..., 2.683...
    p = [x - math.floor(x) for x in r]
    expected = 0.05 / 9 * sum(q * (1 - q) for q in p)
    assert qz.exact_variance(np.array([0.1, 0.2]), 3)[0] == pytest.approx(expected, rel=1e-13)
    assert expected != pytest.approx(0.05 / 9 * (0.3 * 0.7 + 0.6 * 0.4), rel=1e-3)  # levels s|v_i|


def test_float32_row_norms_are_accumulated_in_float64():
    # row_norms documents float32 rows as accumulated in float64, so that the float32 norm that
    # is sent does not depend on the order of the entries. x = 1 + 2^-20 is a float32 whose
    # square 1 + 2^-19 + 2^-40 needs 41 bits: a float32 accumulation of four x² loses the 2^-40
    # terms, so its norm is not 2x, while the float64 accumulation is exact and gives 2x.
    x = 1.0 + 2.0**-20
    row = np.full((1, 4), x)
    assert qz.row_norms(row)[0] == 2 * x
    assert qz.row_norms(row.astype(np.float32))[0] == 2 * x
    sum32 = np.float32(x) * np.float32(x) * np.float32(4)  # a float32 accumulation, exact here
    assert math.sqrt(float(sum32)) != 2 * x  # its norm, as a float32 dot product would give


def test_float32_norms_do_not_depend_on_the_order_of_the_entries():
    v = np.random.default_rng(4).standard_normal((6, 7850)).astype(np.float32)
    perm = np.random.default_rng(5).permutation(7850)
    a = qz.row_norms(v).astype(np.float32)
    b = qz.row_norms(v[:, perm]).astype(np.float32)
    np.testing.assert_array_equal(a, b)


def test_quantized_mean_of_a_transposed_stack_draws_in_index_order():
    """A (m, r, c) view with any strides is quantized in the row-major order of its index:
    the same numbers as for its C-ordered copy reshaped to (m, r·c), for float32 (compiled
    pass) and float64 (NumPy passes) rows."""
    base = np.random.default_rng(6).standard_normal((4, 10, 785))
    for dtype in (np.float32, np.float64):
        view = base.astype(dtype).transpose(0, 2, 1)  # (4, 785, 10), not C-contiguous
        assert not view.flags.c_contiguous
        got = qz.quantized_mean(view, 7, np.random.default_rng(8))
        flat = np.ascontiguousarray(view).reshape(4, -1)
        want = qz.quantized_mean(flat, 7, np.random.default_rng(8)).reshape(785, 10)
        assert got.shape == (785, 10) and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        wrong = qz.quantized_mean(base.astype(dtype).reshape(4, -1), 7,
                                  np.random.default_rng(8)).reshape(10, 785).T
        assert np.abs(got - wrong).max() > 1e-3  # the draws follow the index, not the memory


def test_compiled_and_numpy_quantizer_paths_agree():
    """float32 rows: quantized_mean takes the compiled pass, quantize (encode/decode) the NumPy
    passes of _levels; the same draws give the same levels, so the same mean up to the order
    of the float64 sums."""
    v = np.random.default_rng(9).standard_normal((5, 3001)).astype(np.float32)
    got = qz.quantized_mean(v, 10, np.random.default_rng(2))
    want = qz.quantize(v, 10, np.random.default_rng(2)).mean(axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_float32_levels_use_float32_arithmetic():
    # h = clip(floor(v·fl32(s/‖v‖) + U), −s, s) evaluated in float32, written out here. v has small
    # integer entries, so ‖v‖² is an integer below 2^24 (exact in any float32 summation order) and
    # the scale is the same on every machine; at s = 10^6 the float32 rounding of t + U moves a few
    # entries to another integer than float64 arithmetic would (asserted, so the test can fail).
    s = 10**6
    v = np.random.default_rng(1).integers(-15, 16, size=(1, 40_000)).astype(np.float32)
    norm = math.sqrt(int(np.sum(v.astype(np.int64) ** 2)))
    u = np.random.default_rng(101).random(v.shape, dtype=np.float32)
    expected = np.clip(np.floor(v * np.float32(s / norm) + u), -s, s)
    in_float64 = np.clip(np.floor(v.astype(np.float64) * (s / norm) + u.astype(np.float64)), -s, s)
    assert np.count_nonzero(expected != in_float64) >= 3
    norms, h = qz.encode(v, s, np.random.default_rng(101))
    assert norms[0] == np.float32(norm)
    assert np.array_equal(h, expected.astype(np.int32))
