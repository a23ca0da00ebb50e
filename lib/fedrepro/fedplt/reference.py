"""Fed-PLT written the straightforward way: the independent reference implementation.

This module restates v2 Algorithm 1 with gradient-descent local training (eq. (11)) as the
paper prints it, one agent at a time, so that the vectorised implementation in
:mod:`fedrepro.fedplt.algorithm` can be checked against it (tests) and timed against it
(``benchmarks/fedplt_vectorised.py``). It shares no computation with the vectorised code
beyond the problem's data, its moduli ``lam_i``, ``lam_bar_i`` and the reference point
``x*`` of the ``x_err`` metric (``problem.x_star()``):

* every agent's gradient ``grad f_i(w)`` is computed by :func:`agent_grad` from that agent's
  own data ``(A_i, b_i)`` (``problem.features[i]``, ``problem.labels[i]``) only, never through
  the problem's stacked oracle;
* the coordinator, the agents' local loops and the metrics are plain Python loops over the
  agents and over the ``N_e`` local steps.

It is deliberately slow (a Python loop over agents in the hot path) and is not used by any
experiment. Only :class:`~fedrepro.problems.logistic.LogisticProblem` (v1 and v2 setups) is
supported, with the GD local solver, full participation or a given participation mask, and
no composite term (``h = 0``, so ``y_{k+1}`` is the plain average of Algorithm 1, line 2).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.core.validate import check_int, check_positive
from fedrepro.problems.logistic import LogisticProblem

__all__ = ["agent_grad", "fedplt_iteration_loop", "reference_step_size", "run_fedplt_loop"]

MU_FLOOR = 1e-3  # strong-convexity floor of d_i for a weakly convex f_i (same convention as algorithm.py)


# ---------------------------------------------------------------------------------------
# one agent's cost
# ---------------------------------------------------------------------------------------
def _sigmoid(t: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-t))`` evaluated without overflow for either sign of ``t``."""
    out = np.empty_like(t)
    pos = t >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-t[pos]))
    e = np.exp(t[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def agent_grad(problem: LogisticProblem, i: int, w: np.ndarray) -> np.ndarray:
    """``grad f_i(w)`` of agent ``i``'s regularised logistic cost (v2 §VII), from its own data.

    ``f_i(w) = (1/q) sum_h log(1 + exp(-b_h a_h w)) + c r(w)`` with ``(a_h, b_h)`` the rows of
    ``problem.features[i]`` and ``problem.labels[i]``, ``c = problem.reg_weight`` and
    ``r(w) = ||w||^2 / 2`` (``reg="l2"``) or ``sum_j w_j^2 / (1 + w_j^2)`` (``"nonconvex"``):

        grad f_i(w) = -(1/q) sum_h b_h sigmoid(-b_h a_h w) a_h + c grad r(w).
    """
    A = problem.features[i]  # (q, n)
    b = problem.labels[i]  # (q,)
    margins = b * (A @ w)
    data = -(A.T @ (b * _sigmoid(-margins))) / A.shape[0]
    if problem.reg == "l2":
        reg = w
    else:
        reg = 2.0 * w / (1.0 + w * w) ** 2
    return data + problem.reg_weight * reg


# ---------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------
def _check_problem(problem: Any) -> LogisticProblem:
    if not isinstance(problem, LogisticProblem):
        raise ValueError(f"problem must be a LogisticProblem (the reference needs per-agent data), "
                         f"got {type(problem).__name__}")
    return problem


def _check_state(problem: LogisticProblem, a: Any, name: str) -> np.ndarray:
    arr = np.array(a, dtype=float)
    if arr.shape != (problem.N, problem.n):
        raise ValueError(f"{name} must have shape ({problem.N}, {problem.n}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _check_active(problem: LogisticProblem, active: Any) -> list[bool]:
    if active is None:
        return [True] * problem.N
    mask = np.asarray(active)
    if mask.dtype != bool or mask.shape != (problem.N,):
        raise ValueError(f"active must be None or a boolean mask of shape ({problem.N},), "
                         f"got dtype {mask.dtype} and shape {mask.shape}")
    return [bool(m) for m in mask]


def reference_step_size(problem: LogisticProblem, rho: float) -> float:
    """Default GD step ``2 / (L_d + mu_d)`` for ``d_i(w) = f_i(w) + ||w - v||^2 / (2 rho)``
    (v2 §IV-B), with ``L_d = lam_bar + 1/rho`` and ``mu_d = lam + 1/rho`` (floored at
    ``1e-3`` when ``f_i`` is only weakly convex), from the agents' moduli one by one."""
    problem, rho = _check_problem(problem), check_positive("rho", rho)
    lam = min(float(v) for v in problem.lam_i)
    lam_bar = max(float(v) for v in problem.lam_bar_i)
    mu_d = lam + 1.0 / rho
    if lam < 0:
        mu_d = max(mu_d, MU_FLOOR)
    return 2.0 / (lam_bar + 1.0 / rho + mu_d)


def _agent_steps(problem: LogisticProblem, rho: float, gamma: Any) -> list[float]:
    """One step size per agent: the default, a common scalar or an array of shape (N,),
    each in ``(0, 2 / (lam_bar_i + 1/rho))`` (v2 eq. (11), with ``lam_bar``; see algorithm.py)."""
    N = problem.N
    if gamma is None:
        return [reference_step_size(problem, rho)] * N
    try:
        g = np.asarray(gamma, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be None, a number or an array of shape ({N},), got {gamma!r}") from None
    if g.ndim == 0:
        upper = 2.0 / (max(float(v) for v in problem.lam_bar_i) + 1.0 / rho)
        if not (math.isfinite(float(g)) and 0 < float(g) < upper):
            raise ValueError(f"gamma must lie in (0, 2/(lam_bar + 1/rho)) = (0, {upper:.6g}), got {gamma!r}")
        return [float(g)] * N
    if g.shape != (N,):
        raise ValueError(f"gamma must be a scalar or an array of shape ({N},), got shape {g.shape}")
    steps = []
    for i in range(N):
        upper = 2.0 / (float(problem.lam_bar_i[i]) + 1.0 / rho)
        if not (math.isfinite(float(g[i])) and 0 < float(g[i]) < upper):
            raise ValueError(f"gamma[{i}] must lie in (0, 2/(lam_bar_i + 1/rho)) = (0, {upper:.6g}), "
                             f"got {g[i]!r}")
        steps.append(float(g[i]))
    return steps


# ---------------------------------------------------------------------------------------
# Algorithm 1, agent by agent
# ---------------------------------------------------------------------------------------
def _iteration(x: np.ndarray, z: np.ndarray, problem: LogisticProblem, rho: float, Ne: int,
               steps: list[float], active: list[bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    N, n = problem.N, problem.n
    # line 2: the coordinator averages the z_i it holds (h = 0)
    y = np.zeros(n)
    for i in range(N):
        y = y + z[i]
    y = y / N
    x_new, z_new = x.copy(), z.copy()
    for i in range(N):  # line 3
        if not active[i]:  # line 12: inactive agents keep x_i, z_i
            continue
        v = 2.0 * y - z[i]  # line 5
        w = x[i].copy()  # warm start w^0 = x_{i,k}
        for _ in range(Ne):  # lines 6-8, eq. (11)
            w = w - steps[i] * (agent_grad(problem, i, w) + (w - v) / rho)
        x_new[i] = w  # line 9
        z_new[i] = z[i] + 2.0 * (w - y)  # line 10
    return x_new, z_new, y


def fedplt_iteration_loop(x: Any, z: Any, problem: LogisticProblem, *, rho: float, Ne: int,
                          gamma: Any = None,
                          active: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One outer iteration of Fed-PLT (v2 Algorithm 1) with GD local training (eq. (11)),
    computed agent by agent (independent reference; see the module docstring).

    ``x``, ``z``: arrays (N, n); ``rho > 0``; ``Ne >= 1`` local steps; ``gamma``: None (the
    default ``2 / (lam_bar + lam + 2/rho)``), a scalar or an array (N,) in
    ``(0, 2/(lam_bar_i + 1/rho))``; ``active``: None (all agents) or a boolean mask (N,).
    Returns ``(x_new, z_new, y)`` with ``y = y_{k+1}`` of shape ``(n,)``.
    """
    problem = _check_problem(problem)
    rho = check_positive("rho", rho)
    Ne = check_int("Ne (local steps)", Ne, 1)
    steps = _agent_steps(problem, rho, gamma)
    x = _check_state(problem, x, "x")
    z = _check_state(problem, z, "z")
    mask = _check_active(problem, active)
    return _iteration(x, z, problem, rho, Ne, steps, mask)


def _grad_sq_at_mean(problem: LogisticProblem, x: np.ndarray) -> float:
    """``||sum_i grad f_i(xbar)||^2`` with ``xbar = mean_i x_i`` (the v2 §VII metric)."""
    N = problem.N
    xbar = np.zeros(problem.n)
    for i in range(N):
        xbar = xbar + x[i]
    xbar = xbar / N
    total = np.zeros(problem.n)
    for i in range(N):
        total = total + agent_grad(problem, i, xbar)
    return float(total @ total)


def run_fedplt_loop(problem: LogisticProblem, *, rho: float, Ne: int, K: int, gamma: Any = None,
                    x0: Any = None, z0: Any = None) -> dict[str, Any]:
    """``K`` iterations of :func:`fedplt_iteration_loop` with every agent active, from ``x0``,
    ``z0`` (default zeros), recording ``K + 1`` values (index 0 is the initial point) of

    * ``grad_sq[k] = ||sum_i grad f_i(xbar_k)||^2``, ``xbar_k = mean_i x_{i,k}``;
    * ``x_err[k] = ||x_k - 1 (x) x*||`` (Frobenius norm over the stacked models), with ``x*``
      from ``problem.x_star()`` (None for a weakly convex problem, whose stationary point is
      not a reference the vectorised run uses either).

    Returns a dict with ``grad_sq``, ``x_err``, the final ``x``, ``z``, ``y`` and the step
    sizes used (``gamma``, one per agent).
    """
    problem = _check_problem(problem)
    rho = check_positive("rho", rho)
    Ne = check_int("Ne (local steps)", Ne, 1)
    K = check_int("K (outer iterations)", K, 0)
    steps = _agent_steps(problem, rho, gamma)
    x = _check_state(problem, x0, "x0") if x0 is not None else np.zeros((problem.N, problem.n))
    z = _check_state(problem, z0, "z0") if z0 is not None else np.zeros((problem.N, problem.n))
    mask = [True] * problem.N
    x_star = problem.x_star() if problem.convex else None

    def x_error(x: np.ndarray) -> float:
        total = 0.0
        for i in range(problem.N):
            d = x[i] - x_star
            total += float(d @ d)
        return math.sqrt(total)

    grad_sq = [_grad_sq_at_mean(problem, x)]
    x_err = [x_error(x)] if x_star is not None else None
    y = z.mean(axis=0)
    for _ in range(K):
        x, z, y = _iteration(x, z, problem, rho, Ne, steps, mask)
        grad_sq.append(_grad_sq_at_mean(problem, x))
        if x_err is not None:
            x_err.append(x_error(x))
    return {"grad_sq": np.array(grad_sq), "x_err": None if x_err is None else np.array(x_err),
            "x": x, "z": z, "y": y, "gamma": np.array(steps)}
