"""Federated regularised logistic regression (Fed-PLT v2 §VII, v1 §VII).

Each agent ``i`` holds ``q`` data points ``(a_{i,h}, b_{i,h})`` with ``a_{i,h}`` a row in
``R^{1 x n}`` and ``b_{i,h}`` in ``{-1, +1}``, and the cost

    f_i(x) = (1/q) sum_h log(1 + exp(-b_{i,h} a_{i,h} x)) + w r(x),

where ``r`` is ``||x||^2 / 2`` (convex, ``reg="l2"``) or ``sum_j x_j^2 / (1 + x_j^2)``
(nonconvex, ``reg="nonconvex"``) and ``w`` the regulariser weight (``reg_weight``):

* v2 (final paper): ``N = 100``, ``n = 5``, ``q = 250``, ``w = eps = 0.5``, both regularisers,
  no intercept (:func:`logistic_v2`);
* v1 (earlier version): ``N = 10``, ``n = 16`` (15 features and a constant-1 intercept
  column), ``m_i = 20``, ``eps = 5`` and regulariser ``eps/(2N) ||x||^2``, i.e. ``reg="l2"``
  with ``w = eps / N`` (:func:`logistic_v1`).

Moduli (see ``lam_i``, ``lam_bar_i``): the data term has Hessian
``(1/q) sum_h s_h (1 - s_h) a_h^T a_h`` with ``s_h (1 - s_h)`` in ``(0, 1/4]``; its curvature
tends to 0 along every direction far from the origin, so the strong-convexity modulus of
``f_i`` is that of ``w r`` alone: ``w`` for ``l2``, and ``-w/2`` for the nonconvex ``r``
(weak convexity, since ``phi(t) = t^2/(1+t^2)`` has ``phi'' in [-1/2, 2]``). The smoothness
modulus is the data part plus ``w`` (``l2``) or ``2 w`` (nonconvex), with the data part either

* tight: ``lam_max(A_i^T A_i) / (4 q)`` (attained at ``x = 0``), or
* loose: ``max_h ||a_{i,h}||^2 / 4`` (v1's stated ``q_i / 4`` form).

Corrections to the papers: v1 states ``f_i in F_{eps, q_i/4 + eps}``, but its per-agent
regulariser ``eps/(2N) ||x||^2`` gives strong convexity ``eps / N`` (0.5, not 5); the data
here uses the corrected ``eps / N``. The data generator is a choice the papers leave open
(they only say "randomly generated, roughly 50-50 split"): see
:func:`generate_logistic_data`.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from scipy.special import expit

from fedrepro.core.validate import (
    ParameterTypeError,
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_nonnegative,
    check_positive,
)
from fedrepro.problems.base import FederatedProblem

__all__ = ["LogisticProblem", "generate_logistic_data", "logistic_v1", "logistic_v2",
           "SMOOTHNESS_CHOICES", "REGULARIZERS"]

SMOOTHNESS_CHOICES = ("tight", "loose")
REGULARIZERS = ("l2", "nonconvex")


class LogisticProblem(FederatedProblem):
    """Regularised logistic regression over ``N`` agents with ``q`` points each.

    Parameters
    ----------
    features : array (N, q, n)
        Row ``features[i, h]`` is ``a_{i,h}`` (include a constant-1 column for an intercept).
    labels : array (N, q)
        ``b_{i,h}`` in ``{-1, +1}``.
    reg : ``"l2"`` | ``"nonconvex"``
        ``r(x) = ||x||^2 / 2`` or ``r(x) = sum_j x_j^2 / (1 + x_j^2)``.
    reg_weight : float
        Weight ``w`` of ``r`` in every ``f_i`` (> 0 for ``l2`` so that ``f_i`` is strongly convex).
    smoothness : ``"tight"`` | ``"loose"``
        Which bound ``lam_bar_i`` reports (both are kept as ``lam_bar_i_tight`` /
        ``lam_bar_i_loose``). Default ``"loose"``: the authors' bound, our choice for the
        experiments (it makes the local-step counts behave like v2 Table IX; the tight bound
        makes the problem so well conditioned that ``N_e`` barely matters).
    info : dict, optional
        Metadata (setup name, ``eps``, the generator's ground truth...).
    """

    def __init__(self, features: Any, labels: Any, *, reg: str = "l2", reg_weight: float,
                 smoothness: str = "loose", info: dict[str, Any] | None = None):
        A = np.array(check_array("features", features, finite=False, nonempty=False), dtype=float)
        b = np.array(check_array("labels", labels, finite=False, nonempty=False), dtype=float)
        if A.ndim != 3 or min(A.shape) < 1:
            raise ValueError(f"features must have shape (N, q, n) with N, q, n >= 1, got {A.shape}")
        N, q, n = A.shape
        if b.shape != (N, q):
            raise ValueError(f"labels must have shape ({N}, {q}) to match features, got {b.shape}")
        check_array("features", A)
        if not np.all(np.abs(b) == 1.0):
            raise ValueError("labels must be -1 or +1")
        check_choice("reg", reg, REGULARIZERS)
        w = check_nonnegative("reg_weight", reg_weight)
        if reg == "l2" and w <= 0:
            raise ValueError(f"reg_weight must be > 0 for reg='l2' (strong convexity), got {reg_weight!r}")
        check_choice("smoothness", smoothness, SMOOTHNESS_CHOICES)
        self.features, self.labels = A, b
        # label-signed features, transposed once: the full-gradient oracle is then two
        # batched products and one sigmoid (see _grad)
        self._signed_t = np.ascontiguousarray((b[:, :, None] * A).transpose(0, 2, 1))  # (N, n, q)
        self.N, self.q, self.n = int(N), int(q), int(n)
        self.reg, self.reg_weight = reg, w
        self.info = dict(info or {})
        gram = np.matmul(A.transpose(0, 2, 1), A)
        self.data_smoothness_tight = np.linalg.eigvalsh(gram)[:, -1] / (4.0 * q)
        self.data_smoothness_loose = np.max(np.sum(A * A, axis=2), axis=1) / 4.0
        if reg == "l2":
            lo, hi = w, w
        else:
            lo, hi = -w / 2.0, 2.0 * w
        self.lam_i = np.full(N, lo)
        self.lam_bar_i_tight = self.data_smoothness_tight + hi
        self.lam_bar_i_loose = self.data_smoothness_loose + hi
        self.smoothness = smoothness
        self._x_star_cache = None

    # ---- constants ---------------------------------------------------------------------
    @property
    def lam_bar_i(self) -> np.ndarray:  # type: ignore[override]
        return self.lam_bar_i_tight if self.smoothness == "tight" else self.lam_bar_i_loose

    @property
    def lam_bar_tight(self) -> float:
        return float(np.max(self.lam_bar_i_tight))

    @property
    def lam_bar_loose(self) -> float:
        return float(np.max(self.lam_bar_i_loose))

    @property
    def samples_per_agent(self) -> int:
        return self.q

    def with_smoothness(self, smoothness: str) -> LogisticProblem:
        """The same problem (same data, shared ``x*``) reporting the other ``lam_bar``."""
        if smoothness not in SMOOTHNESS_CHOICES:
            raise ValueError(f"smoothness must be one of {SMOOTHNESS_CHOICES}, got {smoothness!r}")
        other = copy.copy(self)
        other.smoothness = smoothness
        if self._x_star_cache is None:
            self.x_star()
            other._x_star_cache, other.x_star_info = self._x_star_cache, self.x_star_info
        return other

    # ---- regulariser r -----------------------------------------------------------------
    def _reg_value(self, X):
        if self.reg == "l2":
            return 0.5 * np.sum(X * X, axis=1)
        return np.sum(X * X / (1.0 + X * X), axis=1)

    def _reg_grad(self, X):
        if self.reg == "l2":
            return X
        return 2.0 * X / (1.0 + X * X) ** 2

    def _reg_hess_diag(self, X):
        if self.reg == "l2":
            return np.ones_like(X)
        x2 = X * X
        return (2.0 - 6.0 * x2) / (1.0 + x2) ** 3

    # ---- oracles -----------------------------------------------------------------------
    def _data(self, agents):
        if agents is None:
            return self.features, self.labels
        return self.features[agents], self.labels[agents]

    @staticmethod
    def _margins(A, b, X):
        return b * np.matmul(A, X[:, :, None])[:, :, 0]  # (N, q): b_h a_h x

    def _cost(self, X, agents):
        A, b = self._data(agents)
        m = self._margins(A, b, X)
        return np.mean(np.logaddexp(0.0, -m), axis=1) + self.reg_weight * self._reg_value(X)

    @staticmethod
    def _signed_grad(signed_t, X):
        """(1/q) sum_h -b_h a_h sigma(-b_h a_h x) from the label-signed features (rows, n, q)."""
        m = np.matmul(X[:, None, :], signed_t)[:, 0, :]  # (rows, q): b_h a_h x
        with np.errstate(over="ignore"):
            s = 1.0 / (1.0 + np.exp(m))  # sigma(-m); an overflowing exp gives exactly 0
        return np.matmul(signed_t, s[:, :, None])[:, :, 0] * (-1.0 / signed_t.shape[2])

    @staticmethod
    def _data_grad(A, b, X):
        return LogisticProblem._signed_grad((b[:, :, None] * A).transpose(0, 2, 1), X)

    def _grad(self, X, agents):
        if agents is None:  # all agents, the hot path: signed features precomputed
            return self._signed_grad(self._signed_t, X) + self.reg_weight * self._reg_grad(X)
        A, b = self._data(agents)
        return self._data_grad(A, b, X) + self.reg_weight * self._reg_grad(X)

    def _hessian(self, X, agents):
        A, b = self._data(agents)
        m = self._margins(A, b, X)
        s = expit(m) * expit(-m) / A.shape[1]
        H = np.matmul(A.transpose(0, 2, 1) * s[:, None, :], A)
        diag = self.reg_weight * self._reg_hess_diag(X)
        idx = np.arange(self.n)
        H[:, idx, idx] += diag
        return H

    def stochastic_grad(self, X: Any, batch_size: int, rng: np.random.Generator,
                        agents: Any = None) -> np.ndarray:
        """Mini-batch gradient (Fed-PLT v2 §IV-B, SGD): for each agent a batch ``B_i`` of
        ``batch_size`` points drawn uniformly without replacement (independently across
        agents), ``(1/|B_i|) sum_{h in B_i} grad loss_h(x_i)`` plus the exact regulariser
        gradient. With ``batch_size = q`` this is the full gradient (no draw)."""
        idx = self._agents(agents)
        X = self._check_X(X, idx)
        B = self._check_batch_size(batch_size)
        if not isinstance(rng, np.random.Generator):
            raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._stochastic_grad(X, B, rng, idx)

    def _check_batch_size(self, batch_size: Any) -> int:
        return check_int("batch_size", batch_size, 1, self.q)

    def _stochastic_grad(self, X, B, rng, agents):
        if B == self.q:  # the full gradient, with the same arithmetic as grad()
            return self._grad(X, agents)
        A, b = self._data(agents)
        if B < self.q:
            pick = np.argpartition(rng.random(b.shape), B - 1, axis=1)[:, :B]
            A = np.take_along_axis(A, pick[:, :, None], axis=1)
            b = np.take_along_axis(b, pick, axis=1)
        return self._data_grad(A, b, X) + self.reg_weight * self._reg_grad(X)


def generate_logistic_data(N: int, q: int, n: int, rng: np.random.Generator, *,
                           intercept: bool = False, feature_scale: float = 1.0,
                           heterogeneity: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic logistic data (a choice: the papers say only "randomly generated, to have a
    roughly 50-50 split between the two classes").

    1. ground truth ``x_true ~ N(0, I_n)`` (its intercept coordinate set to 0);
    2. features i.i.d. ``N(0, feature_scale^2 I)``; with ``intercept`` the first column is the
       constant 1; ``heterogeneity > 0`` shifts each agent's feature mean by
       ``delta_i ~ N(0, heterogeneity^2 I)`` (off by default: i.i.d. agents);
    3. labels ``b = +1`` with probability ``sigmoid(a x_true)``, else ``-1``.

    Symmetric features and a zero intercept weight give ``P(b = +1) = 1/2`` exactly, i.e. the
    papers' 50-50 split in expectation. Returns ``(features (N, q, n), labels (N, q), x_true)``.
    """
    N, q, n = check_int("N", N), check_int("q", q), check_int("n", n)
    check_bool("intercept", intercept)
    if intercept and n < 2:
        raise ValueError(f"n must be >= 2 with an intercept column, got {n}")
    s = check_nonnegative("feature_scale", feature_scale)
    het = check_nonnegative("heterogeneity", heterogeneity)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    x_true = rng.standard_normal(n)
    n_feat = n - 1 if intercept else n
    if intercept:
        x_true[0] = 0.0
    feats = s * rng.standard_normal((N, q, n_feat))
    if het > 0:
        feats = feats + het * rng.standard_normal((N, 1, n_feat))
    if intercept:
        feats = np.concatenate([np.ones((N, q, 1)), feats], axis=2)
    prob = expit(np.matmul(feats, x_true))
    labels = np.where(rng.random((N, q)) < prob, 1.0, -1.0)
    return feats, labels, x_true


def _rng(seed: Any, rng: np.random.Generator | None) -> np.random.Generator:
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            raise ParameterTypeError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")
        return rng
    return np.random.default_rng(check_int("seed", seed, 0))


def logistic_v2(convex: bool = True, seed: int = 0, *, N: int = 100, n: int = 5, q: int = 250,
                eps: float = 0.5, feature_scale: float = 1.0, heterogeneity: float = 0.0,
                smoothness: str = "loose", rng: np.random.Generator | None = None) -> LogisticProblem:
    """Fed-PLT v2 §VII problem: ``f_i = (1/q) sum log(1 + exp(-b a x)) + eps r(x)`` with
    ``r = ||x||^2/2`` (``convex=True``) or ``sum_j x_j^2/(1+x_j^2)``; ``N = 100``, ``n = 5``,
    ``q_i = 250``, ``eps = 0.5``, no intercept. Data from :func:`generate_logistic_data`
    (seeded by ``seed``, or drawn from ``rng`` when given). ``smoothness`` selects
    ``lam_bar`` (default ``"loose"``, see :class:`LogisticProblem`)."""
    check_bool("convex", convex)
    g = _rng(seed, rng)
    eps = check_positive("eps", eps)
    check_choice("smoothness", smoothness, SMOOTHNESS_CHOICES)
    A, b, x_true = generate_logistic_data(N, q, n, g, feature_scale=feature_scale,
                                          heterogeneity=heterogeneity)
    info = {"setup": "v2", "convex": bool(convex), "eps": eps, "seed": seed, "x_true": x_true,
            "feature_scale": feature_scale, "heterogeneity": heterogeneity}
    return LogisticProblem(A, b, reg="l2" if convex else "nonconvex", reg_weight=eps,
                           smoothness=smoothness, info=info)


def logistic_v1(seed: int = 0, *, N: int = 10, n: int = 16, m: int = 20, eps: float = 5.0,
                feature_scale: float = 1.0, heterogeneity: float = 0.0, smoothness: str = "loose",
                rng: np.random.Generator | None = None) -> LogisticProblem:
    """Fed-PLT v1 §VII problem: ``f_i = (1/m) sum log(1 + exp(-b a x)) + eps/(2N) ||x||^2`` with
    ``N = 10``, ``n = 16`` (15 features and a constant-1 intercept column, regularised too),
    ``m_i = 20``, ``eps = 5``.

    Moduli: the per-agent strong convexity is ``eps / N`` (= 0.5), not the ``eps`` v1 states;
    the paper's stated constants are kept in ``info["stated_lam"]`` and
    ``info["stated_lam_bar_i"]`` (``q_i/4 + eps`` with ``q_i = max_h ||a_h||^2``) for comparison.
    ``smoothness`` defaults to ``"loose"``, v1's own ``q_i / 4`` form (with the corrected
    regulariser weight)."""
    g = _rng(seed, rng)
    eps = check_positive("eps", eps)
    check_choice("smoothness", smoothness, SMOOTHNESS_CHOICES)
    N = check_int("N", N)
    A, b, x_true = generate_logistic_data(N, m, n, g, intercept=True, feature_scale=feature_scale,
                                          heterogeneity=heterogeneity)
    stated_bar = np.max(np.sum(A * A, axis=2), axis=1) / 4.0 + eps
    info = {"setup": "v1", "convex": True, "eps": eps, "seed": seed, "x_true": x_true,
            "feature_scale": feature_scale, "heterogeneity": heterogeneity,
            "stated_lam": eps, "stated_lam_bar_i": stated_bar}
    return LogisticProblem(A, b, reg="l2", reg_weight=eps / N, smoothness=smoothness, info=info)
