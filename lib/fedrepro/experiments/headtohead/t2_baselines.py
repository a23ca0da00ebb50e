"""Task T2's baselines (:mod:`fedrepro.headtohead.cnn_baselines`): what the threat model costs
on the ALI-DPFL CNN. T2's protocol (:mod:`fedrepro.experiments.headtohead.t2`: one tuning cell,
12 configurations per baseline scored on the validation records, the selected configuration
run on the seeds at every cell and scored on the test set, the round cap, δ = 1e-5, the same
accountant, q = 0.015), applied to:

* ``<algorithm>-ceiling`` for each private T2 algorithm (dp-fedsgd, dpfl, fedpaq, fedpaq-q,
  fed-plt): the algorithm with clipping and noise off, tuned at the main budget (ε = ∞) and run
  at every T2 budget, by the T2 driver under the same capped uplink budget. Grid
  (:data:`CEILING_GRIDS`): T2's grid with its privacy axis removed. Where T2 tunes the
  clipping norm C (dp-fedsgd, dpfl, fedpaq) that axis becomes a step-size factor of the same
  length, {0.1, 1} or {0.1, 0.3, 1}: without clipping, the CNN's per-record gradients are
  far larger than C = 0.1, so a ceiling needs smaller steps than its private algorithm, and
  each ceiling still tunes 12 configurations. Where T2's grid holds no privacy axis (fedpaq-q,
  fed-plt: their C is fixed) the ceiling tunes the same 12 configurations.
* ``central-dpsgd``: DP-SGD on the pooled training data by a trusted curator, record-level
  (ε, δ), at every ε of the main budget (it sends nothing: reported at the main budget). The
  budget axis becomes a fixed number of expected passes over the data, ``central_epochs``
  (paper: 2, T = 133 steps at q = 0.015, about the local computation of a float32 private
  algorithm at the main budget: 30 rounds of 5 steps at q = 0.015 is 2.25 passes). Grid
  (:data:`CENTRAL_GRID`): DP-FedSGD's T2 grid, η ∈ {0.25, 0.5, 1, 2} × C ∈ {0.1, 0.3, 1}.
* ``dp-fedavg-client``: client-level DP-FedAvg with a trusted server, clients sampled by
  Poisson at q_c = 10/10 (T2's clients per round: every client joins every round), client-level
  (ε, δ) at every ε of the main budget, under the capped main budget in expectation. Grid
  (:data:`CLIENT_GRID`): FedAvg's T2 steps η ∈ {0.03, 0.1, 0.3} × local steps ∈ {1, 5} ×
  update clipping S ∈ {0.1, 1} (local Poisson rate 0.015).

The tuning runs at ε = ``tuning_epsilon`` (paper: 2) for the two private baselines. Two
results, as T2: ``headtohead/t2-baselines-tuning`` (one unit per configuration) and
``headtohead/t2-baselines`` (one unit per baseline and cell, with the selection in its
config), whose records have exactly the fields of T2's (:func:`fedrepro.experiments.headtohead.t2.records`).

Quick profile: T2's quick protocol (40 records per client, 200 test records, 2
configurations, one seed, ε = 4) and 1 pass for central DP-SGD; about a minute.

Paper profile (stored), from the repository root:
``FEDREPRO_WORKERS=<cores> .venv/bin/python -c "from fedrepro.experiments.headtohead.t2_baselines
import load_t2_baselines; load_t2_baselines('paper')"`` (the units run in parallel on
``FEDREPRO_WORKERS`` processes; the CNN engine of T2 runs on the CPU). 84 tuning units, then
25 cells. Cost, measured at the paper profile on a shared 2-core AMD EPYC machine under a load
of about 12: one tuning run of ``dp-fedsgd-ceiling`` (30 rounds of 10 one-step clients) 73 s,
of ``dp-fedavg-client`` (the same, clipped and noised at the server) 157 s, of
``central-dpsgd`` (133 steps on about 810 records) 641 s. From these: the tuning ≈ 6.7 h
(ceilings 3.7, central 2.1, client level 0.9), the cells ≈ 7.6 h (ceilings at the three
budgets with their test evaluations 2.0, central 2.7, client level 1.2), about 14 h of one
such core in all. That machine's CNN step is 8-10 times slower than T2's benchmark figure
(0.033 s per client DP-SGD step on an idle core), so about 1.5 h on one idle core, or 45 min
on two workers. Measured on a 2-core AMD EPYC machine with ``FEDREPRO_WORKERS=2`` and
little else running (2026-11-29): the 84 tuning runs in 34 min, the first 14 cells (the
ceilings at the two smaller budgets and four at the main one) in 18 min, the last five (central
DP-SGD at every ε, about 8 min each on one worker) in 20.5 min.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead.t1 import _config_dict, _grid, _parse, unit_name
from fedrepro.experiments.headtohead.t2 import T2Config, capped_budget, records
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import cnn_baselines as cb
from fedrepro.headtohead.t2_task import N_CLIENTS, t2_problems

__all__ = ["CEILING_GRIDS", "CENTRAL_GRID", "CLIENT_GRID", "BASELINES", "T2BaselinesTuningConfig",
           "T2BaselinesConfig", "runner_of", "grid_of", "compute", "load_t2_baselines_tuning", "load_t2_baselines"]


def _scaled(lrs: tuple[float, ...], factors: tuple[float, ...]) -> tuple[float, ...]:
    """Every step of ``lrs`` times every factor, sorted (the clipping axis as a step factor)."""
    return tuple(sorted({round(a * f, 12) for a in lrs for f in factors}))


#: The 12 configurations of each ceiling (module docstring: the privacy axis removed).
CEILING_GRIDS: dict[str, tuple[Any, ...]] = {
    "dp-fedsgd-ceiling": _grid(cb.DPFLCeilingCNN, lr=_scaled((0.25, 0.5, 1.0, 2.0), (0.1, 0.3, 1.0))),
    "dpfl-ceiling": _grid(cb.DPFLCeilingCNN, lr=_scaled((0.25, 0.5, 1.0), (0.1, 1.0)), local_steps=(2, 5)),
    "fedpaq-ceiling": _grid(cb.FedPAQCeilingCNN, lr=_scaled((0.25, 0.5, 1.0), (0.1, 1.0)), local_steps=(1, 5)),
    "fedpaq-q-ceiling": _grid(cb.FedPAQCeilingCNN, lr=(0.25, 0.5, 1.0), local_steps=(1, 5), levels=(2, 16)),
    "fed-plt-ceiling": _grid(cb.FedPLTCeilingCNN, lr=(0.25, 0.5, 1.0), rho=(1.0, 10.0), local_steps=(2, 5)),
}
#: Central DP-SGD's 12 configurations (``epochs`` is set by the config's ``central_epochs``).
CENTRAL_GRID: tuple[cb.CentralDPSGDCNN, ...] = _grid(cb.CentralDPSGDCNN, lr=(0.25, 0.5, 1.0, 2.0),
                                                    clip=(0.1, 0.3, 1.0))
#: Client-level DP-FedAvg's 12 configurations.
CLIENT_GRID: tuple[cb.DPFedAvgClientCNN, ...] = _grid(cb.DPFedAvgClientCNN, lr=(0.03, 0.1, 0.3),
                                                     local_steps=(1, 5), clip=(0.1, 1.0))
#: Every baseline's grid, in the order of the units.
BASELINES: dict[str, tuple[Any, ...]] = {**CEILING_GRIDS, "dp-fedavg-client": CLIENT_GRID,
                                         "central-dpsgd": CENTRAL_GRID}

_QUICK_EPOCHS = 1.0
_PAPER_EPOCHS = 2.0


def _check(cfg: Any) -> None:
    check_profile(cfg.profile)
    if not cfg.central_epochs > 0:
        raise ValueError(f"central_epochs must be positive, got {cfg.central_epochs!r}")


@dataclasses.dataclass(frozen=True)
class T2BaselinesTuningConfig(ExperimentConfig):
    """The tuning runs of T2's baselines: every configuration of every baseline once, at
    T2's reference cell, on the tuning problem (module docstring)."""

    part = "headtohead"
    experiment = "t2-baselines-tuning"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("as T2's tuning: float32 convolutions under noise move the last bits of the model; a validation "
                   "accuracy moves by a record or two")
    verify_units = 2

    profile: str = "paper"
    central_epochs: float = _PAPER_EPOCHS

    def __post_init__(self) -> None:
        _check(self)

    @classmethod
    def for_profile(cls, profile: str) -> T2BaselinesTuningConfig:
        check_profile(profile)
        return cls(profile=profile, central_epochs=_QUICK_EPOCHS if profile == "quick" else _PAPER_EPOCHS)

    def protocol(self) -> T2Config:
        """The T2 protocol the baselines follow (its cells, budgets, seeds, split, grid size, cap)."""
        return T2Config.for_profile(self.profile)


