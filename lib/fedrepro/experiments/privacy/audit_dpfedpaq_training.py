"""Whole-training audit of DP-FedPAQ (Alg. 2): T composed rounds of one device, with a canary.

**Threat model.** The server is the adversary (the paper's threat model: record-level DP of the
messages a device sends to an untrusted server, spec §5.1). It broadcasts the global model of
every round and sees the device's T noisy messages. It broadcasts the same models in every
trial: those of one honest reference training of the device on D (the library's
:func:`fedrepro.dpfedpaq.algorithms.private_round`, x_{k+1} = x_k + message_k), with the weights
of the canary's pixel set to 0 (a server may broadcast any model, and the per-round guarantee must
hold whatever it sends). The federation is reduced to the canary's device alone (N = M = 1): the
device takes part in all T rounds, as it takes part in about KM/N = 10 of the paper's rounds.

**The mechanism** is the library's round of Alg. 2 for that device, unchanged
(:func:`~fedrepro.dpfedpaq.local.subsample_batches`, :func:`~fedrepro.dpfedpaq.local.local_updates`
with per-sample clipping to C, :func:`~fedrepro.dpfedpaq.noise.add_noise` of the std
:func:`~fedrepro.dpfedpaq.noise.noise_multipliers` × :func:`~fedrepro.dpfedpaq.noise.sensitivity`
at the round's η_k, eq. 16), no quantizer, with the canary of the single-round audit
(:func:`fedrepro.experiments.privacy.audit_dpfedpaq.canary_problems`: a record whose only non-zero
pixel, 0 in every MNIST image, has value 100) in place of the device's first record in D'.
Two settings (:data:`SETTINGS`): the paper's device (n = 635, E = 10, b = 12, γ = Eb/n ≈ 0.19) and a
reduced device of 5 records with E = 1 local step on b = 1 record (γ = 0.2), where the valid
sensitivity 2η_kEC is within a factor 2 of what the canary can move the message (η_kC).

**The score** is the exact one-dimensional reduction of the view. The canary's pixel weights of
message k are noise N(0, σ_k² I) alone on D (no other record touches them, and the broadcast
weights are 0); on D' they add, in the fraction γ of the rounds whose subsample holds the canary, its
step of norm at most η_kC/b, in the direction −(p_k − e_y) of its softmax residual at the broadcast
model. With s_k the projection on that direction divided by σ_k and μ_k = η_kC/(bσ_k), the score is
the log-likelihood ratio of the tight instance, Σ_k log(1 − γ + γ exp(μ_k s_k − μ_k²/2)).

**Exact ε.** The pair of views is dominated by the product over the rounds of the γ-subsampled
Gaussian mechanism's tight instance (p = γ, μ_k; joint convexity of the hockey-stick divergence, as
in the single-round audit), whose ε at δ_T = Tδ is ``exact_epsilon``
(:func:`fedrepro.privacy.composition.composed_epsilon_rounds`, scope "training"). For the valid
sensitivity, ``accounted_epsilon`` is the same composition at the calibrated Δ_k = 2η_kEC: an
upper bound on the whole training's ε over all neighbouring datasets.

**The claim.** The paper's guarantee is per round (spec §5.3, issue 4); over T rounds the guarantee
it implies is basic composition, (Tε, Tδ) (:func:`~fedrepro.privacy.composition.basic_composition`),
the ``claimed_epsilon`` audited here at δ_T = Tδ.

**The audit.** The threshold on the score is fixed before any training runs, from draws of the tight
instance alone (:func:`choose_threshold`), so every training is evaluated (no selection half):
the Clopper–Pearson bounds of the two error rates (:func:`fedrepro.privacy.audit.audit_counts`)
hold together at ``confidence``. Only this rates route is a bound (the trade-off curve of a
subsampled mechanism is not Gaussian). ``epsilon_ceiling`` is the largest bound ``trials`` trainings
could give (:func:`fedrepro.privacy.audit.epsilon_ceiling`): a claim above it could not be refuted.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import local, noise
from fedrepro.dpfedpaq.algorithms import learning_rate, private_batch_sizes, private_round
from fedrepro.experiments.privacy.audit_dpfedpaq import (
    AUDIT_VERIFY_RULES,
    CANARY_PIXEL,
    FedPAQAuditConfig,
    canary_problems,
)
from fedrepro.privacy.audit import audit_counts, epsilon_ceiling, exact_fields
from fedrepro.privacy.composition import basic_composition, composed_epsilon_rounds
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["MECHANISMS", "SETTINGS", "FedPAQTrainingAuditConfig", "device_problems", "training_plan",
           "llr_scores", "choose_threshold", "projections", "run_unit", "load_fedpaq_training_audit"]

#: The device of each setting: its records (None: the whole device 0 of HET_MNIST(2)) and E.
SETTINGS: dict[str, dict[str, Any]] = {
    "paper": {"records": None, "local_steps": 10},
    "reduced": {"records": 5, "local_steps": 1},
}

#: The audited trainings: name → (setting, sensitivity, calibration, per-round ε, rounds T).
MECHANISMS: dict[str, tuple[str, str, str, float, int]] = {
    "valid-exact-4": ("reduced", "rigorous", "exact", 4.0, 10),
    "valid-paper-1": ("reduced", "rigorous", "paper", 1.0, 10),
    "authors-1-T3": ("paper", "authors_code", "paper", 1.0, 3),
    "authors-1-T10": ("paper", "authors_code", "paper", 1.0, 10),
    "authors-0.1-T10": ("paper", "authors_code", "paper", 0.1, 10),
}
_CHUNK = 1000  # trials per vectorised batch (about 31 MB of float32 messages)


@dataclasses.dataclass(frozen=True)
class FedPAQTrainingAuditConfig(ExperimentConfig):
    """The whole-training audits of :data:`MECHANISMS`, ``trials`` trainings per world each, at the
    single-round audit's C, η₀, δ (per round), γ and canary."""

    part = "privacy"
    experiment = "audit-dpfedpaq-training"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_units: ClassVar[int | None] = 2
    verify_note = ("float32 local updates and noise drawn in float64 then rounded: identical on one "
                   "machine; across CPUs a score that moves across a threshold moves the counts behind "
                   "the bounds by one (bounds 25 % + 0.05, rates 0.01)")

    profile: str = "paper"
    mechanisms: tuple[str, ...] = tuple(MECHANISMS)
    trials: tuple[int, ...] = (20_000, 20_000, 2_000, 2_000, 2_000)
    delta: float = 1e-4
    sample_ratio: float = 0.2
    clip: float = 1.0
    lr0: float = 0.1
    confidence: float = 0.95
    model_draws: int = 200_000

    def __post_init__(self) -> None:
        check_profile(self.profile)
        unknown = sorted(set(self.mechanisms) - set(MECHANISMS))
        if unknown:
            raise ValueError(f"mechanisms must be among {tuple(MECHANISMS)}, got {unknown}")
        if len(self.trials) != len(self.mechanisms) or any(t < 8 for t in self.trials):
            raise ValueError(f"trials must give one count >= 8 per mechanism, got {self.trials}")


