"""Runs of the page "Fed-PLT: tuning the penalty and the local training": the stored results
``fedplt/tuning-v2-sweeps`` (:class:`V2SweepConfig`), ``fedplt/tuning-v2-drift``
(:class:`DriftConfig`), ``fedplt/tuning-v1-rates`` (:class:`V1RatesConfig`), their run (unit,
combine) functions and the computing helpers those call. The tables, figures and facts that read
them stay in :mod:`fedrepro.chapters.fedplt.tuning.sweeps`, which re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL


def rho_lattice(k_min: int, k_max: int, per_decade: int = 8) -> tuple[float, ...]:
    """``rho = 10**(k / per_decade)`` for ``k = k_min..k_max``: a log grid on which
    ``0.1``, ``1`` and ``10`` (Table VIII) lie exactly when ``per_decade`` divides ``k``."""
    if not (isinstance(per_decade, int) and per_decade >= 1):
        raise ValueError(f"per_decade must be an integer >= 1, got {per_decade!r}")
    if not (isinstance(k_min, int) and isinstance(k_max, int) and k_min <= k_max):
        raise ValueError(f"k_min <= k_max must be integers, got {k_min!r}, {k_max!r}")
    return tuple(float(10.0 ** (k / per_decade)) for k in range(k_min, k_max + 1))


def empirical_rate(errors: Any, low: float = 1e-12, high: float = 1e-3) -> tuple[float, str]:
    """Empirical linear rate of an error sequence (spec §9.7) and the window used.

    ``fit_rate(errors, low, high)`` (iterates with ``low <= e_k/e_0 <= high``) when at least
    three iterates fall in that window (``"window"``); otherwise the fit over the second half
    of the recorded (finite) iterates (``"tail"``): for a rate close to one the run ends
    before the window; its second half is dominated by the slowest modes, and the fit there
    is slightly below the asymptotic rate when other slow modes are close to it."""
    from fedrepro.experiments.fedplt.common import fit_rate

    e = np.asarray(errors, dtype=float)
    if e.ndim != 1 or e.size < 1 or not e[0] > 0:
        raise ValueError("errors must be a 1-D array with a positive first entry")
    if not (0 <= low < high):
        raise ValueError(f"the window needs 0 <= low < high, got low={low}, high={high}")
    r = fit_rate(e, low, high)
    if math.isfinite(r):
        return r, "window"
    finite = e[np.isfinite(e)]
    tail = finite[finite.size // 2:]
    if tail.size < 3 or not tail[0] > 0:
        return math.nan, "none"
    return fit_rate(tail, 0.0, math.inf), "tail"


@dataclass(frozen=True)
class V2SweepConfig(ExperimentConfig):
    """``K*`` of Fed-PLT (GD, default step ``2/(lam_bar + lam + 2/rho)``, ``x_0 = z_0 = 0``,
    full participation) on the convex v2 problem (data seed ``seed``, ``N`` agents) to
    ``||sum_i grad f_i(xbar)||^2 <= tol``, for every ``N_e`` in ``Nes`` on the grid ``rhos``
    (``rho`` tuned per ``N_e`` on it), and for exact PRS (the exact local prox, ``N_e ->
    infinity``) on the same grid; at ``N_e = dense_Ne`` also on ``dense_rhos`` (the
    ``K*(rho)`` curve). ``K`` iterations at most."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "tuning-v2-sweeps"

    profile: str = "paper"
    seed: int = 0
    N: int = 100
    Nes: tuple[int, ...] = (1, 2, 5, 8, 10, 20)
    rhos: tuple[float, ...] = rho_lattice(-8, 12)
    dense_Ne: int = 5
    dense_rhos: tuple[float, ...] = rho_lattice(-16, 16)
    table_viii_rhos: tuple[float, ...] = (0.1, 1.0, 10.0)
    tCs: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
    tG: float = 1.0
    tol: float = 1e-5
    K: int = 2000

    @classmethod
    def for_profile(cls, profile: str) -> V2SweepConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", N=20, Nes=(1, 5, 20), rhos=rho_lattice(-4, 6, 4),
                       dense_rhos=rho_lattice(-4, 4, 4), K=400)
        return cls()


def _prox_K(problem, rho: float, K: int, tol: float) -> int:
    """``K*`` of exact PRS (Fed-PLT with the exact local prox, the ``N_e -> infinity`` limit)."""
    from fedrepro.fedplt.algorithm import run_fedplt

    run = run_fedplt(problem, rho=rho, Ne=1, K=K, solver="prox", tol=tol, record=("grad_sq",))
    return -1 if run.iterations_to_tol is None else int(run.iterations_to_tol)


