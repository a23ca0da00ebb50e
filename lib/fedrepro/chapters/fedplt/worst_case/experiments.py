"""Experiments of the chapter "Fed-PLT: exact worst-case rates".

The exact worst-case contraction of Fed-PLT rounds over every ``f_i`` in
``F_{lam, lam_bar}`` (:mod:`fedrepro.fedplt.checks.pep`, performance estimation with PEPit
and Clarabel) for the moduli of the v2 logistic problem (``lam = eps = 0.5`` and the
experiments' loose ``lam_bar``, data seed 0), against the rate bounds of Propositions 1
and 3 (``||S||``, printed and corrected) and against contractions measured on instances
the library generates.

* :class:`GridConfig`: the exact one-round rate and the ``K``-round rate
  ``(worst ||T^K s - s_bar|| / ||s - s_bar||)^(1/K)`` on a ``rho`` grid for every ``N_e``
  and local solver (GD at the default step, AGD), the bounds ``||S||`` and ``rho(S)``, and
  the largest exact one-round contraction ``||M||_2`` over random quadratic instances; exact
  PRS (the exact local prox) against ``zeta`` of Lemma 3; the worst-case-optimal ``rho`` per
  ``N_e`` (bounded scalar search on ``log10 rho``).
* :class:`ValidationConfig`: the PEP value against the contraction measured on >= 50
  random quadratic and logistic instances (random moduli, ``rho``, ``N_e``, step, ``N``);
  the worst case PEPit returns fed back to the library's implementation of Algorithm 1;
  ``N = 1, 2, 3`` agents; the PEP at the theory chapter's simulated ``(rho, N_e)`` points.

Each config is a frozen :class:`~fedrepro.core.records.ExperimentConfig` whose result is
stored through :func:`fedrepro.core.cache.run_units` (one unit per solver and ``N_e``,
resumable, parallel with ``FEDREPRO_WORKERS``). Summaries, tables and figures are in
:mod:`fedrepro.chapters.fedplt.worst_case.render` (so that editing them leaves the stored
results fresh).

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.worst_case` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.worst_case import (  # noqa: F401
    SDP_NOTE,
    VALIDATION_UNITS,
    GridConfig,
    ValidationConfig,
    _bounds,
    _log_grid,
    _random_setting,
    _run_grid_unit,
    _run_validation_unit,
    grid_units,
    load_grid,
    load_validation,
    v2_moduli,
)

__all__ = ["GridConfig", "ValidationConfig", "VALIDATION_UNITS", "SDP_NOTE", "load_grid", "load_validation",
           "v2_moduli", "grid_units"]


