"""Tight one-release audits of the Gaussian-family mechanisms: how close an audit can come to the
exact ε when the attack is the optimal one and the trials are many.

Every mechanism audited here reduces exactly to one dimension. The canary's record contributes
Δ to a sum that carries Gaussian noise σ; projected on the canary's direction and divided by σ,
one release is

    without the canary:  N(0, 1),       with it:  (1 − p) N(0, 1) + p N(μ, 1),   μ = Δ/σ,

where p is the probability that the canary is in the release's sample (p = 1: the Gaussian
mechanism). This pair is the tight instance of the p-subsampled Gaussian mechanism
(:mod:`fedrepro.privacy.subsampled`), whose exact ε is ``exact_epsilon``. Both likelihood ratios
are monotone in the output, so the optimal attacks are thresholds on it.

The mechanisms (:data:`MECHANISMS`): one step of ALI-DPFL's DP-SGD at q = 1 (the Gaussian
mechanism, μ = 1/σ) and at the paper's q = 0.015 (Poisson sampling), and one round of
DP-FedPAQ with the authors' sensitivity C/n at ε = 0.1 and 1 (the canary's pixel weights, the
view of the DP-FedPAQ audit: p = γ = Eb/n, μ = η₀C/(b·std); see
:mod:`fedrepro.experiments.privacy.audit_dpfedpaq`).

The audit: the threshold is fixed before any draw, from the two known distributions and the
trial count (the threshold whose bound, computed at the expected counts, is largest), so every
draw is evaluated (no selection half) and the Clopper–Pearson bounds of the two rates hold
together at ``confidence``. For the Gaussian mechanism the μ route (its trade-off curve is
Gaussian) is a second bound with its own threshold, and both are computed at half the error
probability (Bonferroni) so that the larger holds at ``confidence``. The draws are made in
vectorised chunks; only the counts above the thresholds are kept.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import stats

from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.privacy.audit_alidpfl import DPSGDAuditConfig, claimed_epsilon
from fedrepro.experiments.privacy.audit_dpfedpaq import FedPAQAuditConfig, canary_problems, round_parameters
from fedrepro.privacy.audit import (
    audit_counts,
    audit_counts_mu,
    epsilon_ceiling,
    epsilon_from_mu,
    exact_fields,
    mu_ceiling,
    route_confidence,
)
from fedrepro.privacy.subsampled import subsampled_gaussian_epsilon

__all__ = ["MECHANISMS", "TightAuditConfig", "mechanism_parameters", "choose_threshold", "draw_counts",
           "run_tight_audit", "load_tight_audit"]

#: The audited releases: name → (paper, what is released, scope).
MECHANISMS: dict[str, tuple[str, str, str]] = {
    "dpsgd-q1": ("ALI-DPFL", "one DP-SGD step, q = 1 (Gaussian mechanism)", "step"),
    "dpsgd-paper-q": ("ALI-DPFL", "one DP-SGD step, q = 0.015 (Poisson-sampled)", "step"),
    "fedpaq-authors-0.1": ("DP-FedPAQ", "one round, Δ = authors' C/n, ε = 0.1 (canary's pixel)", "round"),
    "fedpaq-authors-1": ("DP-FedPAQ", "one round, Δ = authors' C/n, ε = 1 (canary's pixel)", "round"),
}
_CHUNK = 5_000_000  # draws per vectorised chunk (40 MB of float64)
_GRID = np.linspace(0.0, 10.0, 2001)  # the thresholds tried, in units of the noise


@dataclasses.dataclass(frozen=True)
class TightAuditConfig(ExperimentConfig):
    """The tight audits: ``trials`` releases per world for each of ``mechanisms``."""

    part = "privacy"
    experiment = "audit-tight-steps"
    verify_rtol = 1e-9
    verify_note = "float64 draws and integer counts: identical on every machine with the same numpy"

    profile: str = "paper"
    mechanisms: tuple[str, ...] = tuple(MECHANISMS)
    trials: tuple[int, ...] = (10_000_000, 100_000_000, 10_000_000, 10_000_000)
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        unknown = sorted(set(self.mechanisms) - set(MECHANISMS))
        if unknown:
            raise ValueError(f"mechanisms must be among {tuple(MECHANISMS)}, got {unknown}")
        if len(self.trials) != len(self.mechanisms) or any(t < 4 for t in self.trials):
            raise ValueError(f"trials must give one count >= 4 per mechanism, got {self.trials}")


def quick(cfg: TightAuditConfig) -> TightAuditConfig:
    """The quick profile: a hundredth of the draws."""
    return dataclasses.replace(cfg, profile="quick", trials=tuple(max(10_000, t // 100) for t in cfg.trials))


def mechanism_parameters(name: str) -> dict[str, Any]:
    """(p, μ, δ, claims) of an audited release (module docstring): ALI-DPFL's σ, q and δ from
    the DP-SGD audit's config, DP-FedPAQ's round from the DP-FedPAQ audit's."""
    if name.startswith("dpsgd"):
        cfg = DPSGDAuditConfig()
        q = 1.0 if name == "dpsgd-q1" else cfg.qs[0]
        return {"p": q, "mu": 1.0 / cfg.sigma, "delta": cfg.delta, "q": q, "sigma": cfg.sigma,
                "claimed_epsilon": claimed_epsilon(cfg, q, 1, "basic"),
                "claimed_epsilon_improved": claimed_epsilon(cfg, q, 1, "improved")}
    cfg = FedPAQAuditConfig()
    eps = float(name.rsplit("-", 1)[1])
    params = round_parameters(cfg, canary_problems(cfg)[0], {"sensitivity": "authors_code", "epsilon": eps})
    return {"p": params["gamma"], "mu": params["lr"] * cfg.clip / params["batch"] / params["std"],
            "delta": cfg.delta, "claimed_epsilon": eps, **params}


