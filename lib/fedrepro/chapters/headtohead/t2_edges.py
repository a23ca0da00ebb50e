"""Are T2's tuning grids wide enough? One step beyond every edge the selection sits on.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t2_edges`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t2_edges import (  # noqa: F401  (re-exported)
    PROBED,
    T2EdgesConfig,
    T2EdgesTuningConfig,
    _check_selected,
    _combine,
    _combine_tuning,
    _run_tuning_unit,
    _run_unit,
    _units,
    binding,
    extensions_of,
    grid_of,
    load_t2_edges,
    tuning_units,
)

__all__ = ["PROBED", "T2EdgesTuningConfig", "T2EdgesConfig", "grid_of", "extensions_of", "tuning_units", "binding",
           "load_t2_edges"]
