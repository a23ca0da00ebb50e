"""The tight one-release audits (exact one-dimensional reductions): the config, the run and its
helpers are in :mod:`fedrepro.experiments.privacy.audit_tight`; their names stay importable from
here (the notebook ``book/privacy-audit.ipynb``, :mod:`.tables`).
"""

from fedrepro.experiments.privacy.audit_tight import (  # noqa: F401
    MECHANISMS,
    TightAuditConfig,
    choose_threshold,
    draw_counts,
    load_tight_audit,
    mechanism_parameters,
    quick,
    run_tight_audit,
)

__all__ = ["MECHANISMS", "TightAuditConfig", "mechanism_parameters", "choose_threshold", "draw_counts",
           "run_tight_audit", "load_tight_audit"]
