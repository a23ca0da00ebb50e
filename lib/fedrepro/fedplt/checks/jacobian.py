"""Proposition 1 on logistic costs: the Jacobian of one Fed-PLT round.

On a non-quadratic cost one round ``T`` of Fed-PLT (full participation, local gradient
descent, eq. (11)) is no longer affine, so ``||M||_2`` of the quadratic checks has no
counterpart. Its Jacobian with respect to the state ``s = [vec(X); vec(Z)]`` (agent-major rows,
as in :func:`~fedrepro.fedplt.checks.instances.affine_round`) is, by the mean value theorem,
a lower bound of the round's Lipschitz constant at every state: ``sup_s ||J_T(s)||_2 <= Lip(T)``.
Proposition 1 claims ``Lip(T) <= ||S||_2``; a sampled ``||J_T(s)||_2`` above ``||S||_2``
refutes it (spec §10.6 (iii)).

The Jacobian is exact, by the chain rule through the ``N_e`` local steps: with
``y = mean_i z_i``, ``v_i = 2 y - z_i`` and ``w^{l+1}_i = w^l_i - gamma (grad f_i(w^l_i) +
(w^l_i - v_i)/rho)``, each step is the linear map
``dw^{l+1} = (I - gamma (H_i(w^l_i) + I/rho)) dw^l + (gamma/rho) dv_i`` (``H_i`` the Hessian
of ``f_i``), so ``dx^+_i = Phi_i dx_i + Psi_i dv_i`` and ``dz^+_i = dz_i + 2 (dx^+_i - dy)``.
The local iterates ``w^l`` are those of the library's implementation
(:func:`fedrepro.fedplt.algorithm.fedplt_iteration`), and a central finite-difference
Jacobian of that implementation (:func:`round_jacobian_fd`) cross-checks the formula.

The states sampled by :func:`max_jacobian_norm`: the fixed point, Gaussian perturbations of it
at several radii, and a small adversarial ascent that moves the state along the top right
singular vector of ``J`` (and random directions) while ``||J||`` grows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.linalg import spectral_norm, top_singular
from fedrepro.core.validate import ParameterTypeError, check_int, check_positive
from fedrepro.fedplt.checks._validate import choice
from fedrepro.fedplt.checks.result import CheckResult, make_result

if TYPE_CHECKING:
    from fedrepro.problems import FederatedProblem

__all__ = [
    "LOGISTIC_SETUPS", "SMOOTHNESS", "JacobianInstance", "StateSampling", "JacobianSearch",
    "round_jacobian", "round_jacobian_fd", "round_state", "max_jacobian_norm",
    "proposition1_logistic_S", "check_proposition1_logistic",
]

#: Logistic problems of the check: ``"v1"`` (v1 §VII: ``n = 16`` with intercept, 20 points per
#: agent, regulariser ``eps/(2N)||x||^2``) and ``"v2"`` (v2 §VII convex: ``n = 5``, 250 points,
#: ``eps = 0.5``), both with ``N`` agents.
LOGISTIC_SETUPS = ("v1", "v2")
SMOOTHNESS = ("tight", "loose")
VARIANTS = ("paper", "corrected")


def _check_variant(variant: str) -> bool:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant == "corrected"


@dataclass(frozen=True)
class JacobianInstance:
    """A small logistic federated problem (``setup`` in :data:`LOGISTIC_SETUPS`, ``N`` agents,
    data seed ``seed``, smoothness constant ``lam_bar`` ``"tight"`` or ``"loose"``) and Fed-PLT's
    parameters ``rho``, ``Ne``; the local step is the library's default
    ``2/(lam_bar + lam + 2/rho)`` for that ``lam_bar``."""

    setup: str = "v2"
    N: int = 10
    seed: int = 0
    smoothness: str = "tight"
    rho: float = 1.0
    Ne: int = 1

    def __post_init__(self) -> None:
        choice("setup", self.setup, LOGISTIC_SETUPS)
        choice("smoothness", self.smoothness, SMOOTHNESS)
        check_int("N", self.N, 1, 10)  # small instances
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)

    def problem(self):
        from fedrepro.problems import logistic_v1, logistic_v2

        if self.setup == "v1":
            return logistic_v1(self.seed, N=self.N, smoothness=self.smoothness)
        return logistic_v2(True, self.seed, N=self.N, smoothness=self.smoothness)


@dataclass(frozen=True)
class StateSampling:
    """Which states the search visits: the fixed point; ``per_radius`` Gaussian perturbations
    ``s_bar + r xi`` (``xi`` standard normal in ``R^{2Nn}``) for each ``r`` in ``radii``;
    then ``restarts`` ascents from the best states found, each of ``steps`` moves along
    ``+-`` the top right singular vector of ``J`` and ``directions`` random unit directions,
    with step lengths ``lengths`` (a move is kept only if ``||J||`` grows)."""

    radii: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
    per_radius: int = 3
    restarts: int = 2
    steps: int = 6
    directions: int = 2
    lengths: tuple[float, ...] = (0.3, 3.0, 30.0)

    def __post_init__(self) -> None:
        for name in ("radii", "lengths"):
            values = getattr(self, name)
            if not (isinstance(values, (tuple, list)) or (isinstance(values, np.ndarray) and values.ndim == 1)):
                raise ParameterTypeError(f"{name} must be a tuple of finite numbers > 0, got {values!r} "
                                         f"({type(values).__name__})")
            if len(values) == 0:
                raise ValueError(f"{name} must be a non-empty tuple of finite numbers > 0, got {values!r}")
            for v in values:
                check_positive(name, v)
        for name in ("per_radius", "restarts", "steps", "directions"):
            check_int(name, getattr(self, name), 0)


def _split(problem, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    N, n = problem.N, problem.n
    s = np.asarray(s, dtype=float)
    if s.shape != (2 * N * n,):
        raise ValueError(f"s must have shape ({2 * N * n},) = 2 N n, got {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("s must be finite")
    return s[: N * n].reshape(N, n), s[N * n:].reshape(N, n)


def _step(problem, rho: float, gamma: float | None) -> float:
    from fedrepro.fedplt.algorithm import default_step_size

    return float(default_step_size(problem, rho)) if gamma is None else float(gamma)


def round_state(problem: FederatedProblem, s: Any, *, rho: float, Ne: int,
                gamma: float | None = None) -> np.ndarray:
    """``T(s)``: one round of the library's Fed-PLT (GD, full participation) on the state
    ``s = [vec(X); vec(Z)]``."""
    from fedrepro.fedplt.algorithm import fedplt_iteration

    X, Z = _split(problem, s)
    x_new, z_new, _ = fedplt_iteration(X, Z, problem, rho=rho, Ne=Ne, solver="gd",
                                       gamma=_step(problem, rho, gamma))
    return np.concatenate([np.ravel(x_new), np.ravel(z_new)])


def round_jacobian(problem: FederatedProblem, s: Any, *, rho: float, Ne: int,
                   gamma: float | None = None) -> np.ndarray:
    """The exact Jacobian ``J_T(s)`` (shape ``(2Nn, 2Nn)``) of one Fed-PLT round (GD, full
    participation, default step unless ``gamma``) by the chain rule (module docstring).

    The local iterates ``w^0 .. w^{Ne-1}`` come from the implementation: ``w^l`` is the ``x``
    output of :func:`~fedrepro.fedplt.algorithm.fedplt_iteration` with ``l`` local steps
    (same warm start and ``v``)."""
    from fedrepro.fedplt.algorithm import fedplt_iteration

    X, Z = _split(problem, s)
    check_int("Ne", Ne, 1)
    g = _step(problem, rho, gamma)
    N, n = problem.N, problem.n
    eye = np.eye(n)
    iterates = [X] + [fedplt_iteration(X, Z, problem, rho=rho, Ne=ell, solver="gd", gamma=g)[0]
                      for ell in range(1, Ne)]
    Phi = np.broadcast_to(eye, (N, n, n)).copy()  # d w^l / d x
    Psi = np.zeros((N, n, n))  # d w^l / d v
    for W in iterates:
        step = eye - g * (problem.hessian(W) + eye / rho)  # (N, n, n)
        Phi = step @ Phi
        Psi = step @ Psi + (g / rho) * eye
    # dv_i/dz_j = (2/N - delta_ij) I ; assemble agent-major blocks
    dv_dz = np.kron(np.full((N, N), 2.0 / N) - np.eye(N), eye)  # (Nn, Nn)
    Jxx = np.zeros((N * n, N * n))
    for_blocks = np.arange(N)
    Jxx.reshape(N, n, N, n)[for_blocks, :, for_blocks, :] = Phi
    Psi_blk = np.zeros((N * n, N * n))
    Psi_blk.reshape(N, n, N, n)[for_blocks, :, for_blocks, :] = Psi
    Jxz = Psi_blk @ dv_dz
    Jzx = 2.0 * Jxx
    Jzz = np.eye(N * n) + 2.0 * Jxz - 2.0 * np.kron(np.full((N, N), 1.0 / N), eye)
    return np.block([[Jxx, Jxz], [Jzx, Jzz]])


def round_jacobian_fd(problem: FederatedProblem, s: Any, *, rho: float, Ne: int, gamma: float | None = None,
                      h: float = 1e-6) -> np.ndarray:
    """Central finite differences ``(T(s + h e_k) - T(s - h e_k)) / (2h)`` of the implemented
    round, column by column (``2 * 2Nn`` rounds; the round couples all agents through ``y``,
    so the columns cannot be batched into one call). Truncation error ``O(h^2)``, round-off
    ``O(eps |T| / h)``."""
    if not (math.isfinite(h) and h > 0):
        raise ValueError(f"h must be finite and > 0, got {h!r}")
    s = np.concatenate(_split(problem, s)).ravel()
    d = s.size
    cols = np.empty((d, d))
    for k in range(d):
        e = np.zeros(d)
        e[k] = h
        cols[k] = (round_state(problem, s + e, rho=rho, Ne=Ne, gamma=gamma)
                   - round_state(problem, s - e, rho=rho, Ne=Ne, gamma=gamma)) / (2 * h)
    return cols.T


@dataclass(frozen=True)
class JacobianSearch:
    """The largest ``||J_T(s)||_2`` found, where (``kind``: ``"fixed-point"``, ``"random"`` or
    ``"ascent"``; ``distance`` = ``||s - s_bar||``), ``||J||`` at the fixed point, and the
    number of Jacobians evaluated."""

    max_norm: float
    at_fixed_point: float
    kind: str
    distance: float
    evaluations: int
    norms_by_radius: tuple[float, ...]


def _fixed_state(problem, rho: float) -> np.ndarray:
    from fedrepro.fedplt.algorithm import fixed_point

    X, Z = fixed_point(problem, rho)
    return np.concatenate([X.ravel(), Z.ravel()])


def max_jacobian_norm(inst: JacobianInstance, rng: np.random.Generator,
                      sampling: StateSampling = StateSampling()) -> JacobianSearch:
    """``max ||J_T(s)||_2`` over the states of ``sampling`` (a lower bound of the round's
    Lipschitz constant) on the instance."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    problem = inst.problem()
    s_bar = _fixed_state(problem, inst.rho)
    d = s_bar.size
    count = 0

    def jacobian(s):
        return round_jacobian(problem, s, rho=inst.rho, Ne=inst.Ne)

    def norm(s):
        # the norm without singular vectors: cannot fail on a repeated top singular value
        nonlocal count
        count += 1
        return spectral_norm(jacobian(s))

    def direction(s):
        # only where the ascent needs it: a canonical top right singular vector (gesvd),
        # so that the search path does not depend on the LAPACK/BLAS kernel
        return top_singular(jacobian(s))[1]

    at_fp = norm(s_bar)
    visited = [(at_fp, s_bar, "fixed-point")]
    by_radius = []
    for r in sampling.radii:
        best_r = 0.0
        for _ in range(sampling.per_radius):
            s = s_bar + r * rng.standard_normal(d)
            val = norm(s)
            visited.append((val, s, "random"))
            best_r = max(best_r, val)
        by_radius.append(best_r)
    visited.sort(key=lambda t: -t[0])
    best = visited[0]
    for start in visited[: sampling.restarts]:
        val, s, _ = start
        for _ in range(sampling.steps):
            v = direction(s)
            dirs = [v, -v] + [u / np.linalg.norm(u) for u in rng.standard_normal((sampling.directions, d))]
            cands = [s + t * u for u in dirs for t in sampling.lengths]
            evals = [norm(c) for c in cands]
            k = int(np.argmax(evals))
            if evals[k] <= val:
                break
            val, s = evals[k], cands[k]
            if val > best[0]:
                best = (val, s, "ascent")
    return JacobianSearch(max_norm=float(best[0]), at_fixed_point=at_fp, kind=best[2],
                          distance=float(np.linalg.norm(best[1] - s_bar)), evaluations=count,
                          norms_by_radius=tuple(by_radius))


