"""The contract of fedrepro.dpfedpaq.mlp pinned against independent references: Glorot
initialisation by its closed form, the per-sample gradients and the loss by torch autograd and
a float64 log-sum-exp written here, a straightforward reimplementation of Alg. 2 on the
network (per-sample loops, the documented streams), and every error message in full."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fedrepro.dpfedpaq import mlp
from fedrepro.dpfedpaq.local import subsample_batches
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

H = 3
STREAM_NAMES = ("scheduling", "batches", "subsampling", "quantizer", "noise", "init")


def _problem(sizes=(12, 10, 14), mu: float = 0.5, seed: int = 0, test_size: int = 20) -> SoftmaxProblem:
    g = np.random.default_rng(seed)
    n = int(sum(sizes))
    feats = np.ones((n, N_FEATURES), dtype=np.float32)
    feats[:, :-1] = g.random((n, N_FEATURES - 1)) * (g.random((n, N_FEATURES - 1)) < 0.3)
    labels = g.integers(0, N_CLASSES, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    test = np.ones((test_size, N_FEATURES), dtype=np.float32)
    test[:, :-1] = g.random((test_size, N_FEATURES - 1)) * (g.random((test_size, N_FEATURES - 1)) < 0.3)
    return SoftmaxProblem(feats, labels, offsets, mu, test, g.integers(0, N_CLASSES, test_size))


def _params(hidden: int = H, seed: int = 1, scale: float = 0.2) -> mlp.Params:
    g = np.random.default_rng(seed)
    return scale * g.standard_normal((N_FEATURES, hidden)), scale * g.standard_normal((hidden + 1, N_CLASSES))


# --------------------------------------------------------------------------- independent references


def _sample_grad(a: np.ndarray, y: int, w1: np.ndarray, w2: np.ndarray):
    """(∇_{W₁}ℓ, ∇_{W₂}ℓ, ℓ) of one sample by torch autograd in float64."""
    v1 = torch.tensor(np.asarray(w1, np.float64), requires_grad=True)
    v2 = torch.tensor(np.asarray(w2, np.float64), requires_grad=True)
    h = torch.tanh(torch.tensor(np.asarray(a, np.float64)) @ v1)
    z = torch.cat([h, torch.ones(1, dtype=torch.float64)]) @ v2
    loss = torch.nn.functional.cross_entropy(z[None], torch.tensor([int(y)]))
    g1, g2 = torch.autograd.grad(loss, (v1, v2))
    return g1.numpy(), g2.numpy(), float(loss.detach())


def _logits64(feats: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    h = np.tanh(np.asarray(feats, np.float64) @ np.asarray(w1, np.float64))
    return h @ np.asarray(w2, np.float64)[:-1] + np.asarray(w2, np.float64)[-1]


def _loss64(problem: SoftmaxProblem, w1: np.ndarray, w2: np.ndarray) -> float:
    """Mean cross-entropy, float64 log-sum-exp by np.logaddexp.reduce."""
    z = _logits64(problem.features, w1, w2)
    lse = np.logaddexp.reduce(z, axis=1)
    return float(np.mean(lse - z[np.arange(z.shape[0]), problem.labels]))


def _glorot(hidden: int, g: np.random.Generator):
    """Glorot uniform U(±√(6/(fan_in + fan_out))) per layer (fan_in: the 784 pixels, resp. the H
    hidden units; the bias rows are 0), W₁ drawn before W₂, row-major."""
    w1 = np.zeros((N_FEATURES, hidden))
    w2 = np.zeros((hidden + 1, N_CLASSES))
    b1, b2 = math.sqrt(6 / (784 + hidden)), math.sqrt(6 / (hidden + 10))
    w1[:784] = g.uniform(-b1, b1, (784, hidden))
    w2[:hidden] = g.uniform(-b2, b2, (hidden, 10))
    return w1, w2


def _local_sgd64(problem, w1, w2, rows, weights, lr, clip):
    """E steps of clipped SGD of one device, one sample at a time (float64)."""
    w1, w2 = w1.copy(), w2.copy()
    for t in range(rows.shape[0]):
        g1, g2 = problem.mu * w1, problem.mu * w2
        for r, w in zip(rows[t], weights[t], strict=True):
            if w == 0:
                continue
            s1, s2, _ = _sample_grad(problem.features[r], problem.labels[r], w1, w2)
            n = math.sqrt(float(np.sum(s1 * s1) + np.sum(s2 * s2)))
            c = 1.0 if clip is None else min(1.0, clip / n)
            g1 = g1 + float(w) * c * s1
            g2 = g2 + float(w) * c * s2
        w1, w2 = w1 - lr * g1, w2 - lr * g2
    return w1, w2


def _reference_run(problem, *, rounds, E, hidden, gamma, clip, epsilon, delta, mode, lr0, tau, seed):
    """Alg. 2 with every device scheduled (M = N), no quantization, written out: the five streams
    and the initialisation stream are the six children of SeedSequence(seed) in the documented
    order; the noise std is (σ/Δ)_i·Δ_i with eq. (16) σ/Δ = √(8γ_i² ln(1.25γ_i/δ))/ε."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    gens = {name: np.random.default_rng(c) for name, c in zip(STREAM_NAMES, ss.spawn(6), strict=True)}
    n = problem.sizes
    nd = n.size
    b = np.array([int(gamma * ni / E) for ni in n])
    gam = E * b / n
    mult = np.sqrt(8 * gam ** 2 * np.log(1.25 * gam / delta)) / epsilon if epsilon is not None else np.zeros(nd)
    w1, w2 = _glorot(hidden, gens["init"])
    out = {"loss": [], "update_norm": [], "noise_norm": [], "acc": [], "std0": None, "gamma": gam, "mult": mult}

    def acc(w1, w2):
        z = _logits64(problem.test_features, w1, w2)
        return float(np.mean(np.argmax(z, axis=1) == problem.test_labels))

    for k in range(rounds):
        out["loss"].append(_loss64(problem, w1, w2))
        out["acc"].append(acc(w1, w2))
        lr = lr0 / (1 + k * E / tau)
        sched = subsample_batches(problem, np.arange(nd), E, b, gens["subsampling"])
        u = []
        for i in range(nd):
            y1, y2 = _local_sgd64(problem, w1, w2, sched.rows[:, i], sched.weights[:, i], lr, clip)
            u.append(np.concatenate([(y1 - w1).ravel(), (y2 - w2).ravel()]))
        u = np.array(u)
        out["update_norm"].append(float(np.mean(np.linalg.norm(u, axis=1))))
        if epsilon is not None:
            delta_f = clip / n if mode == "authors_code" else np.full(nd, 2 * lr * E * clip)
            std = mult * delta_f
            if out["std0"] is None:
                out["std0"] = float(np.mean(std))
            z = gens["noise"].standard_normal(u.shape) * std[:, None]
            out["noise_norm"].append(float(np.mean(np.linalg.norm(z, axis=1))))
            u = u + z
        else:
            out["noise_norm"].append(0.0)
        step = u.mean(axis=0)
        k1 = N_FEATURES * hidden
        w1 = w1 + step[:k1].reshape(N_FEATURES, hidden)
        w2 = w2 + step[k1:].reshape(hidden + 1, N_CLASSES)
    out["loss"].append(_loss64(problem, w1, w2))
    out["acc"].append(acc(w1, w2))
    out["x"] = np.concatenate([w1.ravel(), w2.ravel()])
    return out


