"""Proximal and reflective operators (Fed-PLT v2, §II-B, Definition 3).

For a closed convex proper ``h`` and a penalty ``t > 0``,

* ``prox_{t h}(v) = argmin_x { h(x) + ||x - v||^2 / (2 t) }``  (Definition 3),
* ``refl_{t h}(v) = 2 prox_{t h}(v) - v``  (Definition 3, the reflective operator),
* for the indicator of a closed convex set ``C`` the prox is the projection onto ``C``
  whatever ``t`` (the remark after Definition 3).

Every operator acts on the last axis, so ``v`` may be one vector of shape ``(n,)`` or a stack
of rows of shape ``(N, n)`` (one row per agent); separable operators act entrywise.

Fed-PLT's coordinator applies ``prox_{rho h / N}`` to the average of the ``z_i`` (Lemma 6,
Algorithm 1 line 2); :class:`Regularizer` bundles a function ``h`` with its value and prox
for that purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core.validate import check_nonnegative

__all__ = [
    "prox_zero",
    "prox_sq_norm",
    "prox_l1",
    "prox_box",
    "prox_ball",
    "reflect",
    "reflective",
    "Regularizer",
    "regularizer",
    "REGULARIZER_KINDS",
]

REGULARIZER_KINDS = ("zero", "sq_norm", "l1", "box", "ball")


def _as_float_array(v: Any, name: str = "v") -> np.ndarray:
    arr = np.asarray(v, dtype=float)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a vector or a stack of row vectors (ndim >= 1), got a scalar")
    return arr


def prox_zero(v: Any, t: float = 1.0) -> np.ndarray:
    """Prox of ``h = 0``: the identity (Definition 3 with ``h = 0``). Returns a copy."""
    check_nonnegative("t (the prox penalty)", t)
    return np.array(_as_float_array(v), dtype=float, copy=True)


def prox_sq_norm(v: Any, t: float, weight: float = 1.0) -> np.ndarray:
    """Prox of ``h(x) = weight * ||x||^2 / 2`` (Definition 3): ``v / (1 + t * weight)``."""
    tf, w = check_nonnegative("t (the prox penalty)", t), check_nonnegative("weight", weight)
    return _as_float_array(v) / (1.0 + tf * w)


def prox_l1(v: Any, t: float, weight: float = 1.0) -> np.ndarray:
    """Prox of ``h(x) = weight * ||x||_1`` (Definition 3): soft thresholding at ``t * weight``,
    ``sign(v) * max(|v| - t * weight, 0)`` entrywise."""
    tf, w = check_nonnegative("t (the prox penalty)", t), check_nonnegative("weight", weight)
    arr = _as_float_array(v)
    return np.sign(arr) * np.maximum(np.abs(arr) - tf * w, 0.0)


def prox_box(v: Any, lower: Any, upper: Any, t: float | None = None) -> np.ndarray:
    """Projection onto the box ``{x : lower <= x <= upper}`` (the prox of its indicator for any
    ``t``, remark after Definition 3). ``lower``/``upper`` are scalars or broadcast against
    the last axis; ``-inf``/``+inf`` are allowed; ``t`` is ignored."""
    if t is not None:
        check_nonnegative("t (the prox penalty)", t)
    arr = _as_float_array(v)
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)):
        raise ValueError("lower and upper must not contain NaN")
    if np.any(lo > hi):
        raise ValueError(f"lower must be <= upper entrywise, got lower={lower!r}, upper={upper!r}")
    return np.clip(arr, lo, hi)


def prox_ball(v: Any, radius: float, center: Any = 0.0, t: float | None = None) -> np.ndarray:
    """Projection of each row onto the Euclidean ball ``{x : ||x - center|| <= radius}`` (the
    prox of its indicator for any ``t``, remark after Definition 3); ``t`` is ignored."""
    if t is not None:
        check_nonnegative("t (the prox penalty)", t)
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise ValueError(f"radius must be a real number >= 0, got {radius!r}") from None
    if not np.isfinite(r) or r < 0:
        raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
    arr = _as_float_array(v)
    c = np.asarray(center, dtype=float)
    d = arr - c
    norm = np.linalg.norm(d, axis=-1, keepdims=True)
    scale = np.where(norm > r, r / np.where(norm > 0, norm, 1.0), 1.0)
    return c + d * scale


def reflective(v: Any, t: float, prox: Callable[..., np.ndarray], **params: Any) -> np.ndarray:
    """Reflective operator ``refl_{t h}(v) = 2 prox_{t h}(v) - v`` (Definition 3), where
    ``prox(v, t, **params)`` is the prox of ``h``."""
    arr = _as_float_array(v)
    return 2.0 * prox(arr, t, **params) - arr


def reflect(prox: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Turn a prox ``prox(v, t, **params)`` into its reflective operator
    ``(v, t, **params) -> 2 prox(v, t, **params) - v`` (Definition 3)."""

    def refl(v: Any, t: float, **params: Any) -> np.ndarray:
        return reflective(v, t, prox, **params)

    refl.__name__ = f"reflect_{getattr(prox, '__name__', 'prox')}"
    refl.__doc__ = f"Reflective operator 2 prox(v, t) - v of {getattr(prox, '__name__', 'prox')}."
    return refl


