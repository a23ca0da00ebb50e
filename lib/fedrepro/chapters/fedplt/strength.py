"""The readings that decide the strength of Fed-PLT's misses (:mod:`fedrepro.report.strength`).

One function per group of misses, each reading its stored evidence and returning, per item,
the value every stated reading gives in the item's unit (:class:`~fedrepro.report.strength.Readings`):

* :func:`time_readings`, the time cells of v2 Tables II-V: the decade grid
  (:mod:`fedrepro.chapters.fedplt.readings.decade_grid`, stated before it ran), the tight
  smoothness constant, the readings of TAMUNA; the span of every point of our tuning grid
  (Tables II-IV) or of the large comparison's grid (Table V) and of the tight search;
* :func:`v1_rate_readings`, the rates of v1 Tables II and III under the one reading of the v1
  problem each table is judged under (the others, and the rates of our tuning grid for v1
  Table II, span the range);
* :func:`claim_readings`, the claims about v1 Fig. 3 and v1 Table II under the one reading
  each group is judged under (whether each holds);
* :func:`tuning_readings`, v2 Table IX and v1 C11 (the tuning chapter's readings).

A time is a count of iterations times the cost of one iteration, the same for every reading
of a cell: a reading's time is its ``K*`` times ours per iteration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.report.strength import Readings

__all__ = ["claim_readings", "readings", "time_readings", "tuning_readings", "v1_rate_readings"]


def _finite(x: Any) -> bool:
    return x is not None and np.isfinite(float(x))


def time_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{cell id: Readings}`` of every time cell of v2 Tables II-V that we run."""
    from fedrepro.chapters.fedplt.comparison import experiments as cmp
    from fedrepro.chapters.fedplt.comparison import scorecard as card
    from fedrepro.chapters.fedplt.readings.grid_range import GridRangeConfig
    from fedrepro.chapters.fedplt.readings.grid_range_report import full_range
    from fedrepro.chapters.fedplt.readings.tamuna import READINGS, TamunaReadingsConfig
    from fedrepro.chapters.fedplt.readings.tight import TightLargeConfig, window
    from fedrepro.chapters.fedplt.readings.tight_small import TightComparisonConfig
    from fedrepro.experiments.fedplt.readings.decade_grid import DecadeGridConfig, load_decade_grid

    def name(config: Any) -> str:
        return f"fedplt/{config.for_profile(profile).result_name()}.json"

    decade = load_decade_grid(profile)["units"]
    grids, tight_small, tight = card.grid_range_units(profile), card.tight_small_units(profile), card.tight_units(profile)
    tamuna, large = card.tamuna_units(profile), cmp.load_large(profile)["units"]
    out: dict[str, Readings] = {}
    for cid, c in cmp.time_cells(profile).items():
        if c["ours"] is None or not _finite(c["K"]) or float(c["K"]) <= 0:
            continue
        cost = float(c["ours"]) / float(c["K"])
        values: dict[str, float] = {}
        spans: list[float] = []
        evidence: list[str] = []
        sources: dict[str, str] = {}
        if c["table"] == card.TV:
            unit = tight.get(c["row"])
            if unit is not None:
                values["tight smoothness constant"] = float(unit["mean_K"]) * cost
                sources["tight smoothness constant"] = name(TightLargeConfig)
                span = window(unit)
                spans += [] if span is None else [span[0] * cost, span[1] * cost]
                evidence.append(name(TightLargeConfig))
            base = large.get(c["row"])
            span = None if base is None else card.tuning_range(base)
            if span is not None:
                spans += [span[0] * cost, span[1] * cost]
                evidence.append(name(cmp.LargeComparisonConfig))
        else:
            setting = _setting(c)
            if setting in decade and _finite(decade[setting]["mean_K"]):
                values["decade grid"] = float(decade[setting]["mean_K"]) * cost
                sources["decade grid"] = name(DecadeGridConfig)
                evidence.append(name(DecadeGridConfig))
            if setting in tight_small and _finite(tight_small[setting]["mean_K"]):
                values["tight smoothness constant"] = float(tight_small[setting]["mean_K"]) * cost
                sources["tight smoothness constant"] = name(TightComparisonConfig)
                span = card.tuning_range(tight_small[setting])
                spans += [] if span is None else [span[0] * cost, span[1] * cost]
                evidence.append(name(TightComparisonConfig))
            for key, (_, _, what) in READINGS.items():
                t = tamuna.get(f"{key}-{setting}")
                if t is not None and t["reached"] and _finite(t["mean_K"]):
                    values[f"TAMUNA with {what}"] = float(t["mean_K"]) * cost
                    sources[f"TAMUNA with {what}"] = name(TamunaReadingsConfig)
                    evidence.append(name(TamunaReadingsConfig))
            span = full_range(grids[setting]) if setting in grids else None
            if span is not None:
                spans += [span[0] * cost, span[1] * cost]
                evidence.append(name(GridRangeConfig))
        if values or spans:
            out[cid] = Readings(values=values, evidence=", ".join(dict.fromkeys(evidence)),
                                span=(min(spans), max(spans)) if spans else None, sources=sources)
    return out


def _setting(c: Mapping[str, Any]) -> str:
    """The comparison's unit name of a time cell of v2 Tables II-IV."""
    from fedrepro.chapters.fedplt.comparison import experiments as cmp
    from fedrepro.chapters.fedplt.comparison import scorecard as card

    if c["table"] == card.TII:
        return cmp.unit_name(c["row"], "convex" if c["column"] == "Convex" else "nonconvex", "gd", False)
    if c["table"] == card.TIII:
        return cmp.unit_name(c["row"], "convex", "gd", False)
    solver, partial = cmp.TABLE_IV_COLUMNS[c["column"]]
    return cmp.unit_name(c["row"], "convex", solver, partial)


def v1_rate_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{cell id: Readings}`` of v1 Tables II and III: the rate under each reading of the v1
    problem (:func:`fedrepro.chapters.fedplt.readings.effects.readings`), and for Table II the
    range of rates over our tuning grid."""
    from fedrepro.chapters.fedplt.comparison import experiments as cmp
    from fedrepro.chapters.fedplt.readings import effects

    out: dict[str, Readings] = {}
    v1_units = cmp.load_v1_rates(profile)["units"]
    v1_evidence = f"fedplt/{cmp.V1RatesConfig.for_profile(profile).result_name()}.json"
    for tid in ("fedplt-v1-TII", "fedplt-v1-TIII"):
        values: dict[str, dict[str, float]] = {}
        evidence: dict[str, list[str]] = {}
        spans: dict[str, tuple[float, float]] = {}
        chosen = _table_reading(tid, profile)
        for reading in effects.readings(profile):
            label = effects.reading_label(*reading)
            for cid, cell in effects._cells_under(tid, profile, reading).items():  # noqa: SLF001
                if not _finite(cell.get("reading")):
                    continue
                value = float(cell["reading"])
                evidence.setdefault(cid, []).append(effects.evidence_of(profile, *reading))
                if reading == chosen:
                    values.setdefault(cid, {})[f"'{label}'"] = value
                else:  # another reading of the table: it spans the range, it never lands a cell alone
                    lo, hi = spans.get(cid, (value, value))
                    spans[cid] = (min(lo, value), max(hi, value))
        if tid == "fedplt-v1-TII":
            for cid, c in cmp.v1_rate_cells(profile).items():
                if c["ours"] is None:
                    continue
                solver, partial = cmp.V1_COLUMNS[c["column"]]
                unit = v1_units.get(f"{solver}-{'cohort' if partial else 'full'}-{c['name']}")
                rates = np.asarray([] if unit is None else unit["tune_rates"], dtype=float).ravel()
                rates = rates[np.isfinite(rates)]
                if rates.size >= 2:
                    lo, hi = spans.get(cid, (float(rates.min()), float(rates.max())))
                    spans[cid] = (min(lo, float(rates.min())), max(hi, float(rates.max())))
                    evidence.setdefault(cid, []).append(v1_evidence)
        for cid in set(values) | set(spans):
            sources = {} if chosen is None else {
                f"'{effects.reading_label(*chosen)}'": effects.evidence_of(profile, *chosen)}
            out[cid] = Readings(values=values.get(cid, {}), evidence=", ".join(dict.fromkeys(evidence[cid])),
                                span=spans.get(cid), sources=sources)
    return out


def _table_reading(tid: str, profile: str) -> tuple[float, float] | None:
    """The one reading of the v1 problem a table is judged under: the one
    :func:`fedrepro.chapters.fedplt.readings.effects.table_causes` picks (the most of the
    table's misses explained), so that no cell is landed by a reading the rest of its table
    refutes; None when it explains none."""
    from fedrepro.chapters.fedplt.readings import effects

    named = {c[1] for c in effects.table_causes(tid, profile).values() if c[0] == "unstated-setting"}
    return next((r for r in effects.readings(profile) if effects.evidence_of(profile, *r) in named), None)


def claim_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{claim id: Readings}``: whether each claim about v1 Fig. 3
    (:data:`~fedrepro.chapters.fedplt.readings.effects.EPOCH_CLAIMS`) and v1 Table II
    (:data:`~fedrepro.chapters.fedplt.readings.effects.TABLE_II_CLAIMS`) holds under each
    reading of the v1 problem."""
    from fedrepro.chapters.fedplt.readings import effects
    from fedrepro.chapters.fedplt.readings.epochs import ReadingsEpochsConfig, load_readings_epochs
    from fedrepro.chapters.fedplt.readings.experiments import MAIN

    out: dict[str, Readings] = {}
    result = load_readings_epochs(profile)
    epochs, one = effects.epochs_verdicts(result), effects.epochs_reading(result)
    evidence = f"fedplt/{ReadingsEpochsConfig.for_profile(profile).result_name()}.json"
    for claim in effects.EPOCH_CLAIMS:  # one reading for the whole figure, never one per claim
        if one != MAIN:
            out[claim] = Readings(values={f"'{effects.reading_label(*one)}'": bool(epochs[one][claim][0])},
                                  evidence=evidence)
    table = effects.table_ii_claim_verdicts(profile)
    order = list(table)
    best = max(order, key=lambda r: (sum(ok for ok, _ in table[r].values()), -order.index(r)))
    for claim in effects.TABLE_II_CLAIMS:  # one reading for the table's claims
        out[claim] = Readings(values={f"'{effects.reading_label(*best)}'": bool(table[best][claim][0])},
                              evidence=effects.evidence_of(profile, *best))
    return out


def tuning_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{item id: Readings}`` of the tuning chapter's misses: each cell of v2 Table IX
    (``rho`` fixed at the ``N_e = 5`` optimum; exact PRS, the ``N_e -> infinity`` limit, at its
    best ``rho``: counts priced at the cell's cost per iteration) and v1 C11 under the
    printed-class reading (whether it holds)."""
    from fedrepro.chapters.fedplt.readings.effects import grid_evidence, rho_optimum
    from fedrepro.chapters.fedplt.readings.experiments import PRINTED_CLASS, reading_label
    from fedrepro.chapters.fedplt.tuning import sweeps
    from fedrepro.chapters.fedplt.tuning.checks import check_v1_rho_optimum
    from fedrepro.report.paper import load_table

    out: dict[str, Readings] = {}
    if profile == "paper":
        v2 = sweeps.load_v2_sweeps(profile)
        evidence = f"fedplt/{sweeps.V2SweepConfig.for_profile(profile).result_name()}.json"
        Kf, _ = sweeps.tuned_K(v2, "fixed")
        K_prox = sweeps.k_or_inf(v2["K_prox"])
        ix = sweeps.paper_K_star("fedplt-v2-TIX").set_index("id")
        Nes = [int(n) for n in v2["Nes"]]
        for cell in load_table("fedplt-v2-TIX"):
            Ne, tC = int(ix.loc[cell.id, "Ne"]), float(ix.loc[cell.id, "tC"])
            e = Nes.index(Ne)
            values = {"rho fixed at the Ne = 5 optimum": float(sweeps.time_of(Kf[e], Ne, tC, v2["tG"], v2["N"]))}
            if np.isfinite(np.min(K_prox)):
                values["exact PRS at its best rho"] = float(sweeps.time_of(np.min(K_prox), Ne, tC, v2["tG"], v2["N"]))
            out[cell.id] = Readings(values={k: v for k, v in values.items() if np.isfinite(v)}, evidence=evidence)
    r = rho_optimum(profile, *PRINTED_CLASS)
    ok, _ = check_v1_rho_optimum(r["argmin_rho"], r["min_rate"], r["rate_low_end"], r["rate_high_end"])
    out["fedplt-v1-C11"] = Readings(values={f"'{reading_label(*PRINTED_CLASS)}'": bool(ok)},
                                    evidence=grid_evidence(profile))
    return out


def readings(profile: str = "paper") -> dict[str, Readings]:
    """Every Fed-PLT item's readings (the reading provider of
    :data:`fedrepro.report.scorecard.READING_PROVIDERS`)."""
    return {**time_readings(profile), **v1_rate_readings(profile), **claim_readings(profile),
            **tuning_readings(profile)}
