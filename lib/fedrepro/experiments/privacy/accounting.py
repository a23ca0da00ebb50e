"""Runs of the chapter "Privacy accounting" (``book/privacy-accounting.ipynb``) as cached experiments.

Each experiment is a frozen config (``part = "privacy"``, a ``profile`` field) and a
``run_*`` function returning a plain dict; :func:`load` stores and reloads results through
:func:`fedrepro.core.cache.load_or_run`. Profile ``quick`` only thins the grids (every
experiment here takes seconds even at profile ``paper``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedrepro.alidpfl.setting import PAPER as ALIDPFL
from fedrepro.core import rng
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import amplification
from fedrepro.fedplt import privacy_bounds as fedplt
from fedrepro.privacy import budget, conversion, gaussian, rdp

__all__ = [
    "CalibrationConfig",
    "EpsilonCurveConfig",
    "IterationCountsConfig",
    "Lemma5CheckConfig",
    "Proposition4Config",
    "load",
    "run_calibration",
    "run_epsilon_curve",
    "run_iteration_counts",
    "run_lemma5_check",
    "run_proposition4",
]


#: Budgets of ALI-DPFL §VI (the ε of each quoted iteration count), an input of the search.
ALIDPFL_EPSILONS: tuple[float, ...] = (1.55, 1.65, 1.75, 1.85, 2.0, 2.25, 2.5, 2.75, 3.25, 3.75)


def _orders(name: str) -> tuple[int, ...]:
    if name == "paper":
        return rdp.ALIDPFL_PAPER_ORDERS
    if name == "code":
        return rdp.ALIDPFL_CODE_ORDERS
    raise ValueError(f"orders must be 'paper' (2..64) or 'code' (2..63, 128, 256, 512), got {name!r}")


# --------------------------------------------------------------------------- ALI-DPFL counts


@dataclasses.dataclass(frozen=True)
class IterationCountsConfig(ExperimentConfig):
    """Steps allowed by each budget ε in ALI-DPFL's setting (§VI; σ = 1.1, δ = 1e-5)."""

    part = "privacy"
    experiment = "alidpfl-iteration-counts"

    profile: str = "paper"
    q: float = ALIDPFL.q
    sigma: float = ALIDPFL.sigma
    delta: float = ALIDPFL.delta
    epsilons: tuple[float, ...] = ALIDPFL_EPSILONS
    steps_max: float = 100_000.0
    tolerance: float = 0.01


def run_iteration_counts(cfg: IterationCountsConfig) -> dict[str, Any]:
    """Bisection (the code's search) and exact counts, both conversions and order sets."""
    check_profile(cfg.profile)
    out: dict[str, Any] = {"epsilon": np.array(cfg.epsilons, dtype=float)}
    variants = {
        "bisection_basic_paper": ("bisection", "basic", "paper"),
        "bisection_basic_code": ("bisection", "basic", "code"),
        "exact_basic_paper": ("exact", "basic", "paper"),
        "bisection_improved_code": ("bisection", "improved", "code"),
        "exact_improved_code": ("exact", "improved", "code"),
    }
    for key, (search, conv, orders_name) in variants.items():
        orders = _orders(orders_name)
        counts = []
        for eps in cfg.epsilons:
            if search == "bisection":
                counts.append(budget.max_steps_bisection(eps, cfg.q, cfg.sigma, cfg.delta, orders, conv,
                                                         cfg.steps_max, cfg.tolerance))
            else:
                counts.append(budget.max_steps_exact(eps, cfg.q, cfg.sigma, cfg.delta, orders, conv))
        counts_arr = np.array(counts, dtype=np.int64)
        eps_at, alpha_at = budget.epsilon_after_steps(counts_arr.astype(float), cfg.q, cfg.sigma,
                                                      cfg.delta, orders, conv)
        out[key] = counts_arr
        out[f"{key}_epsilon"] = np.asarray(eps_at)
        out[f"{key}_order"] = np.asarray(alpha_at)
    return out


