"""Figs. 2 (b)–(d) and 4 (b)–(d) of DP-FedPAQ again with the per-step sensitivity, a noise that
grows with E and with the clipping threshold relative to the subsample, and their claims decided
on those runs (a reading of the noise, never the chapter's main setting).

The chapter's figures use the authors' code's sensitivity ``C/n_i`` (:mod:`.runs`): its
noise does not depend on the number E of local steps, so the figures cannot show what the
paper's Theorem 1 and its text attribute to the noise as E grows (claims C22, C25, C26, C28,
C39, C46; Figs. 2b–d), nor what Fig. 4's text attributes to C and γ through the noise (C36, C40,
C41, C42, C47; Figs. 4b–d: with ``C/n_i`` the noise ignores the subsample). Here every private
run of Figs. 2a–d and 4a–d with noise is trained again with the per-step sensitivity
``2η_kC/b_i`` (:func:`fedrepro.dpfedpaq.noise.sensitivity`), whose noise grows with E at a fixed
subsampling ratio (``b_i = ⌊γn_i/E⌋``) and with C/b_i, at the same ε, the same seeds and the
same random streams as the chapter's runs (common random numbers: only the noise differs). The
vanilla and noiseless runs do not depend on the noise and are the chapter's.

:func:`fedrepro.chapters.dpfedpaq.experiments.noise_growth.verdicts` decides the claims on
these runs (this module only trains them, so that the stored runs do not depend on the
decision rules).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.core import rng
from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq.algorithms import private_fedpaq
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.experiments.dpfedpaq.runs import (
    PROFILE_SETTINGS,
    Float32RunsConfig,
    RunsConfig,
    RunSpec,
    _one_blas_thread,
    registry,
)

__all__ = ["GrowthRunsConfig", "load_growth_runs", "growth_runs"]

#: The groups of the chapter whose private runs are rerun here (Fig. 2 top and bottom, Fig. 4).
_GROUPS: tuple[str, ...] = ("fig2top", "fig2bottom", "fig4")


def growth_runs(profile: str, sensitivity: str) -> dict[str, tuple[str, RunSpec, tuple[int, ...]]]:
    """``{name: (group, spec, evaluation rounds)}``: the private runs with noise of Figs. 2a–d
    and 4a–d with the sensitivity replaced (the group is the chapter's, whose seeds the run
    shares)."""
    out: dict[str, tuple[str, RunSpec, tuple[int, ...]]] = {}
    for group in _GROUPS:
        for run, rounds in registry(profile, group).values():
            if run.algo != "private" or run.eps is None:
                continue
            new = dataclasses.replace(run, sensitivity=sensitivity)
            out.setdefault(new.name(), (group, new, rounds))
    return out


@dataclasses.dataclass(frozen=True)
class GrowthRunsConfig(Float32RunsConfig):
    """The private runs with noise of Figs. 2a–d and 4a–d with sensitivity ``sensitivity`` on the
    chapter's seeds."""

    part = "dpfedpaq"
    experiment = "experiments-fig2-noise-growth"

    profile: str = "paper"
    sensitivity: str = "per_step"

    def units(self) -> list[str]:
        n = PROFILE_SETTINGS[check_profile(self.profile)]["seeds"]
        return [f"{name}--seed{j}" for name in growth_runs(self.profile, self.sensitivity) for j in range(n)]


def _train(cfg: GrowthRunsConfig, unit: str) -> dict[str, Any]:
    name, _, seed_txt = unit.rpartition("--seed")
    runs = growth_runs(cfg.profile, cfg.sensitivity)
    if name not in runs or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for profile {cfg.profile!r}")
    group, run, rounds = runs[name]
    problem = het_mnist_problem(run.n_digits, per_device=PROFILE_SETTINGS[cfg.profile]["per_device"])
    # the seed of the chapter's run of the same group and seed index: common random numbers
    seed = rng.seed_sequence(RunsConfig(profile=cfg.profile, group=group), int(seed_txt), fields=())
    with _one_blas_thread():
        h = private_fedpaq(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M,
                           sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                           sensitivity_mode=run.sensitivity, calibration=run.calibration, q_levels=run.s,
                           profile=run.semantics, seed=seed, eval_rounds=rounds, accuracy=run.accuracy)
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy,
            "noise_norm_mean": float(np.mean(h.noise_norm)), "update_norm_mean": float(np.mean(h.update_norm)),
            "noise_std_round0": float(h.info.get("noise_std_round0", np.nan))}


def _combine(cfg: GrowthRunsConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    n = PROFILE_SETTINGS[cfg.profile]["seeds"]
    out: dict[str, Any] = {}
    for name in growth_runs(cfg.profile, cfg.sensitivity):
        per = [done[f"{name}--seed{j}"] for j in range(n)]
        entry: dict[str, Any] = {"rounds": np.asarray(per[0]["rounds"])}
        for key in per[0]:
            if key != "rounds":
                entry[key] = np.array([np.asarray(p[key], dtype=float) for p in per])
        out[name] = entry
    return {"runs": out}


def load_growth_runs(profile: str = "paper", sensitivity: str = "per_step") -> dict[str, dict[str, np.ndarray]]:
    """The stored runs of :class:`GrowthRunsConfig` (computed when missing): ``{name: metrics}``."""
    cfg = GrowthRunsConfig(profile=check_profile(profile), sensitivity=sensitivity)
    return run_units(cfg, cfg.units(), _train, combine=_combine)["runs"]

