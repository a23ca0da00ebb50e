"""The ALI-DPFL CNN and its DP-SGD step: sizes, exactness of the three methods, determinism, inputs."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from fedrepro.alidpfl import dpsgd, fastclip
from fedrepro.alidpfl.models import make_cnn, num_parameters

SHAPES = [(1, 28, 28), (3, 32, 32)]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One intra-op thread: the small batches here gain nothing from more, and a shared machine
    makes multi-threaded torch wait for its busiest core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def models():
    return {shape: make_cnn(shape, seed=3) for shape in SHAPES}


def _data(shape, n, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, *shape, generator=gen), torch.randint(0, 10, (n,), generator=gen)


def _rel(a, b):
    a, b = dpsgd.flatten(a).detach(), dpsgd.flatten(b).detach()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


@pytest.mark.parametrize("shape,d", [((1, 28, 28), 582_026), ((3, 32, 32), 878_538)])
def test_parameter_count_matches_layer_arithmetic(shape, d):
    # Independent count from the layer shapes (reference notes §1): conv (k·k·c_in + 1)·c_out,
    # linear (in + 1)·out, flatten dim 64·4·4 (28×28) or 64·5·5 (32×32).
    c = shape[0]
    flat = 64 * 16 if shape[1] == 28 else 64 * 25
    expected = (25 * c + 1) * 32 + (25 * 32 + 1) * 64 + (flat + 1) * 512 + (512 + 1) * 10
    assert expected == d
    assert num_parameters(make_cnn(shape, seed=0)) == d


def test_init_is_seeded_and_default_scaled():
    a, b, c = (make_cnn((1, 28, 28), seed=s) for s in (5, 5, 6))
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.fc1.weight, c.fc1.weight)
    # PyTorch's default bound 1/sqrt(fan_in): fc1 has fan_in 1024, so |w| <= 1/32.
    w = a.fc1.weight.detach().abs().max()
    assert 0.9 / 32 < float(w) <= 1 / 32


def _loop_norms(model, x, y):
    out = []
    for s in range(x.shape[0]):
        g = torch.autograd.grad(F.cross_entropy(model(x[s:s + 1]), y[s:s + 1]), list(model.parameters()))
        out.append(float(torch.linalg.vector_norm(dpsgd.flatten(g))))
    return torch.tensor(out)


@pytest.fixture(scope="module")
def loop_reference(models):
    """Per shape: a batch of 6, its batch-of-one norms, C = their median (half the samples are
    clipped) and the loop's clipped sum."""
    out = {}
    for shape, model in models.items():
        x, y = _data(shape, 6, seed=11)
        norms = _loop_norms(model, x, y)
        clip = float(norms.median())
        out[shape] = (x, y, norms, clip, dpsgd.clipped_gradient_sum(model, x, y, clip, method="loop"))
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("options", [fastclip.FastOptions(c, s) for c in ("materialise", "gram")
                                     for s in ("bookkeeping", "reweight")])
