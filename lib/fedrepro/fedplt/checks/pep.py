"""Exact worst-case contraction of one Fed-PLT round by performance estimation (PEP).

Performance estimation (Drori and Teboulle; Taylor, Hendrickx and Glineur) turns "the
largest ratio ``||T s - s_bar|| / ||s - s_bar||`` of one round ``T`` of Algorithm 1 (v2) over
every cost ``f_i`` in ``F_{lam, lam_bar}`` and every state ``s = (x, z)``" into a small
semidefinite program over the Gram matrix of the iterates and gradients, with the
smooth strongly convex interpolation conditions (Taylor et al. 2017, Theorem 4) as its
constraints. The value is exact: an upper bound for every function of the class (the
dual certificate) that a function of the class attains (the primal Gram matrix).

The round is the one of :mod:`fedrepro.fedplt.algorithm` with ``h = 0`` and full
participation: ``y = mean_i z_i``, ``v_i = 2 y - z_i``, ``N_e`` steps of local GD (v2
eq. (11), step ``gamma``) or AGD (eq. (12), output ``w^{N_e}``) on
``d_i(w) = f_i(w) + ||w - v_i||^2 / (2 rho)`` warm-started at ``x_i``, or the exact local prox
(eq. (10), the ``N_e -> infinity`` limit); ``z_i^+ = z_i + 2 (x_i^+ - y)``. The reference
point is the fixed point ``s_bar``: ``x_i = x*``, ``z_i = x* - rho grad f_i(x*)`` with
``sum_i grad f_i(x*) = 0`` (the PEP encodes it as ``||sum_i g_i*||^2 = 0``).

The norm is that of Proposition 1: the Euclidean norm of the stacked state
``(x, z)`` (``norm="xz"``), whose one-round contraction ``||S||`` bounds (v2 Proposition 1,
Proposition 3 with ``chi(N_e)``). ``norm="z"`` measures ``z`` alone, the norm of Lemma 3, in
which exact PRS contracts by ``zeta`` (closed form, :func:`fedrepro.core.operators.prs_contraction`).

The worst-case instance is rebuilt from the primal Gram matrix: PEPit factors it into
points, gradients and function values per agent, and :class:`InterpolatedProblem` is a
federated problem whose costs are the smooth strongly convex interpolants of those data
(the constructive proof of Taylor et al. 2017, Theorem 4: a ``1/(lam_bar - lam)``-strongly
convex interpolant of the conjugate data, conjugated back), so that the library's own
implementation of Algorithm 1 can be run on it (:func:`check_worst_case_attained`).

SDP solver: Clarabel (interior point, open source) through cvxpy, its default tolerances
(gap and feasibility ``1e-8``); SCS can be chosen. The rates are square roots of the SDP
value, so a value error ``eps`` is a rate error of about ``eps / (2 rate)``; the checks use
:data:`RATE_RTOL`. SCS (first order, ``eps 1e-4``) agrees with Clarabel to about ``1e-4`` at
``rho <= 10`` but drifts by 3% at ``rho = 31.6``, and is no faster on these small SDPs.
The SDP is written for scaled costs (``f_i / lam_bar`` for local GD/AGD, ``rho f_i`` for the
prox: :func:`_cost_scale`), and the fixed-point condition ``sum_i grad f_i(x*) = 0`` by eliminating the last agent's gradient,
which leaves the SDP an interior point: the latter cuts Clarabel's error on ``zeta`` from
``4e-4`` to ``1e-9``, the former its error at large ``rho`` from 1% to ``1e-7``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.validate import ParameterTypeError, check_int, check_nonnegative, check_positive
from fedrepro.fedplt.checks._validate import choice
from fedrepro.fedplt.checks.result import CheckResult, make_result
from fedrepro.problems.base import FederatedProblem

__all__ = [
    "PEP_SOLVERS", "NORMS", "SDP_SOLVERS", "RATE_RTOL", "ATTAINED_RTOL",
    "PEPInstance", "PEPResult", "WorstCase", "InterpolatedProblem",
    "default_step", "worst_case_rate", "worst_case_instance", "round_ratio",
    "quadratic_contraction", "logistic_contraction", "proposition_bound",
    "check_prox_rate", "check_measured_below", "check_worst_case_attained",
]

PEP_SOLVERS = ("gd", "agd", "prox")
NORMS = ("xz", "z")
SDP_SOLVERS = ("CLARABEL", "SCS")
#: Relative tolerance on a worst-case rate (square root of the SDP value) computed with one
#: agent: Clarabel's default gap/feasibility tolerances are 1e-8 on the value; measured on the
#: chapter's grid (rho in [0.03, 31.6], N_e <= 10): the exact-prox PEP equals the closed-form
#: zeta to 1.5e-8, and random quadratic instances exceed the PEP value by at most 4.7e-6.
RATE_RTOL = 1e-5
#: Relative tolerance where larger SDPs or a rebuilt worst case enter: the rate with N = 2, 3
#: agents (more unknowns, the same value in exact arithmetic) and :func:`check_worst_case_attained`
#: (the primal Gram matrix projected onto the PSD cone and factored, and the interpolant's
#: gradients from a QP). Measured up to 2e-4 relative (N = 3, AGD, rho = 10: the N = 3 SDP
#: overestimates; its worst case fed back to the implementation gives a ratio below the N = 1
#: value).
ATTAINED_RTOL = 1e-3


@dataclass(frozen=True)
class PEPInstance:
    """One round of Fed-PLT to analyse.

    ``lam``/``lam_bar``: the class ``F_{lam, lam_bar}`` of every ``f_i`` (``0 < lam < lam_bar``);
    ``rho`` the PRS penalty; ``Ne`` local steps; ``solver`` ``"gd"`` | ``"agd"`` | ``"prox"``;
    ``gamma`` the GD step (None: the library's default ``2/(lam_bar + lam + 2/rho)``, v2
    §IV-B); ``N`` agents; ``norm`` ``"xz"`` (Proposition 1) or ``"z"`` (Lemma 3); ``rounds``
    ``K``: the worst case of ``(||T^K s - s_bar|| / ||s - s_bar||)^(1/K)`` (``K = 1``: one
    round; as ``K`` grows it tends to the worst asymptotic rate over the class)."""

    lam: float = 1.0
    lam_bar: float = 10.0
    rho: float = 1.0
    Ne: int = 1
    solver: str = "gd"
    gamma: float | None = None
    N: int = 1
    norm: str = "xz"
    rounds: int = 1

    def __post_init__(self) -> None:
        lam, lam_bar = ops._moduli(self.lam, self.lam_bar)
        if not 0 < lam < lam_bar:
            raise ValueError(f"lam and lam_bar must satisfy 0 < lam < lam_bar, got lam={self.lam!r}, "
                             f"lam_bar={self.lam_bar!r}")
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne)
        check_int("N", self.N)
        check_int("rounds", self.rounds)
        choice("solver", self.solver, PEP_SOLVERS)
        choice("norm", self.norm, NORMS)
        if self.norm == "z" and self.solver != "prox":
            raise ValueError(f"norm='z' needs solver='prox' (with local GD/AGD the warm start x is part of the "
                             f"state, and the round is unbounded in z alone), got solver={self.solver!r}")
        if self.gamma is not None:
            g = check_positive("gamma", self.gamma)
            if self.solver != "gd":
                raise ValueError(f"gamma is only used by solver='gd', got gamma={self.gamma!r} with "
                                 f"solver={self.solver!r}")
            upper = ops.max_local_step(self.rho, lam, lam_bar)
            if not g < upper:
                raise ValueError(f"gamma must lie in (0, 2/(lam_bar + 1/rho)) = (0, {upper:.6g}), got {self.gamma!r}")

    @property
    def step(self) -> float:
        """The GD step used (``gamma`` or the default)."""
        return default_step(self.rho, self.lam, self.lam_bar) if self.gamma is None else float(self.gamma)


def default_step(rho: float, lam: float, lam_bar: float) -> float:
    """The library's default local GD step ``2/(lam_bar + lam + 2/rho)`` (v2 §IV-B); a step
    beyond the float range (``rho`` huge, ``lam_bar`` tiny) is refused."""
    step = ops.default_local_step(rho, lam, lam_bar)
    if not math.isfinite(step):
        raise ValueError(f"the step 2/(lam_bar + lam + 2/rho) overflows, got rho={rho!r}, lam={lam!r}, "
                         f"lam_bar={lam_bar!r}")
    return step


@dataclass
class WorstCase:
    """The worst case a PEP attains, factored from its primal Gram matrix: per agent ``i``
    the points ``points[i]`` (``(m_i, d)``, first row ``x*``) where ``f_i`` was queried, its
    gradients ``grads[i]`` and values ``values[i]``; the state ``x``, ``z`` (``(N, d)``) and
    the fixed point ``x_star`` (``(d,)``)."""

    x: np.ndarray
    z: np.ndarray
    x_star: np.ndarray
    points: list[np.ndarray]
    grads: list[np.ndarray]
    values: list[np.ndarray]
    interpolation_violation: float = 0.0

    def problem(self, lam: float, lam_bar: float) -> InterpolatedProblem:
        """The federated problem whose ``f_i`` interpolate the worst-case data."""
        return InterpolatedProblem(self.points, self.grads, self.values, lam, lam_bar, self.x_star)


@dataclass
class PEPResult:
    """``rate``: the worst-case contraction (square root of the dual value, an upper bound
    up to the solver's tolerance); ``rate_primal``: the square root of the primal value (a
    value attained by the Gram matrix); ``status`` of the SDP solver; ``worst_case`` when asked."""

    rate: float
    rate_primal: float
    status: str
    sdp_solver: str
    worst_case: WorstCase | None = None
    details: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- the PEP


def _cost_scale(inst: PEPInstance) -> float:
    """The factor ``c`` of the scaled costs ``phi_i = c f_i`` the SDP is written for, chosen
    so that the Gram matrix is balanced: ``c = 1/lam_bar`` (``phi_i`` in ``F_{lam/lam_bar, 1}``,
    local steps ``gamma lam_bar <= 2`` on it) for local GD/AGD, ``c = rho`` for the exact prox
    (``w = v - grad phi_i(w)``). Measured: GD against its one-dimensional quadratic worst case,
    4e-8 relative on ``rho`` in ``[0.03, 31.6]`` with ``1/lam_bar`` and 1.4% at ``rho = 31.6``
    with ``rho``; the prox against ``zeta``, 1e-9 with ``rho`` and 6e-6 at ``rho = 31.6`` with
    ``1/lam_bar``."""
    return float(inst.rho) if inst.solver == "prox" else 1.0 / float(inst.lam_bar)


def _build(inst: PEPInstance):
    from PEPit import PEP, Expression, Point
    from PEPit.functions import SmoothStronglyConvexFunction

    problem = PEP()
    rho = float(inst.rho)
    # scaled costs phi_i = c f_i (better conditioned SDP, see _cost_scale); every step below
    # is the round of Algorithm 1 written with rho grad f_i = k grad phi_i
    c = _cost_scale(inst)
    k = rho / c  # rho grad f_i = k grad phi_i
    fs = [problem.declare_function(SmoothStronglyConvexFunction, mu=c * float(inst.lam),
                                   L=c * float(inst.lam_bar))
          for _ in range(inst.N)]
    xs = Point()
    # x* minimises sum_i f_i: the last agent's gradient there is minus the others' sum
    # (eliminated rather than imposed by ||sum_i g_i*||^2 = 0, which has no interior point)
    star = [f.oracle(xs) for f in fs[:-1]]
    g_last = 0 * xs
    for g, _ in star:
        g_last = g_last - g
    f_last = Expression()
    fs[-1].add_point((xs, g_last, f_last))
    star.append((g_last, f_last))
    zs = [xs - k * g for g, _ in star]  # z_i* = x* - rho grad f_i(x*)
    x = [Point() for _ in range(inst.N)]
    z = [Point() for _ in range(inst.N)]
    init = None
    for i in range(inst.N):
        term = (z[i] - zs[i]) ** 2 + ((x[i] - xs) ** 2 if inst.norm == "xz" else 0)
        init = term if init is None else init + term
    problem.set_initial_condition(init <= 1)
    L_d, mu_d = inst.lam_bar + 1 / rho, inst.lam + 1 / rho
    beta = ops.agd_momentum(L_d / mu_d)
    step = inst.step / rho  # gamma grad d = (gamma / rho) (grad phi + w - v)
    queries: list[list[tuple[Any, Any, Any]]] = [[(xs, g, fv)] for g, fv in star]
    xk, zk = list(x), list(z)
    for _ in range(inst.rounds):
        y = zk[0]
        for zi in zk[1:]:
            y = y + zi
        y = y / inst.N
        x_next, z_next = [], []
        for i in range(inst.N):
            v = 2 * y - zk[i]
            if inst.solver == "prox":
                g_new, f_new = Point(), Expression()
                w = v - k * g_new  # w = prox_{rho f_i}(v): rho grad f_i(w) = v - w
                fs[i].add_point((w, g_new, f_new))
                queries[i].append((w, g_new, f_new))
            else:
                w = xk[i]
                u = w
                for _ in range(inst.Ne):
                    g, fv = fs[i].oracle(w)
                    queries[i].append((w, g, fv))
                    rho_grad_d = k * g + (w - v)
                    if inst.solver == "gd":
                        w = w - step * rho_grad_d
                    else:
                        u_new = w - rho_grad_d / (rho * L_d)
                        w = u_new + beta * (u_new - u)
                        u = u_new
            x_next.append(w)
            z_next.append(zk[i] + 2 * (w - y))
        xk, zk = x_next, z_next
    metric = None
    for i in range(inst.N):
        term = (zk[i] - zs[i]) ** 2 + ((xk[i] - xs) ** 2 if inst.norm == "xz" else 0)
        metric = term if metric is None else metric + term
    problem.set_performance_metric(metric)
    return problem, {"xs": xs, "x": x, "z": z, "queries": queries}


def _interpolation_violation(points, grads, values, lam, lam_bar) -> float:
    """Largest violation of the ``F_{lam, lam_bar}`` interpolation conditions (Taylor et al.
    2017, Theorem 4) by one agent's data, relative to the data scale."""
    worst = 0.0
    m = points.shape[0]
    scale = 1.0 + float(np.max(np.abs(grads))) ** 2 / lam
    for a in range(m):
        for b in range(m):
            if a == b:
                continue
            dx, dg = points[a] - points[b], grads[a] - grads[b]
            rhs = (values[b] + grads[b] @ (points[a] - points[b])
                   + (dg @ dg / lam_bar + lam * dx @ dx - 2 * lam / lam_bar * dg @ dx) / (2 * (1 - lam / lam_bar)))
            worst = max(worst, float(rhs - values[a]) / scale)
    return worst


