"""The DP-SGD step's contract: whole messages, the Poisson draw by its definition, a closed-form
clipped sum on a softmax-regression model, the noise's draws and statistics, devices and dtypes,
the ``.grad`` left alone, and the computation path each option names."""

from __future__ import annotations

import math
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
import torch
from torch import nn

from fedrepro.alidpfl import dpsgd, fastclip
from fedrepro.alidpfl.models import make_cnn

CNN_SHAPE = (1, 28, 28)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _exact(message: str) -> str:
    return f"^{re.escape(message)}$"


def _cnn_data(n, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, *CNN_SHAPE, generator=gen), torch.randint(0, 10, (n,), generator=gen)


class Softmax(nn.Module):
    """Softmax regression on the flattened input (no ``input_shape``), whose forward pass may emit
    a warning of its own."""

    def __init__(self, d_in, k, seed, warn=False):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.fc = nn.Linear(d_in, k)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        self.warn = warn

    def forward(self, x):
        if self.warn:
            warnings.warn("softmax forward", UserWarning, stacklevel=2)
        return self.fc(x.reshape(x.shape[0], -1))


def _softmax_clipped_sum(model, x, y, clip):
    """Closed form, float64: for logits z = W a + b and p = softmax(z), the per-sample gradient of
    the cross-entropy is (p − e_y) aᵀ for W and p − e_y for b, of norm ‖p − e_y‖·√(‖a‖² + 1)."""
    w, b = model.fc.weight.detach().double(), model.fc.bias.detach().double()
    a = x.reshape(x.shape[0], -1).double()
    r = torch.softmax(a @ w.T + b, dim=1) - torch.eye(w.shape[0], dtype=torch.float64)[y.long()]
    norms = r.norm(dim=1) * torch.sqrt(a.square().sum(dim=1) + 1)
    c = torch.clamp(clip / norms, max=1.0)
    return [(c[:, None] * r).T @ a, (c[:, None] * r).sum(dim=0)], norms


def _close(got, expected, rtol):
    got = dpsgd.flatten([g.detach().double() for g in got])
    expected = dpsgd.flatten(expected)
    return float((got - expected).norm()) <= rtol * float(expected.norm())


# --------------------------------------------------------------------------- settings


SETTINGS = {"q": 0.1, "clip": 1.0, "sigma": 1.0, "lr": 0.1}


@pytest.mark.parametrize("field", ["q", "clip", "sigma", "lr", "expected_batch"])
@pytest.mark.parametrize("value", ["0.5", None, [1.0], True])
def test_settings_reject_non_reals_naming_the_field(field, value):
    # A numeric string, a list, a bool: not real numbers (None is allowed for expected_batch only).
    if field == "expected_batch" and value is None:
        assert dpsgd.DPSGDSettings(**SETTINGS, expected_batch=None).divisor(30) == pytest.approx(3.0)
        return
    with pytest.raises(ValueError, match=_exact(f"{field} must be a real number, got {value!r}")):
        dpsgd.DPSGDSettings(**(SETTINGS | {field: value}))


@pytest.mark.parametrize("field", ["q", "clip", "sigma", "lr", "expected_batch"])
def test_settings_reject_non_finite_naming_the_field(field):
    for value in (math.inf, math.nan):
        with pytest.raises(ValueError, match=_exact(f"{field} must be finite, got {value!r}")):
            dpsgd.DPSGDSettings(**(SETTINGS | {field: value}))


@pytest.mark.parametrize("field, value, message", [
    ("q", 0.0, "q must lie in (0, 1], got 0.0"),
    ("q", 1.0000001, "q must lie in (0, 1], got 1.0000001"),
    ("clip", 0.0, "clip must be > 0, got 0.0"),
    ("sigma", -1e-300, "sigma must be >= 0, got -1e-300"),
    ("lr", 0.0, "lr must be > 0, got 0.0"),
    ("expected_batch", 0.0, "expected_batch must be > 0 (or None for q*|D_i|), got 0.0"),
])
def test_settings_range_messages(field, value, message):
    with pytest.raises(ValueError, match=_exact(message)):
        dpsgd.DPSGDSettings(**(SETTINGS | {field: value}))


