"""Stored experiment :class:`ChecksConfig`: the check families of spec §8 other than Theorem 1
(quantizer, device sampling, chain (15), Gaussian profile, per-round and whole-training ε,
(28)–(30), recursion (32)→(34), Lemmas 1–3 and (22) by Monte Carlo, sensitivity and clipping
on MNIST). Every unit returns ``rows`` (one per check instance) and its tables.

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.theory_checks`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.theory_checks import (  # noqa: F401
    _CHECK_FUNCS,
    _TABLE_EPS,
    _TABLE_GAMMA,
    CHECK_UNITS,
    ChecksConfig,
    _mnist,
    _run_check_unit,
    _unit_chain,
    _unit_clipping,
    _unit_gaussian,
    _unit_inequalities,
    _unit_lemmas,
    _unit_per_round,
    _unit_quantizer,
    _unit_recursion,
    _unit_sampling,
    _unit_sensitivity,
    _unit_training,
    load_checks,
)

__all__ = ["CHECK_UNITS", "ChecksConfig", "load_checks"]
