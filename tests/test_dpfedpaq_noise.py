"""Sensitivities, noise multipliers and the noise draw of DP-FedPAQ (dpfedpaq.noise).

Expected values are the closed forms of the module docstring (2ηEC, 4ηEC, 2ηC/b, C/n;
σ/Δ = sqrt(2 ln(1.25/δ))/ε and eq. (16) sqrt(8γ² ln(1.25γ/δ))/ε) written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq.amplification import exact_noise_std
from fedrepro.dpfedpaq.noise import add_noise, noise_multipliers, sensitivity

B = np.array([2, 5, 10])
N = np.array([100, 200, 400])
KW = dict(lr=0.1, local_steps=3, clip=2.0, batch_size=B, n_samples=N)


@pytest.mark.parametrize("mode, expected", [
    ("rigorous", 2 * 0.1 * 3 * 2.0 * np.ones(3)),
    ("theory", 4 * 0.1 * 3 * 2.0 * np.ones(3)),
    ("per_step", 2 * 0.1 * 2.0 / B),
    ("authors_code", 2.0 / N),
])
def test_sensitivity_closed_forms(mode, expected):
    out = sensitivity(mode, **KW)
    assert out.dtype == np.float64 and out.shape == (3,)
    np.testing.assert_allclose(out, expected, rtol=1e-15)


@pytest.mark.parametrize("mode", ["rigorous", "theory", "per_step", "authors_code"])
def test_sensitivity_broadcasts_lr_per_device(mode):
    lr = np.array([0.1, 0.2, 0.4])
    out = sensitivity(mode, lr=lr, local_steps=2, clip=1.0, batch_size=4, n_samples=50)
    single = [float(sensitivity(mode, lr=x, local_steps=2, clip=1.0, batch_size=4, n_samples=50))
              for x in lr]
    expected = {"rigorous": 4 * lr, "theory": 8 * lr, "per_step": 2 * lr / 4,
                "authors_code": np.full(3, 1 / 50)}[mode]
    assert out.shape == (3,)
    np.testing.assert_allclose(out, expected, rtol=1e-15)
    np.testing.assert_allclose(single, expected, rtol=1e-15)


def test_sensitivity_scalars_give_0d_and_broadcast_shapes():
    for mode in ("rigorous", "theory", "per_step", "authors_code"):
        assert sensitivity(mode, lr=0.5, local_steps=1, clip=1.0, batch_size=1, n_samples=1).shape == ()
    out = sensitivity("rigorous", lr=0.5, local_steps=1, clip=1.0, batch_size=np.array([1, 2]),
                      n_samples=3)
    np.testing.assert_array_equal(out, [1.0, 1.0])
    out = sensitivity("per_step", lr=0.5, local_steps=1, clip=1.0, batch_size=2,
                      n_samples=np.array([3, 4, 5]))
    np.testing.assert_array_equal(out, [0.5, 0.5, 0.5])
    out = sensitivity("authors_code", lr=np.array([0.1, 0.2]), local_steps=1, clip=1.0, batch_size=2,
                      n_samples=4)
    np.testing.assert_array_equal(out, [0.25, 0.25])


@pytest.mark.parametrize("mode", ["rigorous", "theory", "per_step", "authors_code"])
def test_sensitivity_has_one_entry_per_device(mode):
    arr = np.array([2, 4, 8])
    for b, n in ((arr, 16), (2, arr * 4), (arr, arr * 4)):
        out = sensitivity(mode, lr=0.5, local_steps=2, clip=1.0, batch_size=b, n_samples=n)
        assert out.shape == (3,), (b, n)
        assert out.dtype == np.float64


def test_sensitivity_boundaries_accepted():
    out = sensitivity("per_step", lr=1e-300, local_steps=1, clip=1e-3, batch_size=1, n_samples=1)
    assert out == pytest.approx(2e-303, rel=1e-14)
    out = sensitivity("authors_code", lr=5.0, local_steps=1, clip=3.0, batch_size=np.uint8(1),
                      n_samples=np.array([1], dtype=np.uint16))
    np.testing.assert_array_equal(out, [3.0])


@pytest.mark.parametrize("changes, match", [
    ({"mode": "rigourous"}, r"^mode must be one of \('rigorous', 'theory', 'per_step', "
                            r"'authors_code'\), got 'rigourous'$"),
    ({"mode": 1}, r"^mode must be one of .*got 1$"),
    ({"local_steps": 0}, "local_steps"),
    ({"clip": 0.0}, "clip"),
    ({"lr": 0.0}, r"^lr must be in \(0, inf\)$"),
    ({"lr": -0.1}, r"^lr must be in \(0, inf\)$"),
    ({"lr": math.nan}, r"^lr must be a real number, got nan$"),
    ({"lr": math.inf}, r"^lr must be in \(0, inf\)$"),
    ({"lr": np.array([0.1, 0.0, 0.1])}, r"^lr must be in \(0, inf\)$"),
    ({"lr": np.array([0.1, math.inf, 0.1])}, r"^lr must be in \(0, inf\)$"),
    ({"batch_size": 0}, r"^batch_size must be integers >= 1$"),
    ({"batch_size": np.array([1, 0, 2])}, r"^batch_size must be integers >= 1$"),
    ({"batch_size": 2.0}, r"^batch_size must be integers >= 1$"),
    ({"n_samples": 0}, r"^n_samples must be integers >= 1$"),
    ({"n_samples": np.array([5, 0, 5])}, r"^n_samples must be integers >= 1$"),
    ({"n_samples": 5.0}, r"^n_samples must be integers >= 1$"),
])
def test_sensitivity_rejects_bad_input(changes, match):
    kw = dict(lr=0.1, local_steps=1, clip=1.0, batch_size=np.array([1, 2, 3]),
              n_samples=np.array([5, 6, 7]))
    changes = dict(changes)
    mode = changes.pop("mode", "rigorous")
    kw.update(changes)
    for m in ([mode] if mode != "rigorous" else ["rigorous", "authors_code"]):
        with pytest.raises(ValueError, match=match):
            sensitivity(m, **kw)


def test_unamplified_multiplier_is_eq13():
    eps, delta = 0.7, 1e-5
    out = noise_multipliers("unamplified", epsilon=eps, delta=delta, gamma=np.array([0.1, 1.0, 0.3]))
    assert out.shape == (3,)
    np.testing.assert_allclose(out, math.sqrt(2 * math.log(1.25 / delta)) / eps, rtol=1e-14)
    out = noise_multipliers("unamplified", epsilon=eps, delta=delta, gamma=0.5)
    assert out.shape == (1,)


def test_paper_multiplier_is_eq16_per_device():
    eps, delta = 0.5, 1e-5
    g = np.array([0.1, 0.2, 0.1, 1.0, 0.2])
    out = noise_multipliers("paper", epsilon=eps, delta=delta, gamma=g)
    expected = np.sqrt(8 * g**2 * np.log(1.25 * g / delta)) / eps
    assert out.shape == (5,)
    np.testing.assert_allclose(out, expected, rtol=1e-13)


def test_exact_multiplier_per_device():
    eps, delta = 1.0, 1e-5
    g = np.array([0.05, 0.5, 0.05, 0.5])
    out = noise_multipliers("exact", epsilon=eps, delta=delta, gamma=g)
    expected = [exact_noise_std(eps, delta, 1.0, float(x)) for x in g]
    np.testing.assert_allclose(out, expected, rtol=1e-14)
    assert out[0] != out[1]


@pytest.mark.parametrize("changes, match", [
    ({"calibration": "papers"}, r"^calibration must be one of \('paper', 'exact', 'unamplified'\), "
                                r"got 'papers'$"),
    ({"calibration": None}, r"^calibration must be one of"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"gamma": 0.0}, r"^gamma \(subsampling ratio E·b/n\) must lie in \(0, 1\]$"),
    ({"gamma": -0.5}, r"^gamma \(subsampling ratio"),
    ({"gamma": 1.0 + 1e-12}, r"^gamma \(subsampling ratio"),
    ({"gamma": math.nan}, r"^gamma must be a real number, got nan$"),
    ({"gamma": np.array([0.5, 0.0])}, r"^gamma \(subsampling ratio"),
    ({"gamma": np.array([0.5, 2.0])}, r"^gamma \(subsampling ratio"),
])
def test_noise_multipliers_reject_bad_input(changes, match):
    kw = dict(calibration="unamplified", epsilon=1.0, delta=1e-5, gamma=np.array([0.5, 1.0]))
    kw.update(dict(changes))
    cals = [kw.pop("calibration")]
    if cals == ["unamplified"]:
        cals = ["unamplified", "paper", "exact"]
    for c in cals:
        with pytest.raises(ValueError, match=match):
            noise_multipliers(c, **kw)


def test_gamma_one_accepted():
    out = noise_multipliers("paper", epsilon=1.0, delta=1e-5, gamma=1.0)
    np.testing.assert_allclose(out, [math.sqrt(8 * math.log(1.25 / 1e-5))], rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_noise_draws_row_scaled_normals(dtype):
    u = np.arange(12, dtype=dtype).reshape(3, 4) / 7
    u0 = u.copy()
    std = np.array([0.1, 0.0, 0.3])  # float64 normals times the std, rounded once to u's dtype
    norms = add_noise(u, std, np.random.default_rng(3))
    z = np.random.default_rng(3).standard_normal((3, 4))
    expected_z = (z * std[:, None]).astype(dtype)
    assert u.dtype == dtype
    np.testing.assert_array_equal(u, u0 + expected_z)
    assert norms.dtype == np.float64 and norms.shape == (3,)
    np.testing.assert_allclose(norms, np.linalg.norm(expected_z.astype(np.float64), axis=1),
                               rtol=1e-6 if dtype == np.float32 else 1e-14)
    assert norms[1] == 0.0


def test_add_noise_rounds_the_float64_noise_once_to_float32():
    """The noise of a float32 update is std·ζ computed in float64 and rounded once (on a zero
    model the noise is seen bit for bit); a float32 product of the rounded std and the rounded
    normal would differ in the last bit for many of these 3,000 entries."""
    u = np.zeros((3, 1000), dtype=np.float32)
    std = np.array([0.1, 0.0, 0.3])
    add_noise(u, std, np.random.default_rng(3))
    z = np.random.default_rng(3).standard_normal((3, 1000))
    np.testing.assert_array_equal(u, (z * std[:, None]).astype(np.float32))
    assert u.dtype == np.float32
    twice = z.astype(np.float32) * std.astype(np.float32)[:, None]
    assert np.count_nonzero(twice != u) > 100


def test_add_noise_on_a_transposed_view_draws_in_index_order():
    """A (m, r, c) view with any strides gets the normals in the row-major order of its
    index, as its C-ordered copy would: a round's class-major updates seen as (M, 785, 10)
    get the same noise per model entry as (M, 7850) row-major ones."""
    stack = np.zeros((3, 10, 785), dtype=np.float32)
    view = stack.transpose(0, 2, 1)
    std = np.array([0.5, 1.0, 2.0])
    norms = add_noise(view, std, np.random.default_rng(4))
    flat = np.zeros((3, 7850), dtype=np.float32)
    norms_flat = add_noise(flat, std, np.random.default_rng(4))
    np.testing.assert_array_equal(view, flat.reshape(3, 785, 10))
    np.testing.assert_allclose(norms, norms_flat, rtol=1e-12)
    assert not np.array_equal(stack.reshape(3, -1), flat)  # the memory order differs


def test_add_noise_scalar_std_and_zero():
    u = np.ones((2, 3))
    norms = add_noise(u, 0.0, np.random.default_rng(0))
    np.testing.assert_array_equal(u, np.ones((2, 3)))
    np.testing.assert_array_equal(norms, [0.0, 0.0])
    u = np.zeros((2, 3))
    add_noise(u, 1.5, np.random.default_rng(1))
    np.testing.assert_array_equal(u, 1.5 * np.random.default_rng(1).standard_normal((2, 3)))


def test_add_noise_rejects_bad_input():
    rng = np.random.default_rng(0)
    for bad in ([[0.0, 1.0]], np.zeros(3), np.zeros((2, 2, 2, 2)), np.zeros((2, 3), dtype=np.int64),
                np.zeros((2, 3), dtype=np.float16)):
        with pytest.raises(ValueError, match=r"^u must be a float32 or float64 array of shape \(m, d\) "
                                             r"or \(m, r, c\), got "):
            add_noise(bad, 1.0, rng)
    with pytest.raises(ValueError, match=r"got ndarray \(3,\)$"):
        add_noise(np.zeros(3), 1.0, rng)
    ro = np.zeros((2, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"^u must be writeable \(the noise is added in place\)$"):
        add_noise(ro, 1.0, rng)
    with pytest.raises(ValueError, match=r"^rng must be a numpy.random.Generator, got RandomState$"):
        add_noise(np.zeros((2, 3)), 1.0, np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"^std must be a scalar or have shape \(m,\) = \(2,\), got \(3,\)$"):
        add_noise(np.zeros((2, 3)), np.ones(3), rng)
    for std in (-1e-300, math.nan, math.inf, np.array([1.0, -1.0]), np.array([math.inf, 1.0])):
        u = np.zeros((2, 3))
        with pytest.raises(ValueError, match=r"^std (\(noise standard deviation\) must lie in \[0, inf\)|must be a real "
                                             r"number, got nan)$"):
            add_noise(u, std, rng)
        np.testing.assert_array_equal(u, 0.0)
