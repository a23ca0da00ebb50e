"""Privacy checks (spec §8 items 3–4) and the budget a device spends over the whole training.

* :func:`check_chain_link`: one link of the amplification chain (15);
* :func:`check_gaussian_profile`: the exact Gaussian privacy profile (Balle & Wang 2018)
  δ(ε₀) = Φ(Δ/(2σ) − ε₀σ/Δ) − e^{ε₀}Φ(−Δ/(2σ) − ε₀σ/Δ) at the noise of eq. (13) against δ₀,
  with the profile evaluated independently here (``scipy.stats.norm``) and cross-checked
  against :func:`fedrepro.privacy.gaussian.analytic_gaussian_delta`;
* :func:`check_per_round_epsilon`: the realized per-round ε of eq. (16)'s noise (exact
  profile, then exact amplification by γ) against the target ε;
* :func:`training_epsilon`: what a device spends over K rounds (the paper guarantees ε per
  round only), by basic composition of the per-round guarantee amplified by device sampling
  M/N, and by the RDP accountant of :mod:`fedrepro.privacy.rdp`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from fedrepro.core.validate import check_int, check_positive
from fedrepro.dpfedpaq import amplification as amp
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result
from fedrepro.privacy.conversion import epsilon_from_rdp
from fedrepro.privacy.gaussian import analytic_gaussian_delta
from fedrepro.privacy.rdp import compose, rdp_sampled_gaussian
from fedrepro.privacy.validate import check_delta

__all__ = [
    "RDP_ORDERS",
    "check_chain_link",
    "check_gaussian_profile",
    "check_per_round_epsilon",
    "gaussian_profile",
    "training_epsilon",
]

#: Orders of the RDP accountant: quarters on (1, 3], integers to 64, then 128 and 256.
RDP_ORDERS: tuple[float, ...] = tuple(
    [1.25, 1.5, 1.75, 2.25, 2.5, 2.75] + [float(a) for a in range(2, 65)] + [128.0, 256.0])


def gaussian_profile(epsilon: float, sensitivity: float, sigma: float) -> float:
    """δ(ε) of the Gaussian mechanism, written out with ``scipy.stats.norm`` (independent of
    :mod:`fedrepro.privacy.gaussian`)."""
    epsilon = check_positive("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    sigma = check_positive("sigma", sigma)
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))


def check_chain_link(link: int, epsilon0: float, E: int, b: int, n: int) -> CheckResult:
    """Link ``link`` ∈ {1, 2, 3} of eq. (15): expression ``link`` (``observed``) ≤ expression
    ``link + 1`` (``bound``) in :func:`fedrepro.dpfedpaq.amplification.amplification_chain`
    order [exact, union bound, log(1+x) ≤ x, 2γε₀]; rtol 1e-12 (round-off of log1p/expm1)."""
    link = check_int("link", link, 1, 3)
    chain = amp.amplification_chain(epsilon0, E, b, n)
    return make_result(chain[link - 1].value, chain[link].value, rtol=1e-12,
                       epsilon0=epsilon0, E=E, b=b, n=n, gamma=E * b / n,
                       condition=chain[link].condition)


def check_gaussian_profile(epsilon0: float, delta0: float) -> CheckResult:
    """δ(ε₀) of the Gaussian mechanism at the classical σ of eq. (13) (Δ = 1) against δ₀.

    Holds iff the classical calibration gives (ε₀, δ₀)-DP; proven for ε₀ < 1 only. The two
    implementations of the profile must agree to 1e-9 relative (``profiles_agree``)."""
    epsilon0 = check_positive("epsilon0", epsilon0)
    delta0 = check_delta(delta0, "delta0")
    sigma = math.sqrt(2 * math.log(1.25 / delta0)) / epsilon0
    mine = gaussian_profile(epsilon0, 1.0, sigma)
    library = analytic_gaussian_delta(epsilon0, 1.0, sigma)
    agree = abs(mine - library) <= 1e-9 * max(library, 1e-300) + 1e-300
    return make_result(mine, delta0, rtol=0.0, epsilon0=epsilon0, sigma=sigma,
                       profiles_agree=bool(agree), library_delta=library)


def check_per_round_epsilon(epsilon: float, gamma: float, delta: float = 1e-4) -> CheckResult:
    """Realized per-round ε of eq. (16)'s noise against the target ε (rtol 1e-9: the root
    finding of the analytic Gaussian's ε)."""
    sigma = amp.paper_noise_std(epsilon, delta, 1.0, gamma)
    realized = amp.realized_epsilon(sigma, delta, 1.0, gamma)
    cond = amp.paper_calibration_conditions(epsilon, gamma)
    return make_result(realized, epsilon, rtol=1e-9, gamma=gamma, delta=delta,
                       noise_multiplier=sigma, epsilon0=cond["epsilon0"],
                       classical_valid=cond["classical_valid"], chain_valid=cond["chain_valid"])