def _run_v2_sweeps(config: V2SweepConfig) -> dict[str, Any]:
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.batched import run_batched
    from fedrepro.problems.logistic import logistic_v2

    problem = logistic_v2(convex=True, seed=config.seed, N=config.N)
    rhos = np.asarray(config.rhos)
    dense = np.asarray(config.dense_rhos)
    K_grid = np.full((len(config.Nes), rhos.size), -1, dtype=np.int64)
    K_dense = np.full(dense.size, -1, dtype=np.int64)
    for e, Ne in enumerate(config.Nes):
        grid = np.union1d(rhos, dense) if Ne == config.dense_Ne else rhos
        run = run_batched(FedPLT(problem, Ne=int(Ne), rho=grid), K=config.K, tol=config.tol, drop_finished=True)
        K_of = dict(zip(grid.tolist(), run.iterations_to_tol.tolist(), strict=False))
        K_grid[e] = [K_of[r] for r in rhos.tolist()]
        if Ne == config.dense_Ne:
            K_dense = np.array([K_of[r] for r in dense.tolist()], dtype=np.int64)
    K_prox = np.array([_prox_K(problem, float(r), config.K, config.tol) for r in rhos], dtype=np.int64)
    zeta = np.array([ops.prs_contraction(r, problem.lam, problem.lam_bar) for r in dense])
    return {"Nes": np.array(config.Nes), "rhos": rhos, "K_grid": K_grid, "K_prox": K_prox,
            "dense_rhos": dense, "K_dense": K_dense,
            "dense_Ne": config.dense_Ne, "zeta_dense": zeta, "lam": problem.lam, "lam_bar": problem.lam_bar,
            "tCs": np.array(config.tCs), "tG": config.tG, "N": config.N, "K_max": config.K,
            "table_viii_rhos": np.array(config.table_viii_rhos)}


