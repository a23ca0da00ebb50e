"""A small heterogeneous ridge-regression problem on which every constant of Theorem 1 is
computable (spec §8 item 11 (ii)), and Algorithm 2 on it, vectorised over Monte Carlo trials.

Device i holds n records (a_j, y_j) with a_j = (m_i + ½z_j)/√d and y_j = a_jᵀw_i + 0.1ζ_j
(device-specific feature means m_i and models w_i make the devices heterogeneous);
ℓ_j(x) = ½(a_jᵀx − y_j)² + (μ_reg/2)‖x‖², f_i = mean_j ℓ_j, f = mean_i f_i (equal sizes).

Assumptions 3, 5 and 6 ask for bounds "for all x", which no quadratic satisfies on R^d. The
constants are therefore suprema over the ball B(x*, R) (:func:`constants`), bounded in
closed form: every per-sample quantity is affine in h = x − x*, so ‖B h + c‖ ≤ ‖B‖R + ‖c‖.
The runs record the largest distance from x* they reach (``max_dist``): where it exceeds R,
the hypotheses of the theorem do not hold on that run and the check says so.

* L: per-sample smoothness max_j ‖a_j‖² + μ_reg (Assumption 1 as stated);
* μ: min_i λ_min(∇²f_i) (every f_i is μ-strongly convex);
* σ²: max_i sup_ball mean_j ‖∇ℓ_j − ∇f_i‖² (a batch of b drawn without replacement has
  variance ≤ σ²/b);
* G: sup_ball max_j ‖∇ℓ_j‖, also used as the clip C: inside the ball no gradient is
  clipped, so the mini-batch gradient is unbiased and E‖g‖² ≤ G² (Assumption 6);
* λ²: sup_ball (1/N)Σ_i ‖∇f_i − ∇f‖².
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedrepro.core.validate import check_int, check_positive
from fedrepro.dpfedpaq import quantizer as qz
from fedrepro.dpfedpaq.theorem1 import Theorem1Constants

__all__ = ["SyntheticProblem", "constants", "draw_batches", "isotropic_problem", "local_updates",
           "make_problem", "run"]


@dataclass(frozen=True)
class SyntheticProblem:
    """Data ``A`` (N, n, d), ``Y`` (N, n), regulariser ``mu_reg`` and the minimiser ``x_star``."""

    A: np.ndarray
    Y: np.ndarray
    mu_reg: float
    x_star: np.ndarray

    @property
    def N(self) -> int:
        return self.A.shape[0]

    @property
    def n(self) -> int:
        return self.A.shape[1]

    @property
    def d(self) -> int:
        return self.A.shape[2]

    def local_hessians(self) -> np.ndarray:
        return np.einsum("inj,ink->ijk", self.A, self.A) / self.n + self.mu_reg * np.eye(self.d)

    def local_gradients(self, x: np.ndarray) -> np.ndarray:
        """∇f_i(x) for every device, shape (N, d)."""
        r = self.A @ x - self.Y
        return np.einsum("ind,in->id", self.A, r) / self.n + self.mu_reg * x


def make_problem(rng: np.random.Generator, N: int = 20, n: int = 500, d: int = 10,
                 mu_reg: float = 0.5, heterogeneity: float = 1.0) -> SyntheticProblem:
    """Draw the problem (see the module docstring)."""
    N = check_int("N", N, 2)
    n = check_int("n", n, 1)
    d = check_int("d", d, 1)
    mu_reg = check_positive("mu_reg", mu_reg)
    heterogeneity = check_positive("heterogeneity", heterogeneity)
    means = heterogeneity * rng.standard_normal((N, 1, d))
    A = (means + 0.5 * rng.standard_normal((N, n, d))) / math.sqrt(d)
    w = rng.standard_normal(d) + heterogeneity * rng.standard_normal((N, d))
    Y = np.einsum("ind,id->in", A, w) + 0.1 * rng.standard_normal((N, n))
    H = np.einsum("inj,ink->jk", A, A) / (N * n) + mu_reg * np.eye(d)
    rhs = np.einsum("ind,in->d", A, Y) / (N * n)
    return SyntheticProblem(A, Y, mu_reg, np.linalg.solve(H, rhs))


def isotropic_problem(N: int, n: int, d: int, mu: float) -> SyntheticProblem:
    """Every record's loss is (μ/2)‖x‖² (a = 0, y = 0): x* = 0, L = μ, σ² = 0, λ² = 0,
    G = μR on B(0, R). The only randomness left in Algorithm 2 is the DP noise, which makes
    the privacy terms of Theorem 1 measurable in isolation."""
    N = check_int("N", N, 2)
    n = check_int("n", n, 1)
    d = check_int("d", d, 1)
    mu = check_positive("mu", mu)
    return SyntheticProblem(np.zeros((N, n, d)), np.zeros((N, n)), mu, np.zeros(d))


def constants(p: SyntheticProblem, radius: float) -> dict[str, float]:
    """L, μ, σ², G (= clip C), λ² on the ball B(x*, radius), plus the local L_i."""
    radius = check_positive("radius", radius)
    A, xs, mu_reg = p.A, p.x_star, p.mu_reg
    d = p.d
    sq = np.einsum("ind,ind->in", A, A)
    L = float(sq.max() + mu_reg)
    H = p.local_hessians()
    eig = np.linalg.eigvalsh(H)
    mu = float(eig[:, 0].min())
    L_local = float(eig[:, -1].max())
    r_star = A @ xs - p.Y  # (N, n)
    g_star = A * r_star[..., None] + mu_reg * xs  # per-sample gradients at x*, (N, n, d)
    # per-sample gradient: (a aᵀ + μI) h + g*_j; ‖a aᵀ + μI‖ = ‖a‖² + μ
    G = float(((sq + mu_reg) * radius + np.linalg.norm(g_star, axis=2)).max())
    # deviation from the local mean: (a aᵀ − S_i) h + (g*_j − ∇f_i(x*))
    S = H - mu_reg * np.eye(d)
    outer = np.einsum("inj,ink->injk", A, A) - S[:, None]
    op = np.linalg.norm(outer, ord=2, axis=(2, 3))
    dev = np.linalg.norm(g_star - g_star.mean(axis=1, keepdims=True), axis=2)
    sigma2 = float(((op * radius + dev) ** 2).mean(axis=1).max())
    Hbar = H.mean(axis=0)
    het_op = np.linalg.norm(H - Hbar, ord=2, axis=(1, 2))
    gi_star = np.linalg.norm(p.local_gradients(xs), axis=1)
    lam2 = float(((het_op * radius + gi_star) ** 2).mean())
    return {"L": L, "L_local": L_local, "mu": mu, "sigma2": sigma2, "G": G, "lam2": lam2,
            "radius": radius}


def draw_batches(rng: np.random.Generator, shape: tuple[int, ...], n: int, size: int) -> np.ndarray:
    """Index arrays of ``size`` distinct records out of n for every entry of ``shape``
    (uniform subsets: draws with replacement, rows with a repeated index drawn again —
    rejection sampling, exact). Shape ``shape + (size,)``."""
    n = check_int("n", n, 1)
    size = check_int(f"size (at most n={n})", size, 1, n)
    out = rng.integers(0, n, size=shape + (size,))
    if size == 1:
        return out
    flat = out.reshape(-1, size)
    while True:
        srt = np.sort(flat, axis=1)
        bad = np.flatnonzero((np.diff(srt, axis=1) == 0).any(axis=1))
        if bad.size == 0:
            return flat.reshape(out.shape)
        flat[bad] = rng.integers(0, n, size=(bad.size, size))


def local_updates(p: SyntheticProblem, x: np.ndarray, devices: np.ndarray, eta: float, E: int, b: int,
                  clip: float, rng: np.random.Generator) -> np.ndarray:
    """u = x_{k,E} − x_k of Algorithm 2, step 2a–b (subset of E·b records without
    replacement split into E batches, per-sample clipping at ``clip``), for every trial and
    device: ``x`` (S, d), ``devices`` (S, M) → u (S, M, d)."""
    S, M = devices.shape
    idx = draw_batches(rng, (S, M), p.n, E * b).reshape(S, M, E, b)
    y = np.broadcast_to(x[:, None, :], (S, M, p.d)).copy()
    dev = devices[:, :, None]
    for t in range(E):
        a = p.A[dev, idx[:, :, t, :]]  # (S, M, b, d)
        r = np.einsum("smbd,smd->smb", a, y) - p.Y[dev, idx[:, :, t, :]]
        g = a * r[..., None] + p.mu_reg * y[:, :, None, :]
        norms = np.linalg.norm(g, axis=3, keepdims=True)
        g = g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
        y -= eta * g.mean(axis=2)
    return y - x[:, None, :]


def run(p: SyntheticProblem, c: Theorem1Constants, gamma0: float, K: int, trials: int, clip: float,
        s: int | None, private: bool, rng: np.random.Generator, checkpoints: np.ndarray,
        x0: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Algorithm 2 on ``p`` from ``x0`` (default 0) with η_k = 4/(μ(kE + γ0)), ``trials`` runs at once.

    Noise (``private``): ς_k² of eq. (16) with the theory's sensitivity 4η_kEG (G = ``clip``),
    added before the quantizer Q_s (``s=None``: none). Returns the mean of ‖x_k − x*‖² at
    the rounds ``checkpoints`` (``mean``, with its standard error ``se``) and ``max_dist``,
    the largest ‖x_k − x*‖ of any trial (x_k and the local iterates' starting points).
    """
    K = check_int("K", K, 1)
    trials = check_int("trials", trials, 1)
    check_positive("gamma0", gamma0)
    E, M, N, b, d = c.E, c.M, c.N, c.b, p.d
    x = np.zeros((trials, d)) if x0 is None else np.tile(np.asarray(x0, dtype=float), (trials, 1))
    ck = set(int(k) for k in checkpoints)
    means, ses = {}, {}
    max_dist = float(np.linalg.norm(x[0] - p.x_star))
    gamma = c.gamma
    log_term = math.log(1.25 * gamma / c.delta) if private else 0.0
    for k in range(K + 1):
        dist2 = np.sum((x - p.x_star) ** 2, axis=1)
        if k in ck:
            means[k] = float(dist2.mean())
            ses[k] = float(dist2.std(ddof=1) / math.sqrt(trials)) if trials > 1 else 0.0
        if not np.all(np.isfinite(dist2)) or dist2.max() > 1e200:
            for kk in ck:
                if kk > k:
                    means[kk], ses[kk] = math.inf, math.inf
            max_dist = math.inf
            break
        max_dist = max(max_dist, float(np.sqrt(dist2.max())))
        if k == K:
            break
        eta = 4.0 / (c.mu * (k * E + gamma0))
        keys = rng.random((trials, N))
        devices = np.argpartition(keys, M - 1, axis=1)[:, :M] if M < N else np.tile(np.arange(N), (trials, 1))
        u = local_updates(p, x, devices, eta, E, b, clip, rng)
        if private:
            sens = 4.0 * eta * E * clip
            std = math.sqrt(8.0 * gamma**2 * sens**2 * log_term) / c.epsilon
            u = u + std * rng.standard_normal(u.shape)
        if s is not None:
            u = qz.quantize(u.reshape(-1, d), s, rng).reshape(u.shape)
        x = x + u.mean(axis=1)
    order = sorted(ck)
    return {"rounds": np.array(order), "mean": np.array([means[k] for k in order]),
            "se": np.array([ses[k] for k in order]), "max_dist": max_dist}
