"""What the threat model costs on task T1: the best private T1 algorithm (record-level DP of
each client's messages, no trusted party) beside the baselines of
:mod:`fedrepro.experiments.headtohead.t1_baselines` (central DP-SGD by a trusted curator,
client-level DP-FedAvg with a trusted server, the non-private ceilings), at every ε of the main
uplink budget, with the gaps in accuracy points. Presentation only: reads the stored results of
T1 and of its baselines."""

from __future__ import annotations

import math
from typing import Any

from fedrepro.chapters.headtohead.t1 import LABELS as T1_LABELS
from fedrepro.chapters.headtohead.t1 import T1Config, load_t1
from fedrepro.chapters.headtohead.t1_report import cells_frame
from fedrepro.experiments.headtohead.t1_baselines import (  # noqa: F401  (re-exported)
    BASELINES,
    CEILING_GRIDS,
    CENTRAL_EPOCHS,
    CENTRAL_GRID,
    CLIENT_GRID,
    T1BaselinesConfig,
    load_t1_baselines,
)
from fedrepro.report.prose import compare_summaries

__all__ = ["LABELS", "PRIVATE", "load", "comparison_frame", "table_of", "baselines_table", "ceilings_table",
           "figure_of", "figure_accuracy_vs_epsilon", "summary_of", "baselines_summary", "verdicts_of",
           "baselines_verdicts", "verdict_phrase"]

#: The private T1 algorithms (record level, no trusted party), in T1's order.
PRIVATE: tuple[str, ...] = ("dp-fedsgd", "dpfl", "fedpaq", "fedpaq-q", "fed-plt")

#: What the page calls each baseline.
LABELS: dict[str, str] = {
    "central-dpsgd": "central DP-SGD (trusted curator, record level)",
    "dp-fedavg-client": "DP-FedAvg (trusted server, client level)",
    **{f"{a}-ceiling": f"{T1_LABELS[a]}, clipping and noise off" for a in PRIVATE},
}


def load(profile: str = "paper") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the T1 result, the T1 baselines result) of ``profile``."""
    return load_t1(profile), load_t1_baselines(profile)


def _cell(cells: Any, name: str, epsilon: float, budget: float) -> tuple[float, float]:
    row = cells[(cells["algorithm"] == name) & (cells["epsilon_target"] == epsilon)
                & (cells["uplink_budget_bits"] == budget)]
    if row.empty:
        return math.nan, math.nan
    return float(row["accuracy"].iloc[0]), float(row["sd"].iloc[0])


def _diverged(cells: Any, name: str, epsilon: float, budget: float) -> tuple[int, int]:
    """(seeds whose run diverged, seeds) of a cell; (0, 0) where the cell is missing."""
    row = cells[(cells["algorithm"] == name) & (cells["epsilon_target"] == epsilon)
                & (cells["uplink_budget_bits"] == budget)]
    if row.empty:
        return 0, 0
    return int(row["seeds"].iloc[0] - row["finite"].iloc[0]), int(row["seeds"].iloc[0])


def _marked(text: str, diverged: int, seeds: int) -> str:
    """``text`` (a mean ± sd over the seeds that did not diverge) with the count of those that
    did, where any did."""
    return text if diverged == 0 or text == "—" else f"{text} ({diverged} of {seeds} diverged)"


def _pct_cell(cells: Any, name: str, epsilon: float, budget: float) -> str:
    """A cell's test accuracy in % (mean ± sd over its finite seeds), marked where seeds diverged."""
    return _marked(_pct(*_cell(cells, name, epsilon, budget)), *_diverged(cells, name, epsilon, budget))


def comparison_frame(t1_result: dict[str, Any], baselines: dict[str, Any], budget: float) -> Any:
    """One row per ε of the main ``budget`` (numbers, accuracies as fractions): the best
    private T1 algorithm (by mean test accuracy over the seeds), its mean and standard
    deviation; central DP-SGD's and client-level DP-FedAvg's at that ε; the ceiling of the
    best private algorithm and the best of all ceilings at ``budget`` (ε = ∞)."""
    import pandas as pd

    private = cells_frame(t1_result)
    private = private[private["algorithm"].isin(PRIVATE) & (private["uplink_budget_bits"] == budget)]
    base = cells_frame(baselines)
    ceilings = base[base["algorithm"].str.endswith("-ceiling") & (base["uplink_budget_bits"] == budget)]
    if ceilings.empty:
        raise ValueError(f"budget {budget!r} is not a budget of the stored ceilings")
    top = ceilings.loc[ceilings["accuracy"].idxmax()]
    rows = []
    for eps in sorted(private["epsilon_target"].unique()):
        at = private[private["epsilon_target"] == eps]
        best = at.loc[at["accuracy"].idxmax()]
        central = _cell(base, "central-dpsgd", eps, budget)
        client = _cell(base, "dp-fedavg-client", eps, budget)
        own = _cell(base, f"{best['algorithm']}-ceiling", math.inf, budget)
        rows.append({"epsilon": float(eps), "best_private": best["algorithm"], "private": float(best["accuracy"]),
                     "private_sd": float(best["sd"]), "central": central[0], "central_sd": central[1],
                     "client": client[0], "client_sd": client[1], "own_ceiling": own[0], "own_ceiling_sd": own[1],
                     "best_ceiling_of": top["algorithm"], "best_ceiling": float(top["accuracy"]),
                     "best_ceiling_sd": float(top["sd"]),
                     "private_diverged": _diverged(private, best["algorithm"], eps, budget),
                     "central_diverged": _diverged(base, "central-dpsgd", eps, budget),
                     "client_diverged": _diverged(base, "dp-fedavg-client", eps, budget),
                     "own_ceiling_diverged": _diverged(base, f"{best['algorithm']}-ceiling", math.inf, budget),
                     "best_ceiling_diverged": _diverged(base, top["algorithm"], math.inf, budget)})
    return pd.DataFrame(rows)


