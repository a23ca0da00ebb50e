"""The audit of ALI-DPFL's DP-SGD (``fedrepro.chapters.privacy_audit.alidpfl``), checked from the
mechanism's definition (noise σC on the clipped sum, divided by B; the canary clipped to norm C)
rather than from the DP-SGD code: the score of a step is ⟨w − w', d⟩·B/(ηC) with d the canary's
gradient direction, so with nothing sampled it is N(0, σ²), and with the canary alone sampled and
the same noise it is exactly 1 more."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from fedrepro.chapters.privacy_audit import alidpfl as A

SMALL = dataclasses.replace(A.DPSGDAuditConfig(), profile="quick", others=1, qs=(1.0,), taus=(1,), trials=(50,))


@pytest.fixture(scope="module")
def data():
    torch.set_num_threads(1)
    return A.canary_data(SMALL)


def test_nothing_sampled_leaves_the_noise_with_std_sigma(data):
    x_out, y_out, x_in, y_in = data
    # q = 1e-12: no record is ever sampled; 400 draws, relative s.e. of the std 3.5 %, tolerance 15 %
    s = A.round_scores(SMALL, 1e-12, 1, 400, x_out, y_out, (x_in[-1:], y_in[-1:]), torch.Generator().manual_seed(3))
    assert abs(np.std(s) / SMALL.sigma - 1) < 0.15
    assert abs(np.mean(s)) < 4 * SMALL.sigma / math.sqrt(s.size)


def test_the_canary_adds_exactly_one_clipped_step_along_its_direction(data):
    x_out, y_out, x_in, y_in = data
    canary = (x_in[-1:], y_in[-1:])
    # q = 1 and σ = 1e-9 (noise negligible): both worlds sample every record, so the scores differ
    # by the canary's clipped gradient projected on its own direction, C, times B/(ηC)·(η/B) = 1/C
    quiet = dataclasses.replace(SMALL, sigma=1e-9)
    s_out = A.round_scores(quiet, 1.0, 1, 3, x_out, y_out, canary, torch.Generator().manual_seed(4))
    s_in = A.round_scores(quiet, 1.0, 1, 3, x_in, y_in, canary, torch.Generator().manual_seed(5))
    np.testing.assert_allclose(s_in - s_out, 1.0, atol=1e-3)  # float32 updates of 582,026 weights


def test_claimed_epsilon_grows_with_steps_and_the_improved_conversion_is_smaller():
    one, five = A.claimed_epsilon(SMALL, 0.015, 1, "basic"), A.claimed_epsilon(SMALL, 0.015, 5, "basic")
    assert 0 < one < five
    assert A.claimed_epsilon(SMALL, 0.015, 5, "improved") < five


def test_audit_of_the_full_batch_gaussian_is_positive_and_below_its_claim():
    res = A.run_dpsgd_audit(dataclasses.replace(SMALL, trials=(300,)))
    row, = res["rounds"]
    from fedrepro.chapters.privacy_audit import tables
    assert 0 < tables.lower_bound(row) <= row["claimed_epsilon_improved"]
    # 1/σ = 0.91 exactly (at q = 1 the other records are a fixed offset); 300 trials: sampling error
    assert 0.5 < row["mu_estimate"] < 1.3


def test_config_lengths_must_agree():
    with pytest.raises(ValueError, match="same length"):
        A.DPSGDAuditConfig(qs=(0.015,), taus=(1, 5), trials=(10, 10))


def test_stored_paper_audit_refutes_no_round_and_has_the_fields():
    res = A.load_dpsgd_audit("paper")  # read-only in tests: the committed result
    from fedrepro.chapters.privacy_audit import tables
    assert not any(tables.refuted(r) for r in res["rounds"])
    cfg = A.DPSGDAuditConfig()
    assert [(r["q"], r["tau"], r["trials"]) for r in res["rounds"]] == list(zip(cfg.qs, cfg.taus, cfg.trials, strict=True))
    for r in res["rounds"]:
        assert {"claimed_epsilon", "empirical_epsilon_lower", "delta", "confidence", "trials"} <= set(r)
    full = [r for r in res["rounds"] if r["q"] == 1.0]
    assert full and tables.lower_bound(full[0]) > 0.5  # the audit has power
