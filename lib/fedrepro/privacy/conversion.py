"""RDP → (ε, δ)-DP conversions, each returning ε and the optimal order.

* basic (Mironov 2017, Proposition 3; ALI-DPFL Definition 5; Fed-PLT Lemma 5):
  ε = min_α [R(α) + log(1/δ)/(α − 1)] — what the ALI-DPFL paper uses;
* improved (Balle et al. 2020, Theorem 21; Canonne, Kamath & Steinke 2020, Proposition 12):
  ε = min_α [R(α) + log((α − 1)/α) − (log δ + log α)/(α − 1)] — what current libraries
  (dp-accounting, Opacus) and the ALI-DPFL public code use. It is never larger than the
  basic one, since log((α−1)/α) − log(α)/(α−1) < 0 for α > 1.

``rdp`` may carry leading axes (e.g. one row per step count): the minimum is taken over the
last axis (the orders), giving arrays of ε and optimal orders of the leading shape.

Range: ``rdp`` values in [0, inf] (inf: no guarantee at that order), orders in (1, inf),
δ ∈ (0, 1); ε ∈ [0, inf] (inf when every order has infinite RDP), the optimal order one of
``orders``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

import numpy as np

from fedrepro.core.validate import ParameterTypeError
from fedrepro.privacy._numerics import log_inv
from fedrepro.privacy.validate import check_delta, check_orders, real_array

__all__ = ["CONVERSIONS", "Conversion", "check_conversion", "epsilon_basic", "epsilon_from_rdp",
           "epsilon_improved"]

Conversion = Literal["basic", "improved"]
CONVERSIONS: tuple[str, ...] = ("basic", "improved")


def _prepare(rdp, orders) -> tuple[np.ndarray, np.ndarray]:
    orders_arr = check_orders(orders)
    rdp_arr = real_array("rdp", rdp)
    if rdp_arr.ndim == 0 or rdp_arr.shape[-1] != orders_arr.size:
        raise ValueError(
            f"rdp must have one value per order along its last axis ({orders_arr.size} orders), "
            f"got shape {rdp_arr.shape}"
        )
    if np.any(rdp_arr < 0):
        raise ValueError("rdp must be non-negative (in [0, inf]) at every order")
    return rdp_arr, orders_arr


def _argmin(eps: np.ndarray, orders: np.ndarray):
    idx = np.argmin(eps, axis=-1)
    best = np.take_along_axis(eps, idx[..., None], axis=-1)[..., 0]
    order = orders[idx]
    if best.ndim == 0:
        return float(best), float(order)
    return best, order


def epsilon_basic(
    rdp: np.ndarray | Iterable[float], orders: Iterable[float], delta: float
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """ε and optimal order of the basic conversion (Mironov 2017, Prop. 3; ALI-DPFL Def. 5)."""
    rdp_arr, orders_arr = _prepare(rdp, orders)
    delta = check_delta(delta)
    eps = rdp_arr + log_inv(delta) / (orders_arr - 1)
    return _argmin(eps, orders_arr)


def epsilon_improved(
    rdp: np.ndarray | Iterable[float], orders: Iterable[float], delta: float
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """ε and optimal order of the improved conversion (Balle et al. 2020, Thm 21).

    ε(α) = R(α) + log1p(−1/α) − (log δ + log α)/(α − 1), minimised over the orders and
    clipped at 0. When δ² > 1 − e^{−R(α)} the order gives ε = 0 outright (Pinsker-type
    bound δ ≤ sqrt(1 − e^{−KL}) with KL ≤ R(α)), as in dp-accounting.
    """
    rdp_arr, orders_arr = _prepare(rdp, orders)
    delta = check_delta(delta)
    with np.errstate(invalid="ignore"):
        eps = rdp_arr + np.log1p(-1 / orders_arr) - (math.log(delta) + np.log(orders_arr)) / (
            orders_arr - 1
        )
        eps = np.where(delta**2 + np.expm1(-rdp_arr) > 0, 0.0, eps)
    eps = np.maximum(eps, 0.0)
    return _argmin(eps, orders_arr)


def epsilon_from_rdp(
    rdp: np.ndarray | Iterable[float],
    orders: Iterable[float],
    delta: float,
    conversion: Conversion = "basic",
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """Dispatch to :func:`epsilon_basic` or :func:`epsilon_improved` by name."""
    check_conversion(conversion)
    if conversion == "basic":
        return epsilon_basic(rdp, orders, delta)
    return epsilon_improved(rdp, orders, delta)


def check_conversion(conversion: str) -> str:
    """Return ``conversion``; raise unless it is one of :data:`CONVERSIONS`."""
    if not isinstance(conversion, str):
        raise ParameterTypeError(
            f"conversion must be one of {CONVERSIONS}, got {conversion!r} ({type(conversion).__name__})")
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {CONVERSIONS}, got {conversion!r}")
    return conversion