# --------------------------------------------------------------------------- ε vs steps


@dataclasses.dataclass(frozen=True)
class EpsilonCurveConfig(ExperimentConfig):
    """ε after T steps in ALI-DPFL's setting: basic and improved RDP conversions and the
    privacy-loss-distribution (PLD) accountant of dp-accounting as the tight reference."""

    part = "privacy"
    experiment = "alidpfl-epsilon-curve"
    verify_rtol = 1e-7
    verify_note = ("the PLD column is dp-accounting's FFT-based privacy-loss-distribution accountant, "
                   "whose result moves by up to 7e-10 relative between machines")

    profile: str = "paper"
    q: float = ALIDPFL.q
    sigma: float = ALIDPFL.sigma
    delta: float = ALIDPFL.delta
    steps_max: int = 2000

    @property
    def n_points(self) -> int:
        return 200 if self.profile == "paper" else 40

    @property
    def n_pld_points(self) -> int:
        return 16 if self.profile == "paper" else 5

    @property
    def pld_discretization(self) -> float:
        return 1e-4 if self.profile == "paper" else 1e-3


def pld_epsilon(q: float, sigma: float, steps: int, delta: float, discretization: float) -> float:
    """ε of dp-accounting's PLD accountant (Poisson-sampled Gaussian, add/remove neighbours).

    A numerical, nearly tight accountant (pessimistic discretisation): the reference below
    which no RDP conversion can go.
    """
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(value_discretization_interval=discretization)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    accountant.compose(event, int(steps))
    return float(accountant.get_epsilon(delta))


def run_epsilon_curve(cfg: EpsilonCurveConfig) -> dict[str, Any]:
    """ε(T) for T on a grid, per conversion and order set, and PLD ε on a coarser grid."""
    check_profile(cfg.profile)
    steps = np.unique(np.geomspace(1, cfg.steps_max, cfg.n_points).round()).astype(float)
    out: dict[str, Any] = {"steps": steps}
    for conv in conversion.CONVERSIONS:
        for orders_name in ("paper", "code"):
            eps, alpha = budget.epsilon_after_steps(steps, cfg.q, cfg.sigma, cfg.delta,
                                                    _orders(orders_name), conv)
            out[f"{conv}_{orders_name}"] = np.asarray(eps)
            out[f"{conv}_{orders_name}_order"] = np.asarray(alpha)
    pld_steps = np.unique(np.geomspace(10, cfg.steps_max, cfg.n_pld_points).round()).astype(np.int64)
    out["pld_steps"] = pld_steps
    out["pld"] = np.array([pld_epsilon(cfg.q, cfg.sigma, int(t), cfg.delta, cfg.pld_discretization)
                           for t in pld_steps])
    return out


# --------------------------------------------------------------------------- DP-FedPAQ calibration


@dataclasses.dataclass(frozen=True)
class CalibrationConfig(ExperimentConfig):
    """DP-FedPAQ's Gaussian calibration (eqs. 13, 15, 16) against the analytic Gaussian
    mechanism (Balle & Wang 2018)."""

    part = "privacy"
    experiment = "dpfedpaq-calibration"

    profile: str = "paper"
    deltas: tuple[float, ...] = (1e-5, 1e-4)
    epsilon_min: float = 0.05
    epsilon_max: float = 12.0
    fedpaq_delta: float = 1e-4  # the paper's δ (§IV)
    gammas: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)  # E·b/n of the paper's Fig. 4 sweep
    table_epsilons: tuple[float, ...] = (0.1, 0.5, 1.0, 1.5, 2.0)

    @property
    def n_points(self) -> int:
        return 240 if self.profile == "paper" else 40


