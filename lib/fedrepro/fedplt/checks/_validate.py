"""Input checks of the checks package that :mod:`fedrepro.core.validate` does not provide: a
choice among strings, a NumPy generator, and the floating-point limits of the closed forms
in the PRS penalty ``rho`` (``1/rho`` and ``rho lam_bar`` must be representable)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.core.validate import ParameterTypeError

__all__ = ["choice", "generator", "finite_penalty"]


def choice(name: str, value: Any, options: tuple, message: str | None = None) -> str:
    """``value`` unless it is not a string (:class:`ParameterTypeError`) or not one of
    ``options`` (ValueError, with ``message`` or ``"{name} must be one of ..."``)."""
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, one of {options}, got {value!r} ({type(value).__name__})")
    if value not in options:
        raise ValueError(message or f"{name} must be one of {options}, got {value!r}")
    return value


def generator(name: str, value: Any) -> np.random.Generator:
    """``value`` unless it is not a :class:`numpy.random.Generator` (ParameterTypeError)."""
    if not isinstance(value, np.random.Generator):
        raise ParameterTypeError(f"{name} must be a numpy.random.Generator, got {value!r} ({type(value).__name__})")
    return value


def finite_penalty(rho: float, lam_bar: float, *, with_product: bool = False) -> None:
    """Raise ValueError (naming ``rho`` and ``lam_bar``) where the closed forms leave the float
    range: ``1/rho`` or ``lam_bar + 1/rho`` overflows (then ``2/(lam_bar + 1/rho)``
    is 0 and ``I/rho`` infinite), or, with ``with_product``, ``rho lam_bar`` does (then
    ``|1 - rho lam_bar|/(1 + rho lam_bar)`` is NaN). ``rho`` and ``lam_bar`` are valid
    already."""
    inv = 1.0 / float(rho)
    if not math.isfinite(inv):
        raise ValueError(f"rho must be >= {1 / 1.7976931348623157e308:g} (1/rho must be finite), got {rho!r}")
    if not math.isfinite(float(lam_bar) + inv):
        raise ValueError(f"lam_bar + 1/rho must be finite, got rho={rho!r}, lam_bar={lam_bar!r}")
    if with_product and not math.isfinite(float(rho) * float(lam_bar)):
        raise ValueError(f"rho * lam_bar must be finite, got rho={rho!r}, lam_bar={lam_bar!r}")
