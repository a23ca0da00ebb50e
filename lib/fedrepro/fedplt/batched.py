"""Many independent runs of one federated algorithm advanced together (Fed-PLT v2 §VII).

The experiments of v2 §VII average 100 Monte Carlo runs and tune every algorithm on a grid
of parameters. Both are *independent runs* of the same algorithm on the same problem, so
they are stacked on a leading axis: the state of ``R`` runs is a set of arrays of shape
``(R, N, n)`` (agents' variables) or ``(R, n)`` (coordinator variables), one local step of
all runs and all agents is one vectorised array operation, and the only Python loops left
are over iterations and local steps.

* :class:`BatchedAlgorithm` is the interface every algorithm implements (Fed-PLT in
  :mod:`fedrepro.fedplt.baselines.fedplt`, the five baselines next to it).
* Parameters may differ between runs: each is a scalar or an array of shape ``(R,)``
  (a grid), read inside ``step`` through :meth:`BatchedAlgorithm.param`, shape ``(R, 1, 1)``.
* :class:`RunStreams` gives every run its own random streams (participation, local
  randomness), so run ``r`` draws the same numbers whatever ``R`` is.
* :func:`run_batched` iterates, records ``||sum_i grad f_i(xbar_k)||^2`` (the v2 §VII
  stopping metric) per run, and stops when every run has reached ``tol``.
* The time of a run is the paper's Table II formula (spec §9.6): ``K*`` times the
  per-iteration cost ``((N_e + extra) t_G + rounds t_C) |A|``.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.problems.base import FederatedProblem
from fedrepro.problems.logistic import LogisticProblem

__all__ = [
    "BatchedAlgorithm",
    "BatchedRun",
    "RunStreams",
    "State",
    "cohort_masks",
    "local_agd",
    "local_gd",
    "run_batched",
    "stacked_grad",
    "stacked_total_grad",
]

State = dict[str, np.ndarray]
RECORDABLE = ("grad_sq", "model_err", "model")
DIVERGED = 1e30  # a metric above this (or non-finite) marks a run as diverged


# ---------------------------------------------------------------------------------------
# gradients of stacked states
# ---------------------------------------------------------------------------------------
def stacked_grad(problem: FederatedProblem, X: np.ndarray) -> np.ndarray:
    """``grad f_i`` of every agent for a stack of states: ``X (..., N, n) -> (..., N, n)``,
    row ``i`` of each state evaluated with agent ``i``'s cost. Logistic costs use one batched
    product over all leading axes; other problems fall back to one call per state."""
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[-2:] != (problem.N, problem.n):
        raise ValueError(f"X must have shape (..., {problem.N}, {problem.n}), got {X.shape}")
    if X.ndim == 2:
        return problem._grad(X, None)
    if isinstance(problem, LogisticProblem):
        T = problem._signed_t  # (N, n, q): label-signed features b_h a_h
        Xa = np.moveaxis(X.reshape(-1, problem.N, problem.n), 1, 0)  # (N, B, n): agents lead
        m = np.matmul(Xa, T)  # (N, B, q): b_h a_h x_i, one batched product per agent
        with np.errstate(over="ignore"):
            np.exp(m, out=m)
        m += 1.0
        np.reciprocal(m, out=m)  # sigma(-b_h a_h x), in place; an overflowing exp gives exactly 0
        data = np.matmul(m, _transposed_features(problem)) * (-1.0 / T.shape[2])  # (N, B, n)
        data = np.moveaxis(data, 0, 1).reshape(X.shape)
        return data + problem.reg_weight * problem._reg_grad(X)
    flat = X.reshape(-1, problem.N, problem.n)
    out = np.stack([problem._grad(x, None) for x in flat])
    return out.reshape(X.shape)


def _transposed_features(problem: LogisticProblem) -> np.ndarray:
    """``(N, q, n)`` copy of the signed features, cached on the problem instance."""
    cached = getattr(problem, "_stacked_signed_features", None)
    if cached is None:
        cached = np.ascontiguousarray(problem._signed_t.transpose(0, 2, 1))
        problem._stacked_signed_features = cached
    return cached


def stacked_total_grad(problem: FederatedProblem, x: np.ndarray) -> np.ndarray:
    """``sum_i grad f_i(x_r)`` for a stack of models ``x (R, n) -> (R, n)``."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or x.shape[1] != problem.n:
        raise ValueError(f"x must have shape (R, {problem.n}), got {x.shape}")
    X = np.broadcast_to(x[:, None, :], (x.shape[0], problem.N, problem.n))
    return stacked_grad(problem, X).sum(axis=1)


