"""The DP-FedPAQ mechanism claims of the chapter "Privacy accounting" as one cached experiment.

DP-FedPAQ (Mohammadi et al., §II-C) claims, as checks (``data/paper/claims/dpfedpaq.yaml``):

* C03 — the classical calibration (eq. 13) gives (ε, δ)-DP: exact privacy profile at the
  classical σ (:func:`classical_calibration_check`);
* C04 — subsampling improves the guarantee; C05 — the amplification statement before
  eq. (15) (:func:`subsampling_check`, :func:`amplification_check`), on the tight instance
  of :mod:`fedrepro.privacy.subsampled`;
* C06 — each link of the chain (15) (:func:`chain_grid_check`, vectorised over a grid);
* C07 — the per-round guarantee of the reduced noise (16) (:func:`per_round_check`);
* C33 — σ of eq. (16) decreases in ε and δ (:func:`noise_monotonicity_check`).

:class:`MechanismClaimsConfig` is stored as ``data/results/privacy/dpfedpaq-mechanism-claims.json``
(read it with :func:`load`); the ALI-DPFL claims and the views are in
:mod:`fedrepro.chapters.privacy_accounting.claims`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import amplification
from fedrepro.privacy import gaussian, subsampled
from fedrepro.privacy.validate import check_delta, check_positive, check_sampling_rate

__all__ = [
    "MechanismClaimsConfig",
    "amplification_check",
    "chain_grid_check",
    "classical_calibration_check",
    "load",
    "noise_monotonicity_check",
    "per_round_check",
    "run_mechanism_claims",
    "subsampling_check",
]



def classical_calibration_check(epsilons: Sequence[float], deltas: Sequence[float]) -> dict[str, Any]:
    """C03: δ_exact(ε; σ_classical)/δ for σ of eq. (13) on the grid ``deltas × epsilons``.

    δ_exact is the analytic Gaussian mechanism's profile (Balle & Wang 2018, Thm 8); a ratio
    ≤ 1 means the classical σ gives (ε, δ)-DP. Also returns, per δ, the ε from which the
    classical σ stops being valid (:func:`gaussian.classical_calibration_failure_epsilon`).
    """
    eps = [check_positive("epsilons", e) for e in epsilons]
    dels = [check_delta(d, "deltas") for d in deltas]
    ratio = np.array([[math.exp(gaussian.analytic_gaussian_log_delta(
        e, 1.0, gaussian.classical_gaussian_sigma(e, d, 1.0)) - math.log(d)) for e in eps] for d in dels])
    failure = np.array([gaussian.classical_calibration_failure_epsilon(d) for d in dels])
    return {"ratio": ratio, "failure_epsilon": failure}


def subsampling_check(noise_multipliers: Sequence[float], probabilities: Sequence[float],
                      delta: float) -> dict[str, Any]:
    """C04: exact ε at ``delta`` of the Gaussian mechanism (σ = noise multiplier × Δ) run on
    a p-subsample, against p = 1 (rows: noise multipliers, columns: probabilities)."""
    delta = check_delta(delta)
    sig = [check_positive("noise_multipliers", s) for s in noise_multipliers]
    probs = [check_sampling_rate(p, "probabilities") for p in probabilities]
    sub = np.array([[subsampled.subsampled_gaussian_epsilon(delta, p, 1.0, s) for p in probs] for s in sig])
    full = np.array([subsampled.subsampled_gaussian_epsilon(delta, 1.0, 1.0, s) for s in sig])
    return {"epsilon": sub, "epsilon_full": full}


def amplification_check(n: int, batch_sizes: Sequence[int], local_steps: Sequence[int],
                        base_epsilons: Sequence[float], base_delta: float) -> dict[str, Any]:
    """C05: the amplification statement before eq. (15) on the tight instance.

    For each (b, E, ε₀) the Gaussian mechanism is calibrated to be exactly (ε₀, δ₀)-DP
    (analytic σ), run on the subsample, and its exact ε' at δ' = γδ₀ (γ = Eb/n) compared
    with the paper's bound: log(1 + (1 − (1 − b/n)^E)(e^{ε₀} − 1)) when the E batches are
    drawn independently (inclusion probability 1 − (1 − b/n)^E), log(1 + γ(e^{ε₀} − 1)) when
    they are disjoint parts of one subset of Eb records (Algorithm 2; probability γ).
    Arrays have shape (len(batch_sizes), len(local_steps), len(base_epsilons)).
    """
    base_delta = check_delta(base_delta, "base_delta")
    shape = (len(batch_sizes), len(local_steps), len(base_epsilons))
    out = {k: np.zeros(shape) for k in ("exact_independent", "bound_independent",
                                        "exact_disjoint", "bound_disjoint", "gamma")}
    for i, b in enumerate(batch_sizes):
        for j, E in enumerate(local_steps):
            p_ind = amplification.inclusion_probability(E, b, n)
            gamma = E * b / n
            if gamma > 1:
                raise ValueError(f"local_steps·batch_sizes must not exceed n={n}, got E={E}, b={b}")
            for k, eps0 in enumerate(base_epsilons):
                sigma = gaussian.analytic_gaussian_sigma(eps0, base_delta, 1.0)
                target = gamma * base_delta
                out["gamma"][i, j, k] = gamma
                out["exact_independent"][i, j, k] = subsampled.subsampled_gaussian_epsilon(target, p_ind, 1.0, sigma)
                out["bound_independent"][i, j, k] = amplification.amplified_epsilon(eps0, p_ind)
                out["exact_disjoint"][i, j, k] = subsampled.subsampled_gaussian_epsilon(target, gamma, 1.0, sigma)
                out["bound_disjoint"][i, j, k] = amplification.amplified_epsilon(eps0, gamma)
    return out


def chain_grid_check(ratios: np.ndarray, steps: np.ndarray, epsilon0: np.ndarray) -> dict[str, Any]:
    """C06: every link of eq. (15) on the grid b/n × E × ε₀ (vectorised).

    Links: (1) 1 − (1 − b/n)^E ≤ γ = E·b/n; (2) log(1 + γx) ≤ γx with x = e^{ε₀} − 1;
    (3) γ(e^{ε₀} − 1) ≤ 2γε₀. Returns the number of grid points, the failures of each link,
    and for link 3 the largest ε₀ where it holds and the smallest where it fails.
    A relative slack of 1e-12 absorbs round-off in links 1–2 (they hold exactly).
    """
    r = np.asarray(ratios, dtype=float)[:, None, None]
    E = np.asarray(steps, dtype=float)[None, :, None]
    e0 = np.asarray(epsilon0, dtype=float)[None, None, :]
    if np.any(r <= 0) or np.any(r >= 1):
        raise ValueError("ratios (b/n) must be in (0, 1)")
    if np.any(E < 1):
        raise ValueError("steps (E) must be >= 1")
    if np.any(e0 <= 0):
        raise ValueError("epsilon0 must be in (0, inf)")
    gamma = E * r
    incl = -np.expm1(E * np.log1p(-r))
    x = gamma * np.expm1(e0)
    link1 = np.broadcast_to(incl <= gamma * (1 + 1e-12), x.shape)
    link2 = np.log1p(x) <= x * (1 + 1e-12)
    link3 = x <= 2 * gamma * e0
    eps_grid = np.broadcast_to(e0, x.shape)
    return {
        "n_points": int(x.size),
        "failures": np.array([int(np.sum(~link1)), int(np.sum(~link2)), int(np.sum(~link3))]),
        "link3_max_holding_epsilon0": float(np.max(eps_grid[link3])) if link3.any() else math.nan,
        "link3_min_failing_epsilon0": float(np.min(eps_grid[~link3])) if (~link3).any() else math.nan,
        "link3_fails_iff_above_threshold": bool(np.all(link3 == (eps_grid <= amplification.CHAIN_THRESHOLD))),
    }


def per_round_check(target_epsilons: Sequence[float], gammas: Sequence[float], delta: float,
                    rounds: int, discretization: float) -> dict[str, Any]:
    """C07: the per-round ε that eq. (16)'s noise actually gives, and its composition.

    For each γ (rows) and target ε (columns): σ of eq. (16), the exact ε at δ of one
    device's release in one round on the tight instance (subset of γn records without
    replacement, inclusion probability γ), and the ε after ``rounds`` such releases (PLD
    accountant). Also, per γ, the smallest target ε at which the release exceeds its target
    (:func:`amplification.paper_calibration_failure_epsilon`) and ε₀ = ε/(2γ) at that point.
    """
    delta = check_delta(delta)
    sigma = np.array([[amplification.paper_noise_std(e, delta, 1.0, g) for e in target_epsilons]
                      for g in gammas])
    exact = np.array([[subsampled.subsampled_gaussian_epsilon(delta, g, 1.0, s) for s in row]
                      for g, row in zip(gammas, sigma, strict=False)])
    composed = np.array([[subsampled.composed_epsilon(delta, g, 1.0, s, rounds, discretization) for s in row]
                         for g, row in zip(gammas, sigma, strict=False)])
    failure = np.array([amplification.paper_calibration_failure_epsilon(delta, g) for g in gammas])
    return {"sigma": sigma, "exact": exact, "composed": composed, "failure_epsilon": failure,
            "failure_epsilon0": failure / (2 * np.asarray(gammas, dtype=float))}


def noise_monotonicity_check(epsilons: np.ndarray, deltas: np.ndarray, gammas: Sequence[float]) -> dict[str, Any]:
    """C33: σ of eq. (16) on the grid γ × ε × δ and whether it strictly decreases along ε
    (axis 1) and along δ (axis 2) everywhere (requires δ < γ, i.e. δ/γ < 1)."""
    sigma = np.array([[[amplification.paper_noise_std(e, d, 1.0, g) for d in deltas] for e in epsilons]
                      for g in gammas])
    return {
        "sigma": sigma,
        "decreasing_in_epsilon": bool(np.all(np.diff(sigma, axis=1) < 0)),
        "decreasing_in_delta": bool(np.all(np.diff(sigma, axis=2) < 0)),
    }


@dataclasses.dataclass(frozen=True)
class MechanismClaimsConfig(ExperimentConfig):
    """Grids of the DP-FedPAQ mechanism claims C03–C07 and C33 (the checks of the claims file).

    C07 composes over ``rounds`` = K·M/N = 100·10/100 releases, the expected number of
    rounds in which a device is scheduled in the paper's runs (§IV: N = 100, M = 10, K = 100).
    """

    part = "privacy"
    experiment = "dpfedpaq-mechanism-claims"

    profile: str = "paper"
    classical_epsilons: tuple[float, ...] = (0.1, 0.5, 0.9)
    classical_deltas: tuple[float, ...] = (1e-5, 1e-4, 1e-3)
    noise_multipliers: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0)
    sampling_probabilities: tuple[float, ...] = (0.05, 0.2, 0.5)
    subsampling_delta: float = 1e-4
    n_records: int = 600
    batch_sizes: tuple[int, ...] = (1, 6, 12)
    local_steps: tuple[int, ...] = (1, 10)
    base_epsilons: tuple[float, ...] = (0.1, 0.5, 1.0, 2.5)
    base_delta: float = 1e-3
    chain_max_ratio: float = 0.2
    chain_max_steps: int = 50
    chain_max_epsilon0: float = 5.0
    target_epsilons: tuple[float, ...] = (0.1, 0.5, 1.0, 1.5, 2.0)
    gammas: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)
    fedpaq_delta: float = 1e-4
    rounds: int = 10
    monotone_epsilon_range: tuple[float, float] = (0.05, 5.0)
    monotone_delta_range: tuple[float, float] = (1e-6, 1e-2)
    monotone_gammas: tuple[float, ...] = (0.2, 0.8)

    @property
    def grid_points(self) -> int:
        return 100 if self.profile == "paper" else 20

    @property
    def pld_discretization(self) -> float:
        return 1e-4 if self.profile == "paper" else 1e-3


def run_mechanism_claims(cfg: MechanismClaimsConfig) -> dict[str, Any]:
    """Every DP-FedPAQ mechanism check, keyed by claim (``c03_…``, ``c04_…``, …)."""
    check_profile(cfg.profile)
    n = cfg.grid_points
    out: dict[str, Any] = {}
    parts = {
        "c03": classical_calibration_check(cfg.classical_epsilons, cfg.classical_deltas),
        "c04": subsampling_check(cfg.noise_multipliers, cfg.sampling_probabilities, cfg.subsampling_delta),
        "c05": amplification_check(cfg.n_records, cfg.batch_sizes, cfg.local_steps, cfg.base_epsilons,
                                   cfg.base_delta),
        "c06": chain_grid_check(np.linspace(cfg.chain_max_ratio / n, cfg.chain_max_ratio, n),
                                np.arange(1, cfg.chain_max_steps + 1),
                                np.linspace(cfg.chain_max_epsilon0 / (2 * n), cfg.chain_max_epsilon0, 2 * n)),
        "c07": per_round_check(cfg.target_epsilons, cfg.gammas, cfg.fedpaq_delta, cfg.rounds,
                               cfg.pld_discretization),
    }
    mono = noise_monotonicity_check(np.geomspace(*cfg.monotone_epsilon_range, n // 2),
                                    np.geomspace(*cfg.monotone_delta_range, n // 2), cfg.monotone_gammas)
    mono.pop("sigma")
    parts["c33"] = mono
    for claim, values in parts.items():
        for key, value in values.items():
            out[f"{claim}_{key}"] = value
    return out


def load(config: MechanismClaimsConfig | None = None) -> dict[str, Any]:
    """The stored result of ``config`` (default: profile "paper"), computed if missing or stale."""
    config = MechanismClaimsConfig() if config is None else config
    if not isinstance(config, MechanismClaimsConfig):
        raise ValueError(f"config must be a MechanismClaimsConfig, got {type(config).__name__}")
    return load_or_run(config, run_mechanism_claims)
