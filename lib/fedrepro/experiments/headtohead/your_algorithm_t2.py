"""A reader's algorithm through task T2's protocol (``python -m fedrepro.headtohead run
module:NAME --task t2``): the ALI-DPFL CNN on Fashion-MNIST, 10 clients.

T2 tunes once, not per cell (:mod:`fedrepro.experiments.headtohead.t2`): the first
``grid_size`` configurations of the reader's grid (T2's at the profile) each run once at T2's
reference cell on the tuning problem, through :func:`fedrepro.experiments.headtohead.t2_fair.tune_one`
(the call of T2's tuning unit), and are scored by the final validation accuracy; the best is
selected (a diverged or non-finite run is never selected; the first on a tie). The selected
configuration then runs on the seeds at every requested (ε, budget) cell on T2's final
problem, scored on the test set, under T2's round cap (:func:`t2.capped_budget`), exactly as
T2's grid unit runs the book's algorithms; its records are :func:`t2.records`.

Two results in the reader's store, as for T2: :class:`YourAlgorithmT2TuningConfig` (one unit
per configuration) and :class:`YourAlgorithmT2Config` (one unit per cell; the selected index
is part of its config, as :func:`t2.with_selection` puts it in T2's). Both hold the import path,
the class, the hyper-parameters and the hash of the algorithm's code
(:func:`fedrepro.headtohead.bring_your_own.algorithm_code`), so an edited algorithm is another
result; an interrupted run resumes at the unit it stopped in. No stored result of the book
imports this module.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from fedrepro.core import cache
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2
from fedrepro.experiments.headtohead.t1 import _config_dict, _parse, unit_name
from fedrepro.experiments.headtohead.t2_fair import tune_one
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import bring_your_own as byo
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["YourAlgorithmT2TuningConfig", "YourAlgorithmT2Config", "config_for", "tuning_units", "units",
           "select", "with_selection", "load_tuning", "load_your_algorithm", "is_stored", "load_t2_reference"]

#: The unit-name prefix of the reader's units.
_UNIT = "yours"


def _check_algorithm(cfg: Any) -> None:
    check_profile(cfg.profile)
    if not cfg.algorithm or not cfg.algorithm_class or not cfg.name:
        raise ValueError("algorithm, algorithm_class and name must be given")
    if not 1 <= len(cfg.grid) <= byo.MAX_GRID:
        raise ValueError(f"grid must hold 1 to {byo.MAX_GRID} configurations, got {len(cfg.grid)}")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:40] or "algorithm"


@dataclasses.dataclass(frozen=True)
class YourAlgorithmT2TuningConfig(ExperimentConfig):
    """The tuning runs of a reader's algorithm on T2 (module docstring)."""

    part = "headtohead"
    experiment = "your-algorithm-t2-tuning"
    verify_rtol = t2.T2TuningConfig.verify_rtol
    verify_atol = t2.T2TuningConfig.verify_atol
    verify_note = t2.T2TuningConfig.verify_note

    profile: str = "paper"
    #: The import path the reader gave (``module:NAME``).
    algorithm: str = ""
    #: ``module:QualName`` of the configurations' class.
    algorithm_class: str = ""
    #: The algorithm's ``name``.
    name: str = ""
    #: The hyper-parameters of every configuration, ``((field, value), ...)``.
    grid: tuple[tuple[tuple[str, Any], ...], ...] = ()
    algorithm_code: str = ""

    def __post_init__(self) -> None:
        _check_algorithm(self)

    def result_name(self) -> str:
        """``your-algorithm-t2-tuning-<name>-<profile>-<hash>``."""
        return f"{self.experiment}-{_slug(self.name)}-{self.profile}-{cache.config_hash(self)[:12]}"

    def protocol(self) -> t2.T2TuningConfig:
        """T2's tuning protocol at this profile."""
        return t2.T2TuningConfig.for_profile(self.profile)


