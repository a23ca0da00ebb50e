"""What the threat model costs on task T2 (the ALI-DPFL CNN on Fashion-MNIST): the best private
T2 algorithm (record-level DP of each client's messages, no trusted party) beside the baselines
of :mod:`fedrepro.experiments.headtohead.t2_baselines` (central DP-SGD by a trusted curator,
client-level DP-FedAvg with a trusted server, the non-private ceilings), at every ε of the main
uplink budget, with the gaps in accuracy points: the T1 table of
:mod:`fedrepro.chapters.headtohead.baselines` on T2. The private algorithms are those of the
fair grids (``headtohead/t2-fair``: every one tunes the clip). The split at the reference cell
sets each fair selection beside the same configuration with the noise off and the clipping kept
(``headtohead/t2-noise-off``) and beside its ceiling. Presentation only: reads stored results."""

from __future__ import annotations

import math
from typing import Any

from fedrepro.chapters.headtohead.baselines import (
    PRIVATE,
    _gap,
    _marked,
    _pct,
    _pct_cell,
    comparison_frame,
    figure_of,
    summary_of,
    verdict_phrase,
    verdicts_of,
)
from fedrepro.chapters.headtohead.baselines import table_of as _table_of
from fedrepro.chapters.headtohead.t1_report import cells_frame
from fedrepro.chapters.headtohead.t2 import LABELS as T2_LABELS
from fedrepro.chapters.headtohead.t2 import T2Config
from fedrepro.experiments.headtohead.t2_baselines import (  # noqa: F401  (re-exported)
    BASELINES,
    CEILING_GRIDS,
    CENTRAL_GRID,
    CLIENT_GRID,
    T2BaselinesConfig,
    load_t2_baselines,
)
from fedrepro.headtohead.t2_task import N_CLIENTS

__all__ = ["LABELS", "PRIVATE", "load", "private_stored", "stored", "progress", "progress_text", "comparison_frame",
           "table_of", "baselines_table", "ceilings_table_of", "ceilings_table", "figure", "noise_off_stored",
           "decomposition_frame", "decomposition_table", "facts"]

#: What the page calls each baseline.
LABELS: dict[str, str] = {
    "central-dpsgd": "central DP-SGD (trusted curator, record level)",
    "dp-fedavg-client": "DP-FedAvg (trusted server, client level)",
    **{f"{a}-ceiling": f"{T2_LABELS[a]}, clipping and noise off" for a in PRIVATE},
}


