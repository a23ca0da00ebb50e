"""Runs of the Fed-PLT readings: the stored result ``fedplt/reading-v2-decade-grid``
(:class:`DecadeGridConfig`), the reading "the paper tuned on a grid of powers of ten".

The reading, stated before it ran
---------------------------------
v2 §VII-A says only that the baselines' parameters "are tuned to achieve the best performance
possible"; the one tuning grid the paper prints is Table VIII's, the penalty of Fed-PLT at
``rho = 0.1, 1, 10``: one value per decade. The reading therefore tunes every algorithm of
v2 Tables II-IV on the powers of ten of each tuned parameter, in the unit our own grid gives it
(:data:`UNITS`: ``1/lam_bar`` for a step bounded by ``2/lam_bar``, ``1/N_e`` for LED's
``beta``, ``-lam`` for the weakly convex 5GCS ``tau``, 1 otherwise), within the range our grid
spans (:func:`decades`): e.g. Fed-PLT's ``rho`` in ``{0.01, 0.1, 1, 10, 100}``, FedLin's step
in ``{0.1, 1} x 2/lam_bar``. Nothing of the paper's counts enters the grid. The tuned point is
the one with the smallest mean ``K*`` over the comparison's tuning trials (all of them
reaching the tolerance within the last cap), then evaluated as the comparison evaluates its
own choice (:func:`~fedrepro.experiments.fedplt.comparison.evaluate`). The views that read it
live in :mod:`fedrepro.chapters.fedplt.readings.decade_grid`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.comparison_reading import ComparisonReading

#: ``{algorithm: {parameter: unit}}``: the unit in which each tuned parameter's powers of ten
#: are taken (a string names a quantity of the problem: ``lam_bar``, ``Ne``, ``-lam``).
UNITS: dict[str, dict[str, str]] = {
    "FedPD": {"eta": "1", "theta": "1"},
    "FedLin": {"eta": "2/lam_bar"},
    "TAMUNA": {"gamma": "1/lam_bar"},
    "LED": {"alpha": "1/lam_bar", "beta": "1/Ne"},
    "5GCS": {"tau": "1", "theta": "1"},
    "Fed-PLT": {"rho": "1"},
}


def decades(lo: float, hi: float) -> list[float]:
    """The powers of ten in ``[lo, hi]`` (both ends included up to round-off 1e-9)."""
    if not (lo > 0 and hi >= lo):
        raise ValueError(f"lo and hi must satisfy 0 < lo <= hi, got lo={lo!r}, hi={hi!r}")
    first = math.ceil(math.log10(lo) - 1e-9)
    last = math.floor(math.log10(hi) + 1e-9)
    return [10.0 ** k for k in range(first, last + 1)]


def _unit(unit: str, problem: Any, Ne: int, name: str, parameter: str) -> float:
    if name == "5GCS" and parameter == "tau" and not problem.convex:
        return -float(problem.lam)  # the weakly convex grid is -lam x {1.2, ..., 400}
    return {"1": 1.0, "2/lam_bar": 2.0 / float(problem.lam_bar), "1/lam_bar": 1.0 / float(problem.lam_bar),
            "1/Ne": 1.0 / Ne}[unit]


def decade_grid(name: str, problem: Any, Ne: int, solver: str) -> dict[str, list[float]]:
    """The reading's grid of ``name``: for each parameter of the class's ``tuning_grid``, the
    powers of ten (in the parameter's unit, :data:`UNITS`) within the range that grid spans."""
    from fedrepro.fedplt.baselines import algorithm_class

    ours: Mapping[str, Sequence[float]] = algorithm_class(name).tuning_grid(problem, Ne, solver)
    out: dict[str, list[float]] = {}
    for parameter, values in ours.items():
        unit = _unit(UNITS[name][parameter], problem, Ne, name, parameter)
        scaled = [float(v) / unit for v in values]
        out[parameter] = [d * unit for d in decades(min(scaled), max(scaled))] or [float(values[0])]
    return out


@dataclass(frozen=True)
class DecadeGridConfig(ComparisonReading):
    """v2 Tables II-IV tuned on the decade grid (:func:`decade_grid`), on the comparison's
    fields and random streams (:class:`ComparisonReading`)."""

    experiment: ClassVar[str] = "reading-v2-decade-grid"

    def units(self) -> list[str]:
        """The comparison's unit names, in table order."""
        from fedrepro.experiments.fedplt.comparison import unit_name

        return [unit_name(a, p, s, c) for a, p, s, c in self.settings()]


def _run_unit(config: DecadeGridConfig, unit: str) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.comparison import _is_random, _problem_v2, evaluate, grid_K_star
    from fedrepro.fedplt.tuning import grid_points

    problem_kind, solver, part, name = unit.split("-", 3)
    partial = part == "cohort"
    problem = _problem_v2(problem_kind == "convex", config)
    participation = ("cohort", config.N // 2) if partial else None
    random = _is_random(name, participation)
    trials = config.tune_trials if random else 1
    points = grid_points(decade_grid(name, problem, config.Ne, solver))
    K_star = grid_K_star(name, problem, points, Ne=config.Ne, solver=solver, participation=participation,
                         trials=trials, K=config.caps[-1], tol=config.tol, seed=config.tune_seed,
                         max_runs=config.max_runs)
    reached = np.all(K_star >= 0, axis=1)
    tune_mean_K = np.where(reached, np.where(K_star >= 0, K_star, 0).mean(axis=1), np.nan)
    out: dict[str, Any] = {"name": name, "problem": problem_kind, "solver": solver, "partial": partial,
                           "random": random, "points": points, "K_star": K_star, "tune_mean_K": tune_mean_K,
                           "best_index": -1, "best_params": {}, "mean_K": math.nan, "converged": 0, "trials": 0}
    if not reached.any():
        return out
    best = int(np.nanargmin(tune_mean_K))
    ev = evaluate(name, problem, points[best], Ne=config.Ne, solver=solver, participation=participation,
                  trials=config.eval_trials if random else 1, K=config.caps[-1], tol=config.tol,
                  seed=config.eval_seed)
    out.update(best_index=best, best_params=dict(points[best]), mean_K=ev["mean_K"], converged=ev["converged"],
               trials=ev["trials"])
    return out


def load_decade_grid(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`DecadeGridConfig` (``{"units": {unit: result}}``)."""
    config = DecadeGridConfig.for_profile(profile)
    return run_units(config, config.units(), _run_unit)
