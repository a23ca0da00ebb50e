"""How sure we are of a miss's cause: its *strength*, computed from the readings that test it.

A miss of the scorecard (:mod:`fedrepro.report.scorecard`) names a cause and the stored results
that show it. Its strength says how far those results go (:data:`STRENGTHS`):

``reproduced``
    a run under a stated reading lands within the item's tolerance of the paper's value: the
    reading is named and its run is in the evidence;
``consistent``
    no single reading lands, but the paper's value lies inside the range that the readings (and
    the points of a tuning grid that bracket it) span; the range is given;
``excluded``
    every reading tried misses and the range they span leaves the paper's value out;
``open``
    nothing is tried yet, or no rule reads the evidence yet, or (a claim or figure) no reading
    tried makes it hold while a reading is tried in part (a miss whose cause is ``open`` is
    ``excluded`` when the readings tried all fail, ``open`` otherwise: :func:`strength_of`).

The rule is one function, :func:`judge`, applied to what a part's *reading provider* reports
for an item (:class:`Readings`: each stated reading's value in the item's unit, the range of
the grid points that bracket it, the stored result holding them). Overshoot is not closing:
:attr:`Strength.signed_distance` is the closest reading's value minus the paper's, with its
sign. Points of a tuning grid make a miss at most ``consistent``: a grid point is not a stated
reading. For a claim (or a figure) a reading's value is whether the claim holds under it:
``reproduced`` when one reading makes it hold, ``excluded`` when none does and every reading
was tried in full. A reading is *tried in part* (:attr:`Readings.partial`) when the store holds
some of the numbers the claim's rule reads under it, not all: it has no value, and while one
is, a claim that no reading makes hold stays ``open`` (the part not run could make it hold).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["STRENGTHS", "Readings", "Strength", "judge", "lands", "strength_of"]

#: The strengths of a miss's cause, strongest first, and what each means.
STRENGTHS: dict[str, str] = {
    "reproduced": "a run under a stated reading lands within the item's tolerance of the paper's value",
    "consistent": "no reading lands, but the paper's value lies inside the range stated readings (and bracketing "
                  "grid points) span",
    "excluded": "every reading tried misses, and the range they span leaves the paper's value out",
    "open": "nothing tried yet (or no rule reads the evidence yet, or no reading makes a claim hold while "
            "one is tried in part only)",
}


@dataclasses.dataclass(frozen=True)
class Readings:
    """What the stated readings give for one item, in the item's unit.

    ``values``: ``{reading name: value}`` (a number, or for a claim whether it holds under the
    reading); ``span``: ``(lo, hi)`` of the grid points that may bracket the paper's value
    (never a reading of its own), or None; ``evidence``: the stored results (comma-separated)
    holding them; ``sources``: where known, ``{reading name: its stored results}`` (what a
    ``reproduced`` item adds to its evidence); ``partial``: the readings tried in part (a claim's
    rule meets numbers not stored under them), which have no value."""

    values: Mapping[str, Any]
    evidence: str
    span: tuple[float, float] | None = None
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)
    partial: tuple[str, ...] = ()

    def source(self, reading: str) -> str:
        """The stored results of one reading (``sources``), or all of ``evidence``."""
        return self.sources.get(reading, self.evidence)

    def __post_init__(self) -> None:
        if not self.evidence:
            raise ValueError("evidence must name the stored results that hold the readings")
        if self.span is not None and not self.span[0] <= self.span[1]:
            raise ValueError(f"span must be (lo, hi) with lo <= hi, got {self.span}")
        if set(self.partial) & set(self.values):
            raise ValueError(f"partial must name readings without a value, got {sorted(set(self.partial) & set(self.values))}")


@dataclasses.dataclass(frozen=True)
class Strength:
    """The strength of one miss's cause: ``strength`` (:data:`STRENGTHS`), the ``reading``
    that lands (``reproduced``) or the readings tried, the ``range`` spanned (item's unit) and
    the closest reading's ``signed_distance`` to the paper's value (ours minus the paper's)."""

    strength: str
    reading: str = ""
    range: tuple[float, float] | None = None
    signed_distance: float | None = None

    def __post_init__(self) -> None:
        if self.strength not in STRENGTHS:
            raise ValueError(f"strength must be one of {sorted(STRENGTHS)}, got {self.strength!r}")


def lands(paper_value: float, value: float, tolerance: Mapping[str, Any]) -> bool:
    """Whether ``value`` lies within ``tolerance`` (``{"rel": r}``, ``{"abs": a}`` or
    ``{"exact": True}``) of ``paper_value``: the rule of
    :func:`fedrepro.report.scorecard.compare` (which imports this module, so the rule is
    restated here; a test keeps the two equal)."""
    diff = abs(float(value) - float(paper_value))
    if "rel" in tolerance:
        return diff <= float(tolerance["rel"]) * abs(float(paper_value))
    if "abs" in tolerance:
        return diff <= float(tolerance["abs"])
    if tolerance.get("exact"):
        return float(value) == float(paper_value)
    raise ValueError(f"tolerance must have 'rel', 'abs' or 'exact', got {dict(tolerance)}")


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))