# ---------------------------------------------------------------------------------------
# local solvers on stacks (R, N, n)
# ---------------------------------------------------------------------------------------
GradFn = Callable[[np.ndarray], np.ndarray]


def local_gd(grad: GradFn, W0: np.ndarray, step: np.ndarray | float, Ne: int,
             steps: np.ndarray | None = None) -> np.ndarray:
    """``N_e`` gradient steps ``w <- w - step * grad(w)`` on every run and agent at once.
    ``step`` broadcasts against ``W0`` (e.g. shape ``(R, 1, 1)``). With ``steps`` (an int
    array broadcastable to ``W0``'s leading axes, e.g. ``(R, 1, 1)``) run ``r`` stops after
    ``steps[r]`` steps (TAMUNA's random number of local steps); then ``Ne`` is the maximum."""
    W = np.array(W0, dtype=float, copy=True)
    for ell in range(int(Ne)):
        W_new = W - step * grad(W)
        W = W_new if steps is None else np.where(ell < steps, W_new, W)
    return W


def local_agd(grad: GradFn, W0: np.ndarray, L: np.ndarray | float, mu: np.ndarray | float,
              Ne: int, steps: np.ndarray | None = None) -> np.ndarray:
    """Constant-momentum Nesterov (v2 eq. (12)) for a ``mu``-strongly convex, ``L``-smooth
    local function, restarted at every call: ``u^{l+1} = w^l - grad(w^l) / L``,
    ``w^{l+1} = u^{l+1} + beta (u^{l+1} - u^l)``, ``beta = (sqrt L - sqrt mu)/(sqrt L + sqrt mu)``;
    returns ``w^{N_e}``. ``steps`` as in :func:`local_gd`."""
    L = np.asarray(L, dtype=float)
    mu = np.asarray(mu, dtype=float)
    beta = (np.sqrt(L) - np.sqrt(mu)) / (np.sqrt(L) + np.sqrt(mu))
    W = np.array(W0, dtype=float, copy=True)
    U = W.copy()
    for ell in range(int(Ne)):
        U_new = W - grad(W) / L
        W_new = U_new + beta * (U_new - U)
        if steps is None:
            W, U = W_new, U_new
        else:
            go = ell < steps
            W, U = np.where(go, W_new, W), np.where(go, U_new, U)
    return W


# ---------------------------------------------------------------------------------------
# randomness: one stream per run
# ---------------------------------------------------------------------------------------
class RunStreams:
    """Independent random streams, one per run (child ``stream_ids[r]`` of
    ``SeedSequence(seed)``, default ``r``), so that run ``r`` sees the same numbers whatever
    the number of runs stacked beside it; runs given the same id share their numbers
    (common random numbers, e.g. trial ``t`` at every point of a tuning grid)."""

    def __init__(self, seed: int | np.random.SeedSequence, runs: int,
                 stream_ids: np.ndarray | None = None):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
        ids = np.arange(int(runs)) if stream_ids is None else np.asarray(stream_ids, dtype=np.int64)
        children = ss.spawn(int(ids.max()) + 1)
        self.generators = [np.random.default_rng(children[i]) for i in ids]

    @property
    def runs(self) -> int:
        return len(self.generators)

    def subset(self, runs: np.ndarray) -> RunStreams:
        """The streams of the runs ``runs`` (an index array), sharing their generators."""
        other = copy.copy(self)
        other.generators = [self.generators[int(r)] for r in runs]
        return other

    def uniform(self, shape: Sequence[int] = ()) -> np.ndarray:
        """Uniform draws on ``[0, 1)``, shape ``(R, *shape)``."""
        return np.stack([g.random(tuple(shape)) for g in self.generators])

    def normal(self, shape: Sequence[int]) -> np.ndarray:
        """Standard normal draws, shape ``(R, *shape)``."""
        return np.stack([g.standard_normal(tuple(shape)) for g in self.generators])

    def geometric(self, p: float) -> np.ndarray:
        """``Geom(p)`` on ``{1, 2, ...}`` (mean ``1/p``), one per run: shape ``(R,)``."""
        return np.array([g.geometric(p) for g in self.generators], dtype=np.int64)


