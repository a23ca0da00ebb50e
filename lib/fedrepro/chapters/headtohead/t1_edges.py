"""Are T1's tuning grids wide enough? One step beyond every edge the selection sits on.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t1_edges`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t1_edges import (  # noqa: F401  (re-exported)
    _INTEGER,
    _PROBABILITY,
    T1EdgesConfig,
    _run_unit,
    axes,
    beyond,
    extensions,
    load_t1_edges,
    units,
)

__all__ = ["T1EdgesConfig", "axes", "beyond", "extensions", "units", "load_t1_edges"]
