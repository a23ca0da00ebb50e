"""The audit of ALI-DPFL's τ* estimates: the config, the run and its helpers are in
:mod:`fedrepro.experiments.privacy.audit_estimates`; their names stay importable from here (the
notebook ``book/privacy-audit.ipynb``, :mod:`.tables`, :mod:`.figures`).
"""

from fedrepro.experiments.privacy.audit_estimates import (  # noqa: F401
    _CHUNK,
    READINGS,
    EstimatesAuditConfig,
    _subset_sums,
    canary_row,
    features,
    head_block,
    head_columns,
    head_gradients,
    load_estimates_audit,
    quick,
    record_contributions,
    report_score,
    run_estimates_audit,
)

__all__ = ["EstimatesAuditConfig", "READINGS", "features", "head_columns", "head_block", "head_gradients", "canary_row", "record_contributions",
           "report_score", "run_estimates_audit", "load_estimates_audit"]
