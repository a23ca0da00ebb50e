"""Checks of the single-operator statements: Lemma 2 (gradient descent), eq. (11) (the local
step range), Lemma 3 (PRS, v2 and v1 as printed) and Lemma 6 (the coordinator's prox)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.linalg import spectral_norm
from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive
from fedrepro.fedplt.checks import _validate as _v
from fedrepro.fedplt.checks._validate import finite_penalty
from fedrepro.fedplt.checks.instances import logistic_cost
from fedrepro.fedplt.checks.result import CheckResult, make_result

__all__ = [
    "Lemma2Instance", "check_lemma2", "Eq11Instance", "check_eq11", "check_eq11_step_range",
    "Lemma3Instance", "check_lemma3",
    "Lemma6Instance", "check_lemma6",
]


def _spd(n: int, lam: float, lam_bar: float, rng: np.random.Generator) -> np.ndarray:
    """Symmetric matrix with spectrum in ``[lam, lam_bar]``, both extremes included."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    e = rng.uniform(lam, lam_bar, n)
    e[0] = lam
    if n > 1:
        e[1] = lam_bar
    return (Q * e) @ Q.T


# --------------------------------------------------------------------------- Lemma 2


@dataclass(frozen=True)
class Lemma2Instance:
    """``kind="quadratic"``: ``f = x^T A x/2`` with ``spec(A)`` in ``[lam, lam_bar]``, extremes
    included; ``kind="logistic"``: a logistic cost of v2 §VII (``lam = eps``, ``lam_bar`` its
    tight smoothness constant; the given ``lam``/``lam_bar`` are then ignored).
    ``step_factor`` sets the step ``step_factor * 2/lam_bar`` (Lemma 2: in ``(0, 1)``)."""

    kind: str = "quadratic"
    n: int = 3
    lam: float = 1.0
    lam_bar: float = 10.0
    step_factor: float = 0.5
    pairs: int = 200
    seed: int = 0

    def __post_init__(self) -> None:
        _v.choice("kind", self.kind, ("quadratic", "logistic"))
        _v.sizes(self, "n")
        _v.moduli(self)
        check_interval("step_factor", self.step_factor, 0.0, 1.0, closed_low=False, closed_high=False)
        _v.sizes(self, "pairs")
        _v.seed(self)


def check_lemma2(inst: Lemma2Instance) -> CheckResult:
    """Lemma 2: ``||T x - T y|| <= max{|1-step lam|, |1-step lam_bar|} ||x - y||``,
    ``T = I - step grad f``.

    Quadratic: observed ``||I - step A||_2`` (exact). Logistic: the largest ratio over
    ``pairs`` random pairs (a lower bound of the Lipschitz constant). Tolerance
    ``rtol = 1e-9``: only round-off separates the two sides.
    """
    if inst.kind not in ("quadratic", "logistic"):
        raise ValueError(f"kind must be 'quadratic' or 'logistic', got {inst.kind!r}")
    if not 0 < inst.step_factor < 1:
        raise ValueError(f"step_factor must lie in (0, 1), got {inst.step_factor!r}")
    rng = np.random.default_rng(inst.seed)
    if inst.kind == "quadratic":
        lam, lam_bar = ops._moduli(inst.lam, inst.lam_bar)
        A = _spd(inst.n, lam, lam_bar, rng)
        step = inst.step_factor * 2 / lam_bar
        observed = spectral_norm(np.eye(inst.n) - step * A)
    else:
        f = logistic_cost(inst.n, 50, 0.5, rng)
        lam, lam_bar = f.lam, f.lam_bar
        step = inst.step_factor * 2 / lam_bar
        X = 3 * rng.standard_normal((inst.pairs, inst.n))
        Y = X + rng.standard_normal((inst.pairs, inst.n)) * 10 ** rng.uniform(-3, 1, (inst.pairs, 1))
        TX = X - step * f.grad(X)
        TY = Y - step * f.grad(Y)
        observed = float(np.max(np.linalg.norm(TX - TY, axis=1) / np.linalg.norm(X - Y, axis=1)))
    bound = ops.gd_contraction(step, lam, lam_bar)
    return make_result(observed, bound, rtol=1e-9, kind=inst.kind, step=step, lam=lam, lam_bar=lam_bar)


