"""Claim C48 with the network's learning rate read: the network sweeps of :mod:`.mlp` again at
other step sizes, and the step a reader would call "proper" (a reading of what the paper does
not state, never the chapter's main setting).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.mlp_lr`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.mlp_lr import (  # noqa: F401
    CHAPTER_LEARNING_RATE,
    LEARNING_RATES,
    MLPLearningRateConfig,
    _combine,
    _train,
    load_mlp_lr_runs,
)

__all__ = ["CHAPTER_LEARNING_RATE", "LEARNING_RATES", "MLPLearningRateConfig", "load_mlp_lr_runs"]
