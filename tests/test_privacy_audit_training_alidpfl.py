"""The whole-training audit of DPFL / ALI-DPFL (experiments/privacy/audit_training_alidpfl.py):
the stacked engine is the library's DP-SGD step, the audit of the calibrated mechanism stays
below its exact ε, a miscalibrated one is caught, and the stored record carries its fields."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from fedrepro.alidpfl.dpsgd import DPSGDSettings, dpsgd_step
from fedrepro.experiments.privacy import audit_training_alidpfl as tr
from fedrepro.privacy.audit import audit_counts

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "data" / "results" / "privacy" / "audit-alidpfl-training.json"


class _Pooled(nn.Module):
    """Softmax regression on 7×7 average-pooled images: the audit's reduced model as a module."""

    input_shape = (1, 28, 28)

    def __init__(self, w: torch.Tensor, b: torch.Tensor) -> None:
        super().__init__()
        self.fc = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            self.fc.weight.copy_(w)
            self.fc.bias.copy_(b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.avg_pool2d(x, tr.POOL).flatten(1))


def test_one_stacked_run_is_the_library_dpsgd_step():
    """Runs = 1 without the canary: the same draws as dpsgd_step (method "loop", autograd
    per-sample gradients); final parameters equal to float32 rounding (1e-5 relative)."""
    cfg = tr.quick(tr.TrainingAuditConfig())
    steps = 5
    w, b = tr.stacked_dpsgd_scores(cfg, 1, False, torch.Generator().manual_seed(3), steps=steps, trajectory=True)
    x, y = tr.client_data(cfg)
    model = _Pooled(*tr.initial_parameters(cfg))
    gen = torch.Generator().manual_seed(3)
    settings = DPSGDSettings(q=cfg.q, clip=cfg.clip, sigma=cfg.sigma, lr=cfg.lr)
    for _ in range(steps):
        dpsgd_step(model, x, y, settings, gen, method="loop")
    w0, _ = tr.initial_parameters(cfg)
    assert not torch.allclose(model.fc.weight, w0)  # the steps moved the model
    torch.testing.assert_close(w[0], model.fc.weight.detach(), rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(b[0], model.fc.bias.detach(), rtol=1e-5, atol=1e-7)


def test_stacked_scores_follow_the_reduction():
    """The DP-SGD scores' means in both worlds agree with the exact reduction's within 5
    standard errors (the other records' projections on d are small)."""
    cfg = tr.quick(tr.TrainingAuditConfig())
    steps, mu = tr.training_steps(cfg), 1.0 / cfg.sigma
    for canary, seed in ((False, 0), (True, 1)):
        s = tr.stacked_dpsgd_scores(cfg, 2_000, canary, torch.Generator().manual_seed(seed))
        r = tr.reduction_scores(200_000, steps, cfg.q, mu, canary, np.random.default_rng(seed))
        se = math.hypot(s.std() / math.sqrt(s.size), r.std() / math.sqrt(r.size))
        assert abs(s.mean() - r.mean()) < 5 * se


def test_a_miscalibrated_mechanism_is_caught():
    """Noise σ = 0.3 run, ε claimed at σ = 1.1: the bound from 2,000 runs per world exceeds the
    calibrated mechanism's exact ε (the test can fail)."""
    cfg = tr.quick(tr.TrainingAuditConfig())
    out = tr.stacked_dpsgd_scores(cfg, 2_000, False, torch.Generator().manual_seed(5), sigma=0.3)
    inn = tr.stacked_dpsgd_scores(cfg, 2_000, True, torch.Generator().manual_seed(6), sigma=0.3)
    t = float(np.quantile(out, 0.99))
    lower = audit_counts(int(np.sum(out > t)), int(np.sum(inn <= t)), 2_000, delta=cfg.delta)
    from fedrepro.experiments.privacy.audit_alidpfl import DPSGDAuditConfig, exact_epsilon

    assert lower > exact_epsilon(DPSGDAuditConfig(sigma=cfg.sigma, delta=cfg.delta), cfg.q, tr.training_steps(cfg))


def test_quick_audit_stays_below_the_exact_epsilon(tmp_path):
    """The quick profile's audit of the calibrated DP-SGD and of the reduction: each bound at
    most the exact ε of the whole training (95 % confidence each) and below the ceiling."""
    cfg = tr.quick(tr.TrainingAuditConfig())
    done = {u: tr.run_unit(cfg, u) for u in tr.units(cfg)}
    res = tr.combine(cfg, done)
    assert res["steps"] == 79
    for row in res["rows"]:
        assert row["scope"] == "training"
        assert 0.0 <= row["empirical_epsilon_lower"] <= row["exact_epsilon"]
        assert row["empirical_epsilon_lower"] <= row["epsilon_ceiling"]
        assert row["exact_epsilon"] < row["claimed_epsilon"]


def test_units_are_deterministic():
    cfg = tr.quick(tr.TrainingAuditConfig())
    assert tr.run_unit(cfg, "dpsgd-in-000") == tr.run_unit(cfg, "dpsgd-in-000")


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="canary_norm_factor"):
        tr.TrainingAuditConfig(canary_norm_factor=0.5)
    with pytest.raises(ValueError, match="chunk"):
        tr.TrainingAuditConfig(trials=1000, chunk=300)
    with pytest.raises(ValueError, match="unit"):
        tr.run_unit(tr.quick(tr.TrainingAuditConfig()), "nothing-out-000")


@pytest.mark.skipif(not STORED.exists(), reason="the paper-profile result is not stored")
def test_stored_record_fields():
    """Every stored record carries the audit fields; the whole-training bound is below the
    exact ε, the exact ε below the paper's claim (1.55)."""
    rows = json.loads(STORED.read_text())["result"]["rows"]
    assert [r["record"] for r in rows] == ["dpsgd", "reduction"]
    for r in rows:
        for key in ("empirical_epsilon_lower", "exact_epsilon", "tightness", "epsilon_ceiling", "scope",
                    "claimed_epsilon", "threat_model", "confidence"):
            assert key in r
        assert r["scope"] == "training" and r["steps"] == 79 and r["claimed_epsilon"] == 1.55
        assert r["empirical_epsilon_lower"] <= r["exact_epsilon"] < r["claimed_epsilon"]


def test_the_audited_budget_is_table_two_s_cell():
    from fedrepro.chapters.privacy_audit import training_alidpfl as view

    assert view.rounds_of_budget(1.55) == 158
    with pytest.raises(ValueError, match="epsilon"):
        view.rounds_of_budget(1.0)


@pytest.mark.skipif(not STORED.exists(), reason="the paper-profile result is not stored")
def test_the_section_s_claims_hold_on_the_stored_results():
    """What the page says: no DP-SGD record refutes the claim, the reduction's draws get closer
    to the exact ε than the code's runs, and both whole-run estimate records (exact ε infinite,
    scope training) refute the whole training's claim."""
    from fedrepro.chapters.privacy_audit import training_alidpfl as view
    from fedrepro.experiments.privacy.audit_estimates import load_estimates_audit

    training = json.loads(STORED.read_text())["result"]
    estimates = load_estimates_audit("paper")
    facts = view.training_facts(training, estimates)
    assert facts["n_refuted"] == 0
    assert facts["reduction_tightness"] > facts["dpsgd_tightness"]
    rows = view.estimate_rows(training, estimates)
    assert all(r["scope"] == "training" and r["exact_epsilon"] is None for r in rows)
    assert facts["n_estimates_refuted"] == 2
