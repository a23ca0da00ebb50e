"""The audit of ALI-DPFL's clients' DP-SGD: the config, the run and its helpers are in
:mod:`fedrepro.experiments.privacy.audit_alidpfl`; their names stay importable from here (the
notebook ``book/privacy-audit.ipynb``, :mod:`.tables`, :mod:`.figures`).
"""

from fedrepro.experiments.privacy.audit_alidpfl import (  # noqa: F401
    SHAPE,
    DPSGDAuditConfig,
    _canary_direction,
    canary_data,
    claimed_epsilon,
    exact_epsilon,
    load_dpsgd_audit,
    quick,
    round_scores,
    run_dpsgd_audit,
)

__all__ = ["DPSGDAuditConfig", "claimed_epsilon", "exact_epsilon", "canary_data", "round_scores", "run_dpsgd_audit",
           "load_dpsgd_audit"]
