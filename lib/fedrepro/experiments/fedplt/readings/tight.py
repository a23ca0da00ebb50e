"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v2-table-v-tight``
(:class:`TightLargeConfig`), their run (unit, combine) functions and the computing helpers those
call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.tight`, which re-exports these names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.comparison import LargeComparisonConfig


@dataclass(frozen=True)
class TightLargeConfig(LargeComparisonConfig):
    """v2 Table V with the tight smoothness constant: the fields (and their defaults per
    profile) are those of :class:`~fedrepro.chapters.fedplt.comparison.experiments.LargeComparisonConfig`,
    whose random streams it shares."""

    experiment: ClassVar[str] = "reading-v2-table-v-tight"

    @classmethod
    def for_profile(cls, profile: str) -> TightLargeConfig:
        base = LargeComparisonConfig.for_profile(check_profile(profile))
        return cls(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})


def _run_unit(config: TightLargeConfig, unit: str) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.comparison import (
        _is_random,
        evaluate,
        load_comparison,
        unit_name,
        window_search,
    )
    from fedrepro.problems.logistic import logistic_v2

    name = unit
    start = load_comparison(config.profile)["units"][unit_name(name, "convex", "gd", False)]["grid_index"]
    problem = logistic_v2(convex=True, seed=config.data_seed, N=config.N, n=config.n, q=config.q,
                          smoothness="tight")
    random = _is_random(name, None)
    ws = window_search(name, problem, Ne=config.Ne, solver="gd", start=start, radius=config.radius,
                       trials=config.tune_trials if random else 1, caps=config.caps, tol=config.tol,
                       seed=config.tune_seed, max_runs=config.max_runs)
    ev = evaluate(name, problem, ws["best_params"], Ne=config.Ne, solver="gd",
                  trials=config.eval_trials if random else 1, K=config.caps[-1], tol=config.tol,
                  seed=config.eval_seed)
    return {"name": name, "random": random, "best_params": ws["best_params"], "best_index": ws["best_index"],
            "points": ws["points"], "tune_mean_K": ws["mean_K"], "tune_trials": config.tune_trials if random else 1,
            "lam_bar": float(problem.lam_bar), "mean_K": ev["mean_K"], "converged": ev["converged"],
            "trials": ev["trials"]}


def load_tight_large(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`TightLargeConfig` (``{"units": {algorithm: result}}``)."""
    config = TightLargeConfig.for_profile(profile)
    return run_units(config, list(config.algorithms), _run_unit)
