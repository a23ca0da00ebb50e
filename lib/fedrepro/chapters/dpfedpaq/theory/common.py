"""Shared pieces of the chapter's experiments: the row format of a check instance and the
synthetic problem of the Monte Carlo checks (spec §8 items 9–11).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.theory_common`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.theory_common import (  # noqa: F401
    SYNTHETIC_E,
    SYNTHETIC_S,
    lemma_setup,
    row,
)

__all__ = ["SYNTHETIC_E", "SYNTHETIC_S", "lemma_setup", "row"]
