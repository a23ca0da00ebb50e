"""Fed-PLT's privacy guarantee: Proposition 4 (RDP bound) and Lemma 5 (RDP → ADP).

Bastianello, Liu, Johansson, *Enhancing Privacy in Federated Learning through Local
Training* (final version), §II-D and §VI.

Notation clash: the paper writes both the Rényi order and the strong-convexity constant as
λ (the latter underlined). Here the Rényi order is ``alpha`` and the strong-convexity
constant of the local losses (Assumption 1) is ``lam``.

Range: RDP and ε values in [0, inf] (inf where they exceed the float range); counts K and Ne
are integers up to 2^63 (integral floats accepted).
"""

from __future__ import annotations

import math

from fedrepro.core.validate import check_int
from fedrepro.privacy._numerics import exp, log_inv, square
from fedrepro.privacy.validate import check_delta, check_nonnegative, check_order, check_positive

_MAX_COUNT = 2**63

__all__ = [
    "lemma5_rdp_to_dp",
    "proposition4_adp_epsilon",
    "proposition4_limit",
    "proposition4_rdp_bound",
]


def proposition4_rdp_bound(
    alpha: float, L: float, lam: float, tau: float, q: int | float, gamma: float, K: int, Ne: int
) -> float:
    """Rényi-DP bound of Fed-PLT with noisy gradient descent as local solver (Proposition 4).

    .. math::

        \\varepsilon \\le \\frac{\\alpha L^2}{\\lambda \\tau^2 q^2}
        \\left(1 - e^{-\\lambda \\gamma K N_e / 2}\\right)

    which is the expression of Proposition 4 (and of its proof, Appendix C-A) with the
    Rényi order written ``alpha`` and the strong-convexity constant ``lam`` (the paper's
    underlined λ). The bound holds under Assumption 1 (λ-strong convexity), Assumption 3
    (gradient sensitivity L/q), step size γ < 2/(λ̄ + 1/ρ) and a Gaussian initialisation
    N(0, 2τ²I/λ); these conditions involve quantities not passed here and are the caller's
    responsibility. With ``q`` the smallest local dataset size the bound is the worst case
    over agents.

    Parameters: ``alpha`` Rényi order (> 1); ``L`` gradient-sensitivity constant (> 0);
    ``lam`` strong-convexity constant (> 0); ``tau`` noise standard deviation (> 0); ``q``
    local dataset size (> 0); ``gamma`` step size (> 0); ``K`` number of rounds (>= 0);
    ``Ne`` local steps per round (>= 1).
    """
    alpha = check_order(alpha, "alpha")
    L = check_positive("L", L)
    lam = check_positive("lam", lam)
    tau = check_positive("tau", tau)
    q = check_positive("q", q)
    gamma = check_positive("gamma", gamma)
    K = check_int("K", K, 0, _MAX_COUNT, strict=False)
    Ne = check_int("Ne", Ne, 1, _MAX_COUNT, strict=False)
    if K == 0:  # nothing released yet (and λγ may overflow: inf·0)
        return 0.0
    factor = -math.expm1(-lam * gamma * K * Ne / 2)
    if factor == 0.0:  # λγKNe/2 below the float resolution
        return 0.0
    return _ceiling(alpha, L, lam, tau, q) * factor


def _ceiling(alpha: float, L: float, lam: float, tau: float, q: float) -> float:
    """αL²/(λτ²q²): the plain expression where numerator and denominator are in the float
    range, else in log space (inf or 0 where the value itself over- or underflows)."""
    num, den = alpha * square(L), lam * square(tau) * square(q)
    if 0 < num < math.inf and 0 < den < math.inf:
        return num / den
    return exp(math.log(alpha) + 2 * math.log(L) - math.log(lam) - 2 * math.log(tau) - 2 * math.log(q))


def proposition4_limit(alpha: float, L: float, lam: float, tau: float, q: int | float) -> float:
    """Limit of the Proposition 4 bound as K·Ne → ∞: αL²/(λτ²q²) (the constant ceiling)."""
    alpha = check_order(alpha, "alpha")
    L = check_positive("L", L)
    lam = check_positive("lam", lam)
    tau = check_positive("tau", tau)
    q = check_positive("q", q)
    return _ceiling(alpha, L, lam, tau, q)


def lemma5_rdp_to_dp(rdp_epsilon: float, alpha: float, delta: float) -> float:
    """ADP ε of an (α, ε_RDP)-RDP mechanism by Lemma 5: ε_RDP + log(1/δ)/(α − 1).

    Lemma 5 of the paper (Mironov 2017, Proposition 3): the mechanism is then (ε, δ)-DP
    for the given δ ∈ (0, 1).
    """
    rdp_epsilon = check_nonnegative("rdp_epsilon", rdp_epsilon)
    alpha = check_order(alpha, "alpha")
    delta = check_delta(delta)
    return rdp_epsilon + log_inv(delta) / (alpha - 1)


def proposition4_adp_epsilon(
    L: float, lam: float, tau: float, q: int | float, gamma: float, K: int, Ne: int, delta: float
) -> tuple[float, float]:
    """Smallest ADP ε from Proposition 4 + Lemma 5 over all Rényi orders, and that order.

    Proposition 4 gives ε_RDP(α) = α·c with c = L²(1 − e^{−λγKNe/2})/(λτ²q²), so Lemma 5's
    α·c + log(1/δ)/(α − 1) is minimised at α* = 1 + sqrt(log(1/δ)/c), where it equals
    c + 2·sqrt(c·log(1/δ)). Returns ``(epsilon, alpha_star)``; for K = 0 (nothing released
    yet) ``(0.0, inf)``; where c overflows, ``(inf, 1.0)`` (the limit α* → 1).
    """
    delta = check_delta(delta)
    c = proposition4_rdp_bound(2.0, L, lam, tau, q, gamma, K, Ne) / 2.0
    if c == 0.0:
        return 0.0, math.inf
    log_inv_delta = log_inv(delta)
    return c + 2 * math.sqrt(c * log_inv_delta), 1 + math.sqrt(log_inv_delta / c)
