"""ALI-DPFL on task T2, **not private as run** (:mod:`fedrepro.headtohead.cnn_alidpfl`), through
T2's protocol (:mod:`fedrepro.chapters.headtohead.t2`): its 12 configurations tuned once at the
reference cell on the validation records, the selected one run on three seeds at every ε of
the main uplink budget; stored apart from the ranking of the private algorithms because its
estimate reports are released without accounting.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t2_alidpfl`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t2_alidpfl import (  # noqa: F401  (re-exported)
    _NOTE,
    GRID,
    T2ALIConfig,
    T2ALITuningConfig,
    _combine,
    _combine_tuning,
    _run_tuning_unit,
    _run_unit,
    _tuning_units,
    _units,
    load_t2_alidpfl,
    load_t2_alidpfl_tuning,
)

__all__ = ["GRID", "T2ALITuningConfig", "T2ALIConfig", "load_t2_alidpfl_tuning", "load_t2_alidpfl"]
