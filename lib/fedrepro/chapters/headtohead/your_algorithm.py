"""A reader's algorithm beside the book's algorithms of task T1 or T2 at the same cells (the
page "Run your own algorithm"; the command ``python -m fedrepro.headtohead run``).

:func:`compare` puts the algorithm through the task's protocol in the reader's store
(T1: :mod:`fedrepro.experiments.headtohead.your_algorithm`; T2:
:mod:`fedrepro.experiments.headtohead.your_algorithm_t2`) and fetches the book's result of
the task at the same profile; :func:`comparison_frame` is the ranking table
(:func:`fedrepro.chapters.headtohead.t1_report.ranking_frame`, with T2's labels on T2, as
:func:`fedrepro.chapters.headtohead.t2_report.ranking_frame` draws it) restricted to the
reader's cells, with the reader's row among the book's; :func:`your_algorithm_frame` does both.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

from fedrepro.chapters.headtohead import t1_report
from fedrepro.chapters.headtohead.t1 import LABELS as T1_LABELS
from fedrepro.chapters.headtohead.t2 import LABELS as T2_LABELS
from fedrepro.experiments.headtohead import your_algorithm as yours_run
from fedrepro.experiments.headtohead import your_algorithm_t2 as yours_t2
from fedrepro.headtohead import bring_your_own

__all__ = ["TASKS", "Comparison", "compare", "label", "comparison_frame", "selected_frame", "calibration_check",
           "your_algorithm_frame"]

#: The tasks a reader's algorithm can be run on.
TASKS: tuple[str, ...] = ("t1", "t2")
#: Each task's run module (config_for, load_your_algorithm, is_stored) and the book's labels.
_RUNS: dict[str, Any] = {"t1": yours_run, "t2": yours_t2}
_LABELS: dict[str, dict[str, str]] = {"t1": T1_LABELS, "t2": T2_LABELS}
#: The key of the reader's rows in the merged records (no algorithm of the book uses it).
_KEY = "yours"


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A reader's result and the book's result of the same task at the same profile."""

    config: yours_run.YourAlgorithmConfig | yours_t2.YourAlgorithmT2Config
    store: Path
    result: dict[str, Any]
    #: The book's result of the task (``None`` when unavailable) and where it came from (or why not).
    reference: dict[str, Any] | None
    reference_source: str
    #: Whether the reader's result was already in the store (nothing computed).
    loaded: bool
    #: Seconds spent computing the reader's result (0 when loaded).
    wall_s: float
    #: The task it ran (:data:`TASKS`).
    task: str = "t1"


def compare(algorithm: str, *, task: str = "t1", profile: str = "paper", epsilons: tuple[float, ...] | None = None,
            budget_bits: tuple[float, ...] | None = None, seeds: tuple[int, ...] | None = None,
            store: str | Path | None = None, progress: bool = True) -> Comparison:
    """Run the algorithm named ``algorithm`` (``"module:NAME"``) through the protocol of
    ``task`` at ``epsilons`` × ``budget_bits`` on ``seeds`` (each defaults to the task's at
    ``profile``), storing it in ``store`` (:func:`fedrepro.headtohead.bring_your_own.store_root`),
    or load it from there; and fetch the book's result of the task at ``profile``."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    run = _RUNS[task]
    root = bring_your_own.store_root(store)
    config = run.config_for(algorithm, profile=profile, epsilons=epsilons, budgets=budget_bits, seeds=seeds)
    loaded = run.is_stored(config, root)
    t0 = time.perf_counter()
    result = run.load_your_algorithm(config, root, progress=progress)
    wall_s = 0.0 if loaded else time.perf_counter() - t0
    if task == "t1":
        reference, source = yours_run.load_t1_reference(profile, root, progress=progress)
    else:
        config = yours_t2.with_selection(config, result)  # the identity of the stored cells
        reference, source = yours_t2.load_t2_reference(profile, root, progress=progress)
    return Comparison(config, root, result, reference, source, loaded, wall_s, task)


def label(config: yours_run.YourAlgorithmConfig | yours_t2.YourAlgorithmT2Config) -> str:
    """How the tables name the reader's algorithm."""
    return f"{config.name} (yours)"


def _labels(comparison: Comparison) -> dict[str, str]:
    return {**_LABELS[comparison.task], _KEY: label(comparison.config)}


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
    """The task's ranking table (T1's, with T2's labels on T2) at each of the reader's budgets: one row per algorithm, the test
    accuracy (%, mean ± standard deviation over the seeds) at each of the reader's ε, the mean
    rank over them (the non-private ceiling apart, unranked); indexed by budget and rank. The
    book's algorithms appear at the cells where its T1 result has them."""
    import pandas as pd

    frames = {f"{b:.3g}": t1_report.ranking_frame(_at(comparison, b), b, _labels(comparison))
              for b in dict.fromkeys(comparison.config.budgets)}
    return pd.concat(frames, names=["uplink budget (bits)", "rank"])


def selected_frame(comparison: Comparison) -> Any:
    """The configuration the validation split selected for the reader's algorithm
    (:func:`t1_report.selected_frame`), indexed by budget and ε: at every cell on T1, at T2's
    one tuning cell on T2 (T2 tunes once)."""
    import pandas as pd

    yours = _yours(comparison)
    budgets = dict.fromkeys(comparison.config.budgets if comparison.task == "t1"
                            else [t["uplink_budget_bits"] for t in yours["tuning"]])
    frames = {f"{b:.3g}": t1_report.selected_frame(yours, b, _labels(comparison)).droplevel("algorithm")
              for b in budgets}
    return pd.concat(frames, names=["uplink budget (bits)", "ε"])


def calibration_check(comparison: Comparison) -> dict[str, float]:
    """The task's acceptance checks on the reader's runs (:func:`t1_report.budget_checks`): the
    largest relative gap between the ε spent and its target, the largest share of the uplink
    budget used."""
    return t1_report.budget_checks(comparison.result)


def your_algorithm_frame(algorithm: str, **kwargs: Any) -> Any:
    """:func:`comparison_frame` of :func:`compare` (same arguments)."""
    return comparison_frame(compare(algorithm, **kwargs))
