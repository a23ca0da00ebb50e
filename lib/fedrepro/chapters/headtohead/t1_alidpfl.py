"""ALI-DPFL on task T1, **not private as run** (:mod:`fedrepro.headtohead.alidpfl`): the same
protocol as the other algorithms (:func:`fedrepro.chapters.headtohead.t1.tune_and_run`: 12
configurations tuned on the validation records, the selected one run on three seeds), at every
ε of the main uplink budget, stored apart from the ranking of the private algorithms because
its estimate reports are released without accounting.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t1_alidpfl`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t1_alidpfl import (  # noqa: F401  (re-exported)
    GRID,
    T1ALIConfig,
    _combine,
    _run_unit,
    _units,
    load_t1_alidpfl,
)

__all__ = ["GRID", "T1ALIConfig", "load_t1_alidpfl"]