@pytest.mark.parametrize("value", [Fraction(1, 2), np.float32(0.5), torch.tensor(0.5, dtype=torch.float64)])
def test_settings_accept_reals_that_convert_to_float(value):
    # Real numbers that are not int/float instances but define __float__; an expected batch below 1
    # is a valid divisor (B > 0).
    s = dpsgd.DPSGDSettings(q=value, clip=value, sigma=value, lr=value, expected_batch=value)
    assert s.divisor(1000) == 0.5
    assert dpsgd.DPSGDSettings(q=1, clip=1, sigma=0, lr=1, expected_batch=0.25).divisor(8) == 0.25
    assert dpsgd.DPSGDSettings(q=0.25, clip=1, sigma=0, lr=1).divisor(8) == 2.0


# --------------------------------------------------------------------------- Poisson sampling


@pytest.mark.parametrize("n, error", [(-1, ValueError), (2.5, TypeError), (True, TypeError), ("3", TypeError),
                                      (None, TypeError)])
def test_poisson_batch_rejects_bad_n(n, error):
    with pytest.raises(error, match=r"^n must be an integer >= 0, got "):
        dpsgd.poisson_batch(n, 0.5, torch.Generator().manual_seed(0))


@pytest.mark.parametrize("q, message", [(0.0, "q must lie in (0, 1], got 0.0"),
                                         (1.5, "q must lie in (0, 1], got 1.5"),
                                         ("x", "q must be a real number, got 'x'"),
                                         (math.nan, "q must be finite, got nan")])
def test_poisson_batch_rejects_bad_q(q, message):
    with pytest.raises(ValueError, match=_exact(message)):
        dpsgd.poisson_batch(10, q, torch.Generator().manual_seed(0))


def test_poisson_batch_of_no_records_is_empty():
    gen = torch.Generator().manual_seed(1)
    out = dpsgd.poisson_batch(0, 0.5, gen)
    assert out.dtype == torch.int64 and out.shape == (0,)
    assert torch.equal(gen.get_state(), torch.Generator().manual_seed(1).get_state())


