"""What the T2 page shows of :mod:`fedrepro.chapters.headtohead.t2`: the state of the
computation, the tables, the figures (those of T1, :mod:`fedrepro.chapters.headtohead.t1_report`,
with T2's labels) and the numbers the prose quotes. Presentation only: nothing here is in an
experiment's import graph."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.chapters.headtohead import t1_report as common
from fedrepro.chapters.headtohead import t2

__all__ = ["Text", "t2_progress", "load_computed", "state_text", "ranking_frame", "tuning_frame",
           "figure_accuracy_vs_epsilon", "figure_accuracy_vs_budget", "pending_figure", "budget_checks",
           "budget_checks_table", "t2_summary", "reading_text", "task_ranks_frame", "t1_if_computed", "alidpfl_computed", "alidpfl_text",
           "tuning_edges", "tuning_text"]

TITLE = "T2 (Fashion-MNIST CNN, 10 clients)"


class Text:
    """Markdown computed by the library, shown as page text (MyST renders ``text/markdown``
    outputs); its plain-text form is the same text, so that nbval can compare it."""

    def __init__(self, markdown: str) -> None:
        self.markdown = markdown

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:
        return self.markdown


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def t2_progress(profile: str = "paper") -> dict[str, int]:
    """Finished and total units of the tuning and of the grid, read from the store without
    computing anything (a finished experiment counts all its units; the grid counts none
    before the tuning is complete, since its config holds the selection)."""
    from fedrepro.core import cache

    cfg = t2.T2Config.for_profile(profile)
    tuning_cfg = cfg.tuning_config()
    tuning = cache.load_if_computed(tuning_cfg)
    out = {"tuning_total": len(t2._tuning_units(tuning_cfg)), "grid_total": len(t2._units(cfg))}
    out["tuning_done"] = out["tuning_total"] if tuning is not None else \
        _units_in_store(tuning_cfg, t2._tuning_units(tuning_cfg), t2._run_tuning_unit, t2._combine_tuning)
    if tuning is None:
        out["grid_done"] = 0
        return out
    grid = t2.with_selection(cfg, tuning.result)
    out["grid_done"] = out["grid_total"] if cache.load_if_computed(grid) is not None else \
        _units_in_store(grid, t2._units(grid), t2._run_unit, t2._combine)
    return out


def _units_in_store(config: Any, units: list[str], run_unit: Any, combine: Any) -> int:
    from fedrepro.core.cache import finished_units

    return len(finished_units(config, units, run_unit, combine=combine))


def t1_if_computed(profile: str = "paper") -> tuple[dict[str, Any] | None, float]:
    """The stored T1 result (``None`` when not computed) and its main budget."""
    from fedrepro.chapters.headtohead import t1
    from fedrepro.core.cache import load_if_computed

    cfg = t1.T1Config.for_profile(profile)
    stored = load_if_computed(cfg)
    return (stored.result if stored is not None else None), cfg.budget_bits


def load_computed(profile: str = "paper") -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the tuning result, the grid result), each ``None`` while it is still pending."""
    from fedrepro.core.cache import load_if_computed

    cfg = t2.T2Config.for_profile(profile)
    tuning = load_if_computed(cfg.tuning_config())
    if tuning is None:
        return None, None
    grid = load_if_computed(t2.with_selection(cfg, tuning.result))
    return tuning.result, (grid.result if grid is not None else None)


def ranking_frame(result: dict[str, Any], budget: float) -> Any:
    """T1's ranking table (:func:`t1_report.ranking_frame`) for T2."""
    return common.ranking_frame(result, budget, labels=t2.LABELS)


def tuning_frame(tuning: dict[str, Any]) -> Any:
    """The configuration the validation split selected for every algorithm at the reference
    cell, its validation accuracy and the grid's worst."""
    return common.selected_frame(tuning, tuning["tuning"][0]["uplink_budget_bits"], labels=t2.LABELS)


