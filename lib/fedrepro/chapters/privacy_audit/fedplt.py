"""The audit of Fed-PLT's privacy guarantee: the config, the run and its helpers are in
:mod:`fedrepro.experiments.privacy.audit_fedplt`; their names stay importable from here (the
notebook ``book/privacy-audit.ipynb``, :mod:`.tables`, :mod:`.figures`).
"""

from fedrepro.experiments.privacy.audit_fedplt import (  # noqa: F401
    VIEWS,
    FedPLTAuditConfig,
    IsotropicQuadratic,
    _exact_mu,
    lda_direction,
    load_fedplt_audit,
    quick,
    run_fedplt_audit,
    simulate_views,
)

__all__ = ["FedPLTAuditConfig", "VIEWS", "IsotropicQuadratic", "simulate_views", "lda_direction",
           "run_fedplt_audit", "load_fedplt_audit"]