def test_poisson_batch_is_the_set_of_uniforms_below_q():
    # Definition: record i joins iff u_i < q with u_i ~ U[0, 1) (float64 draws are multiples of
    # 2^-53, so P(u < q) = q exactly for q on that grid; u <= q would add 2^-53). The uniforms are
    # redrawn from a generator in the same state; q is set equal to one of them, which must stay out.
    n = 200
    u = torch.rand(n, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    j = int(torch.argsort(u)[n // 3])
    q = float(u[j])
    out = dpsgd.poisson_batch(n, q, torch.Generator().manual_seed(5))
    expected = [i for i in range(n) if float(u[i]) < q]
    assert out.dtype == torch.int64
    assert out.tolist() == expected and j not in expected and len(expected) == n // 3
    assert dpsgd.poisson_batch(n, 1.0, torch.Generator().manual_seed(5)).tolist() == list(range(n))


def test_poisson_batch_size_is_binomial():
    # |B| ~ Binomial(n, q): within 5 standard deviations of nq (two-sided tail < 6e-7).
    n, q = 20_000, 0.3
    size = dpsgd.poisson_batch(n, q, torch.Generator().manual_seed(2)).numel()
    assert abs(size - n * q) <= 5 * math.sqrt(n * q * (1 - q))


# --------------------------------------------------------------------------- input checks


def test_data_checks_messages():
    model = make_cnn(CNN_SHAPE, seed=0)
    x, y = _cnn_data(4, seed=0)
    cases = [
        ((x, y.tolist()), "x and y must be torch tensors"),
        ((x.tolist(), y), "x and y must be torch tensors"),
        ((torch.zeros(4, 3, 32, 32), y), "x must have shape (n, 1, 28, 28), got (4, 3, 32, 32)"),
        ((x.long(), y), "x must be a floating-point tensor, got dtype torch.int64"),
        ((x, y[:3]), "y must have shape (4,) to match x, got (3,)"),
        ((x, y.float()), "y must hold integer class labels, got dtype torch.float32"),
    ]
    for (xb, yb), message in cases:
        with pytest.raises(ValueError, match=_exact(message)):
            dpsgd.clipped_gradient_sum(model, xb, yb, 1.0)
    # a model without input_shape: any 4-d x
    plain = Softmax(16, 3, seed=0)
    with pytest.raises(ValueError, match=_exact("x must have shape (n, c, h, w), got (4, 4, 4)")):
        dpsgd.clipped_gradient_sum(plain, torch.zeros(4, 4, 4), y, 1.0, method="loop")
    with pytest.raises(ValueError, match=_exact("clip must be a real number, got 'abc'")):
        dpsgd.clipped_gradient_sum(model, x, y, "abc")
    with pytest.raises(ValueError, match=_exact("clip must be > 0, got -1.0")):
        dpsgd.clipped_gradient_sum(model, x, y, -1.0)
    with pytest.raises(ValueError, match=_exact("settings must be a DPSGDSettings, got dict")):
        dpsgd.noisy_clipped_gradient(model, x, y, dict(SETTINGS), torch.Generator())


def test_a_rejected_step_draws_nothing():
    # The data are checked before the Poisson draw: the generator is left in its state.
    model = make_cnn(CNN_SHAPE, seed=0)
    _, y = _cnn_data(4, seed=0)
    gen = torch.Generator().manual_seed(3)
    with pytest.raises(ValueError, match=_exact("x must have shape (n, 1, 28, 28), got (4, 3, 32, 32)")):
        dpsgd.dpsgd_step(model, torch.zeros(4, 3, 32, 32), y, dpsgd.DPSGDSettings(**SETTINGS), gen)
    assert torch.equal(gen.get_state(), torch.Generator().manual_seed(3).get_state())


# --------------------------------------------------------------------------- clipped sums


def _softmax_case(seed=4, n=7, warn=False):
    model = Softmax(16, 3, seed=seed, warn=warn)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 4, 4, generator=gen)
    y = torch.randint(0, 3, (n,), generator=gen, dtype=torch.int64)
    _, norms = _softmax_clipped_sum(model, x, y, 1.0)
    clip = float(norms.median())  # about half the samples clipped
    return model, x, y, clip


def test_loop_on_a_model_without_input_shape_matches_the_closed_form():
    model, x, y, clip = _softmax_case()
    expected, norms = _softmax_clipped_sum(model, x, y, clip)
    assert (norms > clip).any() and (norms < clip).any()
    got = dpsgd.clipped_gradient_sum(model, x, y, clip, method="loop")
    assert len(got) == 2 and _close(got, expected, 1e-5)
    # int32 and uint8 labels are accepted (cast to int64 for the cross-entropy)
    for dtype in (torch.int32, torch.uint8):
        assert _close(dpsgd.clipped_gradient_sum(model, x, y.to(dtype), clip, method="loop"), expected, 1e-5)


def test_opacus_matches_the_closed_form_and_keeps_other_warnings():
    # The method silences only torch's "Full backward hook is firing" warning (Opacus's hooks on a
    # first layer whose input needs no gradient); the model's own warning comes through.
    model, x, y, clip = _softmax_case(warn=True)
    expected, _ = _softmax_clipped_sum(model, x, y, clip)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = dpsgd.clipped_gradient_sum(model, x, y, clip, method="opacus")
        got_int32 = dpsgd.clipped_gradient_sum(model, x, y.int(), clip, method="opacus")
    assert _close(got, expected, 1e-5) and _close(got_int32, expected, 1e-5)
    messages = [str(w.message) for w in caught]
    assert messages.count("softmax forward") == 2
    assert not [m for m in messages if "Full backward hook is firing" in m], messages


@pytest.mark.parametrize("method", dpsgd.METHODS)
def test_grad_of_the_parameters_is_left_as_it_was(method):
    model = make_cnn(CNN_SHAPE, seed=1)
    x, y = _cnn_data(3, seed=1)
    for k, p in enumerate(model.parameters()):
        p.grad = torch.full_like(p, float(k + 1))
    saved = [p.grad for p in model.parameters()]
    dpsgd.clipped_gradient_sum(model, x, y, 0.1, method=method)
    for k, (p, g) in enumerate(zip(model.parameters(), saved, strict=True)):
        assert p.grad is g and bool((p.grad == k + 1).all())


def _counting(monkeypatch, owner, name, setitem=False):
    calls = []
    original = owner[name] if setitem else getattr(owner, name)

    def wrapper(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    (monkeypatch.setitem if setitem else monkeypatch.setattr)(owner, name, wrapper)
    return calls


def test_opacus_method_uses_ghost_clipping(monkeypatch):
    # Ghost clipping: the norms of the linear layers come from Opacus's norm samplers (one call
    # per linear layer: fc1, fc2), not from materialised per-sample gradients.
    from opacus.grad_sample import GradSampleModuleFastGradientClipping as GSM

    calls = _counting(monkeypatch, GSM.NORM_SAMPLERS, nn.Linear, setitem=True)
    x, y = _cnn_data(3, seed=2)
    dpsgd.clipped_gradient_sum(make_cnn(CNN_SHAPE, seed=2), x, y, 0.1, method="opacus")
    assert len(calls) == 2


def test_fast_options_reach_the_fast_method(monkeypatch):
    # FastOptions("materialise", "reweight") takes a second backward pass, the default one pass;
    # each public function passes its fast_options through.
    model = make_cnn(CNN_SHAPE, seed=3)
    x, y = _cnn_data(6, seed=3)
    settings = dpsgd.DPSGDSettings(q=1.0, clip=0.1, sigma=1.0, lr=0.1)
    grads = _counting(monkeypatch, torch.autograd, "grad")
    reweight = fastclip.FastOptions("materialise", "reweight")
    calls = [
        lambda o: dpsgd.clipped_gradient_sum(model, x, y, 0.1, fast_options=o),
        lambda o: dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator(), fast_options=o),
        lambda o: dpsgd.dpsgd_step(model, x, y, settings, torch.Generator(), fast_options=o),
    ]
    for call in calls:
        for options, passes in ((None, 1), (reweight, 2)):
            grads.clear()
            call(options)
            assert len(grads) == passes


def test_noisy_gradient_defaults_to_the_fast_method(monkeypatch):
    # One backward pass for the whole batch (the loop takes one per sample), same numbers as the loop.
    model = make_cnn(CNN_SHAPE, seed=4)
    x, y = _cnn_data(5, seed=4)
    settings = dpsgd.DPSGDSettings(q=1.0, clip=0.1, sigma=0.0, lr=0.1)
    grads = _counting(monkeypatch, torch.autograd, "grad")
    got, size = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator())
    assert size == 5 and len(grads) == 1
    ref, _ = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator(), method="loop")
    a, b = dpsgd.flatten(got), dpsgd.flatten(ref)
    assert float((a - b).norm()) < 1e-5 * float(b.norm())


