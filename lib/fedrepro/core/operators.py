"""Operators and contraction constants of Fed-PLT (v2 §II-B, §IV-B, §V-A, Appendix B).

This is the single entry point for the operator-theoretic quantities of the paper:

* the proximal and reflective operators of Definition 3, re-exported from
  :mod:`fedrepro.core.prox`;
* the contraction factor of gradient descent (Lemma 2) and of local gradient descent on
  ``d_{i,k}`` (the ``chi`` of §IV-B, eq. (11));
* the contraction factor ``zeta`` of Peaceman–Rachford splitting (Lemma 3; v2 formula, and
  v1's formula as printed);
* the accelerated-gradient factor ``chi(N_e)`` of Proposition 3 / Lemma 8 (v2 and v1 forms)
  and the square-root form that Lemma 8's own proof supports;
* the matrix ``S`` of Proposition 1 (as printed, and with the coupling constant corrected
  from ``1/(lambda + 1/rho)`` to ``1/(1 + rho*lambda)``), its spectral norm and radius, the
  closed-form stability condition of Lemma 7, and a grid search for stabilising parameters.

Notation: ``lam``/``lam_bar`` are the strong-convexity/smoothness moduli ``lambda``,
``lambda-bar`` (Assumption 1), ``rho > 0`` the PRS penalty, ``gamma`` the local step,
``Ne`` the number of local steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedrepro.core import linalg as _linalg
from fedrepro.core.prox import (
    REGULARIZER_KINDS,
    Regularizer,
    prox_ball,
    prox_box,
    prox_l1,
    prox_sq_norm,
    prox_zero,
    reflect,
    reflective,
    regularizer,
)
from fedrepro.core.validate import check_finite, check_int, check_positive

__all__ = [
    # re-exported from fedrepro.core.prox (Definition 3)
    "REGULARIZER_KINDS", "Regularizer", "prox_ball", "prox_box", "prox_l1", "prox_sq_norm",
    "prox_zero", "reflect", "reflective", "regularizer",
    # contraction constants
    "gd_contraction", "local_gd_contraction", "default_local_step", "max_local_step",
    "prs_contraction", "prs_contraction_v1_as_printed",
    "local_condition_number", "agd_momentum", "agd_contraction", "agd_contraction_sqrt",
    "agd_output_contraction",
    # Proposition 1 / Lemma 7
    "coupling_constant", "matrix_S", "matrix_S_from", "spectral_norm", "spectral_radius",
    "lemma7_condition", "lemma7_condition_as_printed", "gd_one_step_threshold",
    "StabilityGrid", "stabilising_parameters", "minimal_Ne",
]


# --------------------------------------------------------------------------- validation


def _moduli(lam: Any, lam_bar: Any) -> tuple[float, float]:
    lam = check_positive("lam", lam)
    lam_bar = check_finite("lam_bar", lam_bar)
    if lam_bar < lam:
        raise ValueError(f"lam_bar must be >= lam = {lam:g} (0 < lam <= lam_bar), got {lam_bar!r}")
    return lam, lam_bar


# --------------------------------------------------------------------------- Lemma 2, eq. (11)


def gd_contraction(step: float, lam: float, lam_bar: float) -> float:
    """Lemma 2: Lipschitz factor ``max{|1 - step*lam|, |1 - step*lam_bar|}`` of ``I - step*grad f``
    for ``f`` in ``F_{lam, lam_bar}``; below one exactly when ``0 < step < 2/lam_bar``.

    Any ``step > 0`` is accepted (the factor is then possibly >= 1), so that the range of
    eq. (11) can be examined.
    """
    step = check_positive("step", step)
    lam, lam_bar = _moduli(lam, lam_bar)
    return max(abs(1.0 - step * lam), abs(1.0 - step * lam_bar))


def local_gd_contraction(gamma: float, rho: float, lam: float, lam_bar: float) -> float:
    """``chi`` of §IV-B: Lemma 2 applied to ``d_{i,k}`` in ``F_{lam+1/rho, lam_bar+1/rho}``."""
    rho = check_positive("rho", rho)
    lam, lam_bar = _moduli(lam, lam_bar)
    return gd_contraction(gamma, lam + 1.0 / rho, lam_bar + 1.0 / rho)


def default_local_step(rho: float, lam: float, lam_bar: float) -> float:
    """The step ``2/(lam_bar + lam + 2/rho)`` that minimises ``chi`` (§IV-B)."""
    rho = check_positive("rho", rho)
    lam, lam_bar = _moduli(lam, lam_bar)
    return 2.0 / (lam_bar + lam + 2.0 / rho)


def max_local_step(rho: float, lam: float, lam_bar: float, *, as_printed: bool = False) -> float:
    """Upper end of the local step range of eq. (11).

    ``2/(lam_bar + 1/rho)`` (the range on which ``chi < 1``, as Proposition 4 and
    Corollary 1 state it), or v2 eq. (11) as printed, ``2/(lam + 1/rho)``.
    """
    rho = check_positive("rho", rho)
    lam, lam_bar = _moduli(lam, lam_bar)
    return 2.0 / ((lam if as_printed else lam_bar) + 1.0 / rho)


# --------------------------------------------------------------------------- Lemma 3


def prs_contraction(rho: float, lam: float, lam_bar: float) -> float:
    """Lemma 3 (v2): ``zeta = max{|1-rho*lam_bar|/(1+rho*lam_bar), |1-rho*lam|/(1+rho*lam)}``,
    the contraction factor of ``refl_{rho f} refl_{rho g}`` for ``f`` in ``F_{lam, lam_bar}``."""
    rho = check_positive("rho", rho)
    lam, lam_bar = _moduli(lam, lam_bar)
    return max(abs(1 - rho * lam_bar) / (1 + rho * lam_bar), abs(1 - rho * lam) / (1 + rho * lam))


def prs_contraction_v1_as_printed(rho: float, lam: float, lam_bar: float) -> float:
    """Lemma 3 as printed in v1: ``max{|1-rho*lam|/(1+rho*lam_bar), |1-rho*lam|/(1+rho*lam)}``."""
    rho = check_positive("rho", rho)
    lam, lam_bar = _moduli(lam, lam_bar)
    return max(abs(1 - rho * lam) / (1 + rho * lam_bar), abs(1 - rho * lam) / (1 + rho * lam))


# --------------------------------------------------------------------------- Prop. 3 / Lemma 8


def local_condition_number(rho: float | None, lam: float, lam_bar: float, version: str = "v2") -> float:
    """Condition number used by Proposition 3: ``kappa_d = (lam_bar+1/rho)/(lam+1/rho)`` (v2)
    or ``lam_bar/lam`` (v1, which omits the ``1/rho`` terms). ``rho=None`` gives ``lam_bar/lam``
    (Lemma 8 applied to ``f`` itself)."""
    lam, lam_bar = _moduli(lam, lam_bar)
    if version not in ("v1", "v2"):
        raise ValueError(f"version must be 'v1' or 'v2', got {version!r}")
    if rho is None or version == "v1":
        return lam_bar / lam
    rho = check_positive("rho", rho)
    return (lam_bar + 1 / rho) / (lam + 1 / rho)


def agd_momentum(kappa: float) -> float:
    """Constant momentum ``(sqrt(kappa)-1)/(sqrt(kappa)+1)`` of eq. (12) / Lemma 8."""
    kappa = check_finite("kappa", kappa)
    if kappa < 1:
        raise ValueError(f"kappa must be >= 1, got {kappa!r}")
    return (math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1)


def _kappa(kappa: Any) -> float:
    kappa = check_finite("kappa", kappa)
    if kappa < 1:
        raise ValueError(f"kappa must be >= 1, got {kappa!r}")
    return kappa


def agd_contraction(Ne: int, kappa: float) -> float:
    """Lemma 8 / Proposition 3 as stated: ``(1 + kappa)(1 - 1/sqrt(kappa))^Ne``.

    With ``kappa = local_condition_number(rho, lam, lam_bar, "v2")`` this is v2's ``chi(N_e)``;
    with ``"v1"`` it is v1's. ``Ne = 0`` is allowed (the factor at the start).
    """
    Ne = check_int("Ne", Ne, 0, strict=False)
    kappa = _kappa(kappa)
    return (1 + kappa) * (1 - 1 / math.sqrt(kappa)) ** Ne


def agd_contraction_sqrt(Ne: int, kappa: float) -> float:
    """The bound that the potential-function proof of Lemma 8 supports for the gradient-step
    sequence ``u``: ``sqrt(1 + kappa) (1 - 1/sqrt(kappa))^(Ne/2)``."""
    Ne = check_int("Ne", Ne, 0, strict=False)
    kappa = _kappa(kappa)
    return math.sqrt(1 + kappa) * (1 - 1 / math.sqrt(kappa)) ** (Ne / 2)


def agd_output_contraction(Ne: int, kappa: float) -> float:
    """Bound for the extrapolated output ``w^Ne = (1+beta) u^Ne - beta u^(Ne-1)`` of eq. (12)
    that follows from :func:`agd_contraction_sqrt` by the triangle inequality:
    ``sqrt(1+kappa) q^((Ne-1)/2) ((1+beta) sqrt(q) + beta)``, ``q = 1 - 1/sqrt(kappa)``
    (for ``Ne = 0``, ``w^0 = u^0`` and the bound is 1)."""
    Ne = check_int("Ne", Ne, 0, strict=False)
    kappa = _kappa(kappa)
    if Ne == 0:
        return 1.0
    q = 1 - 1 / math.sqrt(kappa)
    beta = agd_momentum(kappa)
    return math.sqrt(1 + kappa) * q ** ((Ne - 1) / 2) * ((1 + beta) * math.sqrt(q) + beta)


# --------------------------------------------------------------------------- Proposition 1


def coupling_constant(rho: float, lam: float, corrected: bool = False) -> float:
    """Constant ``c`` of step (17): ``1/(lam + 1/rho)`` as printed, or ``1/(1 + rho*lam)``,
    the Lipschitz constant of ``prox_{rho f}`` for ``lam``-strongly convex ``f``."""
    rho = check_positive("rho", rho)
    lam = check_positive("lam", lam)
    return 1.0 / (1.0 + rho * lam) if corrected else 1.0 / (lam + 1.0 / rho)


def matrix_S_from(a: float, zeta: float, c: float) -> np.ndarray:
    """``S = [[a, c(1+a)], [2a, zeta + 2ca]]`` with ``a`` the local-solver factor
    (``chi^Ne``, or ``chi(N_e)`` of Proposition 3), ``zeta`` of Lemma 3, ``c`` of (17)."""
    a = check_finite("a", a)
    zeta = check_finite("zeta", zeta)
    c = check_finite("c", c)
    if a < 0 or zeta < 0 or c < 0:
        raise ValueError(f"a, zeta and c must be >= 0, got a={a!r}, zeta={zeta!r}, c={c!r}")
    return np.array([[a, c * (1 + a)], [2 * a, zeta + 2 * c * a]])


def matrix_S(rho: float, Ne: int, lam: float, lam_bar: float, chi: float,
             corrected: bool = False) -> np.ndarray:
    """The matrix ``S`` of Proposition 1 for a ``chi``-contractive local solver run ``Ne`` times.

    ``corrected=True`` replaces ``1/(lam + 1/rho)`` by ``1/(1 + rho*lam)`` (step (17)).
    """
    rho = check_positive("rho", rho)
    Ne = check_int("Ne", Ne, strict=False)
    lam, lam_bar = _moduli(lam, lam_bar)
    chi = check_finite("chi", chi)
    if chi < 0:
        raise ValueError(f"chi must be >= 0, got {chi!r}")
    return matrix_S_from(chi ** Ne, prs_contraction(rho, lam, lam_bar),
                         coupling_constant(rho, lam, corrected))


def spectral_norm(S: Any) -> float:
    """Largest singular value ``||S||_2``."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError(f"S must be a matrix, got shape {S.shape}")
    return _linalg.spectral_norm(S, "S")


