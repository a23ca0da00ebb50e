"""Task T2 with fair tuning axes: every private algorithm tunes the clipping norm over one
common set, with the same number of configurations (issue 50, item 1).

Why: T2's grids (:data:`fedrepro.experiments.headtohead.t2.GRIDS`) let DP-FedSGD and DPFL
tune the clip over {0.1, 0.3, 1.0} or {0.1, 1.0} while Fed-PLT and the quantized FedPAQ
keep it at 0.1; a gap between them may come from the grid rather than the algorithm.

**The fair grids** (:data:`GRIDS`, stated before any of their new runs): 12 configurations
per algorithm = the clip C ∈ :data:`CLIPS` = {0.1, 0.3, 1.0} (the set DP-FedSGD already
tunes) × 4 combinations of the algorithm's own knobs. No algorithm has a noise split to
tune (one Gaussian release per step or per round, the whole ε to it), and the sampling rate
is ALI-DPFL's q = 0.015 for all, as in T2. The 4 combinations, by one rule for all: the two
step sizes nearest the algorithm's T2 selection on its old grid (the larger neighbour when
the selection is interior) × the two values of its local-step knob of the old grid; a
third knob of the algorithm is fixed at its T2 selection.

============  ==============  =====================  =======================
algorithm     step η          second knob            fixed
============  ==============  =====================  =======================
dp-fedsgd     0.25 0.5 1 2    (none: τ = 1)          (its T2 grid, unchanged)
dpfl          0.5 1           τ ∈ {2, 5}
fedpaq        0.5 1           E ∈ {1, 5}             float32
fedpaq-q      0.5 1           E ∈ {1, 5}             s = 16 levels
fed-plt       0.25 0.5        N_e ∈ {2, 5}           ρ = 1
ali-dpfl      0.5 1           τ̄ ∈ {2, 5}
============  ==============  =====================  =======================

ALI-DPFL (not private as run, :mod:`fedrepro.experiments.headtohead.t2_alidpfl`) is tuned on
the same axes so that its page entry reads the same way. The protocol (tuning cell, problem,
seed, round cap, scoring) is T2's.

**Reuse.** A tuning run is a deterministic function of (algorithm class, hyper-parameters,
problem, seed, protocol). A configuration of the fair grid that is also one of T2's old grid
(same class, same hyper-parameters; the same protocol by construction: :meth:`protocol`
is T2's tuning config of the profile) is read from the stored ``headtohead/t2-tuning`` (or
``t2-alidpfl-tuning``); only the others are units of ``headtohead/t2-fair-tuning`` (the list
is fixed by the code, :func:`new_units`, never by what the store holds). ``make verify``
recomputes the new units only; the reused ones are verified with their own result, and a
test recomputes reused configurations through :func:`tune_one` (the quick profile) and
finds the stored values.

The merged table, the selection and the final grid ``headtohead/t2-fair`` (the fair selection
at every ε of the main budget on T2's seeds; an algorithm whose fair selection is its old T2
selection reads its cells from the stored ``headtohead/t2`` instead) are
:mod:`fedrepro.experiments.headtohead.t2_fair_grid`, apart, so that this module (the new
tuning units' code) stays as it was when its runs started.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2, t2_alidpfl
from fedrepro.experiments.headtohead.t1 import _config_dict, _grid
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import cnn_algorithms as cnn
from fedrepro.headtohead.cnn_alidpfl import ALIDPFLCNN
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["CLIPS", "GRIDS", "PRIVATE", "RUN_ORDER", "T2FairTuningConfig", "old_grid", "old_index", "new_units",
           "tune_one", "load_new_tuning"]

#: The clipping norms every algorithm tunes.
CLIPS: tuple[float, ...] = (0.1, 0.3, 1.0)

#: The 12 configurations of every algorithm (module docstring); the clip varies slowest.
GRIDS: dict[str, tuple[Any, ...]] = {
    "dp-fedsgd": _grid(cnn.DPFLCNN, lr=(0.25, 0.5, 1.0, 2.0), clip=CLIPS),
    "dpfl": _grid(cnn.DPFLCNN, lr=(0.5, 1.0), local_steps=(2, 5), clip=CLIPS),
    "fedpaq": _grid(cnn.PrivateFedPAQCNN, lr=(0.5, 1.0), local_steps=(1, 5), clip=CLIPS),
    "fedpaq-q": _grid(cnn.PrivateFedPAQCNN, lr=(0.5, 1.0), local_steps=(1, 5), levels=(16,), clip=CLIPS),
    "fed-plt": _grid(cnn.FedPLTCNN, lr=(0.25, 0.5), local_steps=(2, 5), rho=(1.0,), clip=CLIPS),
    "ali-dpfl": tuple(ALIDPFLCNN(lr=lr, clip=clip, mean_steps=tau)
                      for clip, tau, lr in itertools.product(CLIPS, (2, 5), (0.5, 1.0))),
}

#: The private algorithms of T2's ranking (ALI-DPFL is stored apart, as in T2).
PRIVATE: tuple[str, ...] = ("dp-fedsgd", "dpfl", "fedpaq", "fedpaq-q", "fed-plt")

#: The order the new runs go in: first the algorithms whose clip T2 kept fixed.
RUN_ORDER: tuple[str, ...] = ("fed-plt", "fedpaq-q", "dpfl", "fedpaq", "ali-dpfl", "dp-fedsgd")

#: The stored tuning experiment each algorithm's old grid ran in.
OLD_EXPERIMENT: dict[str, str] = {a: "t2-tuning" for a in PRIVATE} | {"ali-dpfl": "t2-alidpfl-tuning"}


def old_grid(algorithm: str) -> tuple[Any, ...]:
    """The configurations ``algorithm`` had in T2's stored tuning (all 12)."""
    if algorithm == "ali-dpfl":
        return t2_alidpfl.GRID
    if algorithm not in t2.GRIDS:
        raise ValueError(f"algorithm must be one of {tuple(GRIDS)}, got {algorithm!r}")
    return t2.GRIDS[algorithm]