# --------------------------------------------------------------------------- noise


def test_step_adds_noise_by_default():
    x, y = _cnn_data(6, seed=5)
    settings = dpsgd.DPSGDSettings(q=0.5, clip=0.1, sigma=1.0, lr=0.1)
    params = []
    for kwargs in ({}, {"noise": True}, {"noise": False}):
        model = make_cnn(CNN_SHAPE, seed=5)
        dpsgd.dpsgd_step(model, x, y, settings, torch.Generator().manual_seed(6), **kwargs)
        params.append(dpsgd.flatten([p.detach() for p in model.parameters()]))
    assert torch.equal(params[0], params[1])
    assert not torch.equal(params[0], params[2])


def test_zero_sigma_draws_no_normals():
    # Documented draw order: n uniforms, then normals only when noise and σ > 0.
    model = make_cnn(CNN_SHAPE, seed=6)
    x, y = _cnn_data(5, seed=6)
    settings = dpsgd.DPSGDSettings(q=0.5, clip=0.1, sigma=0.0, lr=0.1)
    gen = torch.Generator().manual_seed(7)
    dpsgd.noisy_clipped_gradient(model, x, y, settings, gen, noise=True)
    replica = torch.Generator().manual_seed(7)
    torch.rand(5, generator=replica, dtype=torch.float64)
    assert torch.equal(gen.get_state(), replica.get_state())


