"""Claim C48 with the network's learning rate read: the network sweeps of :mod:`.mlp` again at
other step sizes, and the step a reader would call "proper" (a reading of what the paper does
not state, never the chapter's main setting).

C48 says that on networks the effects of the FL hyperparameters are those of the softmax
regression "having set the learning rate to a proper value", and gives no value. The chapter's
network runs (:mod:`.mlp`) keep the softmax step η₀ = 0.1; one effect then differs (the
coarsest quantizer, s = 1, costs the network much more than 10 %). Here every network run of
:mod:`.mlp` is trained again with η₀ in :data:`LEARNING_RATES` (the schedule
η_k = η₀/(1 + kE/100) otherwise the chapter's), on the chapter's seeds and random streams
(common random numbers: the runs differ from the chapter's by the step only).

:mod:`fedrepro.chapters.dpfedpaq.experiments.mlp_lr_effects` picks the proper step and decides C48 at every step (this module only
trains the runs, so that the stored runs do not depend on the decision rules).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.core import rng
from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq.mlp import private_fedpaq_mlp
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.experiments.dpfedpaq.mlp import (
    PROFILE_SETTINGS,
    MLPConfig,
    _eval_rounds,
    combine,
    registry,
)
from fedrepro.experiments.dpfedpaq.runs import Float32RunsConfig, _one_blas_thread

__all__ = ["CHAPTER_LEARNING_RATE", "LEARNING_RATES", "MLPLearningRateConfig", "load_mlp_lr_runs"]

#: The chapter's step (the softmax runs').
CHAPTER_LEARNING_RATE = 0.1
#: The other η₀ tried, per profile (a factor of about 3 apart, around the chapter's).
LEARNING_RATES: dict[str, tuple[float, ...]] = {"paper": (0.03, 0.3, 1.0), "quick": (0.3,)}


@dataclasses.dataclass(frozen=True)
class MLPLearningRateConfig(Float32RunsConfig):
    """Every network run of :mod:`.mlp` at ``profile`` with the initial step ``lr0`` (one of
    :data:`LEARNING_RATES`), on the chapter's seeds."""

    part = "dpfedpaq"
    experiment = "experiments-mlp-lr"

    profile: str = "paper"
    lr0: float = 0.3

    def __post_init__(self) -> None:
        allowed = LEARNING_RATES[check_profile(self.profile)]
        if float(self.lr0) not in allowed:
            raise ValueError(f"lr0 must be one of {allowed} at profile {self.profile!r}, got {self.lr0!r}")

    def result_name(self) -> str:
        stem = f"experiments-mlp-lr{self.lr0:g}".replace(".", "p")
        return stem if self.profile == "paper" else f"{stem}-{self.profile}"

    def units(self) -> list[str]:
        return MLPConfig(profile=self.profile).units()


def _train(cfg: MLPLearningRateConfig, unit: str) -> dict[str, Any]:
    """One (run, seed) unit: the chapter's network training (:func:`.mlp.run_unit`) with the
    chapter's seed and the step ``cfg.lr0``."""
    name, _, seed_txt = unit.rpartition("--seed")
    reg = registry(cfg.profile)
    if name not in reg or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for profile {cfg.profile!r}")
    run = reg[name]
    problem = het_mnist_problem(2, per_device=PROFILE_SETTINGS[cfg.profile]["per_device"])
    seed = rng.seed_sequence(MLPConfig(profile=cfg.profile), int(seed_txt), fields=())
    with _one_blas_thread():
        h = private_fedpaq_mlp(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M, hidden=run.hidden,
                               sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                               sensitivity_mode="authors_code", calibration="paper", q_levels=run.s,
                               lr0=float(cfg.lr0), seed=seed, eval_rounds=_eval_rounds(run.K), accuracy=True)
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy, "bits": h.bits,
            "update_norm_mean": float(np.mean(h.update_norm)), "noise_norm_mean": float(np.mean(h.noise_norm)),
            "noise_std_round0": float(h.info["noise_std_round0"])}


def _combine(cfg: MLPLearningRateConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    return combine(MLPConfig(profile=cfg.profile), done)


def load_mlp_lr_runs(profile: str = "paper", lr0: float = 0.3) -> dict[str, dict[str, np.ndarray]]:
    """The stored network runs at step ``lr0`` (computed when missing, except in a read-only
    context, which raises :class:`fedrepro.core.cache.MissingResult`)."""
    cfg = MLPLearningRateConfig(profile=check_profile(profile), lr0=float(lr0))
    return run_units(cfg, cfg.units(), _train, combine=_combine)["runs"]
