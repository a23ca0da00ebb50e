"""Claim C48's one differing effect with a quantizer of smaller blocks: the chapter's network and
quantizer sweep again, with eq. (20) applied to blocks of n coordinates.

At every step tried (:mod:`.mlp_lr`) and at the softmax model's size (:mod:`.mlp_width`) the
coarsest quantizer (s = 1) costs the network 29–43 % of final loss where the paper's "little
impact" (C31, C32) allows 10 %. The paper's remark after Assumption 4 gives quantized-SGD's
loss as q = min(n/s², √n/s) with n the *block size* and assumes n = d "for simplicity"; the
chapter's quantizer uses one block, as the analysis does. The experiments' block size is not
stated. This module trains the chapter's three quantizer settings with the chapter's network
(64 hidden units), seeds and random streams, at a given step ``lr0`` (the decision module
passes the *proper* step of :mod:`fedrepro.chapters.dpfedpaq.experiments.mlp_lr_effects`), with
the quantizer replaced by
:func:`fedrepro.dpfedpaq.blocks.quantize_blocks` of block size ``block`` (:data:`BLOCK_SIZES`):

* ``7850``, the softmax model's dimension: each block has the softmax model's bound q;
* ``512``: a bound q = √512 at s = 1, a tenth of the one-block network's √50,890.

Only the quantizer changes: the training is the narrow-network study's unit
(:func:`.mlp_width._train`, i.e. :func:`fedrepro.dpfedpaq.mlp.private_fedpaq_mlp` with the
chapter's seeds and streams) at the chapter's width, with the training module's ``quantize``
swapped for the block quantizer for the duration of the call (the unquantized run, s = None, is the chapter's run bit for bit). The bits are
counted with one norm per block (:func:`fedrepro.dpfedpaq.blocks.block_bits`).

This module only trains; :func:`fedrepro.chapters.dpfedpaq.experiments.scorecard.block_cause` decides.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any
from unittest import mock

import numpy as np

from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import mlp as mlp_training
from fedrepro.dpfedpaq.blocks import block_bits, block_count, quantize_blocks
from fedrepro.dpfedpaq.mlp import dimension
from fedrepro.dpfedpaq.quantizer import bits
from fedrepro.experiments.dpfedpaq import mlp_width
from fedrepro.experiments.dpfedpaq.mlp import PROFILE_SETTINGS, MLPRun, mlp_spec
from fedrepro.experiments.dpfedpaq.mlp_width import check_lr0, seed_units
from fedrepro.experiments.dpfedpaq.runs import Float32RunsConfig

__all__ = ["BLOCK_SIZES", "MLPBlockConfig", "block_runs", "load_mlp_block_runs"]

#: The block sizes tried, fixed before the runs: the softmax model's dimension (784·10 + 10)
#: and 512 (see the module docstring).
BLOCK_SIZES: tuple[int, ...] = (7850, 512)


@dataclasses.dataclass(frozen=True)
class MLPBlockConfig(Float32RunsConfig):
    """The quantizer sweep of :mod:`.mlp` at ``profile`` with blocks of ``block`` coordinates
    and the initial step ``lr0`` (the chapter's or one of :data:`.mlp_lr.LEARNING_RATES`), on the
    chapter's seeds."""

    part = "dpfedpaq"
    experiment = "experiments-mlp-block"

    profile: str = "paper"
    block: int = 512
    lr0: float = 1.0

    def __post_init__(self) -> None:
        check_lr0(self.profile, self.lr0)
        if isinstance(self.block, bool) or not isinstance(self.block, int) or self.block < 1:
            raise ValueError(f"block must be a positive integer, got {self.block!r}")

    def result_name(self) -> str:
        stem = f"experiments-mlp-block{self.block}-lr{self.lr0:g}".replace(".", "p")
        return stem if self.profile == "paper" else f"{stem}-{self.profile}"

    def units(self) -> list[str]:
        return seed_units(self.profile, block_runs(self.profile))


def block_runs(profile: str) -> list[MLPRun]:
    """The chapter's quantizer sweep (its levels, the default run otherwise, the chapter's width)."""
    return [mlp_spec(profile, s=s) for s in PROFILE_SETTINGS[check_profile(profile)]["levels"]]


def _train(cfg: MLPBlockConfig, unit: str) -> dict[str, Any]:
    """One (run, seed) unit: :func:`.mlp_width._train` at the chapter's width and the step
    ``cfg.lr0`` (the chapter's seed and streams), with the quantizer in blocks of ``cfg.block``
    coordinates and the bits counted with one norm per block."""
    runs = {r.name(): r for r in block_runs(cfg.profile)}
    run = runs.get(unit.rpartition("--seed")[0])
    if run is None:
        raise ValueError(f"unknown unit {unit!r} for {cfg.result_name()}")
    width = mlp_width.MLPWidthConfig(profile=cfg.profile, hidden=run.hidden, lr0=cfg.lr0)
    with mock.patch.object(mlp_training, "quantize", functools.partial(quantize_blocks, block=cfg.block)):
        out = dict(mlp_width._train(width, unit))
    d = dimension(run.hidden)
    per_message = block_bits(d, run.s, cfg.block)
    out["bits"] = np.asarray(out["bits"]) / bits(d, run.s) * per_message
    return {**out, "bits_per_message": per_message, "blocks": block_count(d, cfg.block)}


def _combine(cfg: MLPBlockConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{"runs": :func:`.mlp_width.stack_seeds`, "block": n}``."""
    return {"runs": mlp_width.stack_seeds(cfg.profile, block_runs(cfg.profile), done), "block": cfg.block}


def load_mlp_block_runs(profile: str = "paper", block: int = 512, lr0: float = 1.0) -> dict[str, Any]:
    """The stored runs of :class:`MLPBlockConfig` (computed when missing, except in a read-only
    context, which raises :class:`fedrepro.core.cache.MissingResult`)."""
    cfg = MLPBlockConfig(profile=check_profile(profile), block=int(block), lr0=float(lr0))
    return run_units(cfg, cfg.units(), _train, combine=_combine)
