"""Tables II–IV and Figs. 1 and 6 of ALI-DPFL: the stored runs beside the paper, and the
decisions the scorecard draws from them.

The runs are computed by :mod:`fedrepro.chapters.alidpfl.experiments` (one result per seed
and reading); this module only reads them. Every decision is a pure function of a table
``{cell key: {method: accuracy %}}`` (cell key ``"<table>|<condition>|<ε>"`` as in
:func:`fedrepro.chapters.alidpfl.experiments.combine`), so a test can feed it failing values.

Rules fixed before the runs were read (one run per cell, as in the paper):

* ``TOLERANCE``: two points of accuracy, the tolerance of the paper's tables
  (``data/paper/tolerances.yaml``), is what we count as "no difference" between two methods;
* "ALI-DPFL beats the fixed τ" means strictly above the best fixed τ of the cell;
  "significantly" means above it by more than ``TOLERANCE``;
* "τ = 1 is optimal" in a cell means τ = 1 is the best fixed τ, or within ``TOLERANCE``
  of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.alidpfl import tau_rule
from fedrepro.alidpfl.budget import PAPER_CELLS, Budgets, fixed_tau_stop
from fedrepro.alidpfl.setting import PAPER
from fedrepro.chapters.alidpfl import experiments
from fedrepro.report import paper

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["TOLERANCE", "TABLES", "Table", "parse_column", "paper_table", "cell_keys", "ours_frame",
           "diff_frame", "best_fixed", "tau1_optimal", "ali_vs_fixed", "ali_vs_tau1", "argmax_spread",
           "tau_sequences_rise", "iterations_used", "noise_batch", "figure_accuracy_vs_tau", "figure_tau_sequences",
           "figure_curves", "budget_frame", "unaccounted_frame", "tau_rule_replay", "rules_frame", "improved_conversion_frame", "estimate_samples_used", "seeds_frame", "seeds_spread_frame", "summary_counts",
           "stored_tables", "stored_seeds", "readings_frame", "readings_summary_frame", "ali_margin",
           "authors_code_summary"]

Table = Mapping[str, Mapping[str, float]]

#: Points of accuracy within which two results count as equal (the tables' tolerance).
TOLERANCE = 2.0
#: Table → the paper's table id.
TABLES: dict[str, str] = {t: paper.table_id("alidpfl", "main", t) for t in ("II", "III", "IV")}
_COLUMN = re.compile(r"^(?P<condition>\S+) (?P<dataset>F-MNIST|CIFAR10) eps=(?P<eps>[0-9.]+)$")


def parse_column(column: str) -> tuple[str, str, float]:
    """``"Rs=Rc/2 F-MNIST eps=2.25"`` → ``("Rs=Rc/2", "F-MNIST", 2.25)``."""
    m = _COLUMN.match(column)
    if m is None:
        raise ValueError(f"column must look like '<condition> <F-MNIST|CIFAR10> eps=<number>', got {column!r}")
    return m["condition"], m["dataset"], float(m["eps"])


def cell_key(table: str, condition: str, epsilon: float) -> str:
    return f"{table}|{condition}|{float(epsilon)}"


def paper_table(table: str, dataset: str = "F-MNIST") -> dict[str, dict[str, float]]:
    """The paper's values of ``table`` for ``dataset``: ``{cell key: {method: accuracy %}}``."""
    out: dict[str, dict[str, float]] = {}
    for cell in paper.load_table(TABLES[table]):
        condition, ds, eps = parse_column(cell.column)
        if ds == dataset and cell.value is not None:
            out.setdefault(cell_key(table, condition, eps), {})[cell.row] = float(cell.value)
    return out


def cell_keys(result: Mapping[str, Any], table: str) -> list[str]:
    """The keys of ``table``'s cells in ``result``, in the paper's column order."""
    order = [condition for _, condition, _ in PAPER_CELLS]
    keys = [k for k in result["table"] if k.split("|")[0] == table]
    return sorted(keys, key=lambda k: (order.index(k.split("|")[1]), float(k.split("|")[2])))


