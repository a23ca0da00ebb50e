"""Test instances of the checks: quadratic federated problems, on which one round of Fed-PLT
is an affine map of the state ``s = [x; z]`` (so its exact Lipschitz constant is the spectral
norm of its linear part), and small logistic costs (§VII of v2), on which Lipschitz
constants are estimated from sampled pairs.

The linear part of a round is obtained from the library's implementation of Algorithm 1
(:func:`fedrepro.fedplt.algorithm.fedplt_iteration`) applied to the basis vectors
(``engine="implementation"``), so that the checks test the code that runs the experiments;
an independent transcription of Algorithm 1 for quadratics (``engine="reference"``) is
kept to cross-check it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.linalg import spectral_norm
from fedrepro.core.validate import check_interval

if TYPE_CHECKING:
    from fedrepro.problems import FederatedProblem, QuadraticProblem

__all__ = [
    "AffineRound",
    "affine_round",
    "local_step_size",
    "quadratic_problem",
    "reference_round",
    "LogisticCost",
    "logistic_cost",
    "fixed_point",
]


def quadratic_problem(N: int, n: int, lam: float, lam_bar: float, rng: np.random.Generator,
                      *, identical: bool = False) -> QuadraticProblem:
    """A :class:`~fedrepro.problems.QuadraticProblem` with every ``A_i`` in
    ``F_{lam, lam_bar}``, extremes included (v2 §V tests, spec §10). ``identical=True``
    gives ``A_i = lam I`` for every agent when ``lam == lam_bar`` (the simplest cost)."""
    from fedrepro.problems.quadratic import QuadraticProblem, random_quadratic

    if identical:
        if lam != lam_bar:
            raise ValueError(f"identical=True needs lam_bar == lam, got lam={lam!r}, lam_bar={lam_bar!r}")
        A = np.broadcast_to(np.eye(n) * lam, (N, n, n)).copy()
        b = rng.standard_normal((N, n))
        return QuadraticProblem(A, b)
    return random_quadratic(N, n, lam, lam_bar, rng, include_extremes=True)


def local_step_size(theta: float, rho: float, lam: float, lam_bar: float) -> float:
    """Local GD step ``theta * 2/(lam_bar + 1/rho)``; ``theta`` in ``(0, 2)``, and ``(0, 1)``
    keeps ``chi < 1``; a step beyond the float range (``rho`` huge, ``lam_bar`` tiny) is refused."""
    check_interval("theta", theta, 0.0, 2.0, closed_low=False, closed_high=False)
    step = theta * ops.max_local_step(rho, lam, lam_bar)
    if not math.isfinite(step):
        raise ValueError(f"the step theta * 2/(lam_bar + 1/rho) overflows, got theta={theta!r}, rho={rho!r}, "
                         f"lam_bar={lam_bar!r}")
    return step


def fixed_point(problem: FederatedProblem, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x_bar, z_bar)`` of Fed-PLT with ``h = 0``: ``x_i = x*``, ``z_i = x* - rho grad f_i(x*)``
    (Proposition 1's fixed point, Lemma 3)."""
    xs = problem.x_star()
    X = np.broadcast_to(xs, (problem.N, problem.n)).copy()
    Z = X - rho * problem.grad(X)
    return X, Z