def worst_case_rate(inst: PEPInstance, *, sdp_solver: str = "CLARABEL",
                    worst_case: bool = False) -> PEPResult:
    """The exact worst-case contraction of one round (see the module docstring), solved by
    PEPit with ``sdp_solver`` (``"CLARABEL"`` or ``"SCS"``) at its default tolerances
    (Clarabel: gap and feasibility ``1e-8``; SCS: ``eps 1e-4``, so prefer Clarabel); with
    ``worst_case=True`` the worst-case data are factored from the primal Gram matrix."""
    if not isinstance(inst, PEPInstance):
        raise ValueError(f"inst must be a PEPInstance, got {type(inst).__name__}")
    if sdp_solver not in SDP_SOLVERS:
        raise ValueError(f"sdp_solver must be one of {SDP_SOLVERS}, got {sdp_solver!r}")
    import warnings

    problem, h = _build(inst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cvxpy's "solution may be inaccurate": we check the gap ourselves
        dual = problem.solve(wrapper="cvxpy", solver=sdp_solver, verbose=0)
    if dual is None:
        raise ValueError(f"the PEP of {inst} is unbounded (the round is not Lipschitz at these parameters)")
    primal = float(problem.objective.eval())
    status = str(getattr(problem, "solver_status", getattr(problem, "status", "optimal")))
    power = 0.5 / inst.rounds
    out = PEPResult(rate=max(float(dual), 0.0) ** power, rate_primal=max(primal, 0.0) ** power,
                    status=status, sdp_solver=sdp_solver, details={"dual_value": float(dual), "primal_value": primal})
    if worst_case:
        xs = np.asarray(h["xs"].eval(), dtype=float)
        pts, grs, vals = [], [], []
        viol = 0.0
        for q in h["queries"]:
            P = np.array([np.asarray(w.eval(), dtype=float) for w, _, _ in q])
            G = np.array([np.asarray(g.eval(), dtype=float) for _, g, _ in q]) / _cost_scale(inst)
            F = np.array([float(f.eval()) for _, _, f in q]) / _cost_scale(inst)
            pts.append(P)
            grs.append(G)
            vals.append(F)
            viol = max(viol, _interpolation_violation(P, G, F, inst.lam, inst.lam_bar))
        out.worst_case = WorstCase(
            x=np.array([np.asarray(p.eval(), dtype=float) for p in h["x"]]),
            z=np.array([np.asarray(p.eval(), dtype=float) for p in h["z"]]),
            x_star=xs, points=pts, grads=grs, values=vals, interpolation_violation=viol)
    return out


def worst_case_instance(inst: PEPInstance, *, sdp_solver: str = "CLARABEL") -> tuple[PEPResult, WorstCase]:
    """:func:`worst_case_rate` with the worst-case data."""
    res = worst_case_rate(inst, sdp_solver=sdp_solver, worst_case=True)
    assert res.worst_case is not None
    return res, res.worst_case


# --------------------------------------------------------------------------- the interpolant


class InterpolatedProblem(FederatedProblem):
    """A federated problem whose ``f_i`` is the smooth strongly convex interpolant of data
    ``(points[i][k], grads[i][k], values[i][k])`` in ``F_{lam, lam_bar}`` (Taylor, Hendrickx,
    Glineur 2017, Theorem 4, constructive proof).

    With ``h_i = f_i - lam ||.||^2/2`` (in ``F_{0, L'}``, ``L' = lam_bar - lam``) and its
    conjugate data ``(gt_k = g_k - lam x_k, x_k)``, the interpolant of the conjugate is
    ``phi(y) = max_k [h*_k + <x_k, y - gt_k> + ||y - gt_k||^2/(2L')]`` (``1/L'``-strongly convex),
    and ``grad h_i(x) = argmax_y <x, y> - phi(y) = -(L' C - Gt) alpha``, where ``alpha``
    maximises ``alpha . r - ||(L' C - Gt) alpha||^2 / (2 L')`` over the simplex
    (``C = [x_k - x]``, ``r_k = -h_k + ||gt_k||^2/(2L')``), a small concave QP solved by cvxpy
    (Clarabel, gap and feasibility tolerances ``1e-13``: the gradient's error is of the
    order of the square root of the QP's). Every row of ``X`` costs one QP: for checks, not
    for speed.
    """

    def __init__(self, points: list[np.ndarray], grads: list[np.ndarray], values: list[np.ndarray],
                 lam: float, lam_bar: float, x_star: np.ndarray):
        lam, lam_bar = ops._moduli(lam, lam_bar)
        if not 0 < lam < lam_bar:
            raise ValueError(f"lam and lam_bar must satisfy 0 < lam < lam_bar, got {lam!r}, {lam_bar!r}")
        if not (len(points) == len(grads) == len(values)) or len(points) < 1:
            raise ValueError("points, grads and values must be lists of one array per agent (N >= 1)")
        self.N = len(points)
        self.n = int(np.asarray(points[0]).shape[1])
        self.points = [np.asarray(p, dtype=float) for p in points]
        self.grads = [np.asarray(g, dtype=float) for g in grads]
        self.values = [np.asarray(v, dtype=float) for v in values]
        self.lam_i = np.full(self.N, lam)
        self.lam_bar_i = np.full(self.N, lam_bar)
        self._mu, self._Lp = lam, lam_bar - lam
        self._x_star_cache = np.asarray(x_star, dtype=float).copy()
        self.x_star_info = {"source": "the PEP's fixed point"}

    def _oracle(self, i: int, x: np.ndarray) -> tuple[float, np.ndarray]:
        import cvxpy as cp

        mu, Lp = self._mu, self._Lp
        P, G, F = self.points[i], self.grads[i], self.values[i]
        Gt = G - mu * P
        Hv = F - mu * 0.5 * np.sum(P * P, axis=1)
        r = -Hv + np.sum(Gt * Gt, axis=1) / (2 * Lp)
        B = (Lp * (P - x) - Gt).T  # (d, m)
        alpha = cp.Variable(P.shape[0], nonneg=True)
        prob = cp.Problem(cp.Maximize(r @ alpha - cp.sum_squares(B @ alpha) / (2 * Lp)), [cp.sum(alpha) == 1])
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13, max_iter=400)
        a = np.clip(np.asarray(alpha.value, dtype=float), 0, None)
        a /= a.sum()
        y = -B @ a
        h_val = -(r @ a - float(np.sum((B @ a) ** 2)) / (2 * Lp))
        return h_val + 0.5 * mu * float(x @ x), y + mu * x

    def _rows(self, X, agents):
        idx = range(self.N) if agents is None else [int(a) for a in agents]
        return [self._oracle(i, X[j]) for j, i in enumerate(idx)]

    def _cost(self, X, agents):
        return np.array([f for f, _ in self._rows(X, agents)])

    def _grad(self, X, agents):
        return np.array([g for _, g in self._rows(X, agents)])

    def _hessian(self, X, agents):
        raise ValueError("InterpolatedProblem has no Hessian (its costs are piecewise smooth interpolants); "
                         "use the 'gd' or 'agd' local solver")


