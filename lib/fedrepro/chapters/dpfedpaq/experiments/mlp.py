"""Beyond softmax regression: the hyperparameter sweeps of Figs. 2–4 with a small network (C48).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.mlp`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.mlp import (  # noqa: F401
    EFFECTS,
    PROFILE_SETTINGS,
    MLPConfig,
    MLPRun,
    _eval_rounds,
    combine,
    load_mlp_runs,
    mlp_spec,
    registry,
    run_unit,
    sweep,
)

__all__ = ["EFFECTS", "MLPConfig", "MLPRun", "PROFILE_SETTINGS", "combine", "load_mlp_runs", "mlp_spec", "registry", "run_unit", "sweep"]
