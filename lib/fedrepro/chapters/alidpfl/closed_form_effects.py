"""What the public code's closed-form τ* does to the claims that ALI-DPFL beats every fixed τ.

The stored closed-form runs (:mod:`fedrepro.experiments.alidpfl.closed_form`) replace the ALI-DPFL
entry of every R_s < R_c cell of the tables of the same seed (spec reading); the claims of
:data:`fedrepro.chapters.alidpfl.claims.BEST_FIXED_CLAIMS` are then decided by the very
rules of :func:`fedrepro.chapters.alidpfl.claims.tables_outcomes` (the scorecard's, which lie
below both this module and :mod:`fedrepro.chapters.alidpfl.scorecard`). Nothing here computes a
run: a result that is not stored (or is stale) gives ``None``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fedrepro.chapters.alidpfl import claims, tables
from fedrepro.core.cache import load_if_computed
from fedrepro.experiments.alidpfl import closed_form
from fedrepro.experiments.alidpfl import tables as experiments

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from fedrepro.report.scorecard import Outcome

__all__ = ["stored", "substituted", "verdicts", "margins", "SPREAD_SDS", "MIN_SEEDS", "spread_check", "cells_frame",
           "summary", "figure_tau_sequences"]

#: The paper's margin over the best fixed τ in a cell is "what one of our seeds could give" when it
#: lies within this many standard deviations (over our seeds) of our mean closed-form margin in the
#: same cell. Two standard deviations is narrower than the 95 % prediction interval of one more
#: seed from three (t(2) · √(1 + 1/3) ≈ 5 standard deviations), so the check errs towards "open".
SPREAD_SDS: float = 2.0

#: Seeds needed before a spread is estimated at all.
MIN_SEEDS: int = 3


def stored(profile: str = "paper") -> dict[int, dict[str, Any]]:
    """``{seed: result}`` of the seeds of :data:`~fedrepro.chapters.alidpfl.closed_form.SEEDS`
    whose closed-form runs are stored and fresh (never computes)."""
    out = {}
    for seed in closed_form.SEEDS:
        res = load_if_computed(closed_form.ClosedFormConfig(profile=profile, seed=seed))
        if res is not None:
            out[seed] = res.result
    return out


def substituted(table_result: dict[str, Any], closed: dict[str, Any]) -> dict[str, Any]:
    """A copy of one seed's tables result whose ALI-DPFL entries (and τ sequences) are those
    of the same seed's closed-form runs ``closed``, in every cell it holds."""
    out = {"table": copy.deepcopy(table_result["table"]), "taus": dict(table_result["taus"]),
           "runs": table_result["runs"]}
    for key, acc in closed["accuracy"].items():
        out["table"][key]["ALI-DPFL"] = float(acc)
        out["taus"][key] = list(closed["taus"][key])
    return out


def _pairs(profile: str) -> dict[int, tuple[dict[str, Any], dict[str, Any]]] | None:
    """``{seed: (tables, tables with the closed form)}`` for the seeds where both are stored."""
    closed = stored(profile)
    seeds = tables.stored_seeds(profile, "spec", tuple(closed))
    pairs = {s: (seeds[s], substituted(seeds[s], closed[s])) for s in sorted(seeds)}
    return pairs or None


def verdicts(profile: str = "paper") -> dict[int, dict[str, Outcome]] | None:
    """``{seed: {claim: outcome}}`` of the claims of ``BEST_FIXED_CLAIMS`` under the closed form."""
    pairs = _pairs(profile)
    if pairs is None:
        return None
    return {s: {cid: o for cid, o in claims.tables_outcomes(sub, profile).items()
                if cid in claims.BEST_FIXED_CLAIMS} for s, (_, sub) in pairs.items()}


def _keys(result: dict[str, Any]) -> list[str]:
    return tables.cell_keys(result, "III") + tables.cell_keys(result, "IV")


