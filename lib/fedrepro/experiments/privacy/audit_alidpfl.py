"""Audit of ALI-DPFL's clients' DP-SGD: one step, and one client round of τ steps with every
intermediate model observed (the white-box view of federated learning), with a canary record.

The mechanism audited is the library's DP-SGD (:func:`fedrepro.alidpfl.dpsgd.dpsgd_step`: Poisson
sampling at rate q, per-sample clipping at C, Gaussian noise σC on the sum, divided by the
expected batch B) on the ALI-DPFL CNN (:func:`fedrepro.alidpfl.models.make_cnn`, Fashion-MNIST
shape), with the paper's q = 0.015, σ = 1.1, C = 0.1, B = q·6000 = 90 (and, to show how tight an audit
of this implementation can be, q = 1: every record in every step, a Gaussian mechanism).

Neighbouring datasets (add/remove, the relation of the sampled Gaussian mechanism's RDP bound):
D holds ``others`` Fashion-MNIST training images (the adversary knows them: the threat model of
DP), D' adds a canary, an image of maximal contrast (every pixel +1 after scaling) with the label
the initial model finds least likely, so that its gradient is clipped to norm C. The attack:
at each observed model w_t the adversary computes the canary's gradient direction
d_t = ∇ℓ(w_t; canary)/‖∇ℓ(w_t; canary)‖ and scores the step w_t → w_{t+1} by
⟨w_t − w_{t+1}, d_t⟩·B/(ηC) (1 when the canary alone was sampled and the noise were 0), summed
over the round's steps. The claimed ε is the accountant's (:mod:`fedrepro.privacy`: RDP of the
sampled Gaussian at the orders of the paper, basic and improved conversions) for the steps
observed, at δ = 1e-5. The exact ε of the steps observed (:func:`exact_epsilon`) stands beside it:
the Gaussian mechanism's at q = 1, the privacy-loss distribution of the sampled Gaussian (dp-accounting,
through the mechanism's :meth:`~fedrepro.privacy.mechanism.SampledGaussian.dp_event`) otherwise.

The reported bound holds at the stated confidence jointly (:func:`fedrepro.privacy.audit.joint_audit`):
at q = 1 the mechanism is Gaussian and both routes count, each at half the error probability; at
q < 1 only the rates route is a bound.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from fedrepro.alidpfl.dpsgd import DPSGDSettings, dpsgd_step
from fedrepro.alidpfl.models import make_cnn
from fedrepro.alidpfl.setting import PAPER as ALIDPFL
from fedrepro.alidpfl.setting import scale_images
from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.data.datasets import load_fashion_mnist
from fedrepro.experiments.privacy.audit_dpfedpaq import AUDIT_VERIFY_RULES, roc_curve
from fedrepro.privacy import conversion
from fedrepro.privacy.audit import exact_fields, joint_audit
from fedrepro.privacy.gaussian import analytic_gaussian_epsilon
from fedrepro.privacy.mechanism import SampledGaussian

__all__ = ["DPSGDAuditConfig", "claimed_epsilon", "exact_epsilon", "canary_data", "round_scores", "run_dpsgd_audit",
           "load_dpsgd_audit"]

SHAPE = (1, 28, 28)


@dataclasses.dataclass(frozen=True)
class DPSGDAuditConfig(ExperimentConfig):
    """The audit of a client's DP-SGD in ALI-DPFL's setting: rounds of ``taus`` steps,
    ``trials`` rounds per world (see the module docstring)."""

    part = "privacy"
    experiment = "audit-alidpfl-dpsgd"
    verify_rtol = 1e-5
    verify_rules = AUDIT_VERIFY_RULES
    verify_note = ("float32 CNN gradients: identical on one machine; across CPUs a score that moves "
                   "across a threshold moves the counts behind the bounds and the ROC by one (bounds "
                   "25 % + 0.05, rates 0.01)")

    profile: str = "paper"
    # the audited rounds: sampling rate, steps, trials per world. q = 1 (every record in every
    # step, a plain Gaussian mechanism) shows how tight the audit can be on this implementation
    qs: tuple[float, ...] = (0.015, 0.015, 1.0)
    taus: tuple[int, ...] = (1, 5, 1)
    trials: tuple[int, ...] = (5_000, 1_000, 2_000)
    sigma: float = ALIDPFL.sigma
    clip: float = 0.1
    lr: float = 0.5
    expected_batch: float = 90.0
    delta: float = 1e-5
    others: int = 10
    model_seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if not len(self.qs) == len(self.taus) == len(self.trials):
            raise ValueError(f"qs, taus and trials must have the same length, got {self.qs}, {self.taus} "
                             f"and {self.trials}")


def quick(cfg: DPSGDAuditConfig) -> DPSGDAuditConfig:
    """The quick profile: a tenth of the trials."""
    return dataclasses.replace(cfg, profile="quick", trials=tuple(max(200, t // 10) for t in cfg.trials))


def claimed_epsilon(cfg: DPSGDAuditConfig, q: float, steps: int, conversion_name: str) -> float:
    """The accountant's ε after ``steps`` sampled-Gaussian steps at rate ``q`` (orders 2..64
    of the paper)."""
    orders = np.arange(2, 65)
    r = SampledGaussian(q, cfg.sigma, steps).rdp(orders)
    eps, _ = conversion.epsilon_from_rdp(r, orders, cfg.delta, conversion=conversion_name)  # (ε, best order)
    return float(eps)


def exact_epsilon(cfg: DPSGDAuditConfig, q: float, steps: int) -> float:
    """The exact ε at ``cfg.delta`` of ``steps`` adaptively composed DP-SGD steps (add/remove
    neighbours, sensitivity C, noise σC): at q = 1 the Gaussian mechanism with sensitivity √steps
    and noise σ (:func:`fedrepro.privacy.gaussian.analytic_gaussian_epsilon`); at q < 1 the
    privacy-loss distribution of the Poisson-sampled Gaussian event (dp-accounting's PLD
    accountant, pessimistic discretisation 1e-4: an upper estimate within about steps·1e-4)."""
    if q == 1.0:
        return float(analytic_gaussian_epsilon(cfg.delta, float(np.sqrt(steps)), cfg.sigma))
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(SampledGaussian(q, cfg.sigma, steps).dp_event())
    return float(acc.get_epsilon(cfg.delta))


def canary_data(cfg: DPSGDAuditConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_out, y_out, x_in, y_in): the first ``others`` Fashion-MNIST training images, and the
    same plus the canary (all pixels +1, the least likely label under the initial model)."""
    images, labels = load_fashion_mnist("train")
    x = torch.from_numpy(scale_images(images[: cfg.others]))
    y = torch.from_numpy(labels[: cfg.others].astype(np.int64))
    canary = torch.ones((1, *SHAPE), dtype=torch.float32)
    model = make_cnn(SHAPE, seed=cfg.model_seed)
    with torch.no_grad():
        label = int(torch.argmin(model(canary)[0]))
    return x, y, torch.cat([x, canary]), torch.cat([y, torch.tensor([label])])


