"""Input checks shared by the privacy accountants.

Every public function of :mod:`fedrepro.privacy` validates its inputs with these functions, so
a bad value raises an exception whose message names the parameter and its valid range:
:class:`~fedrepro.core.validate.ParameterTypeError` (a :class:`TypeError`) for a value of the
wrong type — strings, even numeric-looking ones (``"0.5"``), booleans, ``None``, garbage
inside a sequence — and :class:`ValueError` for a number out of range (or nan).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from fedrepro.core.validate import ParameterTypeError, as_real, check_int, check_nonnegative, check_positive

__all__ = [
    "MAX_ORDER",
    "check_delta",
    "check_integer_order",
    "check_nonnegative",
    "check_order",
    "check_orders",
    "check_positive",
    "check_sampling_rate",
    "real_array",
]

#: Largest Rényi order accepted by the sampled-Gaussian RDP functions
#: (:mod:`fedrepro.privacy.rdp`), whose cost and memory grow linearly with the order.
#: Libraries stop far below it (dp-accounting's default orders end at 1024).
MAX_ORDER: int = 10_000


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


def _order_range(max_order: float) -> str:
    return "(1, inf)" if math.isinf(max_order) else f"(1, {max_order:g}]"


def check_order(value: float, name: str = "alpha", max_order: float = math.inf) -> float:
    """Return one Rényi order as a float; raise unless α ∈ (1, ``max_order``] (and finite)."""
    x = as_real(name, value)
    if not (1 < x < math.inf and x <= max_order):
        raise ValueError(f"{name} (Rényi order) must be in {_order_range(max_order)}, got {value!r}")
    return x


def check_integer_order(value: int, name: str = "alpha", max_order: int = MAX_ORDER) -> int:
    """Return an integer Rényi order; raise unless it is an integer in [2, ``max_order``]
    (integral floats such as ``4.0`` are accepted, strings and booleans are not)."""
    return check_int(f"{name} (integer Rényi order)", value, 2, max_order, strict=False)


def real_array(name: str, values: Any) -> np.ndarray:
    """``values`` (a real number, a sequence, nested sequences or a numeric array) as a float
    array; raise :class:`ParameterTypeError` if any element is not a real number (strings,
    booleans, ``None``, ragged nesting) and :class:`ValueError` if any is nan. ±inf pass."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf":
        arr = values.astype(float)
    else:
        if isinstance(values, (str, bytes, bool, np.bool_)) or values is None:
            as_real(name, values)  # raises, naming the parameter
        if isinstance(values, np.ndarray) and values.dtype.kind != "O":
            raise ParameterTypeError(
                f"{name} must contain real numbers, got an array of dtype {values.dtype}")
        if not isinstance(values, np.ndarray) and isinstance(values, Iterable):
            values = list(values)
        try:
            obj = np.asarray(values, dtype=object)
        except (TypeError, ValueError):
            raise ParameterTypeError(f"{name} must be real numbers, got {values!r}") from None
        for element in obj.flat:
            if isinstance(element, np.ndarray) or (
                    isinstance(element, Iterable) and not isinstance(element, (str, bytes))):
                raise ParameterTypeError(
                    f"{name} must be a (rectangular) array of real numbers, got {values!r}")
            as_real(name, element)
        arr = obj.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} must be real numbers, got nan in {values!r}")
    return arr


def check_orders(values: float | Iterable[float], name: str = "orders",
                 max_order: float = math.inf) -> np.ndarray:
    """Return Rényi orders as a 1-d float array; raise unless every order is a real number in
    (1, ``max_order``] (finite)."""
    arr = np.atleast_1d(real_array(name, values))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence of Rényi orders in "
                         f"{_order_range(max_order)}")
    if not np.all((arr > 1) & np.isfinite(arr) & (arr <= max_order)):
        raise ValueError(
            f"{name} (Rényi orders) must all be in {_order_range(max_order)}, got {values!r}")
    return arr
