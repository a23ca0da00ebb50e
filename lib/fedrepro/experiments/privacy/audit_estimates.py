"""Audit of ALI-DPFL's τ* estimates: what the server learns about one record from a client's
report of F_i and ∇F_i at the global model ŵ (§IV-B), a channel the paper's accounting omits.

Every round, an ALI-DPFL client reports F_i(ŵ_i), ∇F_i(ŵ_i), F_i(ŵ) and ∇F_i(ŵ) so that the
server can estimate ρ, β and ξ (:mod:`fedrepro.alidpfl.training`, reference §7 item 6). The
reports are computed on private records with no clipping and no noise. Two readings of the
records they use:

* ``"paper"``: the paper's F_i, the mean loss over all of the client's records;
* ``"library"``: the library's estimate, the mean over a random subset of ``estimate_samples``
  records drawn once per run (as :mod:`fedrepro.alidpfl.training` draws it: the first
  ``estimate_samples`` of a uniform permutation), so the canary is in it with probability
  ``estimate_samples``/(|D_i| + 1).

Neighbouring datasets (add/remove): D holds ``client_records`` Fashion-MNIST training images
(the adversary knows them, as the threat model of DP allows), D' adds the canary of the
DP-SGD audit (:func:`fedrepro.experiments.privacy.audit_alidpfl.canary_data`). The reports are
taken at the initial model (any ŵ the server knows serves the attack).

The attack is a least-squares one on the reported gradient ∇F_i(ŵ): the adversary computes
every known record's gradient restricted to the network's head (the output layer's weights and
bias, the hidden layer's bias and ``head_columns`` columns of its weights, the ones of largest
input variance; more coordinates than records, so the records' gradients are linearly
independent), and scores a report by the coefficient of the canary when |S|·∇F_i(ŵ) is
regressed on those gradients: 1 when the canary is among the report's records, 0 when not, up
to round-off. The report is linear in the records it averages, so the score of a report is the
sum, over its records, of each record's contribution (a float64 dot product with the canary's
row of the pseudo-inverse); the tests check it against the score of the float32 report itself.

The claimed ε is the accountant's for the round the reports follow (one DP-SGD step at the
paper's q = 0.015, σ = 1.1, basic and improved conversions, δ = 1e-5): the paper counts the
reports as free. Their exact ε is infinite under both readings: the paper's report reveals the
canary every time, the library's with probability 512/(|D_i| + 1) > δ, and a mechanism that
reveals a record with probability p > δ is (ε, δ)-DP for no finite ε (``exact_epsilon`` None,
with that reason). Scope "step": one round's reports.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.linalg
import torch
from torch.func import grad, vmap
from torch.nn import functional as F

from fedrepro.alidpfl.models import make_cnn
from fedrepro.alidpfl.setting import PAPER as ALIDPFL
from fedrepro.core import rng as rngs
from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.privacy.audit_alidpfl import SHAPE, DPSGDAuditConfig, canary_data, claimed_epsilon
from fedrepro.experiments.privacy.audit_dpfedpaq import AUDIT_VERIFY_RULES, roc_curve
from fedrepro.privacy.audit import exact_fields, joint_audit

__all__ = ["EstimatesAuditConfig", "READINGS", "features", "head_columns", "head_block", "head_gradients", "canary_row", "record_contributions",
           "report_score", "run_estimates_audit", "load_estimates_audit"]

#: The readings of the records the reports use (module docstring).
READINGS: tuple[str, ...] = ("paper", "library")
_CHUNK = 500  # records per vectorised per-sample gradient batch


@dataclasses.dataclass(frozen=True)
class EstimatesAuditConfig(ExperimentConfig):
    """The audit of the τ* estimates' reports: ``trials`` runs per world and reading."""

    part = "privacy"
    experiment = "audit-alidpfl-estimates"
    verify_rtol = 1e-6
    verify_rules = AUDIT_VERIFY_RULES
    verify_note = ("float32 CNN gradients and a float64 least-squares solve: identical on one machine; "
                   "across CPUs the scores move by round-off (about 1e-5, against a separation of 1), the "
                   "bounds and the ROC are compared loosely like every audit (25 % + 0.05, rates 0.01)")

    profile: str = "paper"
    readings: tuple[str, ...] = READINGS
    client_records: int = 6_000
    estimate_samples: int = 512
    head_columns: int = 2
    trials: int = 100_000
    q: float = ALIDPFL.q
    sigma: float = ALIDPFL.sigma
    delta: float = ALIDPFL.delta
    model_seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_profile(self.profile)
        unknown = sorted(set(self.readings) - set(READINGS))
        if unknown:
            raise ValueError(f"readings must be among {READINGS}, got {unknown}")
        if not 1 <= self.estimate_samples <= self.client_records:
            raise ValueError(f"estimate_samples must lie in [1, client_records = {self.client_records}], "
                             f"got {self.estimate_samples!r}")