def spectral_radius(S: Any) -> float:
    """Largest eigenvalue modulus ``rho(S)``; ``S`` is stable when it is below one."""
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"S must be a square matrix, got shape {S.shape}")
    return float(np.max(np.abs(np.linalg.eigvals(S))))


# --------------------------------------------------------------------------- Lemma 7


def lemma7_condition(zeta: Any, a: Any, c: Any) -> np.ndarray | bool:
    """Closed-form stability of ``S = matrix_S_from(a, zeta, c)`` (vectorised).

    The eigenvalues of ``S`` are real; with trace ``t`` and determinant ``a(zeta - 2c)`` the
    Jury conditions reduce to ``1 - t + det > 0``, i.e. ``(1 - zeta)(1 - a) > 4 c a``
    (``1 + t + det = (1+a)(1+zeta) > 0`` always holds).
    """
    zeta, a, c = (np.asarray(v, dtype=float) for v in (zeta, a, c))
    out = (1 - zeta) * (1 - a) > 4 * c * a
    return bool(out) if out.ndim == 0 else out


def lemma7_condition_as_printed(zeta: Any, a: Any, c: Any) -> np.ndarray | bool:
    """Appendix B-B as printed: stability "requires" ``(1 - zeta)(1 - a) < 4 a c``."""
    zeta, a, c = (np.asarray(v, dtype=float) for v in (zeta, a, c))
    out = (1 - zeta) * (1 - a) < 4 * c * a
    return bool(out) if out.ndim == 0 else out


