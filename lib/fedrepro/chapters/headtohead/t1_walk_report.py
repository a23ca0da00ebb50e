"""What the walk beyond T1's grids shows (:mod:`fedrepro.chapters.headtohead.t1_walk`).

For every walked algorithm and ε of the main budget: the grid's selection, how many steps the
walk took beyond the grid and why it stopped, the best configuration it found, and the test
accuracy of each (the grid selection's three seeds in the stored T1 result, the walk's best on
the same seeds). The order of the walked private algorithms at each ε is recomputed with the
walk's configurations. Reads stored results only.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from fedrepro.chapters.headtohead import t1, t1_walk
from fedrepro.chapters.headtohead.t1_edges_report import _score, _text, eps_text, mean_sd, pm, with_t1

__all__ = ["stored", "verdicts", "walk_frame", "rankings", "summary"]


def stored(profile: str = "paper") -> dict[str, Any] | None:
    """``{"walk": units, "t1": T1 result}`` when both are stored and fresh, else ``None``."""
    return with_t1("walk", t1_walk.T1WalkConfig(profile=profile), profile)


def verdicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per walked unit: the grid's selection (on the walk's own tuning of the grid)
    and its validation accuracy, the walk's best and its validation accuracy, the steps taken
    and why the walk stopped, and the test accuracy (mean, sd over the seeds) of the grid's
    selection (stored T1) and of the walk's best."""
    out = []
    for unit, u in data["walk"].items():
        name, eps, budget = u["algorithm"], u["epsilon_target"], u["uplink_budget_bits"]
        grid = u["tuning"][:u["grid_size"]]
        g = max(range(len(grid)), key=lambda i: (_score(grid[i]["validation_accuracy"]), -i))
        base = [r["test_accuracy"] for r in data["t1"]["records"]
                if r["algorithm"] == name and r["epsilon_target"] == eps and r["uplink_budget_bits"] == budget]
        grid_test, grid_sd = mean_sd(base)
        walk_test, walk_sd = mean_sd([float(r["test_accuracy"][-1]) for r in u["runs"]])
        best = u["tuning"][u["best"]]
        out.append({"unit": unit, "algorithm": name, "epsilon": eps, "grid_config": grid[g]["config"],
                    "grid_validation": grid[g]["validation_accuracy"], "config": u["config"],
                    "validation": best["validation_accuracy"], "moved": u["best"] >= u["grid_size"],
                    "steps": len(u["steps"]), "explored": len(u["tuning"]), "stop": u["stop"],
                    "grid_test": grid_test, "grid_test_sd": grid_sd, "test": walk_test, "test_sd": walk_sd})
    return out


def walk_frame(data: dict[str, Any]):
    """The verdicts as a table (accuracies in %)."""
    import pandas as pd

    rows = []
    for v in verdicts(data):
        rows.append({"algorithm": t1.LABELS.get(v["algorithm"], v["algorithm"]),
                     "ε": eps_text(v["epsilon"]),
                     "steps beyond the grid": v["steps"], "configurations run": v["explored"],
                     "stopped": v["stop"].replace("-", " "),
                     "best found": _text(v["config"]) if v["moved"] else "the grid's selection",
                     "validation: grid → best (%)": f"{100 * v['grid_validation']:.1f} → {100 * v['validation']:.1f}",
                     "test: grid (%)": pm(v["grid_test"], v["grid_test_sd"]),
                     "test: best (%)": pm(v["test"], v["test_sd"])})
    return pd.DataFrame(rows).set_index(["algorithm", "ε"])


def rankings(data: dict[str, Any]) -> dict[float, dict[str, list[str]]]:
    """At every ε: the walked private algorithms ordered by test accuracy with the grid's
    selections (``"grid"``, stored T1) and with the walk's best (``"walk"``)."""
    acc: dict[float, dict[str, dict[str, float]]] = {}
    for v in verdicts(data):
        if not math.isfinite(v["epsilon"]):
            continue
        cell = acc.setdefault(v["epsilon"], {"grid": {}, "walk": {}})
        cell["grid"][v["algorithm"]] = v["grid_test"]
        cell["walk"][v["algorithm"]] = v["test"]
    return {e: {k: sorted(a, key=lambda n: -_score(a[n])) for k, a in c.items()} for e, c in sorted(acc.items())}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """The numbers the page quotes: units walked and moved, how many stopped for each reason,
    the most steps, the largest test gain over the grid's selection (points) and whose, at how
    many ε the order and the leader change, at how many (and from which ε) Fed-PLT leads with
    the walk's configurations, the ceiling's gain, Fed-PLT's largest gain and the largest
    change (in absolute value) of the other walked private algorithms."""
    v = verdicts(data)
    private = [x for x in v if math.isfinite(x["epsilon"])]
    gains = {(x["algorithm"], x["epsilon"]): 100 * (x["test"] - x["grid_test"]) for x in private}
    top = max(gains, key=gains.get) if gains else None
    stops = Counter(x["stop"] for x in v)
    r = rankings(data)
    leads = [e for e, c in r.items() if c["walk"][0] == "fed-plt"]
    ceiling = [100 * (x["test"] - x["grid_test"]) for x in v if not math.isfinite(x["epsilon"])]
    return {"units": len(v), "moved": sum(x["moved"] for x in v),
            "no_edge_binds": stops.get("no-edge-binds", 0), "inside": stops.get("inside", 0),
            "step_limit": stops.get("step-limit", 0), "max_steps": max((x["steps"] for x in v), default=0),
            "max_gain": round(gains[top], 1) if top else 0.0,
            "max_gain_algorithm": t1.LABELS.get(top[0], top[0]) if top else "none",
            "max_gain_epsilon": f"{top[1]:g}" if top else "—",
            "order_changes": sum(c["grid"] != c["walk"] for c in r.values()),
            "leader_changes": sum(c["grid"][0] != c["walk"][0] for c in r.values()),
            "fedplt_leads": len(leads), "fedplt_leads_from": min(leads) if leads else math.nan,
            "epsilons": len(r), "ceiling_gain": round(ceiling[0], 1) if ceiling else math.nan,
            "fedplt_max_gain": round(max((g for (a, _), g in gains.items() if a == "fed-plt"), default=0.0), 1),
            "others_max_abs_gain": round(max((abs(g) for (a, _), g in gains.items() if a != "fed-plt"), default=0.0), 1)}
