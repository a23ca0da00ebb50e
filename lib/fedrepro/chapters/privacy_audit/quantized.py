"""The audit of DP-FedPAQ's quantized round with an attack that knows the quantizer: the config,
the run and its helpers are in :mod:`fedrepro.experiments.privacy.audit_quantized`; their names
stay importable from here (the notebook ``book/privacy-audit.ipynb``, :mod:`.tables`).
"""

from fedrepro.experiments.privacy.audit_quantized import (  # noqa: F401
    ATTACKS,
    QuantizedAuditConfig,
    level_probability,
    likelihood_scores,
    load_quantized_audit,
    quick,
    run_quantized_audit,
    scores,
)

__all__ = ["ATTACKS", "QuantizedAuditConfig", "level_probability", "likelihood_scores", "scores",
           "run_quantized_audit", "load_quantized_audit"]
