"""Runs of the page "Fed-PLT: the theory, checked" (Jacobian study): the stored results
``fedplt/theory-jacobian`` (:class:`JacobianConfig`), their run (unit, combine) functions and
the computing helpers those call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.theory.jacobian`, which re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator

VARIANTS = ("paper", "corrected")


@dataclass(frozen=True)
class JacobianConfig(ExperimentConfig):
    """Grid of the logistic Proposition 1 check: ``setups`` (``"v1"``, ``"v2"``) with ``N``
    agents and data seed ``seed``; ``smoothness`` choices of ``lam_bar`` (the local step and
    ``S`` both use it); ``rhos`` and ``Nes``; the sampled states (see
    :class:`~fedrepro.fedplt.checks.jacobian.StateSampling`)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "theory-jacobian"
    verify_rtol: ClassVar[float] = 1e-7
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("result.units.*.evaluations", None, None),
    )
    verify_note: ClassVar[str] = (
        "the ascent compares Jacobian norms that tie up to round-off (the top singular value is "
        "often repeated), so how many states it evaluates depends on the BLAS kernel (27 vs 45 seen) "
        "and is not compared; the largest norm it finds agreed to 1e-14 between kernels")

    profile: str = "paper"
    setups: tuple[str, ...] = ("v2", "v1")
    N: tuple[int, ...] = (10, 4)
    seed: int = 0
    smoothness: tuple[str, ...] = ("tight", "loose")
    rhos: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 1.0, 2.5, 5.0, 10.0, 20.0)
    Nes: tuple[int, ...] = (1, 2, 5)
    radii: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)
    per_radius: int = 2
    restarts: int = 2
    steps: int = 4
    directions: int = 1
    lengths: tuple[float, ...] = (1.0, 10.0, 100.0)

    @classmethod
    def for_profile(cls, profile: str) -> JacobianConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", setups=("v2",), N=(3,), smoothness=("tight",), rhos=(0.1, 2.0),
                       Nes=(1, 2), radii=(1.0, 100.0), per_radius=1, steps=2)
        return cls()


def _units(config: JacobianConfig) -> list[str]:
    return [f"{setup}--{sm}" for setup in config.setups for sm in config.smoothness]


def _run_unit(config: JacobianConfig, unit: str) -> dict[str, Any]:
    from fedrepro.fedplt.checks.jacobian import (
        JacobianInstance,
        StateSampling,
        check_proposition1_logistic,
        max_jacobian_norm,
    )

    setup, smoothness = unit.split("--")
    N = config.N[config.setups.index(setup)]
    sampling = StateSampling(radii=config.radii, per_radius=config.per_radius, restarts=config.restarts,
                             steps=config.steps, directions=config.directions, lengths=config.lengths)
    shape = (len(config.rhos), len(config.Nes))
    out: dict[str, Any] = {"observed": np.full(shape, np.nan), "at_fixed_point": np.full(shape, np.nan),
                           "evaluations": np.zeros(shape, dtype=np.int64)}
    for v in VARIANTS:
        out[f"bound_{v}"] = np.full(shape, np.nan)
        out[f"applicable_{v}"] = np.zeros(shape, dtype=bool)
    for r, rho in enumerate(config.rhos):
        for e, Ne in enumerate(config.Nes):
            inst = JacobianInstance(setup=setup, N=N, seed=config.seed, smoothness=smoothness,
                                    rho=float(rho), Ne=int(Ne))
            search = max_jacobian_norm(inst, generator(config, unit, r, e), sampling)
            out["observed"][r, e] = search.max_norm
            out["at_fixed_point"][r, e] = search.at_fixed_point
            out["evaluations"][r, e] = search.evaluations
            for v in VARIANTS:
                res = check_proposition1_logistic(inst, v, search=search)
                out[f"bound_{v}"][r, e] = res.bound
                out[f"applicable_{v}"][r, e] = res.details["applicable"]
    problem = JacobianInstance(setup=setup, N=N, seed=config.seed, smoothness=smoothness).problem()
    out.update({"setup": setup, "smoothness": smoothness, "N": int(N), "n": int(problem.n),
                "lam": float(problem.lam), "lam_bar": float(problem.lam_bar)})
    return out


def load_jacobian(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`JacobianConfig` (``{"units": {setup--smoothness: ...},
    "rhos", "Nes"}``)."""
    config = JacobianConfig.for_profile(profile)
    result = run_units(config, _units(config), _run_unit, progress=False)
    result = dict(result)
    result["rhos"] = np.asarray(config.rhos, dtype=float)
    result["Nes"] = np.asarray(config.Nes, dtype=int)
    return result
