"""The closed-form τ* of ALI-DPFL's public code (reference notes §5b), a reading of §IV-B.

The paper chooses τ* by searching G(τ) of Theorem 2 (eq. 13; :mod:`fedrepro.alidpfl.tau_rule`).
Its public code uses a different rule, the minimiser of a bound of the later strongly convex
analysis, with no ρ, β, ξ, λ, ω and no doubling cap:

    N = σ²C²d/B̂²,  B̂ = ⌊q·min_i |D_i|⌋,  T = min(R_s·τ, R_c),
    a = (2 + 2/T)(C² + N),  c = 4/μ² + 3C² + 2ΓTμ + N,
    τ* = round-half-up(√(1 + c/(a + 10⁻⁶))), clipped to 1..100,

where τ is the τ of the round just run (τ* is used in the next round) and R_s, R_c are the
run's whole budgets. √(1 + c/a) is the minimiser over τ > 0 of [a(τ − 1)² + c]/τ.

The statistics come from each client's **last** local step, on that step's minibatch 𝓑_i,
without noise (Cheng's tree of the code; Ling's subtracts parameters where gradients are
meant):

    μ = Σ_i p_i ‖∇ℓ_𝓑i(w_i) − ∇ℓ_𝓑i(w_i⁻)‖ / (‖w_i − w̄‖ + 10⁻⁶),
    Γ = |Σ_i p_i (ℓ_𝓑i(w_i) − ℓ_𝓑i(w_i⁻))|,

with w_i⁻, w_i the client's model before and after its last step, w̄ the new global model,
ℓ_𝓑 the mean cross-entropy over 𝓑 and p_i = |D_i|/|D|. μ = 0 (no client moved) gives the
limit τ* = 100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from fedrepro.core.validate import check_int, check_nonnegative, check_positive

__all__ = ["TAU_RANGE", "EPS", "noise_variance", "closed_form_tau", "round_statistics"]

#: the range the public code clips τ* to.
TAU_RANGE = (1, 100)
#: the public code's guard added to a denominator (in ``a + EPS`` and ``‖w_i − w̄‖ + EPS``).
EPS = 1e-6


def noise_variance(sigma: float, clip: float, d: int, batch: int) -> float:
    """N = σ²C²d/B̂² (B̂: the expected batch ⌊q·min_i |D_i|⌋)."""
    check_nonnegative("sigma", sigma)
    check_positive("clip", clip)
    check_int("d", d, 1)
    check_int("batch", batch, 1)
    return sigma * sigma * clip * clip * d / (batch * batch)


def closed_form_tau(mu: float, gamma: float, *, tau: int, rounds: int, iterations: int,
                    sigma: float, clip: float, d: int, batch: int) -> int:
    """τ* of the public code for the next round (module docstring), given the statistics μ,
    Γ of the round just run with ``tau`` local iterations and the run's budgets R_s =
    ``rounds``, R_c = ``iterations``."""
    mu = check_nonnegative("mu", mu)
    gamma = check_nonnegative("gamma", gamma)
    check_int("tau", tau, 1)
    check_int("rounds", rounds, 1)
    check_int("iterations", iterations, 1)
    lo, hi = TAU_RANGE
    if mu == 0.0:
        return hi
    noise = noise_variance(sigma, clip, d, batch)
    horizon = min(rounds * tau, iterations)
    a = (2.0 + 2.0 / horizon) * (clip * clip + noise)
    c = 4.0 / (mu * mu) + 3.0 * clip * clip + 2.0 * gamma * horizon * mu + noise
    root = math.sqrt(1.0 + c / (a + EPS))
    return int(min(max(math.floor(root + 0.5), lo), hi))


def round_statistics(loss_before: Sequence[float], loss_after: Sequence[float],
                     grad_change: Sequence[float], drift: Sequence[float],
                     weights: Sequence[float]) -> tuple[float, float]:
    """(μ, Γ) from each client's last-step statistics: its losses before and after the step
    on the step's batch, ‖∇ℓ(w_i) − ∇ℓ(w_i⁻)‖, and ‖w_i − w̄‖; ``weights`` p_i sum to 1."""
    arrays = [np.asarray(v, dtype=np.float64) for v in (loss_before, loss_after, grad_change, drift, weights)]
    n = arrays[0].shape
    if any(a.ndim != 1 or a.shape != n for a in arrays) or n[0] == 0:
        raise ValueError("the statistics must be 1-D, one entry per client, at least one client")
    before, after, change, dist, p = arrays
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("the statistics must be finite")
    if np.any(change < 0) or np.any(dist < 0) or np.any(p < 0) or not math.isclose(p.sum(), 1.0, rel_tol=1e-9):
        raise ValueError("gradient changes and drifts must be >= 0, weights >= 0 summing to 1")
    mu = float(np.sum(p * change / (dist + EPS)))
    gamma = float(abs(np.sum(p * (after - before))))
    return mu, gamma
