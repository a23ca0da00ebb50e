"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v1-grid``
(:class:`ReadingsGridConfig`), ``fedplt/reading-v1-tables`` (:class:`ReadingTablesConfig`),
their run (unit, combine) functions and the computing helpers those call. The tables, figures
and facts that read them stay in :mod:`fedrepro.chapters.fedplt.readings.experiments`, which
re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.validate import check_positive
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL

if TYPE_CHECKING:
    from fedrepro.problems.logistic import LogisticProblem


#: The library's main setting: the cost as printed (per-agent weight ``eps/N``), ``s = 1``.
MAIN: tuple[float, float] = (0.5, 1.0)


#: "An ``eps = 5`` regulariser on every ``f_i``" (the class as printed), ``s = 1``.
PRINTED_CLASS: tuple[float, float] = (5.0, 1.0)


def reading_problem(weight: float, scale: float, seed: int = 0) -> LogisticProblem:
    """The v1 problem (data seed ``seed``) with per-agent regulariser weight ``weight`` (the
    library's ``eps / N``) and feature scale ``scale``."""
    from fedrepro.problems.logistic import logistic_v1

    weight, scale = check_positive("weight", weight), check_positive("scale", scale)
    N = 10
    return logistic_v1(seed=seed, N=N, eps=weight * N, feature_scale=scale)


def _fig2_rhos() -> tuple[float, ...]:
    from fedrepro.experiments.fedplt.tuning import rho_lattice

    return rho_lattice(-24, 24)


@dataclass(frozen=True)
class ReadingsGridConfig(ExperimentConfig):
    """Fed-PLT's rate against ``rho`` (``N_e``, GD, default step, full participation) on the v1
    problem (data seed ``data_seed``) for every per-agent weight of ``weights`` and feature
    scale of ``scales``; runs stop at ``||sum_i grad f_i(xbar)||^2 <= tol`` or after ``K``
    iterations (the protocol of the tuning chapter's Fig. 2)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "reading-v1-grid"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    data_seed: int = 0
    Ne: int = 10
    weights: tuple[float, ...] = (0.5, 5.0)
    scales: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 4.0)
    rhos: tuple[float, ...] = ()
    tol: float = 1e-24
    K: int = 1000

    @classmethod
    def for_profile(cls, profile: str) -> ReadingsGridConfig:
        check_profile(profile)
        from fedrepro.experiments.fedplt.tuning import rho_lattice

        if profile == "quick":
            return cls(profile="quick", weights=(0.5, 5.0), scales=(1.0, 2.0), rhos=rho_lattice(-4, 4, 2), K=300)
        return cls(rhos=_fig2_rhos())


def _run_grid(config: ReadingsGridConfig) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.tuning import empirical_rate
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.batched import run_batched

    rhos = np.asarray(config.rhos, dtype=float)
    if rhos.size < 3:
        raise ValueError("rhos must hold at least 3 values")
    shape = (len(config.weights), len(config.scales))
    rate = np.full(shape + (rhos.size,), np.nan)
    lam, lam_bar = np.zeros(shape), np.zeros(shape)
    for a, weight in enumerate(config.weights):
        for b, scale in enumerate(config.scales):
            problem = reading_problem(weight, scale, config.data_seed)
            lam[a, b], lam_bar[a, b] = problem.lam, problem.lam_bar
            run = run_batched(FedPLT(problem, Ne=config.Ne, rho=rhos), K=config.K, tol=config.tol,
                              record=("grad_sq", "model_err"), drop_finished=True)
            rate[a, b] = [empirical_rate(e)[0] for e in run.model_err]
    best = np.nanargmin(rate, axis=2)
    return {"weights": np.asarray(config.weights), "scales": np.asarray(config.scales), "rhos": rhos,
            "rate": rate, "min_rate": np.nanmin(rate, axis=2), "argmin_rho": rhos[best],
            "lam": lam, "lam_bar": lam_bar}


def load_readings_grid(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ReadingsGridConfig` for ``profile``."""
    return load_or_run(ReadingsGridConfig.for_profile(profile), _run_grid)