def proposition1_logistic_S(inst: JacobianInstance, variant: str = "paper") -> np.ndarray:
    """``S`` of Proposition 1 (``variant="corrected"``: ``S~`` with ``1/(1 + rho lam)``) for the
    problem's ``lam`` and the ``lam_bar`` of the instance's smoothness choice, with ``chi`` of
    the default local step for that ``lam_bar``."""
    corrected = _check_variant(variant)
    problem = inst.problem()
    lam, lam_bar = problem.lam, problem.lam_bar
    gamma = _step(problem, inst.rho, None)
    chi = ops.local_gd_contraction(gamma, inst.rho, lam, lam_bar)
    return ops.matrix_S(inst.rho, inst.Ne, lam, lam_bar, chi, corrected=corrected)


def check_proposition1_logistic(inst: JacobianInstance, variant: str = "paper", *,
                                rng: np.random.Generator | None = None,
                                sampling: StateSampling = StateSampling(),
                                search: JacobianSearch | None = None) -> CheckResult:
    """Proposition 1 on a logistic instance: observed ``max_s ||J_T(s)||_2`` over the sampled
    states (:func:`max_jacobian_norm`; pass ``search`` to reuse one search for both variants),
    bound ``||S||_2`` (``"paper"``) or ``||S~||_2`` (``"corrected"``). Applicable when that
    ``S`` is stable (``rho(S) < 1``), as :func:`~fedrepro.fedplt.checks.check_proposition1`
    decides. Tolerance ``rtol = 1e-9``: the Jacobian is exact up to round-off.

    ``rng`` defaults to ``default_rng(inst.seed)``."""
    _check_variant(variant)
    S = proposition1_logistic_S(inst, variant)
    radius = ops.spectral_radius(S)
    if search is None:
        search = max_jacobian_norm(inst, rng if rng is not None else np.random.default_rng(inst.seed), sampling)
    return make_result(search.max_norm, ops.spectral_norm(S), rtol=1e-9, applicable=radius < 1,
                       variant=variant, radius_S=radius, at_fixed_point=search.at_fixed_point,
                       worst_kind=search.kind, worst_distance=search.distance,
                       evaluations=search.evaluations)
