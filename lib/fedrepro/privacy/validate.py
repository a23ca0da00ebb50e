"""Input checks shared by the privacy accountants.

Every public function of :mod:`fedrepro.privacy` validates its inputs with these functions, so
a bad value raises :class:`ValueError` whose message names the parameter and its valid range.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from fedrepro.core.validate import as_real, check_nonnegative, check_positive

__all__ = [
    "check_delta",
    "check_nonnegative",
    "check_orders",
    "check_positive",
    "check_sampling_rate",
]


def check_delta(value: float, name: str = "delta") -> float:
    """Return δ as a float; raise unless δ ∈ (0, 1)."""
    x = as_real(name, value)
    if not 0 < x < 1:
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return x


def check_sampling_rate(value: float, name: str = "q") -> float:
    """Return the Poisson sampling rate as a float; raise unless q ∈ (0, 1]."""
    x = as_real(name, value)
    if not 0 < x <= 1:
        raise ValueError(f"{name} (sampling rate) must be in (0, 1], got {value!r}")
    return x


def check_order(value: float, name: str = "alpha") -> float:
    """Return one Rényi order as a float; raise unless α ∈ (1, inf)."""
    x = as_real(name, value)
    if not 1 < x < math.inf:
        raise ValueError(f"{name} (Rényi order) must be in (1, inf), got {value!r}")
    return x


def check_orders(values: float | Iterable[float], name: str = "orders") -> np.ndarray:
    """Return Rényi orders as a 1-d float array; raise unless every order is in (1, inf)."""
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of Rényi orders in (1, inf)")
    if not np.all((arr > 1) & np.isfinite(arr)):
        raise ValueError(f"{name} (Rényi orders) must all be in (1, inf), got {values!r}")
    return arr