# --------------------------------------------------------------------------- measured contractions


def round_ratio(problem: FederatedProblem, x: np.ndarray, z: np.ndarray, inst: PEPInstance,
                x_ref: np.ndarray | None = None) -> float:
    """``(||T^K s - s_bar|| / ||s - s_bar||)^(1/K)`` (``K = inst.rounds``) for rounds of the library's
    :func:`~fedrepro.fedplt.algorithm.fedplt_iteration` from the state ``s = (x, z)``, in
    the norm of ``inst`` (fixed point from :func:`~fedrepro.fedplt.algorithm.fixed_point`)."""
    from fedrepro.fedplt.algorithm import fedplt_iteration, fixed_point

    Xb, Zb = fixed_point(problem, inst.rho, x_ref)
    gamma = inst.step if inst.solver == "gd" else None
    x1, z1 = x, z
    for _ in range(inst.rounds):
        x1, z1, _ = fedplt_iteration(x1, z1, problem, rho=inst.rho, Ne=inst.Ne, solver=inst.solver, gamma=gamma)

    def size(a, b):
        return math.sqrt(float(np.sum(b ** 2)) + (float(np.sum(a ** 2)) if inst.norm == "xz" else 0.0))

    return (size(x1 - Xb, z1 - Zb) / size(x - Xb, z - Zb)) ** (1.0 / inst.rounds)