@dataclasses.dataclass(frozen=True)
class YourAlgorithmT2Config(YourAlgorithmT2TuningConfig):
    """A reader's algorithm at the (ε, budget) cells ``epsilons`` × ``budgets`` of T2, its
    configuration ``selected`` (an index of ``grid``; -1 until the tuning chose it)."""

    experiment = "your-algorithm-t2"
    verify_rtol = t2.T2Config.verify_rtol
    verify_atol = t2.T2Config.verify_atol
    verify_note = t2.T2Config.verify_note

    epsilons: tuple[float, ...] = ()
    budgets: tuple[float, ...] = ()
    seeds: tuple[int, ...] = ()
    selected: int = -1

    def __post_init__(self) -> None:
        _check_algorithm(self)
        if not self.epsilons or any(not (isinstance(e, float | int) and 0 < e < math.inf) for e in self.epsilons):
            raise ValueError(f"epsilons must be positive finite numbers, got {self.epsilons!r}")
        if not self.budgets or any(not (isinstance(b, float | int) and 0 < b < math.inf) for b in self.budgets):
            raise ValueError(f"budgets must be positive finite numbers of bits, got {self.budgets!r}")
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be non-negative integers, got {self.seeds!r}")
        if not -1 <= self.selected < len(self.grid):
            raise ValueError(f"selected must be -1 or an index of grid (below {len(self.grid)}), got {self.selected!r}")

    def tuning(self) -> YourAlgorithmT2TuningConfig:
        """The tuning experiment this grid selects from."""
        return YourAlgorithmT2TuningConfig(profile=self.profile, algorithm=self.algorithm,
                                           algorithm_class=self.algorithm_class, name=self.name, grid=self.grid,
                                           algorithm_code=self.algorithm_code)

    def t2_config(self) -> t2.T2Config:
        """T2's grid config at this profile, with these seeds."""
        return dataclasses.replace(t2.T2Config.for_profile(self.profile), seeds=self.seeds)


def config_for(algorithm: str, *, profile: str = "paper", epsilons: tuple[float, ...] | None = None,
               budgets: tuple[float, ...] | None = None, seeds: tuple[int, ...] | None = None) -> YourAlgorithmT2Config:
    """The config of the algorithm named ``algorithm`` (``"module:NAME"``) at ``epsilons`` ×
    ``budgets`` on ``seeds``; each defaults to T2's at ``profile`` (its main ε sweep, its main
    budget, its seeds). Its configuration is not yet selected (:func:`load_your_algorithm`
    does it)."""
    reference = t2.T2Config.for_profile(check_profile(profile))
    grid = byo.configurations(byo.resolve(algorithm), algorithm)
    cls = type(grid[0])
    return YourAlgorithmT2Config(
        profile=profile, algorithm=algorithm, algorithm_class=byo.class_path(cls), name=str(grid[0].name),
        grid=tuple(byo.hyper_parameters(c) for c in grid), algorithm_code=byo.algorithm_code(cls),
        epsilons=tuple(float(e) for e in (reference.epsilons if epsilons is None else epsilons)),
        budgets=tuple(float(b) for b in ((reference.budget_bits,) if budgets is None else budgets)),
        seeds=tuple(int(s) for s in (reference.seeds if seeds is None else seeds)))


def _grid(cfg: YourAlgorithmT2TuningConfig) -> tuple[Any, ...]:
    """The configurations tuned: the first ``grid_size`` of T2 at this profile."""
    grid = tuple(byo.rebuild(cfg.algorithm_class, p) for p in cfg.grid)
    if byo.algorithm_code(type(grid[0])) != cfg.algorithm_code:
        raise RuntimeError(f"the code of {cfg.algorithm_class} changed since this config was made: its result "
                           "would not be the one its identity names (run the command again: it makes a new one)")
    return grid[:cfg.protocol().grid_size]


# --------------------------------------------------------------------------- tuning


def tuning_units(cfg: YourAlgorithmT2TuningConfig) -> list[str]:
    """One unit per configuration tuned: ``yours_cfg-<k>``."""
    return [f"{_UNIT}_cfg-{k:02d}" for k in range(min(len(cfg.grid), cfg.protocol().grid_size))]


def _run_tuning_unit(cfg: YourAlgorithmT2TuningConfig, unit: str) -> dict[str, Any]:
    k = int(unit.split("_cfg-")[1])
    return {"index": k, **tune_one(cfg.protocol(), _grid(cfg)[k])}


def _score(candidate: dict[str, Any]) -> float:
    v = candidate["validation_accuracy"]
    return v if math.isfinite(v) and not candidate["diverged"] else -math.inf


def select(candidates: list[dict[str, Any]]) -> int:
    """The index of the best validation accuracy (the first on a tie; a diverged or
    non-finite run is never selected unless every one is)."""
    scores = [_score(c) for c in candidates]
    return scores.index(max(scores))


