"""Checks of the statements in expectation, by Monte Carlo with seeded generators: Lemma 4
(stochastic Banach–Picard), Proposition 2 (Fed-PLT with Bernoulli participation and additive
errors) and Corollary 1 (accuracy of Fed-PLT with noisy gradient descent).

A Monte Carlo mean is compared with a bound up to its sampling error: a check holds when
``mean <= bound + 4 * standard_error`` (four standard errors: a false alarm has probability
below 1e-4 per compared iterate under a normal approximation), recorded as ``atol``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from fedrepro.core import operators as ops
from fedrepro.core.linalg import top_singular
from fedrepro.core.validate import check_finite, check_int, check_interval, check_nonnegative, check_positive
from fedrepro.fedplt.checks import _validate as _v
from fedrepro.fedplt.checks.instances import affine_round, local_step_size, quadratic_problem
from fedrepro.fedplt.checks.result import CheckResult, make_result
from fedrepro.privacy.validate import real_array

__all__ = [
    "Lemma4Instance", "check_lemma4", "expected_gaussian_norm",
    "Proposition2Instance", "check_proposition2", "proposition2_bound",
    "Corollary1Instance", "check_corollary1", "check_corollary1_noise", "corollary1_noise_bound",
]

#: Standard errors allowed between a Monte Carlo mean and a bound.
MC_SIGMAS = 4.0


def expected_gaussian_norm(dim: int, std: float) -> float:
    """``E||e||`` for ``e ~ N(0, std^2 I_dim)``: ``std sqrt(2) Gamma((d+1)/2)/Gamma(d/2)``
    (``dim`` an integer >= 1, ``std`` in ``[0, inf)``; a value beyond the float range is
    refused)."""
    check_int("dim", dim, 1)
    check_nonnegative("std", std)
    value = float(std * math.sqrt(2) * math.exp(gammaln((dim + 1) / 2) - gammaln(dim / 2)))
    if not math.isfinite(value):
        raise ValueError(f"E||e|| overflows for std={std!r}, dim={dim!r} (std too large)")
    return value


def _mc_compare(samples: np.ndarray, bound: np.ndarray, **details) -> CheckResult:
    """``samples`` (trials, K+1) of a norm, ``bound`` (K+1,): compare the means with the bound
    at the iterate ``k >= 1`` that comes closest to a violation, with ``MC_SIGMAS`` standard
    errors as ``atol`` (``k = 0`` is left out: there the bounds hold by construction). With a
    single column it is compared as is."""
    first = 1 if samples.shape[1] > 1 else 0
    mean = samples.mean(axis=0)[first:]
    se = samples.std(axis=0, ddof=1)[first:] / math.sqrt(samples.shape[0])
    bound = np.asarray(bound, dtype=float)[first:]
    excess = mean - MC_SIGMAS * se - bound
    ratio = mean / np.maximum(bound, 1e-300)
    k = int(np.argmax(excess))
    k_ratio = int(np.argmax(ratio))
    return make_result(mean[k], bound[k], rtol=0.0, atol=float(MC_SIGMAS * se[k]), iterate=k + first,
                       max_ratio=float(ratio[k_ratio]), max_ratio_iterate=k_ratio + first,
                       trials=int(samples.shape[0]), **details)


# --------------------------------------------------------------------------- Lemma 4


@dataclass(frozen=True)
class Lemma4Instance:
    """``T x = zeta Q x`` on ``R^{N m}`` (``N`` blocks of size ``m``, ``Q`` Haar-orthogonal, so
    ``T`` is exactly ``zeta``-contractive with fixed point 0); block ``i`` is updated with
    probability ``p_i`` (drawn uniform on ``[p_min, p_max]``, both ends included), plus
    additive Gaussian errors of std ``noise`` per coordinate on updated blocks."""

    N: int = 4
    m: int = 2
    zeta: float = 0.8
    p_min: float = 0.3
    p_max: float = 1.0
    noise: float = 0.0
    K: int = 30
    trials: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "m")
        check_interval("zeta", self.zeta, 0.0, 1.0, closed_high=False)
        _v.participation(self)
        check_nonnegative("noise", self.noise)
        _v.sizes(self, "K")
        check_int("trials", self.trials, 2)
        _v.seed(self)


def check_lemma4(inst: Lemma4Instance) -> CheckResult:
    """Lemma 4: ``E||x_k - x_bar|| <= sqrt(p_max/p_min)(zeta_bar^k ||x_0 - x_bar|| +
    (1 - zeta_bar^k)/(1 - zeta_bar) nu)``, ``zeta_bar = sqrt(1 - p_min + p_min zeta^2)``,
    ``nu = E||e_k||``; Monte Carlo over ``trials`` runs from a unit ``x_0``."""
    check_interval("zeta", inst.zeta, 0.0, 1.0, closed_high=False)
    if not 0 < inst.p_min <= inst.p_max <= 1:
        raise ValueError(f"need 0 < p_min <= p_max <= 1, got {inst.p_min!r}, {inst.p_max!r}")
    rng = np.random.default_rng(inst.seed)
    d = inst.N * inst.m
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    Q = Q * np.sign(np.diag(R))
    p = rng.uniform(inst.p_min, inst.p_max, inst.N)
    p[0], p[-1] = inst.p_min, inst.p_max
    x0 = rng.standard_normal(d)
    x0 /= np.linalg.norm(x0)
    X = np.broadcast_to(x0, (inst.trials, d)).copy()
    norms = np.empty((inst.trials, inst.K + 1))
    norms[:, 0] = 1.0
    for k in range(inst.K):
        active = rng.random((inst.trials, inst.N)) < p
        mask = np.repeat(active, inst.m, axis=1)
        TX = inst.zeta * X @ Q.T
        if inst.noise > 0:
            TX = TX + inst.noise * rng.standard_normal(TX.shape)
        X = np.where(mask, TX, X)
        norms[:, k + 1] = np.linalg.norm(X, axis=1)
    nu = expected_gaussian_norm(d, inst.noise) if inst.noise > 0 else 0.0
    zbar = math.sqrt(1 - inst.p_min + inst.p_min * inst.zeta ** 2)
    k = np.arange(inst.K + 1)
    geom = (1 - zbar ** k) / (1 - zbar)
    bound = math.sqrt(inst.p_max / inst.p_min) * (zbar ** k + geom * nu)
    return _mc_compare(norms, bound, nu=nu, zeta_bar=zbar)


# --------------------------------------------------------------------------- Proposition 2


@dataclass(frozen=True)
class Proposition2Instance:
    """Quadratic problem (as :class:`~fedrepro.fedplt.checks.Proposition1Instance`), Fed-PLT
    with noisy GD (``tau``; ``tau = 0`` is exact GD), Bernoulli participation with ``p_i``
    uniform on ``[p_min, p_max]`` (both ends included), ``K`` rounds, ``trials`` runs.
    ``start="worst"``: ``s_0 - s_bar`` is ``start_scale`` times the top right singular vector
    of the round's linear part ``M``; ``"random"``: a random direction."""

    N: int = 3
    n: int = 2
    lam: float = 1.0
    lam_bar: float = 4.0
    rho: float = 2.0
    Ne: int = 3
    theta: float = 0.5
    p_min: float = 0.5
    p_max: float = 1.0
    tau: float = 0.05
    K: int = 15
    trials: int = 300
    start: str = "worst"
    start_scale: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n")
        _v.moduli(self)
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)
        check_interval("theta", self.theta, 0.0, 2.0, closed_low=False, closed_high=False)
        _v.participation(self)
        check_nonnegative("tau", self.tau)
        _v.sizes(self, "K")
        check_int("trials", self.trials, 2)
        _v.choice("start", self.start, ("worst", "random"))
        check_positive("start_scale", self.start_scale)
        _v.seed(self)

    def problem(self):
        return quadratic_problem(self.N, self.n, self.lam, self.lam_bar, np.random.default_rng(self.seed))

    @property
    def gamma(self) -> float:
        return local_step_size(self.theta, self.rho, self.lam, self.lam_bar)


