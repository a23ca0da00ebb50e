"""Runs of the page "Fed-PLT: exact worst-case rates": the stored results
``fedplt/worst-case-grid`` (:class:`GridConfig`), ``fedplt/worst-case-validation``
(:class:`ValidationConfig`), their run (unit, combine) functions and the computing helpers those
call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.worst_case.experiments`, which re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator

#: The SDP tolerance note stored with every result (see :mod:`fedrepro.fedplt.checks.pep`).
SDP_NOTE = ("Clarabel through cvxpy (PEPit 0.5.1) at its default tolerances (gap and feasibility 1e-8); "
            "one-agent rates to 1e-5 relative (RATE_RTOL), N = 2, 3 and rebuilt worst cases to 1e-3 (ATTAINED_RTOL)")


def _log_grid(lo: float, hi: float, count: int) -> tuple[float, ...]:
    return tuple(float(f"{v:.4g}") for v in np.logspace(lo, hi, count))


def v2_moduli() -> tuple[float, float]:
    """``(lam, lam_bar)`` of the convex v2 logistic problem (data seed 0, ``N = 100``), the
    loose smoothness constant the experiments use."""
    from fedrepro.problems.logistic import logistic_v2

    p = logistic_v2(convex=True, seed=0)
    return float(p.lam), float(p.lam_bar)


@dataclass(frozen=True)
class GridConfig(ExperimentConfig):
    """Exact rates on ``rhos`` x ``Nes`` x ``solvers`` (``N = 1`` agent, which
    :class:`ValidationConfig` shows gives the value of ``N = 2, 3``), with ``rounds``-round
    rates for ``N_e`` in ``rounds_Nes`` (their SDP grows with ``rounds * N_e`` iterates, and
    PEPit's model building with its square), ``quad_draws`` random quadratic instances (``N = 2``, ``n = 2``) per point, exact
    PRS on ``rhos``, and the worst-case-optimal ``rho`` for every ``N_e`` in ``best_Nes``
    (bounded search on ``log10 rho`` in the grid's range to ``best_xatol``)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "worst-case-grid"
    verify_rtol: ClassVar[float] = 5e-4
    verify_atol: ClassVar[float] = 1e-8
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("result.units.best-*.best_rho", 0.025, 0.0),
    )
    verify_note: ClassVar[str] = (
        "interior-point SDP solutions: the rates follow the CPU's kernels beyond Clarabel's 1e-8 on the value "
        "(measured between the AVX2 and AVX-512 kernel families, `make verify-kernels`: 2.2e-5 relative, AGD, "
        "N_e = 10), so they are compared to 5e-4; the worst-case-optimal rho ends a bounded search to 0.01 in "
        "log10 rho and is compared to that accuracy (10^0.01 - 1 < 0.025 relative)")

    profile: str = "paper"
    rhos: tuple[float, ...] = _log_grid(-1.5, 1.5, 15)
    Nes: tuple[int, ...] = (1, 2, 5, 10)
    solvers: tuple[str, ...] = ("gd", "agd")
    rounds: int = 3
    rounds_Nes: tuple[int, ...] = (1, 2)
    quad_draws: int = 8
    best_Nes: tuple[int, ...] = (1, 2, 5, 8, 10)
    best_xatol: float = 0.01

    @classmethod
    def for_profile(cls, profile: str) -> GridConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", rhos=(0.3, 1.0, 3.0), Nes=(1, 5), rounds=2, rounds_Nes=(1,), quad_draws=2,
                       best_Nes=(1, 5), best_xatol=0.05)
        return cls()


def grid_units(config: GridConfig) -> list[str]:
    """Unit names: ``"<solver>-<Ne>"``, ``"prox"``, ``"best-<solver>"``."""
    units = [f"{s}-{Ne}" for s in config.solvers for Ne in config.Nes]
    return units + ["prox"] + [f"best-{s}" for s in config.solvers]


def _bounds(inst) -> dict[str, float]:
    """``||S||`` printed and corrected, and ``rho(S)`` corrected (Proposition 1 for GD,
    Proposition 3's ``S'`` for AGD; corrected as in :func:`fedrepro.fedplt.checks.pep.proposition_bound`)."""
    from fedrepro.fedplt.checks import pep

    lam, lam_bar, rho = inst.lam, inst.lam_bar, inst.rho
    zeta = ops.prs_contraction(rho, lam, lam_bar)
    if inst.solver == "gd":
        a = ops.local_gd_contraction(inst.step, rho, lam, lam_bar) ** inst.Ne
    elif inst.solver == "agd":
        a = ops.agd_output_contraction(inst.Ne, ops.local_condition_number(rho, lam, lam_bar))
    else:
        a = 0.0
    S_corr = ops.matrix_S_from(a, zeta, ops.coupling_constant(rho, lam, True))
    return {"S_paper": pep.proposition_bound(inst, corrected=False), "S_corrected": ops.spectral_norm(S_corr),
            "S_radius": ops.spectral_radius(S_corr), "zeta": zeta}


