"""Input checks shared by the whole library.

Public functions validate their inputs with these helpers, so that a bad value raises
:class:`ValueError` whose message names the parameter and its valid range.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "as_real",
    "check_finite",
    "check_int",
    "check_interval",
    "check_nonnegative",
    "check_positive",
]


def as_real(name: str, value: Any) -> float:
    """``value`` as a float; raise if it is not a real number (or is nan)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if math.isnan(x):
        raise ValueError(f"{name} must be a real number, got nan")
    return x


def check_finite(name: str, value: Any) -> float:
    """``value`` as a float; raise unless it is in (-inf, inf)."""
    x = as_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def check_positive(name: str, value: Any, *, finite: bool = True) -> float:
    """``value`` as a float; raise unless it is in (0, inf) (or (0, inf] if not ``finite``)."""
    x = as_real(name, value)
    if not x > 0 or (finite and math.isinf(x)):
        raise ValueError(f"{name} must be in (0, inf), got {value!r}")
    return x


def check_nonnegative(name: str, value: Any) -> float:
    """``value`` as a float; raise unless it is in [0, inf)."""
    x = as_real(name, value)
    if not 0 <= x < math.inf:
        raise ValueError(f"{name} must be in [0, inf), got {value!r}")
    return x


def check_interval(name: str, value: Any, low: float, high: float, *,
                   closed_low: bool = True, closed_high: bool = True) -> float:
    """``value`` as a float; raise unless it lies in the interval from ``low`` to ``high``."""
    x = as_real(name, value)
    above = x >= low if closed_low else x > low
    below = x <= high if closed_high else x < high
    if not (above and below):
        interval = f"{'[' if closed_low else '('}{low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}")
    return x


def check_int(name: str, value: Any, low: int = 1, high: float = math.inf, *,
              strict: bool = True) -> int:
    """``value`` as an int; raise unless it is an integer in [low, high].

    ``strict``: only Python or NumPy integers (never booleans) are accepted; otherwise a
    float with an integral value (``5.0``) is accepted too.
    """
    if isinstance(value, (bool, np.bool_)):
        ok = False
    elif strict:
        ok = isinstance(value, (int, np.integer))
    else:
        try:
            ok = float(value).is_integer()
        except (TypeError, ValueError):
            ok = False
    if not ok or not low <= value <= high:
        rng = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")
    return int(value)