def _s_norm(X: np.ndarray, Z: np.ndarray, Xb: np.ndarray, Zb: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum((X - Xb) ** 2, axis=(-2, -1)) + np.sum((Z - Zb) ** 2, axis=(-2, -1)))


def _run_round(problem, X, Z, inst, active, rng, engine):
    """One round for a batch of trials (``X, Z``: (B, N, n), ``active``: (B, N))."""
    solver = "noisy-gd" if inst.tau > 0 else "gd"
    if engine == "reference":
        from fedrepro.fedplt.checks.instances import reference_round

        noise = None
        if inst.tau > 0:
            noise = math.sqrt(2 * inst.gamma) * inst.tau * rng.standard_normal((X.shape[0], inst.Ne) + X.shape[1:])
        return reference_round(problem, X, Z, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma,
                               active=active, noise=noise)
    from fedrepro.fedplt.algorithm import fedplt_iteration

    Xo, Zo = np.empty_like(X), np.empty_like(Z)
    for b in range(X.shape[0]):
        kw = {"tau": inst.tau, "rng": rng} if inst.tau > 0 else {}
        Xo[b], Zo[b], _ = fedplt_iteration(X[b], Z[b], problem, rho=inst.rho, Ne=inst.Ne, solver=solver,
                                           gamma=inst.gamma, active=active[b], **kw)
    return Xo, Zo


