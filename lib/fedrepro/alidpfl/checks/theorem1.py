"""Theorem 1 (eq. 10): E‖ŵ(t) − v̂_[k](t)‖ ≤ h(t − (k−1)τ), checked on quadratic clients.

Instance (every constant exact): F_i(w) = ½(w − b_i)ᵀA_i(w − b_i) with diagonal A_i
(different per client: with one shared A the dynamics are linear and averaging is exact,
so the gap would be 0); β = max eig A_i; ξ_i = max ‖∇F_i(v) − ∇F(v)‖ over the points v of
the centralised trajectories (the only points where the proof uses Definition 2), so the
bound is evaluated with the smallest ξ the proof allows. Within one interval, starting from a common w_0, every client runs τ steps
w_i ← w_i − η(∇F_i(w_i) + n_i/B) and the centralised sequence (eq. 8) runs
v ← v − η(∇F(v) + n_v/B), all noises n ~ 𝒩(0, σ²C²I_d) independent, no clipping (the
gradients are exact: Lemma 3's setting). ŵ(t) = Σ_i p_i w_i(t).

Finding: with σ = 0 the bound holds (it is the deterministic bound of Wang et al.); with
noise it fails at t = 1, where h(1) = 0 but ŵ(1) − v̂(1) = −η(Σ p_i n_i − n_v)/B ≠ 0. The
proof's step "use the β-smooth" bounds ‖g̃_i − g̃_[k]‖ by β‖ŵ_i − v̂‖, dropping the noise.
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.alidpfl.tau_rule import gap_h, noise_term

__all__ = ["quadratic_instance", "theorem1_gap"]


def quadratic_instance(d: int = 5, n_clients: int = 4, beta: float = 1.0, spread: float = 1.0,
                       seed: int = 0) -> dict[str, np.ndarray | float]:
    """A_i (diagonals, one row per client), b_i, weights p_i and β of the quadratic clients."""
    rng = np.random.default_rng(seed)
    base = np.linspace(beta / 4, beta, d)
    diag = np.stack([rng.permutation(base) for _ in range(n_clients)])
    b = spread * rng.standard_normal((n_clients, d))
    p = np.full(n_clients, 1.0 / n_clients)
    return {"diag": diag, "b": b, "p": p, "beta": float(diag.max())}


def theorem1_gap(tau: int = 6, *, sigma: float = 0.0, clip: float = 1.0, batch: float = 10.0,
                 eta: float = 0.5, d: int = 5, n_clients: int = 4, trials: int = 4000,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(observed E‖ŵ(t) − v̂(t)‖, bound h(t)) for t = 0..τ (Monte Carlo over ``trials``).

    Tolerance: the Monte Carlo mean's standard error is below 2 % of the observed value at
    ``trials`` = 4000; a violation is counted only beyond that (see the tests)."""
    inst = quadratic_instance(d, n_clients, seed=seed)
    diag, b, p = inst["diag"], inst["b"], inst["p"]
    if eta > 1.0 / inst["beta"]:
        raise ValueError(f"eta must be at most 1/beta = {1 / inst['beta']:g} (Theorem 2's "
                         f"condition 1), got {eta}")
    rng = np.random.default_rng(seed + 1)
    w0 = rng.standard_normal(d)
    s = sigma * clip / batch
    w = np.broadcast_to(w0, (trials, n_clients, d)).copy()
    v = np.broadcast_to(w0, (trials, d)).copy()
    gaps = [0.0]
    xi = 0.0

    def divergence(v: np.ndarray) -> float:  # max over trials of Σ p_i ‖∇F_i(v) − ∇F(v)‖
        g_i = (v[:, None, :] - b) * diag
        g = np.einsum("i,tid->td", p, g_i)
        return float((np.linalg.norm(g_i - g[:, None, :], axis=2) @ p).max())

    for _ in range(tau):
        xi = max(xi, divergence(v))
        grad_i = (w - b) * diag
        w = w - eta * (grad_i + s * rng.standard_normal(w.shape))
        grad_v = np.einsum("i,tid->td", p, (v[:, None, :] - b) * diag)
        v = v - eta * (grad_v + s * rng.standard_normal(v.shape))
        avg = np.einsum("i,tid->td", p, w)
        gaps.append(float(np.linalg.norm(avg - v, axis=1).mean()))
    noise = noise_term(d, sigma, clip, batch) if sigma > 0 else 0.0
    bound = gap_h(np.arange(tau + 1), xi, inst["beta"], eta, noise)
    return np.array(gaps), bound


def expected_gap_at_one(sigma: float, clip: float, batch: float, eta: float, d: int,
                        n_clients: int) -> float:
    """Exact E‖ŵ(1) − v̂(1)‖ of the instance with equal weights: η·s·√(1 + 1/N)·E‖𝒩(0, I_d)‖,
    s = σC/B (the gap of the first step is the difference of the noises only)."""
    s = sigma * clip / batch * math.sqrt(1.0 + 1.0 / n_clients)
    chi_mean = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    return eta * s * chi_mean
