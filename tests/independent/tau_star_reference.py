"""ALI-DPFL's τ* rule written from the paper's equations (Ling et al., §III-D, §IV-B), in plain
float64 loops over clients and τ (NumPy only for a vector's dot product), sharing no code with
:mod:`fedrepro.alidpfl.tau_rule`.

* the estimates of "Perform Estimate" (§IV-B), weighted by |D_i|/|D|:
  ρ_i = |F_i(ŵ_i) − F_i(ŵ)| / ‖ŵ_i − ŵ‖, β_i = ‖∇F_i(ŵ_i) − ∇F_i(ŵ)‖ / ‖ŵ_i − ŵ‖,
  ξ_i = ‖∇F_i(ŵ) − ∇F(ŵ)‖ with ∇F(ŵ) = Σ_i (|D_i|/|D|) ∇F_i(ŵ); a client that did not move
  contributes ρ_i = β_i = 0 (the library's documented convention, the paper divides by 0);
* the noise term of Lemma 3, N = 2√d·σC/B;
* h(τ) = (ξ + N)/β·((ηβ + 1)^τ − 1) − η(ξ + N)·τ (eq. 24), φ = ω(1 − βη/2);
* G(τ) = 1/(T·(ηφ − ρh(τ)/(τλ²))) + √3/3 (eq. 13), +∞ where the denominator is ≤ 0
  (Theorem 2's condition 2 fails);
* τ* = the smallest minimiser of G over τ = 1..min(2τ_prev, 100), 1 when no τ is feasible,
  with the horizon T(τ) = t_done + min(R_s,left·τ, R_c,left) (the spec's decision 5; the
  paper leaves T unstated);
* λ = F(ŵ), ω = 1/D² (the documented rule ``"loss"``; the paper gives none), D floored at 1e-12.
"""

from __future__ import annotations

import math

import numpy as np


def _norm(v: np.ndarray) -> float:
    return math.sqrt(float(np.dot(v, v)))


def estimates(reports: list[dict], weights: list[float]) -> tuple[float, float, float]:
    """(ρ, β, ξ) from the clients' reports (dicts with loss_local, loss_global, grad_local,
    grad_global, distance), by the loops of §IV-B."""
    full = np.zeros(len(reports[0]["grad_global"]))
    for w, r in zip(weights, reports, strict=True):  # ∇F(ŵ), client by client
        full += w * np.asarray(r["grad_global"], dtype=np.float64)
    rho = beta = xi = 0.0
    for w, r in zip(weights, reports, strict=True):
        gl = np.asarray(r["grad_local"], dtype=np.float64)
        gg = np.asarray(r["grad_global"], dtype=np.float64)
        if r["distance"] > 0:
            rho += w * abs(r["loss_local"] - r["loss_global"]) / r["distance"]
            beta += w * _norm(gl - gg) / r["distance"]
        xi += w * _norm(gg - full)
    return rho, beta, xi


def lambda_omega_loss(loss: float, distance: float) -> tuple[float, float]:
    """Rule ``"loss"``: λ = F(ŵ) (floored at 1e-12), ω = 1/D²."""
    dist = max(distance, 1e-12)
    return max(loss, 1e-12), 1.0 / (dist * dist)


def noise(d: int, sigma: float, clip: float, batch: float) -> float:
    """N = 2√d·σC/B (Lemma 3)."""
    return 2.0 * math.sqrt(d) * sigma * clip / batch


def bound(tau: int, *, rho: float, beta: float, xi: float, lam: float, omega: float, eta: float,
          noise_term: float, done: int, rounds_left: int, iterations_left: int) -> float:
    """G(τ) of eq. (13) with h of eq. (24), +∞ where infeasible."""
    a = xi + noise_term
    h = a / beta * ((eta * beta + 1.0) ** tau - 1.0) - eta * a * tau
    phi = omega * (1.0 - beta * eta / 2.0)
    T = done + min(rounds_left * tau, iterations_left)
    denom = T * (eta * phi - rho * h / (tau * lam * lam))
    return 1.0 / denom + math.sqrt(3.0) / 3.0 if denom > 0 else math.inf


def choose(tau_prev: int, cap: int = 100, **kw) -> tuple[int, int]:
    """(τ*, number of feasible τ) over τ = 1..min(2τ_prev, cap)."""
    best, best_g, feasible = 1, math.inf, 0
    for tau in range(1, min(2 * tau_prev, cap) + 1):
        g = bound(tau, **kw)
        if g < math.inf:
            feasible += 1
        if g < best_g:
            best, best_g = tau, g
    return best, feasible