def _estimate_nu(problem, inst, Xb, Zb, rng, samples: int, engine: str) -> tuple[float, float]:
    """``nu = E||e_k||``: mean norm of (noisy round - exact round) from the same state, and its
    standard error (the error law does not depend on the state for noisy GD on quadratics)."""
    if inst.tau == 0:
        return 0.0, 0.0
    X = np.broadcast_to(Xb, (samples,) + Xb.shape).copy()
    Z = np.broadcast_to(Zb, (samples,) + Zb.shape).copy()
    active = np.ones((samples, inst.N), dtype=bool)
    Xn, Zn = _run_round(problem, X, Z, inst, active, rng, engine)
    exact = Proposition2Instance(**{**inst.__dict__, "tau": 0.0})
    Xe, Ze = _run_round(problem, X, Z, exact, active, rng, engine)
    e = _s_norm(Xn, Zn, Xe, Ze)
    return float(e.mean()), float(e.std(ddof=1) / math.sqrt(samples))


def proposition2_bound(k: np.ndarray, S_norm: float, p_min: float, p_max: float, start: float, nu: float) -> np.ndarray:
    """Right side of (15): ``sqrt(p_max/p_min)(sigma^k start + (1-sigma^k)/(1-sigma) nu)``,
    ``sigma = sqrt(1 - p_min + p_min ||S||^2)`` (``k`` times when ``sigma = 1``).

    ``k``: iterate indices (real numbers >= 0, an array or a scalar); ``S_norm``, ``start``
    and ``nu`` in ``[0, inf)``; ``0 < p_min <= p_max <= 1``. Where ``sigma^k`` overflows the
    bound is ``+inf`` (a zero ``start`` or ``nu`` term stays 0); ``S_norm`` and ``p_min``
    whose ``sigma`` or ``sqrt(p_max/p_min)`` overflow are refused."""
    k_arr = real_array("k", k)
    if not np.all((k_arr >= 0) & np.isfinite(k_arr)):
        raise ValueError(f"k must be finite iterate indices >= 0, got {k!r}")
    check_nonnegative("S_norm", S_norm)
    check_interval("p_min", p_min, 0.0, 1.0, closed_low=False)
    check_interval("p_max", p_max, 0.0, 1.0, closed_low=False)
    if not p_min <= p_max:
        raise ValueError(f"need 0 < p_min <= p_max <= 1, got p_min={p_min!r}, p_max={p_max!r}")
    check_nonnegative("start", start)
    check_nonnegative("nu", nu)
    if not math.isfinite(p_max / p_min):
        raise ValueError(f"p_max/p_min must be finite, got p_min={p_min!r}, p_max={p_max!r}")
    try:
        with np.errstate(over="ignore"):
            sigma = math.sqrt(1 - p_min + p_min * S_norm ** 2)
    except OverflowError:
        sigma = math.inf
    if not math.isfinite(sigma):
        raise ValueError(f"S_norm is too large (sigma = sqrt(1 - p_min + p_min S_norm^2) overflows), got {S_norm!r}")
    k = np.asarray(k, dtype=float)
    with np.errstate(over="ignore"):  # sigma > 1: sigma^k may overflow to +inf (the bound is then +inf)
        geom = k if abs(1 - sigma) < 1e-15 else (1 - sigma ** k) / (1 - sigma)
        first = sigma ** k * start if start else np.zeros_like(k)  # 0, not 0 * inf = nan
        second = geom * nu if nu else np.zeros_like(k)
        return math.sqrt(p_max / p_min) * (first + second)


