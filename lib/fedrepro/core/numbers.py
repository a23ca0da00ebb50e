"""Numbers as text with three significant digits: the labels a stored result keeps (e.g. a
setting's name) and every number a chapter prints for comparison (round-off digits differ
between CPUs and BLAS kernels, so they are never printed)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["sig3"]


def sig3(x: Any) -> str:
    """``x`` with three significant digits (``'70.5k'``-free: plain ``'7.05e+04'`` style).

    Integers are printed exactly; booleans and strings unchanged.
    """
    if isinstance(x, bool) or isinstance(x, str) or x is None:
        return str(x)
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.3g}"