def margins(profile: str = "paper") -> dict[int, dict[str, list[float]]] | None:
    """Per seed, ALI-DPFL minus the best fixed τ (points) in the R_s < R_c cells of Tables
    III–IV, under the paper's rule (``"paper-rule"``) and the closed form (``"closed-form"``)."""
    pairs = _pairs(profile)
    if pairs is None:
        return None
    return {s: {"paper-rule": tables.ali_vs_fixed(orig["table"], _keys(orig))["margins"],
                "closed-form": tables.ali_vs_fixed(sub["table"], _keys(sub))["margins"]}
            for s, (orig, sub) in pairs.items()}


def spread_check(profile: str = "paper") -> dict[str, Any] | None:
    """The paper's margins over the best fixed τ (its own Tables III–IV) against the spread of
    ours under the closed-form τ* over the stored seeds, cell by cell (claims C02, C05, C20, C21).

    Returns the cells, the paper's margins, our mean and standard deviation (``ddof = 1``) per
    cell, whether each paper margin lies within :data:`SPREAD_SDS` standard deviations of our
    mean, and ``all_within``; ``None`` with fewer than :data:`MIN_SEEDS` seeds stored.
    """
    pairs = _pairs(profile)
    if pairs is None or len(pairs) < MIN_SEEDS:
        return None
    keys = _keys(pairs[min(pairs)][0])
    theirs = {k: v for name in ("III", "IV") for k, v in tables.paper_table(name).items()}
    missing = [k for k in keys if k not in theirs]
    if missing:
        raise ValueError(f"the paper's Tables III-IV have no cells {missing}")
    ours = np.array([tables.ali_vs_fixed(sub["table"], keys)["margins"] for _, sub in pairs.values()])
    paper = np.asarray(tables.ali_vs_fixed(theirs, keys)["margins"], dtype=np.float64)
    mean, sd = ours.mean(axis=0), ours.std(axis=0, ddof=1)
    within = np.abs(paper - mean) <= SPREAD_SDS * sd
    return {"seeds": sorted(pairs), "cells": keys, "paper": paper.tolist(), "mean": mean.tolist(),
            "sd": sd.tolist(), "within": within.tolist(), "all_within": bool(within.all())}


def cells_frame(profile: str = "paper") -> pd.DataFrame | None:
    """One row per R_s < R_c cell: the best fixed τ, ALI-DPFL under the paper's rule and
    under the closed form (mean ± sd over the stored seeds, %), the closed form's margin over
    the best fixed τ, and the τ* it chose (first stored seed: rounds run, smallest and largest τ*)."""
    pairs = _pairs(profile)
    if pairs is None:
        return None
    closed = stored(profile)[min(pairs)]
    rows = []
    first = next(iter(pairs.values()))[0]
    for key in tables.cell_keys(first, "II") + _keys(first):
        if key not in closed["accuracy"]:
            continue
        best = [tables.best_fixed(orig["table"][key])[1] for orig, _ in pairs.values()]
        paper_rule = [orig["table"][key]["ALI-DPFL"] for orig, _ in pairs.values()]
        closed_acc = [sub["table"][key]["ALI-DPFL"] for _, sub in pairs.values()]
        taus = closed["taus"][key]
        table, condition, eps = key.split("|")
        rows.append({
            "cell": f"Table {table}, {condition}, eps = {float(eps):g}",
            "best fixed tau (%)": _mean_sd(best),
            "ALI-DPFL, paper's rule (%)": _mean_sd(paper_rule),
            "ALI-DPFL, closed form (%)": _mean_sd(closed_acc),
            "closed form − best fixed (points)": _mean_sd(np.subtract(closed_acc, best)),
            f"closed-form tau* (seed {min(pairs)})": f"{len(taus)} rounds, tau* {min(taus)} to {max(taus)}",
        })
    return pd.DataFrame(rows).set_index("cell")


