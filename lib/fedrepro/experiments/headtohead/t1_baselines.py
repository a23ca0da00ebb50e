"""Task T1's baselines (:mod:`fedrepro.headtohead.baselines`): what the threat model costs.
The T1 protocol of :mod:`fedrepro.experiments.headtohead.t1` (the same tuning split and
seed, 12 configurations per algorithm, selection on the validation records, final runs on the
same seeds scored on the test set, δ = 1e-5, the same accountant), applied to:

* ``<algorithm>-ceiling`` for each private T1 algorithm (dp-fedsgd, dpfl, fedpaq, fedpaq-q,
  fed-plt): the algorithm with clipping and noise off, one cell per T1 budget (ε = ∞), run by
  the T1 driver under the same uplink budget. Grid (:data:`CEILING_GRIDS`): T1's grid with its
  privacy axis removed. Where T1 tunes the clipping norm (dp-fedsgd, dpfl, fedpaq), the
  dropped axis's two values are replaced by a finer step axis, so that every ceiling still
  tunes 12 configurations: the three step sizes a, b, c of T1 become the six a, 2a, b, 2b,
  c, 2c (the same range, one value above each). Where T1's grid holds no privacy axis
  (fedpaq-q: step, local steps, levels; fed-plt: step, ρ, local steps; their clipping norm is
  fixed) the ceiling tunes the same 12 configurations.
* ``central-dpsgd``: DP-SGD on the pooled training data by a trusted curator, record-level
  (ε, δ) at every ε of the main budget (reported at the main budget: the uplink budget does
  not bind a curator, who sends nothing). The budget axis is replaced by a fixed number of
  expected passes over the data, :data:`CENTRAL_EPOCHS` (10): T = 10/q steps. Grid
  (:data:`CENTRAL_GRID`): step η ∈ {0.3, 1, 3} × clipping C ∈ {0.3, 1} (T1's clipping values)
  × sampling rate q ∈ {0.05, 0.02} (T = 200 or 500 steps).
* ``dp-fedavg-client``: client-level DP-FedAvg with a trusted server, clients sampled by
  Poisson at q = 10/100 (T1's 10 clients per round in expectation), client-level (ε, δ) at
  every ε of the main budget, under the main uplink budget in expectation (the realised
  uplink is reported). Grid (:data:`CLIENT_GRID`): FedAvg's step η ∈ {0.1, 0.3, 1} × local
  steps ∈ {1, 5} × update clipping S ∈ {0.3, 1} (local Poisson rate 0.2).

Each cell gives records with exactly the fields of T1's (:func:`records`), the algorithm field
naming the baseline. One unit per (baseline, cell), through :func:`fedrepro.core.cache.run_units`:
the ceilings first.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead.t1 import T1Config, _config_dict, _grid, combine_cells, unit_name
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import baselines as base
from fedrepro.headtohead.tasks import t1_problems

__all__ = ["CEILING_GRIDS", "CENTRAL_EPOCHS", "CENTRAL_GRID", "CLIENT_GRID", "BASELINES", "T1BaselinesConfig",
           "runner_of", "grid_of", "tune_and_run", "load_t1_baselines"]


def _lrs(a: float, b: float, c: float) -> tuple[float, ...]:
    """T1's three step sizes refined to six: a, 2a, b, 2b, c, 2c."""
    return (a, 2 * a, b, 2 * b, c, 2 * c)


#: The 12 configurations of each ceiling (module docstring: the privacy axis removed).
CEILING_GRIDS: dict[str, tuple[Any, ...]] = {
    "dp-fedsgd-ceiling": _grid(base.DPFLCeiling, lr=_lrs(0.3, 1.0, 3.0), rate=(0.05, 0.2)),
    "dpfl-ceiling": _grid(base.DPFLCeiling, lr=_lrs(0.3, 1.0, 3.0), local_steps=(3, 10)),
    "fedpaq-ceiling": _grid(base.FedPAQCeiling, lr=_lrs(0.3, 1.0, 3.0), local_steps=(1, 5)),
    "fedpaq-q-ceiling": _grid(base.FedPAQCeiling, lr=(0.3, 1.0, 3.0), local_steps=(1, 5), levels=(2, 16)),
    "fed-plt-ceiling": _grid(base.FedPLTCeiling, lr=(0.1, 0.3, 1.0), rho=(1.0, 10.0), local_steps=(2, 5)),
}
#: Expected passes over the pooled data of central DP-SGD (its replacement of the budget axis).
CENTRAL_EPOCHS: float = 10.0
#: Central DP-SGD's 12 configurations (the step varies fastest; the cheaper rate first).
CENTRAL_GRID: tuple[base.CentralDPSGD, ...] = _grid(base.CentralDPSGD, lr=(0.3, 1.0, 3.0), clip=(0.3, 1.0),
                                                   rate=(0.05, 0.02), epochs=(CENTRAL_EPOCHS,))
#: Client-level DP-FedAvg's 12 configurations.
CLIENT_GRID: tuple[base.DPFedAvgClient, ...] = _grid(base.DPFedAvgClient, lr=(0.1, 0.3, 1.0), local_steps=(1, 5),
                                                    clip=(0.3, 1.0))
#: Every baseline's grid, in the order of the units.
BASELINES: dict[str, tuple[Any, ...]] = {**CEILING_GRIDS, "dp-fedavg-client": CLIENT_GRID,
                                         "central-dpsgd": CENTRAL_GRID}


