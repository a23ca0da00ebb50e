"""Runs of the page "Fed-PLT: the theory, checked" (statement checks): the stored results
``fedplt/theory-checks`` (:class:`ChecksConfig`), ``fedplt/theory-counterexamples``
(:class:`CounterexamplesConfig`), ``fedplt/theory-stability`` (:class:`StabilityConfig`),
``fedplt/theory-rate`` (:class:`RateConfig`), their run (unit, combine) functions and the
computing helpers those call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.theory.checks`, which re-exports these names.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core.cache import ExperimentConfig, load_or_run, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator
from fedrepro.experiments.fedplt.common import fit_rate
from fedrepro.experiments.fedplt.tolerances import RATE_FIT_NOTE, RATE_FIT_RTOL

#: ``(statement, variant, label)`` in the order of the chapter; ``variant`` is the printed
#: statement (``"paper"``, ``"agent"``) or a corrected/extended reading.
STATEMENT_ORDER: tuple[tuple[str, str, str], ...] = (
    ("lemma2", "paper", "Lemma 2"),
    ("eq11", "paper", "eq. (11), step range as printed"),
    ("lemma3", "paper", "Lemma 3"),
    ("lemma3", "v1", "Lemma 3, v1 as printed"),
    ("lemma4", "paper", "Lemma 4"),
    ("lemma5", "paper", "Lemma 5"),
    ("lemma6", "paper", "Lemma 6"),
    ("proposition1", "paper", "Proposition 1"),
    ("proposition1", "corrected", "Proposition 1, corrected"),
    ("lemma7", "paper", "Lemma 7"),
    ("lemma7", "corrected", "Lemma 7, corrected S"),
    ("lemma7-proof", "paper", "Lemma 7, proof step (Ne = 1, choice of gamma)"),
    ("proposition2", "paper", "Proposition 2"),
    ("proposition2", "corrected", "Proposition 2, corrected"),
    ("lemma8", "paper", "Lemma 8"),
    ("lemma8", "corrected", "Lemma 8, square-root form"),
    ("proposition3", "paper", "Proposition 3"),
    ("proposition3", "corrected", "Proposition 3, corrected"),
    ("proposition4", "agent", "Proposition 4 (released model)"),
    ("proposition4", "models", "Proposition 4, all final models"),
    ("proposition4", "state", "Proposition 4, final state (x, z)"),
    ("proposition4", "transcript", "Proposition 4, messages to the coordinator"),
    ("corollary1", "paper", "Corollary 1"),
    ("corollary1", "corrected", "Corollary 1, corrected"),
    ("corollary1-noise", "paper", "Corollary 1, noise step of the proof"),
)


#: Statements whose check is a Monte Carlo or a grid search (fewer instances).
_EXPENSIVE = {"lemma4": 1, "lemma5": 1, "lemma7": 1, "proposition2": 2, "corollary1": 2, "corollary1-noise": 2}


def _unit(statement: str, variant: str) -> str:
    return f"{statement}--{variant}"


def _plain_instance(instance: Any) -> dict[str, Any]:
    data = dataclasses.asdict(instance) if dataclasses.is_dataclass(instance) else dict(instance)
    return {k: (v if isinstance(v, (bool, int, float, str)) or v is None else repr(v)) for k, v in data.items()}


@dataclass(frozen=True)
class ChecksConfig(ExperimentConfig):
    """Random and adversarial search of every statement (:data:`STATEMENT_ORDER`).

    Per statement: ``random_count`` random instances (``random_count_expensive`` for the
    Monte Carlo and grid checks) and an adversarial search with ``adversarial`` =
    ``(samples, restarts, maxiter)`` (``adversarial_expensive`` likewise)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "theory-checks"
    verify_rtol: ClassVar[float] = 1e-6
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("result.units.*.adversarial_instance", None, None),
        ("result.units.*.adversarial_bound", None, None),
        ("result.units.*.adversarial_observed", None, None),
        ("result.units.*.adversarial_ratio", None, None),
        ("result.units.*.adversarial_evaluations", None, None),
        ("result.units.*.worst_random*", None, None),
        ("result.units.*.max_ratio", None, None),
        ("result.units.*.ratios", 1e-6, 5e-6),
    )
    verify_note: ClassVar[str] = (
        "the adversarial search (Nelder-Mead from random restarts) follows comparisons of ratios that "
        "are equal up to round-off where a statement is tight (every instance attains the bound), so the "
        "instance it ends on, its ratio and the maximal ratio depend on the BLAS kernel and are not "
        "compared; the verdicts, the failure counts and every random instance's ratio are. A ratio is read "
        "against 1 (observed / bound), so ratios are also allowed an absolute 5e-6: between the AVX2 and "
        "AVX-512 kernel families (`make verify-kernels`) a ratio of 0.0143 (Proposition 4, all final models) "
        "moved by 3.5e-7, 2.4e-5 of itself")

    profile: str = "paper"
    random_count: int = 300
    random_count_expensive: int = 60
    adversarial: tuple[int, int, int] = (24, 3, 40)
    adversarial_expensive: tuple[int, int, int] = (8, 1, 12)

    @classmethod
    def for_profile(cls, profile: str) -> ChecksConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", random_count=30, random_count_expensive=4,
                       adversarial=(6, 1, 6), adversarial_expensive=(2, 1, 0))
        return cls()


