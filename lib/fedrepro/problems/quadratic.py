"""Federated quadratic problems: ``f_i(x) = x^T A_i x / 2 - b_i^T x``.

With ``A_i`` symmetric positive definite, ``f_i`` lies in ``F_{lam_i, lam_bar_i}`` with
``lam_i``/``lam_bar_i`` the extreme eigenvalues of ``A_i`` (Assumption 1), the minimiser of
``F = sum_i f_i`` solves ``(sum_i A_i) x = sum_i b_i``, and the local prox of Fed-PLT v2
eq. (10) is the linear solve ``(I + rho A_i)^{-1} (v_i + rho b_i)``. (v2 footnote 6 writes
``f_i = x^T A_i x / 2 + <b_i, x>`` and ``prox = (I + rho A_i)^{-1} (v_i - b_i)``; the
optimality condition ``A_i x + b_i + (x - v_i)/rho = 0`` gives ``(v_i - rho b_i)``, so the
footnote drops a factor ``rho``, harmless only at ``rho = 1``.) On quadratics the Fed-PLT map
is affine, which makes them the test bed of the contraction checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.core.validate import check_array, check_bool, check_finite, check_int, check_positive
from fedrepro.problems.base import FederatedProblem

__all__ = ["QuadraticProblem", "random_quadratic"]


class QuadraticProblem(FederatedProblem):
    """``f_i(x) = x^T A_i x / 2 - b_i^T x`` with ``A`` of shape ``(N, n, n)`` (each symmetric
    positive definite) and ``b`` of shape ``(N, n)``."""

    def __init__(self, A: Any, b: Any):
        A = np.array(check_array("A", A, finite=False, nonempty=False), dtype=float)
        b = np.array(check_array("b", b, finite=False, nonempty=False), dtype=float)
        if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[0] < 1 or A.shape[1] < 1:
            raise ValueError(f"A must have shape (N, n, n) with N, n >= 1, got {A.shape}")
        N, n = A.shape[:2]
        if b.shape != (N, n):
            raise ValueError(f"b must have shape ({N}, {n}) to match A, got {b.shape}")
        check_array("A", A)
        check_array("b", b)
        asym = np.max(np.abs(A - A.transpose(0, 2, 1)))
        if asym > 1e-10 * max(1.0, np.max(np.abs(A))):
            raise ValueError(f"A must be symmetric (each A_i); max |A - A^T| = {asym:.3g}")
        A = 0.5 * (A + A.transpose(0, 2, 1))
        eig = np.linalg.eigvalsh(A)
        if np.any(eig[:, 0] <= 0):
            raise ValueError(f"A must be positive definite (each A_i); smallest eigenvalue {eig[:, 0].min():.3g}")
        self.A, self.b = A, b
        self.N, self.n = int(N), int(n)
        self.eigenvalues = eig
        self.lam_i = eig[:, 0].copy()
        self.lam_bar_i = eig[:, -1].copy()
        self._x_star_cache = None

    def _sel(self, agents):
        return (self.A, self.b) if agents is None else (self.A[agents], self.b[agents])

    def _cost(self, X, agents):
        A, b = self._sel(agents)
        AX = np.matmul(A, X[:, :, None])[:, :, 0]
        return 0.5 * np.sum(X * AX, axis=1) - np.sum(b * X, axis=1)

    def _grad(self, X, agents):
        A, b = self._sel(agents)
        return np.matmul(A, X[:, :, None])[:, :, 0] - b

    def _hessian(self, X, agents):
        A, _ = self._sel(agents)
        return A.copy()

    def _compute_x_star(self):
        x = np.linalg.solve(self.A.sum(axis=0), self.b.sum(axis=0))
        return x, {"grad_norm": float(np.linalg.norm(self.total_grad(x))), "iterations": 0,
                   "hessian_min_eig": float(np.linalg.eigvalsh(self.A.sum(axis=0))[0])}

    def _local_prox(self, V, rho, idx, W0, tol):
        A, b = self._sel(idx)
        M = np.eye(self.n) + rho * A
        return np.linalg.solve(M, (V + rho * b)[:, :, None])[:, :, 0]


def random_quadratic(N: int, n: int, lam: float, lam_bar: float,
                     rng: np.random.Generator | int | None = None,
                     include_extremes: bool = True) -> QuadraticProblem:
    """A random :class:`QuadraticProblem` with every ``A_i`` in ``F_{lam, lam_bar}``.

    ``A_i = Q_i diag(e_i) Q_i^T`` with ``Q_i`` a Haar-random orthogonal matrix and eigenvalues
    ``e_i`` uniform on ``[lam, lam_bar]``; with ``include_extremes`` each ``A_i`` has both
    ``lam`` and ``lam_bar`` among its eigenvalues (for ``n = 1``, agents alternate between the
    two), so the common moduli are exactly ``lam`` and ``lam_bar``. ``b_i ~ N(0, I_n)``.
    """
    N, n = check_int("N", N), check_int("n", n)
    lam = check_positive("lam", lam)
    lam_bar = check_finite("lam_bar", lam_bar)
    if lam_bar < lam:
        raise ValueError(f"lam_bar must be finite and >= lam = {lam}, got {lam_bar}")
    if not (rng is None or isinstance(rng, (np.random.Generator, np.random.SeedSequence))):
        check_int("rng (a seed)", rng, 0)
    check_bool("include_extremes", include_extremes)
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    G = rng.standard_normal((N, n, n))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]  # Haar measure
    e = rng.uniform(lam, lam_bar, size=(N, n))
    if include_extremes:
        if n >= 2:
            e[:, 0], e[:, 1] = lam, lam_bar
        else:
            e[:, 0] = np.where(np.arange(N) % 2 == 0, lam, lam_bar)
    A = np.matmul(Q * e[:, None, :], Q.transpose(0, 2, 1))
    A = 0.5 * (A + A.transpose(0, 2, 1))
    b = rng.standard_normal((N, n))
    problem = QuadraticProblem(A, b)
    # the exact spectra are known: use them rather than the eigvalsh round-off (~1e-16)
    problem.eigenvalues = np.sort(e, axis=1)
    problem.lam_i, problem.lam_bar_i = e.min(axis=1), e.max(axis=1)
    return problem