def _pct(mean: float, sd: float) -> str:
    return "—" if not math.isfinite(mean) else f"{100 * mean:.1f} ± {100 * sd:.1f}"


def _gap(a: float, sd_a: float, b: float, sd_b: float) -> str:
    """``a − b`` in points, with "(level)" where the difference does not exceed the larger of
    the two seed standard deviations (:func:`fedrepro.report.prose.compare_summaries`)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return "—"
    level = compare_summaries(a, sd_a, b, sd_b) == "level"
    return f"{100 * (a - b):+.1f}" + (" (level)" if level else "")


def table_of(result: dict[str, Any], baselines: dict[str, Any], budget: float, *, task: str = "T1",
             labels: dict[str, str] | None = None) -> Any:
    """The page's table for ``task`` (its stored result and its baselines' at uplink budget
    ``budget``): for each ε, the best private algorithm of the task beside central DP-SGD,
    client-level DP-FedAvg and the non-private ceilings (test accuracy in %, mean ± standard
    deviation over the seeds), and each baseline's gap to the best private algorithm in
    points (positive: the baseline is ahead; "(level)" where the difference does not exceed
    the larger seed standard deviation, the book's rule). ``labels`` names the task's
    algorithms (default: T1's)."""
    import pandas as pd

    labels = T1_LABELS if labels is None else labels
    f = comparison_frame(result, baselines, budget)
    rows = []
    for r in f.itertuples():
        rows.append({"ε": f"{r.epsilon:g}", f"best private {task} algorithm": labels[r.best_private],
                     "its accuracy (%)": _marked(_pct(r.private, r.private_sd), *r.private_diverged),
                     "central DP-SGD (%)": _marked(_pct(r.central, r.central_sd), *r.central_diverged),
                     "central − private (pts)": _gap(r.central, r.central_sd, r.private, r.private_sd),
                     "client-level DP-FedAvg (%)": _marked(_pct(r.client, r.client_sd), *r.client_diverged),
                     "client-level − private (pts)": _gap(r.client, r.client_sd, r.private, r.private_sd),
                     "its ceiling (%)": _marked(_pct(r.own_ceiling, r.own_ceiling_sd), *r.own_ceiling_diverged),
                     "its ceiling − private (pts)": _gap(r.own_ceiling, r.own_ceiling_sd, r.private, r.private_sd),
                     "best ceiling (%)": _marked(_pct(r.best_ceiling, r.best_ceiling_sd), *r.best_ceiling_diverged),
                     "best ceiling − private (pts)": _gap(r.best_ceiling, r.best_ceiling_sd, r.private, r.private_sd)})
    return pd.DataFrame(rows).set_index("ε")


def baselines_table(profile: str = "paper") -> Any:
    """:func:`table_of` on the stored T1 results of ``profile`` at T1's main budget."""
    t1_result, baselines = load(profile)
    return table_of(t1_result, baselines, T1Config.for_profile(profile).budget_bits)


def ceilings_table(profile: str = "paper") -> Any:
    """Every ceiling at every T1 budget (test accuracy in %, mean ± sd over the seeds) beside
    the private algorithm at the largest ε of the main budget."""
    import pandas as pd

    t1_result, baselines = load(profile)
    cfg = T1Config.for_profile(profile)
    base = cells_frame(baselines)
    private = cells_frame(t1_result)
    eps = max(cfg.epsilons)
    budgets = sorted(base.loc[base["algorithm"].str.endswith("-ceiling"), "uplink_budget_bits"].unique())
    rows = []
    for a in PRIVATE:
        row: dict[str, Any] = {"algorithm": T1_LABELS[a]}
        for b in budgets:
            row[f"ceiling, {b:.2g} bits (%)"] = _pct_cell(base, f"{a}-ceiling", math.inf, b)
        row[f"private, ε = {eps:g}, {cfg.budget_bits:.2g} bits (%)"] = _pct_cell(private, a, eps, cfg.budget_bits)
        rows.append(row)
    return pd.DataFrame(rows).set_index("algorithm")


def figure_of(f: Any, *, task: str = "T1") -> Any:
    """Test accuracy against ε of a :func:`comparison_frame` ``f``: the best private ``task``
    algorithm at each ε, central DP-SGD and client-level DP-FedAvg (mean ± sd over the seeds),
    the best ceiling as a horizontal line."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    series = [("private", f"best private {task} algorithm (no trusted party, record level)", "o", "C0"),
              ("central", LABELS["central-dpsgd"], "s", "C1"),
              ("client", LABELS["dp-fedavg-client"], "^", "C2")]
    for key, label, marker, color in series:
        ax.errorbar(f["epsilon"], 100 * f[key], yerr=100 * f[f"{key}_sd"], marker=marker, color=color, label=label,
                    capsize=3)
    ax.axhline(100 * f["best_ceiling"].iloc[0], color="k", ls="--", lw=1,
               label=f"best ceiling ({LABELS[f['best_ceiling_of'].iloc[0]]})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(f["epsilon"]), [f"{e:g}" for e in f["epsilon"]])
    ax.set_xlabel("ε (δ = 1e-5)")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def figure_accuracy_vs_epsilon(profile: str = "paper") -> Any:
    """:func:`figure_of` on the stored T1 results of ``profile`` at T1's main budget."""
    t1_result, baselines = load(profile)
    return figure_of(comparison_frame(t1_result, baselines, T1Config.for_profile(profile).budget_bits))


def summary_of(f: Any) -> dict[str, float]:
    """The numbers the prose quotes of a :func:`comparison_frame` ``f`` (points, positive where
    the baseline is ahead): the gap of central DP-SGD and of client-level DP-FedAvg to the best
    private algorithm at the smallest and at the largest ε, and the gaps of the best ceiling
    and of the best private algorithm's own ceiling at the largest ε."""
    first, last = f.iloc[0], f.iloc[-1]
    return {"central_gap_smallest_epsilon": float(100 * (first["central"] - first["private"])),
            "central_gap_largest_epsilon": float(100 * (last["central"] - last["private"])),
            "client_gap_smallest_epsilon": float(100 * (first["client"] - first["private"])),
            "client_gap_largest_epsilon": float(100 * (last["client"] - last["private"])),
            "ceiling_gap_largest_epsilon": float(100 * (last["best_ceiling"] - last["private"])),
            "own_ceiling_gap_largest_epsilon": float(100 * (last["own_ceiling"] - last["private"]))}


def baselines_summary(profile: str = "paper") -> dict[str, float]:
    """:func:`summary_of` on the stored T1 results of ``profile`` at T1's main budget."""
    t1_result, baselines = load(profile)
    return summary_of(comparison_frame(t1_result, baselines, T1Config.for_profile(profile).budget_bits))


def verdicts_of(f: Any) -> dict[str, str]:
    """The comparisons the prose words of a :func:`comparison_frame` ``f``, by the seed-spread
    rule (:func:`fedrepro.report.prose.compare_summaries`: ``"higher"``, ``"lower"`` or
    ``"level"``): the best private algorithm's own ceiling, the best ceiling, central DP-SGD
    and client-level DP-FedAvg against it, at the largest ε (``<key>_largest_epsilon``) and,
    for the two trusted baselines, at the smallest (``<key>_smallest_epsilon``)."""
    first, last = f.iloc[0], f.iloc[-1]
    out = {f"{key}_largest_epsilon": compare_summaries(last[col], last[f"{col}_sd"], last["private"],
                                                       last["private_sd"])
           for key, col in (("own_ceiling", "own_ceiling"), ("best_ceiling", "best_ceiling"),
                            ("central", "central"), ("client", "client"))}
    out.update({f"{key}_smallest_epsilon": compare_summaries(first[key], first[f"{key}_sd"], first["private"],
                                                             first["private_sd"]) for key in ("central", "client")})
    return out


def baselines_verdicts(profile: str = "paper") -> dict[str, str]:
    """The T1 page's verdicts (:func:`verdicts_of`): the best private algorithm's own ceiling
    and the best ceiling against it at the largest ε, and central DP-SGD against it at the
    largest ε."""
    t1_result, baselines = load(profile)
    v = verdicts_of(comparison_frame(t1_result, baselines, T1Config.for_profile(profile).budget_bits))
    return {k: v[k] for k in ("own_ceiling_largest_epsilon", "best_ceiling_largest_epsilon", "central_largest_epsilon")}


def verdict_phrase(verdict: str) -> str:
    """The words a page uses for a verdict of :func:`baselines_verdicts` (a baseline against the
    best private algorithm)."""
    phrases = {"higher": "the baseline is ahead", "lower": "the baseline is behind", "level": "the two are level"}
    if verdict not in phrases:
        raise ValueError(f"verdict must be one of {tuple(phrases)}, got {verdict!r}")
    return phrases[verdict]