@dataclass(frozen=True)
class Regularizer:
    """A proximable convex ``h`` (Fed-PLT v2 eq. (5), Assumption 1: convex, closed, proper).

    ``kind`` is one of ``"zero"`` (``h = 0``), ``"sq_norm"`` (``weight ||x||^2 / 2``), ``"l1"``
    (``weight ||x||_1``), ``"box"`` (indicator of ``[lower, upper]``) and ``"ball"``
    (indicator of ``{||x - center|| <= radius}``); ``params`` holds the kind's parameters.
    Build it with :func:`regularizer`.

    ``value(x)`` evaluates ``h`` row-wise (a float for one vector, an array of shape ``(N,)``
    for a stack; indicators give ``0`` or ``inf``, with a relative tolerance ``1e-12`` on the
    constraint), ``prox(v, t)`` is ``prox_{t h}(v)`` and ``reflect(v, t)`` is
    ``2 prox_{t h}(v) - v`` (Definition 3).
    """

    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def is_zero(self) -> bool:
        """True when ``h = 0`` (also ``weight = 0``), so its prox is the identity."""
        if self.kind == "zero":
            return True
        if self.kind in ("sq_norm", "l1"):
            return float(self.params.get("weight", 1.0)) == 0.0
        return False

    def value(self, x: Any) -> float | np.ndarray:
        arr = _as_float_array(x, "x")
        p = self.params
        if self.kind == "zero":
            out = np.zeros(arr.shape[:-1])
        elif self.kind == "sq_norm":
            out = 0.5 * p.get("weight", 1.0) * np.sum(arr * arr, axis=-1)
        elif self.kind == "l1":
            out = p.get("weight", 1.0) * np.sum(np.abs(arr), axis=-1)
        elif self.kind == "box":
            lo = np.broadcast_to(np.asarray(p["lower"], dtype=float), arr.shape)
            hi = np.broadcast_to(np.asarray(p["upper"], dtype=float), arr.shape)
            tol_lo = 1e-12 * np.maximum(1.0, np.where(np.isfinite(lo), np.abs(lo), 0.0))
            tol_hi = 1e-12 * np.maximum(1.0, np.where(np.isfinite(hi), np.abs(hi), 0.0))
            inside = np.all((arr >= lo - tol_lo) & (arr <= hi + tol_hi), axis=-1)
            out = np.where(inside, 0.0, np.inf)
        elif self.kind == "ball":
            r = float(p["radius"])
            d = np.linalg.norm(arr - np.asarray(p.get("center", 0.0), dtype=float), axis=-1)
            out = np.where(d <= r * (1 + 1e-12) + 1e-12, 0.0, np.inf)
        else:  # pragma: no cover - guarded by regularizer()
            raise ValueError(f"kind must be one of {REGULARIZER_KINDS}, got {self.kind!r}")
        return float(out) if np.ndim(out) == 0 else out

    def prox(self, v: Any, t: float) -> np.ndarray:
        p = self.params
        if self.kind == "zero":
            return prox_zero(v, t)
        if self.kind == "sq_norm":
            return prox_sq_norm(v, t, p.get("weight", 1.0))
        if self.kind == "l1":
            return prox_l1(v, t, p.get("weight", 1.0))
        if self.kind == "box":
            return prox_box(v, p["lower"], p["upper"], t)
        if self.kind == "ball":
            return prox_ball(v, p["radius"], p.get("center", 0.0), t)
        raise ValueError(f"kind must be one of {REGULARIZER_KINDS}, got {self.kind!r}")  # pragma: no cover

    def reflect(self, v: Any, t: float) -> np.ndarray:
        return reflective(v, t, self.prox)


def regularizer(kind: str, **params: Any) -> Regularizer:
    """Build a :class:`Regularizer`.

    ``regularizer("zero")``, ``regularizer("sq_norm", weight=w)``, ``regularizer("l1", weight=w)``,
    ``regularizer("box", lower=lo, upper=hi)``, ``regularizer("ball", radius=r, center=c)``
    (``center`` defaults to 0). Parameters are validated here.
    """
    allowed = {
        "zero": set(),
        "sq_norm": {"weight"},
        "l1": {"weight"},
        "box": {"lower", "upper"},
        "ball": {"radius", "center"},
    }
    if kind not in allowed:
        raise ValueError(f"kind must be one of {REGULARIZER_KINDS}, got {kind!r}")
    extra = set(params) - allowed[kind]
    if extra:
        raise ValueError(f"params {sorted(extra)} are not valid for kind {kind!r}; "
                         f"valid: {sorted(allowed[kind])}")
    clean: dict[str, Any] = {}
    if kind in ("sq_norm", "l1"):
        clean["weight"] = check_nonnegative("weight", params.get("weight", 1.0))
    elif kind == "box":
        if "lower" not in params or "upper" not in params:
            raise ValueError("kind 'box' needs both lower and upper")
        prox_box(np.zeros(1), params["lower"], params["upper"])  # validates lower <= upper
        clean["lower"], clean["upper"] = params["lower"], params["upper"]
    elif kind == "ball":
        if "radius" not in params:
            raise ValueError("kind 'ball' needs radius (>= 0)")
        prox_ball(np.zeros(1), params["radius"])  # validates radius
        clean["radius"] = float(params["radius"])
        clean["center"] = params.get("center", 0.0)
    return Regularizer(kind, clean)
