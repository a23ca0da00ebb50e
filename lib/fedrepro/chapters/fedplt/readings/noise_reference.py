"""v1 Table IV's asymptotic error against other reference points (the reading of
:mod:`fedrepro.experiments.fedplt.readings.noise_reference`, stated before it ran): each
reference's errors in the table's unit, and the rule that gives the floor rows' misses a cause.

Rule (:func:`reference_cause`): a reference reading explains v1 Table IV when, measured
against it, *every* row of the table lands within the table's tolerance of the paper (the
floor rows our own error misses and the rows it already matches), so that no cell is landed by
a reading the rest of the table refutes; the misses then take the cause ``unstated-setting``
(the paper does not say against which point its error is measured), with the reading's stored
result as evidence. A reading that lands only some rows explains nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.experiments.fedplt.readings.noise_reference import (  # noqa: F401
    REFERENCES,
    NoiseReferenceConfig,
    load_noise_reference,
)
from fedrepro.report.strength import Readings, lands

__all__ = ["REFERENCES", "NoiseReferenceConfig", "load_noise_reference", "reference_cause", "reference_readings",
           "reference_values"]

TABLE = "fedplt-v1-TIV"


def _label(name: str) -> str:
    return f"error against the {name}"


def reference_values(profile: str = "paper") -> dict[str, dict[str, float]]:
    """``{reference reading label: {cell id: error}}`` of v1 Table IV (rows the run holds)."""
    from fedrepro.report.paper import load_table

    r = load_noise_reference(profile)
    index = {float(v): i for i, v in enumerate(np.asarray(r["values"]))}
    out: dict[str, dict[str, float]] = {}
    for name in REFERENCES:
        errors = np.asarray(r["error"][name], dtype=float)
        out[_label(name)] = {c.id: float(errors[index[float(c.row)]]) for c in load_table(TABLE)
                             if float(c.row) in index}
    return out


def _evidence(profile: str) -> str:
    return f"fedplt/{NoiseReferenceConfig.for_profile(profile).result_name()}.json"


def reference_cause(profile: str = "paper") -> tuple[str, str, str] | None:
    """(cause, evidence, sentence) for the misses of v1 Table IV by the module's rule, or None
    when no reference reading lands every row of the table."""
    from fedrepro.report.paper import load_table, tolerance_for

    paper = {c.id: c.value for c in load_table(TABLE)}
    tol = tolerance_for(TABLE)
    for label, values in reference_values(profile).items():
        if set(values) == set(paper) and all(lands(paper[cid], v, tol) for cid, v in values.items()):
            ratios = [values[cid] / paper[cid] for cid in paper]
            return ("unstated-setting", _evidence(profile),
                    f"with the {label} (a reading stated before it ran) every row of the table lands within the "
                    f"tolerance (ours/paper {min(ratios):.3g} to {max(ratios):.3g}): the paper does not say against "
                    f"which point its error is measured")
    return None


def reference_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{cell id: Readings}`` of v1 Table IV's cells under each reference reading (the
    strength of a miss is judged from them; a cell that matches is never judged)."""
    found: dict[str, dict[str, Any]] = {}
    for label, values in reference_values(profile).items():
        for cid, v in values.items():
            found.setdefault(cid, {})[label] = v
    evidence = _evidence(profile)
    return {cid: Readings(values=v, evidence=evidence, sources=dict.fromkeys(v, evidence)) for cid, v in found.items()}