def test_noise_in_float64_is_drawn_in_float64_and_has_std_sigma_c_over_b():
    # A float64 softmax model fed float32 data (cast to the model's dtype). q = 1: the whole set
    # is the batch, so (g̃·B − Σ ḡ_s)/(σC) is the noise ξ: bit for bit the float64 normals of a
    # generator in the same state after the n uniforms; its mean square over the d = 1,020 entries
    # is χ²_d/d (mean 1, sd √(2/d)): within 6 sd of 1, and its mean (sd 1/√d) within 6/√d of 0.
    model = Softmax(16, 60, seed=8).double()
    gen = torch.Generator().manual_seed(9)
    x = torch.randn(12, 1, 4, 4, generator=gen)
    y = torch.randint(0, 60, (12,), generator=gen)
    sigma, clip, batch = 1.7, 0.3, 5.0
    settings = dpsgd.DPSGDSettings(q=1.0, clip=clip, sigma=sigma, lr=0.1, expected_batch=batch)
    got, size = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator().manual_seed(10),
                                             method="loop")
    assert size == 12 and all(g.dtype == torch.float64 for g in got)
    expected, _ = _softmax_clipped_sum(model, x, y, clip)
    xi = [(g * batch - e) / (sigma * clip) for g, e in zip(got, expected, strict=True)]
    replica = torch.Generator().manual_seed(10)
    torch.rand(12, generator=replica, dtype=torch.float64)
    draws = [torch.randn(p.shape, generator=replica, dtype=torch.float64) for p in (model.fc.weight, model.fc.bias)]
    assert torch.allclose(dpsgd.flatten(xi), dpsgd.flatten(draws), rtol=0, atol=1e-9)
    flat = dpsgd.flatten(xi)
    d = flat.numel()
    assert abs(float(flat.square().mean()) - 1.0) <= 6 * math.sqrt(2 / d)
    assert abs(float(flat.mean())) <= 6 / math.sqrt(d)


def test_noise_std_on_the_cnn_is_sigma_c_over_b():
    # The CNN's d = 582,026 noise entries (float32, empty-looking batch: q small so that |B| = 0,
    # then g̃ = σCξ/B exactly): mean square of g̃·B/(σC) within 6·√(2/d) = 0.011 of 1 (χ²_d/d has
    # sd √(2/d)); the entries' mean within 6/√d.
    model = make_cnn(CNN_SHAPE, seed=7)
    x, y = _cnn_data(3, seed=7)
    q, sigma, clip = 1e-9, 2.0, 0.5
    settings = dpsgd.DPSGDSettings(q=q, clip=clip, sigma=sigma, lr=0.1)
    got, size = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator().manual_seed(11))
    assert size == 0
    flat = dpsgd.flatten(got).double() * (q * 3) / (sigma * clip)
    d = flat.numel()
    assert abs(float(flat.square().mean()) - 1.0) <= 6 * math.sqrt(2 / d)
    assert abs(float(flat.mean())) <= 6 / math.sqrt(d)


# --------------------------------------------------------------------------- devices


_CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.parametrize("device", ["meta", pytest.param("cuda", marks=_CUDA)])
@pytest.mark.parametrize("method", dpsgd.METHODS)
def test_data_on_the_cpu_follow_a_model_on_another_device(method, device):
    # The batch is moved to the model's device ("meta": shapes only, no storage) and so is the
    # noise; every returned tensor lives there. (The meta device accepts a CPU operand in an
    # in-place add, so only a CUDA device checks that the noise itself is moved.)
    model = make_cnn(CNN_SHAPE, seed=0, device=device)
    x, y = _cnn_data(4, seed=8)
    sums = dpsgd.clipped_gradient_sum(model, x, y.int(), 0.5, method=method)
    assert [g.device.type for g in sums] == [device] * len(sums)
    settings = dpsgd.DPSGDSettings(q=1.0, clip=0.5, sigma=1.0, lr=0.1)
    grads, size = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator().manual_seed(0),
                                               method=method)
    assert size == 4 and [g.device.type for g in grads] == [device] * len(grads)
