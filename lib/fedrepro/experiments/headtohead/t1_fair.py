"""Task T1 with fair tuning axes: every private algorithm tunes the clipping norm over one
common set, with the same number of configurations (issue 50, item 1).

Why: T1's grids (:data:`fedrepro.experiments.headtohead.t1.GRIDS`) let DP-FedSGD, DPFL and the
float32 FedPAQ tune the clip over {0.3, 1.0}, while the quantized FedPAQ and Fed-PLT keep
their class default C = 1.0.

**The fair grids** (:data:`GRIDS`, stated before any of their runs): 12 configurations per
algorithm = the clip C ∈ :data:`CLIPS` = {0.3, 1.0} (the set the three already tune) × 6
combinations of the algorithm's own knobs. DP-FedSGD, DPFL and the float32 FedPAQ keep their
T1 grids unchanged (3 steps × one 2-valued knob × the clip). The two others get the same
shape, by one rule: their 3 T1 step sizes × the 2 values of their local-step knob of T1, a
third knob fixed at the value T1's tuning selected most often over its 11 cells:

============  ==============  =====================  ===========================
algorithm     step η          second knob            fixed
============  ==============  =====================  ===========================
fedpaq-q      0.3 1 3         E ∈ {1, 5}             s = 2 levels (8 of 11 cells)
fed-plt       0.1 0.3 1       N_e ∈ {2, 5}           ρ = 10 (11 of 11 cells)
============  ==============  =====================  ===========================

No algorithm has a noise split to tune. One privacy knob stays DP-FedSGD's alone: the
sampling rate q ∈ {0.05, 0.2} (the others run q = 0.05, Fed-PLT full-batch steps), as in T1;
the page says so.

**Reuse.** A T1 cell (tuning over the grid, then the selection on the seeds) is a
deterministic function of the grid and the protocol (:func:`fedrepro.experiments.headtohead.t1.tune_and_run`).
The three algorithms whose fair grid is their T1 grid are read from the stored
``headtohead/t1``; only the quantized FedPAQ and Fed-PLT are units of ``headtohead/t1-fair``
(one per cell, T1's cells), and ``make verify`` recomputes those only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t1
from fedrepro.experiments.headtohead.t1 import _grid
from fedrepro.headtohead import algorithms as alg

__all__ = ["CLIPS", "GRIDS", "CHANGED", "T1FairConfig", "load_new", "merged", "load_t1_fair"]

#: The clipping norms every algorithm tunes.
CLIPS: tuple[float, ...] = (0.3, 1.0)

#: The 12 configurations of every private algorithm (module docstring).
GRIDS: dict[str, tuple[Any, ...]] = {
    "dp-fedsgd": t1.GRIDS["dp-fedsgd"],
    "dpfl": t1.GRIDS["dpfl"],
    "fedpaq": t1.GRIDS["fedpaq"],
    "fedpaq-q": _grid(alg.PrivateFedPAQ, lr=(0.3, 1.0, 3.0), local_steps=(1, 5), levels=(2,), clip=CLIPS),
    "fed-plt": _grid(alg.FedPLT, lr=(0.1, 0.3, 1.0), local_steps=(2, 5), rho=(10.0,), clip=CLIPS),
}

#: The algorithms whose fair grid differs from their T1 grid (the units of ``t1-fair``).
CHANGED: tuple[str, ...] = tuple(a for a, g in GRIDS.items() if g != t1.GRIDS[a])


@dataclasses.dataclass(frozen=True)
class T1FairConfig(ExperimentConfig):
    """The fair grids of ``algorithms`` through T1's protocol of ``profile`` (module
    docstring): one unit per (algorithm, cell)."""

    part = "headtohead"
    experiment = "t1-fair"
    verify_rtol = 1e-3
    verify_atol = 1e-6
    verify_note = ("as T1: float32 products under noise move the last bits of the accuracies; a near-tie in the "
                   "tuning could select another configuration on another machine")
    verify_units = 2

    profile: str = "paper"
    algorithms: tuple[str, ...] = CHANGED

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.algorithms or set(self.algorithms) - set(GRIDS):
            raise ValueError(f"algorithms must be among {tuple(GRIDS)}, got {self.algorithms!r}")

    def protocol(self) -> t1.T1Config:
        """T1's protocol of the profile, restricted to ``algorithms``."""
        return dataclasses.replace(t1.T1Config.for_profile(self.profile), algorithms=self.algorithms)


def _units(cfg: T1FairConfig) -> list[str]:
    return t1._units(cfg.protocol())


def _run_unit(cfg: T1FairConfig, unit: str) -> dict[str, Any]:
    name, epsilon, budget = t1._parse(unit)
    p = cfg.protocol()
    return {"algorithm": name, **t1.tune_and_run(p, GRIDS[name][:p.grid_size], epsilon, budget)}


def _combine(cfg: T1FairConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return t1.combine_cells(cfg.protocol(), [units[u] for u in _units(cfg)])


def load_new(profile: str = "paper") -> dict[str, Any]:
    """The new cells (from the store; computed when missing, where it is writable)."""
    cfg = T1FairConfig(profile=profile)
    return run_units(cfg, _units(cfg), _run_unit, combine=_combine)


def merged(new: dict[str, Any], old: dict[str, Any], changed: tuple[str, ...] = CHANGED) -> dict[str, Any]:
    """The fair T1 result: the ``changed`` algorithms' records and tuning from ``new``, every
    other algorithm's (the non-private ceiling's included) from the stored T1 result ``old``."""
    keep = [r for r in old["records"] if r["algorithm"] not in changed]
    tuning = [t for t in old["tuning"] if t["algorithm"] not in changed]
    return {"records": keep + list(new["records"]), "tuning": tuning + list(new["tuning"])}


def load_t1_fair(profile: str = "paper") -> dict[str, Any]:
    """The fair T1 result of ``profile`` (computed when missing, where the store is
    writable)."""
    return merged(load_new(profile), t1.load_t1(profile))
