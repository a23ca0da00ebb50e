"""What the T2 page shows of the fair tuning axes (:mod:`fedrepro.experiments.headtohead.t2_fair`
and :mod:`fedrepro.experiments.headtohead.t2_fair_grid`): the best validation accuracy of every
algorithm at each clipping norm, the fair selections, and T2's table at the main budget
re-derived from them. Presentation only: it reads stored results and never computes one
(:func:`fedrepro.core.cache.load_if_computed`); while the fair tuning is not stored, it shows
what T2's stored tuning runs already say at each clip."""

from __future__ import annotations

import math
from typing import Any

from fedrepro.chapters.headtohead import t1_report as common
from fedrepro.chapters.headtohead import t2, t2_report
from fedrepro.chapters.headtohead.t2_report import Text
from fedrepro.core.cache import load_if_computed
from fedrepro.experiments.headtohead import t2_fair, t2_fair_grid
from fedrepro.report.prose import compare_over_seeds

__all__ = ["LABELS", "stored_old_tunings", "fair_computed", "final_computed", "old_grid_computed",
           "clip_frame", "selected_frame", "clip_text", "pending_text", "verdicts", "verdict_text", "ranking_frame",
           "fair_summary", "fedplt_text", "pair_counts"]

#: What the page calls each algorithm (T2's names, and ALI-DPFL's).
LABELS: dict[str, str] = t2.LABELS | {"ali-dpfl": "ALI-DPFL (not private as run)"}

#: The algorithms of the tables, in T2's order.
ORDER: tuple[str, ...] = (*t2_fair.PRIVATE, "ali-dpfl")


def stored_old_tunings(profile: str = "paper") -> dict[str, dict[str, Any]] | None:
    """T2's stored tuning runs (``t2-tuning``, ``t2-alidpfl-tuning``) by experiment name, or
    ``None`` while either is not stored."""
    cfg = t2_fair.T2FairTuningConfig.for_profile(profile)
    old = {"t2-tuning": load_if_computed(cfg.old_config("dpfl")),
           "t2-alidpfl-tuning": load_if_computed(cfg.old_config("ali-dpfl"))}
    if any(v is None for v in old.values()):
        return None
    return {k: v.result for k, v in old.items()}


def fair_computed(profile: str = "paper") -> dict[str, Any] | None:
    """The fair tuning table (:func:`fedrepro.experiments.headtohead.t2_fair_grid.fair_tuning`)
    when its new runs and T2's old ones are all stored, else ``None``."""
    cfg = t2_fair.T2FairTuningConfig.for_profile(profile)
    new, old = load_if_computed(cfg), stored_old_tunings(profile)
    if new is None or old is None:
        return None
    return t2_fair_grid.fair_tuning(cfg, new.result, old)


def old_grid_computed(profile: str = "paper") -> dict[str, Any] | None:
    """T2's stored grid of cells (the old selections), or ``None``."""
    tuning = load_if_computed(t2.T2Config.for_profile(profile).tuning_config())
    if tuning is None:
        return None
    grid = load_if_computed(t2.with_selection(t2.T2Config.for_profile(profile), tuning.result))
    return grid.result if grid is not None else None


def final_computed(profile: str, table: dict[str, Any]) -> dict[str, Any] | None:
    """The fair table's records at the main budget (new cells and the reused T2 cells) when
    all are stored, else ``None``."""
    old_tuning = load_if_computed(t2.T2Config.for_profile(profile).tuning_config())
    old = old_grid_computed(profile)
    if old_tuning is None or old is None:
        return None
    cfg = t2_fair_grid.final_config(profile, table, old_tuning.result)
    if t2_fair_grid.final_units(cfg):
        new = load_if_computed(cfg)
        if new is None:
            return None
        new_records = new.result
    else:
        new_records = {"records": []}
    return {"records": t2_fair_grid.records_of(cfg, new_records, old)}


def _tunings(table: dict[str, Any] | dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every algorithm's tuning entry of a fair table or of T2's old tunings."""
    entries = table["tuning"] if "tuning" in table else [t for v in table.values() for t in v["tuning"]]
    return {t["algorithm"]: t for t in entries if t["algorithm"] in ORDER}


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else "diverged"


def clip_frame(table: dict[str, Any]) -> Any:
    """Rows: algorithms; columns: the clipping norms of :data:`CLIPS`: the best validation
    accuracy over the configurations run at that clip, with their number ("—" where none
    ran), and the clip the validation argmax selected. ``table``: a fair tuning table or T2's
    old tunings (:func:`stored_old_tunings`)."""
    import pandas as pd

    rows = []
    for name, t in sorted(_tunings(table).items(), key=lambda kv: ORDER.index(kv[0])):
        row = {"algorithm": LABELS[name]}
        for clip in t2_fair.CLIPS:
            scores = [c["validation_accuracy"] for c in t["candidates"] if c["config"]["clip"] == clip]
            finite = [s for s in scores if math.isfinite(s)]
            row[f"C = {clip:g}"] = f"{_pct(max(finite))} (of {len(scores)})" if finite else \
                ("diverged" if scores else "—")
        row["selected C"] = f"{t['candidates'][int(t['selected'])]['config']['clip']:g}"
        rows.append(row)
    return pd.DataFrame(rows).set_index("algorithm")


def selected_frame(table: dict[str, Any]) -> Any:
    """The fair selection of every algorithm: its hyper-parameters, its validation accuracy
    and where its run is read from."""
    import pandas as pd

    rows = []
    for name, t in sorted(_tunings(table).items(), key=lambda kv: ORDER.index(kv[0])):
        best = t["candidates"][int(t["selected"])]
        knobs = ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                          for k, v in best["config"].items() if k in ("lr", "clip", "local_steps", "mean_steps",
                                                                       "rho", "levels"))
        rows.append({"algorithm": LABELS[name], "selected": knobs,
                     "validation accuracy": _pct(best["validation_accuracy"]), "run read from": best["source"]})
    return pd.DataFrame(rows).set_index("algorithm")


def _best_at(t: dict[str, Any], clip: float) -> float | None:
    finite = [c["validation_accuracy"] for c in t["candidates"]
              if c["config"]["clip"] == clip and math.isfinite(c["validation_accuracy"])]
    return max(finite) if finite else None


def clip_text(old: dict[str, dict[str, Any]]) -> Text:
    """What T2's stored tuning runs say at each clip (the page's reading while the fair runs
    are pending): the spread of the best validation accuracies of the algorithms that learn
    at C = 0.1, where every algorithm ran, and at the clips only some ran."""
    tunings = _tunings(old)
    learning = [a for a in ("dp-fedsgd", "dpfl", "fed-plt", "ali-dpfl") if a in tunings]
    low = {a: _best_at(tunings[a], 0.1) for a in learning}
    high = {a: _best_at(tunings[a], 1.0) for a in learning}
    lo_vals = [v for v in low.values() if v is not None]
    names_high = [LABELS[a] for a, v in high.items() if v is not None]
    missing = [LABELS[a] for a in t2_fair.PRIVATE if a in tunings and _best_at(tunings[a], 1.0) is None]
    return Text(
        f"At C = 0.1, where every algorithm has runs, the best validation accuracies of "
        f"{', '.join(LABELS[a] for a in learning)} lie between {_pct(min(lo_vals))} and {_pct(max(lo_vals))}. "
        f"Only {', '.join(names_high)} ran at C = 1.0, where their best reach "
        f"{_pct(min(v for v in high.values() if v is not None))} to {_pct(max(v for v in high.values() if v is not None))}; "
        f"{' and '.join(missing)} never ran there.")


def pending_text(profile: str = "paper") -> Text:
    """The note the page shows while the fair tuning is not stored."""
    cfg = t2_fair.T2FairTuningConfig.for_profile(profile)
    n = len(t2_fair.new_units(cfg))
    return Text(f"**The fair rerun is pending.** Its {n} new tuning runs (`headtohead/t2-fair-tuning`, the "
                f"configurations of the fair grids that T2 never ran) are not all stored yet; the table below is "
                f"computed from T2's stored tuning runs only, on T2's old grids (the number of configurations at "
                f"each clip in brackets).")


def verdicts(result: dict[str, Any], budget: float) -> dict[float, dict[str, str]]:
    """At every ε of ``budget``: the leader (highest mean test accuracy over the seeds) and
    every other algorithm's verdict against it (:func:`fedrepro.report.prose.compare_over_seeds`:
    ``"level"`` or ``"lower"``), ``{ε: {algorithm: verdict}}`` with the leader as ``"leader"``."""
    by: dict[float, dict[str, list[float]]] = {}
    for r in result["records"]:
        if r["uplink_budget_bits"] == budget and math.isfinite(r["epsilon_target"]):
            by.setdefault(r["epsilon_target"], {}).setdefault(r["algorithm"], []).append(r["test_accuracy"])
    out = {}
    for eps, accs in sorted(by.items()):
        leader = max(accs, key=lambda a: sum(accs[a]) / len(accs[a]))
        out[eps] = {a: ("leader" if a == leader else compare_over_seeds(accs[a], accs[leader])) for a in accs}
    return out


def verdict_text(fair: dict[str, Any], old: dict[str, Any], budget: float,
                 labels: dict[str, str] | None = None) -> Text:
    """The verdicts of the fair table and where they differ from the task's (old grids)."""
    labels = LABELS if labels is None else labels
    new_v, old_v = verdicts(fair, budget), verdicts(old, budget)
    lines = []
    for eps, v in new_v.items():
        leader = next(a for a, s in v.items() if s == "leader")
        level = [labels.get(a, a) for a, s in v.items() if s == "level"]
        changed = [labels.get(a, a) for a, s in v.items() if old_v.get(eps, {}).get(a) not in (None, s)]
        lines.append(f"- ε = {eps:g}: {labels.get(leader, leader)} leads"
                     + (f"; level with it: {', '.join(level)}" if level else "")
                     + (f" (verdict changed from the old grids: {', '.join(changed)})" if changed else ""))
    return Text("\n".join(lines))


