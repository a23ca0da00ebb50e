"""Computing helpers shared by several Fed-PLT run modules: the empirical linear rate of an
error sequence (:func:`fit_rate`), which the theory, comparison, tuning, participation and
readings runs all fit, so that their stored results do not depend on each other's code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def fit_rate(errors: Any, low: float = 1e-12, high: float = 1e-3) -> float:
    """Empirical linear rate (spec §9.7): ``exp(slope)`` of the least-squares fit of
    ``log e_k`` against ``k`` over the window ``low <= e_k/e_0 <= high``; ``nan`` with fewer
    than three points in the window."""
    e = np.asarray(errors, dtype=float)
    if e.ndim != 1 or e.size < 1 or not e[0] > 0:
        raise ValueError("errors must be a 1-D array with a positive first entry")
    rel = e / e[0]
    k = np.flatnonzero((rel >= low) & (rel <= high))
    if k.size < 3:
        return math.nan
    slope = np.polyfit(k.astype(float), np.log(e[k]), 1)[0]
    return float(math.exp(slope))