def _run_check_unit(config: ChecksConfig, unit: str) -> dict[str, Any]:
    from fedrepro.fedplt import checks

    name, variant = unit.split("--")
    cheap = name not in _EXPENSIVE
    count = config.random_count if cheap else config.random_count_expensive
    samples, restarts, maxiter = config.adversarial if cheap else config.adversarial_expensive
    rng = generator(config, name, "random")  # the same instances for every variant
    instances = checks.random_instances(name, count, rng)
    results = [checks.evaluate(name, inst, variant) for inst in instances]
    search = checks.adversarial_search(name, generator(config, name, "adversarial"), variant=variant,
                                       restarts=restarts, samples=samples, maxiter=maxiter)
    ratios = np.array([r.ratio for r in results], dtype=float)
    applicable = np.array([r.details.get("applicable", True) for r in results], dtype=bool)
    holds = np.array([r.holds for r in results], dtype=bool)
    rho = np.array([_plain_instance(i).get("rho", math.nan) for i in instances], dtype=float)
    finite = np.isfinite(ratios)
    worst_i = int(np.nanargmax(np.where(finite, ratios, -np.inf))) if finite.any() else -1
    worst = results[worst_i] if worst_i >= 0 else None
    adv = search.result
    all_ratios = np.concatenate([ratios[finite], [adv.ratio] if math.isfinite(adv.ratio) else []])
    return {
        "statement": name, "variant": variant,
        "ratios": ratios, "applicable": applicable, "holds": holds, "rho": rho,
        "n_random": int(count), "n_applicable": int(applicable.sum()), "n_fail": int((~holds).sum()),
        "worst_random": _plain_instance(instances[worst_i]) if worst is not None else {},
        "worst_random_observed": worst.observed if worst is not None else math.nan,
        "worst_random_bound": worst.bound if worst is not None else math.nan,
        "adversarial_instance": _plain_instance(search.instance),
        "adversarial_observed": adv.observed, "adversarial_bound": adv.bound, "adversarial_ratio": adv.ratio,
        "adversarial_holds": bool(adv.holds), "adversarial_evaluations": int(search.evaluations),
        "max_ratio": float(np.max(all_ratios)) if all_ratios.size else math.nan,
        "median_ratio": float(np.median(ratios[finite])) if finite.any() else math.nan,
        "holds_everywhere": bool(holds.all() and adv.holds),
    }


