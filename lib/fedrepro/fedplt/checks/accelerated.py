"""Checks of Lemma 8 (contraction of accelerated gradient descent) and Proposition 3
(Fed-PLT with accelerated local training).

Lemma 8 is checked exactly on quadratics: for ``f = x^T H x/2`` with ``spec(H)`` in
``[lam, lam_bar]`` the errors of eq. (12) evolve eigenvalue by eigenvalue through a scalar
two-term recursion, so the worst case of ``||x^l - x_bar|| / ||x^0 - x_bar||`` over all such
``f`` is the maximum of that recursion over ``h`` in ``[lam, lam_bar]`` (a dense grid with
both ends gives it to grid resolution; each grid point is a genuine instance, so a
violation found on the grid is a counterexample).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.linalg import spectral_norm
from fedrepro.core.validate import check_finite, check_int, check_positive
from fedrepro.fedplt.checks import _validate as _v
from fedrepro.fedplt.checks.instances import affine_round, quadratic_problem
from fedrepro.fedplt.checks.result import CheckResult, make_result

__all__ = [
    "Lemma8Instance", "check_lemma8", "agd_worst_case",
    "Proposition3Instance", "check_proposition3", "proposition3_S",
]


def agd_worst_case(kappa: float, ell_max: int, grid: int = 2001) -> tuple[np.ndarray, np.ndarray]:
    """``(u, w)``: for ``l = 0..ell_max``, the largest ``|u^l|`` and ``|w^l|`` over
    ``h`` in ``[1, kappa]`` (grid of ``grid`` points with both ends) of eq. (12) / Lemma 8 on
    ``f = h x^2/2`` with step ``1/kappa``, momentum ``(sqrt(kappa)-1)/(sqrt(kappa)+1)`` and
    ``u^0 = w^0 = 1`` (``x_bar = 0``; the ratio is scale-invariant, so ``lam = 1``)."""
    beta = ops.agd_momentum(kappa)
    check_int("ell_max", ell_max, 0)
    check_int("grid", grid, 2)
    h = np.linspace(1.0, kappa, grid)
    u = np.ones_like(h)
    w = np.ones_like(h)
    U, W = [1.0], [1.0]
    for _ in range(ell_max):
        u_new = w - h * w / kappa
        w = u_new + beta * (u_new - u)
        u = u_new
        U.append(float(np.max(np.abs(u))))
        W.append(float(np.max(np.abs(w))))
    return np.array(U), np.array(W)


@dataclass(frozen=True)
class Lemma8Instance:
    """Condition number ``kappa = lam_bar/lam`` and number of steps ``ell``; ``sequence`` is
    ``"u"`` (the gradient-step sequence, which Lemma 8 bounds) or ``"w"`` (the extrapolated
    sequence, which eq. (12) outputs)."""

    kappa: float = 2.0
    ell: int = 5
    sequence: str = "u"
    grid: int = 2001

    def __post_init__(self) -> None:
        check_finite("kappa", self.kappa)
        if not self.kappa >= 1:
            raise ValueError(f"kappa must be in [1, inf) (kappa = lam_bar/lam), got {self.kappa!r}")
        check_int("ell", self.ell, 0)
        _v.choice("sequence", self.sequence, ("u", "w"))
        check_int("grid", self.grid, 2)


def check_lemma8(inst: Lemma8Instance, variant: str = "paper") -> CheckResult:
    """Lemma 8: ``||x^l - x_bar|| <= (1+kappa)(1 - 1/sqrt(kappa))^l ||x^0 - x_bar||``.

    ``variant="corrected"``: the square-root bound ``sqrt(1+kappa)(1-1/sqrt(kappa))^(l/2)``
    that the proof's potential function supports, for ``u``; for ``w`` the bound of
    :func:`~fedrepro.core.operators.agd_output_contraction`. Tolerance ``rtol = 1e-9``
    (round-off of a scalar recursion)."""
    if inst.sequence not in ("u", "w"):
        raise ValueError(f"sequence must be 'u' or 'w', got {inst.sequence!r}")
    if variant not in ("paper", "corrected"):
        raise ValueError(f"variant must be 'paper' or 'corrected', got {variant!r}")
    U, W = agd_worst_case(inst.kappa, inst.ell, inst.grid)
    observed = (U if inst.sequence == "u" else W)[inst.ell]
    if variant == "paper":
        bound = ops.agd_contraction(inst.ell, inst.kappa)
    elif inst.sequence == "u":
        bound = ops.agd_contraction_sqrt(inst.ell, inst.kappa)
    else:
        bound = ops.agd_output_contraction(inst.ell, inst.kappa)
    return make_result(observed, bound, rtol=1e-9, variant=variant, sequence=inst.sequence)


@dataclass(frozen=True)
class Proposition3Instance:
    """Quadratic federated problem and Fed-PLT with accelerated local training (eq. (12),
    ``L_d = lam_bar + 1/rho``, ``mu_d = lam + 1/rho``, output ``w^Ne``)."""

    N: int = 3
    n: int = 2
    lam: float = 1.0
    lam_bar: float = 4.0
    rho: float = 1.0
    Ne: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n")
        _v.moduli(self)
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)
        _v.seed(self)

    def problem(self):
        return quadratic_problem(self.N, self.n, self.lam, self.lam_bar, np.random.default_rng(self.seed))

    @property
    def kappa_d(self) -> float:
        return ops.local_condition_number(self.rho, self.lam, self.lam_bar, "v2")


def proposition3_S(inst: Proposition3Instance, variant: str = "paper") -> np.ndarray:
    """``S'`` of Proposition 3: ``chi(Ne)`` of v2 and ``c = 1/(lam+1/rho)`` (``"paper"``), or
    the output bound of :func:`~fedrepro.core.operators.agd_output_contraction` and
    ``c = 1/(1+rho lam)`` (``"corrected"``)."""
    if variant not in ("paper", "corrected"):
        raise ValueError(f"variant must be 'paper' or 'corrected', got {variant!r}")
    zeta = ops.prs_contraction(inst.rho, inst.lam, inst.lam_bar)
    if variant == "paper":
        a = ops.agd_contraction(inst.Ne, inst.kappa_d)
    else:
        a = ops.agd_output_contraction(inst.Ne, inst.kappa_d)
    return ops.matrix_S_from(a, zeta, ops.coupling_constant(inst.rho, inst.lam, variant == "corrected"))


def check_proposition3(inst: Proposition3Instance, variant: str = "paper",
                       engine: str = "implementation") -> CheckResult:
    """Proposition 3: ``||M'||_2 <= ||S'||_2`` when ``S'`` is stable (else not applicable).

    ``details`` also holds the local map's exact Lipschitz constant ``||dX/dx||`` (the
    ``x``-block of ``M'``) next to ``chi(Ne)`` (the premise taken from Lemma 8), and
    ``rho(M')`` (whether the algorithm converges at all). Tolerance ``rtol = 1e-9``."""
    S = proposition3_S(inst, variant)
    radius_S = ops.spectral_radius(S)
    rnd = affine_round(inst.problem(), rho=inst.rho, Ne=inst.Ne, solver="agd", engine=engine)
    Nn = inst.N * inst.n
    local = spectral_norm(rnd.M[:Nn, :Nn])
    return make_result(rnd.lipschitz, ops.spectral_norm(S), rtol=1e-9, applicable=radius_S < 1,
                       variant=variant, radius_S=radius_S, radius_M=rnd.radius,
                       local_lipschitz=local, chi_Ne=float(S[0, 0]))
