"""Tables II–IV of ALI-DPFL (Fashion-MNIST columns), computed with prefix sharing.

Cells (:data:`fedrepro.alidpfl.budget.PAPER_CELLS`): every table column pairs a budget ε (R_c
by the accountant) with R_s ∈ {158, 231, 317}. Methods: fixed τ ∈ {1..5} (Tables II, III) or
{1, 3, 5, 7, 9} (Table IV), and ALI-DPFL.

Units of :func:`fedrepro.core.cache.run_units` (each resumable through checkpoints under
``<store>/alidpfl/.checkpoints/``, :func:`checkpoint_dir`):

* ``tau-<τ>``: one fixed-τ run per τ (one seed), long enough for every cell that uses τ,
  evaluated on the full test set at each cell's stopping round min(R_s, ⌊R_c/τ⌋): with one
  seed a fixed-τ run is the same trajectory for every budget (spec decision 6);
* ``ali-<table>-eps<ε>``: one ALI-DPFL run per cell with R_s < R_c (Tables III, IV). With R_s ≥ R_c
  (Table II) T(τ) is the same for every τ, so τ* = 1 in every round and the ALI-DPFL cell is
  the τ = 1 run (same seed, same draws).

``profile="quick"`` divides every budget by 100 and keeps 100 records per client.

``reading``: ``"spec"`` (the default: the spec's literal reading, q = 0.015 and the noisy
sum divided by q·|D_i| = 90) or ``"authors_code"``, the emulation of the public code's
defaults that moved accuracy most in the reading study (q = 0.05 and the gradient divisor 64;
the R_s, R_c of every cell kept, so the ε it actually spends is larger than the column's, see
:func:`spent_epsilon`). ALI-DPFL's clients estimate F_i and ∇F_i on ``ESTIMATE_SAMPLES``
records each (our choice, for compute: the paper's F_i is the full local loss).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from fedrepro.alidpfl.budget import PAPER_CELLS, PAPER_ROUNDS, Budgets, fixed_tau_stop, privacy_iterations
from fedrepro.alidpfl.setting import PAPER, FederatedSetting, build_clients
from fedrepro.alidpfl.training import RunPlan, train
from fedrepro.core.cache import ExperimentConfig, code_hash, config_hash, result_path, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.privacy.budget import epsilon_after_steps

__all__ = ["TablesConfig", "TABLE_READINGS", "ESTIMATE_SAMPLES", "cells", "units", "run_unit", "combine",
           "load_tables", "spent_epsilon", "checkpoint_dir"]



#: records per client on which ALI-DPFL's clients evaluate F_i, ∇F_i (our choice, for compute).
ESTIMATE_SAMPLES = 128


#: reading → RunPlan overrides.
TABLE_READINGS: dict[str, dict[str, Any]] = {
    "spec": {},
    "authors_code": {"q": 0.05, "divisor": 64.0},
}


_TAUS = {"II": (1, 2, 3, 4, 5), "III": (1, 2, 3, 4, 5), "IV": (1, 3, 5, 7, 9)}


@dataclasses.dataclass(frozen=True)
class TablesConfig(ExperimentConfig):
    """The Fashion-MNIST columns of Tables II–IV for one seed."""

    part: ClassVar[str] = "alidpfl"
    experiment: ClassVar[str] = "tables"
    verify_rtol: ClassVar[float] = 0.05
    verify_atol: ClassVar[float] = 0.02
    verify_note: ClassVar[str] = "float32 training on a CPU: kernels differ between machines in the last bits"
    verify_units: ClassVar[int | None] = 1

    profile: str = "paper"
    seed: int = 0
    rule: str = "loss"
    reading: str = "spec"

    def __post_init__(self) -> None:
        if self.reading not in TABLE_READINGS:
            raise ValueError(f"reading must be one of {sorted(TABLE_READINGS)}, got {self.reading!r}")

    @property
    def scale(self) -> int:
        return 1 if self.profile == "paper" else 100

    def result_name(self) -> str:
        base = f"tables-seed{self.seed}" if self.reading == "spec" else f"tables-{self.reading}-seed{self.seed}"
        return base if self.profile == "paper" else f"{base}-{self.profile}"


def cells(cfg: TablesConfig) -> list[dict[str, Any]]:
    """Every column: table, condition, ε, R_s, R_c (both divided by the profile's scale)."""
    out = []
    for table, condition, epsilons in PAPER_CELLS:
        for eps, rounds in zip(epsilons, PAPER_ROUNDS, strict=True):
            rc = privacy_iterations(eps, PAPER.q, PAPER.sigma, PAPER.delta)
            out.append({"table": table, "condition": condition, "epsilon": eps,
                        "rounds": max(1, rounds // cfg.scale), "iterations": max(1, rc // cfg.scale)})
    return out


def spent_epsilon(cfg: TablesConfig, iterations: int) -> float:
    """The ε a client actually spends in ``iterations`` DP-SGD steps of ``cfg``'s reading (RDP
    accountant, basic conversion, δ = 1e-5): the column's ε for ``"spec"``, more for
    ``"authors_code"`` (q = 0.05 with the spec's iteration counts)."""
    q = float(TABLE_READINGS[cfg.reading].get("q", PAPER.q))
    return float(epsilon_after_steps(iterations, q, PAPER.sigma, PAPER.delta)[0])


def units(cfg: TablesConfig) -> list[str]:
    taus = sorted({t for ts in _TAUS.values() for t in ts})
    ali = [f"ali-{c['table']}-eps{c['epsilon']}" for c in cells(cfg)
           if c["rounds"] < c["iterations"]]
    return [f"tau-{t}" for t in taus] + ali


def _data(cfg: TablesConfig):
    return build_clients(FederatedSetting(), np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xDA7A])),
                         subset=100 if cfg.profile == "quick" else None)


def checkpoint_dir(cfg: TablesConfig, unit: str) -> Path:
    """Where ``unit`` keeps its checkpoints: keyed by the config and by the code of this
    module's import graph, so that a run resumes only from a checkpoint written by the same
    code (after any change of that code it starts again, as the unit files of
    :func:`fedrepro.core.cache.run_units` do)."""
    return (result_path(cfg).parent / ".checkpoints"
            / f"{cfg.result_name()}-{config_hash(cfg)[:16]}-{code_hash([__name__])[:16]}" / unit)


def run_unit(cfg: TablesConfig, unit: str) -> dict[str, Any]:
    """One training run (see the module docstring)."""
    check_profile(cfg.profile)
    folder = checkpoint_dir(cfg, unit)
    curve_every = 10 if cfg.profile == "paper" else 1
    # the quick profile checkpoints every round, so that the tests exercise checkpointing
    checkpoint_every = 20 if cfg.profile == "paper" else 1
    if unit.startswith("tau-"):
        tau = int(unit[4:])
        stops = sorted({fixed_tau_stop(Budgets(c["epsilon"], c["rounds"], c["iterations"]), tau)[0]
                        for c in cells(cfg) if tau in _TAUS[c["table"]] and tau <= c["iterations"]})
        plan = RunPlan(Budgets(1.0, max(stops), max(stops) * tau), tau=tau, eval_rounds=tuple(stops),
                       curve_every=curve_every, seed=cfg.seed, checkpoint_every=checkpoint_every,
                       **TABLE_READINGS[cfg.reading])
    else:
        _, table, eps = unit.split("-", 2)
        (c,) = [c for c in cells(cfg) if c["table"] == table and f"eps{c['epsilon']}" == eps
                and c["rounds"] < c["iterations"]]
        plan = RunPlan(Budgets(c["epsilon"], c["rounds"], c["iterations"]), tau=None, eval_rounds=(),
                       curve_every=curve_every, rule=cfg.rule, seed=cfg.seed, checkpoint_every=checkpoint_every,
                       estimate_samples=ESTIMATE_SAMPLES, **TABLE_READINGS[cfg.reading])
    return train(plan, _data(cfg), checkpoint_dir=folder).as_dict()


def combine(cfg: TablesConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Accuracy (%) per cell and method, ALI-DPFL's τ sequences, and every run's history."""
    table: dict[str, dict[str, float]] = {}
    taus: dict[str, list[int]] = {}
    for c in cells(cfg):
        key = f"{c['table']}|{c['condition']}|{c['epsilon']}"
        row: dict[str, float] = {}
        for tau in _TAUS[c["table"]]:
            if tau > c["iterations"]:
                continue
            res = done[f"tau-{tau}"]
            stop = fixed_tau_stop(Budgets(c["epsilon"], c["rounds"], c["iterations"]), tau)[0]
            j = list(res["eval_rounds"]).index(stop)
            row[f"tau={tau}"] = 100 * float(res["eval_accuracy"][j])
        ali = done.get(f"ali-{c['table']}-eps{c['epsilon']}") if c["rounds"] < c["iterations"] else None
        if ali is None:
            row["ALI-DPFL"] = row["tau=1"]
            taus[key] = [1] * min(c["rounds"], c["iterations"])
        else:
            row["ALI-DPFL"] = 100 * float(ali["final_accuracy"])
            taus[key] = [int(t) for t in ali["taus"]]
        table[key] = row
    return {"table": table, "taus": taus, "runs": done}


def load_tables(profile: str = "paper", seed: int = 0, reading: str = "spec") -> dict[str, Any]:
    """The stored result (computed, resumably, if missing or stale)."""
    cfg = TablesConfig(profile=profile, seed=seed, reading=reading)
    return run_units(cfg, units(cfg), run_unit, combine=combine)