def load_checks(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ChecksConfig` (``{"units": {statement--variant: ...}}``)."""
    config = ChecksConfig.for_profile(profile)
    units = [_unit(s, v) for s, v, _ in STATEMENT_ORDER]
    return run_units(config, units, _run_check_unit, progress=False)


@dataclass(frozen=True)
class CounterexamplesConfig(ExperimentConfig):
    """The minimal counterexamples, and the curves the chapter draws for Lemma 8 and
    Proposition 4 (``K`` up to ``K_curve``)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "theory-counterexamples"

    profile: str = "paper"
    K_curve: int = 40
    ell_curve: int = 60
    kappas: tuple[float, ...] = (2.0, 10.0)

    @classmethod
    def for_profile(cls, profile: str) -> CounterexamplesConfig:
        check_profile(profile)
        return cls(profile="quick", K_curve=12, ell_curve=30) if profile == "quick" else cls()


def _result_dict(res) -> dict[str, Any] | None:
    if res is None:
        return None
    return {"observed": res.observed, "bound": res.bound, "ratio": res.ratio, "holds": res.holds}


def _run_counterexamples(config: CounterexamplesConfig) -> dict[str, Any]:
    from fedrepro.fedplt import checks
    from fedrepro.fedplt.checks import counterexamples as ce

    out: dict[str, Any] = {}
    makers = dict(ce.COUNTEREXAMPLES)
    makers["proposition4-state"] = lambda: ce.counterexample_proposition4("state")
    for name, make in makers.items():
        c = make()
        out[name] = {"statement": c.statement, "instance": _plain_instance(c.instance),
                     "paper": _result_dict(c.paper), "corrected": _result_dict(c.corrected), "note": c.note}
    # Lemma 8: worst case over h of the u and w sequences against both bounds
    for kappa in config.kappas:
        U, W = checks.agd_worst_case(kappa, config.ell_curve)
        ell = np.arange(config.ell_curve + 1)
        out[f"lemma8-curve-{kappa:g}"] = {
            "ell": ell, "u": U, "w": W,
            "paper": np.array([ops.agd_contraction(int(e), kappa) for e in ell]),
            "sqrt": np.array([ops.agd_contraction_sqrt(int(e), kappa) for e in ell]),
        }
    # Proposition 4: divergence against K for every view, on the counterexample's instance with rho = 10
    base = checks.Proposition4Instance(N=3, n=1, q=1, r=1.0, rho=10.0, Ne=2, K=1, tau=1.0, theta=0.5)
    Ks = np.arange(1, config.K_curve + 1)
    curves = {view: [] for view in checks.PRIVACY_VIEWS}
    bound = []
    for K in Ks:
        inst = dataclasses.replace(base, K=int(K))
        for view in checks.PRIVACY_VIEWS:
            res = checks.check_proposition4(inst, view)
            curves[view].append(res.observed)
        bound.append(res.bound)
    out["proposition4-formula"] = proposition4_formula_properties()
    out["proposition4-curve"] = {"K": Ks, "bound": np.array(bound), "instance": _plain_instance(base),
                                 **{view: np.array(v) for view, v in curves.items()}}
    return out


def proposition4_formula_properties(alpha: float = 2.0, L: float = 1.0, lam: float = 0.5, lam_bar: float = 2.0,
                                    tau: float = 1.0, q: int = 250, rho: float = 1.0,
                                    delta: float = 1e-5) -> dict[str, Any]:
    """Properties of Proposition 4's bound as a formula (v2 claims of §I and §VI).

    On ``K`` in ``{1, 10, ..., 1e6}``, ``Ne = 1..100`` and ``gamma = theta 2/(lam_bar + 1/rho)``,
    ``theta`` in ``{0.1, 0.5, 0.99}``: strictly increasing in ``Ne`` wherever double precision
    resolves it (the bound below its limit by more than ``1e-9`` relative), a function of
    ``K Ne`` only, never above its limit; and the ADP epsilon (Lemma 5) non-decreasing in ``K``
    and ``Ne`` and converging to its limit."""
    from fedrepro.fedplt.privacy_bounds import lemma5_rdp_to_dp, proposition4_limit, proposition4_rdp_bound

    Ks = [10 ** j for j in range(7)]
    Nes = list(range(1, 101))
    limit = proposition4_limit(alpha, L, lam, tau, q)
    increasing, product, below, adp_inc, converges = True, True, True, True, True
    max_frac = 0.0
    for theta in (0.1, 0.5, 0.99):
        gamma = theta * ops.max_local_step(rho, lam, lam_bar)
        table = np.array([[proposition4_rdp_bound(alpha, L, lam, tau, q, gamma, K, Ne) for Ne in Nes] for K in Ks])
        unsaturated = (limit - table[:, 1:]) > 1e-9 * limit  # where double precision can still resolve
        increasing &= bool(np.all(np.diff(table, axis=1)[unsaturated] > 0))
        # K * Ne equal: (K=10, Ne=10) against (K=100, Ne=1) and (K=1, Ne=100)
        a, b, c = table[1, 9], table[2, 0], table[0, 99]
        product &= bool(abs(a - b) <= 1e-12 * a and abs(a - c) <= 1e-12 * a)
        below &= bool(np.all(table <= limit * (1 + 1e-12)))
        max_frac = max(max_frac, float(table.max() / limit))
        adp = np.array([[lemma5_rdp_to_dp(v, alpha, delta) for v in row] for row in table])
        adp_inc &= bool(np.all(np.diff(adp, axis=0) >= 0) and np.all(np.diff(adp, axis=1) >= 0))
        adp_limit = limit + math.log(1 / delta) / (alpha - 1)
        converges &= bool(abs(adp[-1, -1] - adp_limit) <= 1e-9 * adp_limit and np.all(adp <= adp_limit * (1 + 1e-12)))
    return {"increasing_in_Ne": increasing, "depends_on_K_times_Ne": product, "below_limit": below,
            "max_fraction_of_limit": max_frac, "adp_increasing": adp_inc, "adp_converges": converges}


def load_counterexamples(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`CounterexamplesConfig`."""
    return load_or_run(CounterexamplesConfig.for_profile(profile), _run_counterexamples)


@dataclass(frozen=True)
class StabilityConfig(ExperimentConfig):
    """Lemma 7: agreement of the closed-form stability condition (and of the printed one)
    with the eigenvalues on ``draws`` random ``(zeta, a, c)``; and the regions
    ``rho(S) < 1`` and ``||S|| < 1`` over ``(rho, Ne)`` at the default step, for the moduli of
    the v2 logistic problem (data seed 0, the experiments' loose smoothness)."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "theory-stability"

    profile: str = "paper"
    draws: int = 20000
    n_rho: int = 61
    Ne_max: int = 40

    @classmethod
    def for_profile(cls, profile: str) -> StabilityConfig:
        check_profile(profile)
        return cls(profile="quick", draws=2000, n_rho=21, Ne_max=20) if profile == "quick" else cls()


def _v2_moduli() -> tuple[float, float, float]:
    from fedrepro.problems import logistic_v2

    p = logistic_v2(convex=True, seed=0)
    tight = float(np.max(p.lam_bar_i_tight)) if hasattr(p, "lam_bar_i_tight") else p.lam_bar
    return p.lam, p.lam_bar, tight


def _run_stability(config: StabilityConfig) -> dict[str, Any]:
    from fedrepro.fedplt.checks import lemma7_condition_agreement

    agreement = lemma7_condition_agreement(config.draws, generator(config, "agreement"))
    lam, lam_bar, lam_bar_tight = _v2_moduli()
    rhos = np.logspace(-2, 2, config.n_rho)
    Nes = np.arange(1, config.Ne_max + 1)
    out: dict[str, Any] = {"agreement": agreement, "lam": lam, "lam_bar": lam_bar, "lam_bar_tight": lam_bar_tight,
                           "rho": rhos, "Ne": Nes}
    for corrected in (False, True):
        radius = np.empty((rhos.size, Nes.size))
        norm = np.empty_like(radius)
        for r, rho in enumerate(rhos):
            theta = ops.default_local_step(rho, lam, lam_bar) / ops.max_local_step(rho, lam, lam_bar)
            grid = ops.stabilising_parameters(lam, lam_bar, [rho], Nes, [theta], corrected=corrected)
            radius[r] = grid.radius[0, :, 0]
            norm[r] = grid.norm[0, :, 0]
        key = "corrected" if corrected else "paper"
        out[f"radius_{key}"] = radius
        out[f"norm_{key}"] = norm
    one_step = [ops.gd_one_step_threshold(rho, lam, lam_bar, corrected=True) for rho in rhos]
    out["one_step_chi_min"] = np.array([o["chi_min"] for o in one_step])
    out["one_step_threshold"] = np.array([o["threshold"] for o in one_step])
    return out


def load_stability(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`StabilityConfig`."""
    return load_or_run(StabilityConfig.for_profile(profile), _run_stability)


@dataclass(frozen=True)
class RateConfig(ExperimentConfig):
    """``||S||`` (printed and corrected) and ``rho(S)`` against the empirical rate of Fed-PLT
    (GD, default step, full participation, ``x_0 = z_0 = 0``) on the v2 convex logistic
    problem (data seed 0, ``N`` agents; the experiments' loose smoothness constant), for
    every ``(rho, Ne)`` of the grid; ``K`` iterations at most."""

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "theory-rate"
    verify_rtol: ClassVar[float] = RATE_FIT_RTOL
    verify_note: ClassVar[str] = RATE_FIT_NOTE

    profile: str = "paper"
    N: int = 100
    rhos: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0, 10.0)
    Nes: tuple[int, ...] = (1, 2, 5, 10, 20)
    K: int = 400

    @classmethod
    def for_profile(cls, profile: str) -> RateConfig:
        check_profile(profile)
        return cls(profile="quick", N=20, rhos=(0.3, 1.0), Nes=(1, 5), K=200) if profile == "quick" else cls()


def _run_rate(config: RateConfig) -> dict[str, Any]:
    from fedrepro.fedplt.algorithm import run_fedplt
    from fedrepro.problems import logistic_v2

    problem = logistic_v2(convex=True, seed=0, N=config.N)
    lam, lam_bar = problem.lam, problem.lam_bar
    lam_bar_tight = float(np.max(problem.lam_bar_i_tight))
    shape = (len(config.rhos), len(config.Nes))
    rate_xz, rate_x, S_paper, S_corr, radius_paper, radius_corr, S_tight = (np.full(shape, np.nan) for _ in range(7))
    for r, rho in enumerate(config.rhos):
        gamma = ops.default_local_step(rho, lam, lam_bar)
        chi = ops.local_gd_contraction(gamma, rho, lam, lam_bar)
        for e, Ne in enumerate(config.Nes):
            run = run_fedplt(problem, rho=rho, Ne=int(Ne), K=config.K, solver="gd", gamma=gamma,
                             record=("x_err", "xz_err"))
            rate_xz[r, e] = fit_rate(run.xz_err)
            rate_x[r, e] = fit_rate(run.x_err)
            Sp = ops.matrix_S(rho, int(Ne), lam, lam_bar, chi)
            Sc = ops.matrix_S(rho, int(Ne), lam, lam_bar, chi, corrected=True)
            S_paper[r, e], S_corr[r, e] = ops.spectral_norm(Sp), ops.spectral_norm(Sc)
            # the same step with the tight smoothness constant (also valid in Proposition 1)
            chi_t = ops.local_gd_contraction(gamma, rho, lam, lam_bar_tight)
            S_tight[r, e] = ops.spectral_norm(ops.matrix_S(rho, int(Ne), lam, lam_bar_tight, chi_t, corrected=True))
            radius_paper[r, e], radius_corr[r, e] = ops.spectral_radius(Sp), ops.spectral_radius(Sc)
    zeta = np.array([ops.prs_contraction(rho, lam, lam_bar) for rho in config.rhos])
    return {"rho": np.array(config.rhos), "Ne": np.array(config.Nes), "lam": lam, "lam_bar": lam_bar,
            "lam_bar_tight": lam_bar_tight, "S_norm_corrected_tight": S_tight,
            "rate_xz": rate_xz, "rate_x": rate_x, "S_norm_paper": S_paper, "S_norm_corrected": S_corr,
            "S_radius_paper": radius_paper, "S_radius_corrected": radius_corr, "zeta": zeta}


def load_rate(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`RateConfig`."""
    return load_or_run(RateConfig.for_profile(profile), _run_rate)
