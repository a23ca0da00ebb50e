"""Readings of the Fed-PLT v1 problem (v1 §VII) that the paper leaves open, and what each one
does to the v1 numbers we miss: Table II (rates of every algorithm), Table III (rates under
partial participation) and Fig. 2 (rate against ``rho``; optimum "``rho`` ≈ 0.3").

v1 §VII prints the local cost ``f_i(x) = (1/m) sum_h log(1 + exp(-b_h a_h x)) + eps/(2N) ||x||^2``
with ``eps = 5`` and, in the same paragraph, the class ``f_i in F_{eps, q_i/4 + eps}``: the
printed cost is ``eps/N = 0.5``-strongly convex, the class says 5. The data are "randomly
generated" with no generator stated. Two readings, each a parameter of
:func:`fedrepro.problems.logistic.logistic_v1`:

* the **regulariser weight** on every ``f_i``: ``eps/N = 0.5`` (the cost as printed; the
  library's main setting) or ``eps = 5`` (the class as printed: "an ``eps = 5`` regulariser
  on every ``f_i``");
* the **feature scale** ``s``: features ``N(0, s^2 I)`` (main setting ``s = 1``). Larger ``s``
  raises the smoothness constant (``q_i/4`` grows as ``s^2``) and slows every method.

Experiments (frozen :class:`~fedrepro.core.cache.ExperimentConfig`; ``load_*`` returns the
stored result, computing it when missing or stale):

* :class:`ReadingsGridConfig`: Fed-PLT (GD, default step, ``N_e = 10``, full participation,
  ``x_0 = z_0 = 0``) on the Fig. 2 lattice of ``rho`` for every (weight, scale) of the grid:
  the rate curve, its minimum and its argmin — the two numbers v1 states about Fed-PLT on
  this problem (the rate of Table II, the optimum of Fig. 2).
* :class:`ReadingTablesConfig`: v1 Table II (every algorithm, the protocol of
  :class:`fedrepro.chapters.fedplt.comparison.experiments.V1RatesConfig`) and Table III
  (the protocol of :class:`fedrepro.chapters.fedplt.participation_privacy.participation.V1RatesConfig`)
  under one reading, one resumable unit per setting.

What each reading does to the cells: :mod:`.effects`. No reading is adopted as the main
setting.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.experiments` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.readings.experiments import (  # noqa: F401
    MAIN,
    PRINTED_CLASS,
    ReadingsGridConfig,
    ReadingTablesConfig,
    _fig2_rhos,
    _run_grid,
    _run_tables_unit,
    _table_ii_unit,
    _table_iii_unit,
    load_reading_tables,
    load_readings_grid,
    reading_problem,
)

__all__ = [
    "MAIN", "PRINTED_CLASS", "ReadingsGridConfig", "ReadingTablesConfig", "reading_problem",
    "load_readings_grid", "load_reading_tables", "reading_label",
]


def reading_label(weight: float, scale: float) -> str:
    """Short name of a reading, e.g. ``"weight 5, s = 1"``."""
    return f"weight {weight:g}, s = {scale:g}"