def run_calibration(cfg: CalibrationConfig) -> dict[str, Any]:
    """σ ratios classical/analytic, the ε where eq. (13) and eq. (16) fail, realized ε."""
    check_profile(cfg.profile)
    eps = np.geomspace(cfg.epsilon_min, cfg.epsilon_max, cfg.n_points)
    out: dict[str, Any] = {"epsilon": eps, "deltas": np.array(cfg.deltas),
                           "gammas": np.array(cfg.gammas),
                           "table_epsilons": np.array(cfg.table_epsilons)}
    out["plain_ratio"] = np.array([[gaussian.classical_gaussian_sigma(e, d, 1.0)
                                    / gaussian.analytic_gaussian_sigma(e, d, 1.0) for e in eps]
                                   for d in cfg.deltas])
    out["plain_failure_epsilon"] = np.array([gaussian.classical_calibration_failure_epsilon(d)
                                             for d in cfg.deltas])
    d = cfg.fedpaq_delta
    out["fedpaq_ratio"] = np.array([[amplification.paper_noise_std(e, d, 1.0, g)
                                     / amplification.exact_noise_std(e, d, 1.0, g) for e in eps]
                                    for g in cfg.gammas])
    out["fedpaq_failure_epsilon"] = np.array([amplification.paper_calibration_failure_epsilon(d, g)
                                              for g in cfg.gammas])
    out["fedpaq_paper_sigma"] = np.array([[amplification.paper_noise_std(e, d, 1.0, g)
                                           for e in cfg.table_epsilons] for g in cfg.gammas])
    out["fedpaq_exact_sigma"] = np.array([[amplification.exact_noise_std(e, d, 1.0, g)
                                           for e in cfg.table_epsilons] for g in cfg.gammas])
    out["fedpaq_realized"] = np.array([[amplification.realized_epsilon(s, d, 1.0, g)
                                        for s in row] for g, row in zip(cfg.gammas, out["fedpaq_paper_sigma"], strict=False)])
    out["chain_threshold"] = amplification.CHAIN_THRESHOLD
    return out


# --------------------------------------------------------------------------- Fed-PLT


@dataclasses.dataclass(frozen=True)
class Proposition4Config(ExperimentConfig):
    """Fed-PLT's privacy bound (Proposition 4 with Lemma 5) as a function of K and Ne.

    q and λ follow the paper's logistic-regression setting (q_i = 250 points per agent,
    regulariser weight 0.5, so λ ≥ 0.5); L = 1 (per-sample gradients clipped to norm 1/2),
    γ = 0.1 and the noise levels τ are illustrative choices.
    """

    part = "privacy"
    experiment = "fedplt-proposition4"

    profile: str = "paper"
    L: float = 1.0
    lam: float = 0.5
    tau: float = 0.1
    taus: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    q: int = 250
    gamma: float = 0.1
    delta: float = 1e-5
    Ne_values: tuple[int, ...] = (1, 2, 5, 10)
    K_values: tuple[int, ...] = (5, 20, 100)
    K_max: int = 200
    Ne_max: int = 50


def run_proposition4(cfg: Proposition4Config) -> dict[str, Any]:
    """ADP ε (optimal order) vs K per Ne, vs Ne per K, and the ceiling per τ."""
    check_profile(cfg.profile)
    step = 1 if cfg.profile == "paper" else 10
    K = np.arange(0, cfg.K_max + 1, step)
    Ne = np.arange(1, cfg.Ne_max + 1, 1 if cfg.profile == "paper" else 7)
    args = (cfg.L, cfg.lam, cfg.tau, cfg.q, cfg.gamma)

    def adp(k: int, ne: int, tau: float = cfg.tau) -> float:
        return fedplt.proposition4_adp_epsilon(cfg.L, cfg.lam, tau, cfg.q, cfg.gamma, int(k), int(ne),
                                               cfg.delta)[0]

    ceiling_rdp = [fedplt.proposition4_limit(2.0, cfg.L, cfg.lam, t, cfg.q) / 2.0 for t in cfg.taus]
    log_inv_delta = float(np.log(1 / cfg.delta))
    return {
        "K": K,
        "Ne": Ne,
        "eps_vs_K": np.array([[adp(k, ne) for k in K] for ne in cfg.Ne_values]),
        "eps_vs_Ne": np.array([[adp(k, ne) for ne in Ne] for k in cfg.K_values]),
        "rdp2_vs_K": np.array([[fedplt.proposition4_rdp_bound(2.0, *args, int(k), ne) for k in K]
                               for ne in cfg.Ne_values]),
        "ceiling": float(adp(10**9, 1)),
        "taus": np.array(cfg.taus),
        "ceiling_per_tau": np.array([c + 2 * np.sqrt(c * log_inv_delta) for c in ceiling_rdp]),
    }


