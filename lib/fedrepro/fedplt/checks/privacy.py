"""Checks of the privacy statements: Lemma 5 (RDP to ADP) and Proposition 4 (the RDP bound
of Fed-PLT with noisy gradient descent).

Proposition 4 is evaluated exactly on a linear-Gaussian instance (spec §10.10): per-sample
losses ``l(x; xi) = ||x - xi||^2/2 + r ||x||^2/2`` (so ``lambda = lambda-bar = 1 + r`` and
``f_i(x) = (1+r)||x||^2/2 - mean(xi)^T x + const``), two datasets that differ in one sample
of agent 0 by a vector of norm ``L`` (Assumption 3 then holds with equality), noisy GD as
local solver, full participation and ``x_{i,0} ~ N(0, 2 tau^2 I/lambda)``, ``z_{i,0} = 0``.
Every iterate is then Gaussian with a covariance that does not depend on the data, so the
Rényi divergence of order ``alpha`` between the two runs is exactly
``alpha/2 * dmu^T Sigma^+ dmu`` for any collection of iterates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive
from fedrepro.fedplt.checks import _validate as _v
from fedrepro.fedplt.checks.instances import affine_round
from fedrepro.fedplt.checks.result import CheckResult, make_result
from fedrepro.privacy.validate import check_delta, check_order, real_array

__all__ = [
    "Lemma5Instance", "check_lemma5",
    "Proposition4Instance", "PRIVACY_VIEWS", "check_proposition4", "gaussian_renyi_divergence",
    "linear_gaussian_moments",
]

# --------------------------------------------------------------------------- Lemma 5


@dataclass(frozen=True)
class Lemma5Instance:
    """Gaussian mechanism with sensitivity ``sensitivity`` and noise std ``sigma``; Rényi order
    ``alpha``; target ``delta``."""

    alpha: float
    sensitivity: float
    sigma: float
    delta: float

    def __post_init__(self) -> None:
        check_order(self.alpha)
        check_positive("sensitivity", self.sensitivity)
        check_positive("sigma", self.sigma)
        check_delta(self.delta)


def check_lemma5(inst: Lemma5Instance) -> CheckResult:
    """Lemma 5: ``(alpha, eps)``-RDP implies ``(eps + log(1/delta)/(alpha-1), delta)``-ADP.

    Observed: the exact ``delta`` of the Gaussian mechanism at that ADP epsilon (its privacy
    profile, Balle & Wang 2018); bound: ``delta``. Tolerance ``rtol = 1e-9``: both sides are
    closed forms evaluated in double precision.
    """
    from fedrepro.fedplt.privacy_bounds import lemma5_rdp_to_dp
    from fedrepro.privacy.gaussian import analytic_gaussian_log_delta, gaussian_rdp

    rdp = gaussian_rdp(inst.alpha, inst.sensitivity, inst.sigma)
    eps = lemma5_rdp_to_dp(rdp, inst.alpha, inst.delta)
    log_exact = analytic_gaussian_log_delta(eps, inst.sensitivity, inst.sigma)  # no underflow
    return make_result(math.exp(log_exact), inst.delta, rtol=1e-9, rdp_epsilon=rdp, adp_epsilon=eps,
                       log_ratio=log_exact - math.log(inst.delta))


# --------------------------------------------------------------------------- Proposition 4

#: What an observer sees: ``"agent"`` the released model ``x_{0,K}`` of the agent whose
#: sample differs (Proposition 4's ``X_{i,K}``), ``"models"`` all final models ``x_K``,
#: ``"state"`` the final state ``(x_K, z_K)``, ``"transcript"`` every message the
#: coordinator receives, ``z_1, ..., z_K``, together with the released ``x_K``.
PRIVACY_VIEWS = ("agent", "models", "state", "transcript")


@dataclass(frozen=True)
class Proposition4Instance:
    """Linear-Gaussian instance of Proposition 4 (see the module docstring).

    ``theta`` sets the local step ``gamma = theta * 2/(lambda-bar + 1/rho)`` (Proposition 4
    requires ``theta < 1``); ``seed`` draws the data and the direction of the changed sample.
    """

    N: int = 3
    n: int = 1
    q: int = 10
    r: float = 0.5
    rho: float = 1.0
    Ne: int = 5
    K: int = 20
    tau: float = 1.0
    theta: float = 0.5
    L: float = 1.0
    alpha: float = 2.0
    seed: int = 0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n", "q")
        check_nonnegative("r", self.r)
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)
        _v.sizes(self, "K")
        check_positive("tau", self.tau)
        check_interval("theta", self.theta, 0.0, 1.0, closed_low=False, closed_high=False)
        check_positive("L", self.L)
        check_order(self.alpha)
        _v.seed(self)


def _problems(inst: Proposition4Instance):
    from fedrepro.problems.quadratic import QuadraticProblem

    rng = np.random.default_rng(inst.seed)
    lam = 1.0 + inst.r
    A = np.broadcast_to(lam * np.eye(inst.n), (inst.N, inst.n, inst.n)).copy()
    xi_mean = rng.standard_normal((inst.N, inst.n))
    direction = rng.standard_normal(inst.n)
    direction *= inst.L / np.linalg.norm(direction)
    b_prime = xi_mean.copy()
    b_prime[0] += direction / inst.q  # one sample of agent 0 moves by a vector of norm L
    return QuadraticProblem(A, xi_mean), QuadraticProblem(A, b_prime), lam


def linear_gaussian_moments(inst: Proposition4Instance, engine: str = "implementation"
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(M, dm, Q, Sigma0, gamma)`` of the linear-Gaussian instance: the state recursion is
    ``s_{k+1} = M s_k + m(D) + e_k`` with ``e_k ~ N(0, Q)``; ``dm = m(D) - m(D')``;
    ``Sigma0`` is the covariance of ``s_0``."""
    P, P_prime, lam = _problems(inst)
    gamma = inst.theta * ops.max_local_step(inst.rho, lam, lam)
    r1 = affine_round(P, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=gamma, engine=engine)
    r2 = affine_round(P_prime, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=gamma, engine=engine)
    dm = r1.m - r2.m
    Nn = inst.N * inst.n
    # noise of one round: X_hat - X = sum_h g^(Ne-1-h) t^h with g = 1 - gamma(lam + 1/rho)
    g = 1 - gamma * (lam + 1 / inst.rho)
    var = 2 * gamma * inst.tau ** 2 * np.sum(g ** (2 * np.arange(inst.Ne)))
    B = np.concatenate([np.eye(Nn), 2 * np.eye(Nn)], axis=0)  # x gets e, z gets 2e
    Q = var * B @ B.T
    Sigma0 = np.zeros((2 * Nn, 2 * Nn))
    Sigma0[:Nn, :Nn] = 2 * inst.tau ** 2 / lam * np.eye(Nn)
    return r1.M, dm, Q, Sigma0, gamma


