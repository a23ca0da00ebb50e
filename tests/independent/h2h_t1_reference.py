"""Plain reference loops for two client computations of the head-to-head task T1.

Written from the equations, not from the library's code; used by
``tests/test_headtohead_independent_paths.py`` to check

* **non-private FedAvg's local steps** (``clip=None``, no noise): ``local_steps`` minibatch
  SGD steps from the global model x, each on a Poisson sample of the client's records at
  rate q, the gradient being the mean of the per-record cross-entropy gradients over the
  realised batch (zero on an empty batch) plus the regulariser μw; the message is w_E − x;
* **quantized private FedPAQ's message** (DP-FedPAQ Alg. 2 with the valid sensitivity):
  E such steps with every per-record gradient clipped to norm C before the mean, the update
  u = w_E − x, Gaussian noise of standard deviation σ·Δ with Δ = 2ηEC, then the stochastic
  quantizer Q_s of eq. (20) of Mohammadi et al.:

      Q_j(v) = ‖v‖ · sign(v_j) · ξ_j,   l_j = ⌊s|v_j|/‖v‖⌋,   p_j = s|v_j|/‖v‖ − l_j,
      ξ_j = (l_j + 1)/s with probability p_j, else l_j/s;   Q(0) = 0,

  the norm transmitted as a float32 (the spec's §4: "‖v‖₂ as a float32").

The per-record gradient of the cross-entropy of a record ã (the pixels and a constant 1)
with label y at the (785, 10) model w is the outer product ã (p − e_y)ᵀ, p = softmax(wᵀã).
Everything here is float64, one record, one step and one coordinate at a time.

Random draws (the order the engine's docstring states, replayed from the same
``numpy.random.Generator``): per local step, the n_i uniforms of the Poisson sample (record
j is in the batch iff U_j < q); for private FedPAQ, after the E steps, the (785, 10)
standard normals of the noise; then, with ``levels`` set, one uniform U_j per coordinate of
the flattened (row-major) noisy update. The coin of ξ_j is the stochastic rounding the
quantizer's docstring states, h_j = ⌊s·v_j/‖v‖ + U_j⌋: for v_j ≥ 0 the coordinate rounds up
(|h_j| = l_j + 1) iff U_j ≥ 1 − p_j, for v_j < 0 iff U_j < p_j; either event has
probability p_j, as eq. (20) asks. Only numpy and math are imported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def record_gradient(a: np.ndarray, label: int, w: np.ndarray) -> np.ndarray:
    """ã (softmax(wᵀã) − e_label)ᵀ in float64 (the cross-entropy gradient of one record)."""
    a = np.asarray(a, dtype=np.float64)
    logits = [float(a @ w[:, c]) for c in range(w.shape[1])]
    top = max(logits)
    exps = [math.exp(z - top) for z in logits]
    total = sum(exps)
    r = np.array([e / total for e in exps])
    r[label] -= 1.0
    return np.outer(a, r)


@dataclass
class Trace:
    """What a reference computation saw: the realised batch sizes per step, the largest
    per-record gradient norm met and, per quantized message, the float32 norm sent, the
    signed integers h_j = sign(v_j)·s·ξ_j and the distance of every coin's uniform from its
    rounding threshold (inf where p_j = 0: no coin to toss)."""

    batch_sizes: list[int] = field(default_factory=list)
    max_grad_norm: float = 0.0
    sent_norms: list[float] = field(default_factory=list)
    levels: list[np.ndarray] = field(default_factory=list)
    margins: list[np.ndarray] = field(default_factory=list)


def _local_steps(A: np.ndarray, labels: np.ndarray, x: np.ndarray, *, steps: int, rate: float, lr: float,
                 mu: float, clip: float | None, rng: np.random.Generator, trace: Trace) -> np.ndarray:
    """``steps`` steps w ← w − η (mean_{j ∈ B} clip_C(g_j) + μw) from x, B a fresh Poisson
    sample per step (mean 0 on an empty batch); ``clip=None``: no clipping."""
    n = A.shape[0]
    w = np.array(x, dtype=np.float64, copy=True)
    for _ in range(steps):
        uniforms = rng.random(n)
        batch = [j for j in range(n) if uniforms[j] < rate]
        trace.batch_sizes.append(len(batch))
        total = np.zeros_like(w)
        for j in batch:
            g = record_gradient(A[j], int(labels[j]), w)
            norm = float(np.linalg.norm(g))
            trace.max_grad_norm = max(trace.max_grad_norm, norm)
            if clip is not None and norm > clip:
                g = g * (clip / norm)
            total += g
        mean = total / len(batch) if batch else total
        w = w - lr * (mean + mu * w)
    return w


def fedavg_message(A: np.ndarray, labels: np.ndarray, x: np.ndarray, *, steps: int, rate: float, lr: float,
                   mu: float, rng: np.random.Generator, trace: Trace | None = None) -> np.ndarray:
    """Non-private FedAvg's message w_E − x (module docstring): no clipping, no noise."""
    trace = Trace() if trace is None else trace
    return _local_steps(A, labels, x, steps=steps, rate=rate, lr=lr, mu=mu, clip=None, rng=rng, trace=trace) - x