def training_epsilon(epsilon: float, gamma: float, M: int, N: int, K: int,
                     delta: float = 1e-4, total_delta: float = 1e-4) -> dict[str, float]:
    """What one device's records spend over K rounds with eq. (16)'s noise.

    * ``per_round``: the paper's target ε (per round, per scheduled device);
    * ``per_round_realized``: the exact ε of one round given the device is scheduled;
    * ``rounds_scheduled``: expected K·M/N;
    * ``basic``: basic composition of the per-round guarantee amplified by device sampling,
      K·log(1 + (M/N)(e^{ε_r} − 1)) with δ_total = K·(M/N)·δ (valid upper bound given the
      per-round guarantee ε_r = min(target, realized) if the calibration is valid, else the
      realized ε);
    * ``basic_scheduled`` / ``rdp_scheduled``: the same over the ⌈KM/N⌉ rounds the device
      is scheduled, without amplification by device sampling (the server draws S_k, so
      against the untrusted server of the threat model that amplification does not apply);
    * ``rdp``: the RDP accountant (:mod:`fedrepro.privacy.rdp`) for K rounds of a
      Poisson-sampled Gaussian with rate γM/N and noise multiplier σ/Δ of eq. (16), at
      ``total_delta`` [OUR CHOICE: Poisson sampling of records at the product rate stands
      for the paper's sampling of M of N devices and of γn of n records; an estimate of the
      order of magnitude, not a certificate for fixed-size sampling], with its order.
    """
    M = check_int("M", M, 1)
    N = check_int(f"N (at least M={M})", N, M)
    K = check_int("K", K, 1)
    total_delta = check_delta(total_delta, "total_delta")
    z = amp.paper_noise_std(epsilon, delta, 1.0, gamma)
    realized = amp.realized_epsilon(z, delta, 1.0, gamma)
    eps_r = realized
    per_round_dev = amp.amplified_epsilon(eps_r, M / N)
    rdp = rdp_sampled_gaussian(gamma * M / N, z, RDP_ORDERS)
    eps_rdp, order = epsilon_from_rdp(compose(rdp, K), RDP_ORDERS, total_delta, "improved")
    scheduled = math.ceil(K * M / N)
    rdp_s = rdp_sampled_gaussian(gamma, z, RDP_ORDERS)
    eps_s, order_s = epsilon_from_rdp(compose(rdp_s, scheduled), RDP_ORDERS, total_delta, "improved")
    return {"per_round": epsilon, "per_round_realized": realized, "noise_multiplier": z,
            "rounds_scheduled": K * M / N, "basic": K * per_round_dev,
            "basic_delta": K * (M / N) * delta, "rdp": float(eps_rdp), "rdp_order": float(order),
            "rdp_delta": total_delta, "basic_scheduled": scheduled * realized,
            "rdp_scheduled": float(eps_s), "rdp_scheduled_order": float(order_s)}


def realized_table(epsilons: tuple[float, ...], gammas: tuple[float, ...],
                   delta: float = 1e-4) -> np.ndarray:
    """Realized per-round ε (rows: γ, columns: target ε)."""
    return np.array([[check_per_round_epsilon(e, g, delta).observed for e in epsilons] for g in gammas])
