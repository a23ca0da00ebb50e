"""Fed-PLT: Federated Private Local Training (v2 Algorithm 1).

Fed-PLT is the Peaceman-Rachford splitting (v2 eq. (3), Lemma 3) applied to the consensus
reformulation (v2 eq. (7)), ``min_x sum_i f_i(x_i) + iota_consensus(x) + h(x_1)``, with the
agents' prox (8b) replaced by ``N_e`` steps of a local solver. One outer iteration ``k``:

1. coordinator: ``y_{k+1} = prox_{rho h / N}(mean_i z_{i,k})`` (Lemma 6, Algorithm 1 line 2),
   from the latest ``z_i`` of every agent (stale for inactive agents);
2. each active agent: ``v_{i,k} = 2 y_{k+1} - z_{i,k}`` and ``N_e`` local steps on
   ``d_{i,k}(w) = f_i(w) + ||w - v_{i,k}||^2 / (2 rho)`` warm-started at ``x_{i,k}``
   (eqs. (9)-(13)), giving ``x_{i,k+1}``; then ``z_{i,k+1} = z_{i,k} + 2 (x_{i,k+1} - y_{k+1})``;
3. inactive agents keep ``x_i``, ``z_i`` and do no computation (line 12).

Local solvers (``solver``): ``"gd"`` (eq. (11)), ``"agd"`` (eq. (12)), ``"sgd"`` (§IV-B,
mini-batches drawn without replacement, exact regulariser gradient), ``"noisy-gd"``
(eq. (13)) and ``"prox"`` (the exact local prox (10), i.e. the ``N_e -> infinity`` limit:
exact PRS).

``d_{i,k}`` lies in ``F_{lam + 1/rho, lam_bar + 1/rho}``. GD contracts for
``gamma in (0, 2 / (lam_bar + 1/rho))``; v2 eq. (11) prints ``2 / (lam + 1/rho)``, a typo
(Proposition 4 and Corollary 1 use ``lam_bar``), and the range checked here uses ``lam_bar``.
For a weakly convex ``f_i`` (``lam < 0``) the strong-convexity modulus used by the default
step and AGD is ``mu_d = max(lam + 1/rho, 1e-3)`` (our choice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core.prox import Regularizer
from fedrepro.core.validate import check_int, check_positive
from fedrepro.fedplt.local_solvers import (
    accelerated_gradient_descent,
    gradient_descent,
    noisy_gradient_descent,
)
from fedrepro.problems.base import FederatedProblem

__all__ = [
    "SOLVERS",
    "RECORDABLE",
    "FedPLTRun",
    "default_step_size",
    "fedplt_iteration",
    "fixed_point",
    "local_moduli",
    "run_fedplt",
]

SOLVERS = ("gd", "agd", "sgd", "noisy-gd", "prox")
RECORDABLE = ("x_err", "z_err", "xz_err", "grad_sq", "x_bar")
_GD_LIKE = ("gd", "sgd", "noisy-gd")
MU_FLOOR = 1e-3  # mu_d floor for weakly convex costs (spec choice)


# ---------------------------------------------------------------------------------------
# parameter helpers
# ---------------------------------------------------------------------------------------
def _check_problem(problem: Any) -> FederatedProblem:
    if not isinstance(problem, FederatedProblem):
        raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
    return problem


def local_moduli(problem: FederatedProblem, rho: float, *,
                 per_agent: bool = False) -> tuple[float | np.ndarray, float | np.ndarray]:
    """``(mu_d, L_d)``: strong convexity and smoothness of ``d_{i,k}`` (v2 §IV-B):
    ``mu_d = lam + 1/rho`` (floored at ``1e-3`` for a weakly convex problem) and
    ``L_d = lam_bar + 1/rho``; per agent (``lam_i``, ``lam_bar_i``) with ``per_agent``."""
    problem, rho = _check_problem(problem), check_positive("rho", rho)
    lam = problem.lam_i if per_agent else problem.lam
    lam_bar = problem.lam_bar_i if per_agent else problem.lam_bar
    mu = np.asarray(lam, dtype=float) + 1.0 / rho
    if not problem.convex:
        mu = np.maximum(mu, MU_FLOOR)
    L = np.asarray(lam_bar, dtype=float) + 1.0 / rho
    if per_agent:
        return mu.copy(), L.copy()
    return float(mu), float(L)


def default_step_size(problem: FederatedProblem, rho: float, *,
                      uncoordinated: bool = False) -> float | np.ndarray:
    """GD step minimising the contraction factor ``chi`` (v2 §IV-B):
    ``gamma = 2 / (lam_bar + lam + 2/rho) = 2 / (L_d + mu_d)``; per agent from
    ``(lam_i, lam_bar_i)`` with ``uncoordinated`` (Remark 1)."""
    mu, L = local_moduli(problem, rho, per_agent=uncoordinated)
    return 2.0 / (np.asarray(L) + np.asarray(mu)) if uncoordinated else 2.0 / (L + mu)


def fixed_point(problem: FederatedProblem, rho: float,
                x_ref: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fixed point of Fed-PLT for every ``N_e`` and exact-gradient solver: ``x_i = x*`` and
    ``z_i* = x* - rho grad f_i(x*)`` (from the optimality of (8b) at ``v_i = 2 x* - z_i``).
    With a regulariser ``h`` pass its composite solution as ``x_ref``: the same formula
    holds, and then ``prox_{rho h/N}(mean z*) = x*`` is the composite optimality condition."""
    problem, rho = _check_problem(problem), check_positive("rho", rho)
    xs = problem.x_star() if x_ref is None else problem._check_x(x_ref, "x_ref")
    X = np.tile(xs, (problem.N, 1))
    return X, X - rho * problem.grad(X)