def check_proposition2(inst: Proposition2Instance, variant: str = "paper",
                       engine: str = "implementation") -> CheckResult:
    """Proposition 2, eq. (15), by Monte Carlo (applicable when ``S`` is stable). ``nu`` is
    estimated from ``trials`` noisy-minus-exact rounds and taken at its upper ``MC_SIGMAS``
    confidence limit, so that the bound is not understated."""
    from fedrepro.fedplt.checks.proposition1 import Proposition1Instance, proposition1_S

    if inst.start not in ("worst", "random"):
        raise ValueError(f"start must be 'worst' or 'random', got {inst.start!r}")
    if not 0 < inst.p_min <= inst.p_max <= 1:
        raise ValueError(f"need 0 < p_min <= p_max <= 1, got {inst.p_min!r}, {inst.p_max!r}")
    p1 = Proposition1Instance(N=inst.N, n=inst.n, lam=inst.lam, lam_bar=inst.lam_bar, rho=inst.rho,
                              Ne=inst.Ne, theta=inst.theta, seed=inst.seed)
    S = proposition1_S(p1, variant)
    problem = inst.problem()
    rnd = affine_round(problem, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma, engine=engine)
    rng = np.random.default_rng([inst.seed, 1])
    d = rnd.M.shape[0]
    if inst.start == "worst":
        direction = top_singular(rnd.M)[1]
    else:
        direction = rng.standard_normal(d)
        direction /= np.linalg.norm(direction)
    s0 = rnd.s_bar + inst.start_scale * direction
    Nn = inst.N * inst.n
    shape = (inst.trials, inst.N, inst.n)
    Xb = rnd.s_bar[:Nn].reshape(inst.N, inst.n)
    Zb = rnd.s_bar[Nn:].reshape(inst.N, inst.n)
    X = np.broadcast_to(s0[:Nn].reshape(inst.N, inst.n), shape).copy()
    Z = np.broadcast_to(s0[Nn:].reshape(inst.N, inst.n), shape).copy()
    p = rng.uniform(inst.p_min, inst.p_max, inst.N)
    p[0], p[-1] = inst.p_min, inst.p_max
    norms = np.empty((inst.trials, inst.K + 1))
    norms[:, 0] = _s_norm(X, Z, Xb, Zb)
    for k in range(inst.K):
        active = rng.random((inst.trials, inst.N)) < p
        X, Z = _run_round(problem, X, Z, inst, active, rng, engine)
        norms[:, k + 1] = _s_norm(X, Z, Xb, Zb)
    nu, nu_se = _estimate_nu(problem, inst, Xb, Zb, rng, inst.trials, engine)
    nu_up = nu + MC_SIGMAS * nu_se
    bound = proposition2_bound(np.arange(inst.K + 1), ops.spectral_norm(S), inst.p_min, inst.p_max,
                               inst.start_scale, nu_up)
    result = _mc_compare(norms, bound, variant=variant, nu=nu, nu_upper=nu_up,
                         S_norm=ops.spectral_norm(S), radius_S=ops.spectral_radius(S))
    if ops.spectral_radius(S) >= 1:
        return make_result(result.observed, result.bound, rtol=0.0, applicable=False, **{
            k: v for k, v in result.details.items() if k not in ("rtol", "atol", "applicable")})
    return result