def gaussian_renyi_divergence(alpha: float, dmu: np.ndarray, Sigma: np.ndarray) -> float:
    """``D_alpha(N(mu, Sigma) || N(mu', Sigma)) = alpha/2 dmu^T Sigma^+ dmu``; ``inf`` when
    ``dmu`` leaves the range of ``Sigma`` (the two laws are then mutually singular).

    ``alpha``: a Rényi order in ``(1, inf)``; ``dmu``: a non-empty finite vector of length
    ``d``; ``Sigma``: a finite ``d x d`` covariance (symmetric positive semidefinite, up to
    round-off: eigenvalues below ``-1e-8`` times the largest magnitude are refused). Array
    inputs are used as given; other sequences are converted with :func:`numpy.asarray`."""
    check_order(alpha, "alpha")
    dmu_arr = real_array("dmu", dmu)
    if dmu_arr.ndim != 1 or dmu_arr.size == 0 or not np.all(np.isfinite(dmu_arr)):
        raise ValueError(f"dmu must be a non-empty finite vector, got {dmu!r}")
    d = dmu_arr.size
    Sigma_arr = real_array("Sigma", Sigma)
    if Sigma_arr.shape != (d, d) or not np.all(np.isfinite(Sigma_arr)):
        raise ValueError(f"Sigma must be a finite {d} x {d} matrix (dmu has length {d}), got shape "
                         f"{Sigma_arr.shape}")
    if not isinstance(dmu, np.ndarray):
        dmu = np.asarray(dmu)
    if not isinstance(Sigma, np.ndarray):
        Sigma = np.asarray(Sigma)
    w, V = np.linalg.eigh(0.5 * (Sigma + Sigma.T))
    if not np.all(np.isfinite(w)):
        raise ValueError("Sigma is too large: its eigenvalues overflow")
    if w.min() < -1e-8 * np.abs(w).max():
        raise ValueError(f"Sigma must be positive semidefinite, got an eigenvalue {w.min():g} "
                         f"(largest magnitude {np.abs(w).max():g})")
    keep = w > 1e-12 * max(w.max(), 1e-300)
    coef = V.T @ dmu
    outside = np.linalg.norm(coef[~keep])
    if outside > 1e-9 * max(np.linalg.norm(dmu), 1e-300):
        return float("inf")
    return float(alpha / 2 * np.sum(coef[keep] ** 2 / w[keep]))