def judge(paper_value: Any, tolerance: Any, readings: Readings | None, ours: Any = None) -> Strength:
    """The strength of a miss from its ``readings`` (None: ``open``).

    ``ours``, the value of the main setting (itself a stated reading, and a miss), joins the
    numbers that span the range: the paper's value between it and another reading's is
    ``consistent`` (a reading between the two would land), never ``reproduced``.

    Numbers: a reading within ``tolerance`` of ``paper_value`` is ``reproduced`` (the closest
    such); else the paper's value inside the range of the readings and ``span`` is
    ``consistent``; else ``excluded``. Booleans (a claim under each reading): one that holds is
    ``reproduced``, none ``excluded``, or ``open`` while a reading is tried in part
    (``readings.partial``; the readings are then named, those tried in part marked). Readings
    that give no number (not reached) count as tried but span nothing."""
    if readings is None or (not readings.values and readings.span is None and not readings.partial):
        return Strength("open")
    values = dict(readings.values)
    names = ", ".join(values)
    if not values and readings.span is None:  # only readings tried in part
        return Strength("open", ", ".join(f"{p} (in part)" for p in readings.partial))
    if values and all(isinstance(v, bool) for v in values.values()):
        holds = [name for name, v in values.items() if v]
        if holds:
            return Strength("reproduced", holds[0])
        if readings.partial:
            return Strength("open", ", ".join([*values, *(f"{p} (in part)" for p in readings.partial)]))
        return Strength("excluded", names)
    if not isinstance(paper_value, (int, float)) or isinstance(paper_value, bool):
        raise ValueError(f"paper_value must be a number to judge numeric readings, got {paper_value!r}")
    paper = float(paper_value)
    numbers = {name: float(v) for name, v in values.items() if _finite(v)}
    landing = {name: v for name, v in numbers.items() if lands(paper, v, tolerance)}
    closest = min(numbers, key=lambda n: abs(numbers[n] - paper)) if numbers else None
    distance = None if closest is None else numbers[closest] - paper
    points = list(numbers.values()) + (list(readings.span) if readings.span else [])
    points += [float(ours)] if _finite(ours) and (numbers or readings.span) else []
    span = (min(points), max(points)) if points else None
    if landing:
        best = min(landing, key=lambda n: abs(landing[n] - paper))
        return Strength("reproduced", best, span, landing[best] - paper)
    slack = 1e-9 * max(1.0, abs(paper))  # a paper value decoded by a division keeps round-off
    if span is not None and span[0] - slack <= paper <= span[1] + slack:
        return Strength("consistent", names, span, distance)
    return Strength("excluded", names, span, distance)


def strength_of(cause: str, paper_value: Any, tolerance: Any, readings: Readings | None,
                ours: Any = None) -> Strength:
    """The strength of a miss with ``cause``: :func:`judge` of its readings, except that a
    cause not understood (``open``) is never ``reproduced`` or ``consistent``: its readings
    either all fail (``excluded``, with the range tried) or it stays ``open``."""
    found = judge(paper_value, tolerance, readings, ours=ours)
    if cause == "open" and found.strength != "excluded":
        return Strength("open")
    return found
