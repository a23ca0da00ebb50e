"""Scorecard outcomes of the comparison chapter with the causes that whole-table readings give.

Provider string: ``"fedrepro.chapters.fedplt.comparison.claim_causes:outcomes"``. It returns the
outcomes of :func:`fedrepro.chapters.fedplt.comparison.scorecard.outcomes`, except that a
comparison claim whose cells leave its cause ``open`` takes the cause of a whole-table reading
under which its rule holds (:func:`fedrepro.chapters.fedplt.strength.table_claim_cause`: the
decade grid stands for ``tuning-range``, the tight smoothness constant for ``unstated-setting``).
It is a module of its own because the reading provider (:mod:`fedrepro.chapters.fedplt.strength`)
reads the comparison's scorecard helpers: the comparison's scorecard cannot import it back.
"""

from __future__ import annotations

import dataclasses

from fedrepro.report.scorecard import Outcome

__all__ = ["outcomes", "with_table_reading_causes"]


def with_table_reading_causes(claims: dict[str, Outcome], profile: str = "paper") -> dict[str, Outcome]:
    """``claims`` with the cause of a whole-table reading given to each claim of
    :data:`~fedrepro.chapters.fedplt.strength.TABLE_CLAIMS` that misses with the cause ``open``
    and holds under one of the readings (a new dict; the others unchanged)."""
    from fedrepro.chapters.fedplt import strength

    values, evidence = strength.table_claim_values(profile), strength.table_claim_evidence(profile)
    out = dict(claims)
    for cid in strength.TABLE_CLAIMS:
        o = out.get(cid)
        if o is None or o.status != "miss" or o.cause not in (None, "open"):
            continue
        found = strength.table_claim_cause(cid, values[cid], evidence)
        if found is not None:
            cause, ev, why = found
            out[cid] = dataclasses.replace(o, cause=cause, evidence=ev, reason=f"{o.reason}; {why}")
    return out


def outcomes() -> dict[str, Outcome]:
    """The comparison chapter's outcomes (paper profile) with :func:`with_table_reading_causes`."""
    from fedrepro.chapters.fedplt.comparison.scorecard import outcomes as comparison_outcomes

    return with_table_reading_causes(comparison_outcomes())
