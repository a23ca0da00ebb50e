"""The base of the readings that rerun v2 Tables II-IV on the comparison chapter's protocol
(:mod:`~fedrepro.chapters.fedplt.readings.tight_small`,
:mod:`~fedrepro.chapters.fedplt.readings.tamuna`,
:mod:`~fedrepro.chapters.fedplt.readings.grid_range`).

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.comparison_reading` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.readings.comparison_reading import (  # noqa: F401
    _R,
    ComparisonReading,
)

__all__ = ["ComparisonReading"]


