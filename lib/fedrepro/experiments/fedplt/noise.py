"""Runs of the page "Fed-PLT: partial participation and privacy" (noise floors): the stored results
``fedplt/participation-privacy-noise`` (:class:`NoiseConfig`), their run (unit, combine)
functions and the computing helpers those call. The tables, figures and facts that read them
stay in :mod:`fedrepro.chapters.fedplt.participation_privacy.noise`, which re-exports these
names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator
from fedrepro.core.validate import check_positive
from fedrepro.experiments.fedplt.participation import s_norms, state_errors, tuned_rho, tuned_rho_by_rate

#: Rows of v2 Table VII and v1 Table IV ("noise variance tau").
VALUES: tuple[float, ...] = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


#: How a table value sets the noise: ``"variance"``: ``tau^2 = value``; ``"std"``: ``tau = value``.
READINGS: tuple[str, ...] = ("variance", "std")


#: Distances averaged: the whole state (Corollary 1), the stacked models, the model point.
QUANTITIES: tuple[str, ...] = ("xz", "x", "model")


_TABLES = {"v2": "fedplt-v2-TVII", "v1": "fedplt-v1-TIV"}


def noise_std(value: float, reading: str) -> float:
    """``tau`` for a table value: ``sqrt(value)`` (variance reading) or ``value`` (std reading)."""
    value = check_positive("value", value)
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    tau = math.sqrt(value) if reading == "variance" else value
    return float(f"{tau:.12g}")


@dataclass(frozen=True)
class NoiseConfig(ExperimentConfig):
    """Asymptotic error of Fed-PLT with noisy local GD (module docstring), for the v2 (Table VII)
    or the v1 problem (Table IV); ``trials`` runs per noise level (seeded from the config)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "participation-privacy-noise"

    profile: str = "paper"
    version: str = "v2"
    data_seed: int = 0
    Ne: int = 5
    values: tuple[float, ...] = VALUES
    trials: int = 2
    K_avg: int = 500
    burn_tol: float = 1e-12
    K_burn_max: int = 300
    far_norm: float = 100.0
    c11_value: float = 1e-2
    sgd_batch: int = 10
    seed: int = 9

    def result_name(self) -> str:
        base = f"{self.experiment}-{self.version}"
        return base if self.profile == "paper" else f"{base}-{self.profile}"

    @classmethod
    def for_profile(cls, profile: str, version: str = "v2") -> NoiseConfig:
        check_profile(profile)
        if version not in _TABLES:
            raise ValueError(f"version must be 'v2' or 'v1', got {version!r}")
        kw: dict[str, Any] = {"version": version}
        if version == "v1":
            kw.update(Ne=10, trials=5, sgd_batch=5)
        if profile == "quick":
            kw.update(profile="quick", values=(1e-4, 1e-2, 1.0), trials=1, K_avg=40)
        return cls(**kw)


def _problem(config: NoiseConfig):
    from fedrepro.problems.logistic import logistic_v1, logistic_v2

    return logistic_v2(convex=True, seed=config.data_seed) if config.version == "v2" else logistic_v1(
        seed=config.data_seed)


def _far_start(rng: np.random.Generator, runs: int, N: int, n: int, norm: float) -> np.ndarray:
    u = rng.standard_normal((runs, N, n))
    return norm * u / np.linalg.norm(u, axis=2, keepdims=True)


