"""Privacy-mechanism claims of DP-FedPAQ and ALI-DPFL that need no training run.

DP-FedPAQ (Mohammadi et al., §II-C) claims, as checks (``data/paper/claims/dpfedpaq.yaml``):

* C03 — the classical calibration (eq. 13) gives (ε, δ)-DP: exact privacy profile at the
  classical σ (:func:`classical_calibration_check`);
* C04 — subsampling improves the guarantee; C05 — the amplification statement before
  eq. (15) (:func:`subsampling_check`, :func:`amplification_check`), on the tight instance
  of :mod:`fedrepro.privacy.subsampled`;
* C06 — each link of the chain (15) (:func:`chain_grid_check`, vectorised over a grid);
* C07 — the per-round guarantee of the reduced noise (16) (:func:`per_round_check`);
* C33 — σ of eq. (16) decreases in ε and δ (:func:`noise_monotonicity_check`).

ALI-DPFL (Ling et al., §V–VI):

* C18 — the iteration list against the experimental design R_s = n·R_c
  (:func:`design_iterations`, :func:`design_gaps`);
* eqs. (14) and (18) as printed, without log and read literally
  (:func:`printed_theorem3_epsilon`).

The DP-FedPAQ computations are one cached experiment, :class:`MechanismClaimsConfig`
(stored as ``data/results/privacy/dpfedpaq-mechanism-claims.json``; read it with
:func:`load`), run by :mod:`fedrepro.experiments.privacy.mechanism_claims`; their names stay
importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy.special import gammaln, logsumexp

from fedrepro.experiments.privacy.mechanism_claims import (  # noqa: F401
    MechanismClaimsConfig,
    amplification_check,
    chain_grid_check,
    classical_calibration_check,
    load,
    noise_monotonicity_check,
    per_round_check,
    run_mechanism_claims,
    subsampling_check,
)
from fedrepro.privacy.rdp import ALIDPFL_PAPER_ORDERS
from fedrepro.privacy.validate import check_delta, check_orders, check_positive, check_sampling_rate

__all__ = [
    "ALIDPFL_DESIGN_RATIOS",
    "ALIDPFL_DESIGN_SERVER_ROUNDS",
    "MechanismClaimsConfig",
    "amplification_check",
    "chain_grid_check",
    "classical_calibration_check",
    "design_gaps",
    "design_iterations",
    "load",
    "noise_monotonicity_check",
    "per_round_check",
    "printed_theorem3_epsilon",
    "run_mechanism_claims",
    "subsampling_check",
]

#: ALI-DPFL §VI-B: R_s ∈ {158, 231, 317} rounds of the server, and the four ratios
#: R_s = n·R_c with n ∈ {1, 2, 1/2, 1/5}.
ALIDPFL_DESIGN_SERVER_ROUNDS: tuple[int, ...] = (158, 231, 317)
ALIDPFL_DESIGN_RATIOS: tuple[float, ...] = (1.0, 2.0, 0.5, 0.2)


# --------------------------------------------------------------------------- ALI-DPFL


def design_iterations(server_rounds: Iterable[float] = ALIDPFL_DESIGN_SERVER_ROUNDS,
                      ratios: Iterable[float] = ALIDPFL_DESIGN_RATIOS) -> np.ndarray:
    """C18: the iteration counts R_c = R_s/n the design of §VI-B needs (sorted, unique)."""
    rs = np.asarray(list(server_rounds), dtype=float)
    n = np.asarray(list(ratios), dtype=float)
    if rs.size == 0 or n.size == 0 or np.any(rs <= 0) or np.any(n <= 0):
        raise ValueError("server_rounds and ratios must be non-empty and positive")
    return np.unique((rs[:, None] / n[None, :]).ravel())


def design_gaps(counts: Iterable[float], design: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """For each count, the relative gap |count/d − 1| to the nearest design point d (and d)."""
    c = np.asarray(list(counts), dtype=float)
    d = np.asarray(list(design), dtype=float)
    if c.size == 0 or d.size == 0 or np.any(d <= 0):
        raise ValueError("counts and design must be non-empty, design positive")
    gaps = np.abs(c[:, None] / d[None, :] - 1)
    idx = np.argmin(gaps, axis=1)
    return gaps[np.arange(c.size), idx], d[idx]


def printed_theorem3_epsilon(steps: int, q: float, sigma: float, delta: float,
                             orders: Iterable[float] = ALIDPFL_PAPER_ORDERS) -> tuple[float, float]:
    """ALI-DPFL eq. (14) (with eq. 18) evaluated as printed, and its best order.

    The printed expression is Σ_{t=0}^{T} (1/(α−1)) A_α + log(1/δ)/(α−1) with
    A_α = Σ_k C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²)) (eq. 17): the logarithm of A_α is
    missing and the sum over t has T + 1 terms. The misprinted indices (C(α,i) in eq. 14,
    (1−q)^{α−i} in eq. 18, i being the client) are read as k, and the order is chosen as the
    one minimising ε, as §V's text says. The correct accountant is
    :func:`fedrepro.privacy.budget.epsilon_after_steps`.
    """
    if isinstance(steps, bool) or int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    q = check_sampling_rate(q)
    sigma = check_positive("sigma", sigma)
    delta = check_delta(delta)
    orders_arr = check_orders(orders)
    if not np.all(orders_arr == np.round(orders_arr)):
        raise ValueError("orders must be integers >= 2 for eq. (14)")
    log_a = []
    for alpha in orders_arr.astype(int):
        k = np.arange(alpha + 1, dtype=float)
        log_terms = (gammaln(alpha + 1.0) - gammaln(k + 1) - gammaln(alpha - k + 1)
                     + (alpha - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * sigma**2)) if q < 1 \
            else np.where(k == alpha, (k * k - k) / (2 * sigma**2), -np.inf)
        log_a.append(float(logsumexp(log_terms)))
    with np.errstate(over="ignore"):
        eps = np.exp(math.log(steps + 1) + np.array(log_a) - np.log(orders_arr - 1)) \
            + math.log(1 / delta) / (orders_arr - 1)
    best = int(np.argmin(eps))
    return float(eps[best]), float(orders_arr[best])