def _expected_rates(p: float, mu: float, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fpr = stats.norm.sf(t)
    return fpr, 1.0 - ((1.0 - p) * fpr + p * stats.norm.sf(t - mu))


def choose_threshold(p: float, mu: float, delta: float, trials: int, confidence: float, route: str) -> float:
    """The threshold ("in" when the output exceeds it) whose bound at the expected counts of
    ``trials`` draws per world is largest; ``route`` "rates" (ε) or "mu" (GDP μ). Uses only the
    two distributions, never a draw."""
    fpr, fnr = _expected_rates(p, mu, _GRID)
    fp, fn = np.rint(trials * fpr).astype(np.int64), np.rint(trials * fnr).astype(np.int64)
    if route == "rates":
        values = [audit_counts(a, b, trials, delta=delta, confidence=confidence) for a, b in zip(fp, fn, strict=True)]
    elif route == "mu":
        values = [audit_counts_mu(a, b, trials, confidence=confidence) for a, b in zip(fp, fn, strict=True)]
    else:
        raise ValueError(f"route must be 'rates' or 'mu', got {route!r}")
    return float(_GRID[int(np.argmax(values))])


def draw_counts(p: float, mu: float, thresholds: np.ndarray, trials: int,
                generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(false positives, false negatives) at each threshold from ``trials`` draws per world:
    outputs without the canary above a threshold, outputs with it at or below it."""
    thresholds = np.asarray(thresholds, dtype=float)
    fp = np.zeros(thresholds.size, dtype=np.int64)
    fn = np.zeros(thresholds.size, dtype=np.int64)
    for start in range(0, trials, _CHUNK):
        m = min(_CHUNK, trials - start)
        out = generator.standard_normal(m)
        fp += np.sum(out[:, None] > thresholds[None, :], axis=0)
        inn = generator.standard_normal(m)
        if p < 1.0:
            inn += mu * (generator.random(m) < p)
        else:
            inn += mu
        fn += np.sum(inn[:, None] <= thresholds[None, :], axis=0)
    return fp, fn


def run_tight_audit(cfg: TightAuditConfig) -> dict[str, Any]:
    """For each release: the thresholds, the draws' counts, the bounds, the exact ε and the
    ceiling (module docstring)."""
    check_profile(cfg.profile)
    rows = []
    for name, trials in zip(cfg.mechanisms, cfg.trials, strict=True):
        par = mechanism_parameters(name)
        p, mu, delta = par["p"], par["mu"], par["delta"]
        gaussian = p == 1.0
        per_route = route_confidence(cfg.confidence, 2 if gaussian else 1)
        t_eps = choose_threshold(p, mu, delta, trials, per_route, "rates")
        thresholds = [t_eps, choose_threshold(p, mu, delta, trials, per_route, "mu")] if gaussian else [t_eps]
        fp, fn = draw_counts(p, mu, np.array(thresholds), trials, rngs.generator(cfg, name))
        eps_rates = audit_counts(int(fp[0]), int(fn[0]), trials, delta=delta, confidence=per_route)
        mu_lower = audit_counts_mu(int(fp[-1]), int(fn[-1]), trials, confidence=per_route) if gaussian else None
        eps_mu = epsilon_from_mu(mu_lower, delta) if gaussian else None
        lower = max(eps_rates, eps_mu) if gaussian else eps_rates
        ceiling = epsilon_ceiling(trials, delta=delta, confidence=per_route)
        if gaussian:
            ceiling = max(ceiling, epsilon_from_mu(mu_ceiling(trials, confidence=per_route), delta))
        paper, label, scope = MECHANISMS[name]
        exact = subsampled_gaussian_epsilon(delta, p, mu, 1.0)
        if not math.isfinite(exact):
            raise ValueError(f"the exact ε of {name} is not finite")
        rows.append({"name": name, "paper": paper, "mechanism": label, **par, "gaussian": gaussian,
                     "trials": trials, "evaluated": trials, "confidence": cfg.confidence,
                     "route_confidence": per_route, "routes": ["rates", "mu"] if gaussian else ["rates"],
                     "thresholds": thresholds, "false_positives": [int(x) for x in fp],
                     "false_negatives": [int(x) for x in fn], "empirical_epsilon_lower": lower,
                     "epsilon_lower_rates": eps_rates, "epsilon_lower_mu": eps_mu, "mu_lower": mu_lower,
                     "epsilon_ceiling": ceiling, **exact_fields(lower, exact, scope)})
    return {"rows": rows}


def load_tight_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = TightAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_tight_audit)
