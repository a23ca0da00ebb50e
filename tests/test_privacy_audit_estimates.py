"""The audit of ALI-DPFL's τ* estimate reports (``fedrepro.chapters.privacy_audit.estimates``).

Independent check: the attack's score of a report computed from per-record contributions
(torch.func per-sample gradients, a float64 least-squares row) is compared with the score of
the report itself, the gradient of the subset's mean loss computed by plain autograd on the
whole network (``loss.backward()``, float32) and cut to the head coordinates, on the same
subsets; tolerance 1e-4 against a separation of 1."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from fedrepro.alidpfl.models import make_cnn
from fedrepro.chapters.privacy_audit import estimates as A
from fedrepro.chapters.privacy_audit import tables
from fedrepro.chapters.privacy_audit.alidpfl import SHAPE, DPSGDAuditConfig, canary_data

SMALL = dataclasses.replace(A.EstimatesAuditConfig(), profile="quick", client_records=200, estimate_samples=17,
                            trials=2_000)


@pytest.fixture(scope="module")
def setting():
    torch.set_num_threads(1)
    _, _, x, y = canary_data(dataclasses.replace(DPSGDAuditConfig(), others=SMALL.client_records))
    model = make_cnn(SHAPE, seed=SMALL.model_seed)
    grads = A.head_gradients(model, x, y, SMALL.head_columns)
    row = A.canary_row(grads)
    return model, x, y, grads, row


def _report_head(model, x, y, cols):
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    return A.head_block(model.fc.weight.grad, model.fc.bias.grad, model.fc1.bias.grad,
                        model.fc1.weight.grad[:, cols]).detach().numpy()


def test_least_squares_row_singles_out_the_canary(setting):
    _, _, _, grads, row = setting
    contrib = A.record_contributions(grads, row)
    assert contrib[-1] == pytest.approx(1.0, abs=1e-9)
    assert np.max(np.abs(contrib[:-1])) < 1e-9


@pytest.mark.parametrize("with_canary", [False, True])
def test_score_of_the_autograd_report_equals_the_sum_of_contributions(setting, with_canary):
    model, x, y, grads, row = setting
    cols = A.head_columns(A.features(model, x), SMALL.head_columns)
    contrib = A.record_contributions(grads, row)
    rng = np.random.default_rng(5)
    n = len(x) if with_canary else len(x) - 1
    for _ in range(3):
        subset = np.sort(rng.permutation(n)[:SMALL.estimate_samples])
        if with_canary and len(x) - 1 not in subset:
            subset[-1] = len(x) - 1
        report = _report_head(model, x[subset], y[subset], cols)
        score = A.report_score(report, len(subset), row)
        assert score == pytest.approx(contrib[subset].sum(), abs=1e-4)
        assert score == pytest.approx(1.0 if with_canary else 0.0, abs=1e-3)


def test_head_gradients_agree_with_plain_autograd_per_record(setting):
    model, x, y, grads, _ = setting
    cols = A.head_columns(A.features(model, x), SMALL.head_columns)
    for j in (0, 57, len(x) - 1):
        np.testing.assert_allclose(grads[j], _report_head(model, x[j:j + 1], y[j:j + 1], cols), rtol=1e-4, atol=1e-7)


def test_too_few_coordinates_are_refused():
    with pytest.raises(ValueError, match="more coordinates than records"):
        A.canary_row(np.ones((10, 5), dtype=np.float32))


def test_quick_audit_flags_the_canary_as_often_as_it_is_in_the_report():
    res = A.run_estimates_audit(SMALL)
    rows = {r["reading"]: r for r in res["rows"]}
    assert rows["paper"]["in_fraction_detected"] == 1.0 and rows["paper"]["out_fraction_detected"] == 0.0
    lib = rows["library"]
    p = lib["inclusion_probability"]
    assert p == pytest.approx(17 / 201)
    # binomial standard error of the flagged fraction at 2,000 reports: about 0.006; 4 s.e.
    assert abs(lib["in_fraction_detected"] - p) < 4 * np.sqrt(p * (1 - p) / SMALL.trials)
    assert lib["out_fraction_detected"] == 0.0
    assert all(tables.refuted(r) for r in res["rows"])


@pytest.mark.parametrize("change, match", [
    ({"readings": ("public",)}, "readings must be among"),
    ({"estimate_samples": 0}, "estimate_samples"),
    ({"estimate_samples": 7_000}, "estimate_samples"),
])
def test_config_rejects_bad_settings(change, match):
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(A.EstimatesAuditConfig(), **change)


def test_stored_audit_refutes_the_round_claim():
    res = A.load_estimates_audit("paper")  # read-only in tests: the committed result
    cfg = A.EstimatesAuditConfig()
    assert [r["reading"] for r in res["rows"]] == list(cfg.readings)
    for r in res["rows"]:
        assert {"claimed_epsilon", "empirical_epsilon_lower", "delta", "confidence", "trials"} <= set(r)
        assert r["empirical_epsilon_lower"] > max(r["claimed_epsilon"], r["claimed_epsilon_improved"])
        assert r["out_fraction_detected"] == 0.0
    assert res["canary_contribution"] == pytest.approx(1.0, abs=1e-6)
