"""Audit of Fed-PLT's privacy guarantee (Proposition 4): one agent's changed record, the
library's Fed-PLT with noisy gradient descent as local solver, many runs per world.

The instance is the linear-Gaussian one of the theory chapter's exact check
(:mod:`fedrepro.fedplt.checks.privacy`, spec §10.10): per-sample losses
ℓ(x; ξ) = ‖x − ξ‖²/2 + r‖x‖²/2 (so every f_i is λ-strongly convex and λ-smooth with
λ = 1 + r), ``N`` agents with ``q`` records each, full participation, noisy GD
(v2 eq. (13)) with ``Ne`` local steps of size γ = θ·2/(λ + 1/ρ), x_{i,0} ~ N(0, 2τ²I/λ),
z_{i,0} = 0. Neighbouring datasets differ in one record of agent 0, moved by a vector of norm L
(Assumption 3 holds with equality). The runs are computed by the library's
:func:`fedrepro.fedplt.algorithm.fedplt_iteration`; every trial is one coordinate of a
problem of dimension ``trials`` (the losses are isotropic, so the coordinates are independent
runs of the one-dimensional instance), which vectorises the trials.

What the adversary observes (``view``):

* ``"model"``: agent 0's released model x_{0,K}, the object Proposition 4 bounds;
* ``"messages"``: everything the coordinator receives, the messages z_{i,k} of every agent for
  k = 1..K (the theory chapter's "transcript"; the released models are functions of them,
  x_{i,K} = y_{K-1} + (z_{i,K} − z_{i,K-1})/2, so they add nothing).

The attack is linear: a direction fitted by linear discriminant analysis on separate training
runs of both worlds (``train_trials`` each), then the projection of each audited run on it.
Both worlds are Gaussian with one covariance, so the scores are Gaussian with equal variances
and the GDP μ bound of the auditor is valid (a Gaussian trade-off curve); the bound from the
rates holds without that. The exact μ (from the exact Rényi divergence of the theory check,
μ² = 2D_α/α) is stored beside the estimate as a cross-check of the simulation, and its exact ε (the Gaussian mechanism's at that μ) is every row's ``exact_epsilon``
(scope "training": the adversary sees the whole run of K rounds). The reported bound is the larger of
the two routes, each at half the error probability, so that it holds at the stated confidence
(:func:`fedrepro.privacy.audit.joint_audit`).

The claimed ε is Proposition 4's RDP bound converted by Lemma 5 at the best order
(:func:`fedrepro.fedplt.privacy_bounds.proposition4_adp_epsilon`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from fedrepro.core import operators as ops
from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.privacy.audit_dpfedpaq import AUDIT_VERIFY_RULES, roc_curve
from fedrepro.fedplt.algorithm import fedplt_iteration
from fedrepro.fedplt.checks.privacy import Proposition4Instance, check_proposition4
from fedrepro.fedplt.privacy_bounds import proposition4_adp_epsilon
from fedrepro.privacy.audit import epsilon_from_mu, exact_fields, joint_audit
from fedrepro.problems.base import FederatedProblem

__all__ = ["FedPLTAuditConfig", "VIEWS", "IsotropicQuadratic", "simulate_views", "lda_direction",
           "run_fedplt_audit", "load_fedplt_audit"]

#: The adversary's views (module docstring) and the theory check's name for each.
VIEWS: dict[str, str] = {"model": "agent", "messages": "transcript"}


class IsotropicQuadratic(FederatedProblem):
    """f_i(x) = λ‖x‖²/2 − b_iᵀx for every agent (the mean of the instance's per-sample losses,
    up to a constant): λ-strongly convex and λ-smooth, separable over coordinates."""

    def __init__(self, lam: float, b: np.ndarray):
        b = np.asarray(b, dtype=float)
        if b.ndim != 2 or not np.all(np.isfinite(b)) or not lam > 0:
            raise ValueError(f"need lam > 0 and a finite b of shape (N, n), got lam={lam!r}, shape {b.shape}")
        self.b, self.lam_value = b, float(lam)
        self.N, self.n = b.shape
        self.lam_i = np.full(self.N, self.lam_value)
        self.lam_bar_i = self.lam_i.copy()

    def _sel(self, agents: np.ndarray | None) -> np.ndarray:
        return self.b if agents is None else self.b[agents]

    def _cost(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        return 0.5 * self.lam_value * np.sum(X * X, axis=1) - np.sum(self._sel(agents) * X, axis=1)

    def _grad(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        return self.lam_value * X - self._sel(agents)

    def _hessian(self, X: np.ndarray, agents: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError("the audit's problem has one coordinate per trial: no dense Hessian")


@dataclasses.dataclass(frozen=True)
class FedPLTAuditConfig(ExperimentConfig):
    """The Fed-PLT audit: the linear-Gaussian instance (module docstring) observed through
    ``views`` after ``rounds`` rounds; ``trials`` audited runs and ``train_trials`` runs to fit
    the attack, per world and row."""

    part = "privacy"
    experiment = "audit-fedplt"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_note = ("float64 simulation: identical on one machine; across CPUs a score that moves across "
                   "a threshold moves the counts behind the bounds and the ROC by one (bounds 25 % + "
                   "0.05, rates 0.01)")

    profile: str = "paper"
    views: tuple[str, ...] = ("model", "messages", "messages")
    rounds: tuple[int, ...] = (50, 10, 50)
    trials: int = 200_000
    train_trials: int = 20_000
    N: int = 3
    q: int = 1
    r: float = 1.0
    rho: float = 1.0
    Ne: int = 2
    tau: float = 1.0
    theta: float = 0.5
    L: float = 1.0
    delta: float = 1e-5
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if len(self.views) != len(self.rounds):
            raise ValueError(f"views and rounds must have the same length, got {self.views} and {self.rounds}")
        unknown = sorted(set(self.views) - set(VIEWS))
        if unknown:
            raise ValueError(f"views must be among {tuple(VIEWS)}, got {unknown}")
        if not 0 < self.theta < 1:
            raise ValueError(f"theta must lie in (0, 1) (Proposition 4's step-size condition), got {self.theta!r}")

    @property
    def lam(self) -> float:
        """λ = 1 + r: the strong-convexity and smoothness constant of every f_i."""
        return 1.0 + self.r

    @property
    def gamma(self) -> float:
        """The local step γ = θ·2/(λ + 1/ρ)."""
        return self.theta * ops.max_local_step(self.rho, self.lam, self.lam)


def quick(cfg: FedPLTAuditConfig) -> FedPLTAuditConfig:
    """The quick profile: a tenth of the runs."""
    return dataclasses.replace(cfg, profile="quick", trials=cfg.trials // 10, train_trials=cfg.train_trials // 10)


def simulate_views(cfg: FedPLTAuditConfig, rounds: int, trials: int, canary: bool,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``trials`` runs of ``rounds`` Fed-PLT rounds in one world (``canary``: agent 0's record
    moved by L); for each view the observations, one row per run."""
    data = np.random.default_rng(rngs.seed_sequence(cfg, "data")).standard_normal(cfg.N)
    b = np.repeat(data[:, None], trials, axis=1)
    if canary:
        b[0] += cfg.L / cfg.q  # one of agent 0's q records moves by L: its mean moves by L/q
    problem = IsotropicQuadratic(cfg.lam, b)
    x = rng.standard_normal((cfg.N, trials)) * math.sqrt(2.0 / cfg.lam) * cfg.tau
    z = np.zeros((cfg.N, trials))
    messages = []
    for _ in range(rounds):
        x, z, _ = fedplt_iteration(x, z, problem, rho=cfg.rho, Ne=cfg.Ne, solver="noisy-gd",
                                   gamma=cfg.gamma, rng=rng, tau=cfg.tau)
        messages.append(z.T)
    return {"model": x[0][:, None], "messages": np.concatenate(messages, axis=1)}


