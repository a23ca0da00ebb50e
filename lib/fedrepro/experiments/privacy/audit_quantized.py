"""Audit of DP-FedPAQ's quantized round (s levels) with an attack that knows the quantizer.

The mechanism, the canary and the neighbouring datasets are those of the DP-FedPAQ audit
(:mod:`fedrepro.experiments.privacy.audit_dpfedpaq`): one device's round-0 message
Q_s(u + z), the canary's only pixel touched by no other record. The quantizer sends the norm
‖v‖ and, for each coordinate, an integer level k with |k| ≤ s: v_j/Δ rounded at random to one of
its two neighbouring integers (probability of each: one minus the distance), Δ = ‖v‖/s
(:func:`fedrepro.dpfedpaq.quantizer.encode`).

Two attacks on the same messages:

* ``"linear"``: the DP-FedPAQ audit's score, the decoded weights of the canary's pixel projected
  on the canary's push;
* ``"likelihood"``: the log-likelihood ratio of the ten levels of the canary's pixel given Δ.
  Without the canary those coordinates are N(0, std²) before quantization; with it, in the
  fraction γ of the rounds whose subsample holds it, N(m, std²) with m the canary's step
  (η₀C/b along its push at x₀ = 0, times the share of its gradient on the pixel). The level k of a
  coordinate has probability P(k | m) = E[max(0, 1 − |v/Δ − k|)], v ~ N(m, std²) (a closed form in
  the normal CDF and density, :func:`level_probability`), and the score is
  log((1 − γ) + γ ∏_j P(k_j | m_j)/P(k_j | 0)), the likelihood ratio of the mixture (treating Δ as
  given: the ten coordinates hardly move the norm of 7,850).

Both scores go through the same auditor (:func:`fedrepro.privacy.audit.joint_audit`, rates route;
any score gives a valid bound). The claim is the per-round target ε; with the quantizer the exact
ε is not computed (see the DP-FedPAQ audit).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from scipy import stats

from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import local, noise, quantizer
from fedrepro.experiments.privacy.audit_dpfedpaq import (
    AUDIT_VERIFY_RULES,
    CANARY_PIXEL,
    FedPAQAuditConfig,
    _direction,
    canary_problems,
    round_parameters,
)
from fedrepro.privacy.audit import exact_fields, joint_audit
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["ATTACKS", "QuantizedAuditConfig", "level_probability", "likelihood_scores", "scores",
           "run_quantized_audit", "load_quantized_audit"]

ATTACKS: tuple[str, ...] = ("linear", "likelihood")
_CHUNK = 1000


@dataclasses.dataclass(frozen=True)
class QuantizedAuditConfig(ExperimentConfig):
    """The quantized DP-FedPAQ round audited with both attacks: the DP-FedPAQ audit's setting
    at ``levels`` and the authors' sensitivity, ``trials`` releases per world."""

    part = "privacy"
    experiment = "audit-dpfedpaq-quantized"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_note = ("float32 local updates, float64 likelihoods: identical on one machine; across CPUs a "
                   "score that moves across a threshold moves the counts by one (bounds 25 % + 0.05)")

    profile: str = "paper"
    epsilons: tuple[float, ...] = (0.1, 1.0)
    sensitivity: str = "authors_code"
    levels: int = 10
    trials: int = 20_000
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if self.sensitivity not in noise.SENSITIVITIES:
            raise ValueError(f"sensitivity must be among {noise.SENSITIVITIES}, got {self.sensitivity!r}")
        if self.levels < 1:
            raise ValueError(f"levels must be >= 1, got {self.levels!r}")


def quick(cfg: QuantizedAuditConfig) -> QuantizedAuditConfig:
    """The quick profile: fewer trials."""
    return dataclasses.replace(cfg, profile="quick", trials=2_000)


def level_probability(k: np.ndarray, mean: np.ndarray, std: float, step: np.ndarray) -> np.ndarray:
    """P(level k) for v ~ N(``mean``, ``std``²) rounded at random to the grid ``step``·ℤ:
    E[max(0, 1 − |v/step − k|)] (broadcast over the arrays), in closed form:
    with a = k − mean/step and h = std/step, ∫ (1 − |hz − a|)₊ φ(z) dz split at z = a/h."""
    k, mean, step = (np.asarray(x, dtype=float) for x in (k, mean, step))
    if not std > 0:
        raise ValueError(f"std must be > 0, got {std!r}")
    a = k - mean / step
    h = std / step
    z_lo, z0, z_hi = (a - 1) / h, a / h, (a + 1) / h
    cdf, pdf = stats.norm.cdf, stats.norm.pdf
    lower = (1 - a) * (cdf(z0) - cdf(z_lo)) + h * (pdf(z_lo) - pdf(z0))
    upper = (1 + a) * (cdf(z_hi) - cdf(z0)) + h * (pdf(z_hi) - pdf(z0))
    return np.maximum(lower + upper, 1e-300)


