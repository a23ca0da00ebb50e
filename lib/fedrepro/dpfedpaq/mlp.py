"""Privacy-augmented FedPAQ (Alg. 2) training a one-hidden-layer network (claim C48, Sec. V).

Mohammadi et al. state in their conclusion that privacy-aware FedPAQ on "ANNs, CNNs and
spiking neural networks" shows the same effects of the FL hyperparameters as their softmax
regression. This module trains the simplest such model, a fully connected network with one
hidden layer of H tanh units, by Alg. 2 exactly as :func:`fedrepro.dpfedpaq.algorithms.private_fedpaq`
trains the softmax model (same device sampling, subsampling, per-sample clipping, noise
calibration, quantizer and learning-rate schedule; only the model differs).

Model. With ã = [a; 1] ∈ R^785 (pixels and the constant 1 of the softmax problem's design
matrix), W₁ ∈ R^{785×H} (last row: hidden biases), h = tanh(W₁ᵀã), h̃ = [h; 1] and
W₂ ∈ R^{(H+1)×10} (last row: output biases), p = softmax(W₂ᵀh̃) and the per-sample loss is the
cross-entropy ℓ = −log p_y; the local objective adds (μ/2)(‖W₁‖² + ‖W₂‖²) (weight decay, as
for softmax). d = 785H + 10(H+1) (50,890 at H = 64). tanh rather than ReLU: bounded
activations suit clipped training, and the loss is smooth (finite differences check it).

Per-sample gradients in closed form (back-propagation of one sample): with
δ₂ = p − e_y ∈ R^10 and δ₁ = (W₂[:H] δ₂) ⊙ (1 − h²) ∈ R^H,

    ∇_{W₂} ℓ = h̃ δ₂ᵀ,   ∇_{W₁} ℓ = ã δ₁ᵀ,   ‖∇ℓ‖² = ‖h̃‖²‖δ₂‖² + ‖ã‖²‖δ₁‖²

(‖u vᵀ‖_F = ‖u‖‖v‖ per layer), so the clip factors c_j = min(1, C/‖∇ℓ_j‖) need no per-sample
gradient tensor, and the clipped batch gradient is Ãᵀ(w ⊙ c ⊙ Δ₁) and H̃ᵀ(w ⊙ c ⊙ Δ₂): two
batched matrix products over the (M, b) samples of all scheduled devices. The hot path is
float32 and loops over the local steps only.

Randomness: the five streams of :data:`fedrepro.dpfedpaq.algorithms.STREAMS` are the first
five children of the run's ``SeedSequence`` (as in the softmax runs), and a sixth child draws
the initial weights (Glorot uniform, zero biases), the same for runs that differ only in
their hyperparameters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_positive
from fedrepro.dpfedpaq.algorithms import STREAMS, History, check_privacy_args, learning_rate, private_batch_sizes
from fedrepro.dpfedpaq.local import subsample_batches
from fedrepro.dpfedpaq.noise import noise_multipliers, sensitivity
from fedrepro.dpfedpaq.quantizer import bits, quantize
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = [
    "Params",
    "clipped_gradients",
    "dimension",
    "flatten",
    "init_params",
    "mlp_accuracy",
    "mlp_loss",
    "per_sample_grad_norms",
    "per_sample_gradients",
    "private_fedpaq_mlp",
    "unflatten",
]

#: (W₁ (…, 785, H), W₂ (…, H+1, 10)): one model, or a stack of M models.
Params = tuple[np.ndarray, np.ndarray]


def dimension(hidden: int) -> int:
    """d = 785H + 10(H + 1), the number of parameters (the length of an uploaded message)."""
    hidden = check_int("hidden (H, hidden units)", hidden, 1)
    return N_FEATURES * hidden + (hidden + 1) * N_CLASSES


def _check_params(params: Params, *, batch: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    if not isinstance(params, tuple) or len(params) != 2:
        raise ValueError("params must be a tuple (W1, W2)")
    w1, w2 = (np.asarray(p) for p in params)
    nd = 3 if batch else 2
    if w1.ndim != nd or w2.ndim != nd:
        raise ValueError(f"params must be {nd}-d arrays (W1 (..., {N_FEATURES}, H), W2 (..., H+1, {N_CLASSES}))")
    hidden = w1.shape[-1]
    if w1.shape[-2] != N_FEATURES or w2.shape[-2:] != (hidden + 1, N_CLASSES) or w1.shape[:-2] != w2.shape[:-2]:
        raise ValueError(f"params must have shapes (..., {N_FEATURES}, H) and (..., H+1, {N_CLASSES}), "
                         f"got {w1.shape} and {w2.shape}")
    if w1.dtype.kind != "f" or w2.dtype.kind != "f" or not (np.all(np.isfinite(w1)) and np.all(np.isfinite(w2))):
        raise ValueError("params must be finite float arrays")
    return w1, w2, hidden


def init_params(hidden: int, rng: np.random.Generator) -> Params:
    """Glorot-uniform weights U(±√(6/(fan_in + fan_out))) and zero biases, float64."""
    hidden = check_int("hidden (H, hidden units)", hidden, 1)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    w1 = np.zeros((N_FEATURES, hidden))
    w2 = np.zeros((hidden + 1, N_CLASSES))
    b1 = math.sqrt(6.0 / (N_FEATURES - 1 + hidden))
    b2 = math.sqrt(6.0 / (hidden + N_CLASSES))
    w1[:-1] = rng.uniform(-b1, b1, size=(N_FEATURES - 1, hidden))
    w2[:-1] = rng.uniform(-b2, b2, size=(hidden, N_CLASSES))
    return w1, w2


def flatten(params: Params) -> np.ndarray:
    """The message vector [vec W₁; vec W₂] (shape (d,), or (M, d) for a stack)."""
    w1, w2, _ = _check_params(params, batch=np.ndim(params[0]) == 3)
    lead = w1.shape[:-2]
    return np.concatenate([w1.reshape(*lead, -1), w2.reshape(*lead, -1)], axis=-1)


def unflatten(v: np.ndarray, hidden: int) -> Params:
    """Inverse of :func:`flatten` for ``hidden`` units (last axis of length d)."""
    d = dimension(hidden)
    v = np.asarray(v)
    if v.shape[-1:] != (d,):
        raise ValueError(f"v must have last axis d = {d} for hidden={hidden}, got shape {v.shape}")
    lead = v.shape[:-1]
    k = N_FEATURES * hidden
    return v[..., :k].reshape(*lead, N_FEATURES, hidden), v[..., k:].reshape(*lead, hidden + 1, N_CLASSES)


# --------------------------------------------------------------------------- forward / backward


def _forward(a: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hidden activations h (…, B, H) and logits (…, B, 10) for inputs a (…, B, 785)."""
    h = np.tanh(a @ w1)
    logits = h @ w2[..., :-1, :] + w2[..., -1:, :]
    return h, logits


