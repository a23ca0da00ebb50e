"""The reading study of the chapter "ALI-DPFL: which setting reproduces the paper's level?": its
tables and figures. The runs (:class:`ReadingConfig`, :class:`ReadingSeedsConfig`, their run
functions and loaders) are in :mod:`fedrepro.experiments.alidpfl.settings`, whose docstring lists
the readings (the spec's literal reading, the ones that remove one ingredient, the public
code's, and what it would take to reach the paper's level); their names stay importable from here.

Readings that need no extra run: best-over-rounds (the maximum of the curve on a fixed 2k
test subset), the improved RDP conversion (the number of iterations each ε allows under it,
:func:`improved_iterations`), "iteration" = local epoch (1/q = 67 DP-SGD steps per iteration:
at 79 "iterations" 5,267 steps, beyond this chapter's compute; :func:`epoch_steps`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.alidpfl.setting import PAPER
from fedrepro.chapters.alidpfl.conversions import improved_iterations
from fedrepro.experiments.alidpfl.settings import (  # noqa: F401
    CHAPTER_READINGS,
    READINGS,
    SPREAD_SEEDS,
    ReadingConfig,
    ReadingSeedsConfig,
    _run_seed_unit,
    _seed_units,
    _setting,
    checkpoint_dir,
    load_reading,
    load_seeds,
    public_code_iterations,
    run_reading,
)

__all__ = ["READINGS", "ReadingConfig", "ReadingSeedsConfig", "run_reading", "load_reading", "load_seeds",
           "improved_iterations", "public_code_iterations", "epoch_steps", "estimate_samples", "reading_frame", "seeds_frame",
           "SPREAD_SEEDS"]

def epoch_steps(iterations: int, q: float = PAPER.q) -> int:
    """DP-SGD steps in ``iterations`` local epochs of 1/q Poisson steps each."""
    return int(round(iterations / q))


def reading_frame(results: dict[str, dict[str, Any]], paper_level: dict[int, float] | None = None):
    """One row per reading: accuracy (%) after each evaluated iteration count, best over the
    curve, and the gap to the non-private run at the same count."""
    import pandas as pd

    rows = []
    base = results.get("non-private")
    for name, res in results.items():
        row: dict[str, Any] = {"reading": READINGS[name][0]}
        for it, acc in zip(res["eval_rounds"], res["eval_accuracy"], strict=True):
            row[f"acc @ {int(it)} it. (%)"] = round(100 * float(acc), 1)
            if base is not None and int(it) in list(base["eval_rounds"]):
                j = list(base["eval_rounds"]).index(int(it))
                row[f"vs non-private @ {int(it)}"] = round(100 * (float(acc) - float(base["eval_accuracy"][j])), 1)
        row["best over curve (%)"] = round(100 * float(res["best_curve_accuracy"]), 1)
        row["labels / client"] = round(float(np.mean(res["labels_per_client"])), 1)
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("reading")
    if paper_level:
        for it, value in paper_level.items():
            frame[f"paper @ {it} it. (%)"] = value
    return frame


PAPER_CELL_79 = "alidpfl-main-TII-tau-1-rs-eq-2rc-fmnist-eps-1p55"


def load_chapter(profile: str = "paper") -> dict[str, dict[str, Any]]:
    """The stored results of :data:`CHAPTER_READINGS` (computed if missing or stale)."""
    return {r: load_reading(r, profile) for r in CHAPTER_READINGS}


def paper_level_79() -> float:
    """The paper's accuracy (%) of τ = 1 at ε = 1.55 (R_c = 79), Fashion-MNIST, Table II."""
    from fedrepro.report import paper

    cells = {c.id: c for c in paper.load_table(paper.table_id("alidpfl", "main", "II"))}
    return float(cells[PAPER_CELL_79].value)