def likelihood_scores(levels: np.ndarray, norms: np.ndarray, s: int, shift: np.ndarray, std: float,
                      gamma: float) -> np.ndarray:
    """The log-likelihood ratio log((1 − γ) + γ ∏_j P(k_j | m_j)/P(k_j | 0)) of each row of
    ``levels`` (the canary pixel's integer levels, shape (m, 10)) with grid Δ = ``norms``/s and
    the canary's step ``shift`` (shape (10,))."""
    step = (np.asarray(norms, dtype=float) / s)[:, None]
    k = np.asarray(levels, dtype=float)
    log_ratio = np.sum(np.log(level_probability(k, shift[None, :], std, step))
                       - np.log(level_probability(k, np.zeros_like(shift)[None, :], std, step)), axis=1)
    return np.logaddexp(np.log1p(-gamma), np.log(gamma) + log_ratio)


def scores(cfg: QuantizedAuditConfig, problem: SoftmaxProblem, epsilon: float,
           generator: np.random.Generator) -> dict[str, np.ndarray]:
    """Both attacks' scores of ``cfg.trials`` quantized round-0 messages (module docstring)."""
    base = FedPAQAuditConfig()
    params = round_parameters(base, problem, {"sensitivity": cfg.sensitivity, "epsilon": epsilon})
    b, lr, std, gamma = np.array([params["batch"]]), params["lr"], params["std"], params["gamma"]
    direction = _direction(base)
    share = base.canary_scale / np.hypot(base.canary_scale, 1.0)  # the pixel's share of the canary's gradient
    shift = lr * base.clip / params["batch"] * share * direction
    x0 = np.zeros((N_FEATURES, N_CLASSES))
    out = {name: np.empty(cfg.trials) for name in ATTACKS}
    for start in range(0, cfg.trials, _CHUNK):
        m = min(_CHUNK, cfg.trials - start)
        sched = local.subsample_batches(problem, np.zeros(m, dtype=np.int64), base.local_steps, np.repeat(b, m),
                                        generator)
        flat = local.local_updates(problem, x0, sched, lr, clip=base.clip).reshape(m, -1)
        noise.add_noise(flat, np.full(m, std), generator)
        norms, h = quantizer.encode(flat, cfg.levels, generator)
        pixel = h.reshape(m, N_FEATURES, N_CLASSES)[:, CANARY_PIXEL, :]
        out["linear"][start:start + m] = (norms.astype(np.float64)[:, None] * pixel / cfg.levels) @ direction
        out["likelihood"][start:start + m] = likelihood_scores(pixel, norms, cfg.levels, shift, std, gamma)
    return out


def run_quantized_audit(cfg: QuantizedAuditConfig) -> dict[str, Any]:
    """For each ε: both attacks' audits on the same messages (module docstring)."""
    check_profile(cfg.profile)
    d_out, d_in = canary_problems(FedPAQAuditConfig())
    rows = []
    for i, eps in enumerate(cfg.epsilons):
        s_out = scores(cfg, d_out, eps, rngs.generator(cfg, "out", i))
        s_in = scores(cfg, d_in, eps, rngs.generator(cfg, "in", i))
        for j, attack in enumerate(ATTACKS):
            res = joint_audit(s_out[attack], s_in[attack], delta=FedPAQAuditConfig().delta, gaussian=False,
                              confidence=cfg.confidence, seed=rngs.seed_sequence(cfg, "split", i, j))
            rows.append({"sensitivity": cfg.sensitivity, "epsilon": float(eps), "levels": cfg.levels,
                         "attack": attack, "claimed_epsilon": float(eps), **res, "delta": FedPAQAuditConfig().delta,
                         "trials": cfg.trials, "gaussian": False,
                         **exact_fields(res["empirical_epsilon_lower"], None, "round",
                                        "not computed: the quantizer's levels depend on the whole message, "
                                        "where the datasets differ beyond the canary's pixel")})
    return {"rows": rows}


def load_quantized_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = QuantizedAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_quantized_audit)
