"""Helpers that chapters call to show results: rounding for printed output, the profile
parameter, and one wrapper around ``myst_nb.glue``.

Printed numbers that nbval compares are rounded to three significant digits
(:func:`sig3`), so that the last bits of floating-point arithmetic on another CPU never
change a committed output.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["PROFILES", "check_profile", "glue", "sig3"]

#: ``paper``: the papers' settings; ``quick``: every experiment shrunk so that the whole
#: book runs in a few minutes (used by the tests).
PROFILES: tuple[str, ...] = ("paper", "quick")


def check_profile(profile: str) -> str:
    """Validate the chapters' ``profile`` parameter."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    return profile


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


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` for ``{glue}`` roles in the book's pages."""
    from myst_nb import glue as _glue

    _glue(name, value, display=display)
