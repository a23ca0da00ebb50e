"""Every training run of the chapter "DP-FedPAQ experiments" (Figs. 2–4, spec §6.3).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.runs`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.runs import (  # noqa: F401
    _REGISTRATION_ORDER,
    GROUPS,
    PROFILE_SETTINGS,
    Float32RunsConfig,
    RunsConfig,
    RunSpec,
    _add,
    _curve_rounds,
    _full_registry,
    _one_blas_thread,
    _run_unit,
    combine,
    load_runs,
    missing_groups,
    registry,
    run_unit,
    spec,
)

__all__ = ["GROUPS", "PROFILE_SETTINGS", "RunSpec", "RunsConfig", "load_runs", "missing_groups", "registry", "run_unit", "spec"]
