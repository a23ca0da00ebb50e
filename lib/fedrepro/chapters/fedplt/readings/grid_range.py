"""Where the paper's iteration counts of v2 Tables II-IV fall among the counts of our tuning
grids, every grid point run to the last iteration cap.

The comparison chapter tunes each setting with increasing caps
(:func:`fedrepro.chapters.fedplt.comparison.experiments.tune`): it stops at the first cap at
which some grid point reaches the tolerance, which finds the best point, but leaves every
point that needs more iterations than that cap (usually 50) without a count. The counts of
the tuning therefore span only the grid's fast end. Whether the paper's ``K*`` is one our
grid produces (a coarser or more cautious tuning than ours: the scorecard's
``tuning-range``) needs the counts of *every* point. :class:`GridRangeConfig` runs every
point of every setting of Tables II-IV to the last cap (``caps[-1]``), with the comparison's
problem, grid, trials and random streams (``tune_seed``: the counts of the points the
tuning reached are the tuning's own, which a test checks). What the counts say about the
paper's is read by :mod:`fedrepro.chapters.fedplt.readings.grid_range_report`.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.grid_range` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.readings.grid_range import (  # noqa: F401
    GridRangeConfig,
    _run_unit,
    load_grid_range,
)

__all__ = ["GridRangeConfig", "load_grid_range"]


