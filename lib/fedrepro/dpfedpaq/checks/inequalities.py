"""The elementary steps of the proof of Theorem 1 (spec §8 items 7–8; Appendix A).

* (28)(a): (1 − μη)^E ≤ e^{−μEη};  (28)(b): e^{−x} ≤ 1 − x + x²/2 for x = μEη ≥ 0;
* (30)→(31): under μEη ≤ 1, 1 − μEη + (μEη)²/2 ≤ 1 − μEη/2;
* the γ0 of the proof makes η_k ≤ 1/μ, η_k ≤ μ/L², 2L²(E−1)²η_k² ≤ 1 and η_k ≤ 1/(μE);
* recursion (32) δ_{k+1} = (1 − 2/(k+γ))δ_k + α/(k+γ)² iterated with equality against the
  closed form (34) δ_k ≤ (k0+γ)²/(k+γ)² δ_{k0} + α/(k+γ).
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import check_int, check_nonnegative, check_positive
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result
from fedrepro.dpfedpaq.theorem1 import Theorem1Constants, learning_rate, lr_offset

__all__ = [
    "check_eq28a",
    "check_eq28b",
    "check_eq30",
    "check_lr_conditions",
    "check_recursion",
]


def _grid_x(mu_e_eta: float) -> float:
    x = check_nonnegative("mu*E*eta", mu_e_eta)
    return x


def check_eq28a(mu_eta: float, E: int) -> CheckResult:
    """(1 − μη)^E ≤ e^{−μEη} for 0 ≤ μη ≤ 1 (rtol 1e-14: last-bit round-off of pow/exp)."""
    x = check_nonnegative("mu*eta", mu_eta)
    if x > 1:
        raise ValueError(f"mu*eta must be in [0, 1], got {mu_eta!r}")
    E = check_int("E", E, 1)
    return make_result((1 - x) ** E, math.exp(-x * E), rtol=1e-14, mu_eta=x, E=E)


def check_eq28b(mu_e_eta: float) -> CheckResult:
    """e^{−x} ≤ 1 − x + x²/2 for x = μEη ≥ 0 (rtol 1e-14)."""
    x = _grid_x(mu_e_eta)
    return make_result(math.exp(-x), 1 - x + x * x / 2, rtol=1e-14, x=x)


def check_eq30(mu_e_eta: float) -> CheckResult:
    """1 − x + x²/2 ≤ 1 − x/2 (the step (29)→(31)); holds iff x = μEη ≤ 1 (condition 30)."""
    x = _grid_x(mu_e_eta)
    return make_result(1 - x + x * x / 2, 1 - x / 2, rtol=0.0, atol=1e-15, x=x)


def check_lr_conditions(c: Theorem1Constants, rule: str = "paper", k: int = 0) -> CheckResult:
    """The largest of μη_k, η_k L²/μ, 2L²(E−1)²η_k² and μEη_k (each must be ≤ 1) at round
    k with γ0 by ``rule`` (the proof needs all four; rtol 1e-12)."""
    g0 = lr_offset(c, rule)
    eta = learning_rate(k, c, g0)
    terms = {"mu_eta": c.mu * eta, "eta_L2_over_mu": eta * c.L**2 / c.mu,
             "lemma3": 2 * c.L**2 * (c.E - 1) ** 2 * eta**2, "eq30": c.mu * c.E * eta}
    worst = max(terms, key=terms.get)  # type: ignore[arg-type]
    return make_result(terms[worst], 1.0, rtol=1e-12, gamma0=g0, eta=eta, worst=worst, **terms)


def check_recursion(alpha: float, gamma: float, delta0: float, rounds: int, k0: int = 0) -> CheckResult:
    """max_k of δ_k (recursion 32 iterated with equality from δ_{k0}) / closed form (34);
    the closed form must dominate every k in k0..k0+rounds (bound 1, rtol 1e-12)."""
    alpha = check_nonnegative("alpha", alpha)
    gamma = check_positive("gamma (= gamma0/E)", gamma)
    if gamma + k0 < 2:
        raise ValueError(f"gamma + k0 must be >= 2 (1 - 2/(k+gamma) >= 0), got {gamma + k0}")
    delta0 = check_nonnegative("delta0", delta0)
    rounds = check_int("rounds", rounds, 1)
    k0 = check_int("k0", k0, 0)
    k = np.arange(k0, k0 + rounds + 1, dtype=float)
    seq = np.empty(rounds + 1)
    seq[0] = delta0
    for j in range(rounds):
        kk = k[j] + gamma
        seq[j + 1] = (1 - 2 / kk) * seq[j] + alpha / kk**2
    closed = (k0 + gamma) ** 2 / (k + gamma) ** 2 * delta0 + alpha / (k + gamma)
    ratio = seq / np.where(closed > 0, closed, 1.0)
    worst = int(np.argmax(ratio))
    return make_result(float(ratio[worst]), 1.0, rtol=1e-12, worst_round=int(k[worst]),
                       final_ratio=float(ratio[-1]), alpha=alpha, gamma=gamma)