def figure_accuracy_vs_epsilon(result: dict[str, Any], budget: float) -> Any:
    return common.figure_accuracy_vs_epsilon(result, budget, labels=t2.LABELS, title=TITLE)


def figure_accuracy_vs_budget(result: dict[str, Any], epsilons: tuple[float, ...]) -> Any:
    return common.figure_accuracy_vs_budget(result, epsilons, labels=t2.LABELS)


def budget_checks(result: dict[str, Any]) -> dict[str, float]:
    """T1's acceptance checks (:func:`t1_report.budget_checks`) over T2's runs."""
    return common.budget_checks(result)


def budget_checks_table(result: dict[str, Any]) -> dict[str, float | int]:
    """The acceptance checks of :func:`budget_checks` under the names the page's table shows
    (the run counts as integers)."""
    c = budget_checks(result)
    return {"runs": int(c["runs"]), "private runs": int(c["private_runs"]),
            "largest |ε spent / target − 1|": common.roundoff(c["epsilon_gap"], common.CALIBRATION_TOLERANCE),
            "largest ε spent / target": c["epsilon_ratio_max"],
            "largest share of the uplink budget used": c["budget_share_max"],
            "smallest share of the uplink budget used": c["budget_share_min"]}


def t2_summary(result: dict[str, Any], budget: float) -> dict[str, Any]:
    """The numbers the page quotes at ``budget``: the ceiling, at every ε the best private
    algorithm and its accuracy, every algorithm's accuracy, Fed-PLT's, DPFL's and DP-FedSGD's
    distance to the best (per ε, and its smallest and largest over ε), how much DPFL's and
    Fed-PLT's accuracy moves over ε, the largest seed spread, and the rounds the quantized
    FedPAQ ran."""
    cells = common.cells_frame(result)
    at = cells[cells["uplink_budget_bits"] == budget]
    out: dict[str, Any] = {}
    ceiling = at[at["algorithm"] == "fedavg"]
    out["ceiling"] = float(ceiling["accuracy"].iloc[0]) if len(ceiling) else math.nan
    for e in sorted(at.loc[np.isfinite(at["epsilon_target"]), "epsilon_target"].unique()):
        c = at[at["epsilon_target"] == e].sort_values("accuracy", ascending=False)
        key = f"{e:g}".replace(".", "p")
        out[f"best_{key}"] = t2.LABELS.get(c["algorithm"].iloc[0], c["algorithm"].iloc[0])
        out[f"best_acc_{key}"] = float(c["accuracy"].iloc[0])
        for _, row in c.iterrows():
            out[f"acc_{row['algorithm']}_{key}"] = float(row["accuracy"])
        for name in ("fed-plt", "dpfl", "dp-fedsgd"):
            if f"acc_{name}_{key}" in out:
                out[f"gap_{name}_{key}"] = out[f"best_acc_{key}"] - out[f"acc_{name}_{key}"]
    for name in ("fed-plt", "dpfl", "dp-fedsgd"):
        gaps = [v for k, v in out.items() if k.startswith(f"gap_{name}_")]
        if gaps:
            out[f"gap_{name}_low"], out[f"gap_{name}_high"] = min(gaps), max(gaps)
    private_at = at[np.isfinite(at["epsilon_target"])]
    for name in ("dpfl", "fed-plt"):
        accs = private_at.loc[private_at["algorithm"] == name, "accuracy"]
        if len(accs):
            out[f"range_{name}"] = float(accs.max() - accs.min())
    private = cells[np.isfinite(cells["epsilon_target"])]
    out["sd_max"] = float(private["sd"].max()) if len(private) else math.nan
    paq = cells[cells["algorithm"].isin(["fedpaq", "fedpaq-q"])]
    out["fedpaq_best"] = float(paq["accuracy"].max()) if len(paq) else math.nan
    q = [r["rounds"] for r in result["records"] if r["algorithm"] == "fedpaq-q"]
    out["fedpaq_q_rounds"] = max(q) if q else 0
    return out