# --------------------------------------------------------------------------- Corollary 1


@dataclass(frozen=True)
class Corollary1Instance:
    """Quadratic problem and Fed-PLT with noisy GD (``tau``, step ``theta * 2/(lam_bar+1/rho)``),
    full participation, ``x_{i,0} ~ N(0, 2 tau^2 I/lam)``, ``z_0 = 0``, ``K`` rounds.
    ``identical=True`` uses ``A_i = lam I`` (then ``lam_bar`` must equal ``lam``) and
    ``b = b_scale * (1, -1, 1, -1, ...)`` per coordinate, so that ``x* = 0`` for even ``N``."""

    N: int = 3
    n: int = 2
    lam: float = 1.0
    lam_bar: float = 4.0
    rho: float = 2.0
    Ne: int = 3
    theta: float = 0.5
    tau: float = 0.1
    K: int = 10
    trials: int = 300
    seed: int = 0
    identical: bool = False
    b_scale: float = 1.0

    def __post_init__(self) -> None:
        _v.sizes(self, "N", "n")
        _v.moduli(self)
        check_positive("rho", self.rho)
        check_int("Ne", self.Ne, 1)
        check_interval("theta", self.theta, 0.0, 2.0, closed_low=False, closed_high=False)
        check_positive("tau", self.tau)
        _v.sizes(self, "K")
        check_int("trials", self.trials, 2)
        _v.seed(self)
        _v.identical_moduli(self)
        check_finite("b_scale", self.b_scale)

    def problem(self):
        if self.identical:
            from fedrepro.problems.quadratic import QuadraticProblem

            A = np.broadcast_to(self.lam * np.eye(self.n), (self.N, self.n, self.n)).copy()
            signs = np.where(np.arange(self.N) % 2 == 0, 1.0, -1.0)
            return QuadraticProblem(A, self.b_scale * np.outer(signs, np.ones(self.n)))
        return quadratic_problem(self.N, self.n, self.lam, self.lam_bar, np.random.default_rng(self.seed))

    @property
    def gamma(self) -> float:
        return local_step_size(self.theta, self.rho, self.lam, self.lam_bar)

    @property
    def chi(self) -> float:
        return ops.local_gd_contraction(self.gamma, self.rho, self.lam, self.lam_bar)


def corollary1_noise_bound(inst: Corollary1Instance) -> float:
    """``tau sqrt(2 gamma n N) (1 - chi^Ne)/(1 - chi)``: the bound on ``E||X_hat - X||`` in the
    proof of Corollary 1 (eq. (24) in expectation)."""
    chi = inst.chi
    geom = inst.Ne if chi == 1 else (1 - chi ** inst.Ne) / (1 - chi)
    return inst.tau * math.sqrt(2 * inst.gamma * inst.n * inst.N) * geom


def _as_p2(inst: Corollary1Instance, **changes) -> Proposition2Instance:
    base = dict(N=inst.N, n=inst.n, lam=inst.lam, lam_bar=inst.lam_bar, rho=inst.rho, Ne=inst.Ne,
                theta=inst.theta, p_min=1.0, p_max=1.0, tau=inst.tau, K=inst.K, trials=inst.trials,
                seed=inst.seed)
    base.update(changes)
    return Proposition2Instance(**base)


