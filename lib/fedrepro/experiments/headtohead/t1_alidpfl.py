"""ALI-DPFL on task T1, **not private as run** (:mod:`fedrepro.headtohead.alidpfl`): the same
protocol as the other algorithms (:func:`fedrepro.experiments.headtohead.t1.tune_and_run`: 12
configurations tuned on the validation records, the selected one run on three seeds), at every
ε of the main uplink budget, stored apart from the ranking of the private algorithms because
its estimate reports are released without accounting.

Its grid is DPFL's (step, clipping, and the average local steps τ̄ in place of DPFL's fixed τ),
so that the two differ only by the adaptive τ and the reports it needs.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead.t1 import T1Config, records, tune_and_run
from fedrepro.headtohead.alidpfl import ALIDPFL

__all__ = ["GRID", "T1ALIConfig", "load_t1_alidpfl"]

#: ALI-DPFL's 12 configurations (DPFL's grid with τ̄ for τ; step varies fastest).
GRID: tuple[ALIDPFL, ...] = tuple(ALIDPFL(lr=lr, clip=clip, mean_steps=tau)
                                  for tau, clip, lr in itertools.product((3, 10), (0.3, 1.0), (0.3, 1.0, 3.0)))


@dataclasses.dataclass(frozen=True)
class T1ALIConfig(ExperimentConfig):
    """ALI-DPFL at every ε of the main budget of the T1 protocol of ``profile``."""

    part = "headtohead"
    experiment = "t1-alidpfl"
    verify_rtol = 1e-3
    verify_atol = 1e-6
    verify_note = "as the T1 grid: float32 products under noise; a near-tie in the tuning could select another configuration"
    verify_units = 1

    profile: str = "paper"

    def __post_init__(self) -> None:
        check_profile(self.profile)

    def protocol(self) -> T1Config:
        return T1Config.for_profile(self.profile)


def _units(config: T1ALIConfig) -> list[str]:
    return [f"eps-{e:g}" for e in config.protocol().epsilons]


def _run_unit(config: T1ALIConfig, unit: str) -> dict[str, Any]:
    protocol = config.protocol()
    grid = GRID[:protocol.grid_size]
    return {"algorithm": "ali-dpfl", **tune_and_run(protocol, grid, float(unit.removeprefix("eps-")),
                                                    protocol.budget_bits)}


def _combine(config: T1ALIConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    protocol = config.protocol()
    out, tuning = [], []
    for unit in _units(config):
        u = units[unit]
        out += records(protocol, "ali-dpfl", u)
        tuning.append({"algorithm": "ali-dpfl", "epsilon_target": u["epsilon_target"],
                       "uplink_budget_bits": u["uplink_budget_bits"], "selected": u["selected"],
                       "candidates": u["tuning"]})
    return {"records": out, "tuning": tuning}


def load_t1_alidpfl(profile: str = "paper") -> dict[str, Any]:
    """The stored ALI-DPFL runs on T1 (computed when missing, where the store is writable)."""
    config = T1ALIConfig(profile=profile)
    return run_units(config, _units(config), _run_unit, combine=_combine)