def gd_one_step_threshold(rho: float, lam: float, lam_bar: float, corrected: bool = False) -> dict[str, float]:
    """At ``Ne = 1``: the threshold ``(1-zeta)/(1-zeta+4c)`` that ``chi`` must stay *below*
    for ``S`` to be stable, and the smallest ``chi`` any GD step reaches,
    ``(kappa_d-1)/(kappa_d+1)`` at the step of :func:`default_local_step` (Lemma 7's proof
    claims ``chi`` can be made anything in ``(0,1)`` by the choice of ``gamma``)."""
    zeta = prs_contraction(rho, lam, lam_bar)
    c = coupling_constant(rho, lam, corrected)
    chi_min = local_gd_contraction(default_local_step(rho, lam, lam_bar), rho, lam, lam_bar)
    return {"threshold": (1 - zeta) / (1 - zeta + 4 * c), "chi_min": chi_min,
            "zeta": zeta, "c": c}


@dataclass(frozen=True)
class StabilityGrid:
    """Result of :func:`stabilising_parameters`: arrays indexed ``[rho, Ne, theta]``.

    ``gamma[r, t] = theta[t] * 2/(lam_bar + 1/rho[r])`` is the local step; ``radius`` and
    ``norm`` are ``rho(S)`` and ``||S||``; ``stable = radius < 1``, ``contractive = norm < 1``.
    """

    rho: np.ndarray
    Ne: np.ndarray
    theta: np.ndarray
    gamma: np.ndarray
    radius: np.ndarray
    norm: np.ndarray
    corrected: bool

    @property
    def stable(self) -> np.ndarray:
        return self.radius < 1

    @property
    def contractive(self) -> np.ndarray:
        return self.norm < 1

    def points(self, which: str = "stable") -> list[tuple[float, int, float]]:
        """The ``(rho, Ne, gamma)`` triples where ``which`` (``"stable"``/``"contractive"``) holds."""
        if which not in ("stable", "contractive"):
            raise ValueError(f"which must be 'stable' or 'contractive', got {which!r}")
        mask = self.stable if which == "stable" else self.contractive
        return [(float(self.rho[r]), int(self.Ne[e]), float(self.gamma[r, t]))
                for r, e, t in zip(*np.nonzero(mask), strict=False)]


