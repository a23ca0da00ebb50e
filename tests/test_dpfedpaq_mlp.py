"""Privacy-augmented FedPAQ on a one-hidden-layer network (fedrepro.dpfedpaq.mlp) and the
decision of claim C48 (fedrepro.chapters.dpfedpaq.experiments.mlp_effects)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.chapters.dpfedpaq.experiments import mlp_effects as fx
from fedrepro.dpfedpaq import mlp
from fedrepro.problems.softmax import N_FEATURES, SoftmaxProblem

H = 7


def _problem(n_devices: int = 4, per: int = 30, seed: int = 0) -> SoftmaxProblem:
    g = np.random.default_rng(seed)
    n = n_devices * per
    feats = np.ones((n, N_FEATURES), dtype=np.float32)
    feats[:, :-1] = g.random((n, N_FEATURES - 1), dtype=np.float32)
    labels = g.integers(0, 10, n)
    test = np.ones((20, N_FEATURES), dtype=np.float32)
    test[:, :-1] = g.random((20, N_FEATURES - 1), dtype=np.float32)
    return SoftmaxProblem(feats, labels, np.arange(0, n + 1, per), 1e-3, test, g.integers(0, 10, 20))


def _params(seed: int = 1, scale: float = 3.0) -> mlp.Params:
    w1, w2 = mlp.init_params(H, np.random.default_rng(seed))
    g = np.random.default_rng(seed + 100)
    # non-zero biases, larger weights: every term of the gradient matters
    w1 = w1 * scale + 0.1 * g.standard_normal(w1.shape)
    w2 = w2 * scale + 0.1 * g.standard_normal(w2.shape)
    return w1, w2


def _torch_per_sample(problem: SoftmaxProblem, params: mlp.Params, rows: np.ndarray):
    """Per-sample gradients by torch autograd, one sample at a time (independent of the
    closed forms)."""
    w1 = torch.tensor(params[0], dtype=torch.float64)
    w2 = torch.tensor(params[1], dtype=torch.float64)
    g1s, g2s = [], []
    for j in rows:
        a = torch.tensor(problem.features[j], dtype=torch.float64)
        v1, v2 = w1.clone().requires_grad_(True), w2.clone().requires_grad_(True)
        h = torch.tanh(a @ v1)
        logits = torch.cat([h, torch.ones(1, dtype=torch.float64)]) @ v2
        loss = torch.nn.functional.cross_entropy(logits[None], torch.tensor([int(problem.labels[j])]))
        loss.backward()
        g1s.append(v1.grad.numpy())
        g2s.append(v2.grad.numpy())
    return np.array(g1s), np.array(g2s)


def test_per_sample_gradients_match_torch_autograd():
    p = _problem()
    params = _params()
    rows = np.array([0, 5, 17, 44, 90, 119])
    g1, g2 = mlp.per_sample_gradients(p, params, rows)
    t1, t2 = _torch_per_sample(p, params, rows)
    np.testing.assert_allclose(g1, t1, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g2, t2, rtol=1e-9, atol=1e-12)
    # the closed-form norms (outer-product identity) equal the norms of the torch gradients
    ref = np.sqrt(np.einsum("mij,mij->m", t1, t1) + np.einsum("mij,mij->m", t2, t2))
    np.testing.assert_allclose(mlp.per_sample_grad_norms(p, params, rows), ref, rtol=1e-10)


def test_loss_gradient_matches_finite_differences():
    """The mean of the per-sample gradients is the gradient of the mean loss (central
    differences on a few coordinates of each layer, float64 loss)."""
    p = _problem(n_devices=1, per=8)
    w1, w2 = _params(scale=1.0)
    rows = np.arange(8)

    def loss(a, b):
        a64 = p.features.astype(np.float64)
        h = np.tanh(a64 @ a)
        z = h @ b[:-1] + b[-1]
        z -= z.max(axis=1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[rows, p.labels]))

    g1, g2 = (g.mean(axis=0) for g in mlp.per_sample_gradients(p, (w1, w2), rows))
    eps = 1e-6
    for (i, j) in [(0, 0), (300, 3), (784, 6)]:
        e = np.zeros_like(w1)
        e[i, j] = eps
        fd = (loss(w1 + e, w2) - loss(w1 - e, w2)) / (2 * eps)
        assert abs(fd - g1[i, j]) < 1e-6 * max(1.0, abs(fd))
    for (i, j) in [(0, 0), (H, 9), (3, 4)]:
        e = np.zeros_like(w2)
        e[i, j] = eps
        fd = (loss(w1, w2 + e) - loss(w1, w2 - e)) / (2 * eps)
        assert abs(fd - g2[i, j]) < 1e-6 * max(1.0, abs(fd))


def test_clipped_gradients_equal_mean_of_clipped_per_sample_gradients():
    p = _problem()
    params = _params()
    rows = np.array([[1, 2, 3, 4], [40, 41, 42, 0]])  # two devices, the second padded once
    weights = np.array([[0.25] * 4, [1 / 3] * 3 + [0.0]])
    w1 = np.stack([params[0], params[0] * 0.5])
    w2 = np.stack([params[1], params[1] * 0.5])
    clip = 0.3
    g1, g2, norms = mlp.clipped_gradients(p.features[rows].astype(np.float64), p.labels[rows],
                                          p.sq_norms[rows].astype(np.float64), weights, w1, w2, clip)
    for m in range(2):
        t1, t2 = _torch_per_sample(p, (w1[m], w2[m]), rows[m])
        n = np.sqrt(np.einsum("mij,mij->m", t1, t1) + np.einsum("mij,mij->m", t2, t2))
        np.testing.assert_allclose(norms[m], n, rtol=1e-6)
        c = weights[m] * np.minimum(1.0, clip / n)
        assert np.any(n > clip) and np.any(c < weights[m])  # clipping is active
        np.testing.assert_allclose(g1[m], np.einsum("j,jab->ab", c, t1), rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(g2[m], np.einsum("j,jab->ab", c, t2), rtol=1e-6, atol=1e-10)
        # every clipped per-sample contribution has norm <= C
        assert np.all(np.minimum(1.0, clip / n) * n <= clip + 1e-9)


def test_flatten_roundtrip_and_dimension():
    params = _params()
    v = mlp.flatten(params)
    assert v.shape == (mlp.dimension(H),) == (785 * H + 10 * (H + 1),)
    back = mlp.unflatten(v, H)
    np.testing.assert_array_equal(back[0], params[0])
    np.testing.assert_array_equal(back[1], params[1])
    assert mlp.dimension(64) == 50_890


def _run(**kw):
    p = _problem()
    args = dict(rounds=3, local_steps=2, m_per_round=2, hidden=H, sample_ratio=0.5, seed=3)
    args.update(kw)
    return mlp.private_fedpaq_mlp(p, **args)


def test_training_is_deterministic_and_learns():
    a, b = _run(), _run()
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.loss, b.loss)
    c = _run(seed=4)
    assert not np.array_equal(a.x, c.x)
    # without noise and quantization, a few rounds at a large step lower the training loss
    d = _run(epsilon=None, q_levels=None, rounds=10, lr0=0.5)
    assert d.loss[-1] < d.loss[0]
    assert np.all(d.noise_norm == 0) and np.all(a.noise_norm > 0)
    assert a.bits[-1] == 3 * 2 * a.info["bits_per_message"]


@pytest.mark.parametrize("kw, match", [
    (dict(rounds=0), "rounds"),
    (dict(m_per_round=5), "m_per_round"),
    (dict(hidden=0), "hidden"),
    (dict(sample_ratio=1.5), "sample_ratio"),
    (dict(clip=-1.0), "clip"),
    (dict(clip=None), "clip"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(q_levels=0), "q_levels"),
    (dict(sensitivity_mode="bogus"), "sensitivity_mode"),
    (dict(calibration="bogus"), "calibration"),
    (dict(eval_rounds=[0, 9]), "eval_rounds"),
    (dict(lr0=0.0), "lr0"),
])
def test_bad_input_raises(kw, match):
    with pytest.raises(ValueError, match=match):
        _run(**kw)


def test_bad_input_of_helpers():
    p = _problem()
    with pytest.raises(ValueError, match="problem"):
        mlp.private_fedpaq_mlp("data", rounds=1, local_steps=1, m_per_round=1)
    with pytest.raises(ValueError, match="params"):
        mlp.per_sample_grad_norms(p, (np.zeros((784, 3)), np.zeros((4, 10))), np.array([0]))
    with pytest.raises(ValueError, match="rows"):
        mlp.per_sample_grad_norms(p, _params(), np.array([10_000]))
    with pytest.raises(ValueError, match="v must have last axis"):
        mlp.unflatten(np.zeros(10), H)


# --------------------------------------------------------------------------- C48 decision


def _arr(means, spread=0.01, seeds=3):
    return np.array(means, dtype=float)[:, None] + spread * np.linspace(0, 1, seeds)[None, :]


def test_effect_holds_orderings():
    assert fx.effect_holds(_arr([1.5, 1.0, 0.9]), "decreasing")[0]
    assert not fx.effect_holds(_arr([1.5, 1.0, 1.2]), "decreasing")[0]  # reversal beyond the spread
    assert fx.effect_holds(_arr([1.5, 1.0, 1.005]), "decreasing")[0]  # within the seed spread
    assert not fx.effect_holds(_arr([1.0, 0.995, 0.99]), "decreasing")[0]  # ends within the spread
    assert fx.effect_holds(_arr([0.5, 0.7]), "increasing")[0]
    assert fx.effect_holds(_arr([1.05, 1.02, 1.0]), "flat")[0]
    assert not fx.effect_holds(_arr([1.2, 1.02, 1.0]), "flat")[0]  # 20 % above unquantized
    assert not fx.effect_holds(np.array([[1.0, np.nan], [0.5, 0.5]]), "decreasing")[0]
    with pytest.raises(ValueError, match="direction"):
        fx.effect_holds(_arr([1, 2]), "up")
    with pytest.raises(ValueError, match="values"):
        fx.effect_holds(np.ones(3), "flat")


def test_decide_C48_passing_and_failing():
    same, ok_s, ok_m, why = fx.decide_effect("eps", [0.1, 1], _arr([2.0, 1.0]), _arr([3.0, 2.0]), "decreasing")
    assert same and ok_s and ok_m and "softmax" in why
    diff = fx.decide_effect("M", [1, 10], _arr([2.0, 1.0]), _arr([2.0, 2.5]), "decreasing")
    assert not diff[0] and diff[1] and not diff[2]
    status, reason = fx.decide_C48([("eps", True, why), ("M", diff[0], diff[3])])
    assert status == "miss" and "M" in reason.split(".")[0]
    assert "CNN" in reason and "spiking" in reason and "in part" in reason
    status, reason = fx.decide_C48([("eps", True, why)])
    assert status == "match" and "spiking" in reason
    with pytest.raises(ValueError, match="rows"):
        fx.decide_C48([])


def test_effects_read_the_runs_they_need():
    """Synthetic softmax and network runs of the quick profile in which every effect shows in
    softmax and the network is flat in M: only the M row differs, and C48 is a miss."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp as chap
    from fedrepro.chapters.dpfedpaq.experiments.runs import registry

    seeds = 2

    def entry(rounds, final):
        r = np.asarray(rounds)
        loss = np.tile(np.linspace(2.3, final, r.size), (seeds, 1)) + 0.001 * np.arange(seeds)[:, None]
        return {"rounds": r, "loss": loss, "accuracy": 1 - loss / 3}

    def final(run):
        f = 1.0 + (0.3 if run.eps == 0.1 else 0) + (0.05 if run.s == 1 else 0)
        return f + (0.2 if run.E == 1 else 0) + (0.4 if run.M == 1 else 0)

    soft = {name: entry(rounds, final(run)) for name, (run, rounds) in registry("quick").items()}
    net = {name: entry(range(5), final(run) - (0.4 if run.M == 1 else 0))
           for name, run in chap.registry("quick").items()}
    rows = {e["label"]: e for e in fx.effects(soft, net, "quick")}
    bad = [k for k, e in rows.items() if not e["carries_over"]]
    assert bad == ["M: final loss decreasing in M"]
    status, _ = fx.verdict(soft, "quick", net)
    assert status == "miss"
    assert list(fx.effects_frame(soft, net, "quick")["same"]) == [k not in bad for k in rows]


@pytest.mark.stored
def test_scorecard_provider_reports_C48_from_the_stored_runs():
    """The provider decides C48 from the committed softmax and network runs (read-only), and
    says that the claim is checked in part."""
    from fedrepro.chapters.dpfedpaq.experiments.scorecard import outcomes
    from fedrepro.core.cache import read_only

    with read_only():
        out = outcomes()["dpfedpaq-main-C48"]
    assert out.status in ("match", "miss")
    assert out.ours == (out.status == "match")
    assert "CNNs and spiking networks were not" in out.reason and "in part" in out.reason
