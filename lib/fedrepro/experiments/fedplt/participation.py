"""Runs of the page "Fed-PLT: partial participation and privacy" (partial participation): the
stored results ``fedplt/participation-privacy-cohorts`` (:class:`CohortsConfig`),
``fedplt/participation-privacy-v1-rates`` (:class:`V1RatesConfig`),
``fedplt/participation-privacy-exact`` (:class:`ExactConfig`), their run (unit, combine)
functions and the computing helpers those call. The tables, figures and facts that read them
stay in :mod:`fedrepro.chapters.fedplt.participation_privacy.participation`, which re-exports
these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.numbers import sig3
from fedrepro.core.profiles import check_profile
from fedrepro.core.validate import check_int, check_interval, check_positive
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL
from fedrepro.fedplt.batched import BatchedAlgorithm, RunStreams, State, cohort_masks, run_batched

if TYPE_CHECKING:

    from fedrepro.problems.base import FederatedProblem


T_G: float = 1.0  #: time of one local gradient (v2 §VII)


T_C: float = 10.0  #: time of one agent-coordinator round (v2 Tables II, VI, VII)


FRACTIONS: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  #: v2 Table VI rows


_V1_TUNING_RHOS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0)


def cohort_size(fraction: float, N: int) -> int:
    """Number of active agents ``round(fraction * N)`` of a cohort (at least one)."""
    fraction = check_interval("fraction", fraction, 0.0, 1.0, closed_low=False)
    N = check_int("N", N)
    return max(1, int(round(fraction * N)))


def iteration_cost(Ne: int, active: float, t_G: float = T_G, t_C: float = T_C) -> float:
    """Paper-style cost of one Fed-PLT iteration, ``(N_e t_G + t_C) |A|`` (v2 Table II with
    the number of active agents ``|A|``, spec §9.6)."""
    Ne = check_int("Ne", Ne)
    active = check_positive("active", active)
    t_G = check_positive("t_G", t_G)
    t_C = check_positive("t_C", t_C)
    return (Ne * t_G + t_C) * active


def paper_time(K_star: Any, Ne: int, active: float, t_G: float = T_G, t_C: float = T_C) -> np.ndarray:
    """``K* x iteration_cost`` (NaN where ``K* < 0``, i.e. the threshold was not reached)."""
    K = np.asarray(K_star, dtype=float)
    return np.where(K >= 0, K * iteration_cost(Ne, active, t_G, t_C), np.nan)


def s_norms(problem: FederatedProblem, rho: float, Ne: int) -> dict[str, float]:
    """``||S||`` of Proposition 1 at the default GD step, printed and corrected (``c =
    1/(1 + rho lam)``, see the theory chapter), with the loose smoothness constant the
    experiments use and with the tight one (``max_i lambda_max(A_i^T A_i)/(4 q_i) + reg``)."""
    rho = check_positive("rho", rho)
    Ne = check_int("Ne", Ne)
    lam = float(problem.lam)
    gamma = ops.default_local_step(rho, lam, float(problem.lam_bar))
    out = {"gamma": float(gamma)}
    for name, lam_bar in (("loose", float(problem.lam_bar)), ("tight", float(np.max(problem.lam_bar_i_tight)))):
        chi = ops.local_gd_contraction(gamma, rho, lam, lam_bar)
        out[f"chi_{name}"] = float(chi)
        for variant, corrected in (("printed", False), ("corrected", True)):
            S = ops.matrix_S(rho, Ne, lam, lam_bar, chi, corrected=corrected)
            out[f"{variant}_{name}"] = float(ops.spectral_norm(S))
            out[f"radius_{variant}_{name}"] = float(ops.spectral_radius(S))
    return out


@dataclass
class StateErrors:
    """Result of :func:`state_errors`; arrays ``(R, K+1)``, index 0 the initial state.

    * ``x_err[r, k] = ||x_k - 1 (x) x_ref||`` (the agents' models stacked, spec §9.7);
    * ``xz_err[r, k] = ||[x_k; z_k] - [1 (x) x_ref; z_ref]||`` (the quantity Corollary 1
      bounds, spec §9.8), ``None`` without ``z_ref``;
    * ``model_err[r, k] = ||xbar_k - x_ref||`` with ``xbar = mean_i x_i`` (the model point).
    """

    x_err: np.ndarray
    xz_err: np.ndarray | None
    model_err: np.ndarray
    iterations: int
    final_state: State


def _masks(participation: Any, N: int, streams: RunStreams) -> np.ndarray | None:
    if participation is None:
        return None
    if isinstance(participation, tuple):
        return cohort_masks(streams, N, participation[1])
    return streams.uniform((N,)) < participation


def _check_participation(participation: Any, N: int) -> Any:
    if participation is None:
        return None
    if isinstance(participation, tuple) and len(participation) == 2 and participation[0] == "cohort":
        return ("cohort", check_int("participation cohort size c", participation[1], 1, N))
    p = np.asarray(participation, dtype=float)
    if p.shape not in ((), (N,)) or not np.all(np.isfinite(p) & (p > 0) & (p <= 1)):
        raise ValueError(f"participation must be None, ('cohort', c) with c in [1, {N}], or probabilities in "
                         f"(0, 1] of shape () or ({N},); got {participation!r}")
    return p


def state_errors(algorithm: BatchedAlgorithm, *, K: int, runs: int | None = None, participation: Any = None,
                 seed: int = 0, x_ref: np.ndarray | None = None, z_ref: np.ndarray | None = None,
                 state0: State | None = None, stop_below: float | None = None) -> StateErrors:
    """Run ``K`` iterations of ``R`` stacked runs and record the distance of the state to the
    reference (v1 rates, spec §9.7; noise floors, spec §9.8).

    Random streams are those of :func:`~fedrepro.fedplt.batched.run_batched` with the same
    ``seed`` (initialisation, participation and solver children of ``SeedSequence(seed)``),
    so the two drivers produce the same iterates. ``participation``: None, ``("cohort", c)``
    or Bernoulli probabilities. ``x_ref`` defaults to ``x*``; ``z_ref`` (shape ``(N, n)``)
    enables ``xz_err``. ``state0`` replaces the algorithm's initial state (arrays
    ``(R, N, n)``). With ``stop_below``, the run ends once every run has come within
    ``stop_below`` times its initial distance (``xz_err`` with ``z_ref``, else ``x_err``).
    """
    if not isinstance(algorithm, BatchedAlgorithm):
        raise ValueError(f"algorithm must be a BatchedAlgorithm, got {type(algorithm).__name__}")
    K = check_int("K", K, 0)
    R = algorithm.runs_required if runs is None else check_int("runs", runs)
    if algorithm.runs_required not in (1, R):
        raise ValueError(f"runs={R} does not match the algorithm's parameter arrays of length "
                         f"{algorithm.runs_required}")
    problem = algorithm.problem
    participation = _check_participation(participation, problem.N)
    if participation is not None and not algorithm.partial_participation:
        raise ValueError(f"{algorithm.name} has no partial participation; participation must be None")
    if stop_below is not None:
        stop_below = check_interval("stop_below", stop_below, 0.0, 1.0, closed_low=False)
    xs = problem.x_star() if x_ref is None else np.asarray(x_ref, dtype=float)
    if xs.shape != (problem.n,):
        raise ValueError(f"x_ref must have shape ({problem.n},), got {xs.shape}")
    zs = None
    if z_ref is not None:
        zs = np.asarray(z_ref, dtype=float)
        if zs.shape != (problem.N, problem.n):
            raise ValueError(f"z_ref must have shape ({problem.N}, {problem.n}), got {zs.shape}")
    init_ss, part_ss, solver_ss = np.random.SeedSequence(int(seed)).spawn(3)
    part_streams, solver_streams = RunStreams(part_ss, R), RunStreams(solver_ss, R)
    state = algorithm.init_state(R, RunStreams(init_ss, R))
    if state0 is not None:
        for key, value in state0.items():
            if key not in state or np.shape(value) != state[key].shape:
                raise ValueError(f"state0[{key!r}] must be one of the state's arrays with shape "
                                 f"{state[key].shape if key in state else '?'}")
        state = {key: np.array(state0.get(key, v), dtype=float, copy=True) for key, v in state.items()}
    x_err = np.full((R, K + 1), np.nan)
    model_err = np.full((R, K + 1), np.nan)
    xz_err = None if zs is None else np.full((R, K + 1), np.nan)

    def measure(k: int) -> None:
        dx = state["x"] - xs
        sx = np.einsum("rin,rin->r", dx, dx)
        x_err[:, k] = np.sqrt(sx)
        model_err[:, k] = np.linalg.norm(state["x"].mean(axis=1) - xs, axis=1)
        if xz_err is not None:
            dz = state["z"] - zs
            xz_err[:, k] = np.sqrt(sx + np.einsum("rin,rin->r", dz, dz))

    measure(0)
    last = K
    with np.errstate(all="ignore"):
        for k in range(1, K + 1):
            state, _ = algorithm.step(state, _masks(participation, problem.N, part_streams), solver_streams)
            measure(k)
            tracked = x_err if xz_err is None else xz_err
            if stop_below is not None and np.all(tracked[:, k] <= stop_below * tracked[:, 0]):
                last = k
                break
    keep = last + 1
    return StateErrors(x_err=x_err[:, :keep], xz_err=None if xz_err is None else xz_err[:, :keep],
                       model_err=model_err[:, :keep], iterations=last, final_state=state)


def tuned_rho(problem: FederatedProblem, Ne: int, K: int = 1000) -> tuple[float, dict[str, Any]]:
    """``rho`` of Fed-PLT (GD, default step, full participation) minimising ``K*`` over its
    ``tuning_grid`` (deterministic: one run per point); also the grid and its ``K*``."""
    from fedrepro.fedplt.tuning import grid_search

    gs = grid_search("Fed-PLT", problem, Ne=check_int("Ne", Ne), trials=1, K=check_int("K", K))
    rhos = np.array([p["rho"] for p in gs.points])
    return float(gs.best_params["rho"]), {"rhos": rhos, "K_star": gs.K_star[:, 0].copy()}


def tuned_rho_by_rate(problem: FederatedProblem, Ne: int, rhos: tuple[float, ...] = _V1_TUNING_RHOS,
                      K: int = 400, low: float = 1e-12, high: float = 1e-3) -> tuple[float, dict[str, Any]]:
    """``rho`` of Fed-PLT (GD, default step, full participation) with the smallest empirical
    rate (spec §9.7 fit of ``||x_k - 1 (x) x*||``) on the grid ``rhos`` (v1 §VII-B: "tuning
    its parameter rho to achieve an optimal convergence rate"); also the rates."""
    from fedrepro.experiments.fedplt.common import fit_rate
    from fedrepro.fedplt.baselines.fedplt import FedPLT

    rhos = tuple(check_positive("rhos", r) for r in rhos)
    if not rhos:
        raise ValueError("rhos must not be empty")
    traj = state_errors(FedPLT(problem, Ne=check_int("Ne", Ne), rho=np.array(rhos)), K=K,
                        stop_below=0.1 * low)
    rates = np.array([fit_rate(e, low, high) for e in traj.x_err])
    if np.all(np.isnan(rates)):
        raise ValueError("no rho of the grid gave a rate; enlarge K")
    return float(rhos[int(np.nanargmin(rates))]), {"rhos": np.array(rhos), "rates": rates}


@dataclass(frozen=True)
class CohortsConfig(ExperimentConfig):
    """v2 Table VI: Fed-PLT (GD, ``N_e``) with uniform cohorts of ``fractions`` of the agents,
    ``trials`` Monte Carlo runs each (fraction ``f`` uses ``seed * 1000 + c``), one ``rho``
    (tuned at full participation); the per-fraction grid search uses ``tune_rhos``,
    ``tune_trials`` runs and ``tune_seed``. Data: ``logistic_v2(convex=True, data_seed)``."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "participation-privacy-cohorts"

    profile: str = "paper"
    data_seed: int = 0
    Ne: int = 5
    fractions: tuple[float, ...] = FRACTIONS
    trials: int = 100
    K: int = 1000
    seed: int = 6
    tune_rhos: tuple[float, ...] = (0.7, 1.0, 1.5, 2.0, 3.0, 5.0)
    tune_trials: int = 10
    tune_seed: int = 60
    t_G: float = T_G
    t_C: float = T_C

    @classmethod
    def for_profile(cls, profile: str) -> CohortsConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", fractions=(0.5, 1.0), trials=8, tune_rhos=(1.0, 2.0), tune_trials=3)
        return cls()


def _run_cohorts(config: CohortsConfig) -> dict[str, Any]:
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.tuning import grid_search
    from fedrepro.problems.logistic import logistic_v2

    problem = logistic_v2(convex=True, seed=config.data_seed)
    N = problem.N
    rho, full_grid = tuned_rho(problem, config.Ne, config.K)
    sizes = [cohort_size(f, N) for f in config.fractions]
    K_star = np.full((len(sizes), config.trials), -1, dtype=np.int64)
    tune_mean = np.full((len(sizes), len(config.tune_rhos)), np.nan)
    for i, c in enumerate(sizes):
        algo = FedPLT(problem, Ne=config.Ne, rho=rho)
        if c == N:  # deterministic: one run stands for every trial
            run = run_batched(algo, K=config.K, runs=1, seed=config.seed * 1000 + c)
            K_star[i] = run.iterations_to_tol[0]
            tune_mean[i] = np.nan
            continue
        run = run_batched(algo, K=config.K, runs=config.trials, participation=("cohort", c),
                          seed=config.seed * 1000 + c, drop_finished=True)
        K_star[i] = run.iterations_to_tol
        gs = grid_search("Fed-PLT", problem, Ne=config.Ne, grid={"rho": list(config.tune_rhos)},
                         trials=config.tune_trials, participation=("cohort", c), K=config.K,
                         seed=config.tune_seed * 1000 + c)
        tune_mean[i] = gs.mean_K
    times = np.stack([paper_time(K_star[i], config.Ne, c, config.t_G, config.t_C) for i, c in enumerate(sizes)])
    return {"fractions": np.array(config.fractions), "cohort": np.array(sizes), "N": N, "Ne": config.Ne, "rho": rho,
            "full_rhos": full_grid["rhos"], "full_K_star": full_grid["K_star"], "K_star": K_star,
            "time": times, "tune_rhos": np.array(config.tune_rhos), "tune_mean_K": tune_mean,
            "cost": np.array([iteration_cost(config.Ne, c, config.t_G, config.t_C) for c in sizes])}


def load_cohorts(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`CohortsConfig` (computed if missing or stale)."""
    return load_or_run(CohortsConfig.for_profile(profile), _run_cohorts)


def _pct(f: float) -> str:
    return f"{int(round(100 * f))}%"


@dataclass(frozen=True)
class V1RatesConfig(ExperimentConfig):
    """v1 Table III: Fed-PLT (GD, ``N_e = 10``) on the v1 problem with ``c`` of the 10 agents
    active (uniform cohorts), ``trials`` runs each (``seed * 1000 + c``); rate = spec §9.7 fit
    (window ``[low, high]`` of ``e_k/e_0``) of the Monte Carlo geometric mean of
    ``||x_k - 1 (x) x*||``; ``rho`` tuned by the full-participation rate on ``rhos``."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "participation-privacy-v1-rates"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    data_seed: int = 0
    Ne: int = 10
    agents: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    trials: int = 100
    rhos: tuple[float, ...] = _V1_TUNING_RHOS
    K_max: int = 2000
    low: float = 1e-12
    high: float = 1e-3
    seed: int = 7

    @classmethod
    def for_profile(cls, profile: str) -> V1RatesConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", agents=(2, 5, 10), trials=6, rhos=(0.3, 1.0), low=1e-8)
        return cls()


def _run_v1_rates(config: V1RatesConfig) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.common import fit_rate
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.problems.logistic import logistic_v1

    problem = logistic_v1(seed=config.data_seed)
    rho, grid = tuned_rho_by_rate(problem, config.Ne, config.rhos, low=config.low, high=config.high)
    rate, median, p10, p90, iters = (np.full(len(config.agents), np.nan) for _ in range(5))
    for i, c in enumerate(config.agents):
        c = check_int("agents", c, 1, problem.N)
        full = c == problem.N
        traj = state_errors(FedPLT(problem, Ne=config.Ne, rho=rho), K=config.K_max, runs=1 if full else config.trials,
                            participation=None if full else ("cohort", c), seed=config.seed * 1000 + c,
                            stop_below=0.1 * config.low)
        logs = np.log(traj.x_err)
        rate[i] = fit_rate(np.exp(logs.mean(axis=0)), config.low, config.high)
        per_run = np.array([fit_rate(e, config.low, config.high) for e in traj.x_err])
        median[i], p10[i], p90[i] = np.nanmedian(per_run), np.nanquantile(per_run, 0.1), np.nanquantile(per_run, 0.9)
        iters[i] = traj.iterations
    return {"agents": np.array(config.agents), "N": problem.N, "trials": config.trials, "rho": rho,
            "tuning_rhos": grid["rhos"],
            "tuning_rates": grid["rates"], "rate": rate, "rate_median": median, "rate_p10": p10,
            "rate_p90": p90, "iterations": iters, "S": s_norms(problem, rho, config.Ne)}


def load_v1_rates(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`V1RatesConfig` (computed if missing or stale)."""
    return load_or_run(V1RatesConfig.for_profile(profile), _run_v1_rates)


@dataclass(frozen=True)
class ExactConfig(ExperimentConfig):
    """Fed-PLT with exact local solvers (GD, AGD) and partial participation run to
    ``||sum_i grad f_i(xbar)||^2 <= tol`` (far below the tables' ``1e-5``): uniform cohorts of
    ``fractions`` and Bernoulli participation with probabilities ``bernoulli``, ``trials``
    runs each, ``rho`` tuned at full participation (GD), v2 problem."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "participation-privacy-exact"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    data_seed: int = 0
    Ne: int = 5
    solvers: tuple[str, ...] = ("gd", "agd")
    fractions: tuple[float, ...] = FRACTIONS
    bernoulli: tuple[float, ...] = (0.5,)
    trials: int = 5
    K: int = 800
    tol: float = 1e-18
    seed: int = 8

    @classmethod
    def for_profile(cls, profile: str) -> ExactConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", solvers=("gd",), fractions=(0.5, 1.0), bernoulli=(), trials=2, tol=1e-14)
        return cls()


def _settings(config: ExactConfig, N: int) -> list[tuple[str, Any, float]]:
    out: list[tuple[str, Any, float]] = []
    for f in config.fractions:
        c = cohort_size(f, N)
        out.append((f"cohort {_pct(f)}", None if c == N else ("cohort", c), c / N))
    for p in config.bernoulli:
        out.append((f"Bernoulli p={sig3(p)}", float(p), float(p)))
    return out


def _run_exact(config: ExactConfig) -> dict[str, Any]:
    from fedrepro.experiments.fedplt.common import fit_rate
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.problems.logistic import logistic_v2

    problem = logistic_v2(convex=True, seed=config.data_seed)
    rho, _ = tuned_rho(problem, config.Ne)
    settings = _settings(config, problem.N)
    shape = (len(config.solvers), len(settings))
    K_thr, K_dist = (np.full(shape + (config.trials,), -1, dtype=np.int64) for _ in range(2))
    final, rate = np.full(shape + (config.trials,), np.nan), np.full(shape, np.nan)
    for s, solver in enumerate(config.solvers):
        for j, (_, participation, _) in enumerate(settings):
            runs = 1 if participation is None else config.trials
            run = run_batched(FedPLT(problem, Ne=config.Ne, solver=solver, rho=rho), K=config.K, runs=runs,
                              participation=participation, tol=config.tol, record=("grad_sq", "model_err"),
                              seed=config.seed * 1000 + 10 * j + s)
            g, e = run.grad_sq, run.model_err
            K_thr[s, j, :runs] = [int(np.argmax(row <= 1e-5)) if np.any(row <= 1e-5) else -1 for row in g]
            K_dist[s, j, :runs] = [int(np.argmax(row < 1e-8)) if np.any(row < 1e-8) else -1 for row in e]
            final[s, j, :runs] = e[:, -1]
            rate[s, j] = fit_rate(np.exp(np.log(e).mean(axis=0)))
            if runs == 1:
                K_thr[s, j, 1:], K_dist[s, j, 1:], final[s, j, 1:] = K_thr[s, j, 0], K_dist[s, j, 0], final[s, j, 0]
    return {"solvers": list(config.solvers), "settings": [name for name, _, _ in settings],
            "p": np.array([p for _, _, p in settings]), "rho": rho, "K_threshold": K_thr,
            "K_distance": K_dist, "final_model_err": final, "rate": rate,
            "S": s_norms(problem, rho, config.Ne)}


def load_exact(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ExactConfig` (computed if missing or stale)."""
    return load_or_run(ExactConfig.for_profile(profile), _run_exact)
