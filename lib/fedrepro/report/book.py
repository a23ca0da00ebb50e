"""Helpers that chapters call to show results: rounding for printed output, the profile
parameter, and one wrapper around ``myst_nb.glue``.

Printed numbers that nbval compares are rounded to three significant digits
(:func:`sig3`), so that the last bits of floating-point arithmetic on another CPU never
change a committed output.

Tables, collapsible text and figures are shown with :mod:`fedrepro.report.show`
(``show.table``, ``show.dropdown``, ``show.glue``); they live there because this module is
imported by the code of stored results, whose code hash covers it.
"""

from __future__ import annotations

import math
from typing import Any

from fedrepro.core.numbers import sig3
from fedrepro.core.profiles import PROFILES, check_profile

__all__ = ["PROFILES", "ROUNDOFF_FLOOR", "check_profile", "glue", "roundoff", "sig3"]


#: Below this, a residual or an error against an exact value is round-off: printed as a bound.
ROUNDOFF_FLOOR = 1e-10


def roundoff(x: Any, floor: float = ROUNDOFF_FLOOR) -> str:
    """A residual or error that may be pure round-off: ``'< 1e-10'`` below ``floor``, else
    :func:`sig3`. Round-off digits differ between CPUs and BLAS kernels, so they are never
    printed into a checked output."""
    if not (isinstance(floor, (int, float)) and floor > 0):
        raise ValueError(f"floor must be a positive number, got {floor!r}")
    if x is not None and not isinstance(x, (bool, str)):
        value = float(x)
        if math.isfinite(value) and abs(value) < floor:
            return f"< {floor:g}"
    return sig3(x)


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` for ``{glue}`` roles in the book's pages."""
    from myst_nb import glue as _glue

    _glue(name, value, display=display)