def cohort_masks(streams: RunStreams, N: int, c: int) -> np.ndarray:
    """Uniform cohorts: exactly ``c`` of ``N`` agents per run, uniformly without replacement
    (the experiments' participation model, spec §0). Returns a boolean ``(R, N)`` mask."""
    u = streams.uniform((N,))
    if c >= N:
        return np.ones_like(u, dtype=bool)
    kth = np.partition(u, c - 1, axis=1)[:, c - 1:c]
    return u <= kth


# ---------------------------------------------------------------------------------------
# the algorithm interface
# ---------------------------------------------------------------------------------------
class BatchedAlgorithm(ABC):
    """One federated algorithm, run on ``R`` stacked copies.

    Class attributes (v2 Tables I-II):

    * ``name``: the paper's name (``"Fed-PLT"``, ``"FedPD"``, ...);
    * ``rounds``: agent-coordinator round trips per iteration (FedLin: 2);
    * ``extra_gradients``: gradient evaluations per iteration beyond ``N_e`` in the paper's
      cost formula (FedLin: 1);
    * ``partial_participation``: whether the algorithm lets agents skip iterations;
    * ``memory``: the number of stored vectors, as Table I writes it (e.g. ``"2N+1"``);
    * ``solvers``: the local solvers it accepts (``"gd"``, ``"agd"``, ...);
    * ``random_local_steps``: True when ``N_e`` is the *mean* number of local steps (TAMUNA).

    Constructor: ``Algorithm(problem, *, Ne, solver="gd", **params)``; every numeric
    parameter is a scalar or an array of shape ``(R,)``.
    """

    name: ClassVar[str] = ""
    rounds: ClassVar[int] = 1
    extra_gradients: ClassVar[int] = 0
    partial_participation: ClassVar[bool] = False
    memory: ClassVar[str] = ""
    solvers: ClassVar[tuple[str, ...]] = ("gd", "agd")
    random_local_steps: ClassVar[bool] = False

    def __init__(self, problem: FederatedProblem, *, Ne: int, solver: str = "gd", **params: Any):
        if not isinstance(problem, FederatedProblem):
            raise ValueError(f"problem must be a FederatedProblem, got {type(problem).__name__}")
        check_int("Ne (local steps)", Ne, 1)
        if solver not in self.solvers:
            raise ValueError(f"solver for {self.name} must be one of {self.solvers}, got {solver!r}")
        self.problem = problem
        self.Ne = int(Ne)
        self.solver = solver
        self.params: dict[str, np.ndarray] = {}
        for key, value in params.items():
            arr = np.asarray(value, dtype=float)
            if arr.ndim > 1 or not np.all(np.isfinite(arr)):
                raise ValueError(f"parameter {key} must be a finite scalar or a 1-D array (one value per run), "
                                 f"got {value!r}")
            self.params[key] = arr
        self.runs_required = max([a.size for a in self.params.values() if a.ndim == 1] or [1])
        for key, arr in self.params.items():
            if arr.ndim == 1 and arr.size != self.runs_required:
                raise ValueError(f"parameter arrays must all have the same length (runs); {key} has {arr.size}, "
                                 f"another has {self.runs_required}")
        self.validate()

    # ---- helpers for subclasses ----------------------------------------------------------
    def param(self, key: str) -> np.ndarray:
        """Parameter ``key`` shaped ``(R, 1, 1)`` (or ``()`` for a scalar): broadcasts against
        the agents' stack ``(R, N, n)``."""
        arr = self.params[key]
        return arr[:, None, None] if arr.ndim == 1 else arr

    def grad(self, X: np.ndarray) -> np.ndarray:
        """``grad f_i`` row-wise on a stack ``(R, N, n)``."""
        return stacked_grad(self.problem, X)

    def validate(self) -> None:  # noqa: B027 - an optional hook: subclasses with parameters override it
        """Check the parameters (raise ``ValueError`` naming the parameter and its range)."""

    def subset(self, runs: np.ndarray) -> BatchedAlgorithm:
        """A shallow copy restricted to the runs ``runs`` (an index array): per-run
        parameters are sliced, everything else is shared."""
        other = copy.copy(self)
        other.params = {k: (v[runs] if v.ndim == 1 else v) for k, v in self.params.items()}
        other.runs_required = int(np.size(runs)) if self.runs_required > 1 else 1
        return other

    # ---- the interface -------------------------------------------------------------------
    @abstractmethod
    def init_state(self, runs: int, streams: RunStreams) -> State:
        """Initial state of ``runs`` runs (every variable 0 unless the algorithm says else)."""

    @abstractmethod
    def step(self, state: State, active: np.ndarray | None, streams: RunStreams) -> tuple[State, np.ndarray]:
        """One iteration. ``active`` is None (all agents) or a boolean ``(R, N)`` mask; inactive
        agents keep their variables. Returns the new state and the gradient evaluations of
        each run in this iteration, shape ``(R,)``."""

    @abstractmethod
    def model(self, state: State) -> np.ndarray:
        """The model the stopping metric is evaluated at, shape ``(R, n)`` (spec §9.6)."""

    # ---- costs (v2 Table II) ---------------------------------------------------------------
    def cost_per_iteration(self, t_G: float, t_C: float, active: float | None = None) -> float:
        """Paper-style cost of one iteration, ``((N_e + extra) t_G + rounds t_C) * |A|``, with
        the mean ``N_e`` for random local steps and ``|A| = N`` unless given."""
        a = self.problem.N if active is None else float(active)
        return ((self.Ne + self.extra_gradients) * t_G + self.rounds * t_C) * a

    def fixed_point_residual(self, state: State) -> np.ndarray:
        """``||sum_i grad f_i(model)||`` per run (0 at the optimum)."""
        g = stacked_total_grad(self.problem, self.model(state))
        return np.linalg.norm(g, axis=1)