@dataclasses.dataclass(frozen=True)
class T2BaselinesConfig(ExperimentConfig):
    """The T2 baselines' cells: the configuration selected by :class:`T2BaselinesTuningConfig`
    at every cell, on T2's seeds, scored on the test set. ``selected`` pairs each baseline
    with the index of its selected configuration (:func:`compute` fills it from the tuning
    result)."""

    part = "headtohead"
    experiment = "t2-baselines"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("as T2: float32 convolutions under noise move the last bits of the model; a test accuracy "
                   "moves by a record or two (1e-4 each)")
    verify_units = 2

    profile: str = "paper"
    central_epochs: float = _PAPER_EPOCHS
    selected: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        _check(self)
        size = self.protocol().grid_size
        for name, k in self.selected:
            if name not in BASELINES or not 0 <= k < size:
                raise ValueError(f"selected must pair a baseline with a configuration index below {size}, "
                                 f"got {(name, k)!r}")

    @classmethod
    def for_profile(cls, profile: str) -> T2BaselinesConfig:
        check_profile(profile)
        return cls(profile=profile, central_epochs=_QUICK_EPOCHS if profile == "quick" else _PAPER_EPOCHS)

    def protocol(self) -> T2Config:
        """The T2 protocol the baselines follow."""
        return T2Config.for_profile(self.profile)

    def tuning_config(self) -> T2BaselinesTuningConfig:
        """The tuning experiment this grid selects from."""
        return T2BaselinesTuningConfig(profile=self.profile, central_epochs=self.central_epochs)