def _divergence(inst: Proposition4Instance, view: str, engine: str) -> float:
    M, dm, Q, Sigma0, _ = linear_gaussian_moments(inst, engine)
    d = M.shape[0]
    Nn = d // 2
    K = inst.K
    mus = [np.zeros(d)]
    Sig = [Sigma0]
    for _ in range(K):
        mus.append(M @ mus[-1] + dm)
        Sig.append(M @ Sig[-1] @ M.T + Q)
    if view == "agent":
        idx = np.arange(inst.n)  # x_{0,K}
        return gaussian_renyi_divergence(inst.alpha, mus[K][idx], Sig[K][np.ix_(idx, idx)])
    if view == "models":
        idx = np.arange(Nn)
        return gaussian_renyi_divergence(inst.alpha, mus[K][idx], Sig[K][np.ix_(idx, idx)])
    if view == "state":
        return gaussian_renyi_divergence(inst.alpha, mus[K], Sig[K])
    # transcript: z_1..z_K and x_K; Cov(s_a, s_b) = M^(a-b) Sigma_b for a >= b
    blocks = [(k, np.arange(Nn, d)) for k in range(1, K + 1)] + [(K, np.arange(Nn))]
    sizes = [len(ix) for _, ix in blocks]
    offs = np.concatenate([[0], np.cumsum(sizes)])
    C = np.zeros((offs[-1], offs[-1]))
    powers = [np.eye(d)]
    for _ in range(K):
        powers.append(M @ powers[-1])
    mu = np.concatenate([mus[k][ix] for k, ix in blocks])
    for p, (a, ia) in enumerate(blocks):
        for q_, (b, ib) in enumerate(blocks):
            if a >= b:
                cov = powers[a - b] @ Sig[b]
            else:
                cov = (powers[b - a] @ Sig[a]).T
            C[offs[p]:offs[p + 1], offs[q_]:offs[q_ + 1]] = cov[np.ix_(ia, ib)]
    return gaussian_renyi_divergence(inst.alpha, mu, C)


def check_proposition4(inst: Proposition4Instance, view: str = "agent",
                       engine: str = "implementation") -> CheckResult:
    """Proposition 4: the exact ``D_alpha`` between the two runs' laws of what ``view``
    observes (see :data:`PRIVACY_VIEWS`) against
    ``alpha L^2/(lambda tau^2 q^2) (1 - exp(-lambda gamma K Ne/2))``.

    Tolerance ``rtol = 1e-6``: the divergence is a closed form (linear algebra on matrices of
    size at most ``2KNn``; the pseudo-inverse cut-off is ``1e-12`` relative).
    """
    if view not in PRIVACY_VIEWS:
        raise ValueError(f"view must be one of {PRIVACY_VIEWS}, got {view!r}")
    if not 0 < inst.theta < 1:
        raise ValueError(f"theta must lie in (0, 1) (gamma < 2/(lam_bar + 1/rho)), got {inst.theta!r}")
    from fedrepro.fedplt.privacy_bounds import proposition4_rdp_bound

    lam = 1.0 + inst.r
    gamma = inst.theta * ops.max_local_step(inst.rho, lam, lam)
    bound = proposition4_rdp_bound(inst.alpha, inst.L, lam, inst.tau, inst.q, gamma, inst.K, inst.Ne)
    observed = _divergence(inst, view, engine)
    return make_result(observed, bound, rtol=1e-6, view=view, gamma=gamma, lam=lam)
