"""Local solvers of Fed-PLT (v2 §IV-B), vectorised over the active agents.

Each solver takes ``N_e`` steps on the local functions ``d_i`` (one row per agent) given a
row-wise gradient oracle ``grad_d(W) -> (B, n)``, starting from ``W0`` (the warm start
``w^0_{i,k} = x_{i,k}`` of Algorithm 1, line 5). The loop runs over the ``N_e`` steps only;
all agents move together as arrays. Step sizes and moduli may be scalars or per-agent arrays
of shape ``(B,)`` (uncoordinated solvers, Remark 1).

Every entry point validates its inputs before any step (a bad value raises ValueError or
TypeError naming the parameter): ``W0`` a non-empty finite array, step sizes and moduli
finite and positive, ``N_e`` an integer ``>= 0``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fedrepro.core.validate import (
    ParameterTypeError,
    check_array,
    check_callable,
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
)

__all__ = ["gradient_descent", "accelerated_gradient_descent", "noisy_gradient_descent",
           "nesterov_momentum"]

GradOracle = Callable[[np.ndarray], np.ndarray]


def _positive(name: str, value: float | np.ndarray) -> float | np.ndarray:
    """A finite positive scalar, or a non-empty finite positive 1-D array (per agent)."""
    if not isinstance(value, np.ndarray):  # a scalar (a list is the wrong type)
        check_positive(name, value)
        return value
    arr = check_array(name, value, ndim=(0, 1))
    if not np.all(arr > 0):
        raise ValueError(f"{name} must be in (0, inf) (every entry), got {value!r}")
    return value


def _check_rows(W0: np.ndarray, *per_agent: tuple[str, float | np.ndarray]) -> None:
    """``W0`` a non-empty finite array; a per-agent parameter of shape ``(B,)`` matches its rows."""
    W = check_array("W0", W0, ndim=(1, 2))
    for name, value in per_agent:
        if np.ndim(value) == 1 and (W.ndim != 2 or np.shape(value)[0] != W.shape[0]):
            raise ValueError(f"{name} of shape {np.shape(value)} must have one entry per row of W0 "
                             f"(W0 has shape {W.shape})")


def _column(a: float | np.ndarray) -> float | np.ndarray:
    return a[:, None] if np.ndim(a) == 1 else a


def gradient_descent(grad_d: GradOracle, W0: np.ndarray, gamma: float | np.ndarray,
                     Ne: int) -> np.ndarray:
    """``N_e`` steps ``w^{l+1} = w^l - gamma grad d(w^l)`` (v2 eq. (11); with a mini-batch
    oracle this is the SGD variant of §IV-B)."""
    check_callable("grad_d", grad_d)
    _positive("gamma", gamma)
    _check_rows(W0, ("gamma", gamma))
    check_int("Ne", Ne, 0)
    g = _column(gamma)
    W = np.array(W0, dtype=float, copy=True)
    for _ in range(Ne):
        W = W - g * grad_d(W)
    return W


def noisy_gradient_descent(grad_d: GradOracle, W0: np.ndarray, gamma: float | np.ndarray,
                           Ne: int, tau: float, rng: np.random.Generator) -> np.ndarray:
    """``N_e`` steps ``w^{l+1} = w^l - gamma grad d(w^l) + t^l`` with
    ``t^l ~ sqrt(2 gamma) N(0, tau^2 I)`` drawn independently per step and agent (v2 eq. (13));
    the per-coordinate noise variance is ``2 gamma tau^2``."""
    check_callable("grad_d", grad_d)
    _positive("gamma", gamma)
    _check_rows(W0, ("gamma", gamma))
    check_int("Ne", Ne, 0)
    check_nonnegative("tau", tau)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {rng!r} ({type(rng).__name__})")
    g = _column(gamma)
    std = np.sqrt(2.0 * np.asarray(g)) * tau
    W = np.array(W0, dtype=float, copy=True)
    for _ in range(Ne):
        W = W - g * grad_d(W) + std * rng.standard_normal(W.shape)
    return W


def nesterov_momentum(L: float | np.ndarray, mu: float | np.ndarray) -> float | np.ndarray:
    """Constant momentum ``(sqrt(L) - sqrt(mu)) / (sqrt(L) + sqrt(mu))`` of v2 eq. (12), for
    ``0 < mu <= L`` (finite; scalars or per-agent arrays of one shape)."""
    _moduli(L, mu)
    sL, smu = np.sqrt(L), np.sqrt(mu)
    return (sL - smu) / (sL + smu)


def _moduli(L: float | np.ndarray, mu: float | np.ndarray) -> None:
    _positive("L", L)
    _positive("mu", mu)
    if np.ndim(L) == 1 and np.ndim(mu) == 1 and np.shape(L) != np.shape(mu):
        raise ValueError(f"L and mu must have the same shape, got {np.shape(L)} and {np.shape(mu)}")
    if not np.all(np.asarray(mu, dtype=float) <= np.asarray(L, dtype=float)):
        raise ValueError(f"mu must lie in (0, L] (strong convexity below smoothness), got L={L!r}, mu={mu!r}")


def accelerated_gradient_descent(grad_d: GradOracle, W0: np.ndarray, L: float | np.ndarray,
                                 mu: float | np.ndarray, Ne: int, output: str = "w") -> np.ndarray:
    """Constant-momentum Nesterov (v2 eq. (12)) for a ``mu``-strongly convex, ``L``-smooth ``d``:
    ``u^0 = w^0``; ``u^{l+1} = w^l - grad d(w^l) / L``;
    ``w^{l+1} = u^{l+1} + beta (u^{l+1} - u^l)`` with ``beta`` from :func:`nesterov_momentum`.
    The momentum starts afresh at every call (every outer iteration). Returns ``w^{N_e}``
    (``output="w"``, as eq. (12)) or ``u^{N_e}`` (``output="u"``, the sequence Lemma 8
    analyses)."""
    check_callable("grad_d", grad_d)
    _moduli(L, mu)
    _check_rows(W0, ("L", L), ("mu", mu))
    check_int("Ne", Ne, 0)
    check_choice("output", output, ("w", "u"))
    beta = _column(nesterov_momentum(L, mu))
    step = _column(1.0 / np.asarray(L, dtype=float))
    W = np.array(W0, dtype=float, copy=True)
    U = W.copy()
    for _ in range(Ne):
        U_new = W - step * grad_d(W)
        W = U_new + beta * (U_new - U)
        U = U_new
    return W if output == "w" else U