# ---------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------
@dataclass
class BatchedRun:
    """Result of :func:`run_batched`; per-run arrays have a leading axis ``R``.

    * ``grad_sq[r, k] = ||sum_i grad f_i(model_k)||^2`` (v2 §VII), NaN after the last
      iteration run;
    * ``model_err[r, k] = ||model_k - x_ref||`` when recorded (``x_ref`` default ``x*``);
    * ``iterations_to_tol[r]``: ``K* = min{k : grad_sq <= tol}``, or -1 (not reached);
    * ``grad_evals`` / ``comms``: cumulative realised counts, shape ``(R, K+1)``;
    * ``active_count[r, k]``: active agents in iteration ``k`` (0 at ``k = 0``).
    """

    name: str
    Ne: int
    iterations: int
    grad_sq: np.ndarray
    model_err: np.ndarray | None
    models: np.ndarray | None
    iterations_to_tol: np.ndarray
    grad_evals: np.ndarray
    comms: np.ndarray
    active_count: np.ndarray
    diverged: np.ndarray
    final_state: State
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def converged(self) -> np.ndarray:
        return self.iterations_to_tol >= 0

    def paper_time(self, algorithm: BatchedAlgorithm, t_G: float = 1.0, t_C: float = 10.0,
                   active: float | None = None) -> np.ndarray:
        """``K* x`` the Table II per-iteration cost, per run (NaN where ``tol`` was not reached)."""
        c = algorithm.cost_per_iteration(t_G, t_C, active)
        return np.where(self.converged, self.iterations_to_tol * c, np.nan)

    def realised_time(self, t_G: float = 1.0, t_C: float = 10.0) -> np.ndarray:
        """``t_G * gradients + t_C * round trips`` actually spent up to ``K*`` (NaN if not reached)."""
        k = np.clip(self.iterations_to_tol, 0, None)
        rows = np.arange(k.size)
        t = t_G * self.grad_evals[rows, k] + t_C * self.comms[rows, k]
        return np.where(self.converged, t, np.nan)


