"""What the T1 page shows of :mod:`fedrepro.chapters.headtohead.t1`: the tables, the figures
and the numbers the prose quotes (presentation only: nothing here is in an experiment's
import graph). The T2 page uses the same tables and figures with its own ``labels`` and
``title`` (its records carry the test loss in place of the training loss)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.chapters.headtohead.t1 import LABELS
from fedrepro.report.book import roundoff

__all__ = ["with_extra_algorithm", "alidpfl_frame", "alidpfl_summary", "records_frame", "cells_frame", "ranking_frame", "selected_frame", "budget_checks",
           "figure_accuracy_vs_epsilon", "figure_accuracy_vs_budget", "pareto_front", "t1_summary",
           "UNIFORM_LOSS", "loss_key", "loss_frame", "figure_loss_vs_epsilon"]

_PRIVATE_MARK = {"dp-fedsgd": "o", "dpfl": "s", "fedpaq": "v", "fedpaq-q": "^", "fed-plt": "D"}


def with_extra_algorithm(result: dict[str, Any], config: Any, spec: str) -> dict[str, Any]:
    """``result`` with one more algorithm put through the same protocol at every ε of the
    main budget (the "add your algorithm" section): ``spec`` is ``"module:NAME"``, NAME a
    tuple of configurations (instances of one algorithm class of the interface of
    :mod:`fedrepro.headtohead.algorithms`). The empty string returns ``result`` unchanged.
    Nothing is stored."""
    import importlib

    from fedrepro.chapters.headtohead import t1

    if not spec:
        return result
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"extra_algorithm must read 'module:NAME', got {spec!r}")
    grid = tuple(getattr(importlib.import_module(module), attr))
    if not grid or len({type(g) for g in grid}) != 1:
        raise ValueError(f"{spec}: give a non-empty tuple of configurations of one algorithm class")
    name = type(grid[0]).name
    extra = {"records": list(result["records"]), "tuning": list(result["tuning"])}
    for e in config.epsilons:
        cell = t1.tune_and_run(config, grid, e, config.budget_bits)
        extra["records"] += t1.records(config, name, cell)
        extra["tuning"].append({"algorithm": name, "epsilon_target": cell["epsilon_target"],
                                "uplink_budget_bits": cell["uplink_budget_bits"], "selected": cell["selected"],
                                "candidates": cell["tuning"]})
    return extra


def records_frame(result: dict[str, Any]) -> Any:
    """Every stored run: one row per (algorithm, ε, budget, seed)."""
    import pandas as pd

    keep = ["task", "algorithm", "seed", "epsilon_target", "epsilon_spent", "epsilon_spent_rdp", "delta",
            "uplink_budget_bits", "uplink_bits", "downlink_bits", "rounds", "rounds_run", "participations",
            "noise_multiplier", "test_accuracy", "train_loss", "test_loss", "diverged"]
    return pd.DataFrame([{k: r[k] for k in keep if k in r} for r in result["records"]])


def cells_frame(result: dict[str, Any]) -> Any:
    """One row per (algorithm, ε, budget): the test accuracy over the seeds (mean, standard
    deviation, min, max; over the seeds whose run did not diverge, ``finite`` of ``seeds``), the
    final training loss (mean), the rounds and the noise."""
    df = records_frame(result)
    g = df.groupby(["algorithm", "epsilon_target", "uplink_budget_bits"], sort=False)
    loss = "train_loss" if "train_loss" in df else "test_loss"
    out = g.agg(accuracy=("test_accuracy", "mean"), sd=("test_accuracy", "std"),
                low=("test_accuracy", "min"), high=("test_accuracy", "max"), loss=(loss, "mean"),
                rounds=("rounds", "first"), noise=("noise_multiplier", "first"),
                seeds=("seed", "count"), finite=("test_accuracy", "count")).reset_index()
    out["sd"] = out["sd"].fillna(0.0)
    return out


def _pct(mean: float, sd: float) -> str:
    if not math.isfinite(mean):
        return "diverged"
    return f"{100 * mean:.1f} ± {100 * sd:.1f}"


def ranking_frame(result: dict[str, Any], budget: float, labels: dict[str, str] | None = None) -> Any:
    """The ranking at uplink budget ``budget``: one row per algorithm, the test accuracy (%,
    mean ± standard deviation over the seeds) at every ε, and the mean rank over ε (1 = best;
    the non-private ceiling is listed apart, unranked). Sorted by that rank."""
    import pandas as pd

    cells = cells_frame(result)
    cells = cells[cells["uplink_budget_bits"] == budget]
    private = cells[np.isfinite(cells["epsilon_target"])]
    eps = sorted(private["epsilon_target"].unique())
    ranks = private.assign(rank=private.groupby("epsilon_target")["accuracy"].rank(ascending=False, method="min"))
    rows = []
    for name, group in ranks.groupby("algorithm", sort=False):
        row = {"algorithm": _label(name, labels)}
        for e in eps:
            hit = group[group["epsilon_target"] == e]
            row[f"ε = {e:g}"] = _pct(hit["accuracy"].iloc[0], hit["sd"].iloc[0]) if len(hit) else "—"
        row["mean rank"] = float(group["rank"].mean())
        rows.append(row)
    frame = pd.DataFrame(rows).sort_values("mean rank").reset_index(drop=True)
    ceiling = cells[~np.isfinite(cells["epsilon_target"])]
    if len(ceiling):
        c = ceiling.iloc[0]
        frame.loc[len(frame)] = {"algorithm": _label(c["algorithm"], labels),
                                 **{f"ε = {e:g}": _pct(c["accuracy"], c["sd"]) for e in eps}, "mean rank": math.nan}
    frame.index = range(1, len(frame) + 1)
    return frame


def selected_frame(result: dict[str, Any], budget: float, labels: dict[str, str] | None = None) -> Any:
    """The configuration the validation split selected for every algorithm and ε at
    ``budget``, with its validation accuracy and the grid's range of validation accuracies."""
    import pandas as pd

    rows = []
    for t in result["tuning"]:
        if t["uplink_budget_bits"] != budget:
            continue
        cand = t["candidates"]
        chosen = cand[int(t["selected"])]
        vals = [c["validation_accuracy"] for c in cand if math.isfinite(c["validation_accuracy"])]
        params = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                           for k, v in sorted(chosen["config"].items()))
        rows.append({"algorithm": _label(t["algorithm"], labels),
                     "ε": "—" if not math.isfinite(t["epsilon_target"]) else f"{t['epsilon_target']:g}",
                     "selected configuration": params,
                     "validation accuracy (%)": 100 * chosen["validation_accuracy"],
                     "grid's worst (%)": 100 * min(vals) if vals else math.nan,
                     "diverged in the grid": sum(bool(c["diverged"]) for c in cand)})
    return pd.DataFrame(rows).set_index(["algorithm", "ε"])


