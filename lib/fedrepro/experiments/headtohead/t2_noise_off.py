"""T2's fair selections with the noise off and the clipping kept (issue 50, item 2: what a
ceiling below its private algorithm means).

Two of T2's non-private ceilings (:mod:`fedrepro.experiments.headtohead.t2_baselines`: clipping
and noise off, the step sizes tuned on their own grid) score below their private algorithms at
the reference cell. A ceiling changes two things at once; this run changes one. Every private
algorithm's fair selection (:func:`fedrepro.experiments.headtohead.t2_fair_grid.fair_selection`)
runs wrapped in :class:`fedrepro.headtohead.noise_off.NoiseOff` (same hyper-parameters, same
clip, same Poisson samples and random stream, σ = 0) on T2's seeds at the reference cell (the
main budget, T2's round cap), scored on the test set. Against the private run on the same seed
it measures the cost of the noise alone; against the ceiling, what dropping the clipping does.

One result, ``headtohead/t2-noise-off``, one unit per algorithm and seed.

Paper profile (stored): 15 runs (5 algorithms × 3 seeds), each about as long as a private run
of the same configuration at the reference cell: 14 min on a 2-core AMD EPYC machine with
``FEDREPRO_WORKERS=2`` (2026-11-29). Quick profile: T2's quick protocol, one seed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.headtohead import t2, t2_fair, t2_fair_grid
from fedrepro.experiments.headtohead.t1 import _config_dict
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.noise_off import NoiseOff
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["ORDER", "T2NoiseOffConfig", "units", "config_of", "load_t2_noise_off"]

#: The order the runs go in: first the algorithms whose ceilings fall below them.
ORDER: tuple[str, ...] = ("fed-plt", "dp-fedsgd", "dpfl", "fedpaq", "fedpaq-q")


@dataclasses.dataclass(frozen=True)
class T2NoiseOffConfig(ExperimentConfig):
    """The fair selections ``selected`` (pairs of a private algorithm and its index in
    :data:`fedrepro.experiments.headtohead.t2_fair.GRIDS`) with the noise off, on T2's seeds at
    the reference cell."""

    part = "headtohead"
    experiment = "t2-noise-off"
    verify_rtol = t2.T2Config.verify_rtol
    verify_atol = t2.T2Config.verify_atol
    verify_note = ("as T2 without the noise: float32 convolutions move the last bits of the model; a test "
                   "accuracy moves by a record or two (1e-4 each)")
    verify_units = 1

    profile: str = "paper"
    selected: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        check_profile(self.profile)
        names = [a for a, _ in self.selected]
        if len(set(names)) != len(names) or any(a not in t2_fair.PRIVATE for a in names):
            raise ValueError(f"selected must pair distinct private algorithms with an index, got {self.selected!r}")
        for name, k in self.selected:
            if not isinstance(k, int) or not 0 <= k < len(t2_fair.GRIDS[name]):
                raise ValueError(f"selected must index the fair grid of {name!r}, got {k!r}")

    def protocol(self) -> t2.T2Config:
        """T2's grid of the profile (seeds, budget, round cap, problem)."""
        return t2.T2Config.for_profile(self.profile)


def units(cfg: T2NoiseOffConfig) -> list[str]:
    """``<algorithm>_seed-<s>``, the algorithms in :data:`ORDER`."""
    chosen = dict(cfg.selected)
    return [f"{a}_seed-{s}" for a in ORDER if a in chosen for s in cfg.protocol().seeds]


def _run_unit(cfg: T2NoiseOffConfig, unit: str) -> dict[str, Any]:
    name, seed = unit.split("_seed-")
    p = cfg.protocol()
    chosen = t2_fair.GRIDS[name][dict(cfg.selected)[name]]
    _, final_problem = t2._problems(p)
    r = alg.run(final_problem, NoiseOff(chosen), epsilon=None, delta=p.delta,
                uplink_budget_bits=t2.capped_budget(p.budget_bits, chosen, final_problem.dim, p.max_rounds),
                clients_per_round=N_CLIENTS, seed=int(seed), eval_rounds=3)
    return {"algorithm": name, "config": _config_dict(chosen), "seed": int(seed),
            "test_accuracy": float(r["test_accuracy"][-1]), "noise_multiplier": r["noise_multiplier"],
            "epsilon_spent": r["epsilon_spent"], "uplink_bits": r["uplink_bits"],
            "uplink_budget_bits": p.budget_bits, "rounds": r["rounds"], "rounds_run": r["rounds_run"],
            "diverged": r["diverged"]}


def _combine(cfg: T2NoiseOffConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"records": [done[u] for u in units(cfg)]}


def config_of(profile: str, table: dict[str, Any]) -> T2NoiseOffConfig:
    """The run of the private algorithms' selections in the fair tuning ``table``
    (:func:`fedrepro.experiments.headtohead.t2_fair_grid.fair_selection`)."""
    return T2NoiseOffConfig(profile=profile, selected=tuple((t["algorithm"], int(t["selected"]))
                                                             for t in table["tuning"] if t["algorithm"] in t2_fair.PRIVATE))


def load_t2_noise_off(profile: str = "paper") -> dict[str, Any]:
    """The noise-off runs of the fair selections (the fair tuning first; computed when
    missing, where the store is writable): ``{"records": one per algorithm and seed}``."""
    cfg = config_of(profile, t2_fair_grid.fair_selection(profile))
    return run_units(cfg, units(cfg), _run_unit, combine=_combine)
