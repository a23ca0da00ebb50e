"""What the edge probe of T1's grids shows (:mod:`fedrepro.chapters.headtohead.t1_edges`).

For every algorithm and ε of the main budget: the grid's selection and the edges it sits on,
the best configuration one step beyond them, whether it beats the grid on the validation
split (the *edge binds*), and the test accuracy the protocol would then report (its three
seeds against the grid selection's three seeds in the stored T1 result). The ranking is
recomputed with the best of grid and extensions, to see whether the order of the algorithms
depends on the grids' width. Reads stored results only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.chapters.headtohead import t1, t1_edges
from fedrepro.core.cache import load_if_computed

__all__ = ["stored", "with_t1", "verdicts", "edges_frame", "edge_columns", "rankings", "summary", "mean_sd", "pm", "eps_text"]


def with_t1(key: str, config: Any, profile: str) -> dict[str, Any] | None:
    """``{key: the units of config's result, "t1": T1's result}`` when both are stored and
    fresh, else ``None`` (the loader of the reports built on T1)."""
    extra = load_if_computed(config)
    base = load_if_computed(t1.T1Config.for_profile(profile))
    if extra is None or base is None:
        return None
    return {key: extra.result["units"], "t1": base.result}


def stored(profile: str = "paper") -> dict[str, Any] | None:
    """``{"edges": probe units, "t1": T1 result}`` when both are stored and fresh, else ``None``."""
    return with_t1("edges", t1_edges.T1EdgesConfig(profile=profile), profile)


def _edges_of(grid_config: dict[str, Any], candidates: list[dict[str, Any]]) -> list[str]:
    out = []
    for field in sorted(grid_config):
        values = sorted({c["config"][field] for c in candidates if c["config"][field] is not None})
        v = grid_config[field]
        if len(values) > 1 and v in (values[0], values[-1]):
            out.append(f"{field} {'high' if v == values[-1] else 'low'}")
    return out


def _text(config: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}" for k, v in sorted(config.items())
                     if v is not None)


def _score(v: float) -> float:
    return v if math.isfinite(v) else -math.inf


def mean_sd(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation of ``values`` (sd 0 for one value; NaN for none)."""
    if not values:
        return math.nan, math.nan
    return float(np.mean(values)), (float(np.std(values, ddof=1)) if len(values) > 1 else 0.0)


def pm(mean: float, sd: float) -> str:
    """An accuracy and its spread in percent, ``"72.0 ± 2.0"``."""
    return f"{100 * mean:.1f} ± {100 * sd:.1f}"


def eps_text(epsilon: float) -> str:
    """ε as the tables print it (``"—"`` for the non-private ceiling)."""
    return "—" if not math.isfinite(epsilon) else f"{epsilon:g}"


def verdicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per probed unit: the grid's selection and validation accuracy, its edges,
    the best extension and its validation accuracy, whether the edge binds, and the test
    accuracy (mean, sd over the seeds) of the grid selection (stored T1) and of the extension."""
    out = []
    for unit, u in data["edges"].items():
        name, eps = u["algorithm"], u["epsilon_target"]
        budget = u["uplink_budget_bits"]
        grid = u["grid"]
        chosen = grid["tuning"][int(grid["selected"])]
        base = [r["test_accuracy"] for r in data["t1"]["records"]
                if r["algorithm"] == name and r["epsilon_target"] == eps and r["uplink_budget_bits"] == budget]
        grid_test, grid_sd = mean_sd(base)
        row = {"unit": unit, "algorithm": name, "epsilon": eps, "grid_config": chosen["config"],
               "edges": _edges_of(chosen["config"], grid["tuning"]), "grid_validation": chosen["validation_accuracy"],
               "grid_test": grid_test, "grid_test_sd": grid_sd,
               "extension_config": None, "extension_validation": math.nan, "binds": False,
               "extension_test": math.nan, "extension_test_sd": math.nan}
        ext = u["extensions"]
        if ext is not None:
            best = ext["tuning"][int(ext["selected"])]
            tests = [float(r["test_accuracy"][-1]) for r in ext["runs"]]
            row.update(extension_config=best["config"], extension_validation=best["validation_accuracy"],
                       binds=_score(best["validation_accuracy"]) > _score(chosen["validation_accuracy"]),
                       extension_test=mean_sd(tests)[0], extension_test_sd=mean_sd(tests)[1])
        out.append(row)
    return out


def edges_frame(data: dict[str, Any]):
    """The verdicts as a table (accuracies in %)."""
    import pandas as pd

    rows = [{"algorithm": t1.LABELS.get(v["algorithm"], v["algorithm"]), "ε": eps_text(v["epsilon"]),
             **edge_columns(v)} for v in verdicts(data)]
    return pd.DataFrame(rows).set_index(["algorithm", "ε"])


def edge_columns(v: dict[str, Any], *, extensions: bool = False) -> dict[str, Any]:
    """The columns of a probe's table for one verdict (T1's, or T2's with ``extensions``: the
    number of extensions run, and a tie on validation said as such); accuracies in %."""
    binds = "yes" if v["binds"] else "no (a tie)" if extensions and v["extension_validation"] == v[
        "grid_validation"] else "no"
    return {"grid's selection at the edges": ", ".join(v["edges"]) or "none",
            **({"extensions": v["extensions"]} if extensions else {}),
            "validation: grid (%)": round(100 * v["grid_validation"], 1),
            "best one step beyond": _text(v["extension_config"]) if v["extension_config"] else "—",
            "validation: beyond (%)": round(100 * v["extension_validation"], 1),
            "edge binds": binds,
            "test: grid (%)": pm(v["grid_test"], v["grid_test_sd"]),
            "test: beyond (%)": pm(v["extension_test"], v["extension_test_sd"]) if v["binds"] else "—"}


def rankings(data: dict[str, Any]) -> dict[float, dict[str, list[str]]]:
    """At every ε: the private algorithms ordered by test accuracy with the grid's selections
    (``"grid"``) and with the best of grid and extensions on the validation split (``"wider"``)."""
    acc: dict[float, dict[str, dict[str, float]]] = {}
    for v in verdicts(data):
        if not math.isfinite(v["epsilon"]):
            continue
        cell = acc.setdefault(v["epsilon"], {"grid": {}, "wider": {}})
        cell["grid"][v["algorithm"]] = v["grid_test"]
        cell["wider"][v["algorithm"]] = v["extension_test"] if v["binds"] else v["grid_test"]
    return {e: {k: sorted(a, key=lambda n: -_score(a[n])) for k, a in c.items()} for e, c in sorted(acc.items())}


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """The numbers the page quotes: units probed, units whose edge binds, the largest test gain
    where one binds (points), whose and with which configuration, Fed-PLT's largest gain, at how
    many ε the order of the algorithms (and the leader) changes with the wider grid, at how many
    (and from which) Fed-PLT then leads, and the best test accuracy of a binding private FedPAQ
    extension."""
    v = verdicts(data)
    bound = [x for x in v if x["binds"]]
    gains = {(x["algorithm"], x["epsilon"]): 100 * (x["extension_test"] - x["grid_test"]) for x in bound}
    top = max(gains, key=gains.get) if gains else None
    plt_gain = [g for (a, _), g in gains.items() if a == "fed-plt"]
    r = rankings(data)
    leads = [e for e, c in r.items() if c["wider"][0] == "fed-plt"]
    paq = [x["extension_test"] for x in bound if x["algorithm"].startswith("fedpaq")]
    top_row = next((x for x in bound if (x["algorithm"], x["epsilon"]) == top), None)
    return {"units": len(v), "binds": len(bound),
            "max_gain_config": _text(top_row["extension_config"]) if top_row else "none",
            "fedplt_leads": len(leads), "fedplt_leads_from": min(leads) if leads else math.nan,
            "fedpaq_beyond_max": max(paq) if paq else math.nan,
            "edge_units": sum(bool(x["edges"]) for x in v),
            "max_gain": round(gains[top], 1) if top else 0.0,
            "max_gain_algorithm": t1.LABELS.get(top[0], top[0]) if top else "none",
            "max_gain_epsilon": ("—" if top is None or not math.isfinite(top[1]) else f"{top[1]:g}"),
            "fedplt_max_gain": round(max(plt_gain), 1) if plt_gain else 0.0,
            "order_changes": sum(c["grid"] != c["wider"] for c in r.values()),
            "leader_changes": sum(c["grid"][0] != c["wider"][0] for c in r.values()),
            "epsilons": len(r)}