@dataclass(frozen=True)
class ReadingTablesConfig(ExperimentConfig):
    """v1 Tables II and III under the reading (``weight``, ``scale``): Table II by the
    comparison chapter's protocol (``Ne``, ``tune_trials``, ``eval_trials``, seeds, ``Ks``,
    ``stop_rel``), Table III by the participation chapter's (``agents``, ``trials``,
    ``tiii_rhos``, ``K_max``, window ``[low, high]``, seed ``tiii_seed``)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "reading-v1-tables"
    verify_rtol: ClassVar[float] = 1e-2
    verify_note: ClassVar[str] = ("rates fitted over short windows, as the comparison chapter's v1 Table II "
                                  "(round-off moves them by up to 6e-4 relative between CPUs)")

    profile: str = "paper"
    weight: float = PRINTED_CLASS[0]
    scale: float = PRINTED_CLASS[1]
    data_seed: int = 0
    Ne: int = 10
    tune_trials: int = 5
    eval_trials: int = 100
    tune_seed: int = 0
    eval_seed: int = 1
    Ks: tuple[int, ...] = (300, 1200)
    stop_rel: float = 1e-28
    agents: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    trials: int = 100
    tiii_rhos: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)
    K_max: int = 2000
    low: float = 1e-12
    high: float = 1e-3
    tiii_seed: int = 7

    @classmethod
    def for_profile(cls, profile: str, weight: float = PRINTED_CLASS[0],
                    scale: float = PRINTED_CLASS[1]) -> ReadingTablesConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", weight=weight, scale=scale, tune_trials=2, eval_trials=6, Ks=(250, 1000),
                       agents=(2, 5, 10), trials=6, tiii_rhos=(0.3, 1.0), low=1e-8)
        return cls(weight=weight, scale=scale)

    def result_name(self) -> str:
        """One file per reading, e.g. ``reading-v1-tables-w5-s1``."""
        return f"{super().result_name()}-w{self.weight:g}-s{self.scale:g}".replace(".", "p")

    def table_ii_units(self) -> list[str]:
        from fedrepro.experiments.fedplt.comparison import V1RatesConfig

        return [f"tii-{solver}-{'cohort' if partial else 'full'}-{name}"
                for name, solver, partial in V1RatesConfig(Ne=self.Ne).settings()]

    def units(self) -> list[str]:
        return self.table_ii_units() + ["tiii"]


def _table_ii_unit(config: ReadingTablesConfig, problem: LogisticProblem, unit: str) -> dict[str, Any]:
    """One cell of v1 Table II: the comparison chapter's protocol (every grid point on
    ``tune_trials`` trials, the smallest rate kept; a random setting re-run on ``eval_trials``)."""
    from fedrepro.experiments.fedplt.comparison import _is_random, _rates_of_grid, rate_of_runs
    from fedrepro.fedplt.baselines import algorithm_class
    from fedrepro.fedplt.batched import run_batched, stacked_total_grad
    from fedrepro.fedplt.tuning import grid_points

    _, solver, part, name = unit.split("-", 3)
    participation = ("cohort", problem.N // 2) if part == "cohort" else None
    random = _is_random(name, participation)
    tol = config.stop_rel * float(np.sum(stacked_total_grad(problem, np.zeros((1, problem.n))) ** 2))
    points = grid_points(algorithm_class(name).tuning_grid(problem, config.Ne, solver))
    for K in config.Ks:
        rates = _rates_of_grid(name, problem, points, Ne=config.Ne, solver=solver, participation=participation,
                               trials=config.tune_trials if random else 1, K=K, tol=tol, seed=config.tune_seed)
        if np.any(np.isfinite(rates)):
            break
    else:
        return {"name": name, "solver": solver, "partial": part == "cohort", "rate": float("nan"),
                "best_params": {}, "K": config.Ks[-1]}
    best = int(np.nanargmin(rates))
    rate = float(rates[best])
    if random:
        params = {k: np.full(config.eval_trials, v) for k, v in points[best].items()}
        run = run_batched(algorithm_class(name)(problem, Ne=config.Ne, solver=solver, **params), K=K,
                          runs=config.eval_trials, tol=tol, participation=participation, seed=config.eval_seed,
                          record=("grad_sq", "model_err"), drop_finished=True)
        rate = rate_of_runs(run.model_err)
    return {"name": name, "solver": solver, "partial": part == "cohort", "rate": rate,
            "best_params": points[best], "K": K}


def _table_iii_unit(config: ReadingTablesConfig, problem: LogisticProblem) -> dict[str, Any]:
    """v1 Table III: the participation chapter's protocol (``rho`` tuned by the
    full-participation rate; the Monte Carlo geometric mean of ``||x_k - 1 (x) x*||`` fitted)."""
    from fedrepro.experiments.fedplt.common import fit_rate
    from fedrepro.experiments.fedplt.participation import state_errors, tuned_rho_by_rate
    from fedrepro.fedplt.baselines.fedplt import FedPLT

    rho, grid = tuned_rho_by_rate(problem, config.Ne, config.tiii_rhos, low=config.low, high=config.high)
    rate = np.full(len(config.agents), np.nan)
    for i, c in enumerate(config.agents):
        full = c == problem.N
        traj = state_errors(FedPLT(problem, Ne=config.Ne, rho=rho), K=config.K_max,
                            runs=1 if full else config.trials, participation=None if full else ("cohort", c),
                            seed=config.tiii_seed * 1000 + c, stop_below=0.1 * config.low)
        rate[i] = fit_rate(np.exp(np.log(traj.x_err).mean(axis=0)), config.low, config.high)
    return {"agents": np.asarray(config.agents), "rho": rho, "tuning_rates": grid["rates"], "rate": rate}


def _run_tables_unit(config: ReadingTablesConfig, unit: str) -> dict[str, Any]:
    problem = reading_problem(config.weight, config.scale, config.data_seed)
    if unit == "tiii":
        return _table_iii_unit(config, problem)
    return _table_ii_unit(config, problem, unit)


def load_reading_tables(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                        scale: float = PRINTED_CLASS[1]) -> dict[str, Any]:
    """The stored result of :class:`ReadingTablesConfig` (``{"units": {unit: result}}``)."""
    config = ReadingTablesConfig.for_profile(profile, weight, scale)
    return run_units(config, config.units(), _run_tables_unit)