# --------------------------------------------------------------------------- Lemma 5 check


@dataclasses.dataclass(frozen=True)
class Lemma5CheckConfig(ExperimentConfig):
    """Lemma 5 (RDP → ADP) on the Gaussian mechanism against its exact privacy profile.

    Random draws of α, σ/Δ and δ; for each, ε = Lemma 5(αΔ²/(2σ²), α, δ) and the exact
    δ(ε) of the analytic Gaussian mechanism, which must not exceed δ.
    """

    part = "privacy"
    experiment = "fedplt-lemma5-check"

    profile: str = "paper"
    alpha_range: tuple[float, float] = (1.05, 256.0)
    noise_range: tuple[float, float] = (0.1, 30.0)  # σ/Δ
    log10_delta_range: tuple[float, float] = (-12.0, -1.0)

    @property
    def n_draws(self) -> int:
        return 20_000 if self.profile == "paper" else 2_000


def run_lemma5_check(cfg: Lemma5CheckConfig) -> dict[str, Any]:
    """Ratios δ_exact(ε_Lemma5)/δ over seeded random draws (log-uniform α − 1, σ, δ)."""
    check_profile(cfg.profile)
    gen = rng.generator(cfg, "draws")
    n = cfg.n_draws
    alpha = 1 + np.exp(gen.uniform(np.log(cfg.alpha_range[0] - 1), np.log(cfg.alpha_range[1] - 1), n))
    noise = np.exp(gen.uniform(np.log(cfg.noise_range[0]), np.log(cfg.noise_range[1]), n))
    delta = 10.0 ** gen.uniform(*cfg.log10_delta_range, n)
    # the check itself is Fed-PLT's (one definition, in fedrepro.fedplt.checks); here it runs
    # on many more draws than the theory chapter's search
    from fedrepro.fedplt.checks.privacy import Lemma5Instance, check_lemma5

    log_ratio = np.array([check_lemma5(Lemma5Instance(a, 1.0, s, d)).details["log_ratio"]
                          for a, s, d in zip(alpha, noise, delta, strict=False)])
    worst = int(np.argmax(log_ratio))
    return {
        "n_draws": n,
        "max_ratio": float(np.exp(log_ratio[worst])),
        "violations": int(np.sum(log_ratio > 0)),
        "worst_alpha": float(alpha[worst]),
        "worst_noise": float(noise[worst]),
        "worst_delta": float(delta[worst]),
        "median_log10_ratio": float(np.median(log_ratio) / np.log(10)),
    }


# --------------------------------------------------------------------------- loading

_RUNNERS: dict[type, Callable[[Any], Mapping[str, Any]]] = {
    IterationCountsConfig: run_iteration_counts,
    EpsilonCurveConfig: run_epsilon_curve,
    CalibrationConfig: run_calibration,
    Proposition4Config: run_proposition4,
    Lemma5CheckConfig: run_lemma5_check,
}


def load(config: ExperimentConfig) -> dict[str, Any]:
    """The stored result of ``config`` (computed and stored if missing or stale)."""
    try:
        runner = _RUNNERS[type(config)]
    except KeyError:
        raise ValueError(f"config must be one of {[c.__name__ for c in _RUNNERS]}, "
                         f"got {type(config).__name__}") from None
    return load_or_run(config, runner)