def ranking_frame(result: dict[str, Any], budget: float) -> Any:
    """T1's ranking table for the fair records."""
    return common.ranking_frame(result, budget, labels=LABELS)



def fair_summary(fair: dict[str, Any], old: dict[str, Any], budget: float) -> dict[str, Any]:
    """The numbers the page quotes of the fair table ``fair`` against T2's table ``old`` at
    ``budget``: Fed-PLT's distance to the best (smallest and largest over ε, fair and old, as
    fractions), at how many ε each of Fed-PLT and DPFL leads or is level with the leader by the
    seed-spread rule (fair and old), and the number of ε."""
    new_s, old_s = t2_report.t2_summary(fair, budget), t2_report.t2_summary(old, budget)
    new_v, old_v = verdicts(fair, budget), verdicts(old, budget)
    out: dict[str, Any] = {"epsilons": len(new_v)}
    for key in ("gap_fed-plt_low", "gap_fed-plt_high", "gap_dp-fedsgd_low", "gap_dp-fedsgd_high"):
        out[f"fair_{key}"] = new_s.get(key, math.nan)
        out[f"old_{key}"] = old_s.get(key, math.nan)
    for name in ("fed-plt", "dpfl", "dp-fedsgd"):
        for tag, v in (("fair", new_v), ("old", old_v)):
            out[f"{tag}_top_{name}"] = sum(cell.get(name) in ("leader", "level") for cell in v.values())
            out[f"{tag}_leads_{name}"] = sum(cell.get(name) == "leader" for cell in v.values())
    for tag, table in (("fair", fair), ("old", old)):
        for verdict, n in pair_counts(table, budget, "fed-plt", "dp-fedsgd").items():
            out[f"{tag}_fedplt_{verdict}_dpfedsgd"] = n
    return out


def pair_counts(result: dict[str, Any], budget: float, a: str, b: str) -> dict[str, int]:
    """At how many ε of ``budget`` algorithm ``a`` is ``"higher"``, ``"level"`` or ``"lower"``
    than ``b`` (:func:`fedrepro.report.prose.compare_over_seeds` on their per-seed test
    accuracies; an ε where either is missing is not counted)."""
    by: dict[float, dict[str, list[float]]] = {}
    for r in result["records"]:
        if r["uplink_budget_bits"] == budget and math.isfinite(r["epsilon_target"]) and r["algorithm"] in (a, b):
            by.setdefault(r["epsilon_target"], {}).setdefault(r["algorithm"], []).append(r["test_accuracy"])
    out = {"higher": 0, "level": 0, "lower": 0}
    for accs in by.values():
        if a in accs and b in accs:
            out[compare_over_seeds(accs[a], accs[b])] += 1
    return out


def fedplt_text(fair: dict[str, Any], old: dict[str, Any], budget: float) -> Text:
    """Fed-PLT against the best private algorithm with fair axes and with T2's grids, computed
    from the two tables (the seed-spread rule decides "level")."""
    s = fair_summary(fair, old, budget)
    n = s["epsilons"]

    def pts(x: float) -> str:
        return f"{100 * x:.1f}"

    def place(tag: str) -> str:
        top, leads = s[f"{tag}_top_fed-plt"], s[f"{tag}_leads_fed-plt"]
        if top == 0:
            return f"below the leader at all {n} ε"
        if leads == n:
            return f"the leader at all {n} ε"
        return (f"the leader or level with it at {top} of the {n} ε" + (f" (the leader at {leads})" if leads else "")
                + (f", below it at the other {n - top}" if top < n else ""))

    def pair(tag: str) -> str:
        return ", ".join(f"{s[f'{tag}_fedplt_{v}_dpfedsgd']} {v}" for v in ("higher", "level", "lower"))

    return Text(f"With the clipping norm tuned over the same set by every algorithm, Fed-PLT's private variant ends "
                f"{pts(s['fair_gap_fed-plt_low'])} to {pts(s['fair_gap_fed-plt_high'])} points below the best "
                f"private algorithm and is {place('fair')}; on T2's grids, with its clip fixed at 0.1, it ended "
                f"{pts(s['old_gap_fed-plt_low'])} to {pts(s['old_gap_fed-plt_high'])} points below and was "
                f"{place('old')}. Against DP-FedSGD, ε by ε (the seed-spread rule): {pair('fair')} with fair "
                f"axes; {pair('old')} on T2's grids.")
