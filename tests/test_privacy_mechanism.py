"""The one private mechanism (clipping, noise, accountant event) against the formulas it
implements and against dp-accounting, and the engines that call it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fedrepro.privacy import mechanism
from fedrepro.privacy.gaussian import analytic_gaussian_epsilon
from fedrepro.privacy.mechanism import SampledGaussian

NORMS = [0.0, 1e-12, 0.05, 0.1, 0.1000001, 0.3, 2.0, 1e6]


@pytest.mark.parametrize("clip", [0.1, 1.0])
def test_clip_factors_are_min_one_c_over_norm_on_numpy_and_torch(clip):
    expected = [1.0 if n <= clip else clip / n for n in NORMS]  # the formula, one norm at a time
    got_np = mechanism.clip_factors(np.array(NORMS), clip)
    got_torch = mechanism.clip_factors(torch.tensor(NORMS, dtype=torch.float64), clip)
    np.testing.assert_allclose(got_np, expected, rtol=1e-15, atol=0)  # one division: exact to an ulp
    np.testing.assert_allclose(got_torch.numpy(), expected, rtol=1e-15, atol=0)


def test_clip_factors_keep_the_dtype_and_clip_every_gradient_to_norm_c():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((50, 7)).astype(np.float32) * rng.uniform(0, 3, (50, 1)).astype(np.float32)
    norms = np.linalg.norm(g, axis=1)
    c = mechanism.clip_factors(norms, 1.0)
    assert c.dtype == np.float32
    clipped = np.linalg.norm(g * c[:, None], axis=1)
    assert np.all(clipped <= 1.0 + 1e-6)  # float32 rounding of the product
    np.testing.assert_array_equal(clipped[norms <= 1.0], norms[norms <= 1.0])  # unclipped ones untouched
    t = mechanism.clip_factors(torch.from_numpy(norms), 1.0)
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), c, rtol=2e-7)  # float64 vs float32 division: one float32 ulp


def test_clip_factors_reject_what_they_cannot_clip():
    with pytest.raises(ValueError, match="clip"):
        mechanism.clip_factors(np.ones(3), 0.0)
    with pytest.raises(TypeError, match="norms"):
        mechanism.clip_factors([1.0, 2.0], 1.0)
    with pytest.raises(TypeError, match="norms"):
        mechanism.clip_factors(np.ones(3, dtype=np.int64), 1.0)
    with pytest.raises(ValueError, match="sample 1"):
        mechanism.clip_factors(torch.tensor([1.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match="sample 0"):
        mechanism.clip_factors(torch.tensor([math.nan]), 1.0)


def test_a_non_finite_numpy_norm_gives_a_non_finite_factor_not_an_error():
    # a diverged configuration of a tuning grid must score nothing, not stop the grid
    c = mechanism.clip_factors(np.array([math.nan, 1.0]), 0.5)
    assert math.isnan(c[0]) and c[1] == 0.5


def test_gaussian_noise_is_sigma_delta_times_one_standard_normal_draw():
    got = mechanism.gaussian_noise(np.random.default_rng(3), (4, 5), 1.1, 0.2)
    xi = np.random.default_rng(3).standard_normal((4, 5))
    np.testing.assert_array_equal(got, 1.1 * 0.2 * xi)
    rng = np.random.default_rng(4)
    big = mechanism.gaussian_noise(rng, 200_000, 2.0, 0.5)
    assert abs(big.std() - 1.0) < 0.01  # σΔ = 1; 5 standard errors of the sample sd (≈ 0.0016 each)


def test_add_gaussian_noise_adds_std_times_the_generators_normals_in_place():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    before = t.clone()
    out = mechanism.add_gaussian_noise_(t, 0.7, torch.Generator().manual_seed(11))
    assert out is t
    xi = torch.randn((2, 3), generator=torch.Generator().manual_seed(11), dtype=torch.float32)
    torch.testing.assert_close(t, before + 0.7 * xi, rtol=0, atol=1e-6)  # float32 fused multiply-add


@pytest.mark.parametrize("q, sigma, count", [(0.015, 1.1, 1000), (0.1, 2.0, 50), (1.0, 5.0, 10)])
def test_the_event_s_renyi_dp_is_dp_accounting_s(q, sigma, count):
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

    # integer orders: dp-accounting 0.6.0's fractional orders are an upper bound, not the exact
    # value (tests/test_privacy_rdp.py pins that gap against Opacus and quadrature)
    orders = np.array([2.0, 3.0, 4.0, 8.0, 16.0, 32.0])
    event = SampledGaussian(q, sigma, count)
    acc = rdp_acc.RdpAccountant(orders=list(orders))
    acc.compose(event.dp_event())
    # dp-accounting's own Rényi DP of the Poisson-subsampled Gaussian (independent code): the
    # binomial expansion at integer orders agrees to 1e-10 relative (as in tests/test_privacy_rdp.py)
    np.testing.assert_allclose(event.rdp(orders), acc._rdp, rtol=1e-10, atol=0)


def test_one_unsampled_release_has_the_analytic_gaussian_epsilon():
    from dp_accounting.pld import pld_privacy_accountant

    event = SampledGaussian(1.0, 1.3, 1)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event.dp_event())
    exact = analytic_gaussian_epsilon(1e-5, 1.0, 1.3)  # Balle & Wang's exact ε of one Gaussian release
    # the PLD is pessimistic by its discretisation: within 1e-3 above the exact value, never below
    assert exact - 1e-9 <= acc.get_epsilon(1e-5) <= exact + 1e-3


def test_the_event_rejects_bad_parameters():
    for kwargs, name in (({"sampling_rate": 0.0, "noise_multiplier": 1.0}, "sampling_rate"),
                         ({"sampling_rate": 1.5, "noise_multiplier": 1.0}, "sampling_rate"),
                         ({"sampling_rate": 0.1, "noise_multiplier": 0.0}, "noise_multiplier"),
                         ({"sampling_rate": 0.1, "noise_multiplier": 1.0, "count": -1}, "count"),
                         ({"sampling_rate": 0.1, "noise_multiplier": 1.0, "count": 1.5}, "count")):
        with pytest.raises(ValueError, match=name):
            SampledGaussian(**kwargs)


def test_the_engines_call_the_one_mechanism():
    """ALI-DPFL's DP-SGD, the head-to-head accountant and engines use this module, not copies."""
    import inspect

    from fedrepro.alidpfl import dpsgd, training
    from fedrepro.headtohead import accounting, softmax

    for module in (dpsgd, training, softmax):
        src = inspect.getsource(module)
        assert "mechanism." in src and "torch.randn(" not in src and "np.minimum(1.0, clip" not in src, module
    plan = accounting.PrivacyPlan(0.05, 40)
    assert plan.event(1.2) == SampledGaussian(0.05, 1.2, 40)
    norms = torch.tensor([0.05, 0.5])
    torch.testing.assert_close(dpsgd.clip_factors(norms, 0.1), mechanism.clip_factors(norms, 0.1), rtol=0, atol=0)