def _backward(h: np.ndarray, logits: np.ndarray, labels: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """δ₂ = p − e_y (…, B, 10) and δ₁ = (W₂[:H] δ₂) ⊙ (1 − h²) (…, B, H)."""
    d2 = logits - logits.max(axis=-1, keepdims=True)
    np.exp(d2, out=d2)
    d2 /= d2.sum(axis=-1, keepdims=True)
    np.put_along_axis(d2, labels[..., None],
                      np.take_along_axis(d2, labels[..., None], axis=-1) - 1.0, axis=-1)
    d1 = (d2 @ np.swapaxes(w2[..., :-1, :], -1, -2)) * (1.0 - h * h)
    return d1, d2


def _sample_sq_norms(sq_a: np.ndarray, h: np.ndarray, d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """‖∇ℓ_j‖² = (‖h_j‖² + 1)‖δ₂‖² + ‖ã_j‖²‖δ₁‖² (the per-layer outer-product identity)."""
    hh = np.einsum("...k,...k->...", h, h) + 1.0
    return hh * np.einsum("...k,...k->...", d2, d2) + sq_a * np.einsum("...k,...k->...", d1, d1)


def _check_rows(problem: SoftmaxProblem, rows: np.ndarray) -> np.ndarray:
    if not isinstance(problem, SoftmaxProblem):
        raise ValueError(f"problem must be a SoftmaxProblem (the data), got {type(problem).__name__}")
    return problem.check_rows(rows)


def per_sample_grad_norms(problem: SoftmaxProblem, params: Params, rows: np.ndarray) -> np.ndarray:
    """‖∇ℓ(W; ξ_j)‖ of the cross-entropy for the given rows, in closed form (float64, (m,))."""
    rows = _check_rows(problem, rows)
    w1, w2, _ = _check_params(params)
    a = problem.features[rows].astype(np.float64)
    h, logits = _forward(a, np.asarray(w1, np.float64), np.asarray(w2, np.float64))
    d1, d2 = _backward(h, logits, problem.labels[rows], np.asarray(w2, np.float64))
    return np.sqrt(_sample_sq_norms(np.einsum("ij,ij->i", a, a), h, d1, d2))


def per_sample_gradients(problem: SoftmaxProblem, params: Params, rows: np.ndarray) -> Params:
    """The materialised per-sample gradients (∇_{W₁}ℓ_j, ∇_{W₂}ℓ_j), shapes (m, 785, H) and
    (m, H+1, 10), float64 (tests, small m only)."""
    rows = _check_rows(problem, rows)
    w1, w2, _ = _check_params(params)
    a = problem.features[rows].astype(np.float64)
    h, logits = _forward(a, np.asarray(w1, np.float64), np.asarray(w2, np.float64))
    d1, d2 = _backward(h, logits, problem.labels[rows], np.asarray(w2, np.float64))
    ht = np.concatenate([h, np.ones((h.shape[0], 1))], axis=1)
    return a[:, :, None] * d1[:, None, :], ht[:, :, None] * d2[:, None, :]


def clipped_gradients(a: np.ndarray, labels: np.ndarray, sq_a: np.ndarray, weights: np.ndarray,
                      w1: np.ndarray, w2: np.ndarray, clip: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted sum of per-sample cross-entropy gradients clipped at ``clip`` (``None``: no
    clipping) for a stack of M models on their own batches, without forming per-sample
    gradients: returns (g₁ (M, 785, H), g₂ (M, H+1, 10), per-sample norms (M, B)).

    ``a`` (M, B, 785) inputs, ``labels`` (M, B), ``sq_a`` (M, B) = ‖ã_j‖², ``weights`` (M, B)
    (1/b on real samples, 0 on padding); ``w1`` (M, 785, H), ``w2`` (M, H+1, 10). The dtype of
    ``a`` sets the arithmetic (float32 in training)."""
    if a.ndim != 3 or a.shape[-1] != N_FEATURES:
        raise ValueError(f"a must have shape (M, B, {N_FEATURES}), got {a.shape}")
    if labels.shape != a.shape[:2] or sq_a.shape != a.shape[:2] or weights.shape != a.shape[:2]:
        raise ValueError(f"labels, sq_a and weights must have shape {a.shape[:2]}")
    if clip is not None:
        clip = check_positive("clip (C)", clip)
    h, logits = _forward(a, w1, w2)
    d1, d2 = _backward(h, logits, labels, w2)
    norms = np.sqrt(_sample_sq_norms(sq_a, h, d1, d2))
    coef = weights
    if clip is not None:
        coef = weights * np.minimum(1.0, clip / np.maximum(norms, 1e-30)).astype(a.dtype)
    d1 *= coef[..., None]
    d2 *= coef[..., None]
    g1 = np.swapaxes(a, 1, 2) @ d1
    g2 = np.concatenate([np.swapaxes(h, 1, 2) @ d2, d2.sum(axis=1, keepdims=True)], axis=1)
    return g1, g2, norms


def mlp_loss(problem: SoftmaxProblem, params: Params, *, chunk: int = 20_000) -> float:
    """Mean training cross-entropy over all samples (no regulariser): the curves' metric."""
    if not isinstance(problem, SoftmaxProblem):
        raise ValueError(f"problem must be a SoftmaxProblem (the data), got {type(problem).__name__}")
    w1, w2, _ = _check_params(params)
    w1, w2 = w1.astype(np.float32), w2.astype(np.float32)
    total = 0.0
    for start in range(0, problem.labels.size, chunk):
        _, logits = _forward(problem.features[start:start + chunk], w1, w2)
        logits -= logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(logits).sum(axis=1))
        y = problem.labels[start:start + chunk]
        total += float(np.sum(lse - logits[np.arange(y.size), y], dtype=np.float64))
    return total / problem.labels.size


def mlp_accuracy(problem: SoftmaxProblem, params: Params) -> float:
    """Test accuracy (the problem must carry a test set)."""
    if not isinstance(problem, SoftmaxProblem) or problem.test_features is None:
        raise ValueError("problem must be a SoftmaxProblem built with a test set")
    w1, w2, _ = _check_params(params)
    _, logits = _forward(problem.test_features, w1.astype(np.float32), w2.astype(np.float32))
    return float(np.mean(np.argmax(logits, axis=1) == problem.test_labels))


# --------------------------------------------------------------------------- Alg. 2


def _streams(seed: int | np.random.SeedSequence) -> dict[str, np.random.Generator]:
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(check_int("seed", seed, 0))
    names = (*STREAMS, "init")
    return {name: np.random.Generator(np.random.PCG64(child))
            for name, child in zip(names, ss.spawn(len(names)), strict=True)}


def _local_sgd(problem: SoftmaxProblem, x: Params, rows: np.ndarray, weights: np.ndarray, lr: float,
               clip: float | None) -> tuple[np.ndarray, np.ndarray]:
    """E clipped local SGD steps of all M scheduled devices from the global model ``x``;
    ``rows``/``weights`` (E, M, B). Returns the local models (float32 stacks)."""
    steps, m, _ = rows.shape
    w1 = np.broadcast_to(x[0].astype(np.float32), (m, *x[0].shape)).copy()
    w2 = np.broadcast_to(x[1].astype(np.float32), (m, *x[1].shape)).copy()
    lr32, mu = np.float32(lr), np.float32(problem.mu)
    for t in range(steps):
        r = rows[t]
        g1, g2, _ = clipped_gradients(problem.features[r], problem.labels[r], problem.sq_norms[r],
                                      weights[t], w1, w2, clip)
        g1 += mu * w1
        g2 += mu * w2
        w1 -= lr32 * g1
        w2 -= lr32 * g2
    return w1, w2


def private_fedpaq_mlp(problem: SoftmaxProblem, *, rounds: int, local_steps: int, m_per_round: int,
                       hidden: int = 64, sample_ratio: float = 0.2, clip: float | None = 1.0,
                       epsilon: float | None = 1.0, delta: float = 1e-4,
                       sensitivity_mode: str = "authors_code", calibration: str = "paper",
                       q_levels: int | None = 10, lr0: float = 0.1, decay_iters: float = 100.0,
                       seed: int | np.random.SeedSequence = 0, eval_rounds: Sequence[int] | None = None,
                       accuracy: bool = False) -> History:
    """Privacy-augmented FedPAQ (Alg. 2) on the one-hidden-layer network.

    Round k: M of the N devices uniformly without replacement; each draws E·b_i of its records
    (b_i = ⌊γn_i/E⌋, :func:`~fedrepro.dpfedpaq.algorithms.private_batch_sizes`), split into E
    disjoint batches (:func:`~fedrepro.dpfedpaq.local.subsample_batches`), runs E steps of
    size η_k = η₀/(1 + kE/τ) on the per-sample-clipped gradients, adds Gaussian noise of std
    (σ/Δ)_i·Δ_{i,k} (:mod:`fedrepro.dpfedpaq.noise`) to u_i = y_E − x_k, and uploads
    Q_s(u_i + z_i); the server averages. ``epsilon=None``: no noise; ``clip=None``: no
    clipping (only without noise). The default sensitivity is the one of the paper's figures
    (``authors_code``, Δ = C/n_i: not a valid guarantee). The returned
    :class:`~fedrepro.dpfedpaq.algorithms.History` holds the flat final model as ``x``.
    """
    if not isinstance(problem, SoftmaxProblem):
        raise ValueError(f"problem must be a SoftmaxProblem (the data), got {type(problem).__name__}")
    rounds = check_int("rounds (K)", rounds, 1)
    local_steps = check_int("local_steps (E)", local_steps, 1)
    m_per_round = check_int(f"m_per_round (M, at most N={problem.n_devices})", m_per_round, 1, problem.n_devices)
    hidden = check_int("hidden (H, hidden units)", hidden, 1)
    lr0 = check_positive("lr0 (initial learning rate)", lr0)
    decay_iters = check_positive("decay_iters (learning-rate decay scale)", decay_iters)
    if q_levels is not None:
        q_levels = check_int("q_levels (s)", q_levels, 1)
    clip, epsilon, delta = check_privacy_args(sensitivity_mode, calibration, clip, epsilon, delta)
    sizes = problem.sizes
    b_all = private_batch_sizes(sizes, sample_ratio, local_steps)
    gamma = local_steps * b_all / sizes
    if epsilon is not None and np.any(gamma <= delta):
        raise ValueError(f"delta must be smaller than every gamma_i (min {gamma.min():.3g})")
    mult = (noise_multipliers(calibration, epsilon=epsilon, delta=delta, gamma=gamma)
            if epsilon is not None else np.zeros(sizes.shape))
    if eval_rounds is None:
        ev = np.arange(rounds + 1)
    else:
        ev = np.unique(np.asarray(eval_rounds))
        if ev.dtype.kind not in "iu" or ev.size == 0 or ev[0] < 0 or ev[-1] > rounds:
            raise ValueError(f"eval_rounds must be integers in [0, rounds={rounds}]")
    rng = _streams(seed)
    x = init_params(hidden, rng["init"])
    d = dimension(hidden)
    beta = bits(d, q_levels)
    loss = np.full(ev.size, np.nan)
    acc = np.full(ev.size, np.nan)
    bit_curve = np.zeros(ev.size)
    update_norm = np.full(rounds, np.nan)
    noise_norm = np.zeros(rounds)
    total_bits, nxt, sigma0 = 0.0, 0, math.nan

    def record(k: int) -> None:
        nonlocal nxt
        while nxt < ev.size and ev[nxt] == k:
            loss[nxt] = mlp_loss(problem, x)
            if accuracy and problem.test_features is not None:
                acc[nxt] = mlp_accuracy(problem, x)
            bit_curve[nxt] = total_bits
            nxt += 1

    for k in range(rounds):
        record(k)
        devices = np.sort(rng["scheduling"].choice(problem.n_devices, m_per_round, replace=False))
        lr = float(learning_rate(k, local_steps, lr0, decay_iters))
        sched = subsample_batches(problem, devices, local_steps, b_all[devices], rng["subsampling"])
        y1, y2 = _local_sgd(problem, x, sched.rows, sched.weights, lr, clip)
        flat = np.concatenate([y1.reshape(m_per_round, -1) - x[0].reshape(1, -1),
                               y2.reshape(m_per_round, -1) - x[1].reshape(1, -1)], axis=1)
        update_norm[k] = float(np.mean(np.linalg.norm(flat, axis=1)))
        if epsilon is not None:
            delta_f = sensitivity(sensitivity_mode, lr=lr, local_steps=local_steps, clip=clip,
                                  batch_size=b_all[devices], n_samples=sizes[devices])
            std = mult[devices] * delta_f
            if math.isnan(sigma0):
                sigma0 = float(np.mean(std))
            z = rng["noise"].standard_normal(flat.shape) * std[:, None]
            noise_norm[k] = float(np.mean(np.linalg.norm(z, axis=1)))
            flat = flat + z
        dx = quantize(flat, q_levels, rng["quantizer"]).mean(axis=0)
        step = unflatten(dx, hidden)
        x = (x[0] + step[0], x[1] + step[1])
        total_bits += m_per_round * beta
    record(rounds)
    return History(ev, local_steps, loss, acc, bit_curve, update_norm, noise_norm, flatten(x),
                   {"bits_per_message": beta, "hidden": hidden, "dim": d,
                    "gamma_mean": float(np.mean(gamma)), "noise_std_round0": sigma0,
                    "noise_multiplier_mean": float(np.mean(mult))})
