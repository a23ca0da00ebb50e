"""Claim C48's quantizer effects with a block quantizer (the runs of :mod:`.mlp_block`), against
the softmax regression and the chapter's one-block network.

Read at the *proper* step of :mod:`.mlp_lr_effects`, as :mod:`.mlp_width_effects` reads the
narrow network; each quantizer effect (rows of :data:`.mlp_effects.EFFECT_ROWS` on ``s``) is
decided by the chapter's rule (:func:`.mlp_effects.decide_effect`) for every block size of
:data:`.mlp_block.BLOCK_SIZES`. Nothing here trains a run that is not in the store outside a
computing context.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fedrepro.chapters.dpfedpaq.experiments import mlp_effects, mlp_lr_effects, mlp_width_effects
from fedrepro.dpfedpaq.blocks import block_variance_parameter
from fedrepro.dpfedpaq.mlp import dimension
from fedrepro.dpfedpaq.quantizer import bits
from fedrepro.experiments.dpfedpaq import mlp, mlp_block
from fedrepro.report.book import check_profile, sig3

__all__ = ["block_effects", "block_extra_bits", "block_gaps", "block_frame"]


def block_effects(profile: str = "paper") -> dict[str, Any]:
    """The quantizer effects of C48 for the network with each block size, at the proper step.

    Returns the step ``lr0``, the levels, the network's dimension ``d``, ``others`` (labels of the
    non-quantizer effects that do not carry over for the chapter's network at that step), the
    (levels, seeds) final losses of the softmax model and the one-block network, and per block
    size (``blocks``: {n: {...}}) its (levels, seeds) final losses, the decision of every
    quantizer row (``(carries over, softmax holds, blocks hold, reason)``), ``holds`` (both carry
    over), the bound q at s = 1 and the bits of one message at each level."""
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    profile = check_profile(profile)
    lr0 = mlp_lr_effects.proper_learning_rate(profile)
    rows = mlp_effects.effects(load_runs(profile), mlp_width_effects._wide_runs(profile, lr0), profile)
    s_rows = [e for e in rows if e["effect"] == "s"]
    loss_row = next(e for e in s_rows if e["metric"] == "loss")
    K = mlp.PROFILE_SETTINGS[profile]["K"]
    d = dimension(mlp.PROFILE_SETTINGS[profile]["hidden"])
    out: dict[int, dict[str, Any]] = {}
    for n in mlp_block.BLOCK_SIZES:
        res = mlp_block.load_mlp_block_runs(profile, n, lr0)
        runs = [res["runs"][r.name()] for r in mlp_block.block_runs(profile)]
        loss = np.array([mlp_effects._at(run, K, "loss") for run in runs])
        decided = [mlp_effects.decide_effect(e["label"], e["values"], e["softmax"], loss, e["direction"])
                   for e in s_rows]
        out[n] = {"loss": loss, "decided": decided, "holds": all(x[0] for x in decided),
                  "q_at_1": block_variance_parameter(d, 1, n),
                  "bits": [float(np.asarray(run["bits_per_message"]).reshape(-1)[0]) for run in runs]}
    return {"lr0": lr0, "levels": tuple(loss_row["values"]), "d": d,
            "others": [e["label"] for e in rows if e["effect"] != "s" and not e["carries_over"]],
            "loss": {"softmax": loss_row["softmax"], "network": loss_row["network"]}, "blocks": out}


def _gap(loss: np.ndarray) -> str:
    means = np.asarray(loss, dtype=float).mean(axis=1)
    return f"{100 * (means[0] / means[-1] - 1):.0f} %"


def block_gaps(profile: str = "paper") -> dict[str, str]:
    """How far the coarsest quantizer's mean final loss ends above the unquantized one, as whole
    percent: ``"softmax"``, ``"network"`` (one block) and ``"block<n>"`` per block size."""
    b = block_effects(profile)
    gaps = {"softmax": _gap(b["loss"]["softmax"]), "network": _gap(b["loss"]["network"])}
    gaps.update({f"block{n}": _gap(v["loss"]) for n, v in b["blocks"].items()})
    return gaps


def block_extra_bits(profile: str = "paper") -> dict[str, str]:
    """How many more bits an s = 1 message costs in blocks than in one block (one float32 norm
    per block), as whole percent, per ``"block<n>"``."""
    b = block_effects(profile)
    one = bits(b["d"], 1)
    return {f"block{n}": f"{100 * (v['bits'][0] / one - 1):.0f} %" for n, v in b["blocks"].items()}


def block_frame(profile: str = "paper") -> pd.DataFrame:
    """One row per quantizer: its block size, the bound q at s = 1, the bits of an s = 1
    message, the mean final loss at each level and how far the coarsest ends above the
    unquantized run (the "little impact" rule allows 10 %)."""
    b = block_effects(profile)
    d = b["d"]
    settings = [("network, one block (the chapter's)", d, b["loss"]["network"], None)]
    settings += [(f"network, blocks of {n:,}", n, v["loss"], v["bits"][0]) for n, v in b["blocks"].items()]
    rows = []
    for label, n, loss, bits1 in settings:
        means = np.asarray(loss, dtype=float).mean(axis=1)
        row = {"quantizer": label, "block size n": f"{min(n, d):,}",
               "q at s = 1": sig3(block_variance_parameter(d, 1, n)),
               "bits of an s = 1 message": f"{round(bits1 if bits1 is not None else bits(d, 1)):,}"}
        row.update({f"s = {'none' if s is None else s}": sig3(float(m)) for s, m in zip(b["levels"], means, strict=True)})
        row["s = 1 above unquantized"] = _gap(loss)
        rows.append(row)
    return pd.DataFrame(rows).set_index("quantizer")