def runner_of(name: str) -> Callable[..., dict[str, Any]]:
    """The driver of baseline ``name``: T2's driver (:func:`fedrepro.headtohead.algorithms.run`)
    for the ceilings."""
    if name == "central-dpsgd":
        return cb.run_central
    if name == "dp-fedavg-client":
        return cb.run_client_level
    if name in CEILING_GRIDS:
        return alg.run
    raise ValueError(f"name must be one of {tuple(BASELINES)}, got {name!r}")


def grid_of(config: T2BaselinesConfig | T2BaselinesTuningConfig, name: str) -> tuple[Any, ...]:
    """The configurations tuned for baseline ``name`` (the first ``grid_size`` of T2's
    protocol; central DP-SGD's with the config's ``central_epochs``)."""
    if name not in BASELINES:
        raise ValueError(f"name must be one of {tuple(BASELINES)}, got {name!r}")
    grid = BASELINES[name][:config.protocol().grid_size]
    if name == "central-dpsgd":
        grid = tuple(dataclasses.replace(g, epochs=config.central_epochs) for g in grid)
    return grid


def _problems(protocol: T2Config):
    return t2_problems(protocol.per_client, protocol.validation_fraction, 0, protocol.test_records)


def _one_run(protocol: T2Config, name: str, candidate: Any, problem: Any, epsilon: float | None, budget: float,
             seed: int, eval_rounds: int) -> dict[str, Any]:
    """One run of baseline ``name``: the ceilings and client-level DP-FedAvg under T2's round
    cap (:func:`fedrepro.experiments.headtohead.t2.capped_budget`), central DP-SGD unbound."""
    if name != "central-dpsgd":
        budget = capped_budget(budget, candidate, problem.dim, protocol.max_rounds)
    return runner_of(name)(problem, candidate, epsilon=epsilon, delta=protocol.delta, uplink_budget_bits=budget,
                           clients_per_round=N_CLIENTS, seed=seed, eval_rounds=eval_rounds)


def _epsilon_of(name: str, epsilon: float) -> float | None:
    return None if name in CEILING_GRIDS else epsilon


# --------------------------------------------------------------------------- tuning


def _tuning_units(cfg: T2BaselinesTuningConfig) -> list[str]:
    return [f"{a}_cfg-{k:02d}" for a in BASELINES for k in range(cfg.protocol().grid_size)]


def _run_tuning_unit(cfg: T2BaselinesTuningConfig, unit: str) -> dict[str, Any]:
    name, k = unit.split("_cfg-")
    candidate = grid_of(cfg, name)[int(k)]
    p = cfg.protocol()
    tuning_problem, _ = _problems(p)
    r = _one_run(p, name, candidate, tuning_problem, _epsilon_of(name, p.tuning_epsilon), p.budget_bits,
                 p.tuning_config().tuning_seed, 1)
    return {"algorithm": name, "index": int(k), "config": _config_dict(candidate),
            "validation_accuracy": float(r["test_accuracy"][-1]), "noise_multiplier": r["noise_multiplier"],
            "epsilon_spent": r["epsilon_spent"], "rounds": r["rounds"], "diverged": r["diverged"]}