def test_fast_norms_and_sum_variants_equal_loop(models, loop_reference, shape, options):
    model = models[shape]
    x, y, loop_norms, clip, ref = loop_reference[shape]
    # per-sample norms from the layer identities vs batch-of-one autograd (1e-5 relative, float32)
    norms = fastclip.per_sample_norms(model, x, y, options=options)
    assert torch.allclose(norms, loop_norms, rtol=1e-5, atol=0)
    assert _rel(fastclip.clipped_sum(model, x, y, clip, options=options), ref) < 1e-5


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("method", ["fast", "opacus"])
@pytest.mark.parametrize("batch", ["half", "empty", "one"])
def test_step_without_noise_equals_loop(shape, method, batch):
    # q = 0.5: about 12 of 24 records; q = 1e-9: the empty batch; "one": q halfway between the
    # smallest two of the step's 24 sampling uniforms, so exactly one record joins (asserted).
    # Clip 0.5 clips some samples and not others.
    x, y = _data(shape, 24, seed=2)
    u = torch.rand(24, generator=torch.Generator().manual_seed(40), dtype=torch.float64).sort().values
    q = {"half": 0.5, "empty": 1e-9, "one": float(u[0] + u[1]) / 2}[batch]
    settings = dpsgd.DPSGDSettings(q=q, clip=0.5, sigma=1.0, lr=0.3)
    models_, sizes = [], []
    for m in ("loop", method):
        model = make_cnn(shape, seed=1)
        sizes.append(dpsgd.dpsgd_step(model, x, y, settings, torch.Generator().manual_seed(40), method=m,
                                      noise=False))
        models_.append(model)
    assert sizes[0] == sizes[1] == {"half": sizes[0], "empty": 0, "one": 1}[batch]
    assert batch != "half" or 6 <= sizes[0] <= 18
    start = list(make_cnn(shape, seed=1).parameters())
    moved = [[p - p0 for p, p0 in zip(m.parameters(), start, strict=True)] for m in models_]
    if sizes[0] == 0:
        assert all(float(t.detach().abs().max()) == 0.0 for t in moved[1])
    else:
        assert _rel(moved[1], moved[0]) < 1e-5


def test_methods_work_under_no_grad_and_in_eval_mode(models, loop_reference):
    shape = (1, 28, 28)
    model = models[shape]
    x, y, _, clip, ref = loop_reference[shape]
    model.eval()
    try:
        with torch.no_grad():
            for method in ("fast", "opacus"):
                assert _rel(dpsgd.clipped_gradient_sum(model, x, y, clip, method=method), ref) < 1e-5
    finally:
        model.train()
    assert model.training


def test_clipped_sum_respects_clip_bound(models):
    # Every clipped per-sample gradient has norm <= C, so ||sum|| <= |B|·C (triangle inequality).
    x, y = _data((1, 28, 28), 10, seed=4)
    s = dpsgd.clipped_gradient_sum(models[(1, 28, 28)], x, y, 1e-3, method="fast")
    assert float(torch.linalg.vector_norm(dpsgd.flatten(s))) <= 10 * 1e-3 * (1 + 1e-6)


@pytest.mark.parametrize("method", dpsgd.METHODS)
def test_noise_is_the_same_for_every_method(method):
    # g~ = (clipped sum + sigma*C*xi)/(q*n), with the batch and xi rebuilt independently from a
    # generator in the same state: n uniforms for the sampling, then one normal per parameter.
    shape, n, q, sigma, clip = (1, 28, 28), 30, 0.2, 1.3, 0.05
    x, y = _data(shape, n, seed=8)
    settings = dpsgd.DPSGDSettings(q=q, clip=clip, sigma=sigma, lr=1.0)
    model = make_cnn(shape, seed=0)
    grads, size = dpsgd.noisy_clipped_gradient(model, x, y, settings, torch.Generator().manual_seed(9),
                                               method=method)
    gen = torch.Generator().manual_seed(9)
    idx = torch.nonzero(torch.rand(n, generator=gen, dtype=torch.float64) < q).reshape(-1)
    assert size == len(idx) > 0
    total = dpsgd.clipped_gradient_sum(model, x[idx], y[idx], clip, method="loop")
    expected = [(t + torch.randn(p.shape, generator=gen) * (sigma * clip)) / (q * n)
                for t, p in zip(total, model.parameters(), strict=True)]
    assert _rel(grads, expected) < 1e-6


@pytest.mark.parametrize("method", ["fast", "loop"])
def test_same_seed_gives_identical_parameters_after_20_steps(method):
    shape = (1, 28, 28)
    x, y = _data(shape, 20, seed=5)
    settings = dpsgd.DPSGDSettings(q=0.1, clip=0.1, sigma=1.1, lr=0.5)
    runs = []
    for _ in range(2):
        model, gen = make_cnn(shape, seed=7), torch.Generator().manual_seed(123)
        for _ in range(20):
            dpsgd.dpsgd_step(model, x, y, settings, gen, method=method)
        runs.append(dpsgd.flatten([p.detach() for p in model.parameters()]))
    assert torch.equal(runs[0], runs[1])
    assert not torch.equal(runs[0], dpsgd.flatten([p.detach() for p in make_cnn(shape, seed=7).parameters()]))


