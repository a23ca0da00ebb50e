"""The federated-problem protocol shared by every cost family.

A federated problem (Fed-PLT v2 eq. (5) with ``h = 0``) is ``min_x F(x) = sum_i f_i(x)`` over
``N`` agents in dimension ``n``, with ``f_i`` in ``F_{lam_i, lam_bar_i}`` (``lam_i``-strongly
convex, ``lam_bar_i``-smooth; Assumption 1). Every method is vectorised over agents: a stack
``X`` of shape ``(N, n)`` holds one point per agent (row ``i`` is ``x_i``), and no method loops
over agents in Python.

Methods take an optional ``agents`` index array: then ``X`` has one row per listed agent and
row ``j`` is evaluated with agent ``agents[j]``'s cost. Fed-PLT uses this so that inactive
agents do no computation (Algorithm 1, line 12).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["FederatedProblem", "newton_solve"]


def newton_solve(grad: Callable[[np.ndarray], np.ndarray], hess: Callable[[np.ndarray], np.ndarray],
                 x0: np.ndarray, *, tol: float = 1e-14, max_iter: int = 100,
                 min_step: float = 2.0 ** -40,
                 quadratic_region: float = 1e-8) -> tuple[np.ndarray, dict[str, Any]]:
    """Damped Newton's method for ``grad(x) = 0``, vectorised over a leading batch axis.

    ``x0`` has shape ``(B, n)``; ``grad(X) -> (B, n)`` and ``hess(X) -> (B, n, n)``. Each row
    takes Newton steps ``d = -H^{-1} g`` with backtracking on the merit ``||g||`` (Armijo
    condition ``||g(x + s d)||^2 <= (1 - 1e-4 s) ||g(x)||^2``; ``d`` is a descent direction of
    ``||g||^2`` whenever ``H`` is invertible). A row stops when ``||g|| <= tol`` or when no step
    down to ``min_step`` decreases ``||g||`` any more (round-off floor), or at once when the
    full step fails although ``||g|| <= quadratic_region`` (there a full Newton step can only
    fail through round-off). Returns ``X`` and an
    info dict with ``grad_norm`` (per row), ``iterations`` and ``converged`` (per row, the
    ``tol`` test).
    """
    x = np.array(x0, dtype=float, copy=True)
    g = grad(x)
    gn2 = np.sum(g * g, axis=-1)
    active = gn2 > tol * tol
    it = 0
    while it < max_iter and np.any(active):
        it += 1
        idx = np.flatnonzero(active)
        H = hess(x)[idx]
        d = -np.linalg.solve(H, g[idx][..., None])[..., 0]
        step = np.ones(idx.size)
        pending = np.ones(idx.size, dtype=bool)
        while np.any(pending):
            trial = x.copy()
            trial[idx] = x[idx] + step[:, None] * d
            gt = grad(trial)[idx]
            gt2 = np.sum(gt * gt, axis=-1)
            ok = pending & (gt2 <= (1.0 - 1e-4 * step) * gn2[idx])
            if np.any(ok):
                rows = idx[ok]
                x[rows] = trial[rows]
                g[rows] = gt[ok]
                gn2[rows] = gt2[ok]
                pending &= ~ok
            stalled = pending & ((step * 0.5 < min_step)
                                 | ((step == 1.0) & (gn2[idx] <= quadratic_region ** 2)))
            if np.any(stalled):
                active[idx[stalled]] = False  # no further progress: round-off floor
                pending &= ~stalled
            step = np.where(pending, 0.5 * step, step)
        active &= gn2 > tol * tol
    gnorm = np.sqrt(gn2)
    return x, {"grad_norm": gnorm, "iterations": it, "converged": gnorm <= tol}


class FederatedProblem(ABC):
    """Protocol of a federated problem ``min_x sum_i f_i(x)`` (Fed-PLT v2 eq. (5), ``h = 0``).

    Attributes: ``N`` agents, dimension ``n``; ``lam_i``/``lam_bar_i`` (arrays ``(N,)``): the
    strong-convexity and smoothness moduli of each ``f_i`` (Assumption 1, Remark 1);
    ``lam = min_i lam_i`` and ``lam_bar = max_i lam_bar_i`` the common ones; ``convex``: whether
    every ``f_i`` is convex (``lam >= 0``); a weakly convex cost has ``lam < 0``.

    Subclasses implement ``_cost``, ``_grad`` and ``_hessian`` on validated inputs.
    """

    N: int
    n: int
    lam_i: np.ndarray
    lam_bar_i: np.ndarray

    # ---- constants ---------------------------------------------------------------------
    @property
    def lam(self) -> float:
        """Common strong-convexity modulus ``min_i lam_i`` (negative if only weakly convex)."""
        return float(np.min(self.lam_i))

    @property
    def lam_bar(self) -> float:
        """Common smoothness modulus ``max_i lam_bar_i``."""
        return float(np.max(self.lam_bar_i))

    @property
    def convex(self) -> bool:
        return self.lam >= 0.0

    # ---- validation --------------------------------------------------------------------
    def _agents(self, agents: Any) -> np.ndarray | None:
        if agents is None:
            return None
        idx = np.asarray(agents)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"agents must be a 1-D integer index array with entries in [0, {self.N}), "
                             f"got dtype {idx.dtype} and shape {idx.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.N):
            raise ValueError(f"agents entries must lie in [0, {self.N}), got {idx.min()}..{idx.max()}")
        return idx

    def _check_X(self, X: Any, agents: np.ndarray | None, name: str = "X") -> np.ndarray:
        arr = np.asarray(X, dtype=float)
        rows = self.N if agents is None else agents.size
        if arr.shape != (rows, self.n):
            raise ValueError(f"{name} must have shape ({rows}, {self.n}) (one row per agent), got {arr.shape}")
        return arr

    def _check_x(self, x: Any, name: str = "x") -> np.ndarray:
        arr = np.asarray(x, dtype=float)
        if arr.shape != (self.n,):
            raise ValueError(f"{name} must have shape ({self.n},), got {arr.shape}")
        return arr

    # ---- per-agent oracles -------------------------------------------------------------
    @abstractmethod
    def _cost(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray: ...

    @abstractmethod
    def _grad(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray: ...

    @abstractmethod
    def _hessian(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray: ...

    def cost(self, X: Any, agents: Any = None) -> np.ndarray:
        """``f_i(x_i)`` for each row: ``X (N, n) -> (N,)``."""
        idx = self._agents(agents)
        return self._cost(self._check_X(X, idx), idx)

    def grad(self, X: Any, agents: Any = None) -> np.ndarray:
        """``grad f_i(x_i)`` row-wise: ``X (N, n) -> (N, n)``."""
        idx = self._agents(agents)
        return self._grad(self._check_X(X, idx), idx)

    def hessian(self, X: Any, agents: Any = None) -> np.ndarray:
        """``Hess f_i(x_i)`` row-wise: ``X (N, n) -> (N, n, n)``."""
        idx = self._agents(agents)
        return self._hessian(self._check_X(X, idx), idx)

    # ---- global cost -------------------------------------------------------------------
    def total_cost(self, x: Any) -> float:
        """``F(x) = sum_i f_i(x)``."""
        x = self._check_x(x)
        return float(np.sum(self._cost(np.broadcast_to(x, (self.N, self.n)), None)))

    def total_grad(self, x: Any) -> np.ndarray:
        """``grad F(x) = sum_i grad f_i(x)``: ``(n,) -> (n,)``."""
        x = self._check_x(x)
        return np.sum(self._grad(np.broadcast_to(x, (self.N, self.n)), None), axis=0)

    def total_hessian(self, x: Any) -> np.ndarray:
        """``Hess F(x) = sum_i Hess f_i(x)``: ``(n,) -> (n, n)``."""
        x = self._check_x(x)
        return np.sum(self._hessian(np.broadcast_to(x, (self.N, self.n)), None), axis=0)

    def x_star(self) -> np.ndarray:
        """Minimiser of ``F = sum_i f_i`` (cached; a copy is returned).

        Default: damped Newton (:func:`newton_solve`) from ``x = 0`` until
        ``||grad F|| <= 1e-14`` or no further progress; the final gradient norm is kept in
        ``x_star_info``. For a weakly convex problem this is the stationary point Newton
        reaches from 0; ``x_star_info["hessian_min_eig"]`` says whether it is a local
        minimiser.
        """
        if getattr(self, "_x_star_cache", None) is None:
            self._x_star_cache, self.x_star_info = self._compute_x_star()
        return self._x_star_cache.copy()

    def _compute_x_star(self) -> tuple[np.ndarray, dict[str, Any]]:
        x, info = newton_solve(lambda X: self.total_grad(X[0])[None],
                               lambda X: self.total_hessian(X[0])[None],
                               np.zeros((1, self.n)), tol=1e-14, max_iter=200)
        out = {"grad_norm": float(info["grad_norm"][0]), "iterations": info["iterations"],
               "hessian_min_eig": float(np.linalg.eigvalsh(self.total_hessian(x[0]))[0])}
        return x[0], out

    # ---- exact local prox (the N_e -> infinity limit of local training) ----------------
    def local_prox(self, V: Any, rho: float, *, agents: Any = None, x0: Any = None,
                   tol: float = 1e-15) -> np.ndarray:
        """``prox_{rho f_i}(v_i)`` for each row (Fed-PLT v2 eq. (10)): the minimiser of
        ``d_i(w) = f_i(w) + ||w - v_i||^2 / (2 rho)``.

        Default: damped Newton on ``d_i`` (vectorised over agents) from ``x0`` (or ``V``) to
        machine precision (``||grad d_i|| <= tol * max(1, ||v_i|| / rho)`` or no further
        progress). Requires ``lam + 1/rho > 0`` (``d_i`` strongly convex).
        """
        idx = self._agents(agents)
        V = self._check_X(V, idx, "V")
        rho = float(rho)
        if not rho > 0:
            raise ValueError(f"rho must be > 0, got {rho}")
        if self.lam + 1.0 / rho <= 0:
            raise ValueError(f"rho must satisfy lam + 1/rho > 0 (here rho < {-1.0 / self.lam:.6g}) "
                             f"for the local prox to be well defined, got rho={rho}")
        W0 = V.copy() if x0 is None else self._check_X(x0, idx, "x0").copy()
        return self._local_prox(V, rho, idx, W0, tol)

    def _local_prox(self, V, rho, idx, W0, tol):
        scale = max(1.0, float(np.max(np.abs(V), initial=0.0)) / rho)
        eye = np.eye(self.n)
        W, _ = newton_solve(lambda W: self._grad(W, idx) + (W - V) / rho,
                            lambda W: self._hessian(W, idx) + eye / rho,
                            W0, tol=tol * scale, max_iter=100, quadratic_region=1e-8 * scale)
        return W

    # ---- mini-batch oracle (problems with finite sums only) ----------------------------
    @property
    def samples_per_agent(self) -> int | None:
        """Number of data points ``q_i`` per agent (finite-sum costs), else ``None``."""
        return None

    def stochastic_grad(self, X: Any, batch_size: int, rng: np.random.Generator,
                        agents: Any = None) -> np.ndarray:
        raise ValueError(f"{type(self).__name__} is not a finite-sum problem: stochastic_grad "
                         "(and the 'sgd' solver) needs a problem with data points, e.g. LogisticProblem")