@dataclasses.dataclass(frozen=True)
class T2FairTuningConfig(ExperimentConfig):
    """The new tuning runs of the fair grids (module docstring), at T2's reference cell of
    ``profile``; ``ali_budget_bits``: ALI-DPFL's budget where the profile's does not pay for
    its message (the quick profile, as in ALI-DPFL's own T2 test)."""

    part = "headtohead"
    experiment = "t2-fair-tuning"
    verify_rtol = 1e-3
    verify_atol = 2e-3
    verify_note = ("as T2's tuning: float32 convolutions under noise move the last bits; a validation accuracy "
                   "moves by a record or two (1/6,000 each)")
    verify_units = 2

    profile: str = "paper"
    grid_size: int = 12
    ali_budget_bits: float | None = None
    algorithms: tuple[str, ...] = tuple(GRIDS)

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not 1 <= self.grid_size <= 12:
            raise ValueError(f"grid_size must lie in [1, 12], got {self.grid_size!r}")
        if not self.algorithms or set(self.algorithms) - set(GRIDS):
            raise ValueError(f"algorithms must be among {tuple(GRIDS)}, got {self.algorithms!r}")
        if self.ali_budget_bits is not None and not self.ali_budget_bits > 0:
            raise ValueError(f"ali_budget_bits must be positive, got {self.ali_budget_bits!r}")

    @classmethod
    def for_profile(cls, profile: str) -> T2FairTuningConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", grid_size=2, ali_budget_bits=6e8)
        return cls()

    def protocol(self, algorithm: str = "dpfl") -> t2.T2TuningConfig:
        """T2's tuning protocol of the profile (ALI-DPFL's with its budget)."""
        base = t2.T2TuningConfig.for_profile(self.profile)
        if algorithm == "ali-dpfl" and self.ali_budget_bits is not None:
            return dataclasses.replace(base, budget_bits=self.ali_budget_bits)
        return base

    def old_config(self, algorithm: str) -> ExperimentConfig:
        """The stored tuning experiment ``algorithm``'s old grid was run in."""
        if algorithm == "ali-dpfl":
            return t2_alidpfl.T2ALITuningConfig(profile=self.profile, budget_bits=self.ali_budget_bits)
        return t2.T2TuningConfig.for_profile(self.profile)


def old_index(cfg: T2FairTuningConfig, algorithm: str, candidate: Any) -> int | None:
    """The index of ``candidate`` among the old configurations the profile ran, if any."""
    old = old_grid(algorithm)[:cfg.protocol().grid_size]
    for k, c in enumerate(old):
        if type(c) is type(candidate) and c == candidate:
            return k
    return None


def new_units(cfg: T2FairTuningConfig) -> list[str]:
    """The configurations of the fair grids not in T2's old grids: ``<algorithm>_cfg-<k>``."""
    order = [a for a in RUN_ORDER if a in cfg.algorithms]
    return [f"{a}_cfg-{k:02d}" for a in order for k in range(cfg.grid_size)
            if old_index(cfg, a, GRIDS[a][k]) is None]


def tune_one(protocol: t2.T2TuningConfig, candidate: Any) -> dict[str, Any]:
    """One tuning run of T2's protocol (the call of T2's tuning unit): ``candidate`` once on
    the tuning problem at the reference cell, scored by the final validation accuracy."""
    tuning_problem, _ = t2._problems(protocol)
    r = alg.run(tuning_problem, candidate, epsilon=protocol.tuning_epsilon, delta=protocol.delta,
                uplink_budget_bits=t2.capped_budget(protocol.budget_bits, candidate, tuning_problem.dim,
                                                    protocol.max_rounds),
                clients_per_round=N_CLIENTS, seed=protocol.tuning_seed, eval_rounds=1)
    return {"config": _config_dict(candidate), "validation_accuracy": float(r["test_accuracy"][-1]),
            "noise_multiplier": r["noise_multiplier"], "rounds": r["rounds"], "diverged": r["diverged"]}


def _run_tuning_unit(cfg: T2FairTuningConfig, unit: str) -> dict[str, Any]:
    name, k = unit.split("_cfg-")
    return {"algorithm": name, "index": int(k), **tune_one(cfg.protocol(name), GRIDS[name][int(k)])}


def load_new_tuning(cfg: T2FairTuningConfig) -> dict[str, Any]:
    """The new tuning runs (from the store; computed when missing, where it is writable):
    ``{"units": {unit: run}}``."""
    return run_units(cfg, new_units(cfg), _run_tuning_unit)