def test_expected_batch_divisor_and_update_rule():
    # w_new = w - lr * g~ where g~ = clipped sum / B: check against clipped_gradient_sum directly.
    shape = (1, 28, 28)
    x, y = _data(shape, 12, seed=6)
    settings = dpsgd.DPSGDSettings(q=1.0, clip=0.2, sigma=0.0, lr=0.25, expected_batch=4.0)
    model = make_cnn(shape, seed=2)
    before = [p.detach().clone() for p in model.parameters()]
    total = dpsgd.clipped_gradient_sum(model, x, y, 0.2, method="loop")
    assert dpsgd.dpsgd_step(model, x, y, settings, torch.Generator().manual_seed(0)) == 12
    step = [a - b.detach() for a, b in zip(before, model.parameters(), strict=True)]
    assert _rel(step, [t * (0.25 / 4.0) for t in total]) < 1e-5


@pytest.mark.parametrize("field,value", [("clip", 0.0), ("clip", -1.0), ("sigma", -0.1), ("q", 0.0),
                                         ("q", 1.5), ("q", -0.2), ("lr", 0.0), ("expected_batch", 0.0),
                                         ("clip", math.nan), ("q", True)])
def test_bad_settings_name_the_field(field, value):
    kwargs = {"q": 0.1, "clip": 1.0, "sigma": 1.0, "lr": 0.1} | {field: value}
    with pytest.raises(ValueError, match=field):
        dpsgd.DPSGDSettings(**kwargs)


def test_bad_inputs_name_the_argument(models):
    model = models[(1, 28, 28)]
    settings = dpsgd.DPSGDSettings(q=0.5, clip=1.0, sigma=1.0, lr=0.1)
    x, y = _data((1, 28, 28), 4, seed=0)
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="x must have shape"):
        dpsgd.dpsgd_step(model, torch.randn(4, 3, 32, 32), y, settings, gen)
    with pytest.raises(ValueError, match="x must have shape"):
        dpsgd.dpsgd_step(model, torch.randn(4, 28, 28), y, settings, gen)
    with pytest.raises(ValueError, match="y must have shape"):
        dpsgd.dpsgd_step(model, x, y[:3], settings, gen)
    with pytest.raises(ValueError, match="method"):
        dpsgd.dpsgd_step(model, x, y, settings, gen, method="vmap")
    with pytest.raises(ValueError, match="clip"):
        dpsgd.clipped_gradient_sum(model, x, y, 0.0)
    with pytest.raises(ValueError, match="generator"):
        dpsgd.dpsgd_step(model, x, y, settings, 0)
    with pytest.raises(ValueError, match="input_shape"):
        make_cnn((28, 28), seed=0)
    with pytest.raises(ValueError, match="seed"):
        make_cnn((1, 28, 28), seed=-1)


