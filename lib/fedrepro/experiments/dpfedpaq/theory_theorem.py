"""Stored experiment :class:`TheoremConfig`: Theorem 1 against measurement — the synthetic ridge
problem (E ∈ {1, 5, 10} × quantization × noise × three readings of the theorem), the isotropic
counterexample to eq. (18) as printed, MNIST (x*, constants, the bound against a run under the
theory's step sizes) and λ² on HET_MNIST(n) (claim C11).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator, seed_sequence
from fedrepro.experiments.dpfedpaq.theory_common import SYNTHETIC_E, SYNTHETIC_S, lemma_setup, row

__all__ = ["TheoremConfig", "load_theorem", "theorem_units"]


# =========================================================================== Theorem 1


@dataclass(frozen=True)
class TheoremConfig(ExperimentConfig):
    """Theorem 1 against measurement: synthetic runs (T local iterations, ``trials`` Monte
    Carlo runs each), the isotropic counterexample (``iso_T``, ``iso_trials``, μ values) and
    MNIST (``mnist_rounds`` under the theory's step sizes; ``mnist_per_device`` None: all)."""

    part: ClassVar[str] = "dpfedpaq"
    experiment: ClassVar[str] = "theory-theorem1"
    verify_rtol: ClassVar[float] = 1e-5
    verify_note: ClassVar[str] = ("Monte Carlo means, L-BFGS and float32 local steps: BLAS kernels move the "
                                  "last digits; the gradient norm left at x* is L-BFGS's stopping residual, "
                                  "compared only to 1e-5 (it moved by 1e-9 between one and two BLAS threads)")
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("result.units.mnist.constants.grad_norm_at_x_star", 0.0, 1e-5),
    )
    # about two minutes in full, most of it the MNIST, isotropic and heterogeneity units: make
    # verify recomputes three units (fedrepro.core.verify.SPOT_UNITS)
    verify_units: ClassVar[int | None] = 3

    profile: str = "paper"
    E_values: tuple[int, ...] = SYNTHETIC_E
    #: ε of the synthetic noisy runs: at ε = 1 the noise drives the iterates of E = 10 out of
    #: the ball on which the constants hold (the theorem's hypotheses fail there); ε = 8 keeps
    #: them inside (the privacy term is still the largest term of the bound)
    synthetic_epsilon: float = 8.0
    T: int = 4000
    trials: int = 20
    n: int = 2000
    iso_T: int = 2000
    iso_trials: int = 50
    iso_mus: tuple[float, ...] = (0.5, 0.05, 0.01)
    mnist_per_device: int | None = None
    mnist_devices: int = 100
    mnist_rounds: int = 100
    mnist_gtol: float = 1e-5
    mnist_snapshots: tuple[int, ...] = (5, 20, 50)
    het_digits: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    het_rounds: int = 20

    @classmethod
    def for_profile(cls, profile: str) -> TheoremConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", E_values=(1, 10), T=200, trials=4, n=200, iso_T=200, iso_trials=8,
                       mnist_per_device=30, mnist_devices=20, mnist_rounds=2, mnist_gtol=1e-3,
                       mnist_snapshots=(2,), het_digits=(1, 2, 10), het_rounds=2)
        return cls()


def theorem_units(cfg: TheoremConfig) -> list[str]:
    from fedrepro.dpfedpaq.checks.theorem import READINGS

    units = [f"synthetic--E{E}--s{s or 0}--{'noise' if noisy else 'clean'}--{v}-{r}"
             for E in cfg.E_values for s in SYNTHETIC_S for noisy in (False, True) for v, r in READINGS]
    # the three long units first: the workers take units in this order, and a long unit
    # started last would run alone while the other worker idles
    return ["mnist", "heterogeneity", "isotropic"] + units


