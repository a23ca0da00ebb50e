"""Task T1 of the head-to-head part: every algorithm, tuned the same way, at every (ε, uplink
budget) cell, then run on three seeds and scored on the test set.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t1`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t1 import (  # noqa: F401  (re-exported)
    GRIDS,
    T1Config,
    _combine,
    _config_dict,
    _grid,
    _parse,
    _run_unit,
    _units,
    cells,
    grid_of,
    load_t1,
    records,
    tune_and_run,
    unit_name,
)

__all__ = ["GRIDS", "LABELS", "T1Config", "cells", "unit_name", "grid_of", "tune_and_run", "records",
           "load_t1"]

#: What the page calls each algorithm.
LABELS: dict[str, str] = {
    "fedavg": "FedAvg (non-private ceiling)",
    "dp-fedsgd": "DP-FedSGD (τ = 1)",
    "dpfl": "DPFL (fixed τ)",
    "fedpaq": "private FedPAQ (float32)",
    "fedpaq-q": "private FedPAQ (quantized)",
    "fed-plt": "Fed-PLT (private)",
}
