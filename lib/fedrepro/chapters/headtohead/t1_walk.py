"""Grids wide enough for T1: from the grid's selection, step beyond the edges until none binds.

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.t1_walk`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from fedrepro.experiments.headtohead.t1_walk import (  # noqa: F401  (re-exported)
    WALKED,
    T1WalkConfig,
    _run_unit,
    _score,
    load_t1_walk,
    walk,
    walk_units,
)

__all__ = ["WALKED", "T1WalkConfig", "walk", "walk_units", "load_t1_walk", "STOPS"]

#: Why a walk stopped.
STOPS: dict[str, str] = {
    "no-edge-binds": "one step beyond every edge the best sits on is no better on validation",
    "inside": "the best sits inside the explored values of every axis, or no step is left",  # range or cap
    "step-limit": "the step limit was reached while an edge still bound",
}