def _theorem_synthetic(cfg: TheoremConfig, unit: str) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import theorem as th

    _, e_part, s_part, noise, reading = unit.split("--")
    E, s = int(e_part[1:]), int(s_part[1:]) or None
    variant, rule = reading.split("-")
    p, radius = lemma_setup(cfg.n, generator(cfg, "problem"))  # one problem for every unit
    eps = cfg.synthetic_epsilon if noise == "noise" else None
    c, k = th.theorem_constants(p, radius, E=E, M=10, b=1, s=s, epsilon=eps)
    res = th.check_theorem1(p, c, radius, k["G"], T=cfg.T, trials=cfg.trials, s=s, reading=(variant, rule),
                            rng=generator(cfg, unit))
    return {"E": E, "s": s, "noise": eps is not None, "variant": variant, "rule": rule,
            **row("theorem", f"Theorem 1, {variant}, gamma0 '{rule}'",
                   f"E={E}, s={s or 'none'}, noise={noise}", res,
                   applicable=res.details["applicable"], paper_claims=variant == "as_printed"),
            "se": res.details["se"], "gamma0": res.details["gamma0"],
            "max_dist_over_radius": res.details["max_dist_over_radius"],
            "rounds": res.details["rounds"], "measured": res.details["measured"], "bounds": res.details["bounds"],
            "constants": k}


def _theorem_isotropic(cfg: TheoremConfig) -> dict[str, Any]:
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.dpfedpaq.checks import synthetic as sy
    from fedrepro.dpfedpaq.checks import theorem as th

    out = []
    n = 1000
    for mu in cfg.iso_mus:
        p = sy.isotropic_problem(20, n, 10, mu)
        radius = 2.0
        c, k = th.theorem_constants(p, radius, E=1, M=20, b=10, s=None, epsilon=1.0)
        x0 = np.ones(10) / math.sqrt(10)
        rng = generator(cfg, "isotropic", int(round(mu * 1e6)))
        for reading in (("as_printed", "printed"), ("corrected", "paper")):
            res = th.check_theorem1(p, c, radius, k["G"], T=cfg.iso_T, trials=cfg.iso_trials, s=None,
                                    reading=reading, rng=rng, x0=x0)
            out.append({"mu": mu, **row("theorem", f"Theorem 1, {reading[0]}", f"isotropic, mu={mu}", res,
                                        applicable=res.details["applicable"],
                                        paper_claims=reading[0] == "as_printed"),
                        "se": res.details["se"], "gamma0": res.details["gamma0"],
                        "privacy_term": t.theorem1_bound(c, cfg.iso_T, 1.0, variant=reading[0]).terms["privacy"],
                        "max_dist_over_radius": res.details["max_dist_over_radius"],
                        "rounds": res.details["rounds"], "measured": res.details["measured"],
                        "bounds": res.details["bounds"]})
    return {"rows": out}


