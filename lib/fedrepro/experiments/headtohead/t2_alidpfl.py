"""ALI-DPFL on task T2, **not private as run** (:mod:`fedrepro.headtohead.cnn_alidpfl`), through
T2's protocol (:mod:`fedrepro.experiments.headtohead.t2`): its 12 configurations tuned once at the
reference cell on the validation records, the selected one run on three seeds at every ε of
the main uplink budget; stored apart from the ranking of the private algorithms because its
estimate reports are released without accounting.

Its grid is T2's DPFL grid (step, clipping, and the average local steps τ̄ in place of DPFL's
fixed τ), so that the two differ only by the adaptive τ and the reports it needs. Two results,
as T2's: ``headtohead/t2-alidpfl-tuning`` (one unit per configuration) and
``headtohead/t2-alidpfl`` (one unit per ε; its config holds the selection, so that a unit is a
function of its config alone).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.cnn_alidpfl import ALIDPFLCNN
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["GRID", "T2ALITuningConfig", "T2ALIConfig", "load_t2_alidpfl_tuning", "load_t2_alidpfl"]

#: ALI-DPFL's 12 configurations on T2 (T2's DPFL grid with τ̄ for τ; step varies fastest).
GRID: tuple[ALIDPFLCNN, ...] = tuple(ALIDPFLCNN(lr=lr, clip=clip, mean_steps=tau)
                                     for tau, clip, lr in itertools.product((2, 5), (0.1, 1.0), (0.25, 0.5, 1.0)))

_NOTE = ("as T2: float32 convolutions under noise move the last bits; an accuracy moves by a record or two")


@dataclasses.dataclass(frozen=True)
class T2ALITuningConfig(ExperimentConfig):
    """ALI-DPFL's tuning runs at the reference cell of the T2 protocol of ``profile``
    (``budget_bits``: the protocol's main budget unless given; an ALI-DPFL message costs three
    float32 models, more than the quick profile's budget pays for)."""

    part = "headtohead"
    experiment = "t2-alidpfl-tuning"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = _NOTE
    verify_units = 1

    profile: str = "paper"
    budget_bits: float | None = None

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if self.budget_bits is not None and not self.budget_bits > 0:
            raise ValueError(f"budget_bits must be positive, got {self.budget_bits!r}")

    def protocol(self) -> t2.T2Config:
        base = t2.T2Config.for_profile(self.profile)
        return base if self.budget_bits is None else dataclasses.replace(base, budget_bits=self.budget_bits)


@dataclasses.dataclass(frozen=True)
class T2ALIConfig(ExperimentConfig):
    """ALI-DPFL's selected configuration (index ``selected`` of :data:`GRID`) at every ε of the
    main budget of the T2 protocol of ``profile``, on its seeds."""

    part = "headtohead"
    experiment = "t2-alidpfl"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = _NOTE
    verify_units = 1

    profile: str = "paper"
    budget_bits: float | None = None
    selected: int = 0

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if self.budget_bits is not None and not self.budget_bits > 0:
            raise ValueError(f"budget_bits must be positive, got {self.budget_bits!r}")
        if not 0 <= self.selected < len(GRID):
            raise ValueError(f"selected must index GRID (0..{len(GRID) - 1}), got {self.selected!r}")

    def protocol(self) -> t2.T2Config:
        base = t2.T2Config.for_profile(self.profile)
        return base if self.budget_bits is None else dataclasses.replace(base, budget_bits=self.budget_bits)


def _tuning_units(cfg: T2ALITuningConfig) -> list[str]:
    return [f"cfg-{k:02d}" for k in range(cfg.protocol().grid_size)]


def _run_tuning_unit(cfg: T2ALITuningConfig, unit: str) -> dict[str, Any]:
    protocol = cfg.protocol()
    candidate = GRID[int(unit.removeprefix("cfg-"))]
    tuning_problem, _ = t2._problems(protocol)
    r = alg.run(tuning_problem, candidate, epsilon=protocol.tuning_epsilon, delta=protocol.delta,
                uplink_budget_bits=t2.capped_budget(protocol.budget_bits, candidate, tuning_problem.dim,
                                                    protocol.max_rounds),
                clients_per_round=N_CLIENTS, seed=protocol.tuning_config().tuning_seed, eval_rounds=1)
    return {"config": t2._config_dict(candidate), "validation_accuracy": float(r["test_accuracy"][-1]),
            "noise_multiplier": r["noise_multiplier"], "rounds": r["rounds"], "diverged": r["diverged"]}


def _combine_tuning(cfg: T2ALITuningConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    protocol = cfg.protocol()
    cands = [units[u] for u in _tuning_units(cfg)]
    scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf for c in cands]
    return {"tuning": [{"algorithm": "ali-dpfl", "epsilon_target": protocol.tuning_epsilon,
                        "uplink_budget_bits": protocol.budget_bits, "selected": int(np.argmax(scores)),
                        "candidates": cands}]}


def _units(cfg: T2ALIConfig) -> list[str]:
    return [f"eps-{e:g}" for e in cfg.protocol().epsilons]


def _run_unit(cfg: T2ALIConfig, unit: str) -> dict[str, Any]:
    protocol = cfg.protocol()
    epsilon = float(unit.removeprefix("eps-"))
    chosen = GRID[cfg.selected]
    _, final_problem = t2._problems(protocol)
    runs = []
    for seed in protocol.seeds:
        r = alg.run(final_problem, chosen, epsilon=epsilon, delta=protocol.delta,
                    uplink_budget_bits=t2.capped_budget(protocol.budget_bits, chosen, final_problem.dim,
                                                        protocol.max_rounds),
                    clients_per_round=N_CLIENTS, seed=seed, eval_rounds=3)
        runs.append({"seed": seed, "noise_multiplier": r["noise_multiplier"], "epsilon_spent": r["epsilon_spent"],
                     "epsilon_spent_rdp": r["epsilon_spent_rdp"], "rounds": r["rounds"], "rounds_run": r["rounds_run"],
                     "uplink_bits": r["uplink_bits"], "downlink_bits": r["downlink_bits"],
                     "message_bits": r["message_bits"], "participations": r["participations"],
                     "eval_rounds": r["eval_rounds"], "test_accuracy": r["test_accuracy"],
                     "test_loss": r["train_loss"], "sampled_records": r["sampled_records"],
                     "diverged": r["diverged"]})
    return {"algorithm": "ali-dpfl", "epsilon_target": epsilon, "uplink_budget_bits": protocol.budget_bits,
            "selected": cfg.selected, "config": t2._config_dict(chosen), "runs": runs}


def _combine(cfg: T2ALIConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    protocol = cfg.protocol()
    out = []
    for unit in _units(cfg):
        out += t2.records(protocol, units[unit])
    return {"records": out}


def load_t2_alidpfl_tuning(profile: str = "paper", budget_bits: float | None = None) -> dict[str, Any]:
    """ALI-DPFL's stored T2 tuning runs (computed when missing, where the store is writable)."""
    cfg = T2ALITuningConfig(profile=profile, budget_bits=budget_bits)
    return run_units(cfg, _tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning)


def load_t2_alidpfl(profile: str = "paper", budget_bits: float | None = None) -> dict[str, Any]:
    """ALI-DPFL's stored T2 runs, its tuning first (computed when missing, where the store is
    writable)."""
    tuning = load_t2_alidpfl_tuning(profile, budget_bits)
    cfg = T2ALIConfig(profile=profile, budget_bits=budget_bits, selected=int(tuning["tuning"][0]["selected"]))
    return run_units(cfg, _units(cfg), _run_unit, combine=_combine)