def quadratic_contraction(inst: PEPInstance, n: int, rng: np.random.Generator) -> float:
    """Exact one-round contraction (``||M||_2`` of the affine round, norm ``xz``; the ``z``
    block for ``norm="z"`` and the prox) of Fed-PLT on a random quadratic federated problem
    with ``inst.N`` agents in dimension ``n >= 2``, every ``A_i`` with spectrum in
    ``[lam, lam_bar]`` (both extremes attained), computed by the library's implementation."""
    from fedrepro.core.linalg import spectral_norm
    from fedrepro.fedplt.checks.instances import affine_round, quadratic_problem

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2 (each A_i then has both lam and lam_bar as eigenvalues, "
                         f"so the problem's moduli, which set AGD's momentum, are the instance's), got {n!r}")
    problem = quadratic_problem(inst.N, int(n), inst.lam, inst.lam_bar, rng)
    if not (np.isclose(problem.lam, inst.lam, rtol=1e-12) and np.isclose(problem.lam_bar, inst.lam_bar, rtol=1e-12)):
        raise ValueError("the generated problem's moduli differ from the instance's")  # pragma: no cover
    gamma = inst.step if inst.solver == "gd" else None
    rnd = affine_round(problem, rho=inst.rho, Ne=inst.Ne, solver=inst.solver, gamma=gamma)
    if inst.norm == "z":
        d = inst.N * n
        return spectral_norm(rnd.M[d:, d:])
    return spectral_norm(rnd.M)