def _S_batch(a: np.ndarray, zeta: np.ndarray, c: np.ndarray) -> np.ndarray:
    S = np.empty(a.shape + (2, 2))
    S[..., 0, 0] = a
    S[..., 0, 1] = c * (1 + a)
    S[..., 1, 0] = 2 * a
    S[..., 1, 1] = zeta + 2 * c * a
    return S


def stabilising_parameters(lam: float, lam_bar: float, rhos: Any, Nes: Any,
                           thetas: Any = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5),
                           corrected: bool = True) -> StabilityGrid:
    """Lemma 7 as a search: ``rho(S)`` and ``||S||`` (GD local solver) on a grid of
    ``rho``, ``Ne`` and ``gamma = theta * 2/(lam_bar + 1/rho)`` with ``theta`` in ``(0, 2)``
    (``theta = 1`` is the end of the range of Lemma 2; ``default_local_step`` is
    ``theta = (lam_bar+1/rho)/(lam_bar+lam+2/rho)``)."""
    lam, lam_bar = _moduli(lam, lam_bar)
    rhos = np.atleast_1d(np.asarray(rhos, dtype=float))
    Nes = np.atleast_1d(np.asarray(Nes))
    thetas = np.atleast_1d(np.asarray(thetas, dtype=float))
    if rhos.size == 0 or np.any(~np.isfinite(rhos)) or np.any(rhos <= 0):
        raise ValueError("rhos must be a non-empty array of values > 0")
    if Nes.size == 0 or not np.issubdtype(Nes.dtype, np.integer) or np.any(Nes < 1):
        raise ValueError("Nes must be a non-empty array of integers >= 1")
    if thetas.size == 0 or np.any(thetas <= 0) or np.any(thetas >= 2):
        raise ValueError("thetas must be a non-empty array of values in (0, 2)")
    Lr = lam_bar + 1 / rhos
    mr = lam + 1 / rhos
    gamma = thetas[None, :] * 2 / Lr[:, None]
    chi = np.maximum(np.abs(1 - gamma * mr[:, None]), np.abs(1 - gamma * Lr[:, None]))
    zeta = np.maximum(np.abs(1 - rhos * lam_bar) / (1 + rhos * lam_bar), np.abs(1 - rhos * lam) / (1 + rhos * lam))
    c = 1 / (1 + rhos * lam) if corrected else 1 / (lam + 1 / rhos)
    a = chi[:, None, :] ** Nes[None, :, None]
    shape = a.shape
    S = _S_batch(a, np.broadcast_to(zeta[:, None, None], shape), np.broadcast_to(c[:, None, None], shape))
    radius = np.max(np.abs(np.linalg.eigvals(S)), axis=-1)
    norm = np.linalg.norm(S, 2, axis=(-2, -1))
    return StabilityGrid(rho=rhos, Ne=Nes.astype(int), theta=thetas, gamma=gamma,
                         radius=radius, norm=norm, corrected=corrected)