def quantize(v: np.ndarray, s: int, uniforms: np.ndarray, trace: Trace | None = None) -> np.ndarray:
    """Q_s(v) of eq. (20), coordinate by coordinate, with the coins of ``uniforms`` (module
    docstring); the norm is sent (and used to decode) as a float32."""
    flat = [float(t) for t in np.asarray(v, dtype=np.float64).ravel()]
    norm = math.sqrt(math.fsum(t * t for t in flat))
    sent_norm = float(np.float32(norm))
    out = np.zeros(len(flat))
    h = np.zeros(len(flat), dtype=np.int64)
    margins = np.full(len(flat), np.inf)
    if norm == 0.0:
        return out.reshape(np.shape(v))
    for j, vj in enumerate(flat):
        ratio = s * abs(vj) / norm
        level = math.floor(ratio)
        p = ratio - level
        threshold = 1.0 - p if vj >= 0 else p
        up = uniforms[j] >= threshold if vj >= 0 else uniforms[j] < threshold
        xi = (level + 1) / s if up else level / s
        sign = 1.0 if vj > 0 else (-1.0 if vj < 0 else 0.0)
        out[j] = sent_norm * sign * xi
        h[j] = round(sign * s * xi)
        margins[j] = abs(uniforms[j] - threshold) if p > 0 else np.inf
    if trace is not None:
        trace.sent_norms.append(sent_norm)
        trace.levels.append(h)
        trace.margins.append(margins)
    return out.reshape(np.shape(v))


def private_fedpaq_message(A: np.ndarray, labels: np.ndarray, x: np.ndarray, *, steps: int, rate: float,
                           lr: float, clip: float, mu: float, noise_multiplier: float, levels: int | None,
                           rng: np.random.Generator, trace: Trace | None = None) -> np.ndarray:
    """Private FedPAQ's message Q_s(w_E − x + N(0, σ²Δ²I)), Δ = 2ηEC (module docstring);
    ``levels=None``: no quantization."""
    trace = Trace() if trace is None else trace
    w = _local_steps(A, labels, x, steps=steps, rate=rate, lr=lr, mu=mu, clip=clip, rng=rng, trace=trace)
    sensitivity = 2.0 * lr * steps * clip
    v = w - x + noise_multiplier * sensitivity * rng.standard_normal(np.shape(x))
    if levels is None:
        return v
    return quantize(v, levels, rng.random(v.size), trace)


def weighted_round(x: np.ndarray, sizes: list[int], messages: list[np.ndarray]) -> np.ndarray:
    """The server's step x + Σ_i n_i m_i / Σ_i n_i, one client at a time."""
    total = np.zeros_like(x)
    for n_i, m in zip(sizes, messages, strict=True):
        total += n_i * m
    return x + total / sum(sizes)