@dataclass
class _Settings:
    problem: FederatedProblem
    rho: float
    Ne: int
    solver: str
    gamma: float | np.ndarray | None
    mu_d: float
    L_d: float
    tau: float
    batch_size: int | None
    h: Regularizer | None
    output: str


def _resolve(problem, rho, Ne, solver, gamma, tau, batch_size, h, accelerated_output) -> _Settings:
    problem = _check_problem(problem)
    rho = check_positive("rho", rho)
    check_int("Ne (local steps)", Ne, 1)
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    try:
        tau_f = float(tau)
    except (TypeError, ValueError):
        raise ValueError(f"tau must be a real number >= 0, got {tau!r}") from None
    if not (np.isfinite(tau_f) and tau_f >= 0):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    if tau_f > 0 and solver != "noisy-gd":
        raise ValueError(f"tau must be 0 unless solver='noisy-gd' (eq. (13)), got tau={tau!r} with solver={solver!r}")
    if solver == "sgd":
        q = problem.samples_per_agent
        if q is None:
            raise ValueError(f"solver='sgd' needs a finite-sum problem with data points; "
                             f"{type(problem).__name__} has none (batch_size has no valid range)")
        if (isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer))
                or not 1 <= batch_size <= q):
            raise ValueError(f"batch_size must be an integer in [1, {q}] for solver='sgd', got {batch_size!r}")
        batch_size = int(batch_size)
    elif batch_size is not None:
        raise ValueError(f"batch_size is only used by solver='sgd'; got batch_size={batch_size!r} "
                         f"with solver={solver!r} (pass None)")
    if h is not None and not isinstance(h, Regularizer):
        raise ValueError(f"h must be a fedrepro.core.prox.Regularizer or None, got {type(h).__name__}")
    if h is not None and h.is_zero:
        h = None
    if accelerated_output not in ("w", "u"):
        raise ValueError(f"accelerated_output must be 'w' (eq. (12)) or 'u', got {accelerated_output!r}")
    mu_d, L_d = local_moduli(problem, rho)
    g: float | np.ndarray | None = None
    if solver in _GD_LIKE:
        if gamma is None:
            g = 2.0 / (L_d + mu_d)
        elif isinstance(gamma, str):
            if gamma != "uncoordinated":
                raise ValueError(f"gamma must be a number, an array of shape ({problem.N},), None or "
                                 f"'uncoordinated', got {gamma!r}")
            g = default_step_size(problem, rho, uncoordinated=True)
        else:
            try:
                garr = np.asarray(gamma, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"gamma must be a number or an array of shape ({problem.N},), got {gamma!r}") from None
            if garr.ndim == 0:
                upper = 2.0 / L_d
                if not (np.isfinite(garr) and 0 < garr < upper):
                    raise ValueError(f"gamma must lie in (0, 2/(lam_bar + 1/rho)) = (0, {upper:.6g}), got {gamma!r}")
                g = float(garr)
            elif garr.shape == (problem.N,):
                upper = 2.0 / (np.asarray(problem.lam_bar_i) + 1.0 / rho)
                bad = ~(np.isfinite(garr) & (garr > 0) & (garr < upper))
                if np.any(bad):
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(f"gamma[{i}] must lie in (0, 2/(lam_bar_i + 1/rho)) = (0, {upper[i]:.6g}), "
                                     f"got {garr[i]!r}")
                g = garr.copy()
            else:
                raise ValueError(f"gamma must be a scalar or an array of shape ({problem.N},), got shape {garr.shape}")
    elif gamma is not None:
        raise ValueError(f"gamma is only used by solvers {_GD_LIKE}; got gamma={gamma!r} with solver={solver!r}")
    if solver == "prox" and problem.lam + 1.0 / rho <= 0:
        raise ValueError(f"rho must satisfy lam + 1/rho > 0, i.e. rho < {-1.0 / problem.lam:.6g}, for the exact "
                         f"local prox (solver='prox'), got rho={rho}")
    return _Settings(problem, rho, int(Ne), solver, g, mu_d, L_d, tau_f, batch_size, h, accelerated_output)


