"""Figs. 4 (c) and (d) of DP-FedPAQ again at the other ε of Fig. 4 (a) and with the authors'
code's local training, and their claims decided on those runs (readings of what the paper does
not state, never the chapter's main setting).

Figs. 4 (c)–(d) vary the subsampling ratio γ and the clipping threshold C and do not state
their ε; the chapter runs them at ε = 1 (spec §6.2, our choice). Their text attributes the
outcome to a balance between the noise, which grows with C (and, through the amplification
of eq. 16, with γ), and the bias of clipping the gradients of a small subsample (claims C37,
C40, C41, C42, C47). At ε = 1 the noise of the authors' code is small, the clipping bias
dominates, and the claims fail. A reading (:data:`READINGS`) trains every private run of the
(γ, C) grid of Figs. 4 (c)–(d) again with one or both of two unstated settings changed:

* **ε**: each other ε of Fig. 4 (a), with the chapter's Alg. 2 (``semantics="paper"``);
* **the local training** of the authors' public code (``semantics="authors_code"``, spec §9:
  E epochs in batches of 64 over ⌊γn_i⌋ records and clipping of the batch's mean gradient, so
  that a small subsample means fewer steps and a clipped mean of few records), at every ε of
  Fig. 4 (a); the noiseless runs of C41 are then trained that way too.

Everything else is the chapter's: the authors' sensitivity ``C/n_i``, the same seeds and random
streams (common random numbers: the runs at γ = 0.2 and the smallest ε of the ``paper``
reading are the chapter's Fig. 4 (b) runs, recomputed), the same evaluation rounds.

:mod:`fedrepro.chapters.dpfedpaq.experiments.fig4_readings` decides the claims on these runs (this module only trains them, so
that the stored runs do not depend on the decision rules).
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
    spec,
)

__all__ = ["CHAPTER_EPSILON", "READINGS", "Fig4EpsilonRunsConfig", "readings", "grid_runs",
           "load_fig4_epsilon_runs"]
#: The ε at which the chapter runs Figs. 4 (c)–(d) (spec §6.2).
CHAPTER_EPSILON = 1.0
#: The local-training semantics a reading may use (:func:`fedrepro.dpfedpaq.algorithms.private_fedpaq`).
READINGS: tuple[str, ...] = ("paper", "authors_code")


def readings(profile: str) -> tuple[tuple[float, str], ...]:
    """Every (ε, semantics) reading at ``profile``: the chapter's Alg. 2 at each ε of Fig. 4 (a)
    but the chapter's, then the authors' code's local training at every ε of Fig. 4 (a)."""
    eps = sorted(float(e) for e in PROFILE_SETTINGS[check_profile(profile)]["eps"])
    return (tuple((e, "paper") for e in eps if e != CHAPTER_EPSILON)
            + tuple((e, "authors_code") for e in eps))


def grid_runs(profile: str, epsilon: float, semantics: str = "paper") -> dict[str, tuple[RunSpec, RunSpec]]:
    """``{name: (the reading's run, the chapter's run it stands in for)}`` over the (γ, C) grid
    of Figs. 4 (c)–(d), and for the authors' code also the noiseless runs of C41 (smallest C)."""
    st = PROFILE_SETTINGS[check_profile(profile)]
    out: dict[str, tuple[RunSpec, RunSpec]] = {}
    for clip in st["clips"]:
        for gamma in st["gammas"]:
            run = spec(profile, clip=clip, gamma=gamma, eps=float(epsilon), semantics=semantics)
            out[run.name()] = (run, spec(profile, clip=clip, gamma=gamma))
    if semantics != "paper":
        for gamma in st["gammas"]:
            run = spec(profile, eps=None, clip=min(st["clips"]), gamma=gamma, semantics=semantics)
            out[run.name()] = (run, spec(profile, eps=None, clip=min(st["clips"]), gamma=gamma))
    return out


