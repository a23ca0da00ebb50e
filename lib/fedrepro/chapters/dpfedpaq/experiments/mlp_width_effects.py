"""Claim C48's quantizer effects with a network no larger than the softmax model (the runs of
:mod:`.mlp_width`), against the softmax regression and the chapter's network.

Both are read at the *proper* step of :mod:`.mlp_lr_effects` (the lowest final loss of the
default network run), and each quantizer effect (rows of :data:`.mlp_effects.EFFECT_ROWS` on
``s``) is decided by the chapter's rule (:func:`.mlp_effects.decide_effect`). Nothing here
trains a run that is not in the store outside a computing context.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fedrepro.chapters.dpfedpaq.experiments import mlp_effects, mlp_lr_effects
from fedrepro.dpfedpaq.mlp import dimension
from fedrepro.experiments.dpfedpaq import mlp, mlp_lr, mlp_width
from fedrepro.report.book import check_profile, sig3

__all__ = ["width_effects", "coarse_gaps", "width_frame"]


def _wide_runs(profile: str, lr0: float) -> dict[str, Any]:
    if lr0 == mlp_lr.CHAPTER_LEARNING_RATE:
        return mlp.load_mlp_runs(profile)
    return mlp_lr.load_mlp_lr_runs(profile, lr0)


def width_effects(profile: str = "paper") -> dict[str, Any]:
    """The quantizer effects of C48 for the softmax model, the chapter's network and the narrow
    network (:data:`.mlp_width.NARROW_HIDDEN` units), at the proper step.

    Returns the step ``lr0``, the levels, the parameters of the three models, the (levels, seeds)
    final losses of each, the decisions of every quantizer row for the narrow network
    (``(carries over, softmax holds, narrow holds, reason)``), ``holds`` (both carry over) and
    ``others`` (labels of the non-quantizer effects that do not carry over for the chapter's
    network at that step)."""
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    profile = check_profile(profile)
    lr0 = mlp_lr_effects.proper_learning_rate(profile)
    rows = mlp_effects.effects(load_runs(profile), _wide_runs(profile, lr0), profile)
    s_rows = [e for e in rows if e["effect"] == "s"]
    hidden = mlp_width.NARROW_HIDDEN
    res = mlp_width.load_mlp_width_runs(profile, hidden, lr0)
    K = mlp.PROFILE_SETTINGS[profile]["K"]
    narrow = np.array([mlp_effects._at(res["runs"][r.name()], K, "loss")
                       for r in mlp_width.width_runs(profile, hidden)])
    decided = [mlp_effects.decide_effect(e["label"], e["values"], e["softmax"], narrow, e["direction"])
               for e in s_rows]
    loss_row = next(e for e in s_rows if e["metric"] == "loss")
    return {"lr0": lr0, "levels": tuple(loss_row["values"]), "hidden": hidden,
            "parameters": {"softmax": mlp_width.softmax_parameters(),
                           "network": dimension(mlp.PROFILE_SETTINGS[profile]["hidden"]),
                           "narrow": dimension(hidden)},
            "loss": {"softmax": loss_row["softmax"], "network": loss_row["network"], "narrow": narrow},
            "decided": decided, "holds": all(d[0] for d in decided),
            "others": [e["label"] for e in rows if e["effect"] != "s" and not e["carries_over"]]}


def coarse_gaps(profile: str = "paper") -> dict[str, str]:
    """How far the coarsest quantizer's mean final loss ends above the unquantized one, per
    model (``"softmax"``, ``"network"``, ``"narrow"``), as whole percent."""
    return _gaps(width_effects(profile))


def _gaps(w: dict[str, Any]) -> dict[str, str]:
    means = {k: np.asarray(v, dtype=float).mean(axis=1) for k, v in w["loss"].items()}
    return {k: f"{100 * (m[0] / m[-1] - 1):.0f} %" for k, m in means.items()}


def width_frame(profile: str = "paper") -> pd.DataFrame:
    """One row per model: its parameters, the mean final loss at each quantizer level and how
    far the coarsest ends above the unquantized run (the "little impact" rule allows 10 %)."""
    w = width_effects(profile)
    names = {"softmax": "softmax regression", "network": f"network, {mlp.PROFILE_SETTINGS[profile]['hidden']} "
             "hidden units (the chapter's)", "narrow": f"network, {w['hidden']} hidden units"}
    gaps, rows = _gaps(w), []
    for key, label in names.items():
        means = np.asarray(w["loss"][key], dtype=float).mean(axis=1)
        row = {"model": label, "parameters": f"{w['parameters'][key]:,}"}
        row.update({f"s = {'none' if s is None else s}": sig3(float(m)) for s, m in zip(w["levels"], means, strict=True)})
        row["s = 1 above unquantized"] = gaps[key]
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")
