"""The cached experiments of the chapter "Privacy accounting": the configs and runs are in
:mod:`fedrepro.experiments.privacy.accounting`; their names stay importable from here (the
notebook, :mod:`.tables`, :mod:`.figures`, :mod:`.scorecard`).
"""

from fedrepro.experiments.privacy.accounting import (  # noqa: F401
    _RUNNERS,
    ALIDPFL_EPSILONS,
    CalibrationConfig,
    EpsilonCurveConfig,
    IterationCountsConfig,
    Lemma5CheckConfig,
    Proposition4Config,
    _orders,
    load,
    pld_epsilon,
    run_calibration,
    run_epsilon_curve,
    run_iteration_counts,
    run_lemma5_check,
    run_proposition4,
)

__all__ = [
    "CalibrationConfig",
    "EpsilonCurveConfig",
    "IterationCountsConfig",
    "Lemma5CheckConfig",
    "Proposition4Config",
    "load",
    "run_calibration",
    "run_epsilon_curve",
    "run_iteration_counts",
    "run_lemma5_check",
    "run_proposition4",
]