def logistic_contraction(inst: PEPInstance, problem: FederatedProblem, rng: np.random.Generator,
                         states: int = 64, scale: float = 3.0) -> float:
    """Largest one-round ratio :func:`round_ratio` over ``states`` random states
    ``s_bar + scale * u * 10^U(-2, 0)`` (``u`` Gaussian) of a (logistic) ``problem``: a lower
    bound of its worst case."""
    from fedrepro.fedplt.algorithm import fixed_point

    Xb, Zb = fixed_point(problem, inst.rho)
    best = 0.0
    for _ in range(states):
        r = scale * 10 ** rng.uniform(-2, 0)
        x = Xb + r * rng.standard_normal(Xb.shape)
        z = Zb + r * rng.standard_normal(Zb.shape)
        best = max(best, round_ratio(problem, x, z, inst))
    return best


def proposition_bound(inst: PEPInstance, *, corrected: bool = True) -> float:
    """``||S||`` of Proposition 1 (GD: ``chi^{N_e}`` with ``chi`` of the step) or ``||S'||`` of
    Proposition 3 (AGD), as printed (coupling ``1/(lam + 1/rho)``, AGD factor ``chi(N_e)``) or
    corrected (``corrected``: coupling ``1/(1 + rho lam)``, AGD factor
    :func:`~fedrepro.core.operators.agd_output_contraction`, the readings of the theory
    chapter); for the prox ``chi^{N_e} -> 0``."""
    lam, lam_bar, rho = inst.lam, inst.lam_bar, inst.rho
    zeta = ops.prs_contraction(rho, lam, lam_bar)
    c = ops.coupling_constant(rho, lam, corrected)
    if inst.solver == "gd":
        a = ops.local_gd_contraction(inst.step, rho, lam, lam_bar) ** inst.Ne
    elif inst.solver == "agd":
        kappa = ops.local_condition_number(rho, lam, lam_bar)
        # printed: chi(N_e) of Proposition 3; corrected: the output bound Lemma 8's proof supports
        a = ops.agd_output_contraction(inst.Ne, kappa) if corrected else ops.agd_contraction(inst.Ne, kappa)
    else:
        a = 0.0
    return ops.spectral_norm(ops.matrix_S_from(a, zeta, c))


