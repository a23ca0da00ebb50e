"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v2-tables-ii-iv-tight``
(:class:`TightComparisonConfig`), their run (unit, combine) functions and the computing helpers
those call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.tight_small`, which re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.comparison_reading import ComparisonReading

#: The settings (comparison units) behind the Tables II-IV cells that our grid cannot explain.
SETTINGS: tuple[str, ...] = ("convex-gd-full-FedLin", "convex-gd-full-FedPD", "nonconvex-gd-full-FedPD",
                             "nonconvex-gd-full-LED", "convex-gd-cohort-TAMUNA", "convex-agd-cohort-Fed-PLT")


@dataclass(frozen=True)
class TightComparisonConfig(ComparisonReading):
    """v2 Tables II-IV with the tight smoothness constant, for ``rerun`` (comparison units),
    on the comparison's other fields and random streams (:class:`ComparisonReading`)."""

    experiment: ClassVar[str] = "reading-v2-tables-ii-iv-tight"
    rerun: tuple[str, ...] = SETTINGS

    def __post_init__(self) -> None:
        known = {f"{p}-{s}-{'cohort' if c else 'full'}-{a}" for a, p, s, c in self.settings()}
        unknown = [u for u in self.rerun if u not in known]
        if unknown or not self.rerun:
            raise ValueError(f"rerun must name comparison units of this config, got {unknown or self.rerun!r}")


def _run_unit(config: TightComparisonConfig, unit: str) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.comparison import _is_random, evaluate, tune
    from fedrepro.problems.logistic import logistic_v2

    problem_kind, solver, part, name = unit.split("-", 3)
    partial = part == "cohort"
    problem = logistic_v2(convex=problem_kind == "convex", seed=config.data_seed, N=config.N, n=config.n,
                          q=config.q, smoothness="tight")
    participation = ("cohort", config.N // 2) if partial else None
    random = _is_random(name, participation)
    gs, cap = tune(name, problem, Ne=config.Ne, solver=solver, participation=participation,
                   trials=config.tune_trials if random else 1, caps=config.caps, tol=config.tol,
                   seed=config.tune_seed, max_runs=config.max_runs)
    ev = evaluate(name, problem, gs.best_params, Ne=config.Ne, solver=solver, participation=participation,
                  trials=config.eval_trials if random else 1, K=config.caps[-1], tol=config.tol,
                  seed=config.eval_seed)
    return {"name": name, "lam_bar": float(problem.lam_bar), "best_params": gs.best_params,
            "tune_mean_K": gs.mean_K, **ev}


def load_tight_small(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`TightComparisonConfig` (``{"units": {unit: result}}``)."""
    config = TightComparisonConfig.for_profile(profile)
    return run_units(config, list(config.rerun), _run_unit)
