"""Figs. 4 (c) and (d) of DP-FedPAQ again at the other ε of Fig. 4 (a) and with the authors'
code's local training, and their claims decided on those runs (readings of what the paper does
not state, never the chapter's main setting).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.fig4_epsilon`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.fig4_epsilon import (  # noqa: F401
    CHAPTER_EPSILON,
    READINGS,
    Fig4EpsilonRunsConfig,
    _combine,
    _train,
    grid_runs,
    load_fig4_epsilon_runs,
    readings,
)

__all__ = ["CHAPTER_EPSILON", "READINGS", "Fig4EpsilonRunsConfig", "readings", "grid_runs", "load_fig4_epsilon_runs"]