# --------------------------------------------------------------------------- checks


def check_prox_rate(inst: PEPInstance, *, sdp_solver: str = "CLARABEL") -> CheckResult:
    """Exact PRS (``solver="prox"``, ``norm="z"``): the PEP rate against the closed form
    ``zeta = max(|1 - rho lam|/(1 + rho lam), |1 - rho lam_bar|/(1 + rho lam_bar))`` (Lemma 3,
    tight: a one-dimensional quadratic with curvature ``lam`` or ``lam_bar`` attains it).
    Holds when the two agree within :data:`RATE_RTOL` both ways (``details["agree"]``)."""
    import dataclasses

    inst = dataclasses.replace(inst, solver="prox", norm="z", gamma=None)
    pep = worst_case_rate(inst, sdp_solver=sdp_solver).rate
    zeta = ops.prs_contraction(inst.rho, inst.lam, inst.lam_bar)
    res = make_result(pep, zeta, rtol=RATE_RTOL, sdp_solver=sdp_solver)
    agree = abs(pep - zeta) <= RATE_RTOL * zeta
    return CheckResult(res.observed, res.bound, bool(agree), res.ratio, {**res.details, "agree": bool(agree)})


def check_measured_below(inst: PEPInstance, measured: float, pep_rate: float | None = None, *,
                         sdp_solver: str = "CLARABEL", source: str = "") -> CheckResult:
    """A measured one-round contraction (``observed``) against the PEP rate (``bound``):
    the PEP is the worst case over the class, so ``measured <= pep (1 + RATE_RTOL)``. A
    contraction is a non-negative finite number: anything else is refused (a negative or NaN
    measurement would otherwise pass the check)."""
    if not isinstance(inst, PEPInstance):
        raise ParameterTypeError(f"inst must be a PEPInstance, got {type(inst).__name__}")
    measured = check_nonnegative("measured", measured)
    if pep_rate is not None:
        pep_rate = check_nonnegative("pep_rate", pep_rate)
    if pep_rate is None:
        pep_rate = worst_case_rate(inst, sdp_solver=sdp_solver).rate
    return make_result(measured, pep_rate, rtol=RATE_RTOL, source=source, sdp_solver=sdp_solver)


