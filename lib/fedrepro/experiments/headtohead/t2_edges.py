"""Are T2's tuning grids wide enough? One step beyond every edge the selection sits on.

Task T2 (:mod:`fedrepro.experiments.headtohead.t2`) tunes every algorithm once, at its reference
cell, on the same 12-configuration grid (:data:`fedrepro.experiments.headtohead.t2.GRIDS`), and
every selection sits at an end of at least one axis. This probe does not change the ranking's
protocol; it asks whether those edges bind, as :mod:`fedrepro.experiments.headtohead.t1_edges`
does for T1, with T2's savings (one tuning cell):

1. the grid's selection is the stored T2 tuning's (:func:`fedrepro.experiments.headtohead.t2.selected`;
   ``make verify`` checks that result on its own);
2. every axis on which the selection sits at an end is moved one step beyond it, alone and all
   together (:func:`fedrepro.experiments.headtohead.t1_edges.extensions`);
3. each extension is one tuning run of T2's (:class:`T2EdgesTuningConfig`: T2's own tuning unit
   with the extension in place of the grid, the same tuning problem, cell, round cap and
   seed), scored on the validation records;
4. where the best extension beats the grid's selection on validation (the edge *binds*), it
   runs on T2's three seeds at the reference cell on the test set (:class:`T2EdgesConfig`: T2's
   own unit, one seed per unit).

The probe covers the private algorithms (:data:`PROBED`). The non-private ceiling is left out:
its selection sits at the top of all three axes, and its extensions (25 local steps on a third
of each client's records per step) would cost more than all the others together, about two
hours on 2 cores; its CNN training is also chaotic (:data:`fedrepro.core.verify.SPOT_UNITS`).

The verdicts are in :mod:`fedrepro.chapters.headtohead.t2_edges_report`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any
from unittest import mock

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2
from fedrepro.experiments.headtohead.t1 import unit_name
from fedrepro.experiments.headtohead.t1_edges import extensions

__all__ = ["PROBED", "T2EdgesTuningConfig", "T2EdgesConfig", "grid_of", "extensions_of", "tuning_units", "binding",
           "load_t2_edges"]


#: The algorithms the probe covers (module docstring): every private algorithm of T2.
PROBED: tuple[str, ...] = tuple(a for a in t2.GRIDS if a != "fedavg")


def _check_selected(selected: tuple[tuple[str, int], ...], what: str) -> None:
    names = [a for a, _ in selected]
    if len(set(names)) != len(names) or any(a not in PROBED for a in names):
        raise ValueError(f"{what} must pair distinct algorithms of PROBED with an index, got {selected!r}")
    if any(not isinstance(k, int) or k < 0 for _, k in selected):
        raise ValueError(f"{what} indices must be non-negative integers, got {selected!r}")


@dataclasses.dataclass(frozen=True)
class T2EdgesTuningConfig(ExperimentConfig):
    """Step 3 of the probe (module docstring): every extension of every algorithm's grid,
    one tuning run each. ``selected`` pairs each algorithm with the index of its grid's
    selection (filled from the stored T2 tuning by :func:`load_t2_edges`)."""

    part = "headtohead"
    experiment = "t2-edges-tuning"
    verify_rtol = t2.T2TuningConfig.verify_rtol
    verify_atol = t2.T2TuningConfig.verify_atol
    verify_note = t2.T2TuningConfig.verify_note
    verify_units = 2

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        _check_selected(self.selected, "selected")
        for name, k in self.selected:
            if k >= self.tuning().grid_size:
                raise ValueError(f"selected index {k} of {name!r} is outside the grid")

    def tuning(self) -> t2.T2TuningConfig:
        """T2's tuning experiment on this profile (its cell, caps and seed)."""
        return t2.T2TuningConfig.for_profile(self.profile)

    def result_name(self) -> str:
        return "t2-edges-tuning" if self.profile == "paper" else f"t2-edges-tuning-{self.profile}"


def grid_of(profile: str, algorithm: str) -> tuple[Any, ...]:
    """The configurations of ``algorithm`` that T2's tuning runs on ``profile``."""
    return t2.GRIDS[algorithm][:t2.T2TuningConfig.for_profile(profile).grid_size]


def extensions_of(profile: str, algorithm: str, selected: int) -> tuple[Any, ...]:
    """The extensions of ``algorithm``'s grid around its selection ``selected`` (module
    docstring, step 2)."""
    return extensions(grid_of(profile, algorithm), selected)


def tuning_units(config: T2EdgesTuningConfig) -> list[str]:
    """``<algorithm>_cfg-<j>`` for the j-th extension of each algorithm, the cheapest
    algorithm's first and last (``make verify`` spot-checks those two)."""
    out = []
    for name, k in config.selected:
        out += [f"{name}_cfg-{j:02d}" for j in range(len(extensions_of(config.profile, name, k)))]
    cheap = [u for u in out if u.startswith("dp-fedsgd_")]
    if len(cheap) >= 2:
        out = [cheap[0]] + [u for u in out if u not in (cheap[0], cheap[-1])] + [cheap[-1]]
    return out