def state_text(progress: dict[str, int]) -> Text:
    """What is computed: the full grid, or how many units of the tuning and the grid are in
    the store (the page shows the protocol and waits for the rest)."""
    if progress["grid_done"] == progress["grid_total"]:
        return Text(f"All {progress['tuning_total']} tuning runs and all {progress['grid_total']} cells "
                    "(3 seeds each) are computed.")
    return Text(f"**Pending.** The paper-profile runs of T2 are being computed: {progress['tuning_done']} of the "
                f"{progress['tuning_total']} tuning runs and {progress['grid_done']} of the "
                f"{progress['grid_total']} cells are in the store. The tables and figures below appear when the "
                "grid is complete.")


def pending_figure(progress: dict[str, int]) -> Any:
    """A placeholder figure that names what is still being computed."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 1.6))
    ax.axis("off")
    ax.text(0.5, 0.5, f"T2 pending: {progress['tuning_done']}/{progress['tuning_total']} tuning runs, "
            f"{progress['grid_done']}/{progress['grid_total']} cells computed", ha="center", va="center")
    return fig


def task_ranks_frame(t1_result: dict[str, Any], t1_budget: float, t2_result: dict[str, Any],
                     t2_budget: float) -> Any:
    """Each private algorithm's mean rank over ε at the main budget of T1 and of T2 (1 = best)."""
    import pandas as pd

    def ranks(result, budget):
        cells = common.cells_frame(result)
        cells = cells[(cells["uplink_budget_bits"] == budget) & np.isfinite(cells["epsilon_target"])]
        r = cells.assign(rank=cells.groupby("epsilon_target")["accuracy"].rank(ascending=False, method="min"))
        return r.groupby("algorithm")["rank"].mean()

    one, two = ranks(t1_result, t1_budget), ranks(t2_result, t2_budget)
    names = [a for a in t2.LABELS if a != "fedavg" and (a in one.index or a in two.index)]
    return pd.DataFrame({"algorithm": [t2.LABELS[a] for a in names],
                         "T1 (MNIST softmax)": [one.get(a, math.nan) for a in names],
                         "T2 (Fashion-MNIST CNN)": [two.get(a, math.nan) for a in names]}).set_index("algorithm")


def reading_text(result: dict[str, Any], budget: float) -> Text:
    """The paragraph that reads the ranking, every number computed from ``result``."""
    s = t2_summary(result, budget)
    eps = sorted(float(k.removeprefix("best_acc_").replace("p", ".")) for k in s if k.startswith("best_acc_"))
    key = {e: f"{e:g}".replace(".", "p") for e in eps}
    leaders = dict.fromkeys(s[f"best_{key[e]}"] for e in eps)
    lo, hi = eps[0], eps[-1]
    parts = [f"At {budget:.2g} uplink bits the best private algorithm is "
             + (f"{next(iter(leaders))} at every ε" if len(leaders) == 1 else
                "; ".join(f"{s[f'best_{key[e]}']} at ε = {e:g}" for e in eps))
             + f", from {_pct(s[f'best_acc_{key[lo]}'])} at ε = {lo:g} to {_pct(s[f'best_acc_{key[hi]}'])} at "
               f"ε = {hi:g}; non-private FedAvg under the same budget reaches {_pct(s['ceiling'])}."]
    for name, label in (("fed-plt", "Fed-PLT's private variant"), ("dpfl", "DPFL with a fixed τ"),
                        ("dp-fedsgd", "DP-FedSGD")):
        if all(f"gap_{name}_{key[e]}" in s for e in eps) and s[f"gap_{name}_high"] > 0:
            parts.append(f"{label} ends {100 * s[f'gap_{name}_low']:.1f} to {100 * s[f'gap_{name}_high']:.1f} points "
                         f"below the best (over ε from {lo:g} to {hi:g}).")
    parts.append(f"Private FedPAQ reaches at most {_pct(s['fedpaq_best'])} in any cell (chance is 10 %): its valid "
                 f"noise σ·2ηEC falls on each of the CNN's 582,026 coordinates. The largest seed spread of a "
                 f"private cell is {100 * s['sd_max']:.1f} points (standard deviation over three seeds).")
    return Text(" ".join(parts))


