"""What the threat model costs on task T2 (the ALI-DPFL CNN on Fashion-MNIST): the best private
T2 algorithm (record-level DP of each client's messages, no trusted party) beside the baselines
of :mod:`fedrepro.experiments.headtohead.t2_baselines` (central DP-SGD by a trusted curator,
client-level DP-FedAvg with a trusted server, the non-private ceilings), at every ε of the main
uplink budget, with the gaps in accuracy points: the T1 table of
:mod:`fedrepro.chapters.headtohead.baselines` on T2. Presentation only: reads the stored
results of T2 and of its baselines."""

from __future__ import annotations

import math
from typing import Any

from fedrepro.chapters.headtohead.baselines import PRIVATE, _cell, _pct, comparison_frame
from fedrepro.chapters.headtohead.baselines import table_of as _table_of
from fedrepro.chapters.headtohead.t1_report import cells_frame
from fedrepro.chapters.headtohead.t2 import LABELS as T2_LABELS
from fedrepro.chapters.headtohead.t2 import T2Config, load_t2
from fedrepro.experiments.headtohead.t2_baselines import (  # noqa: F401  (re-exported)
    BASELINES,
    CEILING_GRIDS,
    CENTRAL_GRID,
    CLIENT_GRID,
    T2BaselinesConfig,
    load_t2_baselines,
)

__all__ = ["LABELS", "PRIVATE", "load", "stored", "progress", "progress_text", "comparison_frame", "table_of",
           "baselines_table", "ceilings_table_of", "ceilings_table"]

#: What the page calls each baseline.
LABELS: dict[str, str] = {
    "central-dpsgd": "central DP-SGD (trusted curator, record level)",
    "dp-fedavg-client": "DP-FedAvg (trusted server, client level)",
    **{f"{a}-ceiling": f"{T2_LABELS[a]}, clipping and noise off" for a in PRIVATE},
}


def load(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the T2 result, the T2 baselines result) of ``profile``."""
    return load_t2(profile), load_t2_baselines(profile)


def stored(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the T2 result, the T2 baselines result) of ``profile`` when both are stored and fresh,
    else ``None``; never computes."""
    from fedrepro.chapters.headtohead import t2_report
    from fedrepro.core.cache import load_if_computed
    from fedrepro.experiments.headtohead import t2_baselines as runs

    _, t2_result = t2_report.load_computed(profile)
    tuning = load_if_computed(T2BaselinesConfig.for_profile(profile).tuning_config())
    if t2_result is None or tuning is None:
        return None
    cells = load_if_computed(runs.with_selection(T2BaselinesConfig.for_profile(profile), tuning.result))
    return None if cells is None else (t2_result, cells.result)


def progress(profile: str = "paper") -> dict[str, int]:
    """Finished and total units of the baselines' tuning and of their cells, read from the
    store without computing anything (the cells count none before the tuning is complete)."""
    from fedrepro.core.cache import finished_units, load_if_computed
    from fedrepro.experiments.headtohead import t2_baselines as runs

    cfg = T2BaselinesConfig.for_profile(profile)
    tcfg = cfg.tuning_config()
    tuning = load_if_computed(tcfg)
    units = runs._tuning_units(tcfg)
    out = {"tuning_total": len(units), "cells_total": len(runs._units(cfg))}
    out["tuning_done"] = len(units) if tuning is not None else len(
        finished_units(tcfg, units, runs._run_tuning_unit, combine=runs._combine_tuning))
    if tuning is None:
        out["cells_done"] = 0
        return out
    cells = runs.with_selection(cfg, tuning.result)
    out["cells_done"] = out["cells_total"] if load_if_computed(cells) is not None else len(
        finished_units(cells, runs._units(cells), runs._run_unit, combine=runs._combine))
    return out


def progress_text(profile: str = "paper") -> str:
    """Where the T2 baselines stand, for the page while they are not all stored."""
    p = progress(profile)
    return (f"The T2 baselines are not all stored yet: {p['tuning_done']} of {p['tuning_total']} tuning runs and "
            f"{p['cells_done']} of {p['cells_total']} cells (each on three seeds); they resume from the results "
            "store (`fedrepro.experiments.headtohead.t2_baselines.load_t2_baselines(\"paper\")`).")


def table_of(t2_result: dict[str, Any], baselines: dict[str, Any], budget: float) -> Any:
    """The table of T1's baselines page (:func:`fedrepro.chapters.headtohead.baselines.table_of`)
    on T2's results at uplink budget ``budget``."""
    return _table_of(t2_result, baselines, budget, task="T2", labels=T2_LABELS)


def baselines_table(profile: str = "paper") -> Any:
    """:func:`table_of` on the stored T2 results of ``profile`` at T2's main budget."""
    t2_result, baselines = load(profile)
    return table_of(t2_result, baselines, T2Config.for_profile(profile).budget_bits)


def ceilings_table_of(t2_result: dict[str, Any], baselines: dict[str, Any]) -> Any:
    """Every ceiling at every budget it was run at (test accuracy in %, mean ± sd over the
    seeds) beside its private algorithm at the largest ε of the largest budget (— where the
    T2 result does not hold that algorithm)."""
    import pandas as pd

    base = cells_frame(baselines)
    private = cells_frame(t2_result)
    budgets = sorted(base.loc[base["algorithm"].str.endswith("-ceiling"), "uplink_budget_bits"].unique())
    top = max(budgets)
    at = private[(private["uplink_budget_bits"] == top) & private["epsilon_target"].map(math.isfinite)]
    eps = float(at["epsilon_target"].max()) if not at.empty else math.nan
    rows = []
    for a in PRIVATE:
        row: dict[str, Any] = {"algorithm": T2_LABELS[a]}
        for b in budgets:
            row[f"ceiling, {b:.2g} bits (%)"] = _pct(*_cell(base, f"{a}-ceiling", math.inf, b))
        row[f"private, ε = {eps:g}, {top:.2g} bits (%)"] = _pct(*_cell(private, a, eps, top))
        rows.append(row)
    return pd.DataFrame(rows).set_index("algorithm")


def ceilings_table(profile: str = "paper") -> Any:
    """:func:`ceilings_table_of` on the stored T2 results of ``profile``."""
    return ceilings_table_of(*load(profile))
