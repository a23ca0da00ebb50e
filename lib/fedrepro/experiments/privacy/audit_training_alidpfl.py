"""Whole-training audit of DPFL / ALI-DPFL's DP-SGD: every step a client takes over a run at the
paper's budget, observed by a white-box auditor, with a gradient canary.

**The mechanism.** A client of DPFL / ALI-DPFL (Ling et al., Alg. 1 lines 7–12, Alg. 2) runs
DP-SGD steps: Poisson sampling at rate q, per-sample clipping at C, Gaussian noise σC on the sum,
division by the expected batch B, the step w ← w − η g̃ (Eq. (3) of the paper; reference notes
§3). At the paper's q = 0.015, σ = 1.1 and δ = 1e-5, the accountant of §VI-B pays
``steps`` = R_c = 79 local iterations for ε = 1.55 (Table II, R_s = 2R_c = 158 rounds;
:func:`fedrepro.alidpfl.budget.privacy_iterations`, the stored ``alidpfl-iteration-counts``): a
whole training with τ = 1 is 79 DP-SGD steps of each client, and the paper claims ε = 1.55 for it.

**Threat model.** White-box, the strongest the accountant's bound covers: the auditor sees the
client's model after every one of its DP-SGD steps (with τ = 1, every update the client sends;
the server's averages are post-processing), knows every other record, and inserts one canary
whose gradient it chooses (a *gradient canary*, Nasr et al. 2021, 2023: the canary record's
per-sample gradient is replaced by a fixed vector G·d of norm G = ``canary_norm_factor``·C ≥ C in a
direction d drawn once at random). The canary joins each step's batch by the mechanism's own
Poisson sampling at rate q; in the world without it, it is absent from every step.
Neighbouring datasets: add/remove (the relation of the sampled Gaussian's RDP bound).

**The attack.** Step t releases w_t → w_{t+1}; the auditor forms
s_t = ⟨w_t − w_{t+1}, d⟩·B/(ησC), the step's noisy clipped sum projected on d in units of the
noise: N(0, 1) plus the other records' projections (small: d is a random direction) without the
canary, plus 1/σ when the canary was sampled. It scores a run by the log-likelihood ratio of the
composed one-dimensional mechanism,

    L = Σ_t log(1 − q + q·exp(μ s_t − μ²/2)),   μ = 1/σ,

the Neyman–Pearson statistic of the reduction below (the sum Σ_t s_t of Nasr et al. weighs a
step that did not sample the canary as much as one that did; L does not).

**Two records** (``scope: "training"``):

* ``"dpsgd"``: the library's DP-SGD, run ``trials`` times per world, stacked over runs
  (:func:`stacked_dpsgd_scores`): Poisson sampling by uniforms compared with q, clipping by
  :func:`fedrepro.privacy.mechanism.clip_factors`, noise by
  :func:`fedrepro.privacy.mechanism.add_gaussian_noise_`, in the draw order of
  :func:`fedrepro.alidpfl.dpsgd.dpsgd_step` (a test pins one run of the stacked engine to
  ``dpsgd_step`` on the same model and draws). The model is reduced, as stated: softmax
  regression on 7×7 average-pooled Fashion-MNIST images (500 parameters) and a client of
  ``records`` images (the noise in the other 499 directions is drawn and added but does not
  touch the score; the privacy guarantee does not depend on the model).
* ``"reduction"``: the exact one-dimensional reduction of the composed mechanism: s_t ~ N(0, 1)
  without the canary and N(μ·b_t, 1), b_t ~ Bernoulli(q), with it, ``reduction_trials`` draws of
  the 79 steps per world; how tight an audit of this scope can get with the optimal attack and
  many trials.

**The audit.** One threshold test on L, fixed before the audited draws from a pilot of the
reduction (its own stream, ``pilot_trials`` per world: the threshold whose bound at the pilot's
rates scaled to the audit's trial count is largest); every audited draw is evaluated, and the
Clopper–Pearson bounds of the two rates hold together at ``confidence``
(:func:`fedrepro.privacy.audit.audit_counts`; the mechanism is not Gaussian at q < 1, so the
rates route is the only one). The exact ε of the whole training is the privacy-loss distribution
of 79 Poisson-sampled Gaussian steps (:func:`fedrepro.experiments.privacy.audit_alidpfl.exact_epsilon`),
the ceiling the largest bound ``trials`` per world could report.

The runs are units of :func:`fedrepro.core.cache.run_units` (chunks of runs of one world),
resumable and spot-checked by ``make verify``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from fedrepro.alidpfl.budget import privacy_iterations
from fedrepro.alidpfl.setting import PAPER as ALIDPFL
from fedrepro.alidpfl.setting import scale_images
from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.data.datasets import load_fashion_mnist
from fedrepro.experiments.privacy.audit_alidpfl import DPSGDAuditConfig, claimed_epsilon, exact_epsilon
from fedrepro.privacy import mechanism
from fedrepro.privacy.audit import audit_counts, epsilon_ceiling, exact_fields

__all__ = ["TrainingAuditConfig", "RECORDS", "POOL", "training_steps", "log_likelihood_ratio", "reduction_scores",
           "client_data", "canary_direction", "stacked_dpsgd_scores", "choose_threshold", "units",
           "run_unit", "combine", "run_training_audit", "load_training_audit"]

#: The records of the audit (module docstring): name → what is audited.
RECORDS: dict[str, str] = {
    "dpsgd": "the library's DP-SGD (softmax regression, reduced client), every step observed",
    "reduction": "exact one-dimensional reduction of the composed sampled Gaussian",
}
#: Average pooling of the 28×28 images (7×7 inputs, 10·49 + 10 = 500 parameters).
POOL = 4
_CLASSES = 10
_PILOT_CHUNK = 100_000


@dataclasses.dataclass(frozen=True)
class TrainingAuditConfig(ExperimentConfig):
    """The whole-training audit of DPFL / ALI-DPFL at the paper's budget (module docstring)."""

    part = "privacy"
    experiment = "audit-alidpfl-training"
    verify_rtol = 1e-6
    verify_units = 2
    verify_rules = (("*false_*", 0.0, 2.0), ("*above", 0.0, 2.0), ("*score_mean*", 1e-4, 1e-6))
    verify_note = ("float32 updates projected in float64: identical on one machine; across CPUs a score "
                   "that moves across the threshold moves a count by one (counts compared to ±2)")

    profile: str = "paper"
    epsilon: float = 1.55          # the paper's budget whose R_c is audited (Table II, R_s = 2R_c = 158)
    q: float = ALIDPFL.q
    sigma: float = ALIDPFL.sigma
    clip: float = ALIDPFL.clip
    lr: float = ALIDPFL.eta
    delta: float = ALIDPFL.delta
    records: int = 100
    canary_norm_factor: float = 2.0
    trials: int = 200_000          # stacked DP-SGD runs per world
    chunk: int = 10_000            # runs per unit
    reduction_trials: int = 10_000_000
    reduction_chunk: int = 1_000_000
    pilot_trials: int = 2_000_000
    model_seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        for name in ("trials", "chunk", "reduction_trials", "reduction_chunk", "pilot_trials", "records"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 4:
                raise ValueError(f"{name} must be an integer >= 4, got {value!r}")
        if self.trials % self.chunk or self.reduction_trials % self.reduction_chunk:
            raise ValueError(f"chunk and reduction_chunk must divide trials and reduction_trials, got "
                             f"{self.chunk}, {self.reduction_chunk}")
        if not self.canary_norm_factor >= 1.0:
            raise ValueError(f"canary_norm_factor must be >= 1 (a canary of norm >= C), got {self.canary_norm_factor!r}")


def quick(cfg: TrainingAuditConfig) -> TrainingAuditConfig:
    """The quick profile: 4,000 DP-SGD runs and 200,000 reduction draws per world."""
    return dataclasses.replace(cfg, profile="quick", trials=4_000, chunk=2_000, reduction_trials=200_000,
                               reduction_chunk=100_000, pilot_trials=200_000)


def training_steps(cfg: TrainingAuditConfig) -> int:
    """R_c: the DP-SGD steps the paper's accountant pays for ``cfg.epsilon`` (§VI-B)."""
    return privacy_iterations(cfg.epsilon, cfg.q, cfg.sigma, cfg.delta)


def log_likelihood_ratio(s: np.ndarray, q: float, mu: float) -> np.ndarray:
    """L = Σ_t log(1 − q + q·exp(μ s_t − μ²/2)) over the last axis of ``s`` (module docstring)."""
    return np.sum(np.log1p(q * np.expm1(mu * np.asarray(s, dtype=np.float64) - mu * mu / 2)), axis=-1)


def reduction_scores(n: int, steps: int, q: float, mu: float, canary: bool, rng: np.random.Generator) -> np.ndarray:
    """``n`` scores L of the one-dimensional reduction: ``steps`` draws N(μ b_t, 1), b_t ~
    Bernoulli(q) with the canary, b_t = 0 without."""
    out = np.empty(n)
    for s in range(0, n, _PILOT_CHUNK):
        m = min(_PILOT_CHUNK, n - s)
        x = rng.standard_normal((m, steps))
        if canary:
            x += mu * (rng.random((m, steps)) < q)
        out[s:s + m] = log_likelihood_ratio(x, q, mu)
    return out


def client_data(cfg: TrainingAuditConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The client's ``records`` first Fashion-MNIST training images (scaled to [−1, 1], 1×28×28)
    and labels."""
    images, labels = load_fashion_mnist("train")
    x = torch.from_numpy(scale_images(images[: cfg.records]))
    return x, torch.from_numpy(labels[: cfg.records].astype(np.int64))


def _features(x: torch.Tensor) -> torch.Tensor:
    return F.avg_pool2d(x, POOL).flatten(1)


def canary_direction(cfg: TrainingAuditConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The unit direction d of the canary's gradient, split as (weight (10, 49), bias (10,))."""
    dim = (28 // POOL) ** 2
    g = rngs.generator(cfg, "direction").standard_normal(_CLASSES * (dim + 1))
    g /= np.linalg.norm(g)
    d = torch.from_numpy(g.astype(np.float32))
    return d[: _CLASSES * dim].reshape(_CLASSES, dim), d[_CLASSES * dim:]


def initial_parameters(cfg: TrainingAuditConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The model every run starts from: weights and biases uniform on ±1/√49 (PyTorch's default
    bounds), drawn from the config's ``model_seed`` stream."""
    dim = (28 // POOL) ** 2
    gen = rngs.torch_generator(cfg, "model", cfg.model_seed)
    bound = 1.0 / math.sqrt(dim)
    w = (torch.rand((_CLASSES, dim), generator=gen) * 2 - 1) * bound
    b = (torch.rand((_CLASSES,), generator=gen) * 2 - 1) * bound
    return w, b


def stacked_dpsgd_scores(cfg: TrainingAuditConfig, runs: int, canary: bool, generator: torch.Generator,
                         steps: int | None = None, sigma: float | None = None,
                         trajectory: bool = False) -> np.ndarray | tuple[torch.Tensor, torch.Tensor]:
    """``runs`` independent DP-SGD trainings of ``steps`` steps (default :func:`training_steps`),
    stacked, with (``canary``) or without the gradient canary; returns each run's score L.

    Each step, per run: ``records`` (+1 with the canary, last) uniforms in float64 from
    ``generator`` compared with q (Poisson sampling), the sampled records' per-sample gradients
    (softmax regression: (p − e_y) ⊗ (a, 1)) clipped by :func:`mechanism.clip_factors`, the
    canary's gradient G·d clipped the same way, noise σC by :func:`mechanism.add_gaussian_noise_`
    on the weight sums then the bias sums, division by B = q·records, w ← w − η g̃. With
    ``runs`` = 1 the draws are those of :func:`fedrepro.alidpfl.dpsgd.dpsgd_step` on the same
    client. ``sigma`` overrides σ (a miscalibrated mechanism, for the tests); ``trajectory``
    returns the final (weights, biases) instead of the scores."""
    steps = training_steps(cfg) if steps is None else steps
    sigma = cfg.sigma if sigma is None else sigma
    x, y = client_data(cfg)
    a = _features(x)                                                    # (n, 49)
    a_sq = a.square().sum(1) + 1.0
    onehot = F.one_hot(y, _CLASSES).to(torch.float32)
    dw, db = canary_direction(cfg)
    g_norm = cfg.canary_norm_factor * cfg.clip
    c_factor = mechanism.clip_factors(torch.tensor([g_norm], dtype=torch.float32), cfg.clip)[0]
    cw, cb = dw * g_norm * c_factor, db * g_norm * c_factor            # the canary's clipped gradient
    w0, b0 = initial_parameters(cfg)
    w = w0.expand(runs, -1, -1).clone()
    b = b0.expand(runs, -1).clone()
    n = x.shape[0]
    divisor = cfg.q * n
    std = sigma * cfg.clip
    dvec = torch.cat([dw.reshape(-1), db]).to(torch.float64)
    mu = 1.0 / cfg.sigma
    score = torch.zeros(runs, dtype=torch.float64)
    for _ in range(steps):
        u = torch.rand((runs, n + int(canary)), generator=generator, dtype=torch.float64)
        mask = u < cfg.q
        rep, rec = torch.nonzero(mask[:, :n], as_tuple=True)
        delta = torch.softmax(torch.einsum("kcd,kd->kc", w[rep], a[rec]) + b[rep], dim=1) - onehot[rec]
        c = mechanism.clip_factors(torch.sqrt(delta.square().sum(1) * a_sq[rec]), cfg.clip)
        cd = delta * c[:, None]
        gw = torch.zeros_like(w).index_add_(0, rep, cd[:, :, None] * a[rec][:, None, :])
        gb = torch.zeros_like(b).index_add_(0, rep, cd)
        if canary:
            hit = mask[:, n].to(torch.float32)
            gw += hit[:, None, None] * cw
            gb += hit[:, None] * cb
        mechanism.add_gaussian_noise_(gw, std, generator)
        mechanism.add_gaussian_noise_(gb, std, generator)
        new_w, new_b = w - cfg.lr * gw / divisor, b - cfg.lr * gb / divisor
        # the released update, projected on d in units of the noise (module docstring)
        released = torch.cat([(w - new_w).reshape(runs, -1), b - new_b], dim=1).to(torch.float64)
        s = (released @ dvec) * divisor / (cfg.lr * cfg.sigma * cfg.clip)
        score += torch.log1p(cfg.q * torch.expm1(mu * s - mu * mu / 2))
        w, b = new_w, new_b
    if trajectory:
        return w, b
    return score.numpy()


@functools.lru_cache(maxsize=8)
def _threshold(cfg: TrainingAuditConfig, trials: int) -> float:
    return choose_threshold(cfg, trials)


def choose_threshold(cfg: TrainingAuditConfig, trials: int) -> float:
    """The threshold on L ("in" above it) whose bound, at the rates of a pilot of the reduction
    (``pilot_trials`` per world, its own stream) scaled to ``trials`` per world, is largest; no
    audited draw is used."""
    steps, mu = training_steps(cfg), 1.0 / cfg.sigma
    out = np.sort(reduction_scores(cfg.pilot_trials, steps, cfg.q, mu, False, rngs.generator(cfg, "pilot", "out")))
    inn = np.sort(reduction_scores(cfg.pilot_trials, steps, cfg.q, mu, True, rngs.generator(cfg, "pilot", "in")))
    grid = np.quantile(out, 1.0 - np.logspace(np.log10(20.0 / cfg.pilot_trials), -0.3, 300))
    best, best_t = -1.0, float(grid[0])
    for t in grid:
        fp = round(trials * (out.size - np.searchsorted(out, t, side="right")) / out.size)
        fn = round(trials * np.searchsorted(inn, t, side="right") / inn.size)
        value = audit_counts(int(fp), int(fn), trials, delta=cfg.delta, confidence=cfg.confidence)
        if value > best:
            best, best_t = value, float(t)
    return best_t


def units(cfg: TrainingAuditConfig) -> list[str]:
    """One unit per chunk of runs of one world and record: ``<record>-<world>-<k>``."""
    names = []
    for record, total, chunk in (("dpsgd", cfg.trials, cfg.chunk), ("reduction", cfg.reduction_trials,
                                                                    cfg.reduction_chunk)):
        names += [f"{record}-{world}-{k:03d}" for world in ("out", "in") for k in range(total // chunk)]
    return names


def run_unit(cfg: TrainingAuditConfig, unit: str) -> dict[str, Any]:
    """One chunk: the number of its scores above the record's threshold (false positives
    without the canary, or true positives with it) and their mean."""
    torch.set_num_threads(1)
    record, world, k = unit.rsplit("-", 2)
    canary = world == "in"
    if record == "dpsgd":
        trials, chunk = cfg.trials, cfg.chunk
        scores = stacked_dpsgd_scores(cfg, chunk, canary, rngs.torch_generator(cfg, record, world, int(k)))
    elif record == "reduction":
        trials, chunk = cfg.reduction_trials, cfg.reduction_chunk
        scores = reduction_scores(chunk, training_steps(cfg), cfg.q, 1.0 / cfg.sigma, canary,
                                  rngs.generator(cfg, record, world, int(k)))
    else:
        raise ValueError(f"unit must name a record among {tuple(RECORDS)}, got {unit!r}")
    t = _threshold(cfg, trials)
    return {"above": int(np.sum(scores > t)), "runs": int(chunk), "score_mean": float(np.mean(scores))}


def combine(cfg: TrainingAuditConfig, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The two records (module docstring) from the units' counts."""
    steps = training_steps(cfg)
    audit_cfg = DPSGDAuditConfig(sigma=cfg.sigma, delta=cfg.delta)
    exact = exact_epsilon(audit_cfg, cfg.q, steps)
    rows = []
    for record, trials in (("dpsgd", cfg.trials), ("reduction", cfg.reduction_trials)):
        parts = {w: [v for u, v in done.items() if u.startswith(f"{record}-{w}-")] for w in ("out", "in")}
        fp = sum(v["above"] for v in parts["out"])
        fn = trials - sum(v["above"] for v in parts["in"])
        lower = audit_counts(fp, fn, trials, delta=cfg.delta, confidence=cfg.confidence)
        rows.append({"record": record, "mechanism": RECORDS[record], "reduction": record == "reduction",
                     "threat_model": "white-box: every DP-SGD update of the canary's client observed; "
                                     "gradient canary, Poisson-sampled at q",
                     "steps": steps, "q": cfg.q, "sigma": cfg.sigma, "clip": cfg.clip, "delta": cfg.delta,
                     "claimed_epsilon": cfg.epsilon,
                     "claimed_epsilon_accountant": claimed_epsilon(audit_cfg, cfg.q, steps, "basic"),
                     "claimed_epsilon_improved": claimed_epsilon(audit_cfg, cfg.q, steps, "improved"),
                     "trials": trials, "evaluated": trials, "threshold": _threshold(cfg, trials),
                     "false_positives": fp, "false_negatives": fn, "confidence": cfg.confidence,
                     "route_confidence": cfg.confidence, "routes": ["rates"], "gaussian": False,
                     "score_mean_out": float(np.mean([v["score_mean"] for v in parts["out"]])),
                     "score_mean_in": float(np.mean([v["score_mean"] for v in parts["in"]])),
                     "empirical_epsilon_lower": lower,
                     "epsilon_ceiling": epsilon_ceiling(trials, delta=cfg.delta, confidence=cfg.confidence),
                     **exact_fields(lower, exact, "training")})
    return {"rows": rows, "steps": steps}


def run_training_audit(cfg: TrainingAuditConfig) -> dict[str, Any]:
    """The audit through :func:`fedrepro.core.cache.run_units` (resumable, one unit per chunk)."""
    return run_units(cfg, units(cfg), run_unit, combine=combine)


def load_training_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = TrainingAuditConfig()
    return run_training_audit(quick(cfg) if profile == "quick" else cfg)
