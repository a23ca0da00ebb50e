"""Task T2 of the head-to-head part: the ALI-DPFL CNN on Fashion-MNIST, 10 clients with
label shards (:mod:`fedrepro.headtohead.t2_task`), every algorithm of T1 on it
(:mod:`fedrepro.headtohead.cnn_algorithms`).

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t2`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t2 import (  # noqa: F401  (re-exported)
    GRIDS,
    T2Config,
    T2TuningConfig,
    _check_common,
    _combine,
    _combine_tuning,
    _config_dict,
    _grid,
    _load_tuning,
    _parse,
    _problems,
    _run_tuning_unit,
    _run_unit,
    _tuning_units,
    _units,
    capped_budget,
    cells,
    compute,
    load_t2,
    load_t2_tuning,
    records,
    selected,
    unit_name,
    with_selection,
)

__all__ = ["GRIDS", "LABELS", "T2Config", "T2TuningConfig", "cells", "capped_budget", "selected", "records",
           "load_t2_tuning", "with_selection", "compute", "load_t2"]

#: What the page calls each algorithm.
LABELS: dict[str, str] = {
    "fedavg": "FedAvg (non-private ceiling)",
    "dp-fedsgd": "DP-FedSGD (τ = 1)",
    "dpfl": "DPFL (fixed τ)",
    "fedpaq": "private FedPAQ (float32)",
    "fedpaq-q": "private FedPAQ (quantized)",
    "fed-plt": "Fed-PLT (private, subsampled)",
}