def _canary_direction(model: torch.nn.Module, canary_x: torch.Tensor, canary_y: torch.Tensor) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(canary_x), canary_y).backward()
    g = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).detach()
    model.zero_grad(set_to_none=True)
    return g / torch.linalg.vector_norm(g)


def round_scores(cfg: DPSGDAuditConfig, q: float, tau: int, trials: int, x: torch.Tensor, y: torch.Tensor,
                 canary: tuple[torch.Tensor, torch.Tensor], generator: torch.Generator) -> np.ndarray:
    """``trials`` attack scores of a client round of ``tau`` DP-SGD steps on ``(x, y)`` from the
    initial model (module docstring); the canary's gradient direction is taken at every model."""
    settings = DPSGDSettings(q=q, clip=cfg.clip, sigma=cfg.sigma, lr=cfg.lr, expected_batch=cfg.expected_batch)
    model = make_cnn(SHAPE, seed=cfg.model_seed)
    w0 = parameters_to_vector(model.parameters()).detach().clone()
    directions = None
    scale = cfg.expected_batch / (cfg.lr * cfg.clip)
    out = np.empty(trials)
    for t in range(trials):
        vector_to_parameters(w0.clone(), model.parameters())
        score = 0.0
        for step in range(tau):
            before = parameters_to_vector(model.parameters()).detach().clone()
            if step == 0:  # the direction at w0 is the same in every trial
                if directions is None:
                    directions = _canary_direction(model, *canary)
                d = directions
            else:
                d = _canary_direction(model, *canary)
            dpsgd_step(model, x, y, settings, generator)
            after = parameters_to_vector(model.parameters()).detach()
            score += float(torch.dot(before - after, d)) * scale
        out[t] = score
    return out


def run_dpsgd_audit(cfg: DPSGDAuditConfig) -> dict[str, Any]:
    """Scores of both worlds and the audit for each round length (module docstring)."""
    check_profile(cfg.profile)
    torch.set_num_threads(1)
    x_out, y_out, x_in, y_in = canary_data(cfg)
    canary = (x_in[-1:], y_in[-1:])
    rows = []
    for i, (q, tau, trials) in enumerate(zip(cfg.qs, cfg.taus, cfg.trials, strict=True)):
        s_out = round_scores(cfg, q, tau, trials, x_out, y_out, canary, rngs.torch_generator(cfg, "out", i))
        s_in = round_scores(cfg, q, tau, trials, x_in, y_in, canary, rngs.torch_generator(cfg, "in", i))
        res = joint_audit(s_out, s_in, delta=cfg.delta, gaussian=q == 1.0, confidence=cfg.confidence,
                          seed=rngs.seed_sequence(cfg, "split", i))
        rows.append({"q": q, "tau": tau, "claimed_epsilon": claimed_epsilon(cfg, q, tau, "basic"),
                     "claimed_epsilon_improved": claimed_epsilon(cfg, q, tau, "improved"),
                     **res, "delta": cfg.delta, "trials": trials, "gaussian": q == 1.0, "sigma": cfg.sigma,
                     **exact_fields(res["empirical_epsilon_lower"], exact_epsilon(cfg, q, tau),
                                    "step" if tau == 1 else "round"),
                     **roc_curve(s_out, s_in)})
    return {"rounds": rows}


def load_dpsgd_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = DPSGDAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_dpsgd_audit)
