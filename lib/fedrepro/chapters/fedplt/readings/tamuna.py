"""v2 Tables II and IV's TAMUNA (GD, convex, every agent and cohorts of ``N/2``) again under two
readings of the baseline that the paper leaves open (:mod:`fedrepro.fedplt.baselines.tamuna_readings`):

* ``s2``: TAMUNA's own uplink compression, at its strongest (``s = 2`` ones per coordinate
  across the cohort; the control-variate step at the upper end of its range);
* ``flower``: compression off, the control-variate update postponed to the agent's next
  participation as the public baseline of two of TAMUNA's authors orders it (with every agent
  in every round this is the comparison chapter's TAMUNA itself, so only the cohort setting
  is run).

Everything else is the protocol of
:class:`fedrepro.chapters.fedplt.comparison.experiments.ComparisonConfig`, unchanged: the same
data, the same ``gamma`` grid (TAMUNA's), caps, trials and random streams. A reading whose runs
reach the tolerance at no grid point within the last cap is stored as such (``reached`` false,
every grid point's mean ``K*`` infinite), with the share of the evaluation runs (at the grid's
middle step) that diverged.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.tamuna` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.readings.tamuna import (  # noqa: F401
    READINGS,
    UNITS,
    TamunaReadingsConfig,
    _registered,
    _run_unit,
    load_tamuna_readings,
)

__all__ = ["READINGS", "UNITS", "TamunaReadingsConfig", "load_tamuna_readings"]


