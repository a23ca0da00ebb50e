"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v2-grid-range``
(:class:`GridRangeConfig`), their run (unit, combine) functions and the computing helpers those
call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.grid_range`, which re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.comparison_reading import ComparisonReading


@dataclass(frozen=True)
class GridRangeConfig(ComparisonReading):
    """Every grid point of every setting of v2 Tables II-IV run to ``caps[-1]`` iterations,
    on the comparison's fields and random streams (:class:`ComparisonReading`)."""

    experiment: ClassVar[str] = "reading-v2-grid-range"
    # a few minutes in full, most of it 5GCS's slow points: make verify recomputes the settings
    # whose causes it decides (fedrepro.core.verify.SPOT_UNITS)
    verify_units: ClassVar[int | None] = 3

    def units(self) -> list[str]:
        """The comparison's unit names, in table order."""
        from fedrepro.experiments.fedplt.comparison import unit_name

        return [unit_name(a, p, s, c) for a, p, s, c in self.settings()]


def _run_unit(config: GridRangeConfig, unit: str) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.comparison import _is_random, _problem_v2, grid_K_star
    from fedrepro.fedplt.baselines import algorithm_class
    from fedrepro.fedplt.tuning import grid_points

    problem_kind, solver, part, name = unit.split("-", 3)
    partial = part == "cohort"
    problem = _problem_v2(problem_kind == "convex", config)
    participation = ("cohort", config.N // 2) if partial else None
    trials = config.tune_trials if _is_random(name, participation) else 1
    points = grid_points(algorithm_class(name).tuning_grid(problem, config.Ne, solver))
    K_star = grid_K_star(name, problem, points, Ne=config.Ne, solver=solver, participation=participation,
                         trials=trials, K=config.caps[-1], tol=config.tol, seed=config.tune_seed,
                         max_runs=config.max_runs)
    reached = np.all(K_star >= 0, axis=1)
    mean_K = np.where(reached, np.where(K_star >= 0, K_star, 0).mean(axis=1), np.nan)
    return {"name": name, "problem": problem_kind, "solver": solver, "partial": partial, "cap": config.caps[-1],
            "trials": trials, "points": points, "K_star": K_star, "mean_K": mean_K}


def load_grid_range(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`GridRangeConfig` (``{"units": {unit: result}}``)."""
    config = GridRangeConfig.for_profile(profile)
    return run_units(config, config.units(), _run_unit)
