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

from fedrepro.chapters.headtohead.baselines import PRIVATE, _cell, _gap, _pct, comparison_frame
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

__all__ = ["LABELS", "PRIVATE", "load", "comparison_frame", "table_of", "baselines_table", "ceilings_table_of",
           "ceilings_table"]

#: What the page calls each baseline.
LABELS: dict[str, str] = {
    "central-dpsgd": "central DP-SGD (trusted curator, record level)",
    "dp-fedavg-client": "DP-FedAvg (trusted server, client level)",
    **{f"{a}-ceiling": f"{T2_LABELS[a]}, clipping and noise off" for a in PRIVATE},
}


def load(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the T2 result, the T2 baselines result) of ``profile``."""
    return load_t2(profile), load_t2_baselines(profile)


def table_of(t2_result: dict[str, Any], baselines: dict[str, Any], budget: float) -> Any:
    """The table of T1's baselines page on T2's results: for each ε at uplink budget ``budget``,
    the best private T2 algorithm beside central DP-SGD, client-level DP-FedAvg and the
    non-private ceilings (test accuracy in %, mean ± standard deviation over the seeds), and
    each baseline's gap to the best private algorithm in points (positive: the baseline is
    ahead)."""
    import pandas as pd

    f = comparison_frame(t2_result, baselines, budget)
    rows = []
    for r in f.itertuples():
        rows.append({"ε": f"{r.epsilon:g}", "best private T2 algorithm": T2_LABELS[r.best_private],
                     "its accuracy (%)": _pct(r.private, r.private_sd),
                     "central DP-SGD (%)": _pct(r.central, r.central_sd),
                     "central − private (pts)": _gap(r.central, r.central_sd, r.private, r.private_sd),
                     "client-level DP-FedAvg (%)": _pct(r.client, r.client_sd),
                     "client-level − private (pts)": _gap(r.client, r.client_sd, r.private, r.private_sd),
                     "its ceiling (%)": _pct(r.own_ceiling, r.own_ceiling_sd),
                     "its ceiling − private (pts)": _gap(r.own_ceiling, r.own_ceiling_sd, r.private, r.private_sd),
                     "best ceiling (%)": _pct(r.best_ceiling, r.best_ceiling_sd),
                     "best ceiling − private (pts)": _gap(r.best_ceiling, r.best_ceiling_sd, r.private, r.private_sd)})
    return pd.DataFrame(rows).set_index("ε")


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