# --------------------------------------------------------------------------- dimension, init, flatten


def test_dimension_closed_form_and_message():
    assert mlp.dimension(1) == 785 + 20
    assert mlp.dimension(5) == 785 * 5 + 10 * 6
    with pytest.raises(ValueError) as e:
        mlp.dimension(0)
    assert str(e.value) == "hidden (H, hidden units) must be an integer >= 1, got 0"


def test_init_params_is_glorot_uniform():
    for hidden in (1, 6):
        w1, w2 = mlp.init_params(hidden, np.random.default_rng(11))
        r1, r2 = _glorot(hidden, np.random.default_rng(11))
        assert w1.shape == (785, hidden) and w2.shape == (hidden + 1, 10)
        assert w1.dtype == np.float64 and w2.dtype == np.float64
        np.testing.assert_array_equal(w1, r1)
        np.testing.assert_array_equal(w2, r2)
    # the bounds themselves (independent of the draw order): |w| <= b, zero biases, and the
    # largest of 784·6 = 4,704 (resp. 60) uniform draws is above b(1 − 0.1): it fails with
    # probability 0.9^60 ≈ 0.002 for W₂ and 0.9^4704 for W₁ (seeded: deterministic)
    b1, b2 = math.sqrt(6 / 790), math.sqrt(6 / 16)
    assert np.all(w1[-1] == 0) and np.all(w2[-1] == 0)
    assert np.abs(w1).max() <= b1 and np.abs(w1).max() > 0.9 * b1
    assert np.abs(w2).max() <= b2 and np.abs(w2).max() > 0.9 * b2
    assert w1.min() < 0 < w1.max() and w2.min() < 0 < w2.max()


