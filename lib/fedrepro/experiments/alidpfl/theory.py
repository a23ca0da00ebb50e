"""The run of the chapter "ALI-DPFL: the theory, checked" (``book/alidpfl/theory.ipynb``).

Every statement check of :mod:`fedrepro.alidpfl.checks` is run once (:class:`TheoryConfig`,
stored as ``alidpfl/theory-checks.json``); the table and figures are in
:mod:`fedrepro.chapters.alidpfl.theory`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.alidpfl.checks import lemma3, statements, theorem1, theorem2
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile

__all__ = ["TheoryConfig", "run_theory", "load_theory"]



@dataclasses.dataclass(frozen=True)
class TheoryConfig(ExperimentConfig):
    """Monte Carlo sizes of the checks (``quick``: fewer trials)."""

    part: ClassVar[str] = "alidpfl"
    experiment: ClassVar[str] = "theory-checks"
    verify_rtol: ClassVar[float] = 1e-6
    verify_note: ClassVar[str] = "Monte Carlo means summed in a BLAS-dependent order"

    profile: str = "paper"
    tau: int = 6

    @property
    def trials(self) -> int:
        return 4000 if self.profile == "paper" else 400


def run_theory(cfg: TheoryConfig) -> dict[str, Any]:
    """Run every check; each entry is (observed, bound) or a dict of named values."""
    check_profile(cfg.profile)
    t1_det = theorem1.theorem1_gap(cfg.tau, sigma=0.0, trials=cfg.trials)
    t1_noisy = theorem1.theorem1_gap(cfg.tau, sigma=1.1, clip=1.0, batch=10.0, trials=cfg.trials)
    out: dict[str, Any] = {
        "theorem1_det_observed": t1_det[0], "theorem1_det_bound": t1_det[1],
        "theorem1_noisy_observed": t1_noisy[0], "theorem1_noisy_bound": t1_noisy[1],
        "theorem1_noisy_exact_at_one": theorem1.expected_gap_at_one(1.1, 1.0, 10.0, 0.5, 5, 4),
    }
    for i, case in enumerate(lemma3.LEMMA3_CASES):
        obs, bound = lemma3.lemma3_error(case, trials=max(cfg.trials // 2, 200))
        out[f"lemma3_{i}"] = np.array([obs, bound])
    out["jensen"] = np.array(theorem2.jensen_step())
    out["final_step"] = np.array(theorem2.final_step())
    out["x_minus_x3"] = np.array(theorem2.x_minus_x3_max())
    out["lemma6"] = np.array(theorem2.lemma6_noisy_step())
    d3 = statements.definition3_direction()
    out["definition3"] = np.array([d3["divergence"], d3["formula"], d3["printed_allowed_R"]])
    out["clipping"] = np.array(statements.clipping_printed(np.array([3.0, 4.0]), 0.1))
    e7 = statements.eq7_residual()
    out["eq7"] = np.array([e7["printed"], e7["corrected"]])
    out["eq8"] = np.array(statements.eq8_auxiliary_noise())
    e11 = statements.eq11_h_at_one()
    out["eq11"] = np.array([e11["printed"], e11["corrected"]])
    return out


def load_theory(profile: str = "paper") -> dict[str, Any]:
    return load_or_run(TheoryConfig(profile=profile), run_theory)
