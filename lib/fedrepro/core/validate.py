"""Input checks shared by the whole library.

Public functions validate their inputs with these helpers, so that a bad value raises an
exception whose message names the parameter and its valid range:

* a value of the wrong type — a string (even a numeric-looking one such as ``"0.5"``), a
  boolean, ``None``, a list where a number is expected — raises :class:`ParameterTypeError`,
  a :class:`TypeError`;
* a real number outside the valid range (or nan) raises :class:`ValueError`.

:class:`ParameterTypeError` also derives from :class:`ValueError`, so that callers which
caught the :class:`ValueError` these checks raised for such values before keep working.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "ParameterTypeError",
    "as_real",
    "check_array",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_finite",
    "check_int",
    "check_interval",
    "check_nonnegative",
    "check_positive",
]


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (a string, a boolean, ``None``, a sequence, ...).

    A :class:`TypeError`; also a :class:`ValueError` for backward compatibility.
    """


def _type_name(value: Any) -> str:
    return type(value).__name__


def _reject_non_numeric(name: str, value: Any, what: str) -> None:
    """Raise :class:`ParameterTypeError` for types that ``float()``/``int()`` would accept but
    that are not numbers: strings and bytes (``float("0.5")``), booleans (``float(True)``),
    and NumPy arrays of such dtypes; also ``None``."""
    bad = value is None or isinstance(value, (str, bytes, bool, np.bool_))
    if not bad and isinstance(value, np.ndarray):
        bad = value.dtype.kind not in "iuf"
    if not bad and isinstance(value, np.generic):
        bad = not isinstance(value, (np.integer, np.floating))
    if bad:
        raise ParameterTypeError(f"{name} must be {what}, got {value!r} ({_type_name(value)})")


def as_real(name: str, value: Any) -> float:
    """``value`` as a float; raise unless it is a real number (not nan).

    Strings (even ``"0.5"``), booleans, ``None`` and other non-numbers raise
    :class:`ParameterTypeError`; nan raises :class:`ValueError`.
    """
    _reject_non_numeric(name, value, "a real number")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the float range
        raise ValueError(f"{name} must be a real number within the float range, got {value!r}") from None
    except (TypeError, ValueError):
        raise ParameterTypeError(
            f"{name} must be a real number, got {value!r} ({_type_name(value)})") from None
    if math.isnan(x):
        raise ValueError(f"{name} must be a real number, got nan")
    return x


def check_finite(name: str, value: Any) -> float:
    """``value`` as a float; raise unless it is in (-inf, inf)."""
    x = as_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, in (-inf, inf), got {value!r}")
    return x


def check_positive(name: str, value: Any, *, finite: bool = True) -> float:
    """``value`` as a float; raise unless it is in (0, inf) (or (0, inf] if not ``finite``)."""
    x = as_real(name, value)
    if not x > 0 or (finite and math.isinf(x)):
        raise ValueError(f"{name} must be in (0, {'inf)' if finite else 'inf]'}, got {value!r}")
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

    ``strict``: only Python or NumPy integers are accepted (any float is the wrong type);
    otherwise a float with an integral value (``5.0``) is accepted too. Booleans, strings
    (``"5"``) and other non-numbers always raise :class:`ParameterTypeError`; values outside
    [low, high] and, when not ``strict``, nan, inf and non-integral floats raise
    :class:`ValueError`.
    """
    rng = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
    _reject_non_numeric(name, value, f"an integer {rng}")
    if isinstance(value, (int, np.integer)):
        ok = True
    elif strict:  # a float, even 2.0, is the wrong type here
        raise ParameterTypeError(
            f"{name} must be an integer {rng}, got {value!r} ({_type_name(value)})")
    else:
        try:
            ok = float(value).is_integer()
        except (TypeError, ValueError, OverflowError):
            raise ParameterTypeError(
                f"{name} must be an integer {rng}, got {value!r} ({_type_name(value)})") from None
    if not ok or not low <= value <= high:
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool; raise :class:`ParameterTypeError` unless it is a Python or NumPy
    boolean (``0``, ``1``, ``"yes"`` and ``None`` are the wrong type)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be a boolean (True or False), got {value!r} ({_type_name(value)})")
    return bool(value)


def check_choice(name: str, value: Any, options: tuple) -> Any:
    """``value`` unless it is not one of ``options`` (strings: a non-string raises
    :class:`ParameterTypeError`; otherwise ValueError naming the options)."""
    if all(isinstance(o, str) for o in options) and not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be one of {options}, got {value!r} ({_type_name(value)})")
    if value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_callable(name: str, value: Any) -> Any:
    """``value`` unless it is not callable (:class:`ParameterTypeError`)."""
    if not callable(value):
        raise ParameterTypeError(f"{name} must be callable, got {value!r} ({_type_name(value)})")
    return value


def check_array(name: str, value: Any, *, ndim: int | tuple[int, ...] | None = None,
                shape: tuple[int | None, ...] | None = None, finite: bool = True,
                nonempty: bool = True, dtype: Any = float) -> np.ndarray:
    """``value`` as a NumPy array of ``dtype`` (not copied when it already is one); raise
    unless it is a numeric array (:class:`ParameterTypeError` for strings, booleans, objects,
    ``None``) with ``ndim`` dimensions (one of them, for a tuple), the given ``shape``
    (``None`` entries free), at least one entry (``nonempty``) and, with ``finite``, no nan or
    inf (ValueError, naming the parameter)."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be a numeric array, got {value!r} ({_type_name(value)})")
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError):
            raise ParameterTypeError(f"{name} must be a numeric array, got {_type_name(value)}") from None
    if raw.dtype.kind not in "iuf":
        raise ParameterTypeError(f"{name} must be a numeric array (integers or reals), got dtype {raw.dtype}")
    arr = raw if dtype is None else np.asarray(raw, dtype=dtype)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(str(d) for d in allowed)
            raise ValueError(f"{name} must be an array with {want} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape, strict=True)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise ValueError(f"{name} must have shape {want}, got shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array, got shape {arr.shape}")
    if finite and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no nan or inf)")
    return arr
