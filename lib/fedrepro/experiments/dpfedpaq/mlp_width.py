"""Claim C48's one differing effect with a narrower network: the quantizer sweep of :mod:`.mlp`
again with a hidden layer whose network has no more parameters than the softmax model.

At every step tried (:mod:`.mlp_lr`) one effect of C48 differs between the softmax regression
and the network: the coarsest quantizer (s = 1) costs the network much more than the 10 % the
paper's "little impact" (C31, C32) allows. The quantizer (the paper's eq. (20), QSGD levels)
is unbiased with a loss q that grows with the dimension d of the quantized vector
(Assumption 4, E‖Q(x) − x‖² ≤ q‖x‖², with q = min(d/s², √d/s) for QSGD as the paper's remark
after it says): the chapter's network (64 hidden units) has 6.5 times the softmax model's
parameters, so at s = 1 its bound √d is 2.5 times the softmax model's. C48 names ANNs, CNNs and spiking
networks and gives none of their sizes. Here the three quantizer settings of the chapter's sweep
are trained again with :data:`NARROW_HIDDEN` hidden units (fewer parameters than the softmax
model), at a given step ``lr0`` (the decision module passes the *proper* step of
:mod:`fedrepro.chapters.dpfedpaq.experiments.mlp_lr_effects`), on the chapter's seeds and random
streams.

This module only trains; :func:`fedrepro.chapters.dpfedpaq.experiments.scorecard.width_cause` decides.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.core import rng
from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq.mlp import dimension, private_fedpaq_mlp
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.experiments.dpfedpaq.mlp import PROFILE_SETTINGS, MLPConfig, MLPRun, _eval_rounds, mlp_spec
from fedrepro.experiments.dpfedpaq.mlp_lr import CHAPTER_LEARNING_RATE, LEARNING_RATES
from fedrepro.experiments.dpfedpaq.runs import Float32RunsConfig, _one_blas_thread

__all__ = ["NARROW_HIDDEN", "softmax_parameters", "check_lr0", "seed_units", "stack_seeds", "MLPWidthConfig",
           "width_runs", "load_mlp_width_runs"]

#: The widest hidden layer whose network has no more parameters than the softmax model
#: (:func:`fedrepro.dpfedpaq.mlp.dimension` (9) = 7,165 ≤ :func:`softmax_parameters` = 7,850 < 7,960 at 10).
NARROW_HIDDEN = 9


def softmax_parameters(features: int = 784, classes: int = 10) -> int:
    """Parameters of the softmax regression (weights and biases)."""
    return features * classes + classes


def check_lr0(profile: str, lr0: float) -> None:
    """Raise ``ValueError`` unless ``lr0`` is the chapter's step or one of
    :data:`.mlp_lr.LEARNING_RATES` at ``profile``."""
    allowed = (CHAPTER_LEARNING_RATE, *LEARNING_RATES[check_profile(profile)])
    if float(lr0) not in allowed:
        raise ValueError(f"lr0 must be one of {allowed} at profile {profile!r}, got {lr0!r}")


def seed_units(profile: str, runs: list[MLPRun]) -> list[str]:
    """``<run name>--seed<j>`` for every run and every seed of the chapter at ``profile``."""
    n = PROFILE_SETTINGS[check_profile(profile)]["seeds"]
    return [f"{run.name()}--seed{j}" for run in runs for j in range(n)]


@dataclasses.dataclass(frozen=True)
class MLPWidthConfig(Float32RunsConfig):
    """The quantizer sweep of :mod:`.mlp` at ``profile`` with ``hidden`` units and the initial
    step ``lr0`` (the chapter's or one of :data:`.mlp_lr.LEARNING_RATES`), on the chapter's seeds."""

    part = "dpfedpaq"
    experiment = "experiments-mlp-width"

    profile: str = "paper"
    hidden: int = NARROW_HIDDEN
    lr0: float = 1.0

    def __post_init__(self) -> None:
        check_lr0(self.profile, self.lr0)
        if isinstance(self.hidden, bool) or not isinstance(self.hidden, int) or self.hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {self.hidden!r}")

    def result_name(self) -> str:
        stem = f"experiments-mlp-width{self.hidden}-lr{self.lr0:g}".replace(".", "p")
        return stem if self.profile == "paper" else f"{stem}-{self.profile}"

    def units(self) -> list[str]:
        return seed_units(self.profile, width_runs(self.profile, self.hidden))


def width_runs(profile: str, hidden: int) -> list[MLPRun]:
    """The chapter's quantizer sweep (its levels, the default run otherwise) with ``hidden`` units."""
    return [mlp_spec(profile, s=s, hidden=hidden) for s in PROFILE_SETTINGS[check_profile(profile)]["levels"]]


def _train(cfg: MLPWidthConfig, unit: str) -> dict[str, Any]:
    """One (run, seed) unit: the chapter's network training with the chapter's seed (common random
    numbers with :mod:`.mlp`), ``cfg.hidden`` units and the step ``cfg.lr0``."""
    name, _, seed_txt = unit.rpartition("--seed")
    runs = {r.name(): r for r in width_runs(cfg.profile, cfg.hidden)}
    if name not in runs or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for {cfg.result_name()}")
    run = runs[name]
    problem = het_mnist_problem(2, per_device=PROFILE_SETTINGS[cfg.profile]["per_device"])
    seed = rng.seed_sequence(MLPConfig(profile=cfg.profile), int(seed_txt), fields=())
    with _one_blas_thread():
        h = private_fedpaq_mlp(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M, hidden=run.hidden,
                               sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                               sensitivity_mode="authors_code", calibration="paper", q_levels=run.s,
                               lr0=float(cfg.lr0), seed=seed, eval_rounds=_eval_rounds(run.K), accuracy=True)
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy, "bits": h.bits,
            "update_norm_mean": float(np.mean(h.update_norm)), "noise_norm_mean": float(np.mean(h.noise_norm))}


def stack_seeds(profile: str, runs: list[MLPRun], done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{run name: {"rounds": (R,), metric: (seeds, R) or (seeds,)}}``: each run's units of
    :func:`seed_units` stacked over the seeds."""
    n = PROFILE_SETTINGS[check_profile(profile)]["seeds"]
    out: dict[str, Any] = {}
    for run in runs:
        per = [done[f"{run.name()}--seed{j}"] for j in range(n)]
        entry: dict[str, Any] = {"rounds": np.asarray(per[0]["rounds"])}
        for key in per[0]:
            if key != "rounds":
                entry[key] = np.array([np.asarray(p[key], dtype=float) for p in per])
        out[run.name()] = entry
    return out


def _combine(cfg: MLPWidthConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{"runs": :func:`stack_seeds`, "parameters": d}``."""
    return {"runs": stack_seeds(cfg.profile, width_runs(cfg.profile, cfg.hidden), done),
            "parameters": dimension(cfg.hidden)}


def load_mlp_width_runs(profile: str = "paper", hidden: int = NARROW_HIDDEN, lr0: float = 1.0) -> dict[str, Any]:
    """The stored runs of :class:`MLPWidthConfig` (computed when missing, except in a read-only
    context, which raises :class:`fedrepro.core.cache.MissingResult`)."""
    cfg = MLPWidthConfig(profile=check_profile(profile), hidden=int(hidden), lr0=float(lr0))
    return run_units(cfg, cfg.units(), _train, combine=_combine)
