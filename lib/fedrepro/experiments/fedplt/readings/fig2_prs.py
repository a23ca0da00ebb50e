"""Runs of the Fed-PLT readings: the stored result ``fedplt/reading-v1-fig2-prs``
(:class:`Fig2PRSConfig`), exact PRS's rate against ``rho`` under the readings of the v1 problem.

The reading, stated before it ran
---------------------------------
v1 C16 says of Fig. 2 that Fed-PLT behaves like exact PRS (the ``N_e -> infinity`` limit);
part (a) of the tuning chapter's check (:func:`fedrepro.chapters.fedplt.tuning.checks.check_v1_dominated_by_prs`)
reads it as: the argmin over ``rho`` of Fed-PLT's rate and that of exact PRS lie within a
factor 3. ``fedplt/reading-v1-grid`` holds Fed-PLT's curve on the Fig. 2 lattice of ``rho``
under every (weight, scale) of the v1 problem's readings, but not exact PRS's, so C16 (a)
(and exact PRS's half of C12's "or") was stored under no reading. This run computes exact
PRS's empirical rate (the tuning chapter's protocol: ``||xbar_k - x*||`` fitted by
:func:`~fedrepro.experiments.fedplt.tuning.empirical_rate`, ``K`` iterations or until
``||sum_i grad f_i(xbar)||^2 <= tol``; :func:`~fedrepro.experiments.fedplt.tuning._prox_rate`)
on the same lattice (:func:`~fedrepro.experiments.fedplt.readings.experiments._fig2_rhos`)
under every reading of that grid but the main setting (whose exact PRS the tuning chapter
holds). The claims are then judged by their own checks on it, whatever they give; nothing of
the paper's figure enters the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.readings.experiments import MAIN, _fig2_rhos, reading_problem
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL
from fedrepro.experiments.fedplt.tuning import _prox_rate

#: The readings of ``fedplt/reading-v1-grid`` (weights x scales) less the main setting.
READINGS: tuple[tuple[float, float], ...] = tuple(
    (w, s) for w in (0.5, 5.0) for s in (1.0, 1.5, 2.0, 3.0, 4.0) if (w, s) != MAIN)


@dataclass(frozen=True)
class Fig2PRSConfig(ExperimentConfig):
    """Exact PRS's rate against ``rho`` (``rhos``) on the v1 problem (data seed ``data_seed``)
    under each (weight, scale) of ``readings``; runs stop at ``||sum_i grad f_i(xbar)||^2 <= tol``
    or after ``K`` iterations (the protocol of the tuning chapter's exact PRS)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "reading-v1-fig2-prs"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    data_seed: int = 0
    readings: tuple[tuple[float, float], ...] = READINGS
    rhos: tuple[float, ...] = ()
    tol: float = 1e-24
    K: int = 1000

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.readings or any(len(r) != 2 for r in self.readings):
            raise ValueError(f"readings must be a non-empty tuple of (weight, scale) pairs, got {self.readings!r}")
        if len(self.rhos) < 3 or any(not r > 0 for r in self.rhos):
            raise ValueError(f"rhos must hold at least 3 positive values, got {self.rhos!r}")
        if self.K < 2:
            raise ValueError(f"K must be at least 2, got {self.K!r}")

    @classmethod
    def for_profile(cls, profile: str) -> Fig2PRSConfig:
        check_profile(profile)
        from fedrepro.experiments.fedplt.tuning import rho_lattice

        if profile == "quick":
            return cls(profile="quick", readings=((5.0, 1.0), (5.0, 2.0)), rhos=rho_lattice(-4, 4, 2), K=300)
        return cls(rhos=_fig2_rhos())


def run_fig2_prs(config: Fig2PRSConfig) -> dict[str, Any]:
    """``{"readings", "rhos", "prox_rate" (readings x rhos), "prox_argmin_rho", "prox_min_rate"}``."""
    rhos = np.asarray(config.rhos, dtype=float)
    rate = np.full((len(config.readings), rhos.size), np.nan)
    for a, (weight, scale) in enumerate(config.readings):
        problem = reading_problem(weight, scale, config.data_seed)
        x_star = problem.x_star()
        rate[a] = [_prox_rate(problem, float(r), config.K, config.tol, x_star)[0] for r in rhos]
    best = np.nanargmin(rate, axis=1)
    return {"readings": np.asarray(config.readings, dtype=float), "rhos": rhos, "prox_rate": rate,
            "prox_argmin_rho": rhos[best], "prox_min_rate": np.nanmin(rate, axis=1)}


def load_fig2_prs(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`Fig2PRSConfig` for ``profile``."""
    return load_or_run(Fig2PRSConfig.for_profile(profile), run_fig2_prs)
