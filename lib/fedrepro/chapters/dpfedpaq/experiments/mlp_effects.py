"""Claim C48 decided: do the softmax-regression effects of Figs. 2–4 carry over to a network?

For each effect (:data:`EFFECT_ROWS`: a swept hyperparameter, a metric at round K and the
direction the paper describes) the same rule is applied to the stored softmax runs
(:mod:`.runs`) and to the stored network runs (:mod:`.mlp`), both at round K = 100 (the
figures' K; quick profile: 4):

* ``decreasing`` / ``increasing`` (seed-robust ordering): the seed means are monotone in the
  swept value up to the seed spread (each next mean at most/least the previous one ∓ the
  larger max − min over seeds of the pair, as :func:`.claims.decreasing`), and the two ends of
  the sweep differ in that direction by more than the larger of their seed spreads;
* ``flat`` (quantization, claims C31/C32): every quantized final loss within 10 % of the
  unquantized one (the last swept value).

An effect *carries over* when the rule gives the same answer for the network as for softmax
regression; C48 is a match when every effect carries over (:func:`decide_C48`). Only a fully
connected network is trained (no CNN, no spiking network), so C48 is checked in part, and the
noise is the figures' (the authors' Δ = C/n_i: not a valid (ε, δ) guarantee).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fedrepro.chapters.dpfedpaq.experiments.trends import decreasing, increasing
from fedrepro.core.cache import MissingResult
from fedrepro.experiments.dpfedpaq.mlp import EFFECTS, PROFILE_SETTINGS, load_mlp_runs, sweep
from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS as SOFTMAX_SETTINGS
from fedrepro.experiments.dpfedpaq.runs import spec
from fedrepro.report.book import check_profile, sig3

__all__ = ["EFFECT_ROWS", "FLAT_TOLERANCE", "PARTIAL_NOTE", "decide_C48", "decide_effect", "effect_holds",
           "effects", "effects_frame", "figure", "verdict"]

#: Rows of the comparison: (label, effect of :data:`.mlp.EFFECTS`, metric, direction).
EFFECT_ROWS: tuple[tuple[str, str, str, str], ...] = (
    ("eps: final loss decreasing in eps", "eps", "loss", "decreasing"),
    ("eps: test accuracy increasing in eps", "eps", "accuracy", "increasing"),
    ("s: final loss decreasing in s (coarser quantizer is worse)", "s", "loss", "decreasing"),
    ("s: little impact (every s within 10 % of unquantized)", "s", "loss", "flat"),
    ("E: final loss decreasing in E at fixed K", "E", "loss", "decreasing"),
    ("M: final loss decreasing in M", "M", "loss", "decreasing"),
)
FLAT_TOLERANCE = 0.10  # "little impact": relative gap to the unquantized final loss (C31, C32)
PARTIAL_NOTE = ("only a fully connected network (one hidden layer of tanh units) was run; CNNs and spiking "
                "networks were not, so the claim is checked in part")
DIRECTIONS = ("decreasing", "increasing", "flat")


def _fmt(values: Sequence[float]) -> str:
    return "[" + ", ".join(sig3(float(v)) for v in values) + "]"


def effect_holds(values: np.ndarray, direction: str) -> tuple[bool, str]:
    """Whether the (n_values, seeds) array shows the effect ``direction`` (module docstring);
    with the seed means as text."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[0] < 2 or v.shape[1] < 1:
        raise ValueError(f"values must have shape (n_values >= 2, seeds >= 1), got {v.shape}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    if not np.all(np.isfinite(v)):
        return False, "non-finite values (diverged)"
    means, spreads = v.mean(axis=1), v.max(axis=1) - v.min(axis=1)
    if direction == "flat":
        rel = np.abs(means[:-1] - means[-1]) / abs(means[-1])
        return bool(np.all(rel < FLAT_TOLERANCE)), f"{_fmt(means)} (largest gap {sig3(100 * float(rel.max()))} %)"
    mono = (decreasing if direction == "decreasing" else increasing)(means, spreads)
    gap = (means[0] - means[-1]) if direction == "decreasing" else (means[-1] - means[0])
    ends = bool(gap > max(spreads[0], spreads[-1]))
    why = _fmt(means)
    if not mono:
        why += f" (not {direction} up to the seed spread)"
    if not ends:
        why += f" (ends not separated beyond the seed spread {sig3(float(max(spreads[0], spreads[-1])))})"
    return bool(mono and ends), why


def decide_effect(label: str, xs: Sequence[Any], softmax: np.ndarray, mlp: np.ndarray,
                  direction: str) -> tuple[bool, bool, bool, str]:
    """(carries over, holds for softmax, holds for the network, reason): the effect carries
    over when :func:`effect_holds` answers the same for both models."""
    ok_s, why_s = effect_holds(softmax, direction)
    ok_m, why_m = effect_holds(mlp, direction)
    why = (f"{label} over {list(xs)}: softmax {why_s} ({'holds' if ok_s else 'does not hold'}); "
           f"network {why_m} ({'holds' if ok_m else 'does not hold'})")
    return ok_s == ok_m, ok_s, ok_m, why


def decide_C48(rows: Sequence[tuple[str, bool, str]]) -> tuple[str, str]:
    """``("match" | "miss", reason)`` from ``(label, carries over, reason)`` per effect: a match
    when every tested effect carries over; the reason names the failing ones and says that the
    claim is checked in part."""
    if not rows:
        raise ValueError("rows must hold at least one tested effect")
    failing = [label for label, ok, _ in rows if not ok]
    head = (f"all {len(rows)} tested effects seen with softmax regression are seen with the network"
            if not failing else f"{len(failing)} of {len(rows)} effects differ: " + "; ".join(failing))
    detail = " | ".join(why for _, _, why in rows)
    return ("miss" if failing else "match"), f"{head}. {PARTIAL_NOTE}. Evidence: {detail}"


def _softmax_run(runs: Mapping[str, Any], profile: str, effect: str, value: Any) -> Mapping[str, Any]:
    st = SOFTMAX_SETTINGS[profile]
    if effect == "E":  # Fig. 2 top row: one run long enough for fixed K and fixed T
        return runs[spec(profile, E=value, K=max(st["K"], st["T"] // value)).name()]
    return runs[spec(profile, **{EFFECTS[effect][0]: value}).name()]


def _at(run: Mapping[str, Any], k: int, metric: str) -> np.ndarray:
    r = np.asarray(run["rounds"])
    hit = np.flatnonzero(r == k)
    if hit.size == 0:
        raise KeyError(f"round {k}")
    return np.asarray(run[metric], dtype=float)[:, int(hit[0])]


def effects(softmax_runs: Mapping[str, Any], mlp_runs: Mapping[str, Any], profile: str = "paper") -> list[dict[str, Any]]:
    """One dict per :data:`EFFECT_ROWS` entry: the swept values, the (n_values, seeds) arrays
    of both models at round K and the decision of :func:`decide_effect`."""
    profile = check_profile(profile)
    K = PROFILE_SETTINGS[profile]["K"]
    if K != SOFTMAX_SETTINGS[profile]["K"]:
        raise ValueError("the network and softmax runs must share K")
    out = []
    for label, effect, metric, direction in EFFECT_ROWS:
        xs, mruns = sweep(profile, effect)
        soft = np.array([_at(_softmax_run(softmax_runs, profile, effect, x), K, metric) for x in xs])
        net = np.array([_at(mlp_runs[r.name()], K, metric) for r in mruns])
        same, ok_s, ok_m, why = decide_effect(label, xs, soft, net, direction)
        out.append({"label": label, "effect": effect, "metric": metric, "direction": direction, "values": xs,
                    "softmax": soft, "network": net, "softmax_holds": ok_s, "network_holds": ok_m,
                    "carries_over": same, "reason": why})
    return out


def effects_frame(softmax_runs: Mapping[str, Any], mlp_runs: Mapping[str, Any], profile: str = "paper") -> pd.DataFrame:
    """The per-effect table: the paper's figure, the swept values, the seed means of both
    models at round K, whether each shows the effect and whether it carries over (✓/✗)."""
    rows = []
    for e in effects(softmax_runs, mlp_runs, profile):
        rows.append({"effect": e["label"], "figure": EFFECTS[e["effect"]][2],
                     "values": ", ".join("none" if x is None else f"{x:g}" for x in e["values"]),
                     "softmax (mean)": _fmt(e["softmax"].mean(axis=1)), "softmax": e["softmax_holds"],
                     "network (mean)": _fmt(e["network"].mean(axis=1)), "network": e["network_holds"],
                     "same": e["carries_over"]})
    return pd.DataFrame(rows).set_index("effect")


def verdict(softmax_runs: Mapping[str, Any], profile: str = "paper",
            mlp_runs: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(status, reason) of C48 from the stored runs; ``not-run`` when the network runs (or a
    softmax run) are not stored in a read-only context."""
    if mlp_runs is None:
        try:
            mlp_runs = load_mlp_runs(profile)
        except MissingResult as err:
            return "not-run", f"not computed: the network runs are not stored ({err}). {PARTIAL_NOTE}"
    try:
        rows = effects(softmax_runs, mlp_runs, profile)
    except KeyError as err:
        return "not-run", f"not computed: the stored runs lack {err.args[0]}. {PARTIAL_NOTE}"
    return decide_C48([(e["label"], e["carries_over"], e["reason"]) for e in rows])


def figure(mlp_runs: Mapping[str, Any], profile: str = "paper") -> Figure:
    """Training loss of the network against rounds, one panel per sweep (ε, s, E, M): mean
    over seeds with a min–max band."""
    profile = check_profile(profile)
    fig = plt.figure(figsize=(11, 7.5))
    axes = fig.subplots(2, 2).ravel()
    for ax, effect in zip(axes, ("eps", "s", "E", "M"), strict=True):
        field, _, where = EFFECTS[effect]
        xs, mruns = sweep(profile, effect)
        for x, run in zip(xs, mruns, strict=True):
            data = mlp_runs[run.name()]
            r = np.asarray(data["rounds"])
            loss = np.asarray(data["loss"], dtype=float)
            line, = ax.plot(r, loss.mean(axis=0), label=f"{ {'eps': 'ε'}.get(field, field)}={'none' if x is None else f'{x:g}'}")
            ax.fill_between(r, loss.min(axis=0), loss.max(axis=0), color=line.get_color(), alpha=0.18, lw=0)
        symbol = {"eps": "ε"}.get(field, field)
        ax.set_title(f"network, sweep of {symbol} (as {where})", fontsize=10)
        ax.set_xlabel("round k")
        ax.set_ylabel("training loss")
        ax.legend(fontsize=8)
    fig.text(0.5, 0.005, "† private runs with the authors' code's noise (Δ = C/nᵢ): not a valid (ε, δ) guarantee",
             ha="center", va="bottom", fontsize=8, style="italic")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig
