"""The audit of DP-FedPAQ's per-round guarantee: the config, the run and its helpers are in
:mod:`fedrepro.experiments.privacy.audit_dpfedpaq`; their names stay importable from here (the
notebook ``book/privacy-audit.ipynb``, :mod:`.tables`, :mod:`.figures`).
"""

from fedrepro.experiments.privacy.audit_dpfedpaq import (  # noqa: F401
    _CHUNK,
    AUDIT_VERIFY_RULES,
    CANARY_PIXEL,
    FedPAQAuditConfig,
    _direction,
    canary_problems,
    exact_view_epsilon,
    load_fedpaq_audit,
    mechanisms,
    quick,
    roc_curve,
    round_parameters,
    run_fedpaq_audit,
    scores,
)

__all__ = ["AUDIT_VERIFY_RULES", "FedPAQAuditConfig", "CANARY_PIXEL", "mechanisms", "canary_problems", "round_parameters",
           "exact_view_epsilon", "scores", "roc_curve", "run_fedpaq_audit",
           "load_fedpaq_audit"]