def check_eq11_step_range(rho: float, lam: float, lam_bar: float, theta: float = 0.5, n: int = 2,
                          seed: int = 0) -> CheckResult:
    """v2 eq. (11) states the local step range ``(0, 2/(lam + 1/rho))``. Take the step
    ``2/(lam_bar+1/rho) + theta * (2/(lam+1/rho) - 2/(lam_bar+1/rho))`` inside that range but
    beyond ``2/(lam_bar+1/rho)``, and compare the exact Lipschitz constant of one local GD
    step on a quadratic ``d`` (``||I - gamma(A + I/rho)||``) with 1, the contraction the
    range is meant to guarantee. Tolerance ``rtol = 1e-12`` (closed forms).

    ``rho > 0`` (with ``1/rho``, ``lam_bar + 1/rho`` and ``2/(lam + 1/rho)`` finite),
    ``0 < lam <= lam_bar`` finite, ``theta`` in ``(0, 1)``, ``n`` an integer >= 1, ``seed`` an integer >= 0."""
    check_positive("rho", rho)
    lam, lam_bar = ops._moduli(lam, lam_bar)
    check_interval("theta", theta, 0.0, 1.0, closed_low=False, closed_high=False)
    check_int("n", n, 1)
    check_int("seed", seed, 0)
    finite_penalty(rho, lam_bar)
    lo = ops.max_local_step(rho, lam, lam_bar)
    hi = ops.max_local_step(rho, lam, lam_bar, as_printed=True)
    if not math.isfinite(hi):
        raise ValueError(f"the step range end 2/(lam + 1/rho) overflows, got rho={rho!r}, lam={lam!r}")
    gamma = lo + theta * (hi - lo)
    with np.errstate(over="ignore"):
        A = _spd(n, lam, lam_bar, np.random.default_rng(seed))
    if not np.all(np.isfinite(A)):
        raise ValueError(f"lam_bar is too large: the test matrix with spectrum in [lam, lam_bar] overflows, "
                         f"got lam_bar={lam_bar!r}")
    observed = spectral_norm(np.eye(n) - gamma * (A + np.eye(n) / rho))
    return make_result(observed, 1.0, rtol=1e-12, gamma=gamma, printed_range_end=hi,
                       correct_range_end=lo)


@dataclass(frozen=True)
class Eq11Instance:
    """Arguments of :func:`check_eq11_step_range` as an instance."""

    rho: float = 1.0
    lam: float = 1.0
    lam_bar: float = 10.0
    theta: float = 0.5
    n: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        check_positive("rho", self.rho)
        _v.moduli(self)
        check_interval("theta", self.theta, 0.0, 1.0, closed_low=False, closed_high=False)
        _v.sizes(self, "n")
        _v.seed(self)


def check_eq11(inst: Eq11Instance) -> CheckResult:
    """:func:`check_eq11_step_range` on an :class:`Eq11Instance`."""
    return check_eq11_step_range(inst.rho, inst.lam, inst.lam_bar, inst.theta, inst.n, inst.seed)


# --------------------------------------------------------------------------- Lemma 3


@dataclass(frozen=True)
class Lemma3Instance:
    """PRS on ``f(x) = sum_i x_i^T A_i x_i / 2`` (``A_i`` with spectrum in ``[lam, lam_bar]``,
    extremes included) and ``g`` = indicator of the consensus subspace of ``R^{nN}``."""

    N: int = 3
    n: int = 2
    lam: float = 1.0
    lam_bar: float = 10.0
    rho: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n")
        _v.moduli(self)
        check_positive("rho", self.rho)
        _v.seed(self)


