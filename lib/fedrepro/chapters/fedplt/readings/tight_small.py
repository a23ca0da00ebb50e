"""v2 Tables II-IV (the ``n = 5`` problem) again with every step size set from the tight
smoothness constant, for the settings whose cells no point of our loose-constant tuning grid
explains (the paper's ``K*`` lies outside the range of ``K*`` the whole grid produces).

The comparison chapter builds every class's steps and tuning grid from the loose bound
``lam_bar_i = q_i/4 + eps`` that the paper's problem section states; the paper never gives
its experiments' steps. :mod:`fedrepro.chapters.fedplt.readings.tight` reruns Table V with the
tight constant ``lambda_max(A_i^T A_i)/(4 m_i) + eps``; this module does the same for the
settings of :data:`SETTINGS` with the protocol of
:class:`fedrepro.chapters.fedplt.comparison.experiments.ComparisonConfig` unchanged (the same
grid fractions, caps, trials and random streams, on the same data), each class building its
grid from the tight constant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from fedrepro.chapters.fedplt.readings.comparison_reading import ComparisonReading
from fedrepro.core.cache import run_units
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SETTINGS", "TightComparisonConfig", "load_tight_small", "effects_frame"]

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
    from fedrepro.chapters.fedplt.comparison.experiments import _is_random, evaluate, tune
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


def effects_frame(profile: str = "paper") -> pd.DataFrame:
    """Per rerun setting: our ``K*`` with the loose constant (the chapter's) and with the tight
    one, and the tuned parameters of the latter."""
    import pandas as pd

    from fedrepro.chapters.fedplt.comparison import experiments as cmp

    loose = cmp.load_comparison(profile)["units"]
    rows = []
    for unit, u in load_tight_small(profile)["units"].items():
        rows.append({"setting": unit, "ours, loose": sig3(loose[unit]["mean_K"]), "ours, tight": sig3(u["mean_K"]),
                     "tuned (tight)": ", ".join(f"{k}={sig3(v)}" for k, v in u["best_params"].items()) or "—"})
    return pd.DataFrame(rows).set_index("setting")
