"""Task T1 of the head-to-head part: every algorithm, tuned the same way, at every (ε, uplink
budget) cell, then run on three seeds and scored on the test set.

The protocol (issue "Head to head"; the chapter's "Protocol" section):

* **cells** — ε ∈ ``epsilons`` at the main budget ``budget_bits``, and the budgets
  ``sweep_budgets`` at ε ∈ ``sweep_epsilons``; δ = 1e-5 everywhere; 10 clients per round. The
  non-private ceiling has one cell per budget.
* **tuning** — every algorithm has a fixed grid of 12 configurations (:data:`GRIDS`, the same
  budget for every algorithm); each configuration runs once (seed ``tuning_seed``) on the
  tuning problem of :func:`fedrepro.headtohead.tasks.t1_problems` and is scored by its
  accuracy on the validation records at the end of the run; the best is selected (the first
  on a tie; a run whose model stops being finite scores nothing). The privacy cost of tuning
  is not accounted (as in the literature).
* **final** — the selected configuration runs on ``seeds`` seeds on the whole training data
  and is scored on the test set; every run is calibrated by the accountant to exactly the
  cell's ε for the run as executed (:func:`fedrepro.headtohead.algorithms.run`).

One unit per (algorithm, cell), through :func:`fedrepro.core.cache.run_units`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.tasks import t1_problems

__all__ = ["GRIDS", "T1Config", "cells", "unit_name", "grid_of", "tune_and_run", "records", "combine_cells",
           "load_t1"]


def _grid(cls: type, **axes: tuple[Any, ...]) -> tuple[Any, ...]:
    """Every combination of ``axes`` (the first axis varies fastest) as instances of ``cls``."""
    names = list(axes)
    combos = itertools.product(*(axes[n] for n in reversed(names)))
    return tuple(cls(**dict(zip(reversed(names), c, strict=True))) for c in combos)


#: The 12 configurations of every algorithm (the tuning budget is the same for all).
GRIDS: dict[str, tuple[Any, ...]] = {
    "fedavg": _grid(alg.FedAvg, lr=(0.1, 0.3, 1.0), local_steps=(1, 5), rate=(0.05, 0.2)),
    "dp-fedsgd": _grid(alg.DPFL, lr=(0.3, 1.0, 3.0), clip=(0.3, 1.0), rate=(0.05, 0.2)),
    "dpfl": _grid(alg.DPFL, lr=(0.3, 1.0, 3.0), clip=(0.3, 1.0), local_steps=(3, 10)),
    "fedpaq": _grid(alg.PrivateFedPAQ, lr=(0.3, 1.0, 3.0), clip=(0.3, 1.0), local_steps=(1, 5)),
    "fedpaq-q": _grid(alg.PrivateFedPAQ, lr=(0.3, 1.0, 3.0), local_steps=(1, 5), levels=(2, 16)),
    "fed-plt": _grid(alg.FedPLT, lr=(0.1, 0.3, 1.0), rho=(1.0, 10.0), local_steps=(2, 5)),
}

@dataclasses.dataclass(frozen=True)
class T1Config(ExperimentConfig):
    """The T1 grid of cells (module docstring)."""

    part = "headtohead"
    experiment = "t1"
    verify_rtol = 1e-3
    verify_atol = 1e-6
    verify_note = ("float32 products under noise: the BLAS kernel moves the last bits of the accuracies; a "
                   "near-tie in the tuning could select another configuration on another machine")
    verify_units = 2

    profile: str = "paper"
    epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    budget_bits: float = 4e8
    sweep_epsilons: tuple[float, ...] = (1.0, 4.0)
    sweep_budgets: tuple[float, ...] = (5e7, 1e8, 2e8)
    delta: float = 1e-5
    clients_per_round: int = 10
    seeds: tuple[int, ...] = (0, 1, 2)
    tuning_seed: int = 1000
    grid_size: int = 12
    per_device: int | None = None
    validation_fraction: float = 0.1
    algorithms: tuple[str, ...] = tuple(GRIDS)

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.epsilons or any(not e > 0 for e in self.epsilons + self.sweep_epsilons):
            raise ValueError(f"epsilons must be positive, got {self.epsilons + self.sweep_epsilons!r}")
        if any(not b > 0 for b in (self.budget_bits, *self.sweep_budgets)):
            raise ValueError("budgets must be positive")
        if not 1 <= self.grid_size <= 12:
            raise ValueError(f"grid_size must lie in [1, 12], got {self.grid_size!r}")
        unknown = set(self.algorithms) - set(GRIDS)
        if unknown or not self.algorithms:
            raise ValueError(f"algorithms must be among {tuple(GRIDS)}, got {self.algorithms!r}")
        if not self.seeds:
            raise ValueError("seeds must not be empty")

    @classmethod
    def for_profile(cls, profile: str) -> T1Config:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", epsilons=(4.0,), budget_bits=2e7, sweep_epsilons=(4.0,),
                       sweep_budgets=(1e7,), seeds=(0,), grid_size=2, per_device=100)
        return cls()


def cells(config: T1Config) -> list[tuple[float, float]]:
    """The (ε, budget) cells of the private algorithms: the ε sweep at the main budget, then
    the budget sweep."""
    out = [(e, config.budget_bits) for e in config.epsilons]
    out += [(e, b) for e in config.sweep_epsilons for b in config.sweep_budgets]
    return list(dict.fromkeys(out))


def unit_name(algorithm: str, epsilon: float | None, budget: float) -> str:
    """``<algorithm>_eps-<ε>_bits-<budget>`` (``eps-none`` for the non-private ceiling)."""
    eps = "none" if epsilon is None else f"{epsilon:g}"
    return f"{algorithm}_eps-{eps}_bits-{budget:.3g}"


def _parse(unit: str) -> tuple[str, float | None, float]:
    name, eps, bits = unit.split("_")
    e = eps.removeprefix("eps-")
    return name, (None if e == "none" else float(e)), float(bits.removeprefix("bits-"))


def _units(config: T1Config) -> list[str]:
    """Every unit; the cheapest first and last (``make verify`` spot-checks those two)."""
    budgets = sorted({b for _, b in cells(config)})
    private = [a for a in config.algorithms if a != "fedavg"]
    out = [unit_name("fedavg", None, b) for b in budgets] if "fedavg" in config.algorithms else []
    for e, b in sorted(cells(config), key=lambda c: (-c[1], c[0])):
        out += [unit_name(a, e, b) for a in private]
    if out and private:  # end on a small private cell
        last = unit_name(private[0], min(config.sweep_epsilons), min(budgets))
        if last in out:
            out.remove(last)
            out.append(last)
    return out


def grid_of(config: T1Config, algorithm: str) -> tuple[Any, ...]:
    """The configurations tuned for ``algorithm`` (the first ``grid_size`` of :data:`GRIDS`)."""
    return GRIDS[algorithm][:config.grid_size]


def _config_dict(algorithm: Any) -> dict[str, Any]:
    return {f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm)}


def tune_and_run(config: T1Config, grid: tuple[Any, ...], epsilon: float | None, budget: float) -> dict[str, Any]:
    """The protocol for one algorithm at one cell: every configuration of ``grid`` runs once
    on the tuning problem and is scored on the validation records; the best (the first on a
    tie; a diverged run scores nothing) runs on ``config.seeds`` on the final problem. Any
    algorithm of the interface of :mod:`fedrepro.headtohead.algorithms` works (the chapter's
    "add your algorithm" section)."""
    if not grid:
        raise ValueError("grid must hold at least one configuration")
    tuning_problem, final_problem = t1_problems(config.per_device, config.validation_fraction)
    common = {"epsilon": epsilon, "delta": config.delta, "uplink_budget_bits": budget,
              "clients_per_round": config.clients_per_round}
    tuned = []
    for candidate in grid:
        r = alg.run(tuning_problem, candidate, seed=config.tuning_seed, eval_rounds=1, **common)
        tuned.append({"config": _config_dict(candidate), "validation_accuracy": float(r["test_accuracy"][-1]),
                      "noise_multiplier": r["noise_multiplier"], "rounds": r["rounds"], "diverged": r["diverged"]})
    scores = [t["validation_accuracy"] if math.isfinite(t["validation_accuracy"]) else -math.inf for t in tuned]
    best = int(np.argmax(scores))
    runs = []
    for seed in config.seeds:
        r = alg.run(final_problem, grid[best], seed=seed, **common)
        runs.append({"seed": seed, "noise_multiplier": r["noise_multiplier"], "epsilon_spent": r["epsilon_spent"],
                     "epsilon_spent_rdp": r["epsilon_spent_rdp"], "rounds": r["rounds"], "rounds_run": r["rounds_run"],
                     "uplink_bits": r["uplink_bits"], "downlink_bits": r["downlink_bits"],
                     "message_bits": r["message_bits"], "participations": r["participations"],
                     "eval_rounds": r["eval_rounds"], "test_accuracy": r["test_accuracy"], "train_loss": r["train_loss"],
                     "sampled_records": r["sampled_records"], "diverged": r["diverged"]})
    return {"epsilon_target": math.inf if epsilon is None else epsilon, "uplink_budget_bits": budget,
            "tuning": tuned, "selected": best, "runs": runs}


def _run_unit(config: T1Config, unit: str) -> dict[str, Any]:
    name, epsilon, budget = _parse(unit)
    return {"algorithm": name, **tune_and_run(config, grid_of(config, name), epsilon, budget)}


def records(config: T1Config, name: str, cell: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of one cell computed by :func:`tune_and_run` for the algorithm ``name``:
    one per seed, with the selected configuration and its calibration."""
    selected = cell["tuning"][int(cell["selected"])]["config"]
    return [{"task": "T1", "algorithm": name, "seed": r["seed"], "epsilon_target": cell["epsilon_target"],
             "epsilon_spent": r["epsilon_spent"], "epsilon_spent_rdp": r["epsilon_spent_rdp"], "delta": config.delta,
             "uplink_budget_bits": cell["uplink_budget_bits"], "uplink_bits": r["uplink_bits"],
             "downlink_bits": r["downlink_bits"], "message_bits": r["message_bits"], "rounds": r["rounds"],
             "rounds_run": r["rounds_run"], "participations": r["participations"],
             "noise_multiplier": r["noise_multiplier"], "test_accuracy": float(r["test_accuracy"][-1]),
             "train_loss": float(r["train_loss"][-1]), "accuracy_curve": r["test_accuracy"],
             "eval_rounds": r["eval_rounds"], "sampled_records": r["sampled_records"], "diverged": r["diverged"],
             "config": selected} for r in cell["runs"]]


def combine_cells(config: T1Config, cells: list[dict[str, Any]]) -> dict[str, Any]:
    """One record per (task, algorithm, ε, budget, seed) of the computed ``cells``, in their
    order (:func:`records`), and the tuning table of every cell."""
    out, tuning = [], []
    for u in cells:
        out += records(config, u["algorithm"], u)
        tuning.append({"algorithm": u["algorithm"], "epsilon_target": u["epsilon_target"],
                       "uplink_budget_bits": u["uplink_budget_bits"], "selected": u["selected"],
                       "candidates": u["tuning"]})
    return {"records": out, "tuning": tuning}


def _combine(config: T1Config, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """:func:`combine_cells` over the units in their order."""
    return combine_cells(config, [units[u] for u in _units(config)])


def load_t1(profile: str = "paper") -> dict[str, Any]:
    """The stored T1 results (computed when missing, where the store is writable)."""
    config = T1Config.for_profile(profile)
    return run_units(config, _units(config), _run_unit, combine=_combine)