def _mean_sd(values: Any) -> str:
    v = np.asarray(values, dtype=np.float64)
    return f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if v.size > 1 else f"{v.mean():.1f}"


def summary(profile: str = "paper") -> dict[str, Any] | None:
    """The numbers the chapter quotes: seeds, cells, the largest τ* and the share of R_c the
    closed-form runs use, on how many seeds each claim holds, and the range of the margins over
    the best fixed τ under both rules (Tables III–IV, every stored seed); with three seeds
    stored, also the counts of :func:`spread_check` (``spread_*``)."""
    v, m = verdicts(profile), margins(profile)
    if v is None or m is None or not v:
        return None
    closed_margins = [x for s in m for x in m[s]["closed-form"]]
    rule_margins = [x for s in m for x in m[s]["paper-rule"]]
    above = [sum(x > 0 for x in m[s]["closed-form"]) for s in sorted(m)]
    budgets = {f"ali-{c['table']}-eps{c['epsilon']}": c["iterations"]
               for c in experiments.cells(experiments.TablesConfig(profile=profile))}
    runs = [(cell, run) for res in stored(profile).values() for cell, run in res["runs"].items()]
    used = [int(run["iterations"]) / budgets[cell] for cell, run in runs]
    return {"seeds": len(v), "cells": len(next(iter(m.values()))["closed-form"]),
            "max_tau": max(int(np.max(run["taus"])) for _, run in runs),
            "used_low": round(min(used), 2), "used_high": round(max(used), 2),
            "holds_c20": sum(o["alidpfl-main-C20"].status == "match" for o in v.values()),
            "holds_c01": sum(o["alidpfl-main-C01"].status == "match" for o in v.values()),
            "above_min": min(above), "above_max": max(above),
            "above_text": f"{min(above)}" if min(above) == max(above) else f"{min(above)} to {max(above)}",
            "margin_low": round(min(closed_margins), 1), "margin_high": round(max(closed_margins), 1),
            "rule_margin_low": round(min(rule_margins), 1), "rule_margin_high": round(max(rule_margins), 1),
            **_spread_summary(profile)}


def _spread_summary(profile: str) -> dict[str, Any]:
    """The spread check's counts for the chapter (empty before :data:`MIN_SEEDS` seeds are stored):
    cells where the paper's margin lies within :data:`SPREAD_SDS` sd of ours, and the largest sd."""
    check = spread_check(profile)
    if check is None:
        return {}
    return {"spread_within": int(sum(check["within"])), "spread_cells": len(check["cells"]),
            "spread_sd_high": round(max(check["sd"]), 1), "spread_sds": f"{SPREAD_SDS:g}"}


def figure_tau_sequences(profile: str = "paper", seed: int = 0) -> Figure | None:
    """τ* per round and the local iterations used, under the closed form (solid) and the
    paper's rule (dotted), in every R_s < R_c cell of ``seed`` (``None`` when not stored)."""
    import matplotlib.pyplot as plt

    pairs = _pairs(profile)
    if pairs is None or seed not in pairs:
        return None
    orig, sub = pairs[seed]
    keys = [k for k in sub["taus"] if sub["taus"][k] != orig["taus"][k]]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for j, key in enumerate(keys):
        table, condition, eps = key.split("|")
        for taus, style, label in ((sub["taus"][key], "-", f"Table {table}, {condition}, eps = {float(eps):g}"),
                                   (orig["taus"][key], ":", None)):
            t = np.asarray(taus)
            rounds = np.arange(1, t.size + 1)
            top.step(rounds, t, style, where="post", color=f"C{j}", label=label)
            bottom.plot(rounds, np.cumsum(t), style, color=f"C{j}")
    top.set_yscale("log")
    top.set_ylabel("tau* chosen")
    bottom.set_ylabel("local iterations used")
    bottom.set_xscale("log")
    bottom.set_xlabel("round (solid: closed form; dotted: the paper's rule)")
    top.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig
