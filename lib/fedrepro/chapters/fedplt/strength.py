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
* :func:`tuning_readings`, v2 Table IX and v1 C11 (the tuning chapter's readings);
* :func:`table_claim_readings`, v2 C07, C16, C17, C20, C21, C23 and C24 under the readings of
  whole tables (and :func:`table_claim_cause`, the cause such a reading gives a claim whose
  cells leave it ``open``);
* :func:`finite_ne_readings`, v2 C08 and C29 with ``rho`` fixed at the ``N_e = 5`` optimum;
* :func:`figure_readings`, v1 Figs. 2 and 3 (every claim about the figure) under each reading
  of the v1 problem;
* :func:`noise_reference_readings`, v1 Table IV's errors measured against other reference points.

A time is a count of iterations times the cost of one iteration, the same for every reading
of a cell: a reading's time is its ``K*`` times ours per iteration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.report.strength import Readings

__all__ = ["CLAIM_TABLES", "READING_CAUSES", "TABLE_CLAIMS", "TABLE_READINGS", "claim_readings", "figure_readings", "figure_values", "finite_ne_readings",
           "finite_ne_values", "noise_reference_readings", "readings", "table_claim_cause", "table_claim_evidence", "table_claim_readings",
           "table_claim_values", "time_readings",
           "tuning_readings", "v1_rate_readings"]


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
    from fedrepro.experiments.fedplt.readings.tight_table_iv import TightTableIVConfig, load_tight_table_iv
    from fedrepro.experiments.fedplt.readings.tight_tables_ii_iii import (
        TightTablesIIIIIConfig,
        load_tight_tables_ii_iii,
    )

    def name(config: Any) -> str:
        return f"fedplt/{config.for_profile(profile).result_name()}.json"

    decade = load_decade_grid(profile)["units"]
    grids, tight = card.grid_range_units(profile), card.tight_units(profile)
    # the tight constant on v2 Tables II-IV: the settings no grid point explains, then the rest of
    # Table IV, then the rest of Tables II and III
    tight_name = {u: name(TightComparisonConfig) for u in card.tight_small_units(profile)}
    tight_small = dict(card.tight_small_units(profile))
    for config, units in ((TightTableIVConfig, load_tight_table_iv(profile)["units"]),
                          (TightTablesIIIIIConfig, load_tight_tables_ii_iii(profile)["units"])):
        tight_small.update(units)
        tight_name.update(dict.fromkeys(units, name(config)))
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
                sources["tight smoothness constant"] = tight_name[setting]
                span = card.tuning_range(tight_small[setting])
                spans += [] if span is None else [span[0] * cost, span[1] * cost]
                evidence.append(tight_name[setting])
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


# --------------------------------------------------------------------------- claims and figures under whole readings
#
# A claim (or a figure) about several numbers holds under a reading when its own rule holds on
# those numbers as the reading gives them. A reading is *decided* for an item when the store
# holds every number the rule reads under it; one stored for some of them only is *tried in
# part* (``Readings.partial``): it gives no value, and while one is, an item that no reading
# makes hold stays ``open`` (:func:`fedrepro.report.strength.judge`): the part not run could make
# it hold. Figures: a figure holds when every claim about it holds (its scorecard tolerance), so
# a reading's value for it is the conjunction of its claims' values, decided ``False`` as soon
# as one claim fails.


def _all_of(values: list[bool | None]) -> bool | None:
    """Three-valued conjunction: False if one is False, True if all are True, else None."""
    if any(v is False for v in values):
        return False
    return True if values and all(v is True for v in values) else None


def _claim_item(values: Mapping[str, bool | None], evidence: str,
                sources: Mapping[str, str] | None = None) -> Readings | None:
    """The :class:`Readings` of a claim from ``{reading: holds, or None when tried in part}``
    (None when no reading is tried at all)."""
    if not values:
        return None
    return Readings(values={k: bool(v) for k, v in values.items() if v is not None}, evidence=evidence,
                    sources=dict(sources or {}), partial=tuple(k for k, v in values.items() if v is None))


#: The readings of v2 Tables II-IV that apply to every algorithm (a table under one of them is
#: the table's rule on its cells under it): :func:`time_readings` names them. TAMUNA's readings
#: (its compression) are readings of TAMUNA's cells, not of a table.
TABLE_READINGS: tuple[str, ...] = ("decade grid", "tight smoothness constant")

#: The comparison claims read under :data:`TABLE_READINGS`, each by its own rule
#: (:mod:`fedrepro.chapters.fedplt.comparison.claims`) on the tables it reads
#: (:data:`CLAIM_TABLES`): v2 C07 (Fed-PLT the fastest in the columns the claim lists, Tables
#: II-V), C16 (Table II: Fed-PLT the fastest), C17 (Table III: Fed-PLT slower than FedLin when
#: communication is cheap, faster when it is expensive), C20 (Table IV: Fed-PLT the fastest but
#: for the last set-up), C21 (Table IV: partial participation slows Fed-PLT and speeds up 5GCS),
#: C23 (Table IV: GD faster than AGD for Fed-PLT) and C24 (Tables III and V: the same signs).
TABLE_CLAIMS: tuple[str, ...] = ("fedplt-v2-C07", "fedplt-v2-C16", "fedplt-v2-C17", "fedplt-v2-C20",
                                 "fedplt-v2-C21", "fedplt-v2-C23", "fedplt-v2-C24")

#: ``{claim: the tables its rule reads}`` (v2 Tables II-V).
CLAIM_TABLES: dict[str, tuple[str, ...]] = {
    "fedplt-v2-C07": ("fedplt-v2-TII", "fedplt-v2-TIII", "fedplt-v2-TIV", "fedplt-v2-TV"),
    "fedplt-v2-C16": ("fedplt-v2-TII",), "fedplt-v2-C17": ("fedplt-v2-TIII",), "fedplt-v2-C20": ("fedplt-v2-TIV",),
    "fedplt-v2-C21": ("fedplt-v2-TIV",), "fedplt-v2-C23": ("fedplt-v2-TIV",),
    "fedplt-v2-C24": ("fedplt-v2-TIII", "fedplt-v2-TV"),
}


def table_claim_values(profile: str = "paper") -> dict[str, dict[str, bool | None]]:
    """``{claim: {reading: holds}}`` for :data:`TABLE_CLAIMS` under each of
    :data:`TABLE_READINGS`: the claim's rule on its tables' times under the reading (a cell's
    time under it from :func:`time_readings`). A reading is *decided* for a claim when every
    cell of its tables that we time (:data:`CLAIM_TABLES`) has a time under it, *tried in part*
    (``None``) when only some do (a rule that meets fewer rows would compare fewer algorithms),
    and left out when none does."""
    from fedrepro.chapters.fedplt.comparison import claims

    rules = {"fedplt-v2-C07": claims.claim_v2_c07, "fedplt-v2-C16": claims.claim_v2_c16,
             "fedplt-v2-C17": claims.claim_v2_c17, "fedplt-v2-C20": claims.claim_v2_c20,
             "fedplt-v2-C21": claims.claim_v2_c21, "fedplt-v2-C23": claims.claim_v2_c23,
             "fedplt-v2-C24": claims.claim_v2_c24}
    found, timed = time_readings(profile), _timed_cells(profile)
    out: dict[str, dict[str, bool | None]] = {cid: {} for cid in TABLE_CLAIMS}
    for reading in TABLE_READINGS:
        times: dict[str, dict[tuple[str, str], float]] = {}
        under = set()
        for cid, c in timed.items():
            r = found.get(cid)
            if r is not None and reading in r.values:
                times.setdefault(c["table"], {})[(c["row"], c["column"])] = float(r.values[reading])
                under.add(cid)
        for claim in TABLE_CLAIMS:
            needed = {cid for cid, c in timed.items() if c["table"] in CLAIM_TABLES[claim]}
            if not needed & under:
                continue  # not tried on these tables at all
            out[claim][reading] = bool(rules[claim](times)[0]) if needed <= under else None
    return out


def _timed_cells(profile: str) -> dict[str, Any]:
    """The time cells of v2 Tables II-V that we time (``ours`` and a positive ``K``): the cells
    :func:`time_readings` prices."""
    from fedrepro.chapters.fedplt.comparison import experiments as cmp

    return {cid: c for cid, c in cmp.time_cells(profile).items()
            if c["ours"] is not None and _finite(c["K"]) and float(c["K"]) > 0}


#: The cause a whole-table reading of :data:`TABLE_READINGS` stands for: the decade grid is
#: a tuning grid other than ours (``tuning-range``), the tight constant a setting the paper
#: does not state (``unstated-setting``, the cause of the cells it explains).
READING_CAUSES: dict[str, str] = {"decade grid": "tuning-range", "tight smoothness constant": "unstated-setting"}


def table_claim_cause(claim: str, values: Mapping[str, bool | None],
                      evidence: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(cause, evidence, sentence) of a claim of :data:`TABLE_CLAIMS` whose cells leave its
    cause ``open``, from its values under the whole-table readings (:func:`table_claim_values`):
    the cause of the first reading, in :data:`TABLE_READINGS` order, under which the claim's rule
    holds on every cell of its tables (:data:`READING_CAUSES`), with that reading's stored
    results as evidence; None when no reading makes it hold (the cause stays ``open``)."""
    if claim not in TABLE_CLAIMS:
        raise ValueError(f"claim must be one of {TABLE_CLAIMS}, got {claim!r}")
    for reading in TABLE_READINGS:
        if values.get(reading) is True:
            return (READING_CAUSES[reading], evidence[reading],
                    f"under the stated reading '{reading}', run for every cell of the tables the claim reads, "
                    f"the claim holds")
    return None


def table_claim_evidence(profile: str = "paper") -> dict[str, str]:
    """``{reading of TABLE_READINGS: its stored results}``."""
    from fedrepro.chapters.fedplt.readings.tight_small import TightComparisonConfig
    from fedrepro.experiments.fedplt.readings.decade_grid import DecadeGridConfig
    from fedrepro.experiments.fedplt.readings.tight import TightLargeConfig
    from fedrepro.experiments.fedplt.readings.tight_table_iv import TightTableIVConfig
    from fedrepro.experiments.fedplt.readings.tight_tables_ii_iii import TightTablesIIIIIConfig

    tight = (TightComparisonConfig, TightTableIVConfig, TightTablesIIIIIConfig, TightLargeConfig)
    return {"decade grid": f"fedplt/{DecadeGridConfig.for_profile(profile).result_name()}.json",
            "tight smoothness constant": ", ".join(f"fedplt/{c.for_profile(profile).result_name()}.json" for c in tight)}


def table_claim_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{claim id: Readings}`` of :data:`TABLE_CLAIMS` (:func:`table_claim_values`).

    Under the tight smoothness constant the settings that no point of our grid explains were
    rerun first (``fedplt/reading-v2-tables-ii-iv-tight.json``), then every other setting of
    Table IV (``fedplt/reading-v2-table-iv-tight.json``), then the rest of Tables II and III
    (``fedplt/reading-v2-tables-ii-iii-tight.json``); with Table V's (``fedplt/reading-v2-table-v-tight.json``)
    the reading is decided for every claim here. The decade grid covers Tables II-IV, not
    Table V (C07 and C24 read it: tried in part)."""
    names = table_claim_evidence(profile)
    out: dict[str, Readings] = {}
    for claim, values in table_claim_values(profile).items():
        evidence = ", ".join(names[r] for r in values)
        found = _claim_item(values, evidence, {r: names[r] for r in values})
        if found is not None:
            out[claim] = found
    return out


def finite_ne_values(profile: str = "paper") -> dict[str, bool]:
    """v2 C08/C29 ("an optimal, finite number of epochs") under the one other reading of v2
    Table IX the sweeps hold (``rho`` fixed at the ``N_e = 5`` optimum rather than tuned per
    ``N_e``, ours): the tuning chapter's rule
    (:func:`~fedrepro.chapters.fedplt.tuning.checks.check_interior_optimum`) on its times."""
    from fedrepro.chapters.fedplt.tuning import scorecard, sweeps
    from fedrepro.chapters.fedplt.tuning.checks import check_interior_optimum

    v2 = sweeps.load_v2_sweeps(profile)
    times = scorecard._times_by_tc(v2, "fixed")  # noqa: SLF001 -- the chapter's own times of the sweeps
    return {"rho fixed at the Ne = 5 optimum": bool(check_interior_optimum(times)[0])}


def finite_ne_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{claim id: Readings}`` of v2 C08 and C29 (:func:`finite_ne_values`, paper profile:
    the sweeps of v2 Table IX)."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    if profile != "paper":
        return {}
    evidence = f"fedplt/{sweeps.V2SweepConfig.for_profile(profile).result_name()}.json"
    values = finite_ne_values(profile)
    return {cid: Readings(values=dict(values), evidence=evidence) for cid in ("fedplt-v2-C08", "fedplt-v2-C29")}


def _v1_claims_under(profile: str) -> dict[tuple[float, float], dict[str, bool | None]]:
    """``{reading of the v1 problem: {claim: holds or None}}`` for every claim about v1 Figs. 2
    and 3, from what the store holds under each reading (the main setting left out: it is ours).

    Each claim by the tuning chapter's own check (:mod:`fedrepro.chapters.fedplt.tuning.checks`):

    * Fig. 2's curve (C11, C12's Fed-PLT and ``zeta`` halves, C16 (a)'s Fed-PLT argmin): the grid
      of readings (``fedplt/reading-v1-grid.json``); ``zeta(rho)`` of Lemma 3 from the reading's
      ``lam`` and ``lam_bar``;
    * Fig. 3's curve at ``rho = 0.3`` (C03, C13, C14, C15, C17, v2 C13, C16 (b)): the Fig. 3
      readings (``fedplt/reading-v1-fig3.json``);
    * v1 Table II's Fed-PLT GD and AGD rates (C16 (c)): the tables under the reading;
    * exact PRS's rate against ``rho`` on the Fig. 2 lattice (C12's other reference, C16 (a)):
      ``fedplt/reading-v1-fig2-prs.json`` (:mod:`fedrepro.experiments.fedplt.readings.fig2_prs`,
      stated before it ran); a reading it does not hold leaves C16 (a) unknown and C12 decided
      ``True`` only through ``zeta``.
    """
    from fedrepro.chapters.fedplt.readings import effects
    from fedrepro.chapters.fedplt.readings.epochs import load_readings_epochs
    from fedrepro.chapters.fedplt.readings.experiments import MAIN, load_readings_grid
    from fedrepro.chapters.fedplt.tuning import checks as sc
    from fedrepro.chapters.fedplt.tuning.sweeps import ne_profile
    from fedrepro.core.operators import prs_contraction
    from fedrepro.experiments.fedplt.readings.fig2_prs import load_fig2_prs

    grid, fig3, prs = load_readings_grid(profile), load_readings_epochs(profile), load_fig2_prs(profile)
    prs_of = {(float(w), float(s)): np.asarray(prs["prox_rate"][a], dtype=float)
              for a, (w, s) in enumerate(np.asarray(prs["readings"]))}
    prs_rhos = np.asarray(prs["rhos"], dtype=float)
    epochs = effects.epochs_verdicts(fig3)
    Nes = np.asarray(fig3["Nes"])
    profiles = {(float(w), float(s)): ne_profile(Nes, fig3["rate"][a], float(fig3["prox_rate"][a]))
                | {"rho": float(fig3["rho"])} for a, (w, s) in enumerate(np.asarray(fig3["readings"]))}
    gaps: dict[tuple[float, float], float] = {}
    for reading in effects.readings(profile):
        rates = {c["column"]: c["reading"] for c in effects.table_ii_cells(profile, *reading).values()
                 if c["row"] == "Fed-PLT"}
        if _finite(rates.get("Grad.")) and _finite(rates.get("Acc. grad.")):
            gaps[reading] = abs(float(rates["Grad."]) - float(rates["Acc. grad."]))
    out: dict[tuple[float, float], dict[str, bool | None]] = {}
    rhos = np.asarray(grid["rhos"], dtype=float)
    for a, w in enumerate(grid["weights"]):
        for b, s in enumerate(grid["scales"]):
            key = (float(w), float(s))
            if key == MAIN:
                continue
            rate = np.asarray(grid["rate"][a, b], dtype=float)
            zeta = np.array([prs_contraction(float(r), float(grid["lam"][a, b]), float(grid["lam_bar"][a, b]))
                             for r in rhos])
            argmin, zeta_argmin = float(grid["argmin_rho"][a, b]), float(rhos[int(np.argmin(zeta))])
            u, uz = sc.check_u_shape(rhos, rate), sc.check_u_shape(rhos, zeta)
            near = max(zeta_argmin / argmin, argmin / zeta_argmin) <= 3.0  # C12's factor (check_v1_resembles_prs)
            prox = prs_of.get(key)
            c12, c16a = (False if not u else (True if uz and near else None)), None
            if prox is not None:  # exact PRS on the lattice: C12's either reference, C16 (a) decided
                prox_argmin = float(prs_rhos[int(np.nanargmin(prox))])
                c12 = bool(sc.check_v1_resembles_prs(u, argmin, uz, zeta_argmin, sc.check_u_shape(prs_rhos, prox),
                                                     prox_argmin)[0])
                c16a = max(prox_argmin / argmin, argmin / prox_argmin) <= 3.0  # C16 (a)'s factor (check_v1_dominated_by_prs)
            p = profiles.get(key)
            n = None if p is None else p["within_005_from_Ne"]
            c16b = None if p is None else (n is not None and n <= 5)
            c16c = None if key not in gaps else gaps[key] < 0.05
            v: dict[str, bool | None] = {
                "fedplt-v1-C11": bool(sc.check_v1_rho_optimum(argmin, float(grid["min_rate"][a, b]), float(rate[0]),
                                                              float(rate[-1]))[0]),
                "fedplt-v1-C12": c12,
                "fedplt-v1-C16": _all_of([c16a, c16b, c16c]),
            }
            if p is not None:
                v |= {k: bool(ok) for k, (ok, _) in epochs[key].items()}
                v |= {"fedplt-v1-C14": bool(sc.check_v1_close_to_prs(p)[0]),
                      "fedplt-v1-C17": bool(sc.check_v1_close_for_small_ne(p)[0])}
            out[key] = v
    return out


def figure_values(profile: str = "paper") -> dict[str, dict[str, bool | None]]:
    """``{figure: {reading label: holds, or None}}`` for v1 Figs. 2 and 3: the conjunction of
    every claim about the figure under the reading (:func:`_v1_claims_under`; a claim the store
    does not decide under it counts as unknown). A reading that decides no claim of the figure
    is not tried on it and is left out."""
    from fedrepro.chapters.fedplt.readings.experiments import reading_label
    from fedrepro.chapters.fedplt.tuning import scorecard

    figures = scorecard._figure_claims()  # noqa: SLF001 -- the claims the figure's status reads
    out: dict[str, dict[str, bool | None]] = {fig: {} for fig in figures}
    for reading, claims in _v1_claims_under(profile).items():
        for fig, ids in figures.items():
            known = [claims.get(c) for c in ids]
            if any(k is not None for k in known):
                out[fig][f"'{reading_label(*reading)}'"] = _all_of(known)
    return out


def figure_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{figure id: Readings}`` of v1 Figs. 2 and 3 (:func:`figure_values`).

    Fig. 2 under the printed class (weight 5, s = 1, the reading its miss's cause names) is
    decided since exact PRS's rate against ``rho`` is stored under it
    (``fedplt/reading-v1-fig2-prs.json``: C16 (a)); the other weight-5 readings of the grid
    have no Fig. 3 run and stay tried in part unless one of their decided claims fails."""
    from fedrepro.chapters.fedplt.readings.effects import grid_evidence
    from fedrepro.chapters.fedplt.readings.epochs import ReadingsEpochsConfig
    from fedrepro.experiments.fedplt.readings.fig2_prs import Fig2PRSConfig

    evidence = (f"{grid_evidence(profile)}, fedplt/{ReadingsEpochsConfig.for_profile(profile).result_name()}.json, "
                f"fedplt/{Fig2PRSConfig.for_profile(profile).result_name()}.json")
    out: dict[str, Readings] = {}
    for fig, values in figure_values(profile).items():
        found = _claim_item(values, evidence)
        if found is not None:
            out[fig] = found
    return out


def readings(profile: str = "paper") -> dict[str, Readings]:
    """Every Fed-PLT item's readings (the reading provider of
    :data:`fedrepro.report.scorecard.READING_PROVIDERS`)."""
    return {**time_readings(profile), **v1_rate_readings(profile), **claim_readings(profile),
            **tuning_readings(profile), **table_claim_readings(profile), **finite_ne_readings(profile),
            **figure_readings(profile), **noise_reference_readings(profile)}


def noise_reference_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{cell id: Readings}`` of v1 Table IV under each reference of its error
    (:func:`fedrepro.chapters.fedplt.readings.noise_reference.reference_readings`; paper profile)."""
    from fedrepro.chapters.fedplt.readings.noise_reference import reference_readings

    return reference_readings(profile) if profile == "paper" else {}