def budget_checks(result: dict[str, Any]) -> dict[str, float]:
    """The acceptance checks over every stored run: the largest relative gap between the ε
    spent and the target, the largest ε spent over its target, the largest share of the
    uplink budget used, and the number of runs."""
    priv = [r for r in result["records"] if math.isfinite(r["epsilon_target"])]
    gaps = [abs(r["epsilon_spent"] / r["epsilon_target"] - 1) for r in priv]
    over = [r["epsilon_spent"] / r["epsilon_target"] for r in priv]
    share = [r["uplink_bits"] / r["uplink_budget_bits"] for r in result["records"]]
    return {"runs": float(len(result["records"])), "private_runs": float(len(priv)),
            "epsilon_gap": max(gaps) if gaps else 0.0, "epsilon_ratio_max": max(over) if over else 0.0,
            "budget_share_max": max(share), "budget_share_min": min(share)}


#: The calibration's tolerance (:func:`fedrepro.headtohead.accounting.calibrate`: 1e-9 relative in ε):
#: a gap between the ε spent and the target below it is round-off, shown as a bound.
CALIBRATION_TOLERANCE = 1e-9


def budget_check_facts(result: dict[str, Any]) -> dict[str, Any]:
    """:func:`budget_checks` as the page quotes it: the ε gap as a bound when it is below the
    calibration's tolerance (round-off digits differ between machines)."""
    return budget_checks(result) | {"epsilon_gap": roundoff(budget_checks(result)["epsilon_gap"],
                                                            CALIBRATION_TOLERANCE)}