def _check_state(problem: FederatedProblem, a: Any, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.shape != (problem.N, problem.n):
        raise ValueError(f"{name} must have shape ({problem.N}, {problem.n}) (one row per agent), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _check_active(problem: FederatedProblem, active: Any) -> np.ndarray:
    if active is None:
        return np.arange(problem.N)
    mask = np.asarray(active)
    if mask.dtype != bool or mask.shape != (problem.N,):
        raise ValueError(f"active must be None or a boolean mask of shape ({problem.N},), "
                         f"got dtype {mask.dtype} and shape {mask.shape}")
    return np.flatnonzero(mask)


def _coordinator(z: np.ndarray, s: _Settings) -> np.ndarray:
    zbar = z.mean(axis=0)
    return zbar if s.h is None else s.h.prox(zbar, s.rho / s.problem.N)


def _step(x: np.ndarray, z: np.ndarray, s: _Settings, idx: np.ndarray,
          rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One outer iteration on validated inputs; returns ``(x, z, y, gradient evaluations)``."""
    y = _coordinator(z, s)
    x_new, z_new = x.copy(), z.copy()
    if idx.size == 0:
        return x_new, z_new, y, 0
    p, rho = s.problem, s.rho
    agents = None if idx.size == p.N else idx
    V = 2.0 * y - z[idx]
    W0 = x[idx]
    gamma = s.gamma
    if isinstance(gamma, np.ndarray) and agents is not None:
        gamma = gamma[agents]
    evals = idx.size * s.Ne

    def grad_d(W):
        return p._grad(W, agents) + (W - V) / rho

    if s.solver == "gd":
        W = gradient_descent(grad_d, W0, gamma, s.Ne)
    elif s.solver == "noisy-gd":
        W = noisy_gradient_descent(grad_d, W0, gamma, s.Ne, s.tau, rng) if s.tau > 0 else \
            gradient_descent(grad_d, W0, gamma, s.Ne)
    elif s.solver == "sgd":
        def sgrad_d(W):
            return p._stochastic_grad(W, s.batch_size, rng, agents) + (W - V) / rho
        W = gradient_descent(sgrad_d, W0, gamma, s.Ne)
    elif s.solver == "agd":
        W = accelerated_gradient_descent(grad_d, W0, s.L_d, s.mu_d, s.Ne, s.output)
    else:  # "prox": exact local prox, eq. (10)
        W = p.local_prox(V, rho, agents=agents, x0=W0)
        evals = 0
    x_new[idx] = W
    z_new[idx] = z[idx] + 2.0 * (W - y)
    return x_new, z_new, y, evals


def _needs_rng(s: _Settings) -> bool:
    return s.solver == "sgd" or (s.solver == "noisy-gd" and s.tau > 0)


# ---------------------------------------------------------------------------------------
# one iteration
# ---------------------------------------------------------------------------------------
def fedplt_iteration(x: Any, z: Any, problem: FederatedProblem, *, rho: float, Ne: int,
                     solver: str = "gd", gamma: Any = None, active: Any = None,
                     rng: np.random.Generator | None = None, tau: float = 0.0,
                     batch_size: int | None = None, h: Regularizer | None = None,
                     accelerated_output: str = "w") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One outer iteration of Fed-PLT (v2 Algorithm 1); a pure function.

    Parameters
    ----------
    x, z : arrays (N, n)
        Agents' models ``x_{i,k}`` and PRS auxiliary variables ``z_{i,k}``.
    problem : FederatedProblem
    rho : float > 0
        PRS penalty.
    Ne : int >= 1
        Local steps (ignored by ``solver="prox"``).
    solver : ``"gd"`` | ``"agd"`` | ``"sgd"`` | ``"noisy-gd"`` | ``"prox"``
        Local solver (eqs. (11), (12), §IV-B SGD, (13), exact prox (10)).
    gamma : None | float | array (N,) | ``"uncoordinated"``
        GD-type step size. Default ``2 / (lam_bar + lam + 2/rho)`` (v2 §IV-B); an array gives
        per-agent steps, ``"uncoordinated"`` the per-agent default from ``(lam_i, lam_bar_i)``
        (Remark 1). Valid range ``(0, 2/(lam_bar + 1/rho))`` (``lam_bar_i`` per agent); v2
        eq. (11) prints ``lam`` in place of ``lam_bar``, a typo.
    active : None | bool array (N,)
        Active agents ``A_k`` (None: all). Inactive agents keep ``x_i``, ``z_i``.
    rng : numpy Generator
        Needed by ``"sgd"`` and by ``"noisy-gd"`` with ``tau > 0``.
    tau : float >= 0
        Noise parameter of eq. (13): per-step noise ``N(0, 2 gamma tau^2 I)``.
    batch_size : int in [1, q]
        Mini-batch size for ``"sgd"``.
    h : Regularizer | None
        Composite term; the coordinator applies ``prox_{rho h / N}`` (Lemma 6).
    accelerated_output : ``"w"`` | ``"u"``
        AGD output: ``w^{N_e}`` (eq. (12)) or the gradient-step sequence ``u^{N_e}``.

    Returns
    -------
    (x_new, z_new, y) with ``y = y_{k+1}`` of shape ``(n,)``.
    """
    s = _resolve(problem, rho, Ne, solver, gamma, tau, batch_size, h, accelerated_output)
    x = _check_state(s.problem, x, "x")
    z = _check_state(s.problem, z, "z")
    idx = _check_active(s.problem, active)
    if _needs_rng(s) and not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator for solver={solver!r}"
                         + (" with tau > 0" if solver == "noisy-gd" else ""))
    x_new, z_new, y, _ = _step(x, z, s, idx, rng)
    return x_new, z_new, y


# ---------------------------------------------------------------------------------------
# a whole run
# ---------------------------------------------------------------------------------------
@dataclass
class FedPLTRun:
    """Result of :func:`run_fedplt`. Per-iteration arrays have ``K + 1`` entries (index 0 is
    the initial point; fewer if the run stopped at ``tol``); a metric that was not recorded
    or has no reference point is ``None``.

    * ``x_err[k] = ||x_k - 1 (x) x_ref||`` (stacked models), ``z_err[k] = ||z_k - z*||`` with
      ``z_i* = x_ref - rho grad f_i(x_ref)``, ``xz_err = sqrt(x_err^2 + z_err^2)``;
    * ``grad_sq[k] = ||sum_i grad f_i(xbar_k)||^2`` with ``xbar_k = mean_i x_{i,k}`` (the
      v2 §VII stopping metric), ``x_bar[k] = xbar_k``;
    * ``comms[k]``: cumulative agent-coordinator round trips (active agents);
      ``grad_evals[k]``: cumulative local gradient evaluations (``N_e`` per active agent;
      mini-batch gradients count as one; the exact prox counts none);
      ``active_count[k]``: active agents at iteration ``k`` (0 at index 0);
    * ``iterations_to_tol``: ``K* = min{k : grad_sq[k] <= tol}`` (spec §9.6) or None.
    """

    x: np.ndarray
    z: np.ndarray
    y: np.ndarray
    iterations: int
    x_err: np.ndarray | None
    z_err: np.ndarray | None
    xz_err: np.ndarray | None
    grad_sq: np.ndarray | None
    x_bar: np.ndarray | None
    comms: np.ndarray
    grad_evals: np.ndarray
    active_count: np.ndarray
    iterations_to_tol: int | None
    x_ref: np.ndarray | None
    settings: dict[str, Any] = field(default_factory=dict)

    def time_cost(self, t_G: float = 1.0, t_C: float = 10.0) -> np.ndarray:
        """Cumulative realised time ``t_G * grad_evals + t_C * comms`` (v2 §VII, Table II
        costs ``(N_e t_G + t_C) |A_k|`` per iteration)."""
        return t_G * self.grad_evals + t_C * self.comms


def _participation_sampler(problem: FederatedProblem, participation: Any):
    N = problem.N
    if participation is None:
        return None
    if isinstance(participation, tuple) and len(participation) == 2 and participation[0] == "cohort":
        c = participation[1]
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 1 <= c <= N:
            raise ValueError(f"participation ('cohort', c) needs an integer c in [1, {N}], got {c!r}")
        c = int(c)

        def cohort(rng):
            mask = np.zeros(N, dtype=bool)
            mask[rng.choice(N, size=c, replace=False)] = True
            return mask
        return cohort
    if isinstance(participation, (str, tuple)):
        raise ValueError(f"participation must be None, a probability in (0, 1], an array of shape ({N},) "
                         f"of probabilities in (0, 1], or ('cohort', c), got {participation!r}")
    try:
        p = np.asarray(participation, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"participation must be None, a probability in (0, 1], an array of shape ({N},), "
                         f"or ('cohort', c), got {participation!r}") from None
    if p.ndim == 0:
        p = np.full(N, float(p))
    if p.shape != (N,):
        raise ValueError(f"participation probabilities must be a scalar or have shape ({N},), got {p.shape}")
    if not np.all(np.isfinite(p) & (p > 0) & (p <= 1)):
        raise ValueError(f"participation probabilities p_i must lie in (0, 1] (Assumption 2), got {participation!r}")

    def bernoulli(rng):
        return rng.random(N) < p
    return bernoulli


def run_fedplt(problem: FederatedProblem, *, rho: float, Ne: int, K: int, solver: str = "gd",
               gamma: Any = None, participation: Any = None, tau: float = 0.0,
               batch_size: int | None = None, h: Regularizer | None = None, x0: Any = None,
               z0: Any = None, init: str = "zeros", seed: int = 0,
               rng: np.random.Generator | None = None, tol: float | None = None,
               stop_at_tol: bool = True, record: Sequence[str] = ("x_err", "z_err", "grad_sq"),
               x_ref: Any = None, accelerated_output: str = "w",
               progress: bool = False) -> FedPLTRun:
    """Run ``K`` iterations of Fed-PLT (v2 Algorithm 1) and record its trajectory.

    Parameters beyond :func:`fedplt_iteration`:

    * ``participation``: None (all agents), a probability ``p`` or array ``p_i`` in (0, 1]
      (independent Bernoulli draws per agent and iteration, Assumption 2), or
      ``("cohort", c)`` (exactly ``c`` agents uniformly without replacement, the experiments'
      model).
    * ``x0``, ``z0``: initial states (N, n). Otherwise ``init="zeros"`` (``x = z = 0``) or
      ``init="privacy"`` (``x_{i,0} ~ N(0, 2 tau^2 I / lam)`` as Proposition 4 requires, with
      ``z_0 = 0``; needs ``tau > 0`` and ``lam > 0``).
    * ``seed`` / ``rng``: randomness (participation, mini-batches, noise, initialisation) comes
      from three independent child streams of ``rng`` (or of ``default_rng(seed)``), so e.g.
      the participation pattern does not depend on the local solver.
    * ``tol``: ``iterations_to_tol = min{k : grad_sq[k] <= tol}``; with ``stop_at_tol`` the
      run stops there.
    * ``record``: any of ``"x_err"``, ``"z_err"``, ``"xz_err"``, ``"grad_sq"``, ``"x_bar"``.
      Errors need a reference ``x_ref``: ``problem.x_star()`` for a convex problem without
      ``h``; with ``h`` (or a weakly convex problem) pass ``x_ref`` or they are None.
    * ``progress``: a tqdm progress bar.
    """
    s = _resolve(problem, rho, Ne, solver, gamma, tau, batch_size, h, accelerated_output)
    p = s.problem
    check_int("K (outer iterations)", K, 0)
    K = int(K)
    if rng is None:
        check_int("seed", seed, 0)
        rng = np.random.default_rng(seed)
    elif not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator or None")
    part_rng, solver_rng, init_rng = rng.spawn(3)
    sampler = _participation_sampler(p, participation)
    record = tuple(record)
    unknown = [r for r in record if r not in RECORDABLE]
    if unknown:
        raise ValueError(f"record entries must be among {RECORDABLE}, got {unknown}")
    if tol is not None:
        try:
            tol = float(tol)
        except (TypeError, ValueError):
            raise ValueError(f"tol must be a real number >= 0 or None, got {tol!r}") from None
        if not (np.isfinite(tol) and tol >= 0):
            raise ValueError(f"tol must be finite and >= 0, got {tol!r}")
    if init not in ("zeros", "privacy"):
        raise ValueError(f"init must be 'zeros' or 'privacy', got {init!r}")
    if x0 is not None:
        x = _check_state(p, x0, "x0").copy()
    elif init == "privacy":
        if s.tau <= 0:
            raise ValueError(f"tau must be > 0 for init='privacy' (x_0 ~ N(0, 2 tau^2 I / lam)), got {tau!r}")
        if p.lam <= 0:
            raise ValueError(f"init='privacy' needs lam > 0 (strongly convex costs), got lam={p.lam}")
        x = np.sqrt(2.0 * s.tau ** 2 / p.lam) * init_rng.standard_normal((p.N, p.n))
    else:
        x = np.zeros((p.N, p.n))
    z = _check_state(p, z0, "z0").copy() if z0 is not None else np.zeros((p.N, p.n))

    ref = None
    if x_ref is not None:
        ref = p._check_x(x_ref, "x_ref").copy()
    elif s.h is None and p.convex:
        ref = p.x_star()
    z_star = fixed_point(p, s.rho, ref)[1] if ref is not None else None

    want_err = ref is not None and any(r in record for r in ("x_err", "z_err", "xz_err"))
    want_grad = "grad_sq" in record or tol is not None
    n_rec = K + 1
    x_err = np.full(n_rec, np.nan) if want_err else None
    z_err = np.full(n_rec, np.nan) if want_err else None
    grad_sq = np.full(n_rec, np.nan) if want_grad else None
    x_bar = np.full((n_rec, p.n), np.nan) if "x_bar" in record else None
    comms = np.zeros(n_rec, dtype=np.int64)
    grad_evals = np.zeros(n_rec, dtype=np.int64)
    active_count = np.zeros(n_rec, dtype=np.int64)
    k_tol: int | None = None

    def measure(k: int) -> bool:
        nonlocal k_tol
        if want_err:
            x_err[k] = np.linalg.norm(x - ref)
            z_err[k] = np.linalg.norm(z - z_star)
        xb = x.mean(axis=0)
        if x_bar is not None:
            x_bar[k] = xb
        if want_grad:
            g = p.total_grad(xb)
            grad_sq[k] = float(g @ g)
            if tol is not None and k_tol is None and grad_sq[k] <= tol:
                k_tol = k
                return stop_at_tol
        return False

    all_agents = np.arange(p.N)
    last = K
    y = _coordinator(z, s)
    stop = measure(0)
    if stop:
        last = 0
    iterator = range(1, K + 1)
    if progress and not stop:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc=f"Fed-PLT ({s.solver}, Ne={s.Ne})", leave=False)
    if not stop:
        for k in iterator:
            idx = all_agents if sampler is None else np.flatnonzero(sampler(part_rng))
            x, z, y, ev = _step(x, z, s, idx, solver_rng)
            active_count[k] = idx.size
            comms[k] = comms[k - 1] + idx.size
            grad_evals[k] = grad_evals[k - 1] + ev
            if measure(k):
                last = k
                break
    n_keep = last + 1

    def cut(a):
        return None if a is None else a[:n_keep].copy()

    xz_err = None
    if want_err and "xz_err" in record:
        xz_err = np.sqrt(x_err[:n_keep] ** 2 + z_err[:n_keep] ** 2)
    settings = {"rho": s.rho, "Ne": s.Ne, "solver": s.solver, "gamma": s.gamma, "mu_d": s.mu_d,
                "L_d": s.L_d, "tau": s.tau, "batch_size": s.batch_size, "participation": participation,
                "init": init, "seed": seed, "tol": tol, "accelerated_output": s.output,
                "h": None if s.h is None else (s.h.kind, dict(s.h.params))}
    return FedPLTRun(
        x=x, z=z, y=y, iterations=last,
        x_err=cut(x_err) if "x_err" in record else None,
        z_err=cut(z_err) if "z_err" in record else None,
        xz_err=xz_err,
        grad_sq=cut(grad_sq) if "grad_sq" in record or tol is not None else None,
        x_bar=cut(x_bar), comms=cut(comms), grad_evals=cut(grad_evals),
        active_count=cut(active_count), iterations_to_tol=k_tol, x_ref=ref, settings=settings,
    )