def _run_grid_unit(config: GridConfig, unit: str) -> dict[str, Any]:
    from fedrepro.fedplt.checks import pep

    lam, lam_bar = v2_moduli()
    rhos = np.asarray(config.rhos, dtype=float)
    if unit.startswith("best-"):
        from scipy.optimize import minimize_scalar

        solver = unit.split("-", 1)[1]
        best_rho, best_rate = [], []
        for Ne in config.best_Nes:
            def rate(t, Ne=Ne):
                return pep.worst_case_rate(pep.PEPInstance(lam, lam_bar, float(10 ** t), int(Ne), solver)).rate
            res = minimize_scalar(rate, bounds=(math.log10(rhos[0]), math.log10(rhos[-1])), method="bounded",
                                  options={"xatol": config.best_xatol})
            best_rho.append(float(10 ** res.x))
            best_rate.append(float(res.fun))
        return {"solver": solver, "Ne": np.array(config.best_Nes), "best_rho": np.array(best_rho),
                "best_rate": np.array(best_rate)}
    if unit == "prox":
        out: dict[str, list[float]] = {k: [] for k in ("pep_z", "pep_xz", "zeta", "S_paper", "S_corrected")}
        for rho in rhos:
            z_inst = pep.PEPInstance(lam, lam_bar, float(rho), 1, "prox", N=2, norm="z")
            xz_inst = pep.PEPInstance(lam, lam_bar, float(rho), 1, "prox", N=2)
            out["pep_z"].append(pep.worst_case_rate(z_inst).rate)
            out["pep_xz"].append(pep.worst_case_rate(xz_inst).rate)
            b = _bounds(xz_inst)
            out["zeta"].append(b["zeta"])
            out["S_paper"].append(b["S_paper"])
            out["S_corrected"].append(b["S_corrected"])
        return {"rho": rhos, **{k: np.array(v) for k, v in out.items()}}
    solver, Ne = unit.split("-")
    Ne = int(Ne)
    rng = generator(config, unit, "quadratics")
    keys = ("pep", "pep_primal", "pep_rounds", "S_paper", "S_corrected", "S_radius", "zeta", "quad_max")
    out = {k: [] for k in keys}
    for rho in rhos:
        inst = pep.PEPInstance(lam, lam_bar, float(rho), Ne, solver)
        r1 = pep.worst_case_rate(inst)
        rK = (pep.worst_case_rate(pep.PEPInstance(lam, lam_bar, float(rho), Ne, solver, rounds=config.rounds)).rate
              if Ne in config.rounds_Nes else math.nan)
        out["pep"].append(r1.rate)
        out["pep_primal"].append(r1.rate_primal)
        out["pep_rounds"].append(rK)
        for k, v in _bounds(inst).items():
            out[k].append(v)
        q_inst = pep.PEPInstance(lam, lam_bar, float(rho), Ne, solver, N=2)
        out["quad_max"].append(max(pep.quadratic_contraction(q_inst, 2, rng) for _ in range(config.quad_draws)))
    return {"solver": solver, "Ne": Ne, "rho": rhos, "lam": lam, "lam_bar": lam_bar,
            **{k: np.array(v) for k, v in out.items()}}


def load_grid(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`GridConfig` (``{"units": {unit: ...}}``)."""
    config = GridConfig.for_profile(profile)
    res = run_units(config, grid_units(config), _run_grid_unit, progress=False)
    return {**res, "config": {"rhos": config.rhos, "Nes": config.Nes, "solvers": config.solvers,
                              "rounds": config.rounds, "rounds_Nes": config.rounds_Nes, "sdp": SDP_NOTE}}


@dataclass(frozen=True)
class ValidationConfig(ExperimentConfig):
    """Both directions of the validation: ``quadratics`` random quadratic and ``logistics``
    random logistic instances (measured contraction <= PEP); the worst case fed back to the
    implementation at ``attained`` points ``(solver, Ne, rho, N, rounds)``; ``N = 1, 2, 3`` at
    the ``agents`` points ``(solver, Ne, rho)``; the PEP at the theory chapter's simulated
    points ``theory_rhos`` x ``theory_Nes`` (GD, default step, its ``RateConfig``)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "worst-case-validation"
    verify_rtol: ClassVar[float] = 2e-3
    verify_atol: ClassVar[float] = 1e-8
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("result.units.attained.interpolation_violation", 0.0, 1e-6),
    )
    verify_note: ClassVar[str] = (
        "interior-point SDP and QP solutions (the worst case is rebuilt from a factored Gram matrix): measured "
        "between the AVX2 and AVX-512 kernel families (`make verify-kernels`), the PEP rates at the theory "
        "chapter's points (up to N_e = 20) differ by 2.0e-4 relative, so rates are compared to 2e-3; the "
        "interpolation violation is a residual at the solvers' tolerance (7.8e-8 apart) and is compared "
        "in absolute terms, to 1e-6")

    profile: str = "paper"
    quadratics: int = 60
    logistics: int = 20
    logistic_states: int = 24
    attained: tuple[tuple[str, int, float, int, int], ...] = (
        ("gd", 1, 1.0, 2, 1), ("gd", 5, 0.3, 2, 1), ("gd", 10, 3.0, 1, 1),
        ("agd", 2, 1.0, 2, 1), ("agd", 10, 3.0, 1, 1), ("gd", 2, 1.0, 2, 3))
    agents: tuple[tuple[str, int, float], ...] = (
        ("gd", 1, 1.0), ("gd", 5, 0.3), ("gd", 10, 3.0), ("agd", 2, 1.0), ("agd", 5, 10.0))
    theory_rhos: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0)
    theory_Nes: tuple[int, ...] = (1, 2, 5, 10, 20)

    @classmethod
    def for_profile(cls, profile: str) -> ValidationConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", quadratics=6, logistics=2, logistic_states=6,
                       attained=(("gd", 2, 1.0, 2, 1),), agents=(("gd", 2, 1.0),),
                       theory_rhos=(0.3, 1.0), theory_Nes=(1, 5))
        return cls()


