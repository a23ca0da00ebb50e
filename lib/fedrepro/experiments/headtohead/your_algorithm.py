"""A reader's algorithm through task T1's protocol (``python -m fedrepro.headtohead run``).

Nothing of T1 is re-implemented here: every cell runs :func:`fedrepro.experiments.headtohead.t1.tune_and_run`
with T1's own config for the profile (:meth:`T1Config.for_profile`: the tuning problem and
validation split, the tuning seed, the number of configurations tuned, δ, the clients per
round, the seeds), so the algorithm is tuned, calibrated by the same accountant and run on the
same seeds as the book's algorithms, and its records are T1's (:func:`t1.records`).

The identity of a result (:class:`YourAlgorithmConfig`) holds the import path the reader gave,
the class, every configuration's hyper-parameters, a hash of the code of the module that
defines the class (:func:`fedrepro.headtohead.bring_your_own.algorithm_code`), the cells and
the seeds. One unit per (ε, budget) cell through :func:`fedrepro.core.cache.run_units` in the
reader's store: an interrupted run resumes at the cell it stopped in. No stored result of the
book imports this module.
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
from fedrepro.experiments.headtohead import t1
from fedrepro.headtohead import bring_your_own as byo

__all__ = ["YourAlgorithmConfig", "config_for", "units", "load_your_algorithm", "is_stored", "load_t1_reference"]

#: The unit-name prefix of the reader's cells (:func:`t1.unit_name`).
_UNIT = "yours"


@dataclasses.dataclass(frozen=True)
class YourAlgorithmConfig(ExperimentConfig):
    """A reader's algorithm at the (ε, budget) cells ``epsilons`` × ``budgets`` of task T1
    (module docstring)."""

    part = "headtohead"
    experiment = "your-algorithm"
    verify_rtol = t1.T1Config.verify_rtol
    verify_atol = t1.T1Config.verify_atol
    verify_note = t1.T1Config.verify_note

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
    epsilons: tuple[float, ...] = ()
    budgets: tuple[float, ...] = ()
    seeds: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.algorithm or not self.algorithm_class or not self.name:
            raise ValueError("algorithm, algorithm_class and name must be given")
        if not 1 <= len(self.grid) <= byo.MAX_GRID:
            raise ValueError(f"grid must hold 1 to {byo.MAX_GRID} configurations, got {len(self.grid)}")
        if not self.epsilons or any(not (isinstance(e, float | int) and 0 < e < math.inf) for e in self.epsilons):
            raise ValueError(f"epsilons must be positive finite numbers, got {self.epsilons!r}")
        if not self.budgets or any(not (isinstance(b, float | int) and 0 < b < math.inf) for b in self.budgets):
            raise ValueError(f"budgets must be positive finite numbers of bits, got {self.budgets!r}")
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be non-negative integers, got {self.seeds!r}")

    def result_name(self) -> str:
        """``your-algorithm-<name>-<profile>-<hash>``: one file per algorithm, configuration
        grid, code, cells and seeds."""
        slug = re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")[:40] or "algorithm"
        return f"{self.experiment}-{slug}-{self.profile}-{cache.config_hash(self)[:12]}"

    def t1_config(self) -> t1.T1Config:
        """T1's config at this profile, with these seeds."""
        return dataclasses.replace(t1.T1Config.for_profile(self.profile), seeds=self.seeds)


def config_for(algorithm: str, *, profile: str = "paper", epsilons: tuple[float, ...] | None = None,
               budgets: tuple[float, ...] | None = None, seeds: tuple[int, ...] | None = None) -> YourAlgorithmConfig:
    """The config of the algorithm named ``algorithm`` (``"module:NAME"``, the convention of
    :mod:`fedrepro.headtohead.bring_your_own`) at ``epsilons`` × ``budgets`` on ``seeds``;
    each defaults to T1's at ``profile`` (its main ε sweep, its main budget, its seeds)."""
    reference = t1.T1Config.for_profile(check_profile(profile))
    grid = byo.configurations(byo.resolve(algorithm), algorithm)
    cls = type(grid[0])
    return YourAlgorithmConfig(
        profile=profile, algorithm=algorithm, algorithm_class=byo.class_path(cls), name=str(grid[0].name),
        grid=tuple(byo.hyper_parameters(c) for c in grid), algorithm_code=byo.algorithm_code(cls),
        epsilons=tuple(float(e) for e in (reference.epsilons if epsilons is None else epsilons)),
        budgets=tuple(float(b) for b in ((reference.budget_bits,) if budgets is None else budgets)),
        seeds=tuple(int(s) for s in (reference.seeds if seeds is None else seeds)))


def units(config: YourAlgorithmConfig) -> list[str]:
    """One unit per (ε, budget) cell, budget by budget."""
    return [t1.unit_name(_UNIT, e, b) for b in dict.fromkeys(config.budgets) for e in dict.fromkeys(config.epsilons)]


def _grid(config: YourAlgorithmConfig) -> tuple[Any, ...]:
    """The configurations tuned: the first ``grid_size`` of T1 at this profile (as
    :func:`t1.grid_of` takes them for the book's algorithms)."""
    grid = tuple(byo.rebuild(config.algorithm_class, p) for p in config.grid)
    if byo.algorithm_code(type(grid[0])) != config.algorithm_code:
        raise RuntimeError(f"the code of {config.algorithm_class} changed since this config was made: its result "
                           "would not be the one its identity names (run the command again: it makes a new one)")
    return grid[:config.t1_config().grid_size]


def _run_unit(config: YourAlgorithmConfig, unit: str) -> dict[str, Any]:
    _, epsilon, budget = t1._parse(unit)
    return {"algorithm": config.name, **t1.tune_and_run(config.t1_config(), _grid(config), epsilon, budget)}


def _combine(config: YourAlgorithmConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """T1's records of every cell (:func:`t1.records`) and its tuning table."""
    out, tuning = [], []
    for unit in units(config):
        u = done[unit]
        out += t1.records(config.t1_config(), u["algorithm"], u)
        tuning.append({"algorithm": u["algorithm"], "epsilon_target": u["epsilon_target"],
                       "uplink_budget_bits": u["uplink_budget_bits"], "selected": u["selected"],
                       "candidates": u["tuning"]})
    return {"records": out, "tuning": tuning}


def load_your_algorithm(config: YourAlgorithmConfig, root: Path, *, progress: bool = True) -> dict[str, Any]:
    """The result of ``config`` in the store ``root``, computed (and stored unit by unit) when
    missing."""
    return run_units(config, units(config), _run_unit, combine=_combine, root=root, progress=progress)


def is_stored(config: YourAlgorithmConfig, root: Path) -> bool:
    """Whether the store ``root`` holds a fresh result of ``config``."""
    return cache.load(config, root) is not None


def load_t1_reference(profile: str, root: Path, *, progress: bool = True) -> tuple[dict[str, Any] | None, str]:
    """The book's T1 result at ``profile`` and where it came from: the committed store when it
    holds it fresh (read, never written); else, at the quick profile (minutes), T1's own run
    computed into the store ``root``; else ``None`` with the reason."""
    config = t1.T1Config.for_profile(check_profile(profile))
    stored = cache.load(config)
    if stored is not None:
        return stored.result, "the book's results store"
    if profile == "quick":
        result = run_units(config, t1._units(config), t1._run_unit, combine=t1._combine, root=root, progress=progress)
        return result, "T1's own run at the quick profile, in this store"
    return None, (f"the book's T1 result ({config.part}/{config.result_name()}.json) is missing or stale; "
                  "run `make book` to recompute it")