def _methods(*rows: Mapping[str, float]) -> list[str]:
    fixed = {m for row in rows for m in row if m != "ALI-DPFL"}
    return ["ALI-DPFL"] + sorted(fixed, key=lambda m: int(m.split("=")[1]))


def _column_label(key: str) -> str:
    _, condition, eps = key.split("|")
    return f"{condition}, eps = {float(eps):g}"


def ours_frame(result: Mapping[str, Any], table: str) -> pd.DataFrame:
    """Our accuracies (%) in the paper's layout: one row per method, one column per cell."""
    import pandas as pd

    keys = cell_keys(result, table)
    methods = _methods(*(result["table"][k] for k in keys))
    return pd.DataFrame({_column_label(k): [result["table"][k].get(m, np.nan) for m in methods] for k in keys},
                        index=pd.Index(methods, name="method"))


def diff_frame(result: Mapping[str, Any], table: str) -> pd.DataFrame:
    """Ours minus the paper's value (points), same layout as :func:`ours_frame`."""
    ours = ours_frame(result, table)
    theirs = paper_table(table)
    out = ours.copy()
    for key in cell_keys(result, table):
        col = _column_label(key)
        out[col] = [ours.at[m, col] - theirs[key][m] if m in theirs.get(key, {}) else np.nan for m in ours.index]
    return out


def _ali_unit(key: str) -> str:
    table, _, eps = key.split("|")
    return f"ali-{table}-eps{float(eps)}"


def best_fixed(row: Mapping[str, float]) -> tuple[int, float]:
    """(τ, accuracy) of the best fixed τ of one cell (the smallest τ on a tie)."""
    fixed = {int(m.split("=")[1]): v for m, v in row.items() if m.startswith("tau=")}
    if not fixed:
        raise ValueError("row must hold at least one 'tau=<k>' entry")
    tau = min(fixed, key=lambda t: (-fixed[t], t))
    return tau, fixed[tau]


