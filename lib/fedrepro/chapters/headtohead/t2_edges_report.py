"""What the edge probe of T2's grids shows (:mod:`fedrepro.chapters.headtohead.t2_edges`).

For every algorithm at T2's reference cell: the grid's selection and the edges it sits on, the
best configuration one step beyond them, whether it beats the grid on the validation split
(the *edge binds*), and the test accuracy the protocol would then report (its three seeds
against the grid selection's three seeds in the stored T2 result). The order of the private
algorithms at that cell is recomputed with the best of grid and extensions. Reads stored
results only.
"""

from __future__ import annotations

import math
from typing import Any

from fedrepro.chapters.headtohead import t2, t2_edges
from fedrepro.chapters.headtohead.t1_edges_report import _edges_of, _score, _text, edge_columns, mean_sd
from fedrepro.core.cache import load_if_computed

__all__ = ["stored", "progress", "verdicts", "edges_frame", "ranking", "summary"]


def _configs(profile: str) -> tuple[Any, ...] | None:
    """(the stored T2 tuning, the stored T2 grid or ``None``, the probe's tuning config), or
    ``None`` while T2's tuning is not stored."""
    tuning_cfg = t2.T2TuningConfig.for_profile(profile)
    tuning = load_if_computed(tuning_cfg)
    if tuning is None:
        return None
    grid = load_if_computed(t2.with_selection(t2.T2Config.for_profile(profile), tuning.result))
    selection = tuple((t["algorithm"], int(t["selected"])) for t in tuning.result["tuning"]
                      if t["algorithm"] in t2_edges.PROBED)
    return tuning.result, grid, t2_edges.T2EdgesTuningConfig(profile=profile, selected=selection)


def stored(profile: str = "paper") -> dict[str, Any] | None:
    """``{"tuning", "t2", "edges_tuning", "edges"}`` when T2 and the probe are all stored and
    fresh, else ``None``."""
    found = _configs(profile)
    if found is None or found[1] is None:
        return None
    tuning, grid, probe_cfg = found
    probe = load_if_computed(probe_cfg)
    if probe is None:
        return None
    runs_cfg = t2_edges.T2EdgesConfig(profile=profile, selected=probe_cfg.selected,
                                      chosen=t2_edges.binding(tuning, probe.result))
    runs = load_if_computed(runs_cfg) if runs_cfg.chosen else None
    if runs_cfg.chosen and runs is None:
        return None
    return {"tuning": tuning, "t2": grid.result, "edges_tuning": probe.result,
            "edges": runs.result if runs is not None else {"records": []},
            "reference": (t2.T2Config.for_profile(profile).tuning_epsilon, t2.T2Config.for_profile(profile).budget_bits)}


def progress(profile: str = "paper") -> str:
    """Where the probe stands, for the page while it is not complete."""
    found = _configs(profile)
    if found is None:
        return "The edge probe starts once T2's tuning is stored."
    probe_cfg = found[2]
    if load_if_computed(probe_cfg) is None:
        return "The extensions' tuning runs are not all stored yet; they resume from the results store."
    return "The binding extensions' runs on the test set are not all stored yet; they resume from the results store."


def _test(records: list[dict[str, Any]], name: str, epsilon: float, budget: float) -> list[float]:
    eps = math.inf if name == "fedavg" else epsilon
    return [r["test_accuracy"] for r in records
            if r["algorithm"] == name and r["epsilon_target"] == eps and r["uplink_budget_bits"] == budget]


def verdicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per probed algorithm: the grid's selection, its edges and validation accuracy, the
    best extension and its validation accuracy, whether the edge binds, and the test accuracy
    (mean, sd over the seeds) of the grid's selection (stored T2) and of the extension."""
    epsilon, budget = data["reference"]
    probe = {t["algorithm"]: t for t in data["edges_tuning"]["tuning"]}
    out = []
    for t in data["tuning"]["tuning"]:
        name = t["algorithm"]
        if name not in t2_edges.PROBED:
            continue
        chosen = t["candidates"][int(t["selected"])]
        grid_test, grid_sd = mean_sd(_test(data["t2"]["records"], name, epsilon, budget))
        row = {"algorithm": name, "grid_config": chosen["config"], "edges": _edges_of(chosen["config"], t["candidates"]),
               "grid_validation": chosen["validation_accuracy"], "grid_test": grid_test, "grid_test_sd": grid_sd,
               "extensions": 0, "extension_config": None, "extension_validation": math.nan, "binds": False,
               "extension_test": math.nan, "extension_test_sd": math.nan}
        p = probe.get(name)
        if p is not None and p["selected"] is not None:
            best = p["candidates"][int(p["selected"])]
            binds = _score(best["validation_accuracy"]) > _score(chosen["validation_accuracy"])
            ext_test, ext_sd = mean_sd(_test(data["edges"]["records"], name, epsilon, budget)) if binds else \
                (math.nan, math.nan)
            row.update(extensions=len(p["candidates"]), extension_config=best["config"],
                       extension_validation=best["validation_accuracy"], binds=binds, extension_test=ext_test,
                       extension_test_sd=ext_sd)
        out.append(row)
    return out


def edges_frame(data: dict[str, Any]):
    """The verdicts as a table (accuracies in %)."""
    import pandas as pd

    rows = [{"algorithm": t2.LABELS.get(v["algorithm"], v["algorithm"]), **edge_columns(v, extensions=True)}
            for v in verdicts(data)]
    return pd.DataFrame(rows).set_index("algorithm")


def ranking(data: dict[str, Any]) -> dict[str, list[str]]:
    """The private algorithms at the reference cell ordered by test accuracy with the grid's
    selections (``"grid"``) and with the better of grid and extensions on the validation split
    (``"wider"``)."""
    grid, wider = {}, {}
    for v in verdicts(data):
        grid[v["algorithm"]] = v["grid_test"]
        wider[v["algorithm"]] = v["extension_test"] if v["binds"] else v["grid_test"]
    return {k: sorted(a, key=lambda n: -_score(a[n])) for k, a in (("grid", grid), ("wider", wider))}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """The numbers the page quotes: algorithms probed and at an edge, extensions run, edges
    that bind, best extensions that tie with the grid's selection on validation, the largest
    and smallest test change where an edge binds (points) and whose, how many places of the
    order of the private algorithms change, the leader with each grid, and the test change of
    every algorithm whose edge binds (``gain_<algorithm>``, points)."""
    v = verdicts(data)
    bound = [x for x in v if x["binds"]]
    gains = {x["algorithm"]: 100 * (x["extension_test"] - x["grid_test"]) for x in bound}
    top = max(gains, key=gains.get) if gains else None
    low = min(gains, key=gains.get) if gains else None
    r = ranking(data)
    moved = sum(a != b for a, b in zip(r["grid"], r["wider"], strict=True))
    return {"algorithms": len(v), "edge_algorithms": sum(bool(x["edges"]) for x in v),
            "extensions": sum(x["extensions"] for x in v), "binds": len(bound),
            "ties": sum(x["extension_validation"] == x["grid_validation"] for x in v),
            "max_gain": round(gains[top], 1) if top else 0.0,
            "max_gain_algorithm": t2.LABELS.get(top, top) if top else "none",
            "max_gain_config": _text(next(x for x in bound if x["algorithm"] == top)["extension_config"]) if top
            else "none",
            "min_gain": round(gains[low], 1) if low else 0.0,
            "min_gain_algorithm": t2.LABELS.get(low, low) if low else "none",
            "order_moves": moved, "leader_grid": t2.LABELS.get(r["grid"][0], r["grid"][0]),
            "leader_wider": t2.LABELS.get(r["wider"][0], r["wider"][0]),
            "leader_changes": int(r["grid"][0] != r["wider"][0]),
            **{f"gain_{name}": round(g, 1) for name, g in gains.items()}}

