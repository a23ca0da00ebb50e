"""Whole-training audit of Fed-PLT with noisy local GD (v2 Algorithm 1, eq. 13) on the paper's
logistic problem, with many gradient canaries in each training.

**The training** is the library's :func:`fedrepro.fedplt.algorithm.fedplt_iteration` (noisy GD
local solver, per-step noise N(0, 2γτ²I)) for K rounds on the v2 §VII logistic problem
(:func:`fedrepro.problems.logistic.logistic_v2`: N = 100 agents, q = 250 records, n = 5, l2
weight 0.5), at the experiments' tuned ρ (:func:`fedrepro.experiments.fedplt.participation.tuned_rho`),
their step γ and N_e = 5, at noise levels τ of v2 Table VII. The model is extended by canary
coordinates: features that every record of the problem has at 0, with the per-sample loss
(x_c − ξ)²/2 (ξ = 0, so f_i is unchanged on the logistic part, and 1-strongly convex and smooth on
each canary coordinate). A **canary** is a record of agent 0 whose ξ on its own coordinate is
L (Nasr et al.'s gradient canary: its per-sample gradient differs from its replacement's by exactly
L, Assumption 3 with equality). The loss is separable and the noise independent over coordinates,
so every canary coordinate is an independent run of Proposition 4's linear-Gaussian instance
inside one training of the real problem: half of a training's canary coordinates hold the canary
(world D'), half do not (world D), and one training audits thousands of canaries (Steinke, Nasr and
Jagielski's "one training run", here with exactly independent canaries).

**Threat model.** The adversary sees agent 0's released model x_{0,K} after the whole training (the
object Proposition 4 bounds) and knows everything but the canary's presence. Its score is that
model's canary coordinate (the view is one-dimensional and Gaussian with one variance in both
worlds, so a threshold on it is the optimal test).

**The audit** is :func:`fedrepro.privacy.audit.joint_audit` with both routes (the trade-off curve is
Gaussian: the μ route is a bound), each at half the error probability. The exact μ of the view
(scope "training") is the theory chapter's exact Rényi divergence of the instance
(:func:`fedrepro.fedplt.checks.privacy.check_proposition4`, view "agent": μ² = D₂), its ε the
Gaussian mechanism's at that μ. The claim is Proposition 4's RDP bound converted by Lemma 5
(:func:`fedrepro.fedplt.privacy_bounds.proposition4_adp_epsilon`) for the whole problem: λ its
strong-convexity constant (0.5), L the larger of the logistic records' bound 2·max‖a‖ and the
canary's L (set equal to it).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.participation import s_norms, tuned_rho
from fedrepro.experiments.privacy.audit_dpfedpaq import AUDIT_VERIFY_RULES
from fedrepro.fedplt.algorithm import fedplt_iteration
from fedrepro.fedplt.checks.privacy import Proposition4Instance, check_proposition4
from fedrepro.fedplt.privacy_bounds import proposition4_adp_epsilon
from fedrepro.privacy.audit import epsilon_from_mu, exact_fields, joint_audit
from fedrepro.problems.base import FederatedProblem
from fedrepro.problems.logistic import LogisticProblem, logistic_v2

__all__ = ["CanaryCoordinates", "FedPLTTrainingAuditConfig", "setting", "canary_models", "run_unit",
           "load_fedplt_training_audit"]

_CHUNK = 20_000  # canary coordinates per world and training (two (100, 40 005) float64 states)


class CanaryCoordinates(FederatedProblem):
    """``base`` extended by canary coordinates with per-sample loss (x_c − ξ)²/2: f_i(x, x_c) =
    base f_i(x) + ‖x_c‖²/2 − ⟨b_i, x_c⟩, ``b`` (N, m) the agents' mean ξ (L/q on agent 0's canary
    coordinates in world D', 0 elsewhere)."""

    def __init__(self, base: LogisticProblem, b: np.ndarray):
        b = np.asarray(b, dtype=float)
        if b.ndim != 2 or b.shape[0] != base.N or not np.all(np.isfinite(b)):
            raise ValueError(f"b must be a finite (N, m) = ({base.N}, m) array, got shape {b.shape}")
        self.base, self.b = base, b
        self.N, self.n = base.N, base.n + b.shape[1]
        self.lam_i = np.minimum(base.lam_i, 1.0)
        self.lam_bar_i = np.maximum(base.lam_bar_i, 1.0)

    def _split(self, X: np.ndarray, agents: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return X[:, :self.base.n], X[:, self.base.n:], self.b if agents is None else self.b[agents]

    def _cost(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        head, tail, b = self._split(X, agents)
        return self.base._cost(head, agents) + 0.5 * np.sum(tail * tail, axis=1) - np.sum(b * tail, axis=1)

    def _grad(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        head, tail, b = self._split(X, agents)
        return np.concatenate([self.base._grad(head, agents), tail - b], axis=1)

    def _hessian(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError("the audit's problem has thousands of canary coordinates: no dense Hessian")


@dataclasses.dataclass(frozen=True)
class FedPLTTrainingAuditConfig(ExperimentConfig):
    """The whole-training audits: one row per noise level ``taus`` (τ, v2 Table VII's values read
    as standard deviations), ``rounds`` rounds, ``canaries`` canary coordinates per world."""

    part = "privacy"
    experiment = "audit-fedplt-training"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_units: ClassVar[int | None] = 1
    verify_note = ("float64 training: identical on one machine; across CPUs a score that moves across a "
                   "threshold moves the counts behind the bounds by one (bounds 25 % + 0.05, rates 0.01)")

    profile: str = "paper"
    taus: tuple[float, ...] = (1e-3, 1e-4)
    rounds: int = 100
    canaries: int = 50_000
    Ne: int = 5
    data_seed: int = 0
    delta: float = 1e-5
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not self.taus or any(not t > 0 for t in self.taus):
            raise ValueError(f"taus must be noise levels > 0, got {self.taus}")
        if self.canaries < 8 or self.rounds < 1:
            raise ValueError(f"canaries must be >= 8 and rounds >= 1, got {self.canaries}, {self.rounds}")

    def units(self) -> list[str]:
        return [f"tau={t:g}" for t in self.taus]


def quick(cfg: FedPLTTrainingAuditConfig) -> FedPLTTrainingAuditConfig:
    """The quick profile: a tenth of the canaries, a fifth of the rounds."""
    return dataclasses.replace(cfg, profile="quick", canaries=cfg.canaries // 10, rounds=max(1, cfg.rounds // 5))


def setting(cfg: FedPLTTrainingAuditConfig) -> dict[str, Any]:
    """The problem, ρ, γ and L of the audited trainings (module docstring)."""
    problem = logistic_v2(convex=True, seed=cfg.data_seed)
    rho, _ = tuned_rho(problem, cfg.Ne)
    gamma = float(s_norms(problem, rho, cfg.Ne)["gamma"])
    L = 2.0 * float(np.max(np.linalg.norm(np.asarray(problem.features), axis=-1)))
    return {"problem": problem, "rho": rho, "gamma": gamma, "L": L, "q": int(problem.q[0]) if np.ndim(problem.q)
            else int(problem.q), "lam": float(min(problem.lam, 1.0))}


def canary_models(cfg: FedPLTTrainingAuditConfig, st: dict[str, Any], tau: float, count: int,
                  generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Agent 0's released canary coordinates after ``cfg.rounds`` rounds: (without, with the canary),
    ``count`` each, from trainings of :data:`_CHUNK` canaries per world (x_{i,0} ~ N(0, 2τ²/λ I) on
    the canary coordinates as in Proposition 4, the logistic part from 0)."""
    base: LogisticProblem = st["problem"]
    out, inn = np.empty(count), np.empty(count)
    for start in range(0, count, _CHUNK):
        m = min(_CHUNK, count - start)
        b = np.zeros((base.N, 2 * m))
        b[0, m:] = st["L"] / st["q"]
        problem = CanaryCoordinates(base, b)
        x = np.zeros((base.N, problem.n))
        x[:, base.n:] = generator.standard_normal((base.N, 2 * m)) * math.sqrt(2.0) * tau
        z = np.zeros_like(x)
        for _ in range(cfg.rounds):
            x, z, _ = fedplt_iteration(x, z, problem, rho=st["rho"], Ne=cfg.Ne, solver="noisy-gd",
                                       gamma=st["gamma"], rng=generator, tau=tau)
        out[start:start + m] = x[0, base.n:base.n + m]
        inn[start:start + m] = x[0, base.n + m:]
    return out, inn


def run_unit(cfg: FedPLTTrainingAuditConfig, unit: str) -> dict[str, Any]:
    """The audit at one noise level ``unit`` ("tau=<τ>"): the canaries' scores, the bound, the exact
    μ and ε and the claim (module docstring)."""
    check_profile(cfg.profile)
    tau = cfg.taus[cfg.units().index(unit)]
    st = setting(cfg)
    s_out, s_in = canary_models(cfg, st, tau, cfg.canaries, rngs.generator(cfg, unit, "train"))
    res = joint_audit(s_out, s_in, delta=cfg.delta, gaussian=True, confidence=cfg.confidence,
                      seed=rngs.seed_sequence(cfg, unit, "split"))
    theta = st["gamma"] * (1.0 + 1.0 / st["rho"]) / 2.0  # γ in units of 2/(λ_c + 1/ρ), λ_c = 1
    inst = Proposition4Instance(N=st["problem"].N, n=1, q=st["q"], r=0.0, rho=st["rho"], Ne=cfg.Ne, K=cfg.rounds,
                                tau=tau, theta=theta, L=st["L"], alpha=2.0)
    mu_exact = math.sqrt(check_proposition4(inst, "agent").observed)
    claim, order = proposition4_adp_epsilon(st["L"], st["problem"].lam, tau, st["q"], st["gamma"], cfg.rounds,
                                            cfg.Ne, cfg.delta)
    return {"name": unit, "paper": "Fed-PLT", "view": "model", "tau": tau, "rounds": cfg.rounds, "Ne": cfg.Ne,
            "rho": st["rho"], "gamma": st["gamma"], "L": st["L"], "q": st["q"], "agents": st["problem"].N,
            "claimed_epsilon": claim, "claim_order": order, **res, "delta": cfg.delta, "trials": cfg.canaries,
            "gaussian": True, "mu_exact": mu_exact,
            **exact_fields(res["empirical_epsilon_lower"], epsilon_from_mu(mu_exact, cfg.delta), "training")}


def _combine(cfg: FedPLTTrainingAuditConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"rows": [units[u] for u in cfg.units()]}


def load_fedplt_training_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = FedPLTTrainingAuditConfig()
    cfg = quick(cfg) if profile == "quick" else cfg
    return run_units(cfg, cfg.units(), run_unit, combine=_combine)