def test_init_params_messages():
    with pytest.raises(ValueError) as e:
        mlp.init_params(0, np.random.default_rng(0))
    assert str(e.value) == "hidden (H, hidden units) must be an integer >= 1, got 0"
    with pytest.raises(ValueError) as e:
        mlp.init_params(2, 7)
    assert str(e.value) == "rng must be a numpy.random.Generator, got int"


def test_flatten_and_unflatten_of_a_stack():
    w1 = np.arange(2 * 785 * 2, dtype=float).reshape(2, 785, 2)
    w2 = -np.arange(2 * 3 * 10, dtype=float).reshape(2, 3, 10)
    v = mlp.flatten((w1, w2))
    assert v.shape == (2, mlp.dimension(2))
    for m in range(2):  # row m is [vec W₁(m); vec W₂(m)], row-major
        np.testing.assert_array_equal(v[m], np.concatenate([w1[m].ravel(), w2[m].ravel()]))
        np.testing.assert_array_equal(mlp.flatten((w1[m], w2[m])), v[m])
    b1, b2 = mlp.unflatten(v, 2)
    assert b1.shape == (2, 785, 2) and b2.shape == (2, 3, 10)
    np.testing.assert_array_equal(b1, w1)
    np.testing.assert_array_equal(b2, w2)
    one = mlp.unflatten(v[1], 2)
    np.testing.assert_array_equal(one[0], w1[1])
    np.testing.assert_array_equal(one[1], w2[1])


def _msg(fn, *args):
    with pytest.raises(ValueError) as e:
        fn(*args)
    return str(e.value)


def test_params_checks_messages():
    w1, w2 = _params()
    shapes = "params must have shapes (..., 785, H) and (..., H+1, 10), got "
    assert _msg(mlp.flatten, [w1, w2]) == "params must be a tuple (W1, W2)"
    assert _msg(mlp.flatten, (w1, w2, w2)) == "params must be a tuple (W1, W2)"
    # one matrix and one stack: 2-d expected (W₁ decides)
    assert _msg(mlp.flatten, (w1, w2[None])) == "params must be 2-d arrays (W1 (..., 785, H), W2 (..., H+1, 10))"
    assert _msg(mlp.flatten, (w1[None], w2)) == "params must be 3-d arrays (W1 (..., 785, H), W2 (..., H+1, 10))"
    assert _msg(mlp.flatten, (w1[None].repeat(2, 0), w2[None].repeat(3, 0))) == shapes + "(2, 785, 3) and (3, 4, 10)"
    assert _msg(mlp.flatten, (w1[:-1], w2)) == shapes + "(784, 3) and (4, 10)"
    assert _msg(mlp.flatten, (w1, w2[:-1])) == shapes + "(785, 3) and (3, 10)"
    finite = "params must be finite float arrays"
    assert _msg(mlp.flatten, (w1.astype(int), w2)) == finite
    assert _msg(mlp.flatten, (w1, w2.astype(int))) == finite
    for which in (0, 1):
        bad = [w1.copy(), w2.copy()]
        bad[which][1, 1] = np.nan
        assert _msg(mlp.flatten, tuple(bad)) == finite
    p = _problem()
    assert _msg(mlp.per_sample_grad_norms, p, (w1, w2[:, :9]), np.array([0])) == shapes + "(785, 3) and (4, 9)"
    assert _msg(mlp.per_sample_grad_norms, "data", (w1, w2), np.array([0])) == \
        "problem must be a SoftmaxProblem (the data), got str"
    assert _msg(mlp.per_sample_gradients, None, (w1, w2), np.array([0])) == \
        "problem must be a SoftmaxProblem (the data), got NoneType"
    assert _msg(mlp.unflatten, np.zeros((2, 10)), 1) == "v must have last axis d = 805 for hidden=1, got shape (2, 10)"