def quick(cfg: EstimatesAuditConfig) -> EstimatesAuditConfig:
    """The quick profile: a client of 600 records (the same estimate fraction) and a tenth of
    the trials."""
    return dataclasses.replace(cfg, profile="quick", client_records=600,
                               estimate_samples=max(1, round(cfg.estimate_samples * 600 / cfg.client_records)),
                               trials=cfg.trials // 10)


def features(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The inputs of the network's hidden layer (the flattened output of the convolutions)."""
    with torch.no_grad():
        return F.max_pool2d(F.relu(model.conv2(F.max_pool2d(F.relu(model.conv1(x)), 2))), 2).flatten(1)


def head_columns(feats: torch.Tensor, columns: int) -> torch.Tensor:
    """The ``columns`` inputs of the hidden layer of largest variance over the records."""
    return torch.argsort(feats.var(dim=0), descending=True)[:columns]


def head_block(fc_weight: torch.Tensor, fc_bias: torch.Tensor, fc1_bias: torch.Tensor, fc1_weight_cols: torch.Tensor
               ) -> torch.Tensor:
    """The head coordinates of a gradient, in the attack's order: output weights, output bias,
    hidden bias, the chosen columns of the hidden weights (column after column)."""
    lead = fc_weight.shape[:-2]
    return torch.cat([fc_weight.reshape(*lead, -1), fc_bias, fc1_bias,
                      fc1_weight_cols.transpose(-1, -2).reshape(*lead, -1)], dim=-1)


def head_gradients(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, columns: int) -> np.ndarray:
    """Per-record gradients of the cross-entropy at ``model`` restricted to the head
    (:func:`head_block`, with the columns of :func:`head_columns`; ∂ℓ/∂W₁[:, f] = ∂ℓ/∂b₁ · a_f),
    by torch.func's per-sample gradients; one float32 row per record."""
    feats = features(model, x)
    w1 = model.fc1.weight.detach()
    params = {"b1": model.fc1.bias.detach(), "w2": model.fc.weight.detach(), "b2": model.fc.bias.detach()}

    def loss(p: dict[str, torch.Tensor], a: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        h = F.relu(F.linear(a, w1, p["b1"]))
        return F.cross_entropy(F.linear(h, p["w2"], p["b2"])[None], label[None])

    cols = head_columns(feats, columns)
    rows = []
    for s in range(0, len(x), _CHUNK):
        a = feats[s:s + _CHUNK]
        g = vmap(grad(loss), in_dims=(None, 0, 0))(params, a, y[s:s + _CHUNK])
        rows.append(head_block(g["w2"], g["b2"], g["b1"], g["b1"][:, :, None] * a[:, None, cols]))
    return torch.cat(rows).numpy()


def canary_row(gradients: np.ndarray) -> np.ndarray:
    """The last record's (the canary's) row of the pseudo-inverse of the records' gradients
    (columns of ``gradients.T``): the vector a with ⟨a, g_j⟩ = 1 for the canary and 0 for every
    other record, of least norm (QR of the float64 gradients)."""
    M = gradients.astype(np.float64).T
    if M.shape[0] < M.shape[1]:
        raise ValueError(f"the head has {M.shape[0]} coordinates for {M.shape[1]} records: the attack needs "
                         "more coordinates than records (raise head_columns)")
    Q, R = scipy.linalg.qr(M, mode="economic")
    e = np.zeros(M.shape[1])
    e[-1] = 1.0
    return Q @ scipy.linalg.solve_triangular(R, e, trans="T")


def record_contributions(gradients: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Each record's contribution ⟨a, g_j⟩ to the score of a report that averages it."""
    return gradients.astype(np.float64) @ row


def report_score(report_gradient: np.ndarray, records: int, row: np.ndarray) -> float:
    """The attack's score of one report: |S|·⟨a, ∇F_S(ŵ)⟩ (the canary's least-squares
    coefficient)."""
    return float(records * (row @ np.asarray(report_gradient, dtype=np.float64)))


def _subset_sums(contrib: np.ndarray, records: int, samples: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(trials)
    for t in range(trials):
        out[t] = contrib[rng.permutation(records)[:samples]].sum()
    return out


def run_estimates_audit(cfg: EstimatesAuditConfig) -> dict[str, Any]:
    """For each reading: the scores of ``trials`` reports per world and the audit (module
    docstring)."""
    check_profile(cfg.profile)
    torch.set_num_threads(1)
    _, _, x_in, y_in = canary_data(dataclasses.replace(DPSGDAuditConfig(), others=cfg.client_records,
                                                       model_seed=cfg.model_seed))
    model = make_cnn(SHAPE, seed=cfg.model_seed)
    grads = head_gradients(model, x_in, y_in, cfg.head_columns)
    row = canary_row(grads)
    contrib = record_contributions(grads, row)
    audit_cfg = DPSGDAuditConfig(sigma=cfg.sigma, delta=cfg.delta)
    claims = {name: claimed_epsilon(audit_cfg, cfg.q, 1, name) for name in ("basic", "improved")}
    n = cfg.client_records
    rows = []
    for i, reading in enumerate(cfg.readings):
        if reading == "paper":  # deterministic: every run reports the same numbers
            s_out = np.full(cfg.trials, contrib[:n].sum())
            s_in = np.full(cfg.trials, contrib.sum())
            inclusion = 1.0
        else:
            s_out = _subset_sums(contrib[:n], n, cfg.estimate_samples, cfg.trials, rngs.generator(cfg, "out", i))
            s_in = _subset_sums(contrib, n + 1, cfg.estimate_samples, cfg.trials, rngs.generator(cfg, "in", i))
            inclusion = cfg.estimate_samples / (n + 1)
        res = joint_audit(s_out, s_in, delta=cfg.delta, gaussian=False, confidence=cfg.confidence,
                          seed=rngs.seed_sequence(cfg, "split", i))
        # deterministic reports have no spread: a Gaussian-shape estimate means nothing there
        res["mu_estimate"] = res["mu_estimate"] if reading != "paper" else None
        why = ("infinite: the report reveals the canary with probability "
               f"{inclusion:.4g} > δ, (ε, δ)-DP for no finite ε")
        rows.append({"reading": reading, "records": n, "estimate_samples": n if reading == "paper" else cfg.estimate_samples,
                     "inclusion_probability": inclusion, "claimed_epsilon": claims["basic"],
                     "claimed_epsilon_improved": claims["improved"], **res,
                     "delta": cfg.delta, "trials": cfg.trials, "gaussian": False,
                     **exact_fields(res["empirical_epsilon_lower"], None, "step", why),
                     "in_fraction_detected": float(np.mean(s_in > 0.5)), "out_fraction_detected": float(np.mean(s_out > 0.5)),
                     **roc_curve(s_out, s_in)})
    return {"rows": rows, "head_coordinates": int(grads.shape[1]),
            "canary_contribution": float(contrib[-1]), "largest_other_contribution": float(np.abs(contrib[:-1]).max())}


def load_estimates_audit(profile: str = "paper") -> dict[str, Any]:
    """The stored audit (computed and stored if missing, where the store is writable)."""
    cfg = EstimatesAuditConfig()
    return load_or_run(quick(cfg) if profile == "quick" else cfg, run_estimates_audit)