VALIDATION_UNITS = ("quadratic", "logistic", "attained", "agents", "theory-points")


def _random_setting(rng: np.random.Generator) -> dict[str, Any]:
    solver = ("gd", "agd")[int(rng.integers(2))]
    return {"solver": solver, "Ne": int(rng.choice([1, 2, 3, 5])), "rho": float(10 ** rng.uniform(-1.5, 1.5)),
            "N": int(rng.integers(1, 3)), "theta": float(rng.uniform(0.2, 0.99)) if solver == "gd" else None}


def _run_validation_unit(config: ValidationConfig, unit: str) -> dict[str, Any]:
    from fedrepro.fedplt.checks import pep

    rng = generator(config, unit)
    if unit in ("quadratic", "logistic"):
        rows = []
        count = config.quadratics if unit == "quadratic" else config.logistics
        for _ in range(count):
            s = _random_setting(rng)
            if unit == "quadratic":
                lam = float(rng.uniform(0.1, 1.0))
                lam_bar = lam * float(10 ** rng.uniform(0.3, 1.5))
                problem = None
            else:
                from fedrepro.problems.logistic import logistic_v2

                problem = logistic_v2(convex=True, N=s["N"], n=2, q=20, rng=rng)
                lam, lam_bar = problem.lam, problem.lam_bar
            gamma = None if s["theta"] is None else s["theta"] * ops.max_local_step(s["rho"], lam, lam_bar)
            inst = pep.PEPInstance(lam, lam_bar, s["rho"], s["Ne"], s["solver"], gamma=gamma, N=s["N"])
            if unit == "quadratic":
                measured = pep.quadratic_contraction(inst, int(rng.integers(2, 4)), rng)
            else:
                measured = pep.logistic_contraction(inst, problem, rng, states=config.logistic_states)
            res = pep.check_measured_below(inst, measured)
            rows.append({"solver": s["solver"], "Ne": s["Ne"], "rho": s["rho"], "N": s["N"], "lam": lam,
                         "lam_bar": lam_bar, "gamma": math.nan if gamma is None else gamma,
                         "measured": res.observed, "pep": res.bound, "holds": res.holds})
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}
    lam, lam_bar = v2_moduli()
    if unit == "attained":
        rows = []
        for solver, Ne, rho, N, K in config.attained:
            res = pep.check_worst_case_attained(pep.PEPInstance(lam, lam_bar, rho, Ne, solver, N=N, rounds=K))
            rows.append({"solver": solver, "Ne": Ne, "rho": rho, "N": N, "rounds": K, "implementation": res.observed,
                         "pep": res.bound, "primal": res.details["rate_primal"], "agree": res.details["agree"],
                         "dimension": res.details["dimension"],
                         "interpolation_violation": res.details["interpolation_violation"]})
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}
    if unit == "agents":
        rates = np.array([[pep.worst_case_rate(pep.PEPInstance(lam, lam_bar, rho, Ne, solver, N=N)).rate
                           for N in (1, 2, 3)] for solver, Ne, rho in config.agents])
        return {"points": [list(p) for p in config.agents], "N": np.array([1, 2, 3]), "rates": rates}
    if unit == "theory-points":
        rates = np.array([[pep.worst_case_rate(pep.PEPInstance(lam, lam_bar, rho, Ne, "gd")).rate
                           for Ne in config.theory_Nes] for rho in config.theory_rhos])
        return {"rho": np.array(config.theory_rhos), "Ne": np.array(config.theory_Nes), "pep": rates}
    raise ValueError(f"unknown unit {unit!r}; expected one of {VALIDATION_UNITS}")


def load_validation(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ValidationConfig` (``{"units": {unit: ...}}``)."""
    return run_units(ValidationConfig.for_profile(profile), list(VALIDATION_UNITS), _run_validation_unit,
                     progress=False)
