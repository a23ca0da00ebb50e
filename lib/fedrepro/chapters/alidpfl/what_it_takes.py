"""What it would take to reach the paper's level: the table, the figure and the cause of the misses
(section "What it would take" of the ALI-DPFL settings chapter).

The runs (:mod:`fedrepro.experiments.alidpfl.what_it_takes`) move one knob of the reader's
recipe at a time along a ladder stated before they ran, at the reference cell of Table II
(τ = 1, ε = 1.55, 79 local iterations, Fashion-MNIST; Ling et al., ALI-DPFL). This view reads
them, decides for every rung whether it *reaches* the paper (its accuracy, mean over the seeds
run, at least the paper's value minus the tables' tolerance, 2 points) and whether it keeps
the privacy accounting at ε = 1.55 valid, computed by
:func:`fedrepro.alidpfl.validity.accounting_valid` from what the run did (its steps, rate,
conversion; the engine always clips per sample and noises with σ times that clip, and
divides by a constant).

:func:`miss_cause` splits the misses of Tables II–IV between ``unstated-setting`` and
``model-or-data-differs`` by what these runs show (its rule is in :func:`classify_miss`).
Wiring it into the scorecard: in the ALI-DPFL provider, load the study once
(``results = load_chapter("paper")``), and for every Fashion-MNIST table cell whose outcome
misses call ``miss_cause({"id": cell.id, "paper_value": cell.value, "ours": outcome.ours,
"tolerance": {"abs": 2.0}}, "paper", results)``; its cause and evidence replace the cell's,
its strength goes with them and its reason is appended to the outcome's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedrepro.alidpfl.setting import PAPER
from fedrepro.alidpfl.validity import RunAccounting, accounting_valid
from fedrepro.experiments.alidpfl.what_it_takes import (
    KNOB_ORDER,
    KNOBS,
    REFERENCE_EPSILON,
    Rung,
    WhatItTakesConfig,
    load_knob,
    rung_rounds,
)

__all__ = ["REACH_TOLERANCE", "rung_accounting", "rungs_frame", "what_it_takes_frame", "figure_ladders",
           "classify_miss", "miss_cause", "reference_readings", "STRENGTHS", "paper_reference",
           "evidence_paths", "load_chapter", "CHAPTER_KNOBS", "SAME_RUNS", "with_reading_seeds",
           "miss_split_frame", "scorecard_split", "glued", "planned_accounting"]

#: Points of accuracy within which a rung counts as reaching the paper (the tables' tolerance,
#: ``data/paper/tolerances.yaml``, alidpfl-main-TII: abs 2.0).
REACH_TOLERANCE: float = 2.0

#: The strengths of a cause (DESIGN: how sure we are).
STRENGTHS: tuple[str, ...] = ("reproduced", "consistent", "excluded", "open")

#: The paper cell of the reference: Table II, τ = 1, R_s = 2R_c, Fashion-MNIST, ε = 1.55.
REFERENCE_CELL = "alidpfl-main-TII-tau-1-rs-eq-2rc-fmnist-eps-1p55"


def paper_reference() -> float:
    """The paper's accuracy (%) at the reference cell (read for the comparison only)."""
    from fedrepro.report import paper

    cells = {c.id: c for c in paper.load_table(paper.table_id("alidpfl", "main", "II"))}
    return float(cells[REFERENCE_CELL].value)


#: The knobs this chapter shows (each a stored result ``alidpfl/what-it-takes-<knob>.json``).
CHAPTER_KNOBS: tuple[str, ...] = KNOB_ORDER

#: Rungs that are, run for run, a reading of the reading study (same setting, plan, data
#: draw and seed; seed 0 of both agrees to float32 round-off): their seeds 1 and 2
#: (``alidpfl/reading-seeds.json``) give these rungs a spread over three seeds.
SAME_RUNS: dict[tuple[str, int], str] = {("recipe", 0): "spec", ("eta", 0): "eta-1", ("eta", 1): "eta-2",
                                         ("eta", 2): "eta-4", ("split", 1): "dirichlet", ("code", 0): "public-code"}


