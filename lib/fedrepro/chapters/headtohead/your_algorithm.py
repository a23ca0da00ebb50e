"""A reader's algorithm beside the book's T1 algorithms at the same cells (the page "Run your
own algorithm"; the command ``python -m fedrepro.headtohead run``).

:func:`compare` puts the algorithm through T1's protocol in the reader's store
(:mod:`fedrepro.experiments.headtohead.your_algorithm`) and fetches the book's T1 result at
the same profile; :func:`comparison_frame` is T1's ranking table
(:func:`fedrepro.chapters.headtohead.t1_report.ranking_frame`) restricted to the reader's
cells, with the reader's row among the book's; :func:`your_algorithm_frame` does both.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

from fedrepro.chapters.headtohead import t1_report
from fedrepro.chapters.headtohead.t1 import LABELS
from fedrepro.experiments.headtohead import your_algorithm as yours_run
from fedrepro.headtohead import bring_your_own

__all__ = ["TASKS", "Comparison", "compare", "label", "comparison_frame", "selected_frame", "calibration_check",
           "your_algorithm_frame"]

#: The tasks a reader's algorithm can be run on.
TASKS: tuple[str, ...] = ("t1",)
#: The key of the reader's rows in the merged records (no algorithm of the book uses it).
_KEY = "yours"


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A reader's result and the book's T1 result at the same profile."""

    config: yours_run.YourAlgorithmConfig
    store: Path
    result: dict[str, Any]
    #: The book's T1 result (``None`` when unavailable) and where it came from (or why not).
    reference: dict[str, Any] | None
    reference_source: str
    #: Whether the reader's result was already in the store (nothing computed).
    loaded: bool
    #: Seconds spent computing the reader's result (0 when loaded).
    wall_s: float


def compare(algorithm: str, *, task: str = "t1", profile: str = "paper", epsilons: tuple[float, ...] | None = None,
            budget_bits: tuple[float, ...] | None = None, seeds: tuple[int, ...] | None = None,
            store: str | Path | None = None, progress: bool = True) -> Comparison:
    """Run the algorithm named ``algorithm`` (``"module:NAME"``) through the protocol of
    ``task`` at ``epsilons`` × ``budget_bits`` on ``seeds`` (each defaults to the task's at
    ``profile``), storing it in ``store`` (:func:`fedrepro.headtohead.bring_your_own.store_root`),
    or load it from there; and fetch the book's result of the task at ``profile``."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r} (T2's CNN task is not open to readers' "
                         "algorithms yet)")
    root = bring_your_own.store_root(store)
    config = yours_run.config_for(algorithm, profile=profile, epsilons=epsilons, budgets=budget_bits, seeds=seeds)
    loaded = yours_run.is_stored(config, root)
    t0 = time.perf_counter()
    result = yours_run.load_your_algorithm(config, root, progress=progress)
    wall_s = 0.0 if loaded else time.perf_counter() - t0
    reference, source = yours_run.load_t1_reference(profile, root, progress=progress)
    return Comparison(config, root, result, reference, source, loaded, wall_s)


def label(config: yours_run.YourAlgorithmConfig) -> str:
    """How the tables name the reader's algorithm."""
    return f"{config.name} (yours)"


def _labels(comparison: Comparison) -> dict[str, str]:
    return {**LABELS, _KEY: label(comparison.config)}


def _yours(comparison: Comparison) -> dict[str, Any]:
    """The reader's records and tuning under the key :data:`_KEY`."""
    return {"records": [{**r, "algorithm": _KEY} for r in comparison.result["records"]],
            "tuning": [{**t, "algorithm": _KEY} for t in comparison.result["tuning"]]}


def _at(comparison: Comparison, budget: float) -> dict[str, Any]:
    """The records at ``budget``: the reader's, and the book's at the reader's ε (and the
    non-private ceiling)."""
    eps = set(comparison.config.epsilons)
    book = comparison.reference["records"] if comparison.reference else []
    return {"records": [r for r in book if r["uplink_budget_bits"] == budget
                        and (r["epsilon_target"] in eps or not math.isfinite(r["epsilon_target"]))]
            + [r for r in _yours(comparison)["records"] if r["uplink_budget_bits"] == budget], "tuning": []}


def comparison_frame(comparison: Comparison) -> Any:
    """T1's ranking table at each of the reader's budgets: one row per algorithm, the test
    accuracy (%, mean ± standard deviation over the seeds) at each of the reader's ε, the mean
    rank over them (the non-private ceiling apart, unranked); indexed by budget and rank. The
    book's algorithms appear at the cells where its T1 result has them."""
    import pandas as pd

    frames = {f"{b:.3g}": t1_report.ranking_frame(_at(comparison, b), b, _labels(comparison))
              for b in dict.fromkeys(comparison.config.budgets)}
    return pd.concat(frames, names=["uplink budget (bits)", "rank"])


def selected_frame(comparison: Comparison) -> Any:
    """The configuration the validation split selected for the reader's algorithm at every
    cell (:func:`t1_report.selected_frame`), indexed by budget and ε."""
    import pandas as pd

    yours = _yours(comparison)
    frames = {f"{b:.3g}": t1_report.selected_frame(yours, b, _labels(comparison)).droplevel("algorithm")
              for b in dict.fromkeys(comparison.config.budgets)}
    return pd.concat(frames, names=["uplink budget (bits)", "ε"])


def calibration_check(comparison: Comparison) -> dict[str, float]:
    """T1's acceptance checks on the reader's runs (:func:`t1_report.budget_checks`): the
    largest relative gap between the ε spent and its target, the largest share of the uplink
    budget used."""
    return t1_report.budget_checks(comparison.result)


def your_algorithm_frame(algorithm: str, **kwargs: Any) -> Any:
    """:func:`comparison_frame` of :func:`compare` (same arguments)."""
    return comparison_frame(compare(algorithm, **kwargs))
