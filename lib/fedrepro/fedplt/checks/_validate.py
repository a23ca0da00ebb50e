"""Input checks of the checks package that :mod:`fedrepro.core.validate` does not provide: a
choice among strings, a NumPy generator, and the floating-point limits of the closed forms
in the PRS penalty ``rho`` (``1/rho`` and ``rho lam_bar`` must be representable)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.core.operators import _moduli
from fedrepro.core.validate import ParameterTypeError, check_bool, check_int, check_interval

__all__ = ["choice", "generator", "finite_penalty", "identical_moduli", "moduli", "participation", "seed", "sizes"]


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


# --------------------------------------------------------------------------- instance fields


def sizes(inst: Any, *names: str) -> None:
    """Each field in ``names`` (agents ``N``, dimensions ``n``, ``m``, ...) an integer >= 1."""

    for name in names:
        check_int(name, getattr(inst, name), 1)


def moduli(inst: Any) -> None:
    """``lam`` and ``lam_bar`` finite with ``0 < lam <= lam_bar``."""

    _moduli(inst.lam, inst.lam_bar)


def seed(inst: Any) -> None:
    """``seed`` an integer >= 0 (a NumPy seed)."""

    check_int("seed", inst.seed, 0)


def participation(inst: Any) -> None:
    """``p_min`` and ``p_max`` with ``0 < p_min <= p_max <= 1``."""

    check_interval("p_min", inst.p_min, 0.0, 1.0, closed_low=False)
    check_interval("p_max", inst.p_max, 0.0, 1.0, closed_low=False)
    if inst.p_min > inst.p_max:
        raise ValueError(f"p_min must be <= p_max (0 < p_min <= p_max <= 1), got p_min={inst.p_min!r}, "
                         f"p_max={inst.p_max!r}")


def identical_moduli(inst: Any) -> None:
    """``identical`` a boolean; when true, ``lam_bar`` must equal ``lam`` (``A_i = lam I``)."""

    if check_bool("identical", inst.identical) and inst.lam != inst.lam_bar:
        raise ValueError(f"identical=True needs lam_bar == lam, got lam={inst.lam!r}, lam_bar={inst.lam_bar!r}")
