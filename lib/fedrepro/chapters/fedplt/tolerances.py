"""How ``make verify`` compares the Fed-PLT chapters' recomputed results with the stored ones
where the default (1e-9 relative) is too strict, with the measured reason."""

from __future__ import annotations

__all__ = ["RATE_FIT_NOTE", "RATE_FIT_RTOL"]

#: Empirical rates are least-squares fits of log errors down to 1e-12 of the initial error
#: (spec 9.7): round-off of the trajectories enters the slope.
RATE_FIT_RTOL = 1e-4
RATE_FIT_NOTE = ("rates are least-squares fits of log errors down to 1e-12 of the initial error (spec 9.7), "
                 "where round-off enters the slope: 5e-8 to 5e-6 relative between CPUs and BLAS kernels")
