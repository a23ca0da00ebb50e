"""The fair T2 tuning table and the final grid of its selections (issue 50, item 1): the runs
of :mod:`fedrepro.experiments.headtohead.t2_fair` merged with T2's stored tuning runs of the
same configurations, the validation argmax, and the selections at every ε of T2's main
budget on T2's seeds (``headtohead/t2-fair``). An algorithm whose fair selection has the
hyper-parameters of its old T2 selection reads its cells from the stored ``headtohead/t2``
(the same function of the same inputs); ``make verify`` recomputes the new cells only.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2, t2_alidpfl
from fedrepro.experiments.headtohead.t1 import _config_dict, _parse, unit_name
from fedrepro.experiments.headtohead.t2_fair import (
    GRIDS,
    OLD_EXPERIMENT,
    PRIVATE,
    T2FairTuningConfig,
    load_new_tuning,
    old_index,
)
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["T2FairConfig", "fair_tuning", "load_old_tunings", "fair_selection", "final_config", "final_units",
           "records_of", "compute_fair"]


def _old_candidates(cfg: T2FairTuningConfig, algorithm: str, old: dict[str, Any]) -> list[dict[str, Any] | None]:
    out = []
    for tuning in old["tuning"]:
        if tuning["algorithm"] == algorithm:
            out = tuning["candidates"]
    if not out:
        raise ValueError(f"the old tuning holds no {algorithm!r}")
    return out


def fair_tuning(cfg: T2FairTuningConfig, new: dict[str, Any], old: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The fair tuning table: every algorithm's ``grid_size`` configurations (each with the
    experiment it was read from) and the validation argmax (the first on a tie; a diverged run
    scores nothing), from the new runs ``new`` (:func:`load_new_tuning`) and the stored old
    tunings ``old`` (by experiment name)."""
    out = []
    for a in cfg.algorithms:
        cands = []
        for k in range(cfg.grid_size):
            j = old_index(cfg, a, GRIDS[a][k])
            if j is None:
                run = {key: v for key, v in new["units"][f"{a}_cfg-{k:02d}"].items() if key not in ("algorithm", "index")}
                source = cfg.experiment
            else:
                run = dict(_old_candidates(cfg, a, old[OLD_EXPERIMENT[a]])[j])
                source = OLD_EXPERIMENT[a]
            cands.append({**run, "source": source})
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf for c in cands]
        out.append({"algorithm": a, "epsilon_target": cfg.protocol(a).tuning_epsilon,
                    "uplink_budget_bits": cfg.protocol(a).budget_bits, "selected": int(np.argmax(scores)),
                    "candidates": cands})
    return {"tuning": out}


def load_old_tunings(cfg: T2FairTuningConfig) -> dict[str, dict[str, Any]]:
    """T2's stored tunings the fair table reads (by experiment name)."""
    out = {}
    if set(cfg.algorithms) & set(PRIVATE):
        out["t2-tuning"] = t2.load_t2_tuning(cfg.profile)
    if "ali-dpfl" in cfg.algorithms:
        out["t2-alidpfl-tuning"] = t2_alidpfl.load_t2_alidpfl_tuning(cfg.profile, cfg.ali_budget_bits)
    return out


def fair_selection(profile: str = "paper") -> dict[str, Any]:
    """The fair tuning table of ``profile`` (the stored old tunings and the new runs; computed
    when missing, where the store is writable)."""
    cfg = T2FairTuningConfig.for_profile(profile)
    return fair_tuning(cfg, load_new_tuning(cfg), load_old_tunings(cfg))


# --------------------------------------------------------------------------- the final grid


@dataclasses.dataclass(frozen=True)
class T2FairConfig(ExperimentConfig):
    """The fair selections at every ε of T2's main budget on T2's seeds. ``selected`` pairs
    each algorithm with its index in :data:`GRIDS`; ``reused`` names the algorithms whose fair
    selection is their old T2 selection (their cells are read from ``headtohead/t2``, not
    units). :func:`compute_fair` fills both from the tuning, so that a unit is a function of
    its config alone."""

    part = "headtohead"
    experiment = "t2-fair"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("as T2: float32 convolutions under noise move the last bits; a test accuracy moves by a "
                   "record or two (1e-4 each)")
    verify_units = 1

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()
    reused: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        for name, k in self.selected:
            if name not in PRIVATE or not 0 <= k < 12:
                raise ValueError(f"selected must pair a private algorithm with an index of GRIDS, got {(name, k)!r}")
        if set(self.reused) - {n for n, _ in self.selected}:
            raise ValueError(f"reused must name selected algorithms, got {self.reused!r}")

    def protocol(self) -> t2.T2Config:
        """T2's grid of the profile."""
        return t2.T2Config.for_profile(self.profile)