def seeds_frame(results: dict[int, dict[str, dict[str, Any]]], paper_level: float | None = None):
    """One row per reading: its iterations, the final accuracy (%) under every seed of
    ``results`` (``{seed: {reading: result}}``), their mean, min and max, the best accuracy
    over the curve (mean over seeds), and the mean minus ``paper_level``."""
    import pandas as pd

    seeds = sorted(results)
    rows = []
    for name in results[seeds[0]]:
        runs = [results[k][name] for k in seeds if name in results[k]]
        acc = np.array([100 * float(r["eval_accuracy"][-1]) for r in runs])
        row: dict[str, Any] = {"reading": READINGS[name][0], "iterations": int(runs[0]["eval_rounds"][-1])}
        for k, a in zip(seeds, acc, strict=False):
            row[f"seed {k} (%)"] = round(float(a), 1)
        row.update({"mean (%)": round(float(acc.mean()), 1), "min (%)": round(float(acc.min()), 1),
                    "max (%)": round(float(acc.max()), 1),
                    "best over curve, mean (%)": round(float(np.mean([100 * float(r["best_curve_accuracy"])
                                                                     for r in runs])), 1)})
        if paper_level is not None:
            row["mean − paper (points)"] = round(float(acc.mean()) - paper_level, 1)
        rows.append(row)
    return pd.DataFrame(rows).set_index("reading")


def labels_frame(results: dict[str, dict[str, Any]]):
    """Labels per client: closed form for 40 and 4 random shards, and the drawn partitions."""
    import pandas as pd

    from fedrepro.alidpfl.setting import expected_labels_per_client

    rows = [("40 random shards (expected)", round(expected_labels_per_client(400, 40), 2), 6000),
            ("4 random shards (expected)", round(expected_labels_per_client(400, 4), 2), 600)]
    for name, res in results.items():
        if name in ("spec", "dirichlet"):
            rows.append((f"{READINGS[name][0]} (drawn, seed 0)",
                         round(float(np.mean(res["labels_per_client"])), 2),
                         int(round(float(np.mean(res["client_sizes"]))))))
    return pd.DataFrame(rows, columns=["partition", "labels per client", "|D_i| (mean)"]).set_index("partition")


def iterations_frame():
    """R_c under the basic and the improved RDP conversion, and the steps if an
    "iteration" were a local epoch."""
    import pandas as pd

    it = improved_iterations()
    frame = pd.DataFrame({"epsilon": it["epsilon"], "R_c basic (paper)": it["basic"],
                          "R_c improved (public code)": it["improved"]})
    frame["DP-SGD steps if 'iteration' = local epoch"] = [epoch_steps(n) for n in it["basic"]]
    return frame.set_index("epsilon")


def figure_curves(results: dict[str, dict[str, Any]]):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for name, res in results.items():
        ax.plot(res["curve_rounds"], 100 * res["curve_accuracy"], "o-", ms=3, label=READINGS[name][0])
    ax.axhline(paper_level_79(), ls=":", c="k", label="paper, tau = 1 at 79 iterations")
    ax.set_xlabel("local iterations (tau = 1: rounds)")
    ax.set_ylabel("test accuracy on a fixed subset (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def estimate_samples(profile: str = "paper") -> int:
    """Records per client on which ALI-DPFL's estimates ran in the stored Tables II–IV runs
    (seed 0 of the experiments chapter), read from their stored counts
    (:func:`fedrepro.chapters.alidpfl.tables.estimate_samples_used`)."""
    from fedrepro.chapters.alidpfl import experiments, tables

    return tables.estimate_samples_used(experiments.load_tables(profile))


def unaccounted_frame(estimate_samples: int, expected_batch: float = 90.0):
    """Per client and round, the gradient evaluations of ALI-DPFL's estimates that the
    accountant does not charge (on ``estimate_samples`` records, :func:`estimate_samples`
    for the stored runs), beside the DP-SGD ones it charges, for τ = 1, 2, 5."""
    import pandas as pd

    from fedrepro.alidpfl.tau_rule import unaccounted_evaluations

    rows = []
    for tau in (1, 2, 5):
        u = unaccounted_evaluations(estimate_samples, tau, expected_batch)
        rows.append((tau, int(u["accounted"]), int(u["unaccounted"]), round(u["ratio"], 1)))
    return pd.DataFrame(rows, columns=["tau", "accounted (DP-SGD)", "unaccounted (estimates)",
                                       "ratio"]).set_index("tau")
