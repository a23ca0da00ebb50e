"""Claim C48 at every step of :mod:`.mlp_lr` and the *proper* step.

The proper step is the one a practitioner would pick without looking at the claim: the η₀,
among the chapter's 0.1 and :data:`.mlp_lr.LEARNING_RATES`, with the lowest mean final training
loss of the default network run (s = 10, E = 10, M = 10, ε = 1) (:func:`proper_learning_rate`).
C48 is decided by the chapter's rule
(:func:`fedrepro.chapters.dpfedpaq.experiments.mlp_effects.verdict`) at every step, and the
scorecard reads it at the proper one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.experiments.dpfedpaq.mlp import mlp_spec
from fedrepro.experiments.dpfedpaq.mlp_lr import CHAPTER_LEARNING_RATE, LEARNING_RATES, load_mlp_lr_runs
from fedrepro.report.book import check_profile

__all__ = ["final_losses", "proper_learning_rate", "quantizer_gaps", "verdicts"]


def _all_runs(profile: str) -> dict[float, Mapping[str, Any]]:
    from fedrepro.experiments.dpfedpaq.mlp import load_mlp_runs

    out = {CHAPTER_LEARNING_RATE: load_mlp_runs(profile)}
    out.update({lr: load_mlp_lr_runs(profile, lr) for lr in LEARNING_RATES[check_profile(profile)]})
    return dict(sorted(out.items()))


def final_losses(profile: str = "paper") -> dict[float, float]:
    """η₀ → the mean over seeds of the default network run's final training loss (NaN or
    infinite where a seed diverged)."""
    name = mlp_spec(profile).name()
    return {lr: float(np.mean(np.asarray(runs[name]["loss"], dtype=float)[:, -1]))
            for lr, runs in _all_runs(profile).items()}


def proper_learning_rate(profile: str = "paper") -> float:
    """The η₀ with the lowest finite mean final training loss of the default network run."""
    losses = {lr: v for lr, v in final_losses(profile).items() if np.isfinite(v)}
    return min(losses, key=losses.get)


def verdicts(profile: str = "paper", softmax_runs: Mapping[str, Any] | None = None) -> dict[float, tuple[str, str]]:
    """η₀ → C48's (status, reason) by the chapter's rule with the network runs at that step."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_effects
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    softmax = load_runs(profile) if softmax_runs is None else softmax_runs
    return {lr: mlp_effects.verdict(softmax, profile, mlp_runs=runs) for lr, runs in _all_runs(profile).items()}


def quantizer_gaps(profile: str = "paper") -> dict[float, float]:
    """η₀ → how far the network's mean final loss with the coarsest quantizer lies above the
    unquantized one (relative; the effect C31/C32 say has "little impact", 10 % allowed)."""
    from fedrepro.experiments.dpfedpaq.mlp import PROFILE_SETTINGS, sweep

    _, runs_of = sweep(profile, "s")
    coarse, plain = runs_of[0].name(), runs_of[-1].name()
    if PROFILE_SETTINGS[check_profile(profile)]["levels"][-1] is not None:
        raise ValueError("the last quantizer setting of the sweep must be the unquantized run")
    out = {}
    for lr, runs in _all_runs(profile).items():
        a, b = (float(np.mean(np.asarray(runs[n]["loss"], dtype=float)[:, -1])) for n in (coarse, plain))
        out[lr] = a / b - 1.0
    return out
