"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v2-tamuna``
(:class:`TamunaReadingsConfig`), their run (unit, combine) functions and the computing helpers
those call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.tamuna`, which re-exports these names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar
from unittest import mock

import numpy as np

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.comparison_reading import ComparisonReading

#: reading -> (the name it is registered under while it runs, "module:class", what it is).
READINGS: dict[str, tuple[str, str, str]] = {
    "s2": ("TAMUNA-s2", "fedrepro.fedplt.baselines.tamuna_readings:TAMUNAS2",
           "compression on, s = 2 ones per coordinate across the cohort"),
    "flower": ("TAMUNA-flower", "fedrepro.fedplt.baselines.tamuna_readings:TAMUNAFlowerOrder",
               "the control-variate update at the agent's next participation (the Flower baseline's order)"),
}


#: The units: ``<reading>-<comparison unit>`` (the Flower order only with cohorts).
UNITS: tuple[str, ...] = ("s2-convex-gd-full-TAMUNA", "s2-convex-gd-cohort-TAMUNA", "flower-convex-gd-cohort-TAMUNA")


@dataclass(frozen=True)
class TamunaReadingsConfig(ComparisonReading):
    """The TAMUNA units of v2 Tables II and IV under the readings of :data:`READINGS`, on the
    comparison's fields and random streams (:class:`ComparisonReading`)."""

    experiment: ClassVar[str] = "reading-v2-tamuna"
    #: each unit runs up to 5,000 iterations at every grid point (about 3.5 min on one core):
    #: ``make verify`` recomputes one (:data:`fedrepro.core.verify.SPOT_UNITS`)
    verify_units: ClassVar[int | None] = 1


@contextlib.contextmanager
def _registered(reading: str) -> Iterator[str]:
    """The reading's class under its name in the baselines' registry, for the duration only."""
    from fedrepro.fedplt import baselines

    name, target, _ = READINGS[reading]
    with mock.patch.dict(baselines.ALGORITHMS, {name: target}):
        yield name


def _run_unit(config: TamunaReadingsConfig, unit: str) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.comparison import _problem_v2, evaluate, tune
    from fedrepro.fedplt.baselines.tamuna import TAMUNA
    from fedrepro.fedplt.tuning import grid_points

    reading, _, setting = unit.partition("-")
    if reading not in READINGS or unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; the units are {UNITS}")
    problem_kind, solver, part, _ = setting.split("-", 3)
    problem = _problem_v2(problem_kind == "convex", config)
    participation = ("cohort", config.N // 2) if part == "cohort" else None
    common = dict(Ne=config.Ne, solver=solver, participation=participation, tol=config.tol)
    with _registered(reading) as name:
        try:
            gs, cap = tune(name, problem, trials=config.tune_trials, caps=config.caps, seed=config.tune_seed,
                           max_runs=config.max_runs, **common)
        except ValueError:  # no grid point reaches tol in every trial within the last cap
            points = grid_points(TAMUNA.tuning_grid(problem, config.Ne, solver))
            ev = evaluate(name, problem, points[len(points) // 2], trials=config.eval_trials, K=config.caps[-1],
                          seed=config.eval_seed, **common)
            return {"reading": reading, "setting": setting, "reached": False,
                    "tune_mean_K": np.full(len(points), np.inf), "mean_K": np.inf,
                    "diverged_share": ev["diverged"] / ev["trials"], "trials": ev["trials"]}
        ev = evaluate(name, problem, gs.best_params, trials=config.eval_trials, K=config.caps[-1],
                      seed=config.eval_seed, **common)
    return {"reading": reading, "setting": setting, "reached": True, "best_params": gs.best_params,
            "tune_cap": cap, "tune_K_star": gs.K_star, "tune_mean_K": gs.mean_K,
            "diverged_share": ev["diverged"] / ev["trials"], **ev}


def load_tamuna_readings(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`TamunaReadingsConfig` (``{"units": {unit: result}}``)."""
    config = TamunaReadingsConfig.for_profile(profile)
    return run_units(config, list(UNITS), _run_unit)