def reference_round(problem: QuadraticProblem, X: np.ndarray, Z: np.ndarray, *, rho: float, Ne: int,
                    solver: str, gamma: float | None, active: np.ndarray | None = None,
                    noise: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 for a quadratic problem, transcribed independently of the library's
    implementation, batched over a leading axis: ``X, Z`` of shape ``(B, N, n)``.

    ``solver`` is ``"gd"`` (eq. (11)) or ``"agd"`` (eq. (12), ``L_d = lam_bar + 1/rho``,
    ``mu_d = lam + 1/rho``, output ``w^Ne``). ``active`` (``(B, N)`` booleans) freezes the
    inactive agents (lines 11-12); ``noise`` (``(B, Ne, N, n)``) is added after each GD step
    (noisy GD, eq. (13)).
    """
    A, b = problem.A, problem.b
    y = Z.mean(axis=1, keepdims=True)
    V = 2 * y - Z
    W = X.copy()
    if solver == "gd":
        for ell in range(Ne):
            grad = np.einsum("ijk,bik->bij", A, W) - b + (W - V) / rho
            W = W - gamma * grad
            if noise is not None:
                W = W + noise[:, ell]
    elif solver == "agd":
        L = problem.lam_bar + 1 / rho
        mu = problem.lam + 1 / rho
        beta = (math.sqrt(L) - math.sqrt(mu)) / (math.sqrt(L) + math.sqrt(mu))
        U = W.copy()
        for _ in range(Ne):
            grad = np.einsum("ijk,bik->bij", A, W) - b + (W - V) / rho
            U_new = W - grad / L
            W = U_new + beta * (U_new - U)
            U = U_new
    else:
        raise ValueError(f"solver must be 'gd' or 'agd', got {solver!r}")
    X_new = W
    Z_new = Z + 2 * (X_new - y)
    if active is not None:
        keep = ~active[:, :, None]
        X_new = np.where(keep, X, X_new)
        Z_new = np.where(keep, Z, Z_new)
    return X_new, Z_new


@dataclass(frozen=True)
class AffineRound:
    """One full-participation round ``s -> M s + m`` with ``s = [vec(X); vec(Z)]`` (agent-major
    rows of ``X`` and ``Z``), and its fixed point ``s_bar``."""

    M: np.ndarray
    m: np.ndarray
    s_bar: np.ndarray

    @property
    def lipschitz(self) -> float:
        """Exact Lipschitz constant of the round: ``||M||_2``."""
        return spectral_norm(self.M)

    @property
    def radius(self) -> float:
        return float(np.max(np.abs(np.linalg.eigvals(self.M))))


def _implementation_round(problem, X, Z, rho, Ne, solver, gamma):
    from fedrepro.fedplt.algorithm import fedplt_iteration

    x_new, z_new, _ = fedplt_iteration(X, Z, problem, rho=rho, Ne=Ne, solver=solver, gamma=gamma)
    return np.asarray(x_new, dtype=float), np.asarray(z_new, dtype=float)


def affine_round(problem: QuadraticProblem, *, rho: float, Ne: int, solver: str = "gd",
                 gamma: float | None = None, engine: str = "implementation") -> AffineRound:
    """The affine round of Fed-PLT on a quadratic ``problem`` (full participation, ``h = 0``):
    its linear part from the images of the basis vectors minus the image of 0."""
    if engine not in ("implementation", "reference"):
        raise ValueError(f"engine must be 'implementation' or 'reference', got {engine!r}")
    N, n = problem.N, problem.n
    d = 2 * N * n
    states = np.concatenate([np.zeros((1, d)), np.eye(d)], axis=0)
    Xs = states[:, : N * n].reshape(-1, N, n)
    Zs = states[:, N * n:].reshape(-1, N, n)
    if engine == "reference":
        Xo, Zo = reference_round(problem, Xs, Zs, rho=rho, Ne=Ne, solver=solver, gamma=gamma)
    else:
        outs = [_implementation_round(problem, Xs[j], Zs[j], rho, Ne, solver, gamma)
                for j in range(d + 1)]
        Xo = np.stack([o[0] for o in outs])
        Zo = np.stack([o[1] for o in outs])
    images = np.concatenate([Xo.reshape(d + 1, -1), Zo.reshape(d + 1, -1)], axis=1)
    m = images[0]
    M = (images[1:] - m).T
    Xb, Zb = fixed_point(problem, rho)
    s_bar = np.concatenate([Xb.ravel(), Zb.ravel()])
    return AffineRound(M=M, m=m, s_bar=s_bar)


# --------------------------------------------------------------------------- logistic costs


@dataclass(frozen=True)
class LogisticCost:
    """``f(x) = (1/q) sum_h log(1 + exp(-b_h a_h x)) + eps ||x||^2/2`` (v2 §VII, convex case),
    in ``F_{eps, lambda_max(A^T A)/(4q) + eps}`` (spec §9.4)."""

    a: np.ndarray  # (q, n)
    b: np.ndarray  # (q,)
    eps: float

    @property
    def lam(self) -> float:
        return self.eps

    @property
    def lam_bar(self) -> float:
        q = self.a.shape[0]
        return float(np.linalg.eigvalsh(self.a.T @ self.a / q)[-1] / 4 + self.eps)

    def grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient at each row of ``x`` (shape ``(..., n)``)."""
        margin = -self.b * (x @ self.a.T)  # (..., q)
        s = 0.5 * (1 + np.tanh(margin / 2))  # sigmoid, overflow-free
        return -(s * self.b) @ self.a / self.a.shape[0] + self.eps * x

    def hessian(self, x: np.ndarray) -> np.ndarray:
        margin = -self.b * (x @ self.a.T)
        s = 0.5 * (1 + np.tanh(margin / 2))
        w = s * (1 - s) / self.a.shape[0]
        return np.einsum("...h,hi,hj->...ij", w, self.a, self.a) + self.eps * np.eye(self.a.shape[1])


def logistic_cost(n: int, q: int, eps: float, rng: np.random.Generator, scale: float = 1.0) -> LogisticCost:
    """A logistic cost with the spec's generator (§9.3): Gaussian features of std ``scale``,
    labels drawn from a logistic model with a Gaussian ground truth."""
    a = scale * rng.standard_normal((q, n))
    x_true = rng.standard_normal(n)
    p = 0.5 * (1 + np.tanh(a @ x_true / 2))
    b = np.where(rng.random(q) < p, 1.0, -1.0)
    return LogisticCost(a=a, b=b, eps=float(eps))