def tau1_optimal(table: Table, keys: Sequence[str], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """In how many of ``keys`` τ = 1 is the best fixed τ, and in how many it is within
    ``tolerance`` of the best (claims C14, C16)."""
    best = [best_fixed(table[k]) for k in keys]
    at_one = sum(t == 1 for t, _ in best)
    close = sum(table[k]["tau=1"] >= acc - tolerance for k, (_, acc) in zip(keys, best, strict=True))
    return {"cells": len(keys), "tau1_best": at_one, "tau1_within_tolerance": close,
            "best_taus": [t for t, _ in best]}


def ali_vs_fixed(table: Table, keys: Sequence[str], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """ALI-DPFL against the best fixed τ of each cell: cells where it is above (strictly),
    above by more than ``tolerance``, and the margins in points (claims C02, C05, C20, C21)."""
    margins = [table[k]["ALI-DPFL"] - best_fixed(table[k])[1] for k in keys]
    return {"cells": len(keys), "above": sum(m > 0 for m in margins),
            "above_by_tolerance": sum(m > tolerance for m in margins),
            "within_tolerance": sum(m >= -tolerance for m in margins), "margins": margins}


def ali_margin(result: Mapping[str, Any]) -> float:
    """The largest |ALI-DPFL − best fixed τ| (points) over the Fashion-MNIST cells with
    R_s < R_c (Tables III, IV), where ALI-DPFL runs on its own."""
    keys = [k for t in ("III", "IV") for k in cell_keys(result, t)]
    return float(np.max(np.abs(ali_vs_fixed(result["table"], keys)["margins"])))


def ali_vs_tau1(table: Table, keys: Sequence[str]) -> dict[str, Any]:
    """ALI-DPFL against τ = 1 in each cell (claims C04, C12)."""
    margins = [table[k]["ALI-DPFL"] - table[k]["tau=1"] for k in keys]
    return {"cells": len(keys), "at_least": sum(m >= 0 for m in margins), "margins": margins}


def argmax_spread(table: Table, keys: Sequence[str]) -> dict[str, Any]:
    """The best fixed τ of each cell and how far apart they are (Fig. 1, claim C03)."""
    taus = [best_fixed(table[k])[0] for k in keys]
    return {"best_taus": taus, "distinct": len(set(taus)), "range": max(taus) - min(taus)}


def tau_sequences_rise(taus: Mapping[str, Sequence[int]], keys: Sequence[str]) -> dict[str, Any]:
    """Per cell: the largest τ* chosen and the mean τ* (Fig. 6)."""
    return {"max": [int(max(taus[k])) for k in keys], "mean": [float(np.mean(taus[k])) for k in keys],
            "rounds": [len(taus[k]) for k in keys], "rises": sum(max(taus[k]) > 1 for k in keys)}


def iterations_used(tau: int, rounds: int, iterations: int) -> int:
    """Local iterations a fixed τ uses before a round would exceed R_s rounds or R_c
    iterations (:func:`fedrepro.alidpfl.budget.fixed_tau_stop`; 0 when τ > R_c); claims C15, C17."""
    return fixed_tau_stop(Budgets(1.0, rounds, iterations), tau)[1] if tau <= iterations else 0


def budget_frame(result: Mapping[str, Any], profile: str = "paper", reading: str = "spec") -> pd.DataFrame:
    """Per Fashion-MNIST cell: ε, R_s, R_c, the ε the run's reading actually spends in R_c
    iterations, the iterations τ = 1 uses, and ALI-DPFL's rounds, iterations and mean τ*."""
    import pandas as pd

    cfg = experiments.TablesConfig(profile=profile, reading=reading)
    rows = []
    for c in experiments.cells(cfg):
        key = cell_key(c["table"], c["condition"], c["epsilon"])
        taus = np.asarray(result["taus"][key])
        rows.append((f"{c['table']}: {c['condition']}, eps = {c['epsilon']:g}", c["rounds"], c["iterations"],
                     experiments.spent_epsilon(cfg, c["iterations"]), iterations_used(1, c["rounds"], c["iterations"]),
                     taus.size, int(taus.sum()), float(taus.mean())))
    return pd.DataFrame(rows, columns=["cell", "R_s", "R_c", "eps spent", "iterations, tau = 1",
                                       "ALI-DPFL rounds", "ALI-DPFL iterations", "mean tau*"]).set_index("cell")


def noise_batch(profile: str = "paper", reading: str = "spec") -> float:
    """The divisor B of the noise term N = 2√d·σC/B in the runs of (``profile``, ``reading``):
    the reading's divisor, else q·|D_i| (|D_i| = 6,000 records, 100 at the quick profile)."""
    over = experiments.TABLE_READINGS[reading]
    return float(over.get("divisor") or over.get("q", PAPER.q) * (100 if profile == "quick" else 6000))


def tau_rule_replay(run: Mapping[str, Any], rounds: int, iterations: int,
                    rules: Sequence[str] = ("loss", "half-loss", "fixed"), *,
                    batch: float = 90.0) -> dict[str, np.ndarray]:
    """τ* that each λ, ω rule of :data:`fedrepro.alidpfl.tau_rule.LAMBDA_OMEGA_RULES` would
    choose after every round of a stored ALI-DPFL ``run`` (rule ``"loss"``), at the same state:
    the same ρ, β, ξ, budgets left and previous τ, with F(ŵ) = λ and D = ω^(−1/2) recovered
    from the run's ``"loss"`` rule. For ``"loss"`` this gives back the run's own choices
    (``run["taus"][1:]``, and the choice after the last round) when ``batch`` is the
    run's divisor B of the noise term (:func:`noise_batch`)."""
    c = run["constants"]
    taus = np.asarray(run["taus"], dtype=int)
    noise = tau_rule.noise_term(int(run["d"]), PAPER.sigma, PAPER.clip, batch)
    out: dict[str, np.ndarray] = {}
    for rule in rules:
        chosen = []
        for r in range(taus.size):
            loss, dist = float(c["lam"][r]), float(c["omega"][r]) ** -0.5
            lam, omega = tau_rule.lambda_omega(rule, loss, dist)
            done = int(taus[: r + 1].sum())
            tau, _ = tau_rule.choose_tau(
                tau_rule.Constants(float(c["rho"][r]), float(c["beta"][r]), float(c["xi"][r]), lam, omega),
                tau_prev=int(taus[r]), eta=0.5, noise=noise, iterations_done=done,
                rounds_left=max(rounds - (r + 1), 0), iterations_left=max(iterations - done, 0))
            chosen.append(tau)
        out[rule] = np.array(chosen, dtype=int)
    return out


def rules_frame(result: Mapping[str, Any], profile: str = "paper") -> pd.DataFrame:
    """Per ALI-DPFL run: mean τ* chosen by each λ, ω rule at the run's states
    (:func:`tau_rule_replay`) and the share of rounds where it agrees with the run's rule."""
    import pandas as pd

    # the cells that have an ALI-DPFL run of their own (R_s < R_c): Table II has two ε = 1.75
    # columns, and only the one with R_s < R_c is that run's budget
    budgets = {_ali_unit(cell_key(c["table"], c["condition"], c["epsilon"])): c
               for c in experiments.cells(experiments.TablesConfig(profile=profile))
               if c["rounds"] < c["iterations"]}
    rows = []
    for name, run in result["runs"].items():
        if not name.startswith("ali-"):
            continue
        replay = tau_rule_replay(run, budgets[name]["rounds"], budgets[name]["iterations"],
                                 batch=noise_batch(profile))
        row: dict[str, Any] = {"run (table, eps)": name[4:].replace("-eps", ", eps = ")}
        for rule, taus in replay.items():
            row[f"mean tau*, {rule}"] = float(taus.mean())
            if rule != "loss":
                row[f"same as loss, {rule}"] = float(np.mean(taus == replay["loss"]))
        rows.append(row)
    return pd.DataFrame(rows).set_index("run (table, eps)")


def improved_conversion_frame(result: Mapping[str, Any],
                              epsilons: Sequence[float] = (1.55, 1.65, 1.75, 1.85, 2.0)) -> pd.DataFrame:
    """The "improved RDP conversion" reading without an extra run: the iterations each ε buys
    under the basic (paper) and the improved (public code) conversion, and τ = 1's accuracy
    after them. ``full test`` is the accuracy on the full 10k test set at exactly the basic
    count (the value Tables II–IV show, read from the τ = 1 run's evaluations; NaN where the run
    was not evaluated there); ``subset`` columns are read from the run's curve on the fixed
    2,000-image test subset (the last curve point at or before the count, while the run lasts:
    the curve is sampled every 10 rounds, so 79 reads round 70), the only reading the improved
    counts have, and the basic count's subset value is beside it for a like-for-like comparison."""
    import pandas as pd

    from fedrepro.chapters.alidpfl.conversions import improved_iterations

    run = result["runs"]["tau-1"]
    rounds, acc = np.asarray(run["curve_rounds"]), 100 * np.asarray(run["curve_accuracy"])
    evals = {int(r): 100 * float(a) for r, a in zip(run.get("eval_rounds", ()), run.get("eval_accuracy", ()),
                                                    strict=True)}
    it = improved_iterations(tuple(epsilons))

    step = int(rounds[1] - rounds[0]) if rounds.size > 1 else 1

    def at(n: int) -> float:  # last curve point at or before n, while the run lasts
        sel = rounds <= n
        return float(acc[sel][-1]) if sel.any() and n < rounds.max() + step else np.nan

    rows = [(e, b, evals.get(int(b), np.nan), at(b), i, at(i))
            for e, b, i in zip(it["epsilon"], it["basic"], it["improved"], strict=True)]
    return pd.DataFrame(rows, columns=["epsilon", "R_c basic", "acc. tau = 1, full test (%)",
                                       "acc. tau = 1, subset (%)", "R_c improved",
                                       "acc. tau = 1, subset, improved (%)"]).set_index("epsilon")


def estimate_samples_used(result: Mapping[str, Any], clients: int = 10) -> int:
    """The records per client on which the ALI-DPFL runs of a stored tables ``result``
    estimated F_i and ∇F_i, read from their stored counts: ``unaccounted_gradients`` =
    rounds × ``clients`` × 2 evaluations (at ŵ_i and at ŵ) × records. A ``ValueError`` when
    the result holds no ALI-DPFL run or its runs disagree (a count that is not such a product)."""
    per = set()
    for name, res in result["runs"].items():
        if name.startswith("ali-"):
            denominator = int(res["rounds"]) * int(clients) * 2
            count = int(res["unaccounted_gradients"])
            per.add(count / denominator if denominator else float("nan"))
    if len(per) != 1 or not float(next(iter(per))).is_integer():
        raise ValueError(f"result must hold ALI-DPFL runs with one estimate size per client, got {sorted(per)}")
    return int(per.pop())


def unaccounted_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Per ALI-DPFL run: per-sample gradient evaluations on private data that the accountant
    charges (DP-SGD, records sampled) and that it does not (the clients' estimates of F_i,
    ∇F_i at ŵ_i and ŵ, every round), summed over the clients."""
    import pandas as pd

    rows = []
    for name, res in result["runs"].items():
        if name.startswith("ali-"):
            acc, una = int(res["sampled_records"]), int(res["unaccounted_gradients"])
            rows.append((name[4:].replace("-eps", ", eps = "), int(res["rounds"]), acc, una, una / max(acc, 1)))
    return pd.DataFrame(rows, columns=["run (table, eps)", "rounds", "accounted (DP-SGD)",
                                       "unaccounted (estimates)", "ratio"]).set_index("run (table, eps)")


def seeds_frame(results: Mapping[int, Mapping[str, Any]], table: str) -> pd.DataFrame:
    """Mean, min and max over seeds of every method in every cell of ``table`` (long format)."""
    import pandas as pd

    rows = []
    seeds = sorted(results)
    for key in cell_keys(results[seeds[0]], table):
        for m in _methods(results[seeds[0]]["table"][key]):
            vals = np.array([results[s]["table"][key][m] for s in seeds])
            rows.append((_column_label(key), m, len(vals), vals.mean(), vals.min(), vals.max()))
    return pd.DataFrame(rows, columns=["cell", "method", "seeds", "mean (%)", "min (%)", "max (%)"]
                        ).set_index(["cell", "method"])


def seeds_spread_frame(results: Mapping[int, Mapping[str, Any]]) -> pd.DataFrame:
    """Per table, the range (max − min over the seeds of ``results``, in points) of its
    entries: the median and the largest range, and the entry with the largest."""
    import pandas as pd

    rows = []
    for table in TABLES:
        frame = seeds_frame(results, table)
        spread = frame["max (%)"] - frame["min (%)"]
        cell, method = spread.idxmax()
        rows.append((f"Table {table}", len(frame), int(frame["seeds"].min()), float(spread.median()),
                     float(spread.max()), f"{method}, {cell}"))
    return pd.DataFrame(rows, columns=["table", "entries", "seeds", "median range (points)",
                                       "largest range (points)", "entry with the largest range"]
                        ).set_index("table")


def summary_counts(result: Mapping[str, Any]) -> dict[str, Any]:
    """Over all Fashion-MNIST cells and methods: how many lie within the tables' tolerance of
    the paper (``within`` of ``cells``), and ours minus the paper in points (``mean``,
    ``lowest``, ``highest``)."""
    diffs = []
    for table in TABLES:
        diff = diff_frame(result, table).to_numpy(dtype=float).ravel()
        diffs.append(diff[np.isfinite(diff)])
    d = np.concatenate(diffs)
    return {"cells": int(d.size), "within": int(np.sum(np.abs(d) <= TOLERANCE)),
            "mean": float(d.mean()), "lowest": float(d.min()), "highest": float(d.max())}


def authors_code_summary(spec: Mapping[str, Any], code: Mapping[str, Any]) -> dict[str, float]:
    """The numbers the authors'-code section quotes: ours minus the paper under each reading
    (mean, points), the mean change entry by entry, the entries within the tolerance and the
    highest entry above the paper under the authors'-code reading, and ALI-DPFL's margins to
    the best fixed τ where R_s < R_c (lowest and highest, points; cells above it)."""
    mine, theirs = summary_counts(spec), summary_counts(code)
    shifts = [float(code["table"][k][m]) - float(spec["table"][k][m])
              for t in TABLES for k in cell_keys(spec, t) for m in spec["table"][k] if m in code["table"].get(k, {})]
    keys = cell_keys(code, "III") + cell_keys(code, "IV")
    vs = ali_vs_fixed(code["table"], keys)
    return {"spec_mean": mine["mean"], "code_mean": theirs["mean"], "shift": float(np.mean(shifts)),
            "shift_low": float(np.min(shifts)), "shift_high": float(np.max(shifts)),
            "within": float(theirs["within"]), "cells": float(theirs["cells"]), "highest": theirs["highest"],
            "closed": float(np.mean(shifts)) / abs(mine["mean"]), "ali_above": float(vs["above"]),
            "ali_cells": float(vs["cells"]), "ali_margin_low": float(min(vs["margins"])),
            "ali_margin_high": float(max(vs["margins"]))}


def readings_summary_frame(results: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per reading of ``results`` (``{reading: tables result}``): how many
    Fashion-MNIST entries lie within the tables' tolerance of the paper, ours minus the paper
    (mean, lowest, highest, in points) and the mean change from the first reading, entry by
    entry over the entries both readings have."""
    import pandas as pd

    names = list(results)
    first = results[names[0]]
    rows = []
    for r in names:
        counts = summary_counts(results[r])
        shifts = [float(results[r]["table"][k][m]) - float(first["table"][k][m])
                  for t in TABLES for k in cell_keys(first, t)
                  for m in first["table"][k] if m in results[r]["table"].get(k, {})]
        rows.append((r, f"{counts['within']} of {counts['cells']}", counts["mean"], counts["lowest"],
                     counts["highest"], float(np.mean(shifts)) if shifts else np.nan))
    cols = ["reading", f"within {TOLERANCE:g} points of the paper", "mean − paper (points)",
            "lowest − paper (points)", "highest − paper (points)", f"mean change from {names[0]} (points)"]
    return pd.DataFrame(rows, columns=cols).set_index("reading")


def figure_accuracy_vs_tau(result: Mapping[str, Any]) -> Figure:
    """Fig. 1 redrawn: final accuracy of fixed-τ DPFL against τ, one curve per budget pair
    (Fashion-MNIST), the best τ of each marked; thin dashed lines: the paper's tables."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), sharey=True)
    for ax, table in zip(axes, TABLES, strict=True):
        theirs = paper_table(table)
        for j, key in enumerate(cell_keys(result, table)):
            row = result["table"][key]
            taus = sorted(int(m.split("=")[1]) for m in row if m.startswith("tau="))
            acc = [row[f"tau={t}"] for t in taus]
            line, = ax.plot(taus, acc, "o-", ms=4, label=_column_label(key), color=f"C{j}")
            best, best_acc = best_fixed(row)
            ax.plot([best], [best_acc], "*", ms=12, color=line.get_color())
            if key in theirs:
                ax.plot(taus, [theirs[key].get(f"tau={t}", np.nan) for t in taus], "--", lw=0.8,
                        color=line.get_color())
        ax.set_title(f"Table {table}")
        ax.set_xlabel("local iterations per round tau")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("test accuracy (%)")
    fig.tight_layout()
    return fig


def figure_tau_sequences(result: Mapping[str, Any]) -> Figure:
    """Fig. 6 redrawn: τ* per round of ALI-DPFL in every cell where R_s < R_c (top) and the
    cumulative local iterations against R_c (bottom)."""
    import matplotlib.pyplot as plt

    keys = [k for k in result["taus"] if _ali_unit(k) in result["runs"]]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    for j, key in enumerate(keys):
        taus = np.asarray(result["taus"][key])
        rounds = np.arange(1, taus.size + 1)
        top.step(rounds, taus, where="post", color=f"C{j}", label=f"Table {key.split('|')[0]}: {_column_label(key)}")
        bottom.plot(rounds, np.cumsum(taus), color=f"C{j}")
    top.set_ylabel("tau* chosen")
    bottom.set_ylabel("local iterations used")
    bottom.set_xlabel("round")
    top.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def figure_curves(result: Mapping[str, Any], runs: Sequence[str] = ("tau-1", "tau-3", "tau-5", "tau-9")) -> Figure:
    """Accuracy on the fixed 2,000-image test subset against local iterations, for some
    fixed-τ runs and every ALI-DPFL run."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    for name in runs:
        res = result["runs"].get(name)
        if res is None:
            continue
        tau = int(name.split("-")[1])
        ax.plot(np.asarray(res["curve_rounds"]) * tau, 100 * np.asarray(res["curve_accuracy"]), "-", lw=1.2,
                label=f"fixed tau = {tau}")
    for name, res in result["runs"].items():
        if name.startswith("ali-"):
            used = np.cumsum(np.asarray(res["taus"]))
            rounds = np.asarray(res["curve_rounds"], dtype=int)
            ax.plot(used[rounds - 1] if rounds.size else rounds, 100 * np.asarray(res["curve_accuracy"]), ":",
                    lw=1, label=f"ALI-DPFL {name[4:]}")
    ax.set_xlabel("local iterations")
    ax.set_ylabel("accuracy on a fixed test subset (%)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return fig


def stored_tables(profile: str = "paper", seed: int = 0, reading: str = "spec") -> dict[str, Any] | None:
    """The stored, fresh tables result of (``profile``, ``seed``, ``reading``), or ``None``
    when it is not (yet) computed or stale: never starts a computation (the paper-profile runs
    of the other readings and seeds take hours and are resumed in the background). A corrupt
    stored file is an error naming it (:class:`fedrepro.core.cache.CorruptResult`)."""
    from fedrepro.core.cache import load_if_computed

    stored = load_if_computed(experiments.TablesConfig(profile=profile, seed=seed, reading=reading))
    return None if stored is None else stored.result


def stored_seeds(profile: str = "paper", reading: str = "spec", seeds: Sequence[int] = (0, 1, 2)
                 ) -> dict[int, dict[str, Any]]:
    """``{seed: tables result}`` for those of ``seeds`` whose result is stored and fresh
    (:func:`stored_tables`: never starts a computation)."""
    out = {}
    for seed in seeds:
        result = stored_tables(profile, seed, reading)
        if result is not None:
            out[int(seed)] = result
    return out


def readings_frame(results: Mapping[str, Mapping[str, Any]], table: str) -> pd.DataFrame:
    """Every method in every cell of ``table`` under each reading of ``results``
    (``{reading: tables result}``), beside the paper's value: accuracy (%), long format,
    with each reading's difference from the paper in points."""
    import pandas as pd

    theirs = paper_table(table)
    names = list(results)
    first = results[names[0]]
    rows = []
    for key in cell_keys(first, table):
        for m in _methods(*(results[r]["table"][key] for r in names)):
            row: list[Any] = [_column_label(key), m, theirs.get(key, {}).get(m, np.nan)]
            for r in names:
                row.append(results[r]["table"][key].get(m, np.nan))
            for r in names:
                row.append(row[3 + names.index(r)] - row[2])
            rows.append(row)
    cols = (["cell", "method", "paper (%)"] + [f"{r} (%)" for r in names]
            + [f"{r} − paper (points)" for r in names])
    return pd.DataFrame(rows, columns=cols).set_index(["cell", "method"])