def minimal_Ne(rho: float, gamma: float, lam: float, lam_bar: float, *, corrected: bool = True,
               criterion: str = "radius", Ne_max: int = 100_000) -> int | None:
    """Smallest ``Ne`` for which ``S`` (GD local solver with step ``gamma``) is stable
    (``criterion="radius"``: ``rho(S) < 1``, by the closed form of :func:`lemma7_condition`)
    or has ``||S|| < 1`` (``criterion="norm"``); ``None`` if none up to ``Ne_max``
    (e.g. ``chi >= 1``)."""
    if criterion not in ("radius", "norm"):
        raise ValueError(f"criterion must be 'radius' or 'norm', got {criterion!r}")
    Ne_max = check_int("Ne_max", Ne_max, strict=False)
    chi = local_gd_contraction(gamma, rho, lam, lam_bar)
    zeta = prs_contraction(rho, lam, lam_bar)
    c = coupling_constant(rho, lam, corrected)
    if chi >= 1:
        return None
    Ne = np.arange(1, Ne_max + 1)
    a = chi ** Ne.astype(float)
    if criterion == "radius":
        ok = lemma7_condition(zeta, a, c)
    else:
        S = _S_batch(a, np.full_like(a, zeta), np.full_like(a, c))
        ok = np.linalg.norm(S, 2, axis=(-2, -1)) < 1
    hits = np.flatnonzero(ok)
    return int(Ne[hits[0]]) if hits.size else None
