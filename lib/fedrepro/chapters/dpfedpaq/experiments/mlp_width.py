"""Claim C48's one differing effect with a narrower network: the quantizer sweep of :mod:`.mlp`
again with a hidden layer whose network has no more parameters than the softmax model.

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.mlp_width`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.mlp_width import (  # noqa: F401
    NARROW_HIDDEN,
    MLPWidthConfig,
    _combine,
    _train,
    check_lr0,
    load_mlp_width_runs,
    seed_units,
    softmax_parameters,
    stack_seeds,
    width_runs,
)

__all__ = ["NARROW_HIDDEN", "softmax_parameters", "check_lr0", "seed_units", "stack_seeds", "MLPWidthConfig", "width_runs", "load_mlp_width_runs"]