def _masks(participation: Any, N: int, streams: RunStreams) -> np.ndarray | None:
    if participation is None:
        return None
    if isinstance(participation, tuple) and len(participation) == 2 and participation[0] == "cohort":
        return cohort_masks(streams, N, int(participation[1]))
    p = np.asarray(participation, dtype=float)
    return streams.uniform((N,)) < p


def _check_participation(participation: Any, algorithm: BatchedAlgorithm) -> Any:
    N = algorithm.problem.N
    if participation is None:
        return None
    if not algorithm.partial_participation:
        raise ValueError(f"{algorithm.name} has no partial participation (v2 Table I); participation must be None")
    if isinstance(participation, tuple) and len(participation) == 2 and participation[0] == "cohort":
        c = participation[1]
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 1 <= c <= N:
            raise ValueError(f"participation ('cohort', c) needs an integer c in [1, {N}], got {c!r}")
        return ("cohort", int(c))
    try:
        p = np.asarray(participation, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"participation must be None, ('cohort', c) or probabilities in (0, 1], "
                         f"got {participation!r}") from None
    if p.shape not in ((), (N,)) or not np.all(np.isfinite(p) & (p > 0) & (p <= 1)):
        raise ValueError(f"participation probabilities must lie in (0, 1] with shape () or ({N},), "
                         f"got {participation!r}")
    return p