@dataclasses.dataclass(frozen=True)
class Fig4EpsilonRunsConfig(Float32RunsConfig):
    """The runs of one reading (``epsilon``, ``semantics``; one of :func:`readings`) of the
    (γ, C) grid of Figs. 4 (c)–(d), on the chapter's seeds."""

    part = "dpfedpaq"
    experiment = "experiments-fig4-epsilon"

    profile: str = "paper"
    epsilon: float = 0.1
    semantics: str = "paper"

    def __post_init__(self) -> None:
        if (float(self.epsilon), self.semantics) not in readings(self.profile):
            raise ValueError(f"(epsilon, semantics) must be one of {readings(self.profile)} at profile "
                             f"{self.profile!r}, got {(self.epsilon, self.semantics)!r}")

    def result_name(self) -> str:
        code = "-authors-code" if self.semantics == "authors_code" else ""
        stem = f"experiments-fig4-eps{self.epsilon:g}{code}".replace(".", "p")
        return stem if self.profile == "paper" else f"{stem}-{self.profile}"

    def units(self) -> list[str]:
        n = PROFILE_SETTINGS[self.profile]["seeds"]
        return [f"{name}--seed{j}" for name in grid_runs(self.profile, self.epsilon, self.semantics)
                for j in range(n)]

    def chapter_group(self) -> RunsConfig:
        """The chapter's Fig. 4 group, whose seed sequence (the same for every group) the runs share."""
        return RunsConfig(profile=self.profile, group="fig4")


def _train(cfg: Fig4EpsilonRunsConfig, unit: str) -> dict[str, Any]:
    """One (run, seed) unit: the chapter's private training with the chapter's seed of the
    same seed index, evaluated at the rounds (and with the accuracy, where the chapter records
    it) of the run it stands in for."""
    name, _, seed_txt = unit.rpartition("--seed")
    runs = grid_runs(cfg.profile, cfg.epsilon, cfg.semantics)
    if name not in runs or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for profile {cfg.profile!r}")
    run, stands_for = runs[name]
    chapter_run, rounds = registry(cfg.profile)[stands_for.name()]
    run = dataclasses.replace(run, accuracy=chapter_run.accuracy)
    problem = het_mnist_problem(run.n_digits, per_device=PROFILE_SETTINGS[cfg.profile]["per_device"])
    seed = rng.seed_sequence(cfg.chapter_group(), int(seed_txt), fields=())
    with _one_blas_thread():
        h = private_fedpaq(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M,
                           sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                           sensitivity_mode=run.sensitivity, calibration=run.calibration, q_levels=run.s,
                           profile=run.semantics, seed=seed, eval_rounds=rounds, accuracy=run.accuracy)
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy,
            "noise_norm_mean": float(np.mean(h.noise_norm)), "update_norm_mean": float(np.mean(h.update_norm))}


def _combine(cfg: Fig4EpsilonRunsConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    n = PROFILE_SETTINGS[cfg.profile]["seeds"]
    out: dict[str, Any] = {}
    for name in grid_runs(cfg.profile, cfg.epsilon, cfg.semantics):
        per = [done[f"{name}--seed{j}"] for j in range(n)]
        out[name] = {"rounds": np.asarray(per[0]["rounds"]),
                     **{key: np.array([np.asarray(p[key], dtype=float) for p in per]) for key in per[0]
                        if key != "rounds"}}
    return {"runs": out}


def load_fig4_epsilon_runs(profile: str = "paper", epsilon: float = 0.1,
                           semantics: str = "paper") -> dict[str, dict[str, Any]]:
    """The stored runs of :class:`Fig4EpsilonRunsConfig` (computed when missing): ``{name: metrics}``."""
    cfg = Fig4EpsilonRunsConfig(profile=check_profile(profile), epsilon=float(epsilon), semantics=semantics)
    return run_units(cfg, cfg.units(), _train, combine=_combine)["runs"]
