"""The compiled loops of a DP-FedPAQ round against their NumPy definitions."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.dpfedpaq import _compiled as compiled


def numpy_residual_weights(p, scale, labels, weights, a2, clip):
    """The definition, class axis in the middle: w·c·(softmax(scale·p) − e_label)."""
    z = scale * p.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    r = e / e.sum(axis=1, keepdims=True)
    m, k, b = p.shape
    r[np.arange(m)[:, None], labels, np.arange(b)[None, :]] -= 1.0
    factor = weights.astype(np.float64)
    if clip:
        factor = factor / np.sqrt(np.maximum(1.0, a2 * (r * r).sum(axis=1)))
    return (r * factor[:, None, :]).astype(np.float32)


@pytest.mark.parametrize("clip", [True, False])
@pytest.mark.parametrize("scale", [1.0, 0.93])
def test_residual_weights_is_the_clipped_weighted_residual(clip, scale):
    rng = np.random.default_rng(1)
    p = rng.standard_normal((4, 10, 7)).astype(np.float32) * 3
    labels = rng.integers(0, 10, (4, 7))
    weights = rng.random((4, 7)).astype(np.float32)
    weights[:, -1] = 0.0  # padding
    a2 = (rng.random((4, 7)) * 20).astype(np.float32)
    want = numpy_residual_weights(p, scale, labels, weights, a2, clip)
    compiled.residual_weights(p, scale, labels, weights, a2, clip)
    np.testing.assert_allclose(p, want, rtol=2e-7, atol=1e-9)
    assert np.all(p[:, :, -1] == 0.0)


def test_residual_weights_clip_factor_bounds_the_per_sample_gradient():
    """‖ã_j‖·‖c_j R_j‖ ≤ C with a2 = ‖ã_j‖²/C², and c_j = 1 where the gradient is small."""
    rng = np.random.default_rng(2)
    p = rng.standard_normal((3, 10, 50)).astype(np.float32) * 5
    labels = rng.integers(0, 10, (3, 50))
    a_norm2 = rng.random((3, 50)) * 100
    clip_c = 1.5
    a2 = (a_norm2 / clip_c**2).astype(np.float32)
    q = p.copy()
    compiled.residual_weights(q, 1.0, labels, np.ones((3, 50), np.float32), a2, True)
    unclipped = numpy_residual_weights(p, 1.0, labels, np.ones((3, 50), np.float32), a2, False)
    grad = np.sqrt(a_norm2) * np.linalg.norm(q, axis=1)
    assert grad.max() <= clip_c * (1 + 1e-6)
    small = np.sqrt(a_norm2) * np.linalg.norm(unclipped, axis=1) <= clip_c
    assert small.any() and (~small).any()
    np.testing.assert_allclose(q[:, :, small.all(axis=0)], unclipped[:, :, small.all(axis=0)], rtol=1e-6)


def test_residual_weights_is_stable_for_huge_logits():
    """Logits of ±1e4 (float32 exp overflows beyond 88): the largest is subtracted first."""
    p = np.zeros((1, 10, 2), np.float32)
    p[0, 3, 0] = 1e4
    p[0, :, 1] = -1e4
    p[0, 5, 1] = -1e4 + 1
    compiled.residual_weights(p, 1.0, np.array([[3, 0]]), np.ones((1, 2), np.float32),
                              np.ones((1, 2), np.float32), False)
    assert np.all(np.isfinite(p))
    assert np.abs(p[0, :, 0]).max() == 0.0  # softmax = e_3, the label: residual 0
    assert p[0, 0, 1] == pytest.approx(1 / (9 + np.e) - 1, rel=1e-6)
    assert p[0, 5, 1] == pytest.approx(np.e / (9 + np.e), rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_gaussian_is_the_scaled_normals_of_the_stream(dtype):
    u = np.ones((3, 4, 5), dtype=dtype)
    std = np.array([0.5, 0.0, 2.0])
    sq = compiled.add_gaussian(u, std, np.random.default_rng(11))
    z = (np.random.default_rng(11).standard_normal((3, 4, 5)) * std[:, None, None]).astype(dtype)
    np.testing.assert_array_equal(u, 1 + z)
    np.testing.assert_allclose(sq, (z.astype(np.float64) ** 2).sum(axis=(1, 2)), rtol=1e-12)


def test_quantized_sum_levels_are_the_numpy_levels():
    rng = np.random.default_rng(12)
    v = rng.standard_normal((4, 6, 9)).astype(np.float32)
    v[2] = 0.0  # a zero row: scale 0, levels 0
    norms = np.sqrt((v.astype(np.float64) ** 2).sum(axis=(1, 2)))
    s = 5
    scale = np.where(norms > 0, s / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)
    weights = np.array([1.0, 2.0, 3.0, -0.5])
    got = compiled.quantized_sum(v, scale, weights, s, np.random.default_rng(13))
    t = v * scale[:, None, None] + np.random.default_rng(13).random(v.shape, dtype=np.float32)
    levels = np.clip(np.floor(t), -s, s).astype(np.float64)
    np.testing.assert_allclose(got, np.tensordot(weights, levels, axes=1), rtol=1e-13, atol=1e-13)
    assert np.all(np.abs(levels) <= s) and np.all(levels[2] == 0)
