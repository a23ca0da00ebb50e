"""An independent float64 implementation of task T2's client computations, written from the
equations (DP-SGD of Abadi et al.; DP-FedPAQ Alg. 2 with Δ = 2ηEC; Fed-PLT v2 Algorithm 1
with noisy subsampled local steps), the way a practitioner would: its own CNN module, the
per-record gradients by ``torch.func`` (``vmap`` of ``grad`` over the records), a plain loop
over the clients and the local steps.

It imports nothing from ``fedrepro``: the inputs (the initial flat parameter vector, the
clients' data, the noise multiplier) are handed to it, and the random draws come from a numpy
generator in the documented order (per step: the n_i uniforms of the Poisson sample, then the
d standard normals of the noise; FedPAQ: its d normals after the local steps).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn import functional as F


class ReferenceCNN(nn.Module):
    """conv 5×5 (32) → ReLU → max-pool 2 → conv 5×5 (64) → ReLU → max-pool 2 → FC 512 → ReLU → FC 10."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 5)
        self.c2 = nn.Conv2d(32, 64, 5)
        self.f1 = nn.Linear(1024, 512)
        self.f2 = nn.Linear(512, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.f2(F.relu(self.f1(torch.flatten(x, 1))))


class Reference:
    """The model as a dict of float64 tensors built from a flat vector; per-record gradients."""

    def __init__(self) -> None:
        self.net = ReferenceCNN().double()
        self.names = [n for n, _ in self.net.named_parameters()]
        self.shapes = [p.shape for _, p in self.net.named_parameters()]

    def unflatten(self, w: np.ndarray) -> dict[str, torch.Tensor]:
        out, k = {}, 0
        t = torch.from_numpy(np.asarray(w, dtype=np.float64))
        for n, s in zip(self.names, self.shapes, strict=True):
            m = int(np.prod(s))
            out[n] = t[k:k + m].reshape(s).clone()
            k += m
        assert k == t.numel()
        return out

    @staticmethod
    def flatten(params: dict[str, torch.Tensor]) -> np.ndarray:
        return torch.cat([p.reshape(-1) for p in params.values()]).numpy().copy()

    def per_record_gradients(self, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(b, d): the gradient of each record's cross-entropy at w."""
        params = self.unflatten(w)

        def loss(p, xi, yi):
            out = functional_call(self.net, p, (xi.unsqueeze(0),))
            return F.cross_entropy(out, yi.unsqueeze(0))

        g = vmap(grad(loss), in_dims=(None, 0, 0))(params, torch.from_numpy(x.astype(np.float64)),
                                                  torch.from_numpy(y.astype(np.int64)))
        return torch.cat([g[n].reshape(len(y), -1) for n in self.names], dim=1).numpy()


def _clipped_sum(ref: Reference, w, x, y, clip):
    if len(y) == 0:
        return np.zeros_like(w)
    g = ref.per_record_gradients(w, x, y)
    if clip is None:
        return g.sum(axis=0)
    norms = np.linalg.norm(g, axis=1)
    return (g * np.minimum(1.0, clip / norms)[:, None]).sum(axis=0)


def dpsgd_client(ref, w, x, y, *, steps, rate, lr, clip, sigma, rng):
    """τ DP-SGD steps (clip=None, σ = 0: minibatch SGD with the mean over the realised batch)."""
    w = np.array(w, dtype=np.float64)
    n = len(y)
    for _ in range(steps):
        rows = np.flatnonzero(rng.random(n) < rate)
        s = _clipped_sum(ref, w, x[rows], y[rows], clip)
        if clip is None:
            g = s / max(len(rows), 1)
        else:
            g = (s + sigma * clip * rng.standard_normal(w.size)) / (rate * n)
        w = w - lr * g
    return w


def fedpaq_client(ref, w0, x, y, *, steps, rate, lr, clip, sigma, rng):
    """E clipped-mean SGD steps, then the update plus N(0, (σ·2ηEC)²I) (no quantization)."""
    w = np.array(w0, dtype=np.float64)
    n = len(y)
    for _ in range(steps):
        rows = np.flatnonzero(rng.random(n) < rate)
        w = w - lr * _clipped_sum(ref, w, x[rows], y[rows], clip) / max(len(rows), 1)
    return w - w0 + sigma * (2 * lr * steps * clip) * rng.standard_normal(w.size)


def fedplt_client(ref, w0, v, x, y, *, steps, rate, lr, rho, clip, sigma, rng):
    """N_e steps on f_i(w) + ‖w − v‖²/(2ρ) with the noisy subsampled data gradient."""
    w = np.array(w0, dtype=np.float64)
    n = len(y)
    for _ in range(steps):
        rows = np.flatnonzero(rng.random(n) < rate)
        g = (_clipped_sum(ref, w, x[rows], y[rows], clip) + sigma * clip * rng.standard_normal(w.size)) / (rate * n)
        w = w - lr * (g + (w - v) / rho)
    return w


def rounds(kind: str, ref: Reference, x0: np.ndarray, clients, sizes, n_rounds: int, rng, **h) -> np.ndarray:
    """``n_rounds`` rounds with every client in every round, in client order; the server model."""
    weights = np.asarray(sizes, dtype=np.float64) / np.sum(sizes)
    if kind == "fedplt":
        z = [x0.copy() for _ in clients]
        local = [x0.copy() for _ in clients]
        y_model = x0.copy()
        for _ in range(n_rounds):
            for i, (x, y) in enumerate(clients):
                w = fedplt_client(ref, local[i], 2 * y_model - z[i], x, y, rng=rng, **h)
                local[i] = w
                z[i] = z[i] + 2 * (w - y_model)
            y_model = np.mean(z, axis=0)
        return y_model
    model = x0.copy()
    for _ in range(n_rounds):
        updates = []
        for x, y in clients:
            if kind == "fedpaq":
                updates.append(fedpaq_client(ref, model, x, y, rng=rng, **h))
            else:
                updates.append(dpsgd_client(ref, model, x, y, rng=rng, **h) - model)
        model = model + np.tensordot(weights, np.stack(updates), axes=1)
    return model
