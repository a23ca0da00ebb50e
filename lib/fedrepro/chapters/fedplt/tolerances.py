"""How ``make verify`` compares the Fed-PLT chapters' recomputed results with the stored ones
where the default (1e-9 relative) is too strict, with the measured reason.

The tolerances are the configs' ``verify_rtol``: they live in
:mod:`fedrepro.experiments.fedplt.tolerances` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.tolerances import (  # noqa: F401
    RATE_FIT_NOTE,
    RATE_FIT_RTOL,
)

__all__ = ["RATE_FIT_NOTE", "RATE_FIT_RTOL"]