def load(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the fair grids' private records, as :func:`private_stored`, the T2 baselines result) of
    ``profile``, computed where missing and the store is writable."""
    from fedrepro.experiments.headtohead.t2_fair_grid import compute_fair

    return {"records": compute_fair(profile)["records"]}, load_t2_baselines(profile)


def private_stored(profile: str = "paper") -> dict[str, Any] | None:
    """The private T2 algorithms the baselines are set against: the fair grid's records at the
    main budget (:func:`fedrepro.chapters.headtohead.t2_fair.final_computed`, the clip tuned by
    every algorithm; issue 50, item 1) when they are stored, else ``None``; never computes."""
    from fedrepro.chapters.headtohead import t2_fair as fair_view

    table = fair_view.fair_computed(profile)
    return None if table is None else fair_view.final_computed(profile, table)


def stored(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the private T2 records of :func:`private_stored`, the T2 baselines result) of
    ``profile`` when both are stored and fresh, else ``None``; never computes."""
    from fedrepro.core.cache import load_if_computed
    from fedrepro.experiments.headtohead import t2_baselines as runs

    private = private_stored(profile)
    tuning = load_if_computed(T2BaselinesConfig.for_profile(profile).tuning_config())
    if private is None or tuning is None:
        return None
    cells = load_if_computed(runs.with_selection(T2BaselinesConfig.for_profile(profile), tuning.result))
    return None if cells is None else (private, cells.result)


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
            row[f"ceiling, {b:.2g} bits (%)"] = _pct_cell(base, f"{a}-ceiling", math.inf, b)
        row[f"private, ε = {eps:g}, {top:.2g} bits (%)"] = _pct_cell(private, a, eps, top)
        rows.append(row)
    return pd.DataFrame(rows).set_index("algorithm")


def ceilings_table(profile: str = "paper") -> Any:
    """:func:`ceilings_table_of` on the stored T2 results of ``profile``."""
    return ceilings_table_of(*load(profile))


def figure(private: dict[str, Any], baselines: dict[str, Any], budget: float) -> Any:
    """T1's figure (:func:`fedrepro.chapters.headtohead.baselines.figure_of`) on T2."""
    return figure_of(comparison_frame(private, baselines, budget), task="T2")


# --------------------------------------------------------------------------- noise off, clipping kept


def noise_off_stored(profile: str = "paper") -> dict[str, Any] | None:
    """The noise-off runs of the fair selections (:mod:`fedrepro.experiments.headtohead.t2_noise_off`)
    when stored and fresh, else ``None``; never computes."""
    from fedrepro.chapters.headtohead import t2_fair as fair_view
    from fedrepro.core.cache import load_if_computed
    from fedrepro.experiments.headtohead import t2_noise_off

    table = fair_view.fair_computed(profile)
    out = None if table is None else load_if_computed(t2_noise_off.config_of(profile, table))
    return None if out is None else out.result


def _mean_sd(values: list[float]) -> tuple[float, float, int, int]:
    """Mean and sample standard deviation (n − 1; 0 for one value) of the seeds' test
    accuracies over the seeds that did not diverge (a diverged run's accuracy is NaN), as the
    book's tables count them, with (diverged, seeds); NaN where none is finite."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    ok = v[np.isfinite(v)]
    if ok.size == 0:
        return math.nan, math.nan, int(v.size), int(v.size)
    return float(ok.mean()), float(ok.std(ddof=1)) if ok.size > 1 else 0.0, int(v.size - ok.size), int(v.size)


def decomposition_frame(private: dict[str, Any], baselines: dict[str, Any], noise_off: dict[str, Any] | None,
                        epsilon: float, budget: float) -> Any:
    """One row per private algorithm at the reference cell (``epsilon``, ``budget``): its fair
    selection's test accuracy (mean and sd over the seeds), the same configuration with the
    noise off and the clipping kept (NaN without ``noise_off``), and its ceiling (clipping and
    noise off, its own grid), as fractions; with the seed-spread verdicts
    (:func:`fedrepro.report.prose.compare_summaries`; "" where a side is missing) of noise off
    against private (``noise``), of the ceiling against noise off (``clipping``) and of the
    ceiling against private (``ceiling``)."""
    import pandas as pd

    from fedrepro.report.prose import compare_summaries

    def accs(records: list[dict[str, Any]], name: str, **match: float) -> list[float]:
        return [r["test_accuracy"] for r in records if r["algorithm"] == name
                and all(r.get(k) == v for k, v in match.items())]

    def verdict(a: tuple[float, ...], b: tuple[float, ...]) -> str:
        return compare_summaries(a[0], a[1], b[0], b[1]) if math.isfinite(a[0]) and math.isfinite(b[0]) else ""

    rows = []
    for a in PRIVATE:
        p = _mean_sd(accs(private["records"], a, epsilon_target=epsilon, uplink_budget_bits=budget))
        n = _mean_sd(accs(noise_off["records"], a, uplink_budget_bits=budget) if noise_off is not None else [])
        c = _mean_sd(accs(baselines["records"], f"{a}-ceiling", uplink_budget_bits=budget))
        rows.append({"algorithm": a, "private": p[0], "private_sd": p[1], "private_diverged": p[2:],
                     "noise_off": n[0], "noise_off_sd": n[1], "noise_off_diverged": n[2:],
                     "ceiling": c[0], "ceiling_sd": c[1], "ceiling_diverged": c[2:],
                     "noise": verdict(n, p), "clipping": verdict(c, n), "ceiling_vs_private": verdict(c, p)})
    return pd.DataFrame(rows)


def decomposition_table(f: Any, epsilon: float) -> Any:
    """:func:`decomposition_frame` for the page: accuracies in % (mean ± sd over the seeds) and
    the two differences in points ("(level)" within the larger seed spread)."""
    import pandas as pd

    rows = []
    for r in f.itertuples():
        rows.append({"algorithm": T2_LABELS[r.algorithm],
                     f"private, ε = {epsilon:g} (%)": _marked(_pct(r.private, r.private_sd), *r.private_diverged),
                     "noise off, clipping kept (%)": _marked(_pct(r.noise_off, r.noise_off_sd), *r.noise_off_diverged),
                     "noise off − private (pts)": _gap(r.noise_off, r.noise_off_sd, r.private, r.private_sd),
                     "ceiling: clipping and noise off (%)": _marked(_pct(r.ceiling, r.ceiling_sd), *r.ceiling_diverged),
                     "ceiling − noise off (pts)": _gap(r.ceiling, r.ceiling_sd, r.noise_off, r.noise_off_sd)})
    return pd.DataFrame(rows).set_index("algorithm")


def facts(private: dict[str, Any], baselines: dict[str, Any], noise_off: dict[str, Any] | None,
          profile: str = "paper") -> dict[str, Any]:
    """The numbers and verdict phrases the T2 section of the page quotes (glued as
    ``h2h-baselines-t2-<key>``): :func:`fedrepro.chapters.headtohead.baselines.summary_of` and
    ``verdict-<key>`` (:func:`fedrepro.chapters.headtohead.baselines.verdicts_of`, in words) at
    T2's main budget, ``best_private_largest``/``best_private_smallest`` (the algorithm's page
    label) and ``best_private_text`` (the sentence's words: one leader at every ε, or the two), ``best_ceiling_of`` (its label), the rounds the budget buys the best ceiling and
    the best private algorithm's own (``best_ceiling_rounds``, ``own_ceiling_rounds``),
    client-level DP-FedAvg's noise multiplier at the largest ε (``client_sigma_largest``) and
    the norm of its server noise against the largest norm of the sum it is added to,
    σS√d / (N·S) (``client_noise_to_signal_largest``); the count of ceilings below their
    private algorithm at the reference cell beyond the seed spread (``ceilings_below``); and, with the noise-off runs, the counts of
    algorithms whose noise costs accuracy beyond the spread (``noise_costs``) and whose ceiling
    falls below the noise-off run beyond the spread (``clipping_helps``), and per algorithm
    ``noise_gap_<a>`` (noise off − private) and ``clip_gap_<a>`` (ceiling − noise off) in
    points, ``private_<a>``, ``noise_off_<a>`` and ``ceiling_<a>`` at the reference cell and the
    lowest and highest of its private means over the ε of the main budget
    (``private_low_<a>``, ``private_high_<a>``), in %."""
    p = T2Config.for_profile(profile)
    f = comparison_frame(private, baselines, p.budget_bits)
    out: dict[str, Any] = dict(summary_of(f))
    out.update({f"verdict-{k}": verdict_phrase(v) for k, v in verdicts_of(f).items()})
    out["best_private_largest"] = T2_LABELS[f["best_private"].iloc[-1]]
    out["best_private_smallest"] = T2_LABELS[f["best_private"].iloc[0]]
    leaders = list(dict.fromkeys(f["best_private"]))
    out["best_private_text"] = (f"{T2_LABELS[leaders[0]]} at every ε" if len(leaders) == 1 else
                                f"{out['best_private_smallest']} at the smallest ε and {out['best_private_largest']} "
                                "at the largest")
    out["best_ceiling_of"] = LABELS[f["best_ceiling_of"].iloc[-1]]
    eps = float(f["epsilon"].iloc[-1])
    client = [r for r in baselines["records"] if r["algorithm"] == "dp-fedavg-client" and r["epsilon_target"] == eps
              and r["uplink_budget_bits"] == p.budget_bits]
    if client:
        # the server's noise against the largest possible sum of the clipped updates: σS√d against N·S
        sigma, d = float(client[0]["noise_multiplier"]), float(client[0]["message_bits"]) / 32.0  # float32 message
        out["client_sigma_largest"] = sigma
        out["client_noise_to_signal_largest"] = sigma * math.sqrt(d) / N_CLIENTS
    for key, name in (("best_ceiling_rounds", f["best_ceiling_of"].iloc[-1]),
                      ("own_ceiling_rounds", f"{f['best_private'].iloc[-1]}-ceiling")):
        rounds = [r["rounds"] for r in baselines["records"] if r["algorithm"] == name
                  and r["uplink_budget_bits"] == p.budget_bits]
        out[key] = float(rounds[0]) if rounds else math.nan
    d = decomposition_frame(private, baselines, noise_off, p.tuning_epsilon, p.budget_bits)
    out["ceilings_below"] = float((d["ceiling_vs_private"] == "lower").sum())
    if noise_off is not None:
        out["noise_costs"] = float((d["noise"] == "higher").sum())
        out["clipping_helps"] = float((d["clipping"] == "lower").sum())
        means = cells_frame(private)
        means = means[means["uplink_budget_bits"] == p.budget_bits]
        for r in d.itertuples():
            out[f"noise_gap_{r.algorithm}"] = float(100 * (r.noise_off - r.private))
            out[f"clip_gap_{r.algorithm}"] = float(100 * (r.ceiling - r.noise_off))
            out[f"noise_off_{r.algorithm}"] = float(100 * r.noise_off)
            out[f"private_{r.algorithm}"] = float(100 * r.private)
            out[f"ceiling_{r.algorithm}"] = float(100 * r.ceiling)
            over_eps = means.loc[means["algorithm"] == r.algorithm, "accuracy"]
            out[f"private_low_{r.algorithm}"] = float(100 * over_eps.min())
            out[f"private_high_{r.algorithm}"] = float(100 * over_eps.max())
    return out