# --------------------------------------------------------------------------- gradients and loss


def _extreme_problem() -> tuple[SoftmaxProblem, mlp.Params]:
    """Two samples whose logits lie near +600 and −600: a softmax shifted by the maximum of
    all rows, or by +max, overflows or underflows (exp(±1200)); the stable forms do not."""
    feats = np.zeros((4, N_FEATURES), dtype=np.float32)
    feats[:, -1] = 1
    feats[0, 0] = feats[2, 0] = 1.0
    p = SoftmaxProblem(feats, np.array([3, 7, 9, 0]), np.array([0, 4]), 0.0, feats, np.array([9, 9, 0, 0]))
    w1 = np.zeros((N_FEATURES, H))
    w1[0], w1[-1] = 20.0, -10.0  # pre-activation ±10: h = ±tanh(10)
    w2 = np.zeros((H + 1, N_CLASSES))
    w2[:H] = 200.0 + np.arange(N_CLASSES)[None, :]
    return p, (w1, w2)


def test_gradients_and_loss_stable_at_large_logits():
    p, params = _extreme_problem()
    rows = np.arange(4)
    g1, g2 = mlp.per_sample_gradients(p, params, rows)
    norms = mlp.per_sample_grad_norms(p, params, rows)
    for j in rows:
        t1, t2, _ = _sample_grad(p.features[j], p.labels[j], *params)
        np.testing.assert_allclose(g1[j], t1, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(g2[j], t2, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(norms[j], math.sqrt(np.sum(t1 * t1) + np.sum(t2 * t2)), rtol=1e-9)
    # float32 logits near ±600 carry an absolute error near 6e-5: 1e-3 absolute on a loss near 27
    assert mlp.mlp_loss(p, params) == pytest.approx(_loss64(p, *params), rel=1e-5, abs=1e-3)


def test_per_sample_norms_and_gradients_with_float32_params():
    p = _problem()
    w1, w2 = (w.astype(np.float32) for w in _params(scale=1.0))
    rows = np.array([0, 7, 20, 35])
    g1, g2 = mlp.per_sample_gradients(p, (w1, w2), rows)
    norms = mlp.per_sample_grad_norms(p, (w1, w2), rows)
    assert g1.dtype == np.float64 and norms.dtype == np.float64
    for i, j in enumerate(rows):
        t1, t2, _ = _sample_grad(p.features[j], p.labels[j], w1, w2)
        np.testing.assert_allclose(g1[i], t1, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(g2[i], t2, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(norms[i], math.sqrt(np.sum(t1 * t1) + np.sum(t2 * t2)), rtol=1e-9)


def test_mlp_loss_against_float64_reference_and_chunks():
    p = _problem()
    params = _params(scale=1.0)
    ref = _loss64(p, *params)
    # float32 forward pass: relative error of a few 1e-7 on a loss near 3
    assert mlp.mlp_loss(p, params) == pytest.approx(ref, rel=1e-5)
    for chunk in (1, 5, 7, 36, 100):
        assert mlp.mlp_loss(p, params, chunk=chunk) == pytest.approx(ref, rel=1e-5)
    with pytest.raises(ValueError) as e:
        mlp.mlp_loss("data", params)
    assert str(e.value) == "problem must be a SoftmaxProblem (the data), got str"


def test_mlp_accuracy_counts_argmax_hits():
    p = _problem(test_size=20)
    params = _params(scale=1.0)
    z = _logits64(p.test_features, *params)
    top2 = np.sort(z, axis=1)[:, -2:]
    assert np.all(top2[:, 1] - top2[:, 0] > 1e-4)  # no near-ties: float32 logits give the same argmax
    pred = np.argmax(z, axis=1)
    labels = np.where(np.arange(20) < 7, pred, (pred + 1) % 10)  # 7 of 20 right by construction
    q = SoftmaxProblem(p.features, p.labels, p.offsets, p.mu, p.test_features, labels)
    assert mlp.mlp_accuracy(q, params) == 7 / 20
    msg = "problem must be a SoftmaxProblem built with a test set"
    assert _msg(mlp.mlp_accuracy, "data", params) == msg
    assert _msg(mlp.mlp_accuracy, SoftmaxProblem(p.features, p.labels, p.offsets, p.mu), params) == msg
    with pytest.raises(ValueError, match="params must be finite"):
        mlp.mlp_accuracy(q, (params[0], params[1] * np.nan))


def _clip_case(scale: float):
    p = _problem()
    rows = np.array([[1, 2, 3, 4], [14, 15, 16, 0]])
    weights = np.array([[0.25] * 4, [1 / 3] * 3 + [0.0]])
    w1a, w2a = _params(scale=scale)
    w1 = np.stack([w1a, 0.5 * w1a])
    w2 = np.stack([w2a, 0.5 * w2a])
    ref = []
    for m in range(2):
        per = [_sample_grad(p.features[r], p.labels[r], w1[m], w2[m]) for r in rows[m]]
        n = np.array([math.sqrt(np.sum(a * a) + np.sum(b * b)) for a, b, _ in per])
        ref.append((per, n))
    a = p.features[rows].astype(np.float64)
    args = (a, p.labels[rows], np.sum(a * a, axis=-1), weights, w1, w2)  # ‖ã‖² in float64
    return args, weights, ref


def _clipped_ref(per, n, weights, clip):
    c = weights * (1.0 if clip is None else np.minimum(1.0, clip / n))
    return sum(cj * a for cj, (a, _, _) in zip(c, per, strict=True)), \
        sum(cj * b for cj, (_, b, _) in zip(c, per, strict=True))


def test_clipped_gradients_small_norms_and_no_clip():
    """Weights of scale 0.01: every per-sample norm lies in (0.6, 1) (checked), so C = 0.6
    clips each sample by C/‖g‖ (not by C/max(‖g‖, 1)), C = 1.2 clips none (factor 1, not C/‖g‖
    capped at 2), and ``clip=None`` is the plain weighted sum."""
    args, weights, ref = _clip_case(0.01)
    allnorms = np.concatenate([n for _, n in ref])
    assert np.all(allnorms > 0.6) and np.all(allnorms < 1.0) and np.all(allnorms > 1.2 / 2)
    for clip in (0.6, 1.2, None):
        g1, g2, norms = mlp.clipped_gradients(*args, clip)
        for m in range(2):
            per, n = ref[m]
            r1, r2 = _clipped_ref(per, n, weights[m], clip)
            np.testing.assert_allclose(norms[m], n, rtol=1e-9)
            np.testing.assert_allclose(g1[m], r1, rtol=1e-9, atol=1e-14)
            np.testing.assert_allclose(g2[m], r2, rtol=1e-9, atol=1e-14)


def test_clipped_gradients_float32_arithmetic():
    args, weights, ref = _clip_case(0.5)
    a, labels, sq, w, w1, w2 = args
    g1, g2, norms = mlp.clipped_gradients(a.astype(np.float32), labels, sq.astype(np.float32), w.astype(np.float32),
                                          w1.astype(np.float32), w2.astype(np.float32), 0.3)
    assert g1.dtype == np.float32 and g2.dtype == np.float32
    for m in range(2):
        per, n = ref[m]
        r1, r2 = _clipped_ref(per, n, weights[m], 0.3)
        # float32 inputs (weights rounded to float32 too): 1e-4 of the largest entry
        np.testing.assert_allclose(g1[m], r1, atol=1e-4 * np.abs(r1).max())
        np.testing.assert_allclose(g2[m], r2, atol=1e-4 * np.abs(r2).max())


def test_clipped_gradients_messages():
    args, _, _ = _clip_case(0.5)
    a, labels, sq, w, w1, w2 = args
    assert _msg(mlp.clipped_gradients, a[0], labels, sq, w, w1, w2, 1.0) == "a must have shape (M, B, 785), got (4, 785)"
    assert _msg(mlp.clipped_gradients, a[..., :-1], labels, sq, w, w1, w2, 1.0) == \
        "a must have shape (M, B, 785), got (2, 4, 784)"
    shape = "labels, sq_a and weights must have shape (2, 4)"
    assert _msg(mlp.clipped_gradients, a, labels[:, :3], sq, w, w1, w2, 1.0) == shape
    assert _msg(mlp.clipped_gradients, a, labels, sq[:, :3], w, w1, w2, 1.0) == shape
    assert _msg(mlp.clipped_gradients, a, labels, sq, w[:, :3], w1, w2, 1.0) == shape
    assert _msg(mlp.clipped_gradients, a, labels, sq, w, w1, w2, -1.0) == "clip (C) must be in (0, inf), got -1.0"


# --------------------------------------------------------------------------- Alg. 2 on the network

_BASE = dict(rounds=2, local_steps=2, m_per_round=3, hidden=H, sample_ratio=0.5, clip=0.3, delta=1e-4,
             lr0=0.5, decay_iters=1.0)


def _compare(h, ref, *, noise: bool):
    # float32 local training against the float64 reference: 1e-4 relative (a few float32 steps)
    np.testing.assert_allclose(h.loss, ref["loss"], rtol=1e-4)
    np.testing.assert_allclose(h.update_norm, ref["update_norm"], rtol=1e-4)
    np.testing.assert_allclose(h.x, ref["x"], rtol=0, atol=1e-4 * np.abs(ref["x"]).max())
    if noise:  # the noise is drawn in float64 from the same stream: only the std's round-off
        np.testing.assert_allclose(h.noise_norm, ref["noise_norm"], rtol=1e-12)
    else:
        np.testing.assert_array_equal(h.noise_norm, np.zeros(len(ref["noise_norm"])))


def test_private_fedpaq_mlp_without_noise_matches_reimplementation():
    p = _problem()
    kw = dict(_BASE, epsilon=None, q_levels=None, seed=5)
    ref = _reference_run(p, rounds=2, E=2, hidden=H, gamma=0.5, clip=0.3, epsilon=None, delta=1e-4,
                         mode="authors_code", lr0=0.5, tau=1.0, seed=5)
    h = mlp.private_fedpaq_mlp(p, **kw)
    _compare(h, ref, noise=False)
    assert ref["update_norm"][0] > 0.01  # the local steps move the model (the check can fail)
    # the clipping matters here: without it the reference differs
    ref_nc = _reference_run(p, rounds=2, E=2, hidden=H, gamma=0.5, clip=None, epsilon=None, delta=1e-4,
                            mode="authors_code", lr0=0.5, tau=1.0, seed=5)
    assert np.abs(ref_nc["x"] - ref["x"]).max() > 1e-2 * np.abs(ref["x"]).max()
    np.testing.assert_allclose(mlp.private_fedpaq_mlp(p, **dict(kw, clip=None)).x, ref_nc["x"], rtol=0,
                               atol=1e-4 * np.abs(ref_nc["x"]).max())
    # History fields
    np.testing.assert_array_equal(h.rounds, [0, 1, 2])
    assert h.local_steps == 2 and list(h.iterations) == [0, 2, 4]
    assert h.loss.dtype == np.float64 and h.update_norm.dtype == np.float64
    assert h.accuracy.shape == (3,) and np.all(np.isnan(h.accuracy))  # not asked
    d = mlp.dimension(H)
    np.testing.assert_array_equal(h.bits, [0, 3 * 32 * d, 6 * 32 * d])
    assert h.info == {"bits_per_message": 32.0 * d, "hidden": H, "dim": d,
                      "gamma_mean": pytest.approx(float(np.mean(ref["gamma"])), rel=1e-12),
                      "noise_std_round0": pytest.approx(math.nan, nan_ok=True), "noise_multiplier_mean": 0.0}


@pytest.mark.parametrize("mode", ["authors_code", "rigorous"])
def test_private_fedpaq_mlp_with_noise_matches_reimplementation(mode):
    p = _problem()
    seed = np.random.SeedSequence(17)
    kw = dict(_BASE, epsilon=20.0, q_levels=None, sensitivity_mode=mode, seed=seed, accuracy=True)
    ref = _reference_run(p, rounds=2, E=2, hidden=H, gamma=0.5, clip=0.3, epsilon=20.0, delta=1e-4,
                         mode=mode, lr0=0.5, tau=1.0, seed=np.random.SeedSequence(17))
    h = mlp.private_fedpaq_mlp(p, **kw)
    _compare(h, ref, noise=True)
    np.testing.assert_array_equal(h.accuracy, ref["acc"])
    assert h.info["noise_std_round0"] == pytest.approx(ref["std0"], rel=1e-12)
    assert h.info["noise_multiplier_mean"] == pytest.approx(float(np.mean(ref["mult"])), rel=1e-12)
    assert h.info["gamma_mean"] == pytest.approx(float(np.mean(ref["gamma"])), rel=1e-12)
    # the integer seed is SeedSequence(seed)
    np.testing.assert_array_equal(mlp.private_fedpaq_mlp(p, **dict(kw, seed=17)).x, h.x)


def test_private_fedpaq_mlp_eval_rounds_and_accuracy():
    p = _problem()
    kw = dict(_BASE, rounds=3, epsilon=None, q_levels=None, seed=2)
    ref = _reference_run(p, rounds=3, E=2, hidden=H, gamma=0.5, clip=0.3, epsilon=None, delta=1e-4,
                         mode="authors_code", lr0=0.5, tau=1.0, seed=2)
    h = mlp.private_fedpaq_mlp(p, **kw, eval_rounds=[3, 0, 1, 1], accuracy=True)
    np.testing.assert_array_equal(h.rounds, [0, 1, 3])
    np.testing.assert_allclose(h.loss, np.array(ref["loss"])[[0, 1, 3]], rtol=1e-4)
    np.testing.assert_array_equal(h.accuracy, np.array(ref["acc"])[[0, 1, 3]])
    np.testing.assert_array_equal(h.bits, np.array([0, 1, 3]) * 3 * 32.0 * mlp.dimension(H))
    one = mlp.private_fedpaq_mlp(p, **kw, eval_rounds=np.array([2]))
    np.testing.assert_allclose(one.loss, [ref["loss"][2]], rtol=1e-4)
    last = mlp.private_fedpaq_mlp(p, **kw, eval_rounds=[0, 3])
    np.testing.assert_allclose(last.loss, np.array(ref["loss"])[[0, 3]], rtol=1e-4)
    # a problem without a test set: accuracy stays nan even when asked
    q = SoftmaxProblem(p.features, p.labels, p.offsets, p.mu)
    assert np.all(np.isnan(mlp.private_fedpaq_mlp(q, **kw, accuracy=True).accuracy))


def test_private_fedpaq_mlp_quantized_message():
    """One device, one round, no noise: x₁ − x₀ = Q_s(u) (eq. 20): entries (‖u‖/s)·h with integer
    h, |h| ≤ s, h of the sign of u (or 0), |h − s·u_j/‖u‖| < 1; and β(s) = d·log2(2s + 1) + 32."""
    p = _problem(sizes=(16,))
    for s, kw in ((3, dict(q_levels=3)), (10, {})):  # 10: the default level
        args = dict(_BASE, m_per_round=1, rounds=1, epsilon=None, seed=4, **kw)
        ref = _reference_run(p, rounds=1, E=2, hidden=H, gamma=0.5, clip=0.3, epsilon=None, delta=1e-4,
                             mode="authors_code", lr0=0.5, tau=1.0, seed=4)
        h = mlp.private_fedpaq_mlp(p, **args)
        x0 = np.concatenate([a.ravel() for a in _glorot(H, np.random.default_rng(np.random.SeedSequence(4).spawn(6)[5]))])
        u = ref["x"] - x0
        nu = np.linalg.norm(u)
        lev = (h.x - x0) * s / nu
        # u in float32 training vs the float64 reference: relative 1e-4 of the levels
        assert np.abs(lev - np.round(lev)).max() < 1e-3
        lev = np.round(lev)
        assert np.abs(lev).max() <= s and np.all(lev * np.sign(u) >= 0)
        assert np.all(np.abs(lev - s * u / nu) < 1 + 1e-3)
        assert h.info["bits_per_message"] == pytest.approx(mlp.dimension(H) * math.log2(2 * s + 1) + 32, rel=1e-15)


def test_private_fedpaq_mlp_defaults():
    """The defaults are H = 64, γ = 0.2, C = 1, ε = 1, δ = 1e-4, s = 10, η₀ = 0.1, τ = 100, seed 0,
    the authors' sensitivity, the paper calibration, no accuracy."""
    p = _problem(sizes=(25, 30, 35), mu=1e-3)
    short = dict(rounds=2, local_steps=1, m_per_round=2)  # two rounds: η₁ = η₀/(1 + 1/τ) depends on τ
    h = mlp.private_fedpaq_mlp(p, **short)
    full = mlp.private_fedpaq_mlp(p, **short, hidden=64, sample_ratio=0.2, clip=1.0, epsilon=1.0, delta=1e-4,
                                  sensitivity_mode="authors_code", calibration="paper", q_levels=10, lr0=0.1,
                                  decay_iters=100.0, seed=0, accuracy=False)
    assert h.info["dim"] == 50_890 and h.info["hidden"] == 64
    np.testing.assert_array_equal(h.x, full.x)
    np.testing.assert_array_equal(h.loss, full.loss)
    assert h.info == full.info and np.all(np.isnan(h.accuracy))
    # without noise and quantization the round-1 step η₀/(1 + 1/τ) shows in the model: τ = 100
    plain = dict(short, epsilon=None, q_levels=None)
    x = mlp.private_fedpaq_mlp(p, **plain).x
    np.testing.assert_array_equal(x, mlp.private_fedpaq_mlp(p, **plain, lr0=0.1, decay_iters=100.0).x)
    assert not np.array_equal(x, mlp.private_fedpaq_mlp(p, **plain, decay_iters=101.0).x)
    # ε = 1, δ = 1e-4, γ_i = b_i/n_i = 5/25, 6/30, 7/35 = 0.2: σ/Δ = √(8·0.04·ln(2500))
    assert h.info["noise_multiplier_mean"] == pytest.approx(math.sqrt(0.32 * math.log(2500.0)), rel=1e-12)


def test_private_fedpaq_mlp_smallest_sizes_run():
    """E = 1, M = 1, H = 1, s = 1, K = 1 are valid."""
    p = _problem(sizes=(6, 6))
    h = mlp.private_fedpaq_mlp(p, rounds=1, local_steps=1, m_per_round=1, hidden=1, q_levels=1, sample_ratio=0.5,
                               epsilon=None)
    assert h.x.shape == (805,) and np.all(np.isfinite(h.loss))


def _run_msg(**kw):
    p = _problem()
    args = dict(_BASE, epsilon=1.0)
    args.update(kw)
    with pytest.raises(ValueError) as e:
        mlp.private_fedpaq_mlp(p, **args)
    return str(e.value)


@pytest.mark.parametrize("kw, message", [
    (dict(rounds=0), "rounds (K) must be an integer >= 1, got 0"),
    (dict(local_steps=0), "local_steps (E) must be an integer >= 1, got 0"),
    (dict(m_per_round=0), "m_per_round (M, at most N=3) must be an integer in [1, 3], got 0"),
    (dict(hidden=0), "hidden (H, hidden units) must be an integer >= 1, got 0"),
    (dict(lr0=0.0), "lr0 (initial learning rate) must be in (0, inf), got 0.0"),
    (dict(decay_iters=-1.0), "decay_iters (learning-rate decay scale) must be in (0, inf), got -1.0"),
    (dict(q_levels=0), "q_levels (s) must be an integer >= 1, got 0"),
    (dict(seed=-1), "seed must be an integer >= 0, got -1"),
    (dict(eval_rounds=[-1, 1]), "eval_rounds must be integers in [0, rounds=2]"),
    (dict(eval_rounds=[-1]), "eval_rounds must be integers in [0, rounds=2]"),
    (dict(eval_rounds=[0, 1, 3]), "eval_rounds must be integers in [0, rounds=2]"),
    (dict(eval_rounds=[3]), "eval_rounds must be integers in [0, rounds=2]"),
    (dict(eval_rounds=[0.0, 1.0]), "eval_rounds must be integers in [0, rounds=2]"),
    (dict(eval_rounds=np.array([], dtype=int)), "eval_rounds must be integers in [0, rounds=2]"),
    # γ_i = 2·b_i/n_i = 6/12, 4/10, 6/14: δ = min γ = 0.4 (the same float) is refused
    (dict(delta=2 * 2 / 10), "delta must be smaller than every gamma_i (min 0.4)"),
    (dict(delta=0.45), "delta must be smaller than every gamma_i (min 0.4)"),
])
def test_private_fedpaq_mlp_messages(kw, message):
    assert _run_msg(**kw) == message


def test_private_fedpaq_mlp_problem_message():
    with pytest.raises(ValueError) as e:
        mlp.private_fedpaq_mlp([], rounds=1, local_steps=1, m_per_round=1)
    assert str(e.value) == "problem must be a SoftmaxProblem (the data), got list"
