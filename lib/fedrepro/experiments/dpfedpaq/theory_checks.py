"""Stored experiment :class:`ChecksConfig`: the check families of spec §8 other than Theorem 1
(quantizer, device sampling, chain (15), Gaussian profile, per-round and whole-training ε,
(28)–(30), recursion (32)→(34), Lemmas 1–3 and (22) by Monte Carlo, sensitivity and clipping
on MNIST). Every unit returns ``rows`` (one per check instance) and its tables.
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

__all__ = ["CHECK_UNITS", "ChecksConfig", "load_checks"]

CHECK_UNITS: tuple[str, ...] = ("quantizer", "sampling", "chain", "gaussian", "per-round", "training",
                                "inequalities", "recursion", "lemmas", "sensitivity", "clipping")


# =========================================================================== checks


@dataclass(frozen=True)
class ChecksConfig(ExperimentConfig):
    """Sizes of every check family (see :data:`CHECK_UNITS`)."""

    part: ClassVar[str] = "dpfedpaq"
    experiment: ClassVar[str] = "theory-checks"
    verify_rtol: ClassVar[float] = 1e-5
    verify_note: ClassVar[str] = ("Monte Carlo means and float32 local steps: the CPU's kernels move the last digits "
                                  "(7.9e-7 relative between the AVX2 and AVX-512 kernel families, "
                                  "`make verify-kernels`)")

    profile: str = "paper"
    quantizer_dim: int = 7850
    quantizer_trials: int = 10_000
    sampling_rounds: int = 100_000
    lemma_trials: int = 2000
    lemma_n: int = 2000
    mnist_per_device: int | None = None
    sensitivity_pairs: int = 1000
    clip_samples: int = 500

    @classmethod
    def for_profile(cls, profile: str) -> ChecksConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", quantizer_dim=500, quantizer_trials=400, sampling_rounds=5000,
                       lemma_trials=100, lemma_n=200, mnist_per_device=60, sensitivity_pairs=40,
                       clip_samples=50)
        return cls()


def _unit_quantizer(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq import quantizer as qz
    from fedrepro.dpfedpaq.checks import quantizer as qc

    rows = []
    vectors = qc.test_vectors(cfg.quantizer_dim, rng)
    empirical = {}
    for s in (1, 10, 100):
        for name, v in vectors.items():
            inst = f"{name} v, d={cfg.quantizer_dim}, s={s}"
            rows.append(row("quantizer", "unbiased (z-test)", inst, qc.check_unbiased(v, s, cfg.quantizer_trials, rng)))
            rows.append(row("quantizer", "exact variance (z-test)", inst, qc.check_variance(v, s, cfg.quantizer_trials, rng)))
            paper = qc.check_variance_bound(v, s, "paper")
            rows.append(row("quantizer", "variance <= q||v||^2 (Assumption 4)", inst, paper))
            rows.append(row("quantizer", "variance <= tight bound", inst, qc.check_variance_bound(v, s, "tight")))
            empirical[f"{name}-s{s}"] = paper.details["ratio_to_norm2"]
    for s in (1, 10, 100):
        rows.append(row("quantizer", "q <= 1 (Assumption 4's range)", f"d=7850, s={s}", qc.check_q_range(7850, s)))
        rows.append(row("quantizer", "packed bits < beta(s) + 1", f"d=7850, s={s}", qc.check_bits(7850, s, rng)))
    rows.append(row("quantizer", "bits of a run = K M ceil(beta)", "d=200, s=10, K=5, M=4",
                     qc.check_budget_identity(200, 10, 5, 4, rng)))
    q_table = {str(s): {"beta": qz.bits(7850, s), "beta_ceil": qz.ceil_bits(7850, s),
                        "q": qz.variance_parameter(7850, s), "tight": min(7850 / (4 * s * s), math.sqrt(7850) / s)}
               for s in (1, 10, 100)}
    return {"rows": rows, "q_table": q_table, "empirical_ratio": empirical}


def _unit_sampling(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import sampling as sc

    rows = [row("sampling", "P(i in S) = M/N, P(i,j in S) = M(M-1)/(N(N-1))", f"N={N}, M={M}",
                 sc.check_inclusion(N, M, cfg.sampling_rounds, rng)) for N, M in ((100, 10), (10, 3))]
    for N, M in ((6, 1), (8, 3), (10, 5), (12, 11)):
        rows.append(row("sampling", "identity (39), all C(N,M) subsets", f"N={N}, M={M}",
                         sc.check_identity39(rng.standard_normal((N, 5)), M)))
    return {"rows": rows}


def _unit_chain(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import privacy as pc

    names = {1: "(15) link 1: 1-(1-b/n)^E <= gamma", 2: "(15) link 2: log(1+x) <= x",
             3: "(15) link 3: gamma(e^eps0 - 1) <= 2 gamma eps0"}
    rows = []
    eps0_grid = (0.1, 0.5, 1.0, 1.25, 1.26, 1.5, 2.5, 5.0)
    for n, b, E in ((600, 1, 1), (600, 12, 10), (600, 6, 50), (100, 1, 20)):
        for eps0 in eps0_grid:
            for link in (1, 2, 3):
                rows.append(row("chain", names[link], f"n={n}, b={b}, E={E}, eps0={eps0}",
                                 pc.check_chain_link(link, eps0, E, b, n)))
    return {"rows": rows}


def _unit_gaussian(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import privacy as pc

    rows = []
    for eps0 in (0.1, 0.5, 0.9, 1.5, 3.0, 5.0):
        for d0 in (1e-5, 1e-4, 1e-3):
            res = pc.check_gaussian_profile(eps0, d0)
            rows.append(row("gaussian", "classical sigma (13) gives (eps0, delta0)", f"eps0={eps0}, delta0={d0:g}",
                             res, applicable=eps0 < 1))
            rows.append({**row("gaussian", "profile: ours = library (1e-9)", f"eps0={eps0}, delta0={d0:g}", res),
                         "holds": bool(res.details["profiles_agree"])})
    return {"rows": rows}


_TABLE_EPS = (0.1, 0.5, 1.0, 1.5, 2.0)
_TABLE_GAMMA = (0.2, 0.4, 0.6, 0.8)


def _unit_per_round(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import privacy as pc

    rows, table = [], []
    for g in _TABLE_GAMMA:
        line = []
        for e in _TABLE_EPS:
            res = pc.check_per_round_epsilon(e, g)
            rows.append(row("per-round", "eq. (16) noise gives the target eps per round", f"gamma={g}, eps={e}", res))
            line.append(res.observed)
        table.append(line)
    return {"rows": rows, "realized": table, "gammas": list(_TABLE_GAMMA), "epsilons": list(_TABLE_EPS)}


def _unit_training(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import privacy as pc

    out = []
    for e in (0.1, 0.5, 1.0, 2.0):
        for g in (0.2, 0.8):
            for K in (20, 100, 200):
                out.append({"epsilon": e, "gamma": g, "K": K, "M": 10, "N": 100,
                            **pc.training_epsilon(e, g, 10, 100, K)})
    return {"rows": [], "training": out}


def _unit_inequalities(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.dpfedpaq.checks import inequalities as iq

    rows = []
    for x in (0.0, 1e-3, 0.1, 0.5, 0.9, 1.0):
        for E in (1, 10, 100):
            rows.append(row("inequalities", "(28a) (1-mu eta)^E <= e^(-mu E eta)", f"muEeta={x}, E={E}", iq.check_eq28a(x / E, E)))
        rows.append(row("inequalities", "(28b) e^(-x) <= 1 - x + x^2/2", f"x={x}", iq.check_eq28b(x)))
        rows.append(row("inequalities", "(29)->(31) under (30)", f"x={x}", iq.check_eq30(x)))
    for x in (1.5, 2.0):
        rows.append(row("inequalities", "(29)->(31) under (30)", f"x={x} (violates 30)", iq.check_eq30(x),
                         applicable=False))
    lr = []
    for L, mu, E in ((27.4, 1e-3, 10), (4.75, 0.52, 10), (4.75, 0.52, 1)):
        c = t.Theorem1Constants(L=L, mu=mu, sigma2=1.0, G2=1.0, lam2=1.0, q=0.0, d=10, b=1, n=100,
                                N=10, M=5, E=E)
        for rule in t.LR_OFFSETS:
            res = iq.check_lr_conditions(c, rule)
            rows.append(row("inequalities", f"step-size conditions of the proof, gamma0 '{rule}'",
                             f"L={L}, mu={mu}, E={E}", res, paper_claims=rule != "relaxed"))
            lr.append({"L": L, "mu": mu, "E": E, "rule": rule, **{k: v for k, v in res.details.items()
                                                                   if k not in ("rtol", "atol")}})
    return {"rows": rows, "lr_conditions": lr}


def _unit_recursion(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import inequalities as iq

    rows = []
    for alpha in (0.0, 1.0, 1e3):
        for gamma in (2.0, 4.0, 40.0, 1e4):
            for d0 in (0.0, 1.0, 1e3):
                rows.append(row("recursion", "(32) iterated <= closed form (34)",
                                 f"alpha={alpha:g}, gamma={gamma:g}, delta0={d0:g}",
                                 iq.check_recursion(alpha, gamma, d0, 3000)))
    return {"rows": rows}


def _unit_lemmas(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.dpfedpaq.checks import lemmas as lm
    from fedrepro.dpfedpaq.checks import theorem as th

    p, radius = lemma_setup(cfg.lemma_n, rng)
    x = p.x_star + radius / 2 * np.ones(p.d) / math.sqrt(p.d)
    rows, details = [], []
    for E in SYNTHETIC_E:
        for s in SYNTHETIC_S:
            for eps in (None, 1.0):
                c, k = th.theorem_constants(p, radius, E=E, M=10, b=1, s=s, epsilon=eps)
                eta = 4.0 / (c.mu * t.lr_offset(c, "paper"))
                nv = t.noise_variance(c, eta)
                mc = lm.one_round(p, c, x, eta, k["G"], s, math.sqrt(nv), cfg.lemma_trials, rng)
                bounds = lm.lemma_bounds(c, eta, radius**2 / 4, nv)
                inst = f"E={E}, s={s or 'none'}, noise={'on' if eps else 'off'}"
                rows.append(row("lemmas", "decomposition (22): cross terms = 0", inst, lm.check_decomposition(mc)))
                for name, label in (("lemma1", "Lemma 1 (23)"), ("lemma2", "Lemma 2 (24) as printed"),
                                    ("lemma2-corrected", "Lemma 2 with the noise term"), ("lemma3", "Lemma 3 (25)")):
                    rows.append(row("lemmas", label, inst, lm.check_lemma(name, mc, bounds),
                                     paper_claims=name != "lemma2-corrected"))
                details.append({"E": E, "s": s, "noise": eps is not None, "eta": eta, **mc,
                                **{f"bound_{k2}": v for k2, v in bounds.items()}})
    # the experiments' step size η0 = 0.1 against the proof's conditions
    c, _ = th.theorem_constants(p, radius, E=10, M=10, b=1, s=None, epsilon=None)
    cond = {"eta": 0.1, "mu_E_eta": c.mu * 10 * 0.1, "lemma3": 2 * c.L**2 * 81 * 0.01}
    return {"rows": rows, "details": details, "experiment_eta_conditions": cond,
            "constants": {k2: v for k2, v in th.theorem_constants(p, radius, E=1, M=10, b=1, s=None,
                                                                  epsilon=None)[1].items()}}


def _mnist(cfg: ChecksConfig):
    from fedrepro.dpfedpaq.mnist import het_mnist_problem

    return het_mnist_problem(2, per_device=cfg.mnist_per_device, with_test=False)


def _unit_sensitivity(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.algorithms import fedpaq
    from fedrepro.dpfedpaq.checks import sensitivity as sc

    P = _mnist(cfg)
    trained = fedpaq(P, rounds=20, local_steps=10, m_per_round=10, batch_size=min(64, int(P.sizes.min())),
                     q_levels=None, seed=seed_sequence(cfg, "sensitivity", "train"), eval_rounds=[20]).x
    rows, summary = [], []
    for label, x in (("x = 0", np.zeros((785, 10))), ("x after 20 FedAvg rounds", trained)):
        for eta in (0.1, 0.05):
            d = sc.coupled_differences(P, x, eta, 10, 0.2, 1.0, cfg.sensitivity_pairs, rng)
            for mode in sc.SENSITIVITY_BOUNDS:
                res = sc.check_sensitivity(d, mode, eta, 10, 1.0)
                rows.append(row("sensitivity", f"||u(D) - u(D')|| <= Delta_f '{mode}'", f"{label}, eta={eta}", res,
                                 paper_claims=mode == "authors_code"))
                summary.append({"point": label, "eta": eta, "mode": mode, "max_diff": float(d["diff"].max()),
                                "median_diff": float(np.median(d["diff"])), **{k: v for k, v in res.details.items()
                                                                                if k not in ("rtol", "atol")}})
    return {"rows": rows, "summary": summary}


def _unit_clipping(cfg: ChecksConfig, rng: np.random.Generator) -> dict[str, Any]:
    from fedrepro.dpfedpaq.checks import sensitivity as sc

    P = _mnist(cfg)
    rows_idx = rng.choice(P.labels.size, cfg.clip_samples, replace=False)
    x = 0.01 * rng.standard_normal((785, 10))
    rows = []
    for C in (0.5, 1.0, 2.0):
        res = sc.check_clip_norms(P, x, rows_idx, C)
        rows.append(row("clipping", "closed-form per-sample norm = brute force", f"C={C}", res["closed_form"]))
        rows.append(row("clipping", "clipped per-sample norms <= C", f"C={C}", res["clipped"]))
    norms = P.per_sample_grad_norms(np.zeros((785, 10)), rows_idx)
    return {"rows": rows, "median_norm_at_0": float(np.median(norms)), "min_norm_at_0": float(norms.min())}


_CHECK_FUNCS = {"quantizer": _unit_quantizer, "sampling": _unit_sampling, "chain": _unit_chain,
                "gaussian": _unit_gaussian, "per-round": _unit_per_round, "training": _unit_training,
                "inequalities": _unit_inequalities, "recursion": _unit_recursion, "lemmas": _unit_lemmas,
                "sensitivity": _unit_sensitivity, "clipping": _unit_clipping}


def _run_check_unit(config: ChecksConfig, unit: str) -> dict[str, Any]:
    return _CHECK_FUNCS[unit](config, generator(config, unit))


def load_checks(profile: str = "paper") -> dict[str, Any]:
    """Stored result of :class:`ChecksConfig`: ``{"units": {family: {"rows": [...], ...}}}``."""
    return run_units(ChecksConfig.for_profile(profile), list(CHECK_UNITS), _run_check_unit, progress=False)
