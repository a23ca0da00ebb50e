"""Claim C48's one differing effect with a quantizer of smaller blocks: the chapter's network and
quantizer sweep again, with eq. (20) applied to blocks of n coordinates.

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.mlp_block`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.mlp_block import (  # noqa: F401
    BLOCK_SIZES,
    MLPBlockConfig,
    _combine,
    _train,
    block_runs,
    load_mlp_block_runs,
)

__all__ = ["BLOCK_SIZES", "MLPBlockConfig", "block_runs", "load_mlp_block_runs"]