def _theorem_mnist(cfg: TheoremConfig) -> dict[str, Any]:
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.dpfedpaq.algorithms import learning_rate, private_batch_sizes, private_fedpaq
    from fedrepro.dpfedpaq.mnist import het_mnist_problem
    from fedrepro.dpfedpaq.quantizer import variance_parameter
    from fedrepro.problems.softmax import gradient_constants, smoothness_constants, solve_optimum

    P = het_mnist_problem(2, n_devices=cfg.mnist_devices, per_device=cfg.mnist_per_device, with_test=False)
    xs, info = solve_optimum(P, gtol=cfg.mnist_gtol)
    sm = smoothness_constants(P)
    E, M, C, eps = 10, 10, 1.0, 1.0
    gamma = max(0.2, E / float(P.sizes.min()))  # b_i >= 1 on the quick profile's small devices
    b_all = private_batch_sizes(P.sizes, gamma, E)
    b, n = int(b_all.min()), int(P.sizes.min())
    # reference points of spec §7.5: x0, x*, and snapshots of a run of the experiments' schedule
    snaps = [np.zeros((785, 10)), xs]
    for K in cfg.mnist_snapshots:
        snaps.append(private_fedpaq(P, rounds=K, local_steps=E, m_per_round=M, epsilon=None, sample_ratio=gamma,
                                    seed=seed_sequence(cfg, "mnist", "snap", K), eval_rounds=[K]).x)
    gc = gradient_constants(P, snaps, b)
    c = t.Theorem1Constants(L=sm["L_max"], mu=P.mu, sigma2=gc["sigma2"], G2=C**2, lam2=gc["lambda2"],
                            q=variance_parameter(P.dim, 10), d=P.dim, b=b, n=n, N=P.n_devices, M=M, E=E,
                            epsilon=eps)
    x0d = float(np.sum(xs**2))
    K = cfg.mnist_rounds
    out = {"constants": {"L_max": sm["L_max"], "L_sample": sm["L_sample"], "L_global": sm["L_global"],
                         "mu": P.mu, "kappa": sm["kappa"], "sigma2": gc["sigma2"], "G2_vanilla": gc["G2"],
                         "G2": C**2, "lambda2": gc["lambda2"], "q": c.q, "b": b, "n": n, "x_star_norm2": x0d,
                         "grad_norm_at_x_star": info["grad_norm"]},
           "readings": []}
    for variant, rule in (("as_printed", "printed"), ("corrected", "paper"), ("corrected", "relaxed")):
        g0 = t.lr_offset(c, rule)
        bound = (t.theorem1_bound(c, K * E, x0d, variant="as_printed") if variant == "as_printed"
                 else t.closed_form_bound(c, K, x0d, g0, "corrected"))
        lr0 = 4.0 / (c.mu * g0)
        hist = private_fedpaq(P, rounds=K, local_steps=E, m_per_round=M, sample_ratio=gamma, clip=C, epsilon=eps,
                              sensitivity_mode="theory", calibration="paper", q_levels=10, lr0=lr0,
                              decay_iters=g0, seed=seed_sequence(cfg, "mnist", rule), eval_rounds=[0, K])
        measured = float(np.sum((hist.x - xs) ** 2))
        out["readings"].append({"variant": variant, "rule": rule, "gamma0": g0, "lr0": lr0,
                                "lr_last": float(learning_rate(K - 1, E, lr0, g0)),
                                "bound": bound.total, "terms": bound.terms, "measured": measured,
                                "loss_start": float(hist.loss[0]), "loss_end": float(hist.loss[-1]),
                                "orders": math.log10(bound.total / measured) if measured > 0 else math.inf})
    # the experiments' schedule (η0 = 0.1, τ = 100): not covered by the theorem, measured for scale
    hist = private_fedpaq(P, rounds=K, local_steps=E, m_per_round=M, sample_ratio=gamma, clip=C, epsilon=None,
                          q_levels=10, seed=seed_sequence(cfg, "mnist", "experiments"), eval_rounds=[K])
    out["experiments_schedule_distance"] = float(np.sum((hist.x - xs) ** 2))
    return out


def _theorem_heterogeneity(cfg: TheoremConfig) -> dict[str, Any]:
    """λ² (Assumption 5) on HET_MNIST(n) for each n in ``het_digits``: the maximum over x0 = 0
    and the FedAvg iterates after ``het_rounds``/2 and ``het_rounds`` rounds (spec §7.5); also
    σ² at the same points (its mini-batch variance σ²/64 is the scale of "close to 0")."""
    from fedrepro.dpfedpaq.algorithms import fedpaq
    from fedrepro.dpfedpaq.mnist import het_mnist_problem
    from fedrepro.problems.softmax import gradient_constants

    out = []
    for nd in cfg.het_digits:
        P = het_mnist_problem(nd, n_devices=cfg.mnist_devices, per_device=cfg.mnist_per_device, with_test=False)
        b = min(64, int(P.sizes.min()))
        points = [np.zeros((785, 10))]
        for K in (max(1, cfg.het_rounds // 2), cfg.het_rounds):
            points.append(fedpaq(P, rounds=K, local_steps=10, m_per_round=10, batch_size=b, q_levels=None,
                                 seed=seed_sequence(cfg, "het", nd, K), eval_rounds=[K]).x)
        gc = gradient_constants(P, points, b)
        out.append({"n_digits": nd, "lambda2": gc["lambda2"], "sigma2": gc["sigma2"],
                    "lambda2_points": gc["lambda2_points"], "batch": b})
    return {"rows": out}


def _run_theorem_unit(config: TheoremConfig, unit: str) -> dict[str, Any]:
    if unit == "heterogeneity":
        return _theorem_heterogeneity(config)
    if unit == "isotropic":
        return _theorem_isotropic(config)
    if unit == "mnist":
        return _theorem_mnist(config)
    return _theorem_synthetic(config, unit)


def load_theorem(profile: str = "paper") -> dict[str, Any]:
    """Stored result of :class:`TheoremConfig` (``{"units": {...}}``, see :func:`theorem_units`)."""
    cfg = TheoremConfig.for_profile(profile)
    return run_units(cfg, theorem_units(cfg), _run_theorem_unit, progress=False)
