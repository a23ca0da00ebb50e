"""Tolerances shared by the Fed-PLT runs (the ``verify_rtol`` of the rate-fitting configs) and
the views that quote them; :mod:`fedrepro.chapters.fedplt.tolerances` re-exports them.
"""

from __future__ import annotations

#: Empirical rates are least-squares fits of log errors down to 1e-12 of the initial error
#: (spec 9.7): round-off of the trajectories enters the slope.
RATE_FIT_RTOL = 1e-4


RATE_FIT_NOTE = ("rates are least-squares fits of log errors down to 1e-12 of the initial error (spec 9.7), "
                 "where round-off enters the slope: 5e-8 to 5e-6 relative between CPUs and BLAS kernels")