def with_reading_seeds(results: Mapping[str, Mapping[str, Mapping[str, Any]]],
                       seeds: Mapping[int, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``results`` with, for every rung of :data:`SAME_RUNS`, the units ``"<i>@seed<k>"`` of the
    reading study's seeds ``k`` ≠ 0 (``seeds``: :func:`fedrepro.chapters.alidpfl.settings.load_seeds`)."""
    out = {k: dict(v) for k, v in results.items()}
    for (knob, i), reading in SAME_RUNS.items():
        if knob not in out or f"{i}@seed0" not in out[knob]:
            continue
        base = out[knob][f"{i}@seed0"]
        for k, by_reading in seeds.items():
            if k != 0 and reading in by_reading:
                res = by_reading[reading]
                if int(res["eval_rounds"][-1]) != int(base["rounds"]):
                    raise ValueError(f"reading {reading!r} of seed {k} ran {int(res['eval_rounds'][-1])} "
                                     f"rounds, rung {knob} {i} {int(base['rounds'])}")
                out[knob][f"{i}@seed{k}"] = {**base, "final_accuracy": float(res["eval_accuracy"][-1])}
    return out


def load_chapter(profile: str = "paper") -> dict[str, dict[str, dict[str, Any]]]:
    """``{knob: {unit: result}}`` of :data:`CHAPTER_KNOBS` (computed, resumably, if missing or
    stale), with the reading study's seeds 1 and 2 for the rungs of :data:`SAME_RUNS`."""
    from fedrepro.chapters.alidpfl import settings

    return with_reading_seeds({k: load_knob(k, profile) for k in CHAPTER_KNOBS}, settings.load_seeds(profile))


def evidence_paths(profile: str = "paper") -> list[str]:
    """The stored results of the study, as the scorecard names evidence."""
    paths = [f"alidpfl/{WhatItTakesConfig(profile=profile, knob=k).result_name()}.json" for k in CHAPTER_KNOBS]
    return paths + ["alidpfl/reading-seeds.json" if profile == "paper" else f"alidpfl/reading-seeds-{profile}.json"]


def rung_accounting(rung: Rung, result: Mapping[str, Any]) -> RunAccounting:
    """What the run of ``rung`` did, for the accountant: its noisy steps, rate and σ, under the
    rung's conversion, at ε = 1.55."""
    return RunAccounting(epsilon=REFERENCE_EPSILON, steps=int(result["steps"]), q=float(result["q"]),
                         sigma=float(result["sigma"]), delta=PAPER.delta, conversion=rung.conversion)


def planned_accounting(rung: Rung) -> RunAccounting:
    """What the run of ``rung`` does, for the accountant, from its stated configuration alone
    (paper profile): rounds × steps per round noisy steps at the rung's q."""
    return RunAccounting(epsilon=REFERENCE_EPSILON, steps=rung_rounds(rung) * rung.tau,
                         q=float(dict(rung.plan).get("q", PAPER.q)), sigma=float(dict(rung.plan).get("sigma", PAPER.sigma)),
                         delta=PAPER.delta, conversion=rung.conversion)


def _by_rung(knob: str, units: Mapping[str, Mapping[str, Any]]) -> dict[int, list[Mapping[str, Any]]]:
    out: dict[int, list[Mapping[str, Any]]] = {}
    for unit in sorted(units, key=lambda u: (int(u.split("@seed")[0]), int(u.split("@seed")[1]))):
        out.setdefault(int(unit.split("@seed")[0]), []).append(units[unit])
    return out


def _rows(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for knob in (k for k in KNOB_ORDER if k in results):
        rungs = KNOBS[knob][1]
        for i, runs in _by_rung(knob, results[knob]).items():
            acc = np.array([100 * float(r["final_accuracy"]) for r in runs])
            valid, why = accounting_valid(rung_accounting(rungs[i], runs[0]))
            rows.append({"knob": knob, "rung": rungs[i].label, "multiplier": rungs[i].multiplier,
                         "seeds": len(runs), "mean": float(acc.mean()), "min": float(acc.min()),
                         "max": float(acc.max()), "steps": int(runs[0]["steps"]), "valid": valid, "why": why})
    return rows


def rungs_frame(results: Mapping[str, Mapping[str, Mapping[str, Any]]], paper_level: float):
    """One row per rung: knob, change, accuracy (%), minus the paper, reaches (within
    :data:`REACH_TOLERANCE` or above), noisy steps, accounting valid and why."""
    import pandas as pd

    rows = [{"knob": r["knob"], "change": r["rung"], "accuracy (%)": round(r["mean"], 1),
             "minus paper (points)": round(r["mean"] - paper_level, 1),
             "reaches": r["mean"] >= paper_level - REACH_TOLERANCE, "noisy steps": r["steps"],
             "accounting valid": "yes" if r["valid"] else "no", "why": r["why"]} for r in _rows(results)]
    return pd.DataFrame(rows).set_index(["knob", "change"])


def _range_text(knob: str) -> str:
    rungs = KNOBS[knob][1]
    if all(r.multiplier is not None for r in rungs):
        return "x {" + ", ".join(f"{r.multiplier:g}" for r in rungs) + "}"
    return "; ".join(r.label for r in rungs)


def _spread(row: Mapping[str, Any]) -> str:
    if row["seeds"] == 1:
        return f"{row['mean']:.1f} (1 seed)"
    return f"{row['mean']:.1f} ({row['min']:.1f} to {row['max']:.1f}, {row['seeds']} seeds)"


def what_it_takes_frame(results: Mapping[str, Mapping[str, Mapping[str, Any]]], paper_level: float):
    """One row per knob (the recipe and the public code's combinations included): what it
    changes, the range searched, the smallest rung reaching the paper or "none within the
    range", the accuracy reached (of that rung, else of the knob's best rung: mean over seeds
    with min to max), and whether that rung keeps the accounting valid.

    The divisor row is derived, not run: the update is η·(noisy sum)/divisor, so divisor ÷ k
    is the η × k rung (a constant divisor keeps the accounting valid)."""
    import pandas as pd

    rows = _rows(results)
    out = []
    for knob in (k for k in KNOB_ORDER if k in results and k != "recipe"):
        mine = [r for r in rows if r["knob"] == knob]
        reach = [r for r in mine if r["mean"] >= paper_level - REACH_TOLERANCE]
        pick = reach[0] if reach else max(mine, key=lambda r: r["mean"])
        out.append({"knob": KNOBS[knob][0], "range searched": _range_text(knob),
                    "smallest reaching the paper": pick["rung"] if reach else "none within the range",
                    "accuracy reached (%)": _spread(pick) + ("" if reach else f", best: {pick['rung']}"),
                    "accounting valid": "yes" if pick["valid"] else "no"})
        if knob == "eta":
            out.append({"knob": "divisor (recipe q|D_i| = 90): divisor / k is eta x k",
                        "range searched": "/ {" + ", ".join(f"{r['multiplier']:g}" for r in mine) + "} (the eta runs)",
                        "smallest reaching the paper": (f"/ {pick['multiplier']:g}" if reach else "none within the range"),
                        "accuracy reached (%)": out[-1]["accuracy reached (%)"], "accounting valid": "yes"})
    for knob in (k for k in KNOB_ORDER if k not in results and k != "recipe"):
        valid = [accounting_valid(planned_accounting(r))[0] for r in KNOBS[knob][1]]
        out.append({"knob": KNOBS[knob][0], "range searched": _range_text(knob),
                    "smallest reaching the paper": "not run (beyond this study's compute)",
                    "accuracy reached (%)": "not run",
                    "accounting valid": ("yes" if all(valid) else "no") + " (every rung)" if len(set(valid)) == 1
                    else "some rungs"})
    return pd.DataFrame(out).set_index("knob")


def figure_ladders(results: Mapping[str, Mapping[str, Mapping[str, Any]]], paper_level: float):
    """Accuracy against each numeric knob's multiplier (log scale), the recipe at × 1, the
    paper's value as a line; filled markers keep the accounting valid, open ones break it."""
    import matplotlib.pyplot as plt

    rows = _rows(results)
    recipe = [r for r in rows if r["knob"] == "recipe"]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for knob in (k for k in KNOB_ORDER if k not in ("recipe", "split") and k in results):
        mine = recipe + [r for r in rows if r["knob"] == knob and r["multiplier"] is not None]
        if knob == "code":
            mine = [r for r in rows if r["knob"] == knob]
        mine.sort(key=lambda r: r["multiplier"])
        x, y = [r["multiplier"] for r in mine], [r["mean"] for r in mine]
        line = ax.plot(x, y, "-", lw=1, label=KNOBS[knob][0])[0]
        for r in mine:
            ax.plot(r["multiplier"], r["mean"], "o", color=line.get_color(),
                    mfc=line.get_color() if r["valid"] else "white")
    ax.axhline(paper_level, ls=":", c="k", label="paper, Table II, tau = 1, eps = 1.55")
    ax.axhspan(paper_level - REACH_TOLERANCE, paper_level + REACH_TOLERANCE, color="0.9", zorder=0)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("multiplier of the recipe's value (open marker: accounting broken)")
    ax.set_ylabel("test accuracy after the run (%)")
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def reference_readings(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> tuple[float, list[tuple[str, float, bool]]]:
    """(the recipe's accuracy %, [(rung, accuracy %, accounting valid)] for every rung) at the
    reference cell, means over the seeds run."""
    rows = _rows(results)
    recipe = [r["mean"] for r in rows if r["knob"] == "recipe"]
    if not recipe:
        raise ValueError("results must hold the knob 'recipe' (the reader's recipe)")
    return recipe[0], [(f"{r['knob']}: {r['rung']}", r["mean"], r["valid"]) for r in rows if r["knob"] != "recipe"]


def classify_miss(paper_value: float, ours: float, tolerance: float, recipe: float,
                  readings: Sequence[tuple[str, float, bool]], *, direct: bool) -> tuple[str, str, str]:
    """(cause, strength, reason) of a table cell's miss, from the stated readings.

    ``readings``: (name, accuracy %, accounting valid) of every rung at the reference cell;
    ``recipe``: the reader's recipe there; ``direct``: the item *is* the reference cell.
    Only readings that keep the accounting valid count (a reading that breaks it cannot be
    what a paper claiming ε did). The values a reading gives for the item: its accuracy for
    the reference cell itself; elsewhere ``ours`` plus the reading's gain over the recipe at
    the reference cell (the gain assumed to carry over). The recipe (``ours``, gain 0) is a
    reading too.

    * ``unstated-setting``, ``reproduced``: direct, and a valid reading lands within
      ``tolerance`` of the paper;
    * ``unstated-setting``, ``consistent``: the paper lies inside the span [min, max] of the
      valid readings' values and no run at this cell lands (for an item other than the
      reference cell, "lands" could only be carried over, never run) — the scorecard's rule
      (:func:`fedrepro.report.strength.judge`: inside the range, no tolerance added);
    * ``model-or-data-differs``, ``excluded``: the paper lies outside that span: every valid
      stated reading misses (range in the reason).
    """
    for name, value in (("paper_value", paper_value), ("ours", ours), ("tolerance", tolerance),
                        ("recipe", recipe)):
        if not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    base = float(recipe) if direct else float(ours)
    values = [(f"reader's recipe{'' if direct else ' (ours)'}", base)]
    values += [(n, (a if direct else float(ours) + a - float(recipe))) for n, a, ok in readings if ok]
    lo, hi = min(v for _, v in values), max(v for _, v in values)
    best = min(values, key=lambda nv: abs(nv[1] - paper_value))
    span = f"the valid stated readings span {lo:.1f} to {hi:.1f} % " + (
        "at this cell" if direct else "carried over from the reference cell (ours plus each reading's gain there)")
    if direct and abs(best[1] - paper_value) <= tolerance:
        return "unstated-setting", "reproduced", (f"{best[0]} reaches {best[1]:.1f} % against the paper's "
                                                  f"{paper_value:.1f} % (within {tolerance:g}); {span}")
    if lo <= paper_value <= hi:
        return "unstated-setting", "consistent", (f"the paper's {paper_value:.1f} % lies within {span} "
                                                  f"(closest: {best[0]}, {best[1]:.1f} %)")
    side = "above" if paper_value > hi else "below"
    return "model-or-data-differs", "excluded", (f"the paper's {paper_value:.1f} % lies {side} every valid "
                                                 f"stated reading: {span}")


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def miss_cause(item: Any, profile: str = "paper",
               results: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> tuple[str, str, str, str]:
    """(cause, strength, evidence_path, reason) of an ALI-DPFL miss.

    ``item``: a scorecard item or outcome (attributes or keys ``id``, ``paper_value``, ``ours``,
    ``tolerance``: the latter a number or ``{"abs": a}``). A Fashion-MNIST cell of Tables II–IV
    with numbers is classified by :func:`classify_miss` from the stored runs (``results``:
    :func:`load_chapter`'s, loaded when not given); anything else (a claim, a CIFAR-10 cell, an
    item without numbers) is ``("open", "open", "", why)``."""
    cid = str(_field(item, "id") or "")
    paper_value, ours, tol = _field(item, "paper_value"), _field(item, "ours"), _field(item, "tolerance")
    if isinstance(tol, Mapping):
        tol = tol.get("abs")
    if tol is None:
        tol = REACH_TOLERANCE
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
                  for v in (paper_value, ours, tol))
    if not (cid.startswith("alidpfl-main-T") and "-fmnist-" in cid and numeric):
        return "open", "open", "", "not a Fashion-MNIST table cell with numbers: the study speaks to none"
    if results is None:
        results = load_chapter(profile)
    recipe, readings = reference_readings(results)
    cause, strength, reason = classify_miss(float(paper_value), float(ours), float(tol), recipe, readings,
                                            direct=cid == REFERENCE_CELL)
    return cause, strength, ", ".join(evidence_paths(profile)), reason


def table_misses(profile: str = "paper") -> list[dict[str, Any]]:
    """The Fashion-MNIST cells of Tables II–IV that miss the paper by more than
    :data:`REACH_TOLERANCE` (the tables' tolerance) under the stored runs (seed 0, the spec's
    reading), as items for :func:`miss_cause`."""
    from fedrepro.chapters.alidpfl import claims, experiments, tables
    from fedrepro.report import paper

    outcomes = claims.tables_outcomes(experiments.load_tables(profile, 0), profile)
    items = []
    for tid in tables.TABLES.values():
        for cell in paper.load_table(tid):
            o = outcomes.get(cell.id)
            if o is None or o.status is not None or o.ours is None or cell.value is None:
                continue
            if abs(float(o.ours) - float(cell.value)) > REACH_TOLERANCE:
                items.append({"id": cell.id, "paper_value": float(cell.value), "ours": float(o.ours),
                              "tolerance": {"abs": REACH_TOLERANCE}})
    return items


def scorecard_split(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(cause, strength) of each of ``items`` in the committed scorecard
    (``data/results/scorecard.json``), where the ALI-DPFL provider splits the table misses by
    the strength rule on every stated reading, this search's included
    (:func:`fedrepro.chapters.alidpfl.scorecard.split_table_misses`). An item the scorecard
    does not list as a miss is ``("not a miss", "")``."""
    from fedrepro.report import scorecard

    by_id = {it.id: it for it in scorecard.load() if it.status == "miss"}
    return [(by_id[i["id"]].cause, by_id[i["id"]].strength) if i["id"] in by_id else ("not a miss", "")
            for i in items]


def _split(items: Sequence[Mapping[str, Any]], profile: str,
           results: Mapping[str, Mapping[str, Mapping[str, Any]]] | None) -> list[tuple[str, str]]:
    """The scorecard's split at the paper profile (:func:`scorecard_split`); at the quick
    profile, which has no scorecard, the search's own rule (:func:`miss_cause`)."""
    if profile == "paper":
        return scorecard_split(items)
    return [miss_cause(item, profile, results)[:2] for item in items]


def miss_split_frame(items: Sequence[Mapping[str, Any]], results: Mapping[str, Mapping[str, Mapping[str, Any]]],
                     profile: str = "paper"):
    """How many of ``items`` (:func:`table_misses`) have each cause and strength in the
    committed scorecard at the paper profile (:func:`scorecard_split`), by :func:`miss_cause`
    on ``results`` at the quick profile."""
    import pandas as pd

    counts: dict[tuple[str, str], int] = {}
    for cause, strength in _split(items, profile, results):
        counts[(cause, strength)] = counts.get((cause, strength), 0) + 1
    rows = [{"cause": c, "strength": s, "misses": n} for (c, s), n in sorted(counts.items())]
    rows.append({"cause": "all", "strength": "", "misses": len(items)})
    return pd.DataFrame(rows).set_index(["cause", "strength"])


def glued(results: Mapping[str, Mapping[str, Mapping[str, Any]]], paper_level: float,
          items: Sequence[Mapping[str, Any]], profile: str = "paper") -> dict[str, str]:
    """The numbers the section's prose quotes, formatted as it prints them, by name (the page
    glues each as ``alidpfl-wit-<name>``)."""
    rows = _rows(results)
    recipe = next(r for r in rows if r["knob"] == "recipe")
    valid = [r for r in rows if r["valid"] and r["knob"] != "recipe"]
    best = max(valid, key=lambda r: r["mean"])
    broken = [r for r in rows if not r["valid"]]
    best_broken = max(broken, key=lambda r: r["mean"]) if broken else None
    reach_valid = sorted({r["knob"] for r in valid if r["mean"] >= paper_level - REACH_TOLERANCE})
    causes = _split(items, profile, results)
    out = {"recipe": f"{recipe['mean']:.1f}", "paper": f"{paper_level:.1f}",
           "best-valid": best["rung"], "best-valid-acc": f"{best['mean']:.1f}",
           "best-valid-gap": f"{paper_level - best['mean']:.1f}",
           "reaching-valid": ", ".join(reach_valid) if reach_valid else "none",
           "misses": str(len(items)),
           "unstated": str(sum(c == "unstated-setting" for c, _ in causes)),
           "differs": str(sum(c == "model-or-data-differs" for c, _ in causes)),
           "rungs": str(len(rows))}
    for knob in (k for k in KNOB_ORDER if k != "recipe" and any(r["knob"] == k for r in rows)):
        mine = [r for r in rows if r["knob"] == knob]
        top = max(mine, key=lambda r: r["mean"])
        out[f"{knob}-best"] = top["rung"]
        out[f"{knob}-best-acc"] = f"{top['mean']:.1f}"
        out[f"{knob}-last-acc"] = f"{mine[-1]['mean']:.1f}"
        if len(mine) > 1:
            out[f"{knob}-second-last-acc"] = f"{mine[-2]['mean']:.1f}"
        for r in mine:
            if r["multiplier"] is not None:
                out[f"{knob}-x{r['multiplier']:g}-acc".replace(".", "p")] = f"{r['mean']:.1f}"
    if best_broken is not None:
        out["best-broken"] = best_broken["rung"]
        out["best-broken-acc"] = f"{best_broken['mean']:.1f}"
    return out
