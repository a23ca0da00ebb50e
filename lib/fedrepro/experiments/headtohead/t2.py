"""Task T2 of the head-to-head part: the ALI-DPFL CNN on Fashion-MNIST, 10 clients with
label shards (:mod:`fedrepro.headtohead.t2_task`), every algorithm of T1 on it
(:mod:`fedrepro.headtohead.cnn_algorithms`).

The protocol is T1's (:mod:`fedrepro.experiments.headtohead.t1`) with two savings that a CNN
round's cost (≈ 0.33 s per local DP-SGD step of the 10 clients on one core,
``benchmarks/alidpfl_round.py``) forces, each the same for every algorithm:

* **one tuning cell** — every algorithm's 12 configurations (:data:`GRIDS`) run once on the
  tuning problem at the reference cell (ε = ``tuning_epsilon``, the main budget; the
  non-private ceiling at the main budget), scored by the validation accuracy at the end of
  the run; the selected configuration is then run at every cell (T1 tunes at every cell).
  Two results: ``headtohead/t2-tuning`` (one unit per configuration) and ``headtohead/t2``
  (one unit per algorithm and cell, 3 seeds, on the test set).
* **a round cap** — a run stops at ``max_rounds`` rounds even where its budget would pay for
  more (the quantized FedPAQ: a 2-level message costs 2.3 bits per coordinate, so the main
  budget would pay for 14 times the rounds of a float32 message). Rounds within the budget
  are one of the hyper-parameters the issue lists; the cap binds only the quantized FedPAQ.

Everything else — cells, δ = 1e-5, the accountant, exact calibration per run, the records —
is T1's. The privacy cost of tuning is not accounted (as in the literature).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead.t1 import _config_dict, _grid, _parse, unit_name
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import cnn_algorithms as cnn
from fedrepro.headtohead.t2_task import N_CLIENTS, t2_problems

__all__ = ["GRIDS", "T2Config", "T2TuningConfig", "cells", "capped_budget", "selected", "records",
           "load_t2_tuning", "with_selection", "compute", "load_t2"]

#: The 12 configurations of every algorithm (the same tuning budget for all); the sampling
#: rate is ALI-DPFL's q = 0.015 (an expected batch of 90 records) throughout.
GRIDS: dict[str, tuple[Any, ...]] = {
    "fedavg": _grid(cnn.FedAvgCNN, lr=(0.03, 0.1, 0.3), local_steps=(1, 5), rate=(0.015, 0.05)),
    "dp-fedsgd": _grid(cnn.DPFLCNN, lr=(0.25, 0.5, 1.0, 2.0), clip=(0.1, 0.3, 1.0)),
    "dpfl": _grid(cnn.DPFLCNN, lr=(0.25, 0.5, 1.0), clip=(0.1, 1.0), local_steps=(2, 5)),
    "fedpaq": _grid(cnn.PrivateFedPAQCNN, lr=(0.25, 0.5, 1.0), clip=(0.1, 1.0), local_steps=(1, 5)),
    "fedpaq-q": _grid(cnn.PrivateFedPAQCNN, lr=(0.25, 0.5, 1.0), local_steps=(1, 5), levels=(2, 16)),
    "fed-plt": _grid(cnn.FedPLTCNN, lr=(0.25, 0.5, 1.0), rho=(1.0, 10.0), local_steps=(2, 5)),
}

def _check_common(cfg: Any) -> None:
    check_profile(cfg.profile)
    unknown = set(cfg.algorithms) - set(GRIDS)
    if unknown or not cfg.algorithms:
        raise ValueError(f"algorithms must be among {tuple(GRIDS)}, got {cfg.algorithms!r}")
    if not 1 <= cfg.grid_size <= 12:
        raise ValueError(f"grid_size must lie in [1, 12], got {cfg.grid_size!r}")
    if not cfg.budget_bits > 0 or not cfg.tuning_epsilon > 0:
        raise ValueError("budget_bits and tuning_epsilon must be positive")
    if cfg.max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {cfg.max_rounds!r}")


@dataclasses.dataclass(frozen=True)
class T2TuningConfig(ExperimentConfig):
    """The tuning runs of T2: every configuration of every algorithm once, at the reference
    cell, on the tuning problem (module docstring)."""

    part = "headtohead"
    experiment = "t2-tuning"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("float32 convolutions under noise: the kernel moves the last bits of the model; a validation "
                   "accuracy moves by a record or two (1/6,000 each)")
    verify_units = 2

    profile: str = "paper"
    budget_bits: float = 5.6e9
    tuning_epsilon: float = 2.0
    delta: float = 1e-5
    max_rounds: int = 45
    tuning_seed: int = 1000
    grid_size: int = 12
    per_client: int | None = None
    test_records: int | None = None
    validation_fraction: float = 0.1
    algorithms: tuple[str, ...] = tuple(GRIDS)

    def __post_init__(self) -> None:
        _check_common(self)

    @classmethod
    def for_profile(cls, profile: str) -> T2TuningConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", budget_bits=4e8, tuning_epsilon=4.0, max_rounds=4, grid_size=2,
                       per_client=40, test_records=200)
        return cls()


@dataclasses.dataclass(frozen=True)
class T2Config(ExperimentConfig):
    """The T2 grid of cells: the configuration selected by :class:`T2TuningConfig` at every
    (ε, budget) cell, on ``seeds``, scored on the test set (module docstring). ``selected``
    pairs each algorithm with the index of its selected configuration: :func:`compute` fills
    it from the tuning result, so that a unit of the grid is a function of its config alone
    (``make verify`` recomputes one without the 72 tuning runs)."""

    part = "headtohead"
    experiment = "t2"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("float32 convolutions under noise: the kernel moves the last bits of the model; a test "
                   "accuracy moves by a record or two (1e-4 each)")
    verify_units = 2

    profile: str = "paper"
    epsilons: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    budget_bits: float = 5.6e9
    sweep_epsilons: tuple[float, ...] = (1.0, 4.0)
    sweep_budgets: tuple[float, ...] = (1.4e9, 2.8e9)
    tuning_epsilon: float = 2.0
    delta: float = 1e-5
    max_rounds: int = 45
    seeds: tuple[int, ...] = (0, 1, 2)
    grid_size: int = 12
    per_client: int | None = None
    test_records: int | None = None
    validation_fraction: float = 0.1
    algorithms: tuple[str, ...] = tuple(GRIDS)
    selected: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        _check_common(self)
        for name, k in self.selected:
            if name not in GRIDS or not 0 <= k < self.grid_size:
                raise ValueError(f"selected must pair an algorithm with a configuration index below grid_size, "
                                 f"got {(name, k)!r}")
        if not self.epsilons or any(not e > 0 for e in self.epsilons + self.sweep_epsilons):
            raise ValueError(f"epsilons must be positive, got {self.epsilons + self.sweep_epsilons!r}")
        if any(not b > 0 for b in self.sweep_budgets):
            raise ValueError("budgets must be positive")
        if not self.seeds:
            raise ValueError("seeds must not be empty")

    @classmethod
    def for_profile(cls, profile: str) -> T2Config:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", epsilons=(4.0,), budget_bits=4e8, sweep_epsilons=(4.0,),
                       sweep_budgets=(2e8,), tuning_epsilon=4.0, max_rounds=4, seeds=(0,), grid_size=2,
                       per_client=40, test_records=200)
        return cls()

    def tuning_config(self) -> T2TuningConfig:
        """The tuning experiment this grid selects from."""
        return T2TuningConfig(profile=self.profile, budget_bits=self.budget_bits,
                              tuning_epsilon=self.tuning_epsilon, delta=self.delta, max_rounds=self.max_rounds,
                              grid_size=self.grid_size, per_client=self.per_client,
                              test_records=self.test_records, validation_fraction=self.validation_fraction,
                              algorithms=self.algorithms)


def _problems(cfg: T2Config | T2TuningConfig):
    return t2_problems(cfg.per_client, cfg.validation_fraction, 0, cfg.test_records)


def capped_budget(budget: float, algorithm: Any, dim: int, max_rounds: int) -> float:
    """The uplink budget a run is given: ``budget``, or the bits of ``max_rounds`` rounds of
    all clients when that is less (the round cap, module docstring)."""
    return min(float(budget), float(max_rounds * N_CLIENTS * algorithm.message_bits(dim)))


# --------------------------------------------------------------------------- tuning


def _tuning_units(cfg: T2TuningConfig) -> list[str]:
    return [f"{a}_cfg-{k:02d}" for a in cfg.algorithms for k in range(cfg.grid_size)]


def _run_tuning_unit(cfg: T2TuningConfig, unit: str) -> dict[str, Any]:
    name, k = unit.split("_cfg-")
    candidate = GRIDS[name][int(k)]
    tuning_problem, _ = _problems(cfg)
    epsilon = None if name == "fedavg" else cfg.tuning_epsilon
    r = alg.run(tuning_problem, candidate, epsilon=epsilon, delta=cfg.delta,
                uplink_budget_bits=capped_budget(cfg.budget_bits, candidate, tuning_problem.dim, cfg.max_rounds),
                clients_per_round=N_CLIENTS, seed=cfg.tuning_seed, eval_rounds=1)
    return {"algorithm": name, "index": int(k), "config": _config_dict(candidate),
            "validation_accuracy": float(r["test_accuracy"][-1]), "noise_multiplier": r["noise_multiplier"],
            "rounds": r["rounds"], "diverged": r["diverged"]}


def _combine_tuning(cfg: T2TuningConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for name in cfg.algorithms:
        cands = [units[f"{name}_cfg-{k:02d}"] for k in range(cfg.grid_size)]
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf
                  for c in cands]
        out.append({"algorithm": name, "epsilon_target": math.inf if name == "fedavg" else cfg.tuning_epsilon,
                    "uplink_budget_bits": cfg.budget_bits, "selected": int(np.argmax(scores)),
                    "candidates": [{k: v for k, v in c.items() if k not in ("algorithm", "index")}
                                   for c in cands]})
    return {"tuning": out}


def _load_tuning(cfg: T2TuningConfig) -> dict[str, Any]:
    return run_units(cfg, _tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning)


def load_t2_tuning(profile: str = "paper") -> dict[str, Any]:
    """The stored T2 tuning runs (computed when missing, where the store is writable)."""
    return _load_tuning(T2TuningConfig.for_profile(profile))


def selected(tuning: dict[str, Any], algorithm: str) -> int:
    """The index of the configuration the tuning selected for ``algorithm``."""
    for t in tuning["tuning"]:
        if t["algorithm"] == algorithm:
            return int(t["selected"])
    raise KeyError(f"no tuning for {algorithm!r}")


# --------------------------------------------------------------------------- the grid


def cells(cfg: T2Config) -> list[tuple[float, float]]:
    """The (ε, budget) cells of the private algorithms: the ε sweep at the main budget, then
    the budget sweep."""
    out = [(e, cfg.budget_bits) for e in cfg.epsilons]
    out += [(e, b) for e in cfg.sweep_epsilons for b in cfg.sweep_budgets]
    return list(dict.fromkeys(out))


def _units(cfg: T2Config) -> list[str]:
    """Every unit; a cheap one first and last (``make verify`` spot-checks those two)."""
    budgets = sorted({b for _, b in cells(cfg)})
    private = [a for a in cfg.algorithms if a != "fedavg"]
    out = [unit_name("fedavg", None, b) for b in budgets] if "fedavg" in cfg.algorithms else []
    for e, b in sorted(cells(cfg), key=lambda c: (-c[1], c[0])):
        out += [unit_name(a, e, b) for a in private]
    if out and private:
        last = unit_name(private[0], min(cfg.sweep_epsilons), min(budgets))
        if last in out:
            out.remove(last)
            out.append(last)
    return out


def _run_unit(cfg: T2Config, unit: str) -> dict[str, Any]:
    name, epsilon, budget = _parse(unit)
    choice = dict(cfg.selected)
    if name not in choice:
        raise ValueError(f"no selected configuration for {name!r}: compute the grid through compute()")
    best = choice[name]
    chosen = GRIDS[name][best]
    _, final_problem = _problems(cfg)
    runs = []
    for seed in cfg.seeds:
        r = alg.run(final_problem, chosen, epsilon=epsilon, delta=cfg.delta,
                    uplink_budget_bits=capped_budget(budget, chosen, final_problem.dim, cfg.max_rounds),
                    clients_per_round=N_CLIENTS, seed=seed, eval_rounds=3)
        runs.append({"seed": seed, "noise_multiplier": r["noise_multiplier"], "epsilon_spent": r["epsilon_spent"],
                     "epsilon_spent_rdp": r["epsilon_spent_rdp"], "rounds": r["rounds"], "rounds_run": r["rounds_run"],
                     "uplink_bits": r["uplink_bits"], "downlink_bits": r["downlink_bits"],
                     "message_bits": r["message_bits"], "participations": r["participations"],
                     "eval_rounds": r["eval_rounds"], "test_accuracy": r["test_accuracy"],
                     "test_loss": r["train_loss"], "sampled_records": r["sampled_records"],
                     "diverged": r["diverged"]})
    return {"algorithm": name, "epsilon_target": math.inf if epsilon is None else epsilon,
            "uplink_budget_bits": budget, "selected": best, "config": _config_dict(chosen), "runs": runs}


def records(cfg: T2Config, cell: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of one computed cell: one per seed, with the selected configuration and
    its calibration (the fields of T1's records; the loss is the test loss)."""
    return [{"task": "T2", "algorithm": cell["algorithm"], "seed": r["seed"], "epsilon_target": cell["epsilon_target"],
             "epsilon_spent": r["epsilon_spent"], "epsilon_spent_rdp": r["epsilon_spent_rdp"], "delta": cfg.delta,
             "uplink_budget_bits": cell["uplink_budget_bits"], "uplink_bits": r["uplink_bits"],
             "downlink_bits": r["downlink_bits"], "message_bits": r["message_bits"], "rounds": r["rounds"],
             "rounds_run": r["rounds_run"], "participations": r["participations"],
             "noise_multiplier": r["noise_multiplier"], "test_accuracy": float(r["test_accuracy"][-1]),
             "test_loss": float(r["test_loss"][-1]), "accuracy_curve": r["test_accuracy"],
             "eval_rounds": r["eval_rounds"], "sampled_records": r["sampled_records"], "diverged": r["diverged"],
             "config": cell["config"]} for r in cell["runs"]]


def _combine(cfg: T2Config, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for unit in _units(cfg):
        out += records(cfg, units[unit])
    return {"records": out}


def with_selection(cfg: T2Config, tuning: dict[str, Any]) -> T2Config:
    """``cfg`` with the configurations the tuning result selected."""
    return dataclasses.replace(cfg, selected=tuple((a, selected(tuning, a)) for a in cfg.algorithms))


def compute(cfg: T2Config) -> dict[str, Any]:
    """The results of any T2 grid ``cfg`` (its tuning first), from the store or computed."""
    grid = with_selection(cfg, _load_tuning(cfg.tuning_config()))
    return run_units(grid, _units(grid), _run_unit, combine=_combine)


def load_t2(profile: str = "paper") -> dict[str, Any]:
    """The stored T2 results (the tuning first; computed when missing, where the store is
    writable)."""
    return compute(T2Config.for_profile(profile))