def _floor(accuracies: Any) -> float:
    """The lower end of the accuracy axis (%): a little below the lowest accuracy above 50 %,
    so that the learning algorithms are readable; those that stay below are named in the
    legend (``_off_axis``)."""
    acc = np.asarray(accuracies, dtype=float) * 100
    learning = acc[np.isfinite(acc) & (acc >= 50)]
    return float(5 * math.floor((learning.min() - 2) / 5)) if learning.size else 0.0


def _off_axis(label: str, accuracies: Any, floor: float) -> str:
    acc = np.asarray(accuracies, dtype=float) * 100
    top = np.nanmax(acc) if np.isfinite(acc).any() else math.nan
    return f"{label} (below the axis, at most {top:.0f} %)" if top < floor else label


def _label(name: str, labels: dict[str, str] | None = None) -> str:
    return (LABELS if labels is None else labels).get(name, name)


def _private_names(cells: Any, labels: dict[str, str] | None = None) -> list[str]:
    known = LABELS if labels is None else labels
    present = list(dict.fromkeys(cells["algorithm"]))
    return [a for a in known if a != "fedavg" and a in present] + [a for a in present if a not in known]


def figure_accuracy_vs_epsilon(result: dict[str, Any], budget: float, labels: dict[str, str] | None = None,
                               title: str = "T1 (MNIST softmax, 100 clients)") -> Any:
    """Test accuracy (mean over seeds, bars from the lowest to the highest seed) against ε at
    the uplink budget ``budget``, one line per algorithm, the non-private ceiling dashed."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    cells = cells_frame(result)
    cells = cells[cells["uplink_budget_bits"] == budget]
    floor = _floor(cells["low"])
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    for name in _private_names(cells, labels):
        c = cells[cells["algorithm"] == name].sort_values("epsilon_target")
        acc = 100 * c["accuracy"].to_numpy()
        err = np.vstack([acc - 100 * c["low"].to_numpy(), 100 * c["high"].to_numpy() - acc])
        ax.errorbar(c["epsilon_target"], acc, yerr=err, marker=_PRIVATE_MARK.get(name, '*'), capsize=3,
                    label=_off_axis(_label(name, labels), c["high"], floor))
    ceiling = cells[cells["algorithm"] == "fedavg"]
    if len(ceiling):
        ax.axhline(100 * ceiling["accuracy"].iloc[0], color="k", ls="--", lw=1, label=_label("fedavg", labels))
    ax.set_xscale("log")
    eps = sorted(cells.loc[cells["algorithm"] != "fedavg", "epsilon_target"].unique())
    ax.set_xticks(eps, [f"{e:g}" for e in eps])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(bottom=floor, top=max(100 * cells["high"].max(), floor + 5) + 1)
    ax.set_xlabel("ε (δ = 1e-5), whole run, most frequent client")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(f"{title} at {budget:.2g} uplink bits")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


#: The cross-entropy of the uniform prediction over ten classes: a model whose loss is above it
#: does worse than predicting nothing.
UNIFORM_LOSS = math.log(10)


def loss_key(result: dict[str, Any]) -> str:
    """The loss ``result``'s records hold: ``"train_loss"`` (T1: the mean cross-entropy over
    the clients' training records, without the regulariser) or ``"test_loss"`` (T2: on the
    evaluation set)."""
    first = result["records"][0] if result["records"] else {}
    for key in ("train_loss", "test_loss"):
        if key in first:
            return key
    raise ValueError("result: its records hold neither a train_loss nor a test_loss")


def loss_frame(result: dict[str, Any], budget: float) -> Any:
    """One row per (algorithm, ε) at the uplink budget ``budget``: the final loss of
    :func:`loss_key` over the seeds (mean, lowest, highest; a diverged run's NaN left out) and
    the number of seeds."""
    df = records_frame(result)
    df = df[df["uplink_budget_bits"] == budget]
    if df.empty:
        raise ValueError(f"budget: no stored run at {budget!r} uplink bits")
    key = loss_key(result)
    return (df.groupby(["algorithm", "epsilon_target"], sort=False)
            .agg(loss=(key, "mean"), low=(key, "min"), high=(key, "max"), seeds=("seed", "count"))
            .reset_index())


def figure_loss_vs_epsilon(result: dict[str, Any], budget: float, labels: dict[str, str] | None = None,
                           title: str = "T1 (MNIST softmax, 100 clients)") -> Any:
    """The final loss (:func:`loss_key`; mean over seeds, bars from the lowest to the highest
    seed) against ε at the uplink budget ``budget``, one line per algorithm, the non-private
    ceiling dashed. Left panel: every private algorithm on a logarithmic scale, with the loss
    of the uniform prediction (:data:`UNIFORM_LOSS`) dotted; right panel: the algorithms whose
    highest loss stays below it, on a linear scale."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    cells = loss_frame(result, budget)
    names = _private_names(cells, labels)
    learning = [n for n in names if cells.loc[cells["algorithm"] == n, "high"].max() < UNIFORM_LOSS]
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.4))
    ceiling = cells[cells["algorithm"] == "fedavg"]
    for ax, shown in zip(axes, (names, learning), strict=True):
        for name in shown:
            c = cells[cells["algorithm"] == name].sort_values("epsilon_target")
            loss = c["loss"].to_numpy()
            err = np.vstack([loss - c["low"].to_numpy(), c["high"].to_numpy() - loss])
            ax.errorbar(c["epsilon_target"], loss, yerr=err, marker=_PRIVATE_MARK.get(name, "*"), capsize=3,
                        color=f"C{names.index(name)}", label=_label(name, labels))
        if len(ceiling):
            ax.axhline(ceiling["loss"].iloc[0], color="k", ls="--", lw=1, label=_label("fedavg", labels))
        ax.set_xscale("log")
        eps = sorted(cells.loc[cells["algorithm"] != "fedavg", "epsilon_target"].unique())
        ax.set_xticks(eps, [f"{e:g}" for e in eps])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("ε (δ = 1e-5), whole run, most frequent client")
        ax.grid(alpha=0.3)
    left, right = axes
    left.set_yscale("log")
    left.axhline(UNIFORM_LOSS, color="0.4", ls=":", lw=1.2, label="uniform prediction (ln 10)")
    what = "training loss" if loss_key(result) == "train_loss" else "test loss"
    left.set_ylabel(f"final {what} (cross-entropy)")
    left.set_title("every private algorithm (log scale)", fontsize=10)
    right.set_title("those below ln 10 (linear scale)", fontsize=10)
    fig.suptitle(f"{title} at {budget:.2g} uplink bits", fontsize=11)
    handles, names_shown = left.get_legend_handles_labels()
    fig.legend(handles, names_shown, fontsize=8, loc="lower center", ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The points (bits, accuracy) not dominated by another (fewer or equal bits and higher
    accuracy), sorted by bits."""
    front: list[tuple[float, float]] = []
    best = -math.inf
    for bits, acc in sorted(points, key=lambda p: (p[0], -p[1])):
        if math.isfinite(acc) and acc > best:
            front.append((bits, acc))
            best = acc
    return front


def figure_accuracy_vs_budget(result: dict[str, Any], epsilons: tuple[float, ...],
                              labels: dict[str, str] | None = None) -> Any:
    """One panel per ε of ``epsilons``: test accuracy against the uplink bits actually sent,
    one line per algorithm over the budgets, and the Pareto front of accuracy against bits over
    every algorithm (grey step line)."""
    import matplotlib.pyplot as plt

    cells = cells_frame(result)
    floor = _floor(cells[cells["epsilon_target"].isin(epsilons) | (cells["algorithm"] == "fedavg")]["accuracy"])
    fig, axes = plt.subplots(1, len(epsilons), figsize=(5.2 * len(epsilons), 4.2), sharey=True, squeeze=False)
    bits_of = {(r["algorithm"], r["epsilon_target"], r["uplink_budget_bits"]): r["uplink_bits"]
               for r in result["records"]}
    for ax, e in zip(axes[0], epsilons, strict=True):
        at = cells[cells["epsilon_target"] == e]
        points = []
        for name in _private_names(at, labels):
            c = at[at["algorithm"] == name].sort_values("uplink_budget_bits")
            bits = [bits_of[(name, e, b)] for b in c["uplink_budget_bits"]]
            acc = 100 * c["accuracy"].to_numpy()
            ax.plot(bits, acc, marker=_PRIVATE_MARK.get(name, '*'),
                    label=_off_axis(_label(name, labels), c["accuracy"], floor))
            points += list(zip(bits, acc, strict=True))
        front = pareto_front(points)
        if front:
            fb, fa = zip(*front, strict=True)
            ax.step(fb, fa, where="post", color="0.5", lw=6, alpha=0.3, label="Pareto front (private)", zorder=0)
        ceiling = cells[cells["algorithm"] == "fedavg"].sort_values("uplink_budget_bits")
        if len(ceiling):
            cb = [bits_of[("fedavg", math.inf, b)] for b in ceiling["uplink_budget_bits"]]
            ax.plot(cb, 100 * ceiling["accuracy"], "k--", lw=1, label=_label("fedavg", labels))
        ax.set_xscale("log")
        ax.set_ylim(bottom=floor)
        ax.set_xlabel("uplink bits sent (all clients)")
        ax.set_title(f"ε = {e:g}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy (%)")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def t1_summary(result: dict[str, Any], budget: float) -> dict[str, Any]:
    """The numbers the page quotes at ``budget``: at every ε the best private algorithm, its
    accuracy, its distance to the ceiling and Fed-PLT's distance to it, each algorithm's
    accuracy; the best accuracy private FedPAQ reaches in any cell; how often the selected
    step size sits at an end of its grid; and, at every ε of the budget sweep, the algorithms
    on the Pareto front and the best one at the smallest budget."""
    cells = cells_frame(result)
    at = cells[cells["uplink_budget_bits"] == budget]
    out: dict[str, Any] = {}
    ceiling = at[at["algorithm"] == "fedavg"]
    out["ceiling"] = float(ceiling["accuracy"].iloc[0]) if len(ceiling) else math.nan
    for e in sorted(at.loc[np.isfinite(at["epsilon_target"]), "epsilon_target"].unique()):
        c = at[at["epsilon_target"] == e].sort_values("accuracy", ascending=False)
        key = f"{e:g}".replace(".", "p")
        out[f"best_{key}"] = _label(c["algorithm"].iloc[0])
        out[f"best_acc_{key}"] = float(c["accuracy"].iloc[0])
        out[f"ceiling_gap_{key}"] = out["ceiling"] - out[f"best_acc_{key}"]
        for _, row in c.iterrows():
            out[f"acc_{row['algorithm']}_{key}"] = float(row["accuracy"])
        if f"acc_fed-plt_{key}" in out:
            out[f"fedplt_gap_{key}"] = out[f"best_acc_{key}"] - out[f"acc_fed-plt_{key}"]
    pairs = [abs(out[f"acc_dp-fedsgd_{k}"] - out[f"acc_dpfl_{k}"]) for k in
             (f"{e:g}".replace(".", "p") for e in at["epsilon_target"].unique() if math.isfinite(e))
             if f"acc_dp-fedsgd_{k}" in out and f"acc_dpfl_{k}" in out]
    out["dpsgd_pair_gap"] = max(pairs) if pairs else math.nan
    ceilings = cells[cells["algorithm"] == "fedavg"]
    out["fedavg_sd_max"] = float(ceilings["sd"].max()) if len(ceilings) else math.nan
    out["fedavg_range_max"] = float((ceilings["high"] - ceilings["low"]).max()) if len(ceilings) else math.nan
    paq = cells[cells["algorithm"].isin(["fedpaq", "fedpaq-q"])]
    out["fedpaq_best"] = float(paq["accuracy"].max()) if len(paq) else math.nan
    edge = total = 0
    for t in result["tuning"]:
        if t["uplink_budget_bits"] != budget:
            continue
        lrs = sorted({c["config"]["lr"] for c in t["candidates"]})
        if len(lrs) > 2:
            total += 1
            edge += t["candidates"][int(t["selected"])]["config"]["lr"] in (lrs[0], lrs[-1])
    out["lr_edge"], out["lr_cells"] = edge, total
    bits_of = {(r["algorithm"], r["epsilon_target"], r["uplink_budget_bits"]): r["uplink_bits"]
               for r in result["records"]}
    sweep = cells[(cells["uplink_budget_bits"] != budget) & np.isfinite(cells["epsilon_target"])]
    for e in sorted(sweep["epsilon_target"].unique()):
        c = cells[(cells["epsilon_target"] == e)]
        key = f"{e:g}".replace(".", "p")
        points = {(bits_of[(a, e, b)], acc): a for a, b, acc in zip(c["algorithm"], c["uplink_budget_bits"],
                                                                      c["accuracy"], strict=True)}
        front = pareto_front(list(points))
        out[f"front_{key}"] = ", ".join(dict.fromkeys(_label(points[p]) for p in front))
        small = c[c["uplink_budget_bits"] == c["uplink_budget_bits"].min()].sort_values("accuracy", ascending=False)
        out[f"best_small_{key}"] = _label(small["algorithm"].iloc[0])
        out[f"best_small_acc_{key}"] = float(small["accuracy"].iloc[0])
    return out


def alidpfl_frame(result: dict[str, Any], ali: dict[str, Any], budget: float) -> Any:
    """ALI-DPFL (not private as run) beside DPFL with a fixed τ and DP-FedSGD at ``budget``:
    per ε the test accuracy (%, mean ± standard deviation over the seeds), the rounds each
    could pay for, and ALI-DPFL's selected configuration."""
    import pandas as pd

    cells = cells_frame({"records": result["records"] + ali["records"], "tuning": []})
    cells = cells[cells["uplink_budget_bits"] == budget]
    chosen = {r["epsilon_target"]: r["config"] for r in ali["records"]}  # the configuration each cell ran
    rows = []
    for e in sorted(cells.loc[cells["algorithm"] == "ali-dpfl", "epsilon_target"].unique()):
        at = cells[cells["epsilon_target"] == e].set_index("algorithm")
        c = chosen[e]
        rows.append({"ε": f"{e:g}",
                     "ALI-DPFL (%)": _pct(at.loc["ali-dpfl", "accuracy"], at.loc["ali-dpfl", "sd"]),
                     "DPFL, fixed τ (%)": _pct(at.loc["dpfl", "accuracy"], at.loc["dpfl", "sd"]),
                     "DP-FedSGD (%)": _pct(at.loc["dp-fedsgd", "accuracy"], at.loc["dp-fedsgd", "sd"]),
                     "rounds: ALI-DPFL / DPFL": f"{int(at.loc['ali-dpfl', 'rounds'])} / {int(at.loc['dpfl', 'rounds'])}",
                     "ALI-DPFL's selection": f"lr = {c['lr']:g}, C = {c['clip']:g}, τ̄ = {c['mean_steps']}"})
    return pd.DataFrame(rows).set_index("ε")


def alidpfl_summary(result: dict[str, Any], ali: dict[str, Any], budget: float) -> dict[str, float]:
    """The numbers the ALI-DPFL section quotes: the smallest and largest margin of ALI-DPFL
    over DPFL with a fixed τ across ε (points of accuracy; negative: below), and the ratio of
    their rounds."""
    cells = cells_frame({"records": result["records"] + ali["records"], "tuning": []})
    cells = cells[cells["uplink_budget_bits"] == budget]
    margins, ratios = [], []
    for e in cells.loc[cells["algorithm"] == "ali-dpfl", "epsilon_target"].unique():
        at = cells[cells["epsilon_target"] == e].set_index("algorithm")
        margins.append(float(at.loc["ali-dpfl", "accuracy"] - at.loc["dpfl", "accuracy"]))
        ratios.append(float(at.loc["ali-dpfl", "rounds"] / at.loc["dpfl", "rounds"]))
    return {"margin_low": min(margins), "margin_high": max(margins), "below_low": -max(margins),
            "below_high": -min(margins), "rounds_ratio": max(ratios)}
