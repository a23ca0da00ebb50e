"""ALI-DPFL under the public code's closed-form τ* rule: the R_s < R_c cells of Tables II–IV.

A reading of the claims that ALI-DPFL beats every fixed τ (C01, C02, C05, C20, C21): the
paper's rule (the G(τ) search of Theorem 2) is replaced by the rule of its public code
(:mod:`fedrepro.alidpfl.closed_form_tau`), and nothing else changes: the same data, seeds,
budgets, draws and evaluation as the ALI-DPFL runs of
:mod:`fedrepro.experiments.alidpfl.tables` (spec reading), so each run is compared with
the fixed-τ runs of the same seed already stored there.

One result per seed (``closed-form-tau-seed<k>``, the seeds of :data:`SEEDS`, as the tables);
units ``ali-<table>-eps<ε>``, one closed-form run per cell with R_s < R_c (each resumable
through checkpoints). This module only trains; the verdicts are in
:mod:`fedrepro.chapters.alidpfl.closed_form_effects`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from fedrepro.alidpfl.budget import Budgets
from fedrepro.alidpfl.closed_form_training import train_closed_form
from fedrepro.alidpfl.training import RunPlan
from fedrepro.core.cache import ExperimentConfig, code_hash, config_hash, result_path, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.alidpfl import tables as experiments

__all__ = ["ClosedFormConfig", "SEEDS", "units", "run_unit", "combine", "load_closed_form", "checkpoint_dir"]



#: the seeds of the main tables (``tables-seed<k>.json``).
SEEDS: tuple[int, ...] = (0, 1, 2)


@dataclasses.dataclass(frozen=True)
class ClosedFormConfig(ExperimentConfig):
    """Every R_s < R_c cell of Tables II–IV under the closed-form τ*, for one seed."""

    part: ClassVar[str] = "alidpfl"
    experiment: ClassVar[str] = "closed-form-tau"
    verify_rtol: ClassVar[float] = experiments.TablesConfig.verify_rtol
    verify_atol: ClassVar[float] = experiments.TablesConfig.verify_atol
    verify_note: ClassVar[str] = "float32 training on a CPU, as the tables; one unit (the shortest run) recomputed"
    verify_units: ClassVar[int | None] = 1

    profile: str = "paper"
    seed: int = 0

    def result_name(self) -> str:
        base = f"closed-form-tau-seed{self.seed}"
        return base if self.profile == "paper" else f"{base}-{self.profile}"


def _cells(profile: str) -> list[dict[str, Any]]:
    return [c for c in experiments.cells(experiments.TablesConfig(profile=profile)) if c["rounds"] < c["iterations"]]


def units(cfg: ClosedFormConfig) -> list[str]:
    """The cells in the tables' order (the first unit is the shortest run)."""
    return [f"ali-{c['table']}-eps{c['epsilon']}" for c in _cells(cfg.profile)]


def checkpoint_dir(cfg: ClosedFormConfig, unit: str) -> Path:
    """Checkpoints of ``unit``, keyed by the config and the code of this module's import graph."""
    return (result_path(cfg).parent / ".checkpoints"
            / f"{cfg.result_name()}-{config_hash(cfg)[:16]}-{code_hash([__name__])[:16]}" / unit)


def run_unit(cfg: ClosedFormConfig, unit: str) -> dict[str, Any]:
    """One closed-form ALI-DPFL run: the plan of the tables' ALI-DPFL unit of that cell and
    seed, with the stacked engine."""
    check_profile(cfg.profile)
    seed = cfg.seed
    (c,) = [c for c in _cells(cfg.profile) if f"ali-{c['table']}-eps{c['epsilon']}" == unit]
    tables_cfg = experiments.TablesConfig(profile=cfg.profile, seed=seed)
    plan = RunPlan(Budgets(c["epsilon"], c["rounds"], c["iterations"]), tau=None, eval_rounds=(),
                   curve_every=10 if cfg.profile == "paper" else 1, seed=seed,
                   checkpoint_every=5 if cfg.profile == "paper" else 1, method="stacked")
    return train_closed_form(plan, experiments._data(tables_cfg), checkpoint_dir=checkpoint_dir(cfg, unit)).as_dict()


def combine(cfg: ClosedFormConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{cell key: accuracy %}``, the τ sequences, and every run."""
    acc: dict[str, float] = {}
    taus: dict[str, list[int]] = {}
    for unit, res in done.items():
        c = next(c for c in _cells(cfg.profile) if f"ali-{c['table']}-eps{c['epsilon']}" == unit)
        key = f"{c['table']}|{c['condition']}|{float(c['epsilon'])}"
        acc[key] = 100 * float(res["final_accuracy"])
        taus[key] = [int(t) for t in res["taus"]]
    return {"accuracy": acc, "taus": taus, "runs": done}


def load_closed_form(profile: str = "paper", seed: int = 0) -> dict[str, Any]:
    """The stored result of ``seed`` (computed, resumably, if missing or stale)."""
    cfg = ClosedFormConfig(profile=profile, seed=seed)
    return run_units(cfg, units(cfg), run_unit, combine=combine)