def check_corollary1_noise(inst: Corollary1Instance, engine: str = "implementation") -> CheckResult:
    """The noise step of Corollary 1's proof: ``E||X_hat(x,z) - X(x,z)|| <=
    tau sqrt(2 gamma n N)(1 - chi^Ne)/(1 - chi)``, by Monte Carlo from the fixed point."""
    problem = inst.problem()
    p2 = _as_p2(inst)
    rnd = affine_round(problem, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma, engine=engine)
    Nn = inst.N * inst.n
    Xb = rnd.s_bar[:Nn].reshape(inst.N, inst.n)
    Zb = rnd.s_bar[Nn:].reshape(inst.N, inst.n)
    shape = (inst.trials, inst.N, inst.n)
    X = np.broadcast_to(Xb, shape).copy()
    Z = np.broadcast_to(Zb, shape).copy()
    active = np.ones((inst.trials, inst.N), dtype=bool)
    rng = np.random.default_rng([inst.seed, 2])
    Xn, _ = _run_round(problem, X, Z, p2, active, rng, engine)
    Xe, _ = _run_round(problem, X, Z, _as_p2(inst, tau=0.0), active, rng, engine)
    diffs = np.sqrt(np.sum((Xn - Xe) ** 2, axis=(1, 2)))
    return _mc_compare(diffs[:, None], np.array([corollary1_noise_bound(inst)]), chi=inst.chi)


def check_corollary1(inst: Corollary1Instance, variant: str = "paper",
                     engine: str = "implementation") -> CheckResult:
    """Corollary 1, eq. (16): ``E||s_k - s_bar|| <= ||S||^k E||s_0 - s_bar|| +
    (1 - ||S||^k)/(1 - ||S||) tau sqrt(10 n N gamma)(1 - chi^Ne)/(1 - chi)`` for ``k <= K``,
    by Monte Carlo over ``trials`` runs (applicable when ``S`` is stable; ``variant`` selects
    the printed or the corrected ``S``)."""
    from fedrepro.fedplt.checks.proposition1 import Proposition1Instance, proposition1_S

    if inst.identical and inst.lam != inst.lam_bar:
        raise ValueError(f"identical=True needs lam_bar == lam, got lam={inst.lam!r}, lam_bar={inst.lam_bar!r}")
    if inst.tau <= 0:
        raise ValueError(f"tau must be > 0, got {inst.tau!r}")
    p1 = Proposition1Instance(N=inst.N, n=inst.n, lam=inst.lam, lam_bar=inst.lam_bar, rho=inst.rho,
                              Ne=inst.Ne, theta=inst.theta, seed=inst.seed)
    S = proposition1_S(p1, variant)
    S_norm, radius_S = ops.spectral_norm(S), ops.spectral_radius(S)
    problem = inst.problem()
    rnd = affine_round(problem, rho=inst.rho, Ne=inst.Ne, solver="gd", gamma=inst.gamma, engine=engine)
    Nn = inst.N * inst.n
    Xb = rnd.s_bar[:Nn].reshape(inst.N, inst.n)
    Zb = rnd.s_bar[Nn:].reshape(inst.N, inst.n)
    rng = np.random.default_rng([inst.seed, 3])
    shape = (inst.trials, inst.N, inst.n)
    X = math.sqrt(2 / inst.lam) * inst.tau * rng.standard_normal(shape)
    Z = np.zeros(shape)
    p2 = _as_p2(inst)
    active = np.ones((inst.trials, inst.N), dtype=bool)
    norms = np.empty((inst.trials, inst.K + 1))
    norms[:, 0] = _s_norm(X, Z, Xb, Zb)
    for k in range(inst.K):
        X, Z = _run_round(problem, X, Z, p2, active, rng, engine)
        norms[:, k + 1] = _s_norm(X, Z, Xb, Zb)
    start = float(norms[:, 0].mean())
    nu = math.sqrt(5) * corollary1_noise_bound(inst)  # = tau sqrt(10 n N gamma)(1-chi^Ne)/(1-chi)
    k = np.arange(inst.K + 1, dtype=float)
    geom = k if abs(1 - S_norm) < 1e-15 else (1 - S_norm ** k) / (1 - S_norm)
    bound = S_norm ** k * start + geom * nu
    result = _mc_compare(norms, bound, variant=variant, S_norm=S_norm, radius_S=radius_S, nu=nu)
    if radius_S >= 1:
        return make_result(result.observed, result.bound, rtol=0.0, applicable=False, **{
            key: v for key, v in result.details.items() if key not in ("rtol", "atol", "applicable")})
    return result
