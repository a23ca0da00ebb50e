"""Audit of DP-FedPAQ's per-round guarantee (Alg. 2): one device, one round, with a canary.

The mechanism audited is the library's own round of Alg. 2 for one scheduled device
(:func:`fedrepro.dpfedpaq.local.subsample_batches`, :func:`~fedrepro.dpfedpaq.local.local_updates`
with per-sample clipping, :func:`~fedrepro.dpfedpaq.noise.add_noise` with the std of
:func:`~fedrepro.dpfedpaq.noise.sensitivity` × :func:`~fedrepro.dpfedpaq.noise.noise_multipliers`,
and optionally :func:`~fedrepro.dpfedpaq.quantizer.quantize`): the message the server receives
in round 0 (global model x₀ = 0, step size η₀).

Neighbouring datasets (substitution, the paper's notion): D is device 0 of HET_MNIST(2)
(n = 635 records); D' replaces its first record by a **canary**, a record whose only non-zero
pixel is one that is 0 in every MNIST image (pixel 0) with value ``canary_scale``, so that its
per-sample gradient is clipped to norm C and lies (up to the bias column, 1/``canary_scale`` of
it) in the weights of that pixel, which no other record's gradient touches. The attack's score
is the released weights of that pixel projected on the direction the canary pushes them at
x₀ = 0 (−(p₀ − e_y)/‖p₀ − e_y‖, p₀ uniform): without the canary it is noise only; with it, the
canary's step −η₀C/b appears whenever the canary falls in the round's subsample (probability
γ = Eb/n). The auditor (:func:`fedrepro.privacy.audit.audit`) turns the scores into a lower
bound on the per-round ε at the paper's δ.

The claimed ε is the per-round target ε the noise is calibrated for (eq. 16 with subsampling
amplification, ``calibration="paper"``), with the valid sensitivity 2η₀EC (``rigorous``) or the
authors' C/n (``authors_code``).

The attacker sees the message only: which records the round's subsample holds (and in which
local step) stays hidden from it, which is what lets subsampling amplify the guarantee. The exact
ε of what the attack observes (:func:`exact_view_epsilon`): no other record ever touches the
canary's pixel weights, so the message restricted to them is noise alone on D, and on D' noise plus
the canary's step, of norm at most η₀C/b, in the fraction γ of the rounds whose subsample holds it;
the p-subsampled Gaussian mechanism's tight instance (:mod:`fedrepro.privacy.subsampled`, p = γ,
Δ = η₀C/b) has the largest ε over such views (joint convexity of the hockey-stick divergence), and
it is the ``exact_epsilon`` of each unquantized row (scope "round"). With the quantizer the levels
depend on the whole message, where the two datasets differ in more than the canary's pixel: its exact
ε is not computed (None, with the reason). Only the rates route is a bound here (a subsampled
mechanism's trade-off curve is not Gaussian).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq import local, noise, quantizer
from fedrepro.dpfedpaq.algorithms import learning_rate, private_batch_sizes
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.privacy.audit import exact_fields, joint_audit
from fedrepro.privacy.subsampled import subsampled_gaussian_epsilon
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["AUDIT_VERIFY_RULES", "FedPAQAuditConfig", "CANARY_PIXEL", "mechanisms", "canary_problems", "round_parameters",
           "exact_view_epsilon", "scores", "roc_curve", "run_fedpaq_audit",
           "load_fedpaq_audit"]

#: How ``make verify`` compares an audit (both audits' configs): the bounds and rates are counts
#: of thresholded float32 scores, and a kernel that moves a score by round-off across a
#: threshold moves a count by one, so they are compared loosely; the rest to ``verify_rtol``.
AUDIT_VERIFY_RULES: tuple[tuple[str, float | None, float | None], ...] = (
    ("result.*epsilon_lower", 0.25, 0.05), ("result.*mu_lower", 0.25, 0.05),
    ("result.*epsilon_from_mu", 0.25, 0.05), ("result.*_upper", 0.25, 0.01),
    ("result.*roc_*", 0.0, 0.01), ("result.*mu_estimate", 1e-4, 1e-6))

#: A pixel that is 0 in every MNIST training image (the top-left corner).
CANARY_PIXEL = 0
_CHUNK = 1000  # trials per vectorised batch (about 31 MB of float32 updates)


@dataclasses.dataclass(frozen=True)
class FedPAQAuditConfig(ExperimentConfig):
    """The DP-FedPAQ audit: the paper's setting (E = 10, γ = 0.2, C = 1, η₀ = 0.1, HET_MNIST(2)
    device 0, δ = 1e-4) at ε ∈ {0.1, 1}, both sensitivities, with and without the quantizer
    (s = 10 levels); ``trials`` releases per world and mechanism."""

    part = "privacy"
    experiment = "audit-dpfedpaq"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_note = ("float32 local updates and noise drawn in float64 then rounded: identical on one "
                   "machine; across CPUs a score that moves across a threshold moves the counts behind "
                   "the bounds and the ROC by one (bounds 25 % + 0.05, rates 0.01)")

    profile: str = "paper"
    epsilons: tuple[float, ...] = (0.1, 1.0)
    sensitivities: tuple[str, ...] = ("rigorous", "authors_code")
    levels: tuple[int, ...] = (0, 10)  # 0: no quantizer
    delta: float = 1e-4
    local_steps: int = 10
    sample_ratio: float = 0.2
    clip: float = 1.0
    lr0: float = 0.1
    n_digits: int = 2
    canary_label: int = 9
    canary_scale: float = 100.0
    trials: int = 20_000
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        for s in self.sensitivities:
            if s not in noise.SENSITIVITIES:
                raise ValueError(f"sensitivities must be among {noise.SENSITIVITIES}, got {s!r}")


def quick(cfg: FedPAQAuditConfig) -> FedPAQAuditConfig:
    """The quick profile: fewer trials."""
    return dataclasses.replace(cfg, profile="quick", trials=2_000)


def mechanisms(cfg: FedPAQAuditConfig) -> list[dict[str, Any]]:
    """The audited mechanisms: every (sensitivity, ε, quantizer levels) of ``cfg``."""
    return [{"sensitivity": s, "epsilon": float(e), "levels": int(q)}
            for s in cfg.sensitivities for e in cfg.epsilons for q in cfg.levels]


def canary_problems(cfg: FedPAQAuditConfig) -> tuple[SoftmaxProblem, SoftmaxProblem]:
    """(D, D'): device 0 of HET_MNIST(``n_digits``) alone, and the same with its first record
    replaced by the canary (pixel :data:`CANARY_PIXEL` = ``canary_scale``, bias 1, label
    ``canary_label``)."""
    full = het_mnist_problem(cfg.n_digits, with_test=False)
    lo, hi = int(full.offsets[0]), int(full.offsets[1])
    feats, labels = full.features[lo:hi].copy(), full.labels[lo:hi].copy()
    if np.any(feats[:, CANARY_PIXEL] != 0):
        raise ValueError(f"pixel {CANARY_PIXEL} is not 0 in every record of the device: no clean canary")
    out = SoftmaxProblem(feats, labels, np.array([0, feats.shape[0]]), full.mu)
    canary = np.zeros(N_FEATURES, dtype=np.float32)
    canary[CANARY_PIXEL] = cfg.canary_scale
    canary[-1] = 1.0
    feats_in, labels_in = feats.copy(), labels.copy()
    feats_in[0], labels_in[0] = canary, cfg.canary_label
    return out, SoftmaxProblem(feats_in, labels_in, np.array([0, feats.shape[0]]), full.mu)


def _direction(cfg: FedPAQAuditConfig) -> np.ndarray:
    """The canary's push on its pixel's weights at x₀ = 0: −(p₀ − e_y), normalised."""
    r = np.full(N_CLASSES, 1.0 / N_CLASSES)
    r[cfg.canary_label] -= 1.0
    return -r / np.linalg.norm(r)


def round_parameters(cfg: FedPAQAuditConfig, problem: SoftmaxProblem, mechanism: dict[str, Any]) -> dict[str, float]:
    """The round's batch size b, subsample fraction γ = Eb/n, step size η₀ and noise std
    under ``mechanism``, for the device of ``problem``."""
    n = problem.sizes
    b = private_batch_sizes(n, cfg.sample_ratio, cfg.local_steps)
    gamma = cfg.local_steps * b / n
    lr = float(learning_rate(0, cfg.local_steps, cfg.lr0))
    std = float((noise.noise_multipliers("paper", epsilon=mechanism["epsilon"], delta=cfg.delta, gamma=gamma)
                 * noise.sensitivity(mechanism["sensitivity"], lr=lr, local_steps=cfg.local_steps, clip=cfg.clip,
                                     batch_size=b, n_samples=n))[0])
    return {"batch": int(b[0]), "gamma": float(gamma[0]), "lr": lr, "std": std}


def exact_view_epsilon(cfg: FedPAQAuditConfig, params: dict[str, float]) -> float:
    """The exact ε at ``cfg.delta`` of the message's canary-pixel weights (module docstring): the
    γ-subsampled Gaussian mechanism with sensitivity η₀C/b and the round's noise std."""
    return float(subsampled_gaussian_epsilon(cfg.delta, params["gamma"], params["lr"] * cfg.clip / params["batch"],
                                             params["std"]))


def scores(cfg: FedPAQAuditConfig, problem: SoftmaxProblem, mechanism: dict[str, Any],
           generator: np.random.Generator) -> np.ndarray:
    """``cfg.trials`` attack scores of the round-0 message of the device of ``problem`` under
    ``mechanism`` (vectorised over trials in chunks of :data:`_CHUNK`)."""
    params = round_parameters(cfg, problem, mechanism)
    b, lr, std = np.array([params["batch"]]), params["lr"], params["std"]
    x0 = np.zeros((N_FEATURES, N_CLASSES))
    direction = _direction(cfg)
    out = np.empty(cfg.trials)
    for start in range(0, cfg.trials, _CHUNK):
        m = min(_CHUNK, cfg.trials - start)
        sched = local.subsample_batches(problem, np.zeros(m, dtype=np.int64), cfg.local_steps, np.repeat(b, m),
                                        generator)
        u = local.local_updates(problem, x0, sched, lr, clip=cfg.clip)  # (m, 785, 10) float32
        flat = u.reshape(m, -1)
        noise.add_noise(flat, np.full(m, std), generator)
        if mechanism["levels"]:
            flat = quantizer.quantize(flat, mechanism["levels"], generator)
        out[start:start + m] = flat.reshape(m, N_FEATURES, N_CLASSES)[:, CANARY_PIXEL, :] @ direction
    return out


def run_fedpaq_audit(cfg: FedPAQAuditConfig) -> dict[str, Any]:
    """Scores of both worlds and the audit of every mechanism (see the module docstring)."""
    check_profile(cfg.profile)
    d_out, d_in = canary_problems(cfg)
    rows = []
    for i, mech in enumerate(mechanisms(cfg)):
        s_out = scores(cfg, d_out, mech, rngs.generator(cfg, "out", i))
        s_in = scores(cfg, d_in, mech, rngs.generator(cfg, "in", i))
        res = joint_audit(s_out, s_in, delta=cfg.delta, gaussian=False, confidence=cfg.confidence,
                          seed=rngs.seed_sequence(cfg, "split", i))
        params = round_parameters(cfg, d_out, mech)
        exact = None if mech["levels"] else exact_view_epsilon(cfg, params)
        why = None if exact is not None else ("not computed: the quantizer's levels depend on the whole message, "
                                              "where the datasets differ beyond the canary's pixel")
        rows.append({**mech, "claimed_epsilon": mech["epsilon"], **res, "delta": cfg.delta, "trials": cfg.trials,
                     "gaussian": False, **params, **exact_fields(res["empirical_epsilon_lower"], exact, "round", why),
                     **roc_curve(s_out, s_in)})
    return {"mechanisms": rows}


def roc_curve(scores_out: np.ndarray, scores_in: np.ndarray, points: int = 129) -> dict[str, np.ndarray]:
    """The attack's ROC ("in" when score > t) at ``points`` thresholds: the quantiles of the
    pooled scores; false- and true-positive rates (for the chapter's figure)."""
    pooled = np.sort(np.concatenate([scores_out, scores_in]))
    t = np.quantile(pooled, np.linspace(0.0, 1.0, points))
    fpr = 1.0 - np.searchsorted(np.sort(scores_out), t, side="right") / scores_out.size
    tpr = 1.0 - np.searchsorted(np.sort(scores_in), t, side="right") / scores_in.size
    return {"roc_fpr": fpr, "roc_tpr": tpr}


def load_fedpaq_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = FedPAQAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_fedpaq_audit)
