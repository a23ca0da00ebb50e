"""Are T1's tuning grids wide enough? One step beyond every edge the selection sits on.

The ranking of task T1 tunes every algorithm on the same 12-configuration grid
(:data:`fedrepro.experiments.headtohead.t1.GRIDS`); most selections sit at an end of an axis of
their grid. This probe does not change the ranking's protocol; it asks whether the edges bind.
For every algorithm at every ε of the main uplink budget (one unit each, the non-private
ceiling once):

1. the grid is tuned again exactly as in T1 (:func:`fedrepro.experiments.headtohead.t1.tune_and_run`,
   its selection run on seed 0 only);
2. every axis on which the selection sits at an end is moved one step beyond it
   (:func:`beyond`: the ratio of the axis's two values nearest that end), alone and all
   together (:func:`extensions`);
3. the extensions are tuned by the same protocol and their best is run on T1's seeds.

The verdicts (does an extension beat the grid on the validation split, and what it does on
the test set) are in :mod:`fedrepro.chapters.headtohead.t1_edges_report`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t1

__all__ = ["T1EdgesConfig", "axes", "beyond", "extensions", "units", "load_t1_edges"]

#: fields that hold integers, and the smallest value each field may take.
_INTEGER = {"local_steps": 1, "levels": 2}
#: fields that are probabilities (at most 1).
_PROBABILITY = ("rate",)


@dataclasses.dataclass(frozen=True)
class T1EdgesConfig(ExperimentConfig):
    """The edge probe of T1's grids (module docstring), on T1's settings of ``profile``."""

    part = "headtohead"
    experiment = "t1-edges"
    verify_rtol = t1.T1Config.verify_rtol
    verify_atol = t1.T1Config.verify_atol
    verify_note = t1.T1Config.verify_note
    verify_units = 1

    profile: str = "paper"

    def __post_init__(self) -> None:
        check_profile(self.profile)

    def t1(self) -> t1.T1Config:
        return t1.T1Config.for_profile(self.profile)

    def result_name(self) -> str:
        return "t1-edges" if self.profile == "paper" else f"t1-edges-{self.profile}"


def axes(grid: tuple[Any, ...]) -> dict[str, list[Any]]:
    """The axes of a grid: every field that takes more than one value, its values sorted."""
    if not grid:
        raise ValueError("grid must hold at least one configuration")
    out = {}
    for f in dataclasses.fields(grid[0]):
        values = {getattr(c, f.name) for c in grid}
        if len(values) > 1:
            out[f.name] = sorted(values)
    return out


def beyond(field: str, values: list[Any], end: str) -> Any | None:
    """One step past the ``end`` (``"low"`` or ``"high"``) of an axis: the value times (or
    divided by) the ratio of the two values nearest that end; integers rounded; ``None`` when
    the step leaves the field's range (a rate above 1, fewer than 1 local step or 2 levels)."""
    if end not in ("low", "high") or len(values) < 2 or any(v is None or v <= 0 for v in values):
        raise ValueError(f"cannot step beyond the {end!r} end of {field} = {values!r}")
    if end == "high":
        new = values[-1] * (values[-1] / values[-2])
    else:
        new = values[0] / (values[1] / values[0])
    if field in _INTEGER:
        new = int(round(new))
        if new < _INTEGER[field] or new in values:
            return None
    elif field in _PROBABILITY and new > 1:
        return None
    return new if math.isfinite(new) else None


def extensions(grid: tuple[Any, ...], selected: int) -> tuple[Any, ...]:
    """The configurations one step beyond each end the selection ``grid[selected]`` sits on,
    one axis at a time and then all such axes together (when there are two or more)."""
    choice = grid[selected]
    moves = {}
    for field, values in axes(grid).items():
        v = getattr(choice, field)
        end = "high" if v == values[-1] else "low" if v == values[0] else None
        new = beyond(field, values, end) if end else None
        if new is not None:
            moves[field] = new
    out = [dataclasses.replace(choice, **{f: v}) for f, v in moves.items()]
    if len(moves) > 1:
        out.append(dataclasses.replace(choice, **moves))
    return tuple(out)


def units(config: T1EdgesConfig) -> list[str]:
    """The ceiling at the main budget, then every private algorithm at every ε of it."""
    base = config.t1()
    private = [a for a in base.algorithms if a != "fedavg"]
    out = [t1.unit_name("fedavg", None, base.budget_bits)] if "fedavg" in base.algorithms else []
    return out + [t1.unit_name(a, e, base.budget_bits) for e in base.epsilons for a in private]


def _run_unit(config: T1EdgesConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = t1._parse(unit)
    base = config.t1()
    grid = t1.grid_of(base, name)
    inside = t1.tune_and_run(dataclasses.replace(base, seeds=base.seeds[:1]), grid, epsilon, budget)
    ext = extensions(grid, int(inside["selected"]))
    outside = t1.tune_and_run(base, ext, epsilon, budget) if ext else None
    return {"algorithm": name, "epsilon_target": inside["epsilon_target"], "uplink_budget_bits": budget,
            "grid": inside, "extensions": outside}


def load_t1_edges(profile: str = "paper") -> dict[str, Any]:
    """The stored probe (computed when missing, where the store is writable): ``units``."""
    config = T1EdgesConfig(profile=profile)
    return run_units(config, units(config), _run_unit)
