"""Runs of the Fed-PLT readings: the stored results ``fedplt/reading-v1-fig3``
(:class:`ReadingsEpochsConfig`), their run (unit, combine) functions and the computing helpers
those call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.epochs`, which re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.readings.experiments import MAIN, PRINTED_CLASS, reading_problem
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL
from fedrepro.experiments.fedplt.tuning import _prox_rate, empirical_rate


@dataclass(frozen=True)
class ReadingsEpochsConfig(ExperimentConfig):
    """Fed-PLT's rate against ``N_e`` (``Nes``) at ``rho`` and the exact-PRS rate, on the v1
    problem (data seed ``data_seed``) under each (weight, scale) of ``readings``; runs stop
    at ``||sum_i grad f_i(xbar)||^2 <= tol`` or after ``K`` iterations."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "reading-v1-fig3"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    data_seed: int = 0
    rho: float = 0.3
    readings: tuple[tuple[float, float], ...] = (MAIN, PRINTED_CLASS, (0.5, 1.5), (5.0, 4.0))
    Nes: tuple[int, ...] = tuple(range(1, 51))
    tol: float = 1e-24
    K: int = 1000

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.readings or any(len(r) != 2 for r in self.readings):
            raise ValueError(f"readings must be a non-empty tuple of (weight, scale) pairs, got {self.readings!r}")
        if len(self.Nes) < 2 or list(self.Nes) != sorted(set(self.Nes)) or self.Nes[0] < 1:
            raise ValueError(f"Nes must be increasing integers >= 1 (at least two), got {self.Nes!r}")

    @classmethod
    def for_profile(cls, profile: str) -> ReadingsEpochsConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", readings=(MAIN, PRINTED_CLASS), Nes=(1, 2, 5, 10, 15, 20, 30), K=300)
        return cls()


def _run_epochs(config: ReadingsEpochsConfig) -> dict[str, Any]:
    from fedrepro.fedplt.baselines.fedplt import FedPLT
    from fedrepro.fedplt.batched import run_batched

    R, E = len(config.readings), len(config.Nes)
    rate, S = np.full((R, E), np.nan), np.full((R, E), np.nan)
    prox, lam, lam_bar = np.zeros(R), np.zeros(R), np.zeros(R)
    for a, (weight, scale) in enumerate(config.readings):
        problem = reading_problem(weight, scale, config.data_seed)
        lam[a], lam_bar[a] = problem.lam, problem.lam_bar
        gamma = ops.default_local_step(config.rho, lam[a], lam_bar[a])
        chi = ops.local_gd_contraction(gamma, config.rho, lam[a], lam_bar[a])
        for e, Ne in enumerate(config.Nes):
            run = run_batched(FedPLT(problem, Ne=int(Ne), rho=np.array([config.rho])), K=config.K, tol=config.tol,
                              record=("grad_sq", "model_err"), drop_finished=True)
            rate[a, e] = empirical_rate(run.model_err[0])[0]
            S[a, e] = ops.spectral_norm(ops.matrix_S(config.rho, int(Ne), lam[a], lam_bar[a], chi))
        prox[a] = _prox_rate(problem, config.rho, config.K, config.tol, problem.x_star())[0]  # the tuning chapter's
    return {"readings": np.asarray(config.readings, dtype=float), "rho": config.rho, "Nes": np.asarray(config.Nes),
            "rate": rate, "prox_rate": prox, "S_printed": S, "lam": lam, "lam_bar": lam_bar}


def load_readings_epochs(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ReadingsEpochsConfig` for ``profile``."""
    return load_or_run(ReadingsEpochsConfig.for_profile(profile), _run_epochs)