def _run_noise(config: NoiseConfig) -> dict[str, Any]:
    from fedrepro.fedplt.algorithm import fixed_point, run_fedplt
    from fedrepro.fedplt.baselines.fedplt import FedPLT

    problem = _problem(config)
    N, n = problem.N, problem.n
    if config.version == "v2":
        rho, _ = tuned_rho(problem, config.Ne)
    else:
        rho, _ = tuned_rho_by_rate(problem, config.Ne)
    x_star = problem.x_star()
    _, z_star = fixed_point(problem, rho)
    S = s_norms(problem, rho, config.Ne)
    gamma = S["gamma"]

    # burn-in: the noiseless algorithm from a far start reaches burn_tol (spec §9.8)
    far_rng = generator(config, "far")
    x_far = _far_start(far_rng, 1, N, n, config.far_norm)
    start = math.sqrt(float(np.sum((x_far[0] - x_star) ** 2) + np.sum(z_star ** 2)))
    clean = state_errors(FedPLT(problem, Ne=config.Ne, rho=rho), K=config.K_burn_max, z_ref=z_star,
                         state0={"x": x_far}, stop_below=min(1.0, config.burn_tol / start))
    below = np.flatnonzero(clean.xz_err[0] < config.burn_tol)
    K_burn = int(below[0]) if below.size else config.K_burn_max
    zero = state_errors(FedPLT(problem, Ne=config.Ne, rho=rho), K=K_burn, z_ref=z_star)

    # noisy runs: every tau of both readings (privacy start), then C11's two starts
    taus = sorted({noise_std(v, r) for v in config.values for r in READINGS})
    tau_c11 = noise_std(config.c11_value, "variance")
    T = config.trials
    tau_run = np.array([t for t in taus for _ in range(T)] + [tau_c11] * (2 * T))
    R = tau_run.size
    init_rng = generator(config, "init")
    x0 = np.sqrt(2.0 / problem.lam) * tau_run[:, None, None] * init_rng.standard_normal((R, N, n))
    x0[len(taus) * T: len(taus) * T + T] = 0.0
    x0[len(taus) * T + T:] = _far_start(far_rng, T, N, n, config.far_norm)
    K = K_burn + config.K_avg
    algo = FedPLT(problem, Ne=config.Ne, solver="noisy-gd", rho=rho, tau=tau_run)
    traj = state_errors(algo, K=K, z_ref=z_star, state0={"x": x0}, seed=config.seed)
    window = slice(K_burn + 1, K + 1)
    half = K_burn + 1 + config.K_avg // 2
    errs = {"xz": traj.xz_err, "x": traj.x_err, "model": traj.model_err}
    means = {q: e[:, window].mean(axis=1) for q, e in errs.items()}
    first = traj.x_err[:, K_burn + 1:half].mean(axis=1)
    second = traj.x_err[:, half:].mean(axis=1)
    main = slice(0, len(taus) * T)
    geo = np.exp(np.log(traj.x_err[main]).reshape(len(taus), T, K + 1).mean(axis=1))

    # mini-batch SGD (claim C05): exact gradients replaced by sampled ones, no added noise
    sgd = run_fedplt(problem, rho=rho, Ne=config.Ne, K=K, solver="sgd", batch_size=config.sgd_batch,
                     seed=config.seed, record=("x_err",))
    sgd_err = sgd.x_err

    out: dict[str, Any] = {
        "version": config.version, "values": np.array(config.values), "taus": np.array(taus),
        "trials": T, "rho": rho, "gamma": gamma, "N": N, "n": n, "Ne": config.Ne, "K_burn": K_burn,
        "K_avg": config.K_avg, "S": S, "tau_c11": tau_c11,
        "floor": {q: means[q][main].reshape(len(taus), T) for q in QUANTITIES},
        "first_half": first[main].reshape(len(taus), T), "second_half": second[main].reshape(len(taus), T),
        "c11": {"privacy": means["x"][main].reshape(len(taus), T)[taus.index(tau_c11)],
                "zeros": means["x"][len(taus) * T: len(taus) * T + T],
                "far": means["x"][len(taus) * T + T:]},
        "c11_xz": {"zeros": means["xz"][len(taus) * T: len(taus) * T + T], "far": means["xz"][len(taus) * T + T:]},
        "trajectory": geo,
        "trajectory_c11": {"zeros": traj.x_err[len(taus) * T], "far": traj.x_err[len(taus) * T + T]},
        "noiseless": {"x": zero.x_err[0], "model": zero.model_err[0], "xz": zero.xz_err[0]},
        "sgd": {"batch": config.sgd_batch, "x_err": sgd_err,
                "window_mean": float(np.mean(sgd_err[window])),
                "first_half": float(np.mean(sgd_err[K_burn + 1:half])),
                "second_half": float(np.mean(sgd_err[half:]))},
        "x_star_norm": float(np.linalg.norm(x_star)),
    }
    if config.version == "v1":
        from fedrepro.problems.logistic import logistic_v1

        stated = logistic_v1(seed=config.data_seed, eps=problem.info["eps"] * N).x_star()
        out["reference_offsets"] = {"stated_eps_model": float(np.linalg.norm(stated - x_star)),
                                    "stated_eps_x": float(math.sqrt(N) * np.linalg.norm(stated - x_star))}
    return out


def load_noise(profile: str = "paper", version: str = "v2") -> dict[str, Any]:
    """The stored result of :class:`NoiseConfig` for ``version`` (computed if missing or stale)."""
    return load_or_run(NoiseConfig.for_profile(profile, version), _run_noise)