@dataclasses.dataclass(frozen=True)
class T1BaselinesConfig(ExperimentConfig):
    """The baselines of the T1 protocol of ``profile`` (module docstring)."""

    part = "headtohead"
    experiment = "t1-baselines"
    verify_rtol = 1e-3
    verify_atol = 1e-6
    verify_note = ("as the T1 grid: float32 products under noise move the last bits of the accuracies; a near-tie "
                   "in the tuning could select another configuration on another machine")
    verify_units = 2

    profile: str = "paper"

    def __post_init__(self) -> None:
        check_profile(self.profile)

    @classmethod
    def for_profile(cls, profile: str) -> T1BaselinesConfig:
        return cls(profile=check_profile(profile))

    def protocol(self) -> T1Config:
        """The T1 protocol the baselines follow (its ε grid, budgets, seeds, split, grid size)."""
        return T1Config.for_profile(self.profile)


def runner_of(name: str) -> Callable[..., dict[str, Any]]:
    """The driver of baseline ``name``: the T1 driver for the ceilings."""
    if name == "central-dpsgd":
        return base.run_central
    if name == "dp-fedavg-client":
        return base.run_client_level
    if name in CEILING_GRIDS:
        return alg.run
    raise ValueError(f"name must be one of {tuple(BASELINES)}, got {name!r}")


def grid_of(config: T1BaselinesConfig, name: str) -> tuple[Any, ...]:
    """The configurations tuned for baseline ``name`` (the first ``grid_size`` of T1's protocol)."""
    if name not in BASELINES:
        raise ValueError(f"name must be one of {tuple(BASELINES)}, got {name!r}")
    return BASELINES[name][:config.protocol().grid_size]


def _budgets(protocol: T1Config) -> list[float]:
    return sorted({protocol.budget_bits, *protocol.sweep_budgets})


def _units(config: T1BaselinesConfig) -> list[str]:
    """The ceilings (each at every budget, the smallest first), then client-level DP-FedAvg,
    then central DP-SGD (each at every ε of the main budget, the largest ε last: a cheap unit
    at both ends for ``make verify``)."""
    p = config.protocol()
    out = [unit_name(name, None, b) for b in _budgets(p) for name in CEILING_GRIDS]
    for name in ("dp-fedavg-client", "central-dpsgd"):
        out += [unit_name(name, e, p.budget_bits) for e in sorted(p.epsilons)]
    return out


def _parse(unit: str) -> tuple[str, float | None, float]:
    name, eps, bits = unit.split("_")
    e = eps.removeprefix("eps-")
    return name, (None if e == "none" else float(e)), float(bits.removeprefix("bits-"))


def tune_and_run(protocol: T1Config, grid: tuple[Any, ...], epsilon: float | None, budget: float,
                 runner: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """T1's protocol for one cell (:func:`fedrepro.experiments.headtohead.t1.tune_and_run`)
    with the driver ``runner`` (one with the signature of
    :func:`fedrepro.headtohead.algorithms.run`): every configuration of ``grid`` runs once on
    the tuning problem (seed ``tuning_seed``) and is scored on the validation records; the
    best (the first on a tie; a diverged run scores nothing) runs on the seeds on the final
    problem."""
    if not grid:
        raise ValueError("grid must hold at least one configuration")
    tuning_problem, final_problem = t1_problems(protocol.per_device, protocol.validation_fraction)
    common = {"epsilon": epsilon, "delta": protocol.delta, "uplink_budget_bits": budget,
              "clients_per_round": protocol.clients_per_round}
    tuned = []
    for candidate in grid:
        r = runner(tuning_problem, candidate, seed=protocol.tuning_seed, eval_rounds=1, **common)
        tuned.append({"config": _config_dict(candidate), "validation_accuracy": float(r["test_accuracy"][-1]),
                      "noise_multiplier": r["noise_multiplier"], "rounds": r["rounds"], "diverged": r["diverged"]})
    scores = [t["validation_accuracy"] if math.isfinite(t["validation_accuracy"]) else -math.inf for t in tuned]
    best = int(np.argmax(scores))
    keys = ("noise_multiplier", "epsilon_spent", "epsilon_spent_rdp", "rounds", "rounds_run", "uplink_bits",
            "downlink_bits", "message_bits", "participations", "eval_rounds", "test_accuracy", "train_loss",
            "sampled_records", "diverged")
    runs = []
    for seed in protocol.seeds:
        r = runner(final_problem, grid[best], seed=seed, **common)
        runs.append({"seed": seed, **{k: r[k] for k in keys}})
    return {"epsilon_target": math.inf if epsilon is None else epsilon, "uplink_budget_bits": budget,
            "tuning": tuned, "selected": best, "runs": runs}


def _run_unit(config: T1BaselinesConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = _parse(unit)
    return {"algorithm": name, **tune_and_run(config.protocol(), grid_of(config, name), epsilon, budget,
                                              runner_of(name))}


def _combine(config: T1BaselinesConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """T1's records (:func:`fedrepro.experiments.headtohead.t1.records`, the same fields) and
    tuning tables of every baseline cell."""
    return combine_cells(config.protocol(), [units[u] for u in _units(config)])


def load_t1_baselines(profile: str = "paper") -> dict[str, Any]:
    """The stored T1 baselines (computed when missing, where the store is writable)."""
    config = T1BaselinesConfig.for_profile(profile)
    return run_units(config, _units(config), _run_unit, combine=_combine)