def lda_direction(out: np.ndarray, inn: np.ndarray) -> np.ndarray:
    """Fisher's linear discriminant: Σ⁺(mean_in − mean_out) with the pooled covariance Σ (least
    squares, so a covariance made singular by redundant observations is handled)."""
    diff = inn.mean(axis=0) - out.mean(axis=0)
    pooled = 0.5 * (np.atleast_2d(np.cov(out, rowvar=False)) + np.atleast_2d(np.cov(inn, rowvar=False)))
    return np.linalg.lstsq(pooled, diff, rcond=None)[0]


def _exact_mu(cfg: FedPLTAuditConfig, view: str, rounds: int) -> float:
    inst = Proposition4Instance(N=cfg.N, n=1, q=cfg.q, r=cfg.r, rho=cfg.rho, Ne=cfg.Ne, K=rounds, tau=cfg.tau,
                                theta=cfg.theta, L=cfg.L, alpha=2.0)
    return math.sqrt(check_proposition4(inst, VIEWS[view]).observed)  # D_2 = μ² for equal covariances


def run_fedplt_audit(cfg: FedPLTAuditConfig) -> dict[str, Any]:
    """For each (view, rounds): the attack fitted on training runs, the audit of fresh runs,
    the claim and the exact μ (module docstring)."""
    check_profile(cfg.profile)
    rows = []
    for i, (view, rounds) in enumerate(zip(cfg.views, cfg.rounds, strict=True)):
        fit = [simulate_views(cfg, rounds, cfg.train_trials, c, rngs.generator(cfg, "train", i, int(c)))[view]
               for c in (False, True)]
        direction = lda_direction(*fit)
        s_out, s_in = (simulate_views(cfg, rounds, cfg.trials, c, rngs.generator(cfg, "audit", i, int(c)))[view]
                       @ direction for c in (False, True))
        res = joint_audit(s_out, s_in, delta=cfg.delta, gaussian=True, confidence=cfg.confidence,
                          seed=rngs.seed_sequence(cfg, "split", i))
        claim, order = proposition4_adp_epsilon(cfg.L, cfg.lam, cfg.tau, cfg.q, cfg.gamma, rounds, cfg.Ne, cfg.delta)
        mu_exact = _exact_mu(cfg, view, rounds)
        rows.append({"view": view, "rounds": rounds, "claimed_epsilon": claim, "claim_order": order,
                     **res, "delta": cfg.delta, "trials": cfg.trials, "train_trials": cfg.train_trials,
                     "gaussian": True, "mu_exact": mu_exact,
                     **exact_fields(res["empirical_epsilon_lower"], epsilon_from_mu(mu_exact, cfg.delta), "training"),
                     **roc_curve(s_out, s_in)})
    return {"rows": rows, "gamma": cfg.gamma, "lam": cfg.lam}


def load_fedplt_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = FedPLTAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_fedplt_audit)