def _combine_tuning(cfg: T2BaselinesTuningConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per baseline: its candidates and the selected one (the best validation accuracy, the
    first on a tie; a diverged run scores nothing)."""
    p = cfg.protocol()
    out = []
    for name in BASELINES:
        cands = [units[f"{name}_cfg-{k:02d}"] for k in range(p.grid_size)]
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf
                  for c in cands]
        eps = _epsilon_of(name, p.tuning_epsilon)
        out.append({"algorithm": name, "epsilon_target": math.inf if eps is None else eps,
                    "uplink_budget_bits": p.budget_bits, "selected": int(np.argmax(scores)),
                    "candidates": [{k: v for k, v in c.items() if k not in ("algorithm", "index")} for c in cands]})
    return {"tuning": out}


def _load_tuning(cfg: T2BaselinesTuningConfig) -> dict[str, Any]:
    return run_units(cfg, _tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning)


def load_t2_baselines_tuning(profile: str = "paper") -> dict[str, Any]:
    """The stored tuning runs of T2's baselines (computed when missing, where the store is writable)."""
    return _load_tuning(T2BaselinesTuningConfig.for_profile(profile))


# --------------------------------------------------------------------------- the cells


def _budgets(protocol: T2Config) -> list[float]:
    return sorted({protocol.budget_bits, *protocol.sweep_budgets})


def _units(cfg: T2BaselinesConfig) -> list[str]:
    """The ceilings (each at every budget, the smallest first), then client-level DP-FedAvg,
    then central DP-SGD (each at every ε of the main budget)."""
    p = cfg.protocol()
    out = [unit_name(name, None, b) for b in _budgets(p) for name in CEILING_GRIDS]
    for name in ("dp-fedavg-client", "central-dpsgd"):
        out += [unit_name(name, e, p.budget_bits) for e in sorted(p.epsilons)]
    return out


def _run_unit(cfg: T2BaselinesConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = _parse(unit)
    choice = dict(cfg.selected)
    if name not in choice:
        raise ValueError(f"no selected configuration for {name!r}: compute the cells through compute()")
    best = choice[name]
    chosen = grid_of(cfg, name)[best]
    p = cfg.protocol()
    _, final_problem = _problems(p)
    runs = []
    for seed in p.seeds:
        r = _one_run(p, name, chosen, final_problem, epsilon, budget, seed, 3)
        runs.append({"seed": seed, "noise_multiplier": r["noise_multiplier"], "epsilon_spent": r["epsilon_spent"],
                     "epsilon_spent_rdp": r["epsilon_spent_rdp"], "rounds": r["rounds"], "rounds_run": r["rounds_run"],
                     "uplink_bits": r["uplink_bits"], "downlink_bits": r["downlink_bits"],
                     "message_bits": r["message_bits"], "participations": r["participations"],
                     "eval_rounds": r["eval_rounds"], "test_accuracy": r["test_accuracy"],
                     "test_loss": r["train_loss"], "sampled_records": r["sampled_records"],
                     "diverged": r["diverged"]})
    return {"algorithm": name, "epsilon_target": math.inf if epsilon is None else epsilon,
            "uplink_budget_bits": budget, "selected": best, "config": _config_dict(chosen), "runs": runs}


def _combine(cfg: T2BaselinesConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """T2's records (the same fields) of every baseline cell."""
    out = []
    for unit in _units(cfg):
        out += records(cfg.protocol(), units[unit])
    return {"records": out}


def with_selection(cfg: T2BaselinesConfig, tuning: dict[str, Any]) -> T2BaselinesConfig:
    """``cfg`` with the configurations the tuning result selected."""
    return dataclasses.replace(cfg, selected=tuple((t["algorithm"], int(t["selected"])) for t in tuning["tuning"]))


def compute(cfg: T2BaselinesConfig) -> dict[str, Any]:
    """The results of the baselines' cells ``cfg`` (its tuning first), from the store or computed."""
    cells = with_selection(cfg, _load_tuning(cfg.tuning_config()))
    return run_units(cells, _units(cells), _run_unit, combine=_combine)


def load_t2_baselines(profile: str = "paper") -> dict[str, Any]:
    """The stored T2 baselines (the tuning first; computed when missing, where the store is writable)."""
    return compute(T2BaselinesConfig.for_profile(profile))