@pytest.mark.parametrize("kwargs, message", [
    ({"conv_norm": "exact"}, r"^conv_norm must be one of \('materialise', 'gram'\), got 'exact'$"),
    ({"sum_by": "loop"}, r"^sum_by must be one of \('bookkeeping', 'reweight'\), got 'loop'$"),
])
def test_fast_options_reject_unknown_methods(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fastclip.FastOptions(**kwargs)


def test_fast_method_names_the_model_it_needs():
    x, y = torch.zeros(2, 1, 28, 28), torch.zeros(2, dtype=torch.long)
    with pytest.raises(ValueError, match=r"^method 'fast' needs a fedrepro\.alidpfl\.models\.CNN, got Linear$"):
        fastclip.per_sample_norms(torch.nn.Linear(784, 10), x, y)


def _conv_grad_loop(a, d, weight_shape):
    """Per-sample conv weight gradients δ_s U_sᵀ by autograd, one sample at a time: the gradient of
    ⟨δ_s, conv2d(a_s, W)⟩ with respect to W (bias-free, stride 1)."""
    out = []
    for s in range(a.shape[0]):
        w = torch.zeros(weight_shape, requires_grad=True)
        (g,) = torch.autograd.grad((F.conv2d(a[s:s + 1], w) * d[s:s + 1]).sum(), [w])
        out.append(g.reshape(weight_shape[0], -1))
    return torch.stack(out)


def test_conv_parts_materialise_the_gradients_only_when_asked():
    # The materialised path returns the per-sample weight gradients (B, m, k) when asked, and
    # None otherwise; the Gram path never forms them. Both give the same squared norms.
    gen = torch.Generator().manual_seed(8)
    a = torch.randn(3, 2, 7, 7, generator=gen)
    d = torch.randn(3, 4, 3, 3, generator=gen)
    ref = _conv_grad_loop(a, d, (4, 2, 5, 5))
    ref_sq = ref.square().sum(dim=(1, 2)) + d.sum(dim=(2, 3)).square().sum(dim=1)
    sq, g, bias = fastclip._conv_parts(a, d, 5, "materialise", True)
    assert g is not None and g.shape == (3, 4, 50)
    assert torch.allclose(g, ref, rtol=1e-5, atol=1e-6)
    assert torch.allclose(bias, d.sum(dim=(2, 3)), rtol=1e-6, atol=1e-6)
    assert torch.allclose(sq, ref_sq, rtol=1e-5, atol=0)
    assert fastclip._conv_parts(a, d, 5, "materialise", False)[1] is None
    sq_gram, g_gram, _ = fastclip._conv_parts(a, d, 5, "gram", True)
    assert g_gram is None
    assert torch.allclose(sq_gram, ref_sq, rtol=1e-5, atol=0)


def _counting(monkeypatch, owner, name):
    calls = []
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


@pytest.mark.parametrize("options, backward_passes, conv_weight_grads", [
    (fastclip.FastOptions(), 1, 0),                           # book-keeping from materialised gradients
    (fastclip.FastOptions("gram", "bookkeeping"), 1, 2),      # one reweighted conv2d_weight per conv layer
    (fastclip.FastOptions("materialise", "reweight"), 2, 0),  # a second backward pass of Σ c_s ℓ_s
    (fastclip.FastOptions("gram", "reweight"), 2, 0),
])
def test_clipped_sum_takes_the_path_its_options_name(models, loop_reference, monkeypatch, options,
                                                      backward_passes, conv_weight_grads):
    # The options choose between computations of the same numbers (checked against the loop
    # above); here the path itself: how many backward passes, how many weight-gradient convolutions.
    shape = (1, 28, 28)
    x, y, _, clip, ref = loop_reference[shape]
    grads = _counting(monkeypatch, torch.autograd, "grad")
    convs = _counting(monkeypatch, torch.nn.grad, "conv2d_weight")
    out = fastclip.clipped_sum(models[shape], x, y, clip, options=options)
    assert (len(grads), len(convs)) == (backward_passes, conv_weight_grads)
    assert _rel(out, ref) < 1e-5


def test_per_sample_norms_of_a_frozen_model(loop_reference):
    # The first backward pass stops at the layer outputs and never needs parameter gradients, so
    # a model whose parameters do not require gradients has the same norms (and clipped sum).
    shape = (1, 28, 28)
    x, y, loop_norms, clip, ref = loop_reference[shape]
    frozen = make_cnn(shape, seed=3).requires_grad_(False)
    assert torch.allclose(fastclip.per_sample_norms(frozen, x, y), loop_norms, rtol=1e-5, atol=0)
    assert _rel(fastclip.clipped_sum(frozen, x, y, clip), ref) < 1e-5