def quick(cfg: FedPAQTrainingAuditConfig) -> FedPAQTrainingAuditConfig:
    """The quick profile: a tenth of the trainings."""
    return dataclasses.replace(cfg, profile="quick", trials=tuple(t // 10 for t in cfg.trials))


def _base(cfg: FedPAQTrainingAuditConfig) -> FedPAQAuditConfig:
    """The single-round audit's config at this audit's C, η₀, δ and γ (its canary and device)."""
    return dataclasses.replace(FedPAQAuditConfig(), delta=cfg.delta, sample_ratio=cfg.sample_ratio, clip=cfg.clip,
                               lr0=cfg.lr0)


def device_problems(cfg: FedPAQTrainingAuditConfig, setting: str) -> tuple[SoftmaxProblem, SoftmaxProblem]:
    """(D, D') of ``setting``: the single-round audit's device without and with the canary (its
    first record), cut to the setting's first records."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {tuple(SETTINGS)}, got {setting!r}")
    out, inn = canary_problems(_base(cfg))
    n = SETTINGS[setting]["records"]
    if n is None:
        return out, inn
    return tuple(SoftmaxProblem(p.features[:n], p.labels[:n], np.array([0, n]), p.mu) for p in (out, inn))


def _direction(x: np.ndarray, label: int, scale: float) -> np.ndarray:
    """The canary's push on its pixel's weights at model ``x``: −(p − e_y) normalised, p the softmax
    of its logits (pixel value ``scale``, bias 1)."""
    logits = scale * x[CANARY_PIXEL] + x[-1]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    p[label] -= 1.0
    return -p / np.linalg.norm(p)


def training_plan(cfg: FedPAQTrainingAuditConfig, name: str) -> dict[str, Any]:
    """The broadcast models and each round's η_k, σ_k, μ_k and canary direction of training
    ``name`` (module docstring); the reference training draws from its own stream."""
    setting, mode, calibration, eps, rounds = MECHANISMS[name]
    d_out, d_in = device_problems(cfg, setting)
    steps = SETTINGS[setting]["local_steps"]
    n = d_out.sizes
    b = private_batch_sizes(n, cfg.sample_ratio, steps)
    gamma = float(steps * b[0] / n[0])
    mult = float(noise.noise_multipliers(calibration, epsilon=eps, delta=cfg.delta, gamma=gamma)[0])
    base = _base(cfg)
    ref = rngs.generator(cfg, name, "reference")
    x = np.zeros((N_FEATURES, N_CLASSES))
    models, lrs, stds, sens, dirs = [], [], [], [], []
    for k in range(rounds):
        lr = float(learning_rate(k, steps, cfg.lr0))
        delta_f = float(noise.sensitivity(mode, lr=lr, local_steps=steps, clip=cfg.clip, batch_size=b,
                                          n_samples=n)[0])
        std = mult * delta_f
        broadcast = x.copy()
        broadcast[CANARY_PIXEL] = 0.0
        models.append(broadcast)
        lrs.append(lr)
        stds.append(std)
        sens.append(delta_f)
        dirs.append(_direction(broadcast, base.canary_label, base.canary_scale))
        sched = local.subsample_batches(d_out, np.zeros(1, dtype=np.int64), steps, b, ref)
        x = private_round(d_out, x, sched, lr, clip=cfg.clip, q_levels=None, noise_std=np.array([std]),
                          rng_noise=ref, rng_quantizer=ref).x
    lrs_a, stds_a = np.array(lrs), np.array(stds)
    return {"setting": setting, "sensitivity": mode, "calibration": calibration, "epsilon_round": eps,
            "rounds": rounds, "records": int(n[0]), "local_steps": steps, "batch": int(b[0]), "gamma": gamma,
            "noise_multiplier": mult, "lrs": lrs_a, "stds": stds_a, "sensitivities": np.array(sens),
            "mus": lrs_a * cfg.clip / b[0] / stds_a, "models": models, "directions": dirs, "problems": (d_out, d_in)}


def llr_scores(plan: dict[str, Any], s: np.ndarray) -> np.ndarray:
    """The log-likelihood ratio Σ_k log(1 − γ + γ exp(μ_k s_k − μ_k²/2)) of the tight instance for
    normalised projections ``s`` (trials, T)."""
    mu, g = plan["mus"], plan["gamma"]
    return np.sum(np.logaddexp(np.log1p(-g), np.log(g) + mu * s - mu * mu / 2), axis=1)


def choose_threshold(plan: dict[str, Any], trials: int, delta: float, confidence: float, draws: int,
                     generator: np.random.Generator) -> float:
    """The threshold ("in" when the score exceeds it) whose bound (:func:`audit_counts`) at the
    expected counts of ``trials`` trainings per world is largest, the counts' rates estimated from
    ``draws`` draws per world of the tight instance (normalised projections N(0, 1), plus μ_k in
    the rounds that hold the canary, each with probability γ): fixed before any training runs."""
    rounds, mu, g = plan["rounds"], plan["mus"], plan["gamma"]
    s_out = llr_scores(plan, generator.standard_normal((draws, rounds)))
    s_in = llr_scores(plan, generator.standard_normal((draws, rounds)) + mu * (generator.random((draws, rounds)) < g))
    grid = np.unique(np.quantile(np.concatenate([s_out, s_in]), np.linspace(0.0, 1.0, 2001)))
    fpr = 1.0 - np.searchsorted(np.sort(s_out), grid, side="right") / draws
    fnr = np.searchsorted(np.sort(s_in), grid, side="right") / draws
    fp, fn = np.rint(trials * fpr).astype(np.int64), np.rint(trials * fnr).astype(np.int64)
    values = [audit_counts(int(a), int(b), trials, delta=delta, confidence=confidence) for a, b in zip(fp, fn, strict=True)]
    return float(grid[int(np.argmax(values))])


def projections(cfg: FedPAQTrainingAuditConfig, plan: dict[str, Any], problem: SoftmaxProblem, trials: int,
                name: str, world: str) -> np.ndarray:
    """(``trials``, T) normalised projections s_k of the messages of ``trials`` trainings of
    ``problem`` (vectorised over trials in chunks of :data:`_CHUNK`, each chunk its own stream)."""
    steps, b = plan["local_steps"], np.array([plan["batch"]])
    out = np.empty((trials, plan["rounds"]))
    for c, start in enumerate(range(0, trials, _CHUNK)):
        m = min(_CHUNK, trials - start)
        gen = rngs.generator(cfg, name, world, c)
        for k in range(plan["rounds"]):
            sched = local.subsample_batches(problem, np.zeros(m, dtype=np.int64), steps, np.repeat(b, m), gen)
            u = local.local_updates(problem, plan["models"][k], sched, plan["lrs"][k], clip=cfg.clip)
            noise.add_noise(u.reshape(m, -1), np.full(m, plan["stds"][k]), gen)
            out[start:start + m, k] = u[:, CANARY_PIXEL, :] @ plan["directions"][k] / plan["stds"][k]
    return out


def run_unit(cfg: FedPAQTrainingAuditConfig, name: str) -> dict[str, Any]:
    """The audit of training ``name``: scores of both worlds, the bound, the claim, the exact and the
    accounted ε (module docstring)."""
    check_profile(cfg.profile)
    trials = cfg.trials[cfg.mechanisms.index(name)]
    plan = training_plan(cfg, name)
    d_out, d_in = plan["problems"]
    rounds = plan["rounds"]
    claim, delta_t = basic_composition(plan["epsilon_round"], cfg.delta, rounds)
    threshold = choose_threshold(plan, trials, delta_t, cfg.confidence, cfg.model_draws,
                                 rngs.generator(cfg, name, "threshold"))
    s_out = llr_scores(plan, projections(cfg, plan, d_out, trials, name, "out"))
    s_in = llr_scores(plan, projections(cfg, plan, d_in, trials, name, "in"))
    fp, fn = int(np.sum(s_out > threshold)), int(np.sum(s_in <= threshold))
    lower = audit_counts(fp, fn, trials, delta=delta_t, confidence=cfg.confidence)
    res = {"empirical_epsilon_lower": lower, "epsilon_lower_rates": lower, "epsilon_lower_mu": None,
           "mu_lower": None, "confidence": cfg.confidence, "route_confidence": cfg.confidence,
           "routes": ["rates"], "threshold": threshold, "false_positives": fp, "false_negatives": fn,
           "evaluated": trials, "epsilon_ceiling": epsilon_ceiling(trials, delta=delta_t, confidence=cfg.confidence)}
    gammas = [plan["gamma"]] * rounds
    exact = composed_epsilon_rounds(delta_t, gammas, plan["mus"])
    valid = plan["sensitivity"] in noise.VALID_SENSITIVITIES
    accounted = (composed_epsilon_rounds(delta_t, gammas, plan["sensitivities"] / plan["stds"]) if valid
                 else None)
    keep = {k: v for k, v in plan.items() if k not in ("models", "directions", "problems")}
    return {"name": name, "paper": "DP-FedPAQ", **keep, "claimed_epsilon_round": plan["epsilon_round"],
            "delta_round": cfg.delta, "claimed_epsilon": claim, "claim_rule": "basic composition (T·ε, T·δ)",
            "valid_sensitivity": valid, "accounted_epsilon": accounted, **res, "delta": delta_t,
            "trials": trials, "gaussian": False,
            "score_mean_out": float(np.mean(s_out)), "score_mean_in": float(np.mean(s_in)),
            **exact_fields(res["empirical_epsilon_lower"], exact, "training")}


def _combine(cfg: FedPAQTrainingAuditConfig, units: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"rows": [units[name] for name in cfg.mechanisms]}


def load_fedpaq_training_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = FedPAQTrainingAuditConfig()
    return run_units(quick(cfg) if profile == "quick" else cfg, list(cfg.mechanisms), run_unit, combine=_combine)
