"""The edge probe of T2 on the fair grids: one step beyond every edge the fair selection sits
on, the clipping norm among the probed knobs (issue 50, item 1).

T2's own probe (:mod:`fedrepro.experiments.headtohead.t2_edges`) moves only the axes of T2's
old grids, on which Fed-PLT and the quantized FedPAQ have no clip axis. This one runs the same
steps around the fair selections (:func:`fedrepro.experiments.headtohead.t2_fair_grid.fair_selection`):

1. the axes are those of the algorithm's whole fair grid (:data:`fedrepro.experiments.headtohead.t2_fair.GRIDS`),
   so the clip C ∈ {0.1, 0.3, 1.0} is an axis of every algorithm, on every profile; a
   selection at C = 1 is probed at C = 1/0.3 ≈ 3.3, one at C = 0.1 at C = 0.1·0.1/0.3 ≈ 0.033;
2. every axis on which the selection sits at an end is moved one step beyond it, alone and all
   together (:func:`fedrepro.experiments.headtohead.t1_edges.extensions`);
3. each extension is one tuning run of T2's protocol (:func:`fedrepro.experiments.headtohead.t2_fair.tune_one`),
   scored on the validation records (``headtohead/t2-fair-edges-tuning``);
4. where the best extension beats the fair selection on validation (the edge binds), it runs
   on T2's seeds at the reference cell, scored on the test set (``headtohead/t2-fair-edges``,
   one unit per seed).

The private algorithms of the ranking are probed (ALI-DPFL, not private as run, is not).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2, t2_fair, t2_fair_grid
from fedrepro.experiments.headtohead.t1 import _config_dict
from fedrepro.experiments.headtohead.t1_edges import extensions
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["T2FairEdgesTuningConfig", "T2FairEdgesConfig", "extensions_of", "tuning_units", "binding",
           "load_t2_fair_edges"]


def _check_pairs(pairs: tuple[tuple[str, int], ...], what: str) -> None:
    names = [a for a, _ in pairs]
    if len(set(names)) != len(names) or any(a not in t2_fair.PRIVATE for a in names):
        raise ValueError(f"{what} must pair distinct private algorithms with an index, got {pairs!r}")
    if any(not isinstance(k, int) or k < 0 for _, k in pairs):
        raise ValueError(f"{what} indices must be non-negative integers, got {pairs!r}")


def extensions_of(algorithm: str, selected: int) -> tuple[Any, ...]:
    """The extensions of ``algorithm``'s whole fair grid around its configuration ``selected``
    (module docstring, steps 1–2)."""
    grid = t2_fair.GRIDS[algorithm]
    if not 0 <= selected < len(grid):
        raise ValueError(f"selected must index the fair grid of {algorithm!r}, got {selected!r}")
    return extensions(grid, selected)


@dataclasses.dataclass(frozen=True)
class T2FairEdgesTuningConfig(ExperimentConfig):
    """Step 3: every extension of every fair selection ``selected`` (pairs of an algorithm and
    its index in the fair grid), one tuning run each."""

    part = "headtohead"
    experiment = "t2-fair-edges-tuning"
    verify_rtol = t2.T2TuningConfig.verify_rtol
    verify_atol = t2.T2TuningConfig.verify_atol
    verify_note = t2.T2TuningConfig.verify_note
    verify_units = 2

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        _check_pairs(self.selected, "selected")

    def protocol(self) -> t2.T2TuningConfig:
        return t2_fair.T2FairTuningConfig.for_profile(self.profile).protocol()


def tuning_units(cfg: T2FairEdgesTuningConfig) -> list[str]:
    """``<algorithm>_ext-<j>`` for the j-th extension of each selection."""
    return [f"{a}_ext-{j:02d}" for a, k in cfg.selected for j in range(len(extensions_of(a, k)))]


def _run_tuning_unit(cfg: T2FairEdgesTuningConfig, unit: str) -> dict[str, Any]:
    name, j = unit.split("_ext-")
    return t2_fair.tune_one(cfg.protocol(), extensions_of(name, dict(cfg.selected)[name])[int(j)])


def _combine_tuning(cfg: T2FairEdgesTuningConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for name, k in cfg.selected:
        cands = [units[f"{name}_ext-{j:02d}"] for j in range(len(extensions_of(name, k)))]
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf for c in cands]
        out.append({"algorithm": name, "grid_selected": k, "selected": int(np.argmax(scores)) if cands else None,
                    "candidates": cands})
    return {"tuning": out}


@dataclasses.dataclass(frozen=True)
class T2FairEdgesConfig(ExperimentConfig):
    """Step 4: the best extension of every algorithm whose edge binds (``chosen``: its index
    among the extensions of its selection in ``selected``), on T2's seeds at the reference
    cell."""

    part = "headtohead"
    experiment = "t2-fair-edges"
    verify_rtol = t2.T2Config.verify_rtol
    verify_atol = t2.T2Config.verify_atol
    verify_note = t2.T2Config.verify_note
    verify_units = 1

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()
    chosen: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        _check_pairs(self.selected, "selected")
        _check_pairs(self.chosen, "chosen")
        if not {a for a, _ in self.chosen} <= {a for a, _ in self.selected}:
            raise ValueError("every chosen extension needs its selection in selected")


def _units(cfg: T2FairEdgesConfig) -> list[str]:
    seeds = t2.T2Config.for_profile(cfg.profile).seeds
    return [f"{a}_seed-{s}" for a, _ in cfg.chosen for s in seeds]


def _run_unit(cfg: T2FairEdgesConfig, unit: str) -> dict[str, Any]:
    name, seed = unit.split("_seed-")
    p = t2.T2Config.for_profile(cfg.profile)
    ext = extensions_of(name, dict(cfg.selected)[name])[dict(cfg.chosen)[name]]
    _, final_problem = t2._problems(p)
    r = alg.run(final_problem, ext, epsilon=p.tuning_epsilon, delta=p.delta,
                uplink_budget_bits=t2.capped_budget(p.budget_bits, ext, final_problem.dim, p.max_rounds),
                clients_per_round=N_CLIENTS, seed=int(seed), eval_rounds=3)
    return {"algorithm": name, "config": _config_dict(ext), "seed": int(seed),
            "test_accuracy": float(r["test_accuracy"][-1]), "epsilon_spent": r["epsilon_spent"],
            "uplink_bits": r["uplink_bits"], "uplink_budget_bits": p.budget_bits, "rounds": r["rounds"],
            "diverged": r["diverged"]}


def _combine(cfg: T2FairEdgesConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"records": [units[u] for u in _units(cfg)]}


def binding(tuning: dict[str, Any], edges_tuning: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """``(algorithm, index of its best extension)`` for every algorithm whose best extension
    scores higher on validation than its fair selection (a diverged run scores nothing)."""
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


def load_t2_fair_edges(profile: str = "paper") -> dict[str, Any]:
    """The probe (the fair tuning first; computed when missing, where the store is writable):
    ``{"tuning": fair table, "edges_tuning": the extensions' runs, "edges": the binding ones on
    the test set}``."""
    tuning = t2_fair_grid.fair_selection(profile)
    selection = tuple((t["algorithm"], int(t["selected"])) for t in tuning["tuning"]
                      if t["algorithm"] in t2_fair.PRIVATE)
    cfg = T2FairEdgesTuningConfig(profile=profile, selected=selection)
    edges_tuning = run_units(cfg, tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning)
    runs = T2FairEdgesConfig(profile=profile, selected=selection, chosen=binding(tuning, edges_tuning))
    edges = run_units(runs, _units(runs), _run_unit, combine=_combine) if runs.chosen else {"records": []}
    return {"tuning": tuning, "edges_tuning": edges_tuning, "edges": edges}