def _combine_tuning(cfg: YourAlgorithmT2TuningConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """T2's tuning table (:func:`t2._combine_tuning`'s fields) for the reader's algorithm."""
    cands = [{k: v for k, v in done[u].items() if k != "index"} for u in tuning_units(cfg)]
    p = cfg.protocol()
    return {"tuning": [{"algorithm": cfg.name, "epsilon_target": p.tuning_epsilon,
                        "uplink_budget_bits": p.budget_bits, "selected": select(cands), "candidates": cands}]}


def load_tuning(cfg: YourAlgorithmT2TuningConfig, root: Path, *, progress: bool = True) -> dict[str, Any]:
    """The tuning runs of ``cfg`` in the store ``root`` (computed unit by unit when missing)."""
    return run_units(cfg, tuning_units(cfg), _run_tuning_unit, combine=_combine_tuning, root=root,
                     progress=progress)


# --------------------------------------------------------------------------- the cells


def units(cfg: YourAlgorithmT2Config) -> list[str]:
    """One unit per (ε, budget) cell, budget by budget."""
    return [unit_name(_UNIT, e, b) for b in dict.fromkeys(cfg.budgets) for e in dict.fromkeys(cfg.epsilons)]


def _run_unit(cfg: YourAlgorithmT2Config, unit: str) -> dict[str, Any]:
    """T2's grid unit (:func:`t2._run_unit`) for the reader's selected configuration."""
    if cfg.selected < 0:
        raise ValueError("selected: no configuration selected yet: compute the cells through load_your_algorithm()")
    _, epsilon, budget = _parse(unit)
    p = cfg.t2_config()
    chosen = _grid(cfg)[cfg.selected]
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
    return {"algorithm": cfg.name, "epsilon_target": epsilon, "uplink_budget_bits": budget,
            "selected": cfg.selected, "config": _config_dict(chosen), "runs": runs}


def _combine(cfg: YourAlgorithmT2Config, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """T2's records of every cell (:func:`t2.records`)."""
    out = []
    for unit in units(cfg):
        out += t2.records(cfg.t2_config(), done[unit])
    return {"records": out}


def with_selection(cfg: YourAlgorithmT2Config, tuning: dict[str, Any]) -> YourAlgorithmT2Config:
    """``cfg`` with the configuration its tuning result ``tuning`` selected (as
    :func:`t2.with_selection`)."""
    return dataclasses.replace(cfg, selected=int(tuning["tuning"][0]["selected"]))


def load_your_algorithm(cfg: YourAlgorithmT2Config, root: Path, *, progress: bool = True) -> dict[str, Any]:
    """The result of ``cfg`` in the store ``root`` (the tuning first), computed (and stored
    unit by unit) when missing: ``{"records", "tuning"}`` as T1's reader result."""
    tuning = load_tuning(cfg.tuning(), root, progress=progress)
    grid = with_selection(cfg, tuning)
    result = run_units(grid, units(grid), _run_unit, combine=_combine, root=root, progress=progress)
    return {"records": result["records"], "tuning": tuning["tuning"]}


def is_stored(cfg: YourAlgorithmT2Config, root: Path) -> bool:
    """Whether the store ``root`` holds fresh results of ``cfg`` (its tuning and its cells)."""
    tuning = cache.load(cfg.tuning(), root)
    return tuning is not None and cache.load(with_selection(cfg, tuning.result), root) is not None


def load_t2_reference(profile: str, root: Path, *, progress: bool = True) -> tuple[dict[str, Any] | None, str]:
    """The book's T2 result at ``profile`` and where it came from: the committed store when it
    holds it fresh (read, never written); else, at the quick profile, T2's own run computed
    into the store ``root``; else ``None`` with the reason."""
    config = t2.T2Config.for_profile(check_profile(profile))
    tuning_cfg = config.tuning_config()
    stored_tuning = cache.load(tuning_cfg)
    if stored_tuning is not None:
        stored = cache.load(t2.with_selection(config, stored_tuning.result))
        if stored is not None:
            return stored.result, "the book's results store"
    if profile == "quick":
        tuning = run_units(tuning_cfg, t2._tuning_units(tuning_cfg), t2._run_tuning_unit,
                           combine=t2._combine_tuning, root=root, progress=progress)
        grid = t2.with_selection(config, tuning)
        result = run_units(grid, t2._units(grid), t2._run_unit, combine=t2._combine, root=root, progress=progress)
        return result, "T2's own run at the quick profile, in this store"
    return None, (f"the book's T2 result ({config.part}/{config.experiment}.json) is missing or stale; "
                  "run `make book` to recompute it")