def check_worst_case_attained(inst: PEPInstance, *, sdp_solver: str = "CLARABEL") -> CheckResult:
    """The worst case PEPit returns, fed back to the library's implementation: the interpolated
    problem (:class:`InterpolatedProblem`) and state, one round of
    :func:`~fedrepro.fedplt.algorithm.fedplt_iteration`; ``observed`` its ratio
    ``||T s - s_bar|| / ||s - s_bar||``, ``bound`` the PEP rate. Holds when they agree within
    :data:`ATTAINED_RTOL` relative."""
    if inst.solver == "prox":
        raise ValueError("solver must be 'gd' or 'agd' for check_worst_case_attained "
                         "(the interpolant has no closed-form prox)")
    res, wc = worst_case_instance(inst, sdp_solver=sdp_solver)
    problem = wc.problem(inst.lam, inst.lam_bar)
    ratio = round_ratio(problem, wc.x, wc.z, inst, x_ref=wc.x_star)
    rtol = ATTAINED_RTOL
    agree = abs(ratio - res.rate) <= rtol * res.rate
    base = make_result(ratio, res.rate, rtol=rtol, sdp_solver=sdp_solver)
    return CheckResult(base.observed, base.bound, bool(agree), base.ratio,
                       {**base.details, "agree": bool(agree), "rate_primal": res.rate_primal,
                        "dimension": int(wc.x.shape[1]),
                        "interpolation_violation": wc.interpolation_violation})