def final_units(cfg: T2FairConfig) -> list[str]:
    p = cfg.protocol()
    return [unit_name(a, e, p.budget_bits) for a, _ in cfg.selected if a not in cfg.reused for e in p.epsilons]


def _run_final_unit(cfg: T2FairConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = _parse(unit)
    p = cfg.protocol()
    k = dict(cfg.selected)[name]
    chosen = GRIDS[name][k]
    _, final_problem = t2._problems(p)
    runs = []
    for seed in p.seeds:
        r = alg.run(final_problem, chosen, epsilon=epsilon, delta=p.delta,
                    uplink_budget_bits=t2.capped_budget(budget, chosen, final_problem.dim, p.max_rounds),
                    clients_per_round=N_CLIENTS, seed=seed, eval_rounds=3)
        runs.append({"seed": seed, "noise_multiplier": r["noise_multiplier"], "epsilon_spent": r["epsilon_spent"],
                     "epsilon_spent_rdp": r["epsilon_spent_rdp"], "rounds": r["rounds"], "rounds_run": r["rounds_run"],
                     "uplink_bits": r["uplink_bits"], "downlink_bits": r["downlink_bits"],
                     "message_bits": r["message_bits"], "participations": r["participations"],
                     "eval_rounds": r["eval_rounds"], "test_accuracy": r["test_accuracy"],
                     "test_loss": r["train_loss"], "sampled_records": r["sampled_records"],
                     "diverged": r["diverged"]})
    return {"algorithm": name, "epsilon_target": epsilon, "uplink_budget_bits": budget, "selected": k,
            "config": _config_dict(chosen), "runs": runs}


def _combine_final(cfg: T2FairConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = []
    for unit in final_units(cfg):
        out += t2.records(cfg.protocol(), units[unit])
    return {"records": out}


def _reusable(tuning: dict[str, Any], old_tuning: dict[str, Any], algorithm: str) -> bool:
    """Whether ``algorithm``'s fair selection has the hyper-parameters of its old selection."""
    fair = next(t for t in tuning["tuning"] if t["algorithm"] == algorithm)
    old = next(t for t in old_tuning["tuning"] if t["algorithm"] == algorithm)
    return fair["candidates"][fair["selected"]]["config"] == old["candidates"][old["selected"]]["config"]


def final_config(profile: str, tuning: dict[str, Any], old_tuning: dict[str, Any]) -> T2FairConfig:
    """The final grid of the fair ``tuning`` (:func:`fair_tuning`) against T2's stored
    ``old_tuning``."""
    chosen = tuple((t["algorithm"], int(t["selected"])) for t in tuning["tuning"] if t["algorithm"] in PRIVATE)
    reused = tuple(a for a, _ in chosen if _reusable(tuning, old_tuning, a))
    return T2FairConfig(profile=profile, selected=chosen, reused=reused)


def records_of(cfg: T2FairConfig, new: dict[str, Any], old: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of the fair grid at the main budget: the new cells ``new`` and, for the
    algorithms ``cfg.reused``, the stored T2 records ``old`` at the main budget's ε."""
    p = cfg.protocol()
    keep = [r for r in old["records"] if r["algorithm"] in cfg.reused and r["uplink_budget_bits"] == p.budget_bits
            and r["epsilon_target"] in p.epsilons]
    return keep + list(new["records"])


def compute_fair(profile: str = "paper") -> dict[str, Any]:
    """The fair T2 table's records (its tuning first), from the store or computed."""
    tuning = fair_selection(profile)
    old_tuning = t2.load_t2_tuning(profile)
    cfg = final_config(profile, tuning, old_tuning)
    units = final_units(cfg)
    new = run_units(cfg, units, _run_final_unit, combine=_combine_final) if units else {"records": []}
    old = t2.load_t2(profile) if cfg.reused else {"records": []}
    return {"tuning": tuning, "records": records_of(cfg, new, old)}

