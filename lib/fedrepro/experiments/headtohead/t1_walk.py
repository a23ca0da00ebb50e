"""Grids wide enough for T1: from the grid's selection, step beyond the edges until none binds.

The edge probe (:mod:`fedrepro.experiments.headtohead.t1_edges`) moves once beyond every edge a
selection sits on, and a winning extension lies on a new edge by construction, so the probe
cannot say where an algorithm's best lies. This walk repeats the probe's step from the winner
(:func:`walk`):

1. the grid is tuned by T1's own protocol (:func:`fedrepro.experiments.headtohead.t1.tune_and_run`);
2. the extensions of the best configuration so far are formed over every value explored yet
   (:func:`fedrepro.experiments.headtohead.t1_edges.extensions`: one step beyond each end of an axis
   it sits on, alone and all together) and tuned by the same protocol on the same validation
   split;
3. when the best extension scores higher than the best so far it becomes the best and step 2
   repeats; the walk stops when none does (*no edge binds*: one step beyond every edge the best
   sits on is no better), when the best sits inside the explored values of every axis or no
   step is left (a rate above 1, fewer than one local step or two levels, more local steps
   than ``max_local_steps``: a run's cost grows with its local steps), or after ``max_steps``
   steps;
4. the best configuration found runs on T1's seeds (the grid's own selection too, so that the
   walk's test accuracies come from one computation).

One unit per algorithm and ε of the main budget (the non-private ceiling once), as the probe,
for the algorithms that learn on T1 (:data:`WALKED`): private FedPAQ stays near chance in every
configuration of its grids and of the probe's extensions, and a walk would only add runs.
The walk changes neither T1's protocol nor its ranking; the verdicts are in
:mod:`fedrepro.chapters.headtohead.t1_walk_report`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.validate import check_int
from fedrepro.experiments.headtohead import t1
from fedrepro.experiments.headtohead.t1_edges import T1EdgesConfig, extensions, units

__all__ = ["WALKED", "T1WalkConfig", "walk", "walk_units", "load_t1_walk"]

#: The algorithms walked (module docstring).
WALKED: tuple[str, ...] = ("fedavg", "dp-fedsgd", "dpfl", "fed-plt")

@dataclasses.dataclass(frozen=True)
class T1WalkConfig(ExperimentConfig):
    """The walk of T1's grids (module docstring), on T1's settings of ``profile``, at most
    ``max_steps`` steps beyond the grid and ``max_local_steps`` local steps."""

    part = "headtohead"
    experiment = "t1-walk"
    verify_rtol = t1.T1Config.verify_rtol
    verify_atol = t1.T1Config.verify_atol
    verify_note = t1.T1Config.verify_note
    verify_units = 1

    profile: str = "paper"
    max_steps: int = 6
    max_local_steps: int = 100

    def __post_init__(self) -> None:
        check_profile(self.profile)
        check_int("max_steps", self.max_steps, 1)
        check_int("max_local_steps", self.max_local_steps, 1)

    def t1(self) -> t1.T1Config:
        return t1.T1Config.for_profile(self.profile)

    def result_name(self) -> str:
        return "t1-walk" if self.profile == "paper" else f"t1-walk-{self.profile}"


def _score(value: float) -> float:
    return value if math.isfinite(value) else -math.inf


def walk(grid: Sequence[Any], score: Callable[[tuple[Any, ...]], list[float]], max_steps: int,
         allowed: Callable[[Any], bool] = lambda c: True) -> dict[str, Any]:
    """Steps 1-3 of the module docstring for any configurations and any scorer:
    ``score(configs)`` returns one validation score per configuration (higher is better; a
    non-finite score loses to every finite one); an extension that ``allowed`` refuses is not
    run. Returns every explored configuration with its
    score (the grid first), the index of the best, the steps (each: the indices of its
    extensions among the explored), and why the walk stopped (a key of the view's
    :data:`fedrepro.chapters.headtohead.t1_walk.STOPS`)."""
    explored = list(grid)
    if not explored:
        raise ValueError("grid must hold at least one configuration")
    check_int("max_steps", max_steps, 0)
    scores = [float(s) for s in score(tuple(explored))]
    best = max(range(len(explored)), key=lambda i: (_score(scores[i]), -i))
    steps: list[list[int]] = []
    stop = "step-limit"
    for _ in range(max_steps):
        ext = tuple(c for c in extensions(tuple(explored), best) if c not in explored and allowed(c))
        if not ext:
            stop = "inside"
            break
        new = [float(s) for s in score(ext)]
        first = len(explored)
        explored += ext
        scores += new
        steps.append(list(range(first, len(explored))))
        top = max(range(len(new)), key=lambda j: (_score(new[j]), -j))
        if _score(new[top]) > _score(scores[best]):
            best = first + top
        else:
            stop = "no-edge-binds"
            break
    return {"explored": explored, "scores": scores, "best": best, "steps": steps, "stop": stop}


def _run_unit(config: T1WalkConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = t1._parse(unit)
    base = config.t1()
    one = dataclasses.replace(base, seeds=base.seeds[:1])
    tuned: list[dict[str, Any]] = []

    def score(configs: tuple[Any, ...]) -> list[float]:
        out = t1.tune_and_run(one, configs, epsilon, budget)  # T1's protocol; its one test run is not used
        tuned.extend(out["tuning"])
        return [t["validation_accuracy"] for t in out["tuning"]]

    grid = t1.grid_of(base, name)
    w = walk(grid, score, config.max_steps,
             allowed=lambda c: getattr(c, "local_steps", 1) <= config.max_local_steps)
    chosen = w["explored"][w["best"]]
    final = t1.tune_and_run(base, (chosen,), epsilon, budget)
    return {"algorithm": name, "epsilon_target": math.inf if epsilon is None else epsilon,
            "uplink_budget_bits": budget, "tuning": tuned, "grid_size": len(grid), "best": w["best"],
            "steps": w["steps"], "stop": w["stop"], "config": t1._config_dict(chosen),
            "runs": final["runs"]}


def walk_units(config: T1WalkConfig) -> list[str]:
    """The probe's units (:func:`fedrepro.chapters.headtohead.t1_edges.units`) of the
    algorithms of :data:`WALKED`."""
    return [u for u in units(T1EdgesConfig(profile=config.profile)) if t1._parse(u)[0] in WALKED]


def load_t1_walk(profile: str = "paper") -> dict[str, Any]:
    """The stored walk (computed when missing, where the store is writable): ``units``."""
    config = T1WalkConfig(profile=profile)
    return run_units(config, walk_units(config), _run_unit)
