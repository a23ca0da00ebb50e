"""Definitions and equations of ALI-DPFL checked as printed and as corrected.

* Definition 3: "SG_{q,σ} satisfies (α, R)-RDP whenever R ≤ (1/(α−1)) log A_α". RDP at
  level R means D_α(M(D) ‖ M(D')) ≤ R, so the inequality must read R ≥:
  :func:`definition3_direction` computes D_α(μ ‖ μ_0) by quadrature (it equals
  log A_α/(α−1) of eq. 17) and shows an R allowed by the printed direction below it.
* §III-C clipping "ḡ ← g / max(1, ‖g‖/‖g‖)" never clips (the ratio is 1); Algorithm 1
  line 9 has the intended ‖g‖/C: :func:`clipping_printed`.
* Eq. (7) averages ŵ_i(t−1) to get ŵ(t); eq. (21) of the proof, ŵ(t) = ŵ(t−1) − η Σ p_i
  g̃_i(t−1), needs ŵ(t) = Σ p_i ŵ_i(t): :func:`eq7_residual`.
* Eq. (8) gives the centralised sequence the noise 𝒩(0, σ²C²I_d) without the 1/B of
  Algorithm 2; its norm alone then exceeds the whole of Lemma 3's bound by the factor B/2:
  :func:`eq8_auxiliary_noise`.
* Eq. (11) as printed divides ξ by B in its second term, so h(1) = ηξ(1 − 1/B) ≠ 0,
  against the text's "h(0) = h(1) = 0"; eq. (24) has the intended parentheses:
  :func:`eq11_h_at_one`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from fedrepro.alidpfl.setting import PAPER
from fedrepro.alidpfl.tau_rule import gap_h, gap_h_printed, noise_term

__all__ = ["sgm_log_a", "definition3_direction", "clipping_printed", "clip_corrected",
           "eq7_residual", "eq8_auxiliary_noise", "eq11_h_at_one"]


def sgm_log_a(alpha: int, q: float, sigma: float) -> float:
    """log A_α of eq. (17) (integer α ≥ 2), summed in log space."""
    k = np.arange(alpha + 1)
    log_binom = np.array([math.lgamma(alpha + 1) - math.lgamma(j + 1) - math.lgamma(alpha - j + 1)
                          for j in k])
    with np.errstate(divide="ignore"):
        terms = log_binom + (alpha - k) * math.log1p(-q) + k * np.log(q) + (k * k - k) / (2 * sigma ** 2)
    m = terms.max()
    return float(m + math.log(np.exp(terms - m).sum()))


def definition3_direction(alpha: int = 8, q: float = PAPER.q, sigma: float = PAPER.sigma) -> dict[str, float]:
    """D_α(μ ‖ μ_0) by quadrature, the formula log A_α/(α−1), and R = half the formula
    (allowed by the printed "R ≤" yet below the divergence, so not an RDP level).
    Tolerance: quadrature relative error < 1e-8."""
    def integrand(z: float) -> float:
        log_mu0 = -z * z / (2 * sigma ** 2)
        log_mu1 = -(z - 1) ** 2 / (2 * sigma ** 2)
        log_mu = np.logaddexp(math.log1p(-q) + log_mu0, math.log(q) + log_mu1)
        return math.exp(alpha * log_mu + (1 - alpha) * log_mu0) / (sigma * math.sqrt(2 * math.pi))

    a_quad, _ = integrate.quad(integrand, -60 * sigma, 60 * sigma, limit=400, epsabs=0, epsrel=1e-12)
    divergence = math.log(a_quad) / (alpha - 1)
    formula = sgm_log_a(alpha, q, sigma) / (alpha - 1)
    return {"divergence": divergence, "formula": formula, "printed_allowed_R": 0.5 * formula}


def clipping_printed(g: np.ndarray, clip: float) -> tuple[float, float]:
    """(‖g / max(1, ‖g‖/‖g‖)‖, C): the printed §III-C formula leaves g unchanged."""
    g = np.asarray(g, dtype=np.float64)
    n = float(np.linalg.norm(g))
    return float(np.linalg.norm(g / max(1.0, n / n))), float(clip)


def clip_corrected(g: np.ndarray, clip: float) -> np.ndarray:
    """g / max(1, ‖g‖/C) (Algorithm 1, line 9)."""
    g = np.asarray(g, dtype=np.float64)
    return g / max(1.0, float(np.linalg.norm(g)) / clip)


def eq7_residual(d: int = 4, n_clients: int = 3, eta: float = 0.5, seed: int = 0) -> dict[str, float]:
    """‖ŵ(t) − (ŵ(t−1) − η Σ p_i g̃_i(t−1))‖ (eq. 21) with ŵ(t) defined by eq. (7) as
    printed (average of ŵ_i(t−1)) and as corrected (average of ŵ_i(t)), two local steps of
    gradient descent on random quadratics."""
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((n_clients, d))
    p = rng.dirichlet(np.ones(n_clients))
    w_prev2 = np.broadcast_to(rng.standard_normal(d), (n_clients, d)).copy()
    w_prev = w_prev2 - eta * (w_prev2 - b)  # ŵ_i(t−1)
    g_prev = w_prev - b                      # g_i(t−1)
    w_now = w_prev - eta * g_prev            # ŵ_i(t)
    avg_prev, avg_prev2, avg_now = p @ w_prev, p @ w_prev2, p @ w_now
    target_corrected = avg_prev - eta * (p @ g_prev)
    # printed: ŵ(t) = avg ŵ_i(t−1) and ŵ(t−1) = avg ŵ_i(t−2)
    target_printed = avg_prev2 - eta * (p @ g_prev)
    return {"printed": float(np.linalg.norm(avg_prev - target_printed)),
            "corrected": float(np.linalg.norm(avg_now - target_corrected))}


def eq8_auxiliary_noise(d: int = 582_026, sigma: float = PAPER.sigma, clip: float = PAPER.clip,
                        batch: float = 90.0) -> tuple[float, float]:
    """(E‖𝒩(0, σ²C²I_d)‖ exactly, Lemma 3's 2√dσC/B): the printed noise of eq. (8) against
    the bound that is meant to cover the noise of both sequences."""
    chi_mean = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    return sigma * clip * chi_mean, noise_term(d, sigma, clip, batch)


def eq11_h_at_one(xi: float = 0.1, beta: float = 1.0, eta: float = 0.5, d: int = 582_026,
                  sigma: float = PAPER.sigma, clip: float = PAPER.clip, batch: float = 90.0) -> dict[str, float]:
    """h(1) by eq. (11) as printed and by eq. (24); the text says h(1) = 0."""
    return {"printed": float(gap_h_printed(1, xi, beta, eta, d, sigma, clip, batch)),
            "corrected": float(gap_h(1, xi, beta, eta, noise_term(d, sigma, clip, batch))),
            "claimed": 0.0}
