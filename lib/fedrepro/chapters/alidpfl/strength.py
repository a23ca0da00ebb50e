"""The readings that decide the strength of ALI-DPFL's misses (:mod:`fedrepro.report.strength`).

:func:`table_readings` gives every Fashion-MNIST cell of Tables II-IV the values of the
stated readings stored today:

* the authors'-code reading (``q = 0.05``, divisor 64: ``alidpfl/tables-authors_code-seed0.json``),
  a run of the very cell, named as a reading;
* the span of the reading study (``alidpfl/reading-seeds.json``: each reading of the setting the
  paper leaves open, at the reference setting τ = 1, ε = 1.55, mean
  of the seeds): its shifts from the library's reading, added to the cell's value. The shift
  measured at one setting is taken to move every cell alike: an approximation that gives the
  range the readings span, never a reading of the cell (so at most ``consistent``).

* the stated search of what it would take (:mod:`fedrepro.chapters.alidpfl.what_it_takes`,
  ``alidpfl/what-it-takes-*.json``): every rung that keeps the accounting valid. At the
  reference cell (τ = 1, ε = 1.55, R_s = 2R_c) its runs are readings of the cell itself; at
  every other cell each rung's gain over the reader's recipe there is added to the cell's
  value and widens the range (never a reading of the cell: at most ``consistent``).

:func:`claim_readings` gives claim C01 (the τ* of the bound does as well as the best fixed τ in
every R_s < R_c cell) the stated readings of seed 0 stored today, each decided by the
scorecard's own rule (:func:`fedrepro.chapters.alidpfl.claims.tables_outcomes`): the authors'-code
reading and the public code's closed-form τ* (``alidpfl/closed-form-tau-seed0.json``). The other
stored seeds of the library's reading are seeds, not readings: they are left out.

The ALI-DPFL scorecard gives each table miss its cause from the same judgement
(:func:`fedrepro.chapters.alidpfl.scorecard.table_outcomes`): ``unstated-setting`` where the
readings reach or bracket the paper, ``model-or-data-differs`` where they all miss it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.report.strength import Readings

__all__ = ["claim_readings", "claim_values", "readings", "study_shifts", "table_readings"]


def study_shifts(profile: str = "paper") -> tuple[float, float]:
    """(smallest, largest) shift in accuracy points that the readings of the reading study
    (the readings of the setting the paper leaves open) move the
    library's reading by at the reference setting, mean over the stored seeds."""
    from fedrepro.chapters.alidpfl import settings

    seeds = settings.load_seeds(profile)

    def mean(reading: str) -> float:
        return float(np.mean([100 * float(seeds[k][reading]["eval_accuracy"][-1]) for k in seeds]))

    spec = mean("spec")
    # the readings of the setting the paper leaves open, as the cause's sentence names them
    # (fedrepro.chapters.alidpfl.scorecard.table_cause): not the library's own, not the
    # non-private or noise-free ceilings, not the public code's iteration count
    moved = [mean(r) - spec for r in settings.CHAPTER_READINGS
             if r not in ("spec", "non-private", "no-noise", "public-code")]
    return min(moved), max(moved)


def table_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{cell id: Readings}`` of every Fashion-MNIST cell of Tables II-IV we run."""
    from fedrepro.chapters.alidpfl import experiments, tables
    from fedrepro.chapters.alidpfl import what_it_takes as wit
    from fedrepro.report import paper

    result = experiments.load_tables(profile, 0)
    code = tables.stored_tables(profile, 0, "authors_code")
    lo, hi = study_shifts(profile)
    recipe, rungs = wit.reference_readings(wit.load_chapter(profile))
    valid = {name: float(acc) for name, acc, ok in rungs if ok}
    gains = [0.0] + [acc - recipe for acc in valid.values()]
    search = ", ".join(wit.evidence_paths(profile))
    out: dict[str, Readings] = {}
    for name, tid in tables.TABLES.items():
        for cell in paper.load_table(tid):
            condition, dataset, eps = tables.parse_column(cell.column)
            if dataset != "F-MNIST":
                continue
            key = tables.cell_key(name, condition, eps)
            row: dict[str, Any] = result["table"].get(key, {})
            if cell.row not in row:
                continue
            ours = float(row[cell.row])
            values: dict[str, float] = {}
            evidence = ["alidpfl/reading-seeds.json", "alidpfl/reading-non-private.json"]
            code_row = {} if code is None else code["table"].get(key, {})
            if cell.row in code_row:
                values["authors' code (q = 0.05, divisor 64)"] = float(code_row[cell.row])
                evidence.append("alidpfl/tables-authors_code-seed0.json")
            sources = {reading: "alidpfl/tables-authors_code-seed0.json" for reading in values}
            if cell.id == wit.REFERENCE_CELL:
                for rung, acc in valid.items():
                    values[f"what it would take, {rung}"] = acc
                    sources[f"what it would take, {rung}"] = search
            evidence.append(search)
            span = (ours + min(lo, min(gains)), ours + max(hi, max(gains)))
            out[cell.id] = Readings(values=values, evidence=", ".join(evidence), span=span, sources=sources)
    return out


#: The claims :func:`claim_readings` reads.
CLAIMS: tuple[str, ...] = ("alidpfl-main-C01",)


def claim_values(profile: str = "paper") -> dict[str, dict[str, tuple[bool, str]]]:
    """``{claim: {reading: (holds, stored result)}}`` for :data:`CLAIMS` on seed 0, by the
    scorecard's rule on the seed's tables under each reading stored: the authors'-code tables,
    and the library's tables with ALI-DPFL's entries of every R_s < R_c cell taken from the
    closed-form runs (:func:`fedrepro.chapters.alidpfl.closed_form_effects.verdicts`)."""
    from fedrepro.chapters.alidpfl import claims, closed_form, closed_form_effects, tables

    out: dict[str, dict[str, tuple[bool, str]]] = {cid: {} for cid in CLAIMS}
    code = tables.stored_tables(profile, 0, "authors_code")
    if code is not None:
        decided = claims.tables_outcomes(code, profile)
        for cid in CLAIMS:
            out[cid]["authors' code (q = 0.05, divisor 64)"] = (decided[cid].status == "match",
                                                                "alidpfl/tables-authors_code-seed0.json")
    closed = closed_form_effects.verdicts(profile) or {}
    if 0 in closed:
        name = f"alidpfl/{closed_form.ClosedFormConfig(profile=profile, seed=0).result_name()}.json"
        for cid in CLAIMS:
            out[cid]["the public code's closed-form tau*"] = (closed[0][cid].status == "match", name)
    return out


def claim_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{claim id: Readings}`` from :func:`claim_values`."""
    out: dict[str, Readings] = {}
    for cid, found in claim_values(profile).items():
        if found:
            sources = {name: stored for name, (_, stored) in found.items()}
            out[cid] = Readings(values={name: ok for name, (ok, _) in found.items()},
                                evidence=", ".join(dict.fromkeys(sources.values())), sources=sources)
    return out


def readings(profile: str = "paper") -> dict[str, Readings]:
    """Every ALI-DPFL item's readings (the reading provider of
    :data:`fedrepro.report.scorecard.READING_PROVIDERS`)."""
    return {**table_readings(profile), **claim_readings(profile)}