def load_v2_sweeps(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`V2SweepConfig` for ``profile``."""
    return load_or_run(V2SweepConfig.for_profile(profile), _run_v2_sweeps)


@dataclass(frozen=True)
class DriftConfig(ExperimentConfig):
    """Fed-PLT (GD at the default step, full participation) on the convex v2 problem with
    ``N_e`` in ``Nes`` and with the exact local prox, at penalty ``rho``, run until
    ``||sum_i grad f_i(xbar)||^2 <= tol`` (at most ``K`` iterations); the final distance of
    the model to ``x*`` (Newton) measures the client drift (v2 §V-C)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "tuning-v2-drift"

    profile: str = "paper"
    seed: int = 0
    N: int = 100
    Nes: tuple[int, ...] = (1, 2, 5, 8, 10, 20, 50)
    rho: float = 1.0
    tol: float = 1e-22
    K: int = 3000

    @classmethod
    def for_profile(cls, profile: str) -> DriftConfig:
        check_profile(profile)
        return cls(profile="quick", N=20, Nes=(1, 5, 50), K=1000) if profile == "quick" else cls()


def _run_drift(config: DriftConfig) -> dict[str, Any]:
    from fedrepro.fedplt.algorithm import run_fedplt
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.batched import run_batched
    from fedrepro.problems.logistic import logistic_v2

    problem = logistic_v2(convex=True, seed=config.seed, N=config.N)
    x_star = problem.x_star()
    err, iters, models = [], [], []
    for Ne in config.Nes:
        run = run_batched(FedPLT(problem, Ne=int(Ne), rho=config.rho), K=config.K, tol=config.tol,
                          record=("grad_sq", "model_err", "model"))
        err.append(float(run.model_err[0, -1]))
        iters.append(int(run.iterations))
        models.append(run.models[0, -1])
    prox = run_fedplt(problem, rho=config.rho, Ne=1, K=config.K, solver="prox", tol=config.tol,
                      record=("grad_sq", "x_bar"))
    err.append(float(np.linalg.norm(prox.x_bar[-1] - x_star)))
    iters.append(int(prox.iterations))
    models.append(prox.x_bar[-1])
    models = np.array(models)
    spread = float(np.max(np.linalg.norm(models[:, None, :] - models[None, :, :], axis=2)))
    return {"Nes": np.array(config.Nes), "rho": config.rho, "error": np.array(err), "iterations": np.array(iters),
            "spread": spread, "x_star_norm": float(np.linalg.norm(x_star)), "K_max": config.K}


def load_drift(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`DriftConfig` for ``profile``."""
    return load_or_run(DriftConfig.for_profile(profile), _run_drift)


@dataclass(frozen=True)
class V1RatesConfig(ExperimentConfig):
    """Empirical rates (:func:`empirical_rate`, ``e_k = ||xbar_k - x*||``) of Fed-PLT (GD,
    default step, full participation, ``x_0 = z_0 = 0``) on the v1 problem (data seed
    ``seed``). Fig. 2: ``N_e = fig2_Ne`` on ``fig2_rhos`` (one batched program), and exact
    PRS (``solver="prox"``) on ``prox_rhos``. Fig. 3: ``N_e`` in ``fig3_Nes`` at every
    ``rho`` of ``fig3_rhos`` (one batched program per ``N_e``; the paper's ``rho = 0.3``
    first), with exact PRS at each of them. Runs stop at
    ``||sum_i grad f_i(xbar)||^2 <= tol`` (below the fit window) or after ``K`` iterations."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "tuning-v1-rates"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    seed: int = 0
    fig2_Ne: int = 10
    fig2_rhos: tuple[float, ...] = rho_lattice(-24, 24)
    prox_rhos: tuple[float, ...] = tuple(sorted(set(rho_lattice(-8, 8)) | set(rho_lattice(-6, 6, 2)) | {0.3}))
    fig3_rhos: tuple[float, ...] = (0.3, 1.0, 3.0)
    fig3_Nes: tuple[int, ...] = tuple(range(1, 51))
    tol: float = 1e-24
    K: int = 1000

    @classmethod
    def for_profile(cls, profile: str) -> V1RatesConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", fig2_rhos=rho_lattice(-4, 4, 2),
                       prox_rhos=tuple(sorted(set(rho_lattice(-2, 2, 2)) | {0.3})),
                       fig3_Nes=(1, 2, 5, 10, 15, 20, 30), K=300)
        return cls()


def _prox_rate(problem, rho: float, K: int, tol: float, x_star: np.ndarray) -> tuple[float, str, float]:
    from fedrepro.fedplt.algorithm import run_fedplt

    run = run_fedplt(problem, rho=rho, Ne=1, K=K, solver="prox", tol=tol, record=("x_bar", "x_err"))
    rate, how = empirical_rate(np.linalg.norm(run.x_bar - x_star, axis=1))
    stacked, _ = empirical_rate(run.x_err)
    return rate, how, stacked


def _run_v1_rates(config: V1RatesConfig) -> dict[str, Any]:
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.batched import run_batched
    from fedrepro.problems.logistic import logistic_v1

    problem = logistic_v1(seed=config.seed)
    x_star = problem.x_star()
    lam, lam_bar = problem.lam, problem.lam_bar
    lam_bar_tight = float(np.max(problem.lam_bar_i_tight))
    rhos = np.asarray(config.fig2_rhos)
    run = run_batched(FedPLT(problem, Ne=config.fig2_Ne, rho=rhos), K=config.K, tol=config.tol,
                      record=("grad_sq", "model_err"), drop_finished=True)
    fits = [empirical_rate(e) for e in run.model_err]
    prox = [_prox_rate(problem, float(r), config.K, config.tol, x_star) for r in config.prox_rhos]
    r3 = np.asarray(config.fig3_rhos)
    fig3_rate = np.full((r3.size, len(config.fig3_Nes)), np.nan)
    fig3_window = np.full(fig3_rate.shape, "none", dtype=object)
    for e, Ne in enumerate(config.fig3_Nes):
        run3 = run_batched(FedPLT(problem, Ne=int(Ne), rho=r3), K=config.K, tol=config.tol,
                           record=("grad_sq", "model_err"), drop_finished=True)
        for j in range(r3.size):
            fig3_rate[j, e], fig3_window[j, e] = empirical_rate(run3.model_err[j])
    prox3 = [_prox_rate(problem, float(r), config.K, config.tol, x_star) for r in r3]
    S = np.zeros((2, r3.size, len(config.fig3_Nes)))
    for j, rho in enumerate(r3):
        gamma = ops.default_local_step(float(rho), lam, lam_bar)
        chi = ops.local_gd_contraction(gamma, float(rho), lam, lam_bar)
        for e, Ne in enumerate(config.fig3_Nes):
            for c, corrected in enumerate((False, True)):
                S[c, j, e] = ops.spectral_norm(ops.matrix_S(float(rho), int(Ne), lam, lam_bar, chi,
                                                            corrected=corrected))
    return {
        "lam": lam, "lam_bar": lam_bar, "lam_bar_tight": lam_bar_tight, "K_max": config.K,
        "fig2_Ne": config.fig2_Ne, "fig2_rhos": rhos, "fig2_rate": np.array([f[0] for f in fits]),
        "fig2_window": np.array([f[1] for f in fits]), "fig2_iterations": run.iterations_to_tol,
        "prox_rhos": np.asarray(config.prox_rhos), "prox_rate": np.array([p[0] for p in prox]),
        "prox_window": np.array([p[1] for p in prox]), "prox_rate_stacked": np.array([p[2] for p in prox]),
        "zeta": np.array([ops.prs_contraction(r, lam, lam_bar) for r in rhos]),
        "zeta_tight": np.array([ops.prs_contraction(r, lam, lam_bar_tight) for r in rhos]),
        "fig3_rhos": r3, "fig3_Nes": np.array(config.fig3_Nes), "fig3_rate": fig3_rate,
        "fig3_window": fig3_window.astype(str),
        "fig3_prox_rate": np.array([p[0] for p in prox3]), "fig3_prox_rate_stacked": np.array([p[2] for p in prox3]),
        "fig3_zeta": np.array([ops.prs_contraction(float(r), lam, lam_bar) for r in r3]),
        "fig3_S_printed": S[0], "fig3_S_corrected": S[1],
    }


def load_v1_rates(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`V1RatesConfig` for ``profile``."""
    return load_or_run(V1RatesConfig.for_profile(profile), _run_v1_rates)