def _run_tuning_unit(config: T2EdgesTuningConfig, unit: str) -> dict[str, Any]:
    name = unit.split("_cfg-")[0]
    ext = extensions_of(config.profile, name, dict(config.selected)[name])
    with mock.patch.dict(t2.GRIDS, {name: ext}):  # T2's own tuning unit, on the extension
        return t2._run_tuning_unit(config.tuning(), unit)


def _combine_tuning(config: T2EdgesTuningConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for name, k in config.selected:
        cands = [units[f"{name}_cfg-{j:02d}"] for j in range(len(extensions_of(config.profile, name, k)))]
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf for c in cands]
        out.append({"algorithm": name, "grid_selected": k, "selected": int(np.argmax(scores)) if cands else None,
                    "candidates": [{f: v for f, v in c.items() if f not in ("algorithm", "index")} for c in cands]})
    return {"tuning": out}


@dataclasses.dataclass(frozen=True)
class T2EdgesConfig(ExperimentConfig):
    """Step 4 of the probe (module docstring): the best extension of every algorithm whose
    edge binds, on T2's seeds at the reference cell, scored on the test set. ``selected`` pairs
    each such algorithm's grid selection, ``chosen`` the index of its best extension (both
    filled by :func:`load_t2_edges`)."""

    part = "headtohead"
    experiment = "t2-edges"
    verify_rtol = t2.T2Config.verify_rtol
    verify_atol = t2.T2Config.verify_atol
    verify_note = t2.T2Config.verify_note
    verify_units = 1

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()
    chosen: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        _check_selected(self.selected, "selected")
        _check_selected(self.chosen, "chosen")
        if not {a for a, _ in self.chosen} <= {a for a, _ in self.selected}:
            raise ValueError("every chosen extension needs its grid's selection in selected")

    def grid(self) -> t2.T2Config:
        """T2's grid of cells on this profile (its seeds, reference cell and caps)."""
        return t2.T2Config.for_profile(self.profile)

    def result_name(self) -> str:
        return "t2-edges" if self.profile == "paper" else f"t2-edges-{self.profile}"


def _units(config: T2EdgesConfig) -> list[str]:
    """``<algorithm>_seed-<s>`` for every chosen extension and seed."""
    seeds = config.grid().seeds
    return [f"{name}_seed-{s}" for name, _ in config.chosen for s in seeds]


def _run_unit(config: T2EdgesConfig, unit: str) -> dict[str, Any]:
    name, seed = unit.split("_seed-")
    base = config.grid()
    ext = extensions_of(config.profile, name, dict(config.selected)[name])
    one = dataclasses.replace(base, seeds=(int(seed),), selected=((name, dict(config.chosen)[name]),))
    epsilon = None if name == "fedavg" else base.tuning_epsilon
    with mock.patch.dict(t2.GRIDS, {name: ext}):  # T2's own unit of a cell, on the extension
        return t2._run_unit(one, unit_name(name, epsilon, base.budget_bits))


def _combine(config: T2EdgesConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for name, _ in config.chosen:
        cells = [units[f"{name}_seed-{s}"] for s in config.grid().seeds]
        out += t2.records(config.grid(), {**cells[0], "runs": [c["runs"][0] for c in cells]})
    return {"records": out}


def binding(tuning: dict[str, Any], edges_tuning: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """``(algorithm, index of its best extension)`` for every algorithm whose best extension
    scores higher on the validation records than its grid's selection (a diverged run scores
    nothing)."""
    def score(v: float) -> float:
        return v if math.isfinite(v) else -math.inf

    grid = {t["algorithm"]: t["candidates"][int(t["selected"])] for t in tuning["tuning"]}
    out = []
    for t in edges_tuning["tuning"]:
        if t["selected"] is None:
            continue
        best = t["candidates"][int(t["selected"])]
        if score(best["validation_accuracy"]) > score(grid[t["algorithm"]]["validation_accuracy"]):
            out.append((t["algorithm"], int(t["selected"])))
    return tuple(out)


def load_t2_edges(profile: str = "paper") -> dict[str, Any]:
    """The probe (computed when missing, where the store is writable): ``{"tuning": stored T2
    tuning, "edges_tuning": the extensions' tuning runs, "edges": the binding extensions' runs
    on the test set}``."""
    tuning = t2.load_t2_tuning(profile)
    selection = tuple((t["algorithm"], int(t["selected"])) for t in tuning["tuning"] if t["algorithm"] in PROBED)
    cfg = T2EdgesTuningConfig(profile=profile, selected=selection)
    edges_tuning = run_units(cfg, tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning)
    runs_cfg = T2EdgesConfig(profile=profile, selected=selection, chosen=binding(tuning, edges_tuning))
    edges = run_units(runs_cfg, _units(runs_cfg), _run_unit, combine=_combine) if runs_cfg.chosen else {"records": []}
    return {"tuning": tuning, "edges_tuning": edges_tuning, "edges": edges}