def check_lemma3(inst: Lemma3Instance, version: str = "v2") -> CheckResult:
    """Lemma 3: ``||refl_{rho f} refl_{rho g}||_2 <= zeta`` (exact: both reflections are
    linear here, ``refl_{rho f} = 2(I + rho A)^{-1} - I``, ``refl_{rho g} = 2P - I`` with
    ``P`` the projection onto consensus). ``version="v1"`` uses v1's formula as printed.
    Tolerance ``rtol = 1e-9`` (round-off only)."""
    if version not in ("v1", "v2"):
        raise ValueError(f"version must be 'v1' or 'v2', got {version!r}")
    lam, lam_bar = ops._moduli(inst.lam, inst.lam_bar)
    rng = np.random.default_rng(inst.seed)
    N, n = inst.N, inst.n
    d = N * n
    A = np.zeros((d, d))
    for i in range(N):
        A[i * n:(i + 1) * n, i * n:(i + 1) * n] = _spd(n, lam, lam_bar, rng)
    P = np.kron(np.full((N, N), 1 / N), np.eye(n))
    Rf = 2 * np.linalg.inv(np.eye(d) + inst.rho * A) - np.eye(d)
    Rg = 2 * P - np.eye(d)
    observed = spectral_norm(Rf @ Rg)
    zeta = (ops.prs_contraction if version == "v2" else ops.prs_contraction_v1_as_printed)(inst.rho, lam, lam_bar)
    return make_result(observed, zeta, rtol=1e-9, version=version)


# --------------------------------------------------------------------------- Lemma 6


@dataclass(frozen=True)
class Lemma6Instance:
    """``h`` of kind ``"zero"``, ``"l1"`` (weight ``weight``) or ``"box"`` (``[-weight, weight]``);
    ``N`` points ``z_i`` in ``R^n`` drawn with scale 2."""

    kind: str = "l1"
    N: int = 4
    n: int = 3
    rho: float = 1.0
    weight: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        _v.choice("kind", self.kind, ("zero", "l1", "box"))
        _v.sizes(self, "N", "n")
        check_positive("rho", self.rho)
        check_nonnegative("weight", self.weight)
        _v.seed(self)


def _right_derivative(kind: str, weight: float, x: float) -> float:
    """Right derivative of the one-dimensional ``h`` at ``x`` (l1: ``w sign_+(x)``)."""
    if kind == "l1":
        return weight if x >= 0 else -weight
    return 0.0


def check_lemma6(inst: Lemma6Instance) -> CheckResult:
    """Lemma 6: ``prox_{rho g}(z) = 1 ⊗ prox_{rho h/N}(mean_i z_i)``.

    The right side uses the library's prox (``fedrepro.core.operators``); the left side is
    the minimiser of ``h(x) + sum_i ||x - z_i||^2/(2 rho)`` found numerically, coordinate by
    coordinate (the three ``h`` are separable), as the point where the right derivative of
    the convex one-dimensional objective changes sign, by bisection to machine precision
    (200 halvings). Observed: the largest coordinate gap; bound ``1e-10 (1 + max|z|)`` (the
    statement itself claims equality; the bound is round-off).
    """
    if inst.kind not in ("zero", "l1", "box"):
        raise ValueError(f"kind must be 'zero', 'l1' or 'box', got {inst.kind!r}")
    rng = np.random.default_rng(inst.seed)
    Z = 2 * rng.standard_normal((inst.N, inst.n))
    if inst.kind == "zero":
        h = ops.regularizer("zero")
    elif inst.kind == "l1":
        h = ops.regularizer("l1", weight=inst.weight)
    else:
        h = ops.regularizer("box", lower=-inst.weight, upper=inst.weight)
    closed = h.prox(Z.mean(axis=0), inst.rho / inst.N)
    numeric = np.empty(inst.n)
    for j in range(inst.n):
        zj = Z[:, j]
        if inst.kind == "box":
            lo, hi = -inst.weight, inst.weight
        else:
            lo, hi = min(zj.min(), 0.0) - 1.0, max(zj.max(), 0.0) + 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            slope = _right_derivative(inst.kind, inst.weight, mid) + float(np.sum(mid - zj)) / inst.rho
            if slope >= 0:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 0:
                break
        numeric[j] = 0.5 * (lo + hi)
    observed = float(np.max(np.abs(closed - numeric)))
    return make_result(observed, 1e-10 * (1 + float(np.max(np.abs(Z)))), rtol=0.0, kind=inst.kind)