def run_batched(algorithm: BatchedAlgorithm, *, K: int, runs: int | None = None, tol: float = 1e-5,
                participation: Any = None, seed: int = 0, record: Sequence[str] = ("grad_sq",),
                x_ref: np.ndarray | None = None, stop_when_done: bool = True,
                stream_ids: Sequence[int] | None = None, drop_finished: bool = False,
                progress: bool = False) -> BatchedRun:
    """Run ``K`` iterations of ``R`` independent runs of ``algorithm`` (v2 §VII protocol).

    * ``runs``: ``R`` (default: the length of the algorithm's parameter arrays, else 1);
      runs differ in their parameters and/or their random streams (run ``r`` uses child
      ``r`` of ``SeedSequence(seed)``).
    * ``participation``: None (all agents), ``("cohort", c)`` (``c`` agents uniformly
      without replacement, the experiments' model) or Bernoulli probabilities ``p``/``p_i``.
    * ``tol``: ``K*[r] = min{k : ||sum_i grad f_i(model_k)||^2 <= tol}``; with
      ``stop_when_done`` the run ends when every run has reached it or diverged.
    * ``record``: ``"grad_sq"`` (always), ``"model_err"`` (needs ``x_ref`` or a convex
      problem: ``x*``), ``"model"`` (the models, ``(R, K+1, n)``).
    * ``stream_ids``: run ``r`` draws from child ``stream_ids[r]`` (default ``r``) of each
      random source; equal ids give equal participation and noise draws.
    * ``drop_finished``: stop computing a run once it has reached ``tol`` or diverged (its
      later entries stay NaN); for tuning, where only ``K*`` matters.
    """
    if not isinstance(algorithm, BatchedAlgorithm):
        raise ValueError(f"algorithm must be a BatchedAlgorithm, got {type(algorithm).__name__}")
    check_int("K (iterations)", K, 0)
    R = algorithm.runs_required if runs is None else runs
    if isinstance(R, bool) or not isinstance(R, (int, np.integer)) or R < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}")
    if algorithm.runs_required not in (1, R):
        raise ValueError(f"runs={R} does not match the algorithm's parameter arrays of length "
                         f"{algorithm.runs_required}")
    tol = float(tol)
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0, got {tol!r}")
    unknown = [r for r in record if r not in RECORDABLE]
    if unknown:
        raise ValueError(f"record entries must be among {RECORDABLE}, got {unknown}")
    participation = _check_participation(participation, algorithm)
    if stream_ids is not None:
        stream_ids = np.asarray(stream_ids)
        if stream_ids.shape != (R,) or stream_ids.dtype.kind not in "iu" or np.any(stream_ids < 0):
            raise ValueError(f"stream_ids must be {R} integers >= 0 (one per run), got {stream_ids!r}")
    problem = algorithm.problem
    root = np.random.SeedSequence(int(seed))
    init_ss, part_ss, solver_ss = root.spawn(3)
    part_streams = RunStreams(part_ss, R, stream_ids)
    solver_streams = RunStreams(solver_ss, R, stream_ids)
    ref = None
    if "model_err" in record:
        ref = problem.x_star() if x_ref is None else np.asarray(x_ref, dtype=float)

    grad_sq = np.full((R, K + 1), np.nan)
    model_err = np.full((R, K + 1), np.nan) if ref is not None else None
    models = np.full((R, K + 1, problem.n), np.nan) if "model" in record else None
    grad_evals = np.zeros((R, K + 1), dtype=np.int64)
    comms = np.zeros((R, K + 1), dtype=np.int64)
    active_count = np.zeros((R, K + 1), dtype=np.int64)
    k_tol = np.full(R, -1, dtype=np.int64)
    diverged = np.zeros(R, dtype=bool)

    state = algorithm.init_state(R, RunStreams(init_ss, R, stream_ids))
    live = np.arange(R)
    algo = algorithm

    def measure(k: int) -> bool:
        x = algo.model(state)
        with np.errstate(all="ignore"):
            g = stacked_total_grad(problem, x)
            m = np.einsum("rn,rn->r", g, g)
        grad_sq[live, k] = m
        if model_err is not None:
            model_err[live, k] = np.linalg.norm(x - ref, axis=1)
        if models is not None:
            models[live, k] = x
        newly = (k_tol[live] < 0) & (m <= tol)
        k_tol[live[newly]] = k
        diverged[live] |= ~np.isfinite(m) | (m > DIVERGED)
        return bool(np.all((k_tol >= 0) | diverged))

    last = K
    done = measure(0)
    iterator = range(1, K + 1)
    if progress:
        from tqdm.auto import tqdm
        iterator = tqdm(iterator, desc=f"{algorithm.name} ({algorithm.solver}, Ne={algorithm.Ne}, R={R})",
                        leave=False)
    if done and stop_when_done:
        last = 0
    else:
        with np.errstate(all="ignore"):
            for k in iterator:
                if drop_finished:
                    keep_live = (k_tol[live] < 0) & ~diverged[live]
                    if not np.all(keep_live):
                        sel = np.flatnonzero(keep_live)
                        if sel.size == 0:  # every run has finished: nothing left to compute
                            break
                        live = live[sel]
                        algo = algorithm.subset(live)
                        part_streams = part_streams.subset(sel)
                        solver_streams = solver_streams.subset(sel)
                        state = {key: v[sel] for key, v in state.items()}
                active = _masks(participation, problem.N, part_streams)
                state, evals = algo.step(state, active, solver_streams)
                n_active = np.full(live.size, problem.N) if active is None else active.sum(axis=1)
                active_count[live, k] = n_active
                grad_evals[live, k] = grad_evals[live, k - 1] + np.asarray(evals, dtype=np.int64)
                comms[live, k] = comms[live, k - 1] + algorithm.rounds * n_active
                if measure(k) and stop_when_done:
                    last = k
                    break
    keep = last + 1
    settings = {"name": algorithm.name, "Ne": algorithm.Ne, "solver": algorithm.solver,
                "params": {k: v.tolist() for k, v in algorithm.params.items()},
                "participation": participation if not isinstance(participation, np.ndarray)
                else participation.tolist(), "seed": int(seed), "tol": tol, "runs": R}
    return BatchedRun(
        name=algorithm.name, Ne=algorithm.Ne, iterations=last,
        grad_sq=grad_sq[:, :keep], model_err=None if model_err is None else model_err[:, :keep],
        models=None if models is None else models[:, :keep], iterations_to_tol=k_tol,
        grad_evals=grad_evals[:, :keep], comms=comms[:, :keep], active_count=active_count[:, :keep],
        diverged=diverged.copy(), final_state=state, settings=settings)
