"""Checks of Proposition 1 (one round of Fed-PLT is ``||S||``-contractive, with fixed point
``[x_bar; z_bar]``) and Lemma 7 (a stabilising choice of parameters exists).

On quadratic costs one full-participation round is the affine map ``s -> M s + m``
(:func:`~fedrepro.fedplt.checks.instances.affine_round`), so its exact Lipschitz constant is
``||M||_2`` and Proposition 1 reads ``||M||_2 <= ||S||_2`` whenever ``S`` is stable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.validate import ParameterTypeError, check_int, check_interval, check_positive
from fedrepro.fedplt.checks import _validate as _v
from fedrepro.fedplt.checks._validate import choice, finite_penalty, generator
from fedrepro.fedplt.checks.instances import affine_round, local_step_size, quadratic_problem
from fedrepro.fedplt.checks.result import CheckResult, make_result

__all__ = [
    "Proposition1Instance", "check_proposition1", "proposition1_S",
    "Lemma7Instance", "check_lemma7", "check_lemma7_one_step", "lemma7_condition_agreement",
]

VARIANTS = ("paper", "corrected")


def _variant(variant: str) -> bool:
    return choice("variant", variant, VARIANTS) == "corrected"


@dataclass(frozen=True)
class Proposition1Instance:
    """A quadratic federated problem (``N`` agents, dimension ``n``, every ``A_i`` with spectrum
    in ``[lam, lam_bar]``, extremes included; ``identical=True``: ``A_i = lam I``) and the
    parameters of Fed-PLT with GD local training, step ``theta * 2/(lam_bar + 1/rho)``."""

    N: int = 3
    n: int = 2
    lam: float = 1.0
    lam_bar: float = 4.0
    rho: float = 1.0
    Ne: int = 2
    theta: float = 0.5
    seed: int = 0
    identical: bool = False

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n")
        _v.moduli(self)
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)
        check_interval("theta", self.theta, 0.0, 2.0, closed_low=False, closed_high=False)
        _v.seed(self)
        _v.identical_moduli(self)

    def problem(self):
        return quadratic_problem(self.N, self.n, self.lam, self.lam_bar,
                                 np.random.default_rng(self.seed), identical=self.identical)

    @property
    def gamma(self) -> float:
        return local_step_size(self.theta, self.rho, self.lam, self.lam_bar)


def proposition1_S(inst: Proposition1Instance, variant: str = "paper") -> np.ndarray:
    """``S`` of Proposition 1 for the instance (``variant="corrected"``: step (17) with
    ``1/(1 + rho lam)``)."""
    chi = ops.local_gd_contraction(inst.gamma, inst.rho, inst.lam, inst.lam_bar)
    return ops.matrix_S(inst.rho, inst.Ne, inst.lam, inst.lam_bar, chi, corrected=_variant(variant))


def check_proposition1(inst: Proposition1Instance, variant: str = "paper",
                       engine: str = "implementation") -> CheckResult:
    """Proposition 1: ``||M||_2 <= ||S||_2`` when ``S`` is stable (else not applicable).

    ``details`` also holds the fixed-point residual ``||T(s_bar) - s_bar||`` (the first
    claim of Proposition 1), ``rho(S)`` and ``rho(M)``. Tolerance ``rtol = 1e-9``: ``M`` is
    computed to round-off from the implementation.
    """
    S = proposition1_S(inst, variant)
    radius_S = ops.spectral_radius(S)
    rnd = affine_round(inst.problem(), rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma,
                       engine=engine)
    fp_residual = float(np.linalg.norm(rnd.M @ rnd.s_bar + rnd.m - rnd.s_bar))
    return make_result(rnd.lipschitz, ops.spectral_norm(S), rtol=1e-9, applicable=radius_S < 1,
                       variant=variant, radius_S=radius_S, radius_M=rnd.radius,
                       fixed_point_residual=fp_residual,
                       fixed_point_scale=float(np.linalg.norm(rnd.s_bar)))


# --------------------------------------------------------------------------- Lemma 7


@dataclass(frozen=True)
class Lemma7Instance:
    """Moduli ``(lam, lam_bar)``; the search grid is ``rho`` log-spaced on ``[1e-3, 1e3]``
    (``n_rho`` points), ``Ne = 1..Ne_max`` and ``theta`` in ``thetas``."""

    lam: float = 1.0
    lam_bar: float = 10.0
    n_rho: int = 61
    Ne_max: int = 200
    thetas: tuple[float, ...] = (0.25, 0.5, 0.75, 0.95)

    def __post_init__(self) -> None:
        _v.moduli(self)
        check_int("n_rho", self.n_rho, 1)
        check_int("Ne_max", self.Ne_max, 1)
        if not isinstance(self.thetas, (tuple, list)) or len(self.thetas) == 0:
            raise ParameterTypeError(f"thetas must be a non-empty tuple of numbers in (0, 2), got {self.thetas!r}")
        for theta in self.thetas:
            check_interval("thetas", theta, 0.0, 2.0, closed_low=False, closed_high=False)


def check_lemma7(inst: Lemma7Instance, variant: str = "corrected", criterion: str = "radius") -> CheckResult:
    """Lemma 7: some ``(rho, Ne, gamma)`` makes ``S`` stable. Observed: the smallest
    ``rho(S)`` (``criterion="radius"``) or ``||S||`` (``"norm"``, what Propositions 1-2 use)
    on the grid; bound 1 (strict, ``rtol = 0``, shifted by ``-1e-12`` to make it strict)."""
    if criterion not in ("radius", "norm"):
        raise ValueError(f"criterion must be 'radius' or 'norm', got {criterion!r}")
    grid = ops.stabilising_parameters(inst.lam, inst.lam_bar, np.logspace(-3, 3, inst.n_rho),
                                      np.arange(1, inst.Ne_max + 1), inst.thetas,
                                      corrected=_variant(variant))
    values = grid.radius if criterion == "radius" else grid.norm
    r, e, t = np.unravel_index(np.argmin(values), values.shape)
    return make_result(values[r, e, t], 1.0, rtol=0.0, atol=-1e-12, criterion=criterion,
                       variant=variant, rho=float(grid.rho[r]), Ne=int(grid.Ne[e]),
                       gamma=float(grid.gamma[r, t]), n_stable=int(grid.stable.sum()),
                       n_contractive=int(grid.contractive.sum()), n_grid=int(values.size))


def check_lemma7_one_step(rho: float, lam: float, lam_bar: float, variant: str = "paper") -> CheckResult:
    """The argument of Lemma 7's proof: with ``Ne = 1`` a step ``gamma`` can always be found
    that makes ``S`` stable. With ``Ne = 1``, ``S`` is stable iff
    ``chi < (1-zeta)/(1-zeta+4c)``, and no GD step gives ``chi`` below
    ``(kappa_d-1)/(kappa_d+1)``. Observed: that smallest ``chi``; bound: the threshold
    (strict: ``atol = -1e-12``).

    ``rho > 0``, ``0 < lam <= lam_bar`` finite, such that ``1/rho``, ``rho lam_bar`` and
    ``lam + lam_bar + 2/rho`` are finite (else ``zeta`` or the default step leave the float
    range)."""
    corrected = _variant(variant)
    check_positive("rho", rho)
    lam_f, lam_bar_f = ops._moduli(lam, lam_bar)
    finite_penalty(rho, lam_bar, with_product=True)
    if not math.isfinite(lam_bar_f + lam_f + 2.0 / float(rho)):
        raise ValueError(f"lam + lam_bar + 2/rho must be finite, got rho={rho!r}, lam={lam!r}, lam_bar={lam_bar!r}")
    info = ops.gd_one_step_threshold(rho, lam, lam_bar, corrected=corrected)
    return make_result(info["chi_min"], info["threshold"], rtol=0.0, atol=-1e-12, **info)


def lemma7_condition_agreement(count: int, rng: np.random.Generator) -> dict[str, int]:
    """On ``count`` random ``(zeta, a, c)`` (``zeta, a`` uniform in ``[0,1)``, ``c`` log-uniform
    on ``[1e-3, 1e2]``): how often the closed-form condition (:func:`~fedrepro.core.operators.lemma7_condition`)
    and the condition printed in Appendix B-B disagree with ``rho(S) < 1`` computed from the
    eigenvalues."""
    check_int("count", count, 1)
    generator("rng", rng)
    zeta = rng.random(count)
    a = rng.random(count)
    c = 10 ** rng.uniform(-3, 2, count)
    S = np.empty((count, 2, 2))
    S[:, 0, 0], S[:, 0, 1], S[:, 1, 0], S[:, 1, 1] = a, c * (1 + a), 2 * a, zeta + 2 * c * a
    eig = np.linalg.eigvals(S)
    stable = np.max(np.abs(eig), axis=1) < 1
    real = np.all(np.abs(eig.imag) <= 1e-12 * (1 + np.abs(eig.real)), axis=1)
    return {
        "count": int(count),
        "stable": int(stable.sum()),
        "complex_eigenvalues": int((~real).sum()),
        "mismatch_corrected": int(np.sum(ops.lemma7_condition(zeta, a, c) != stable)),
        "mismatch_printed": int(np.sum(ops.lemma7_condition_as_printed(zeta, a, c) != stable)),
    }
