"""Steps of Theorem 2's proof (Appendix B) checked on explicit distributions.

* The Jensen step before (37): "1/E[X³] ≥ E[1/X³]" for X = F(ŵ(T)) − F* ∈ (0, 1). Jensen's
  inequality for the convex 1/x³ gives the opposite, E[1/X³] ≥ 1/E[X³], with equality only
  for a constant X: :func:`jensen_step`.
* The final step: from E[1/X] ≥ T·c (c the denominator of (12)) and λ ≤ X < 1 the proof
  concludes E[X] < 1/(T·c) + √3/3 (eq. 12). A two-point X satisfies the premises and
  violates the conclusion: :func:`final_step`.
* "When 0 < x < 1 the maximum difference between x and x³ is √3/3": the maximum of x − x³
  is 2√3/9 ≈ 0.385, at x = √3/3: :func:`x_minus_x3_max`.
* Lemma 6 applies β-smoothness to the noisy clipped gradient g̃ as if it were ∇F:
  F(v(t+1)) − F(v(t)) ≤ η(βη/2 − 1)‖g̃‖² < 0 fails at the minimiser: :func:`lemma6_noisy_step`.
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.alidpfl.tau_rule import SQRT3_OVER_3

__all__ = ["JENSEN_COUNTEREXAMPLE", "FINAL_STEP_COUNTEREXAMPLE", "jensen_step",
           "final_step", "x_minus_x3_max", "lemma6_noisy_step"]

#: (values, probabilities) of X for the Jensen step.
JENSEN_COUNTEREXAMPLE = ((0.1, 0.9), (0.5, 0.5))
#: (values, probabilities) of X for the final step (λ = 1e-4).
FINAL_STEP_COUNTEREXAMPLE = ((1e-4, 0.999), (0.01, 0.99))


def _check_dist(values, probs) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(values, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    if x.shape != p.shape or np.any(x <= 0) or np.any(x >= 1):
        raise ValueError("values must lie in (0, 1), one probability each")
    if np.any(p < 0) or not math.isclose(p.sum(), 1.0, rel_tol=1e-12):
        raise ValueError("probs must be non-negative and sum to 1")
    return x, p


def jensen_step(values=JENSEN_COUNTEREXAMPLE[0], probs=JENSEN_COUNTEREXAMPLE[1]) -> tuple[float, float]:
    """(1/E[X³], E[1/X³]); the proof claims the first is ≥ the second."""
    x, p = _check_dist(values, probs)
    return float(1.0 / (p @ x ** 3)), float(p @ x ** -3.0)


def final_step(values=FINAL_STEP_COUNTEREXAMPLE[0], probs=FINAL_STEP_COUNTEREXAMPLE[1]) -> tuple[float, float]:
    """(E[X], 1/(T·c) + √3/3) with T·c := E[1/X], the largest value the premise
    E[1/X] ≥ T·c allows; eq. (12) claims E[X] < the second value."""
    x, p = _check_dist(values, probs)
    tc = float(p @ (1.0 / x))
    return float(p @ x), 1.0 / tc + SQRT3_OVER_3


def x_minus_x3_max(grid: int = 200_001) -> tuple[float, float]:
    """(max of x − x³ over a grid of (0, 1), the paper's √3/3); exact max 2√3/9 at √3/3.
    Tolerance: the grid max is within 1e-10 of 2√3/9 at 200,001 points."""
    x = np.linspace(0.0, 1.0, grid)[1:-1]
    return float(np.max(x - x ** 3)), SQRT3_OVER_3


def lemma6_noisy_step(beta: float = 1.0, eta: float = 0.5, noise: float = 0.3) -> tuple[float, float]:
    """(F(v(t+1)) − F(v(t)), η(βη/2 − 1)‖g̃‖²) for F(w) = βw²/2 at its minimiser w = 0 and
    a noisy gradient g̃ = ``noise`` (what DP-SGD's g̃ is at the optimum, where ∇F = 0)."""
    v_next = 0.0 - eta * noise
    return 0.5 * beta * v_next ** 2, eta * (beta * eta / 2.0 - 1.0) * noise ** 2