def alidpfl_computed(profile: str = "paper") -> dict[str, Any] | None:
    """ALI-DPFL's stored T2 runs (:mod:`fedrepro.chapters.headtohead.t2_alidpfl`), ``None``
    while they are pending."""
    from fedrepro.chapters.headtohead import t2_alidpfl
    from fedrepro.core.cache import load_if_computed

    tuning = load_if_computed(t2_alidpfl.T2ALITuningConfig(profile=profile))
    if tuning is None:
        return None
    stored = load_if_computed(t2_alidpfl.T2ALIConfig(profile=profile,
                                                     selected=int(tuning.result["tuning"][0]["selected"])))
    return stored.result if stored is not None else None


def alidpfl_text(result: dict[str, Any], ali: dict[str, Any], budget: float) -> Text:
    """The paragraph that reads ALI-DPFL against DPFL with a fixed τ on T2, computed."""
    s = common.alidpfl_summary(result, ali, budget)
    side = "below" if s["margin_high"] < 0 else ("above" if s["margin_low"] > 0 else "on both sides of")
    return Text(f"Within the same uplink budget ALI-DPFL's message carries two gradients besides its update, so it "
                f"runs {s['rounds_ratio']:.2f} times DPFL's rounds. Over ε it ends {side} DPFL with a fixed τ tuned "
                f"the same way ({100 * s['margin_low']:+.1f} to {100 * s['margin_high']:+.1f} points), although its "
                f"reports are not charged to its privacy budget.")


def tuning_edges(tuning: dict[str, Any]) -> dict[str, list[str]]:
    """Per algorithm, the hyper-parameters (with more than one value in its grid) whose
    selected value is the smallest or the largest of the grid."""
    out = {}
    for t in tuning["tuning"]:
        cands = t["candidates"]
        chosen = cands[int(t["selected"])]["config"]
        edge = []
        for key, value in chosen.items():
            values = sorted({c["config"][key] for c in cands if c["config"][key] is not None},
                            key=float) if all(isinstance(c["config"][key], (int, float)) or c["config"][key] is None
                                              for c in cands) else []
            if len(values) > 1 and value is not None and value in (values[0], values[-1]):
                edge.append(f"{key} = {value:g}" + (" (largest)" if value == values[-1] else " (smallest)"))
        out[t["algorithm"]] = edge
    return out


def tuning_text(tuning: dict[str, Any]) -> Text:
    """What the selection says about the grids, computed from the tuning result."""
    edges = tuning_edges(tuning)
    learning = [a for a in edges if a not in ("fedpaq", "fedpaq-q")]
    at_edge = [a for a in learning if edges[a]]
    lr_top = [a for a in learning if any(e.startswith("lr = ") and e.endswith("(largest)") for e in edges[a])]
    parts = [f"For {len(at_edge)} of the {len(learning)} algorithms that learn, the selected configuration sits at an "
             f"end of its grid in at least one hyper-parameter, and {len(lr_top)} of them chose the largest step size "
             f"of the grid: "
             + "; ".join(f"{t2.LABELS.get(a, a)}: {', '.join(edges[a]) or 'inside'}" for a in learning) + "."]
    parts.append("The grids were fixed before the runs and have the same size for every algorithm, as the protocol "
                 "requires; on the CNN they are too narrow to say that an algorithm has reached its best, and a wider "
                 "grid could raise each of them.")
    paq = [c["validation_accuracy"] for t in tuning["tuning"] if t["algorithm"] in ("fedpaq", "fedpaq-q")
           for c in t["candidates"] if math.isfinite(c["validation_accuracy"])]
    if paq:
        parts.append(f"Private FedPAQ's best validation accuracy over its {len(paq)} configurations is "
                     f"{_pct(max(paq))}.")
    return Text(" ".join(parts))
