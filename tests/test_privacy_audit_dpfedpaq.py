"""The DP-FedPAQ privacy audit (``fedrepro.chapters.privacy_audit.dpfedpaq``).

The audited mechanism is checked against the paper's equations written out here, not against
the library's calibration code: without the canary the attack's score is the Gaussian noise of
one weight direction, whose standard deviation is eq. (16)'s σ = √(8 ln(1.25γ/δ))·γΔ/ε; with the
canary and (almost) no noise, the score is the canary's one clipped step η₀C/b in the fraction γ =
Eb/n of the rounds whose subsample holds it, and 0 otherwise. Then the audit itself: the authors'
sensitivity is refuted at ε = 1, the valid one is not, and the stored paper-profile result says
the same.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fedrepro.chapters.privacy_audit import dpfedpaq as A
from fedrepro.chapters.privacy_audit import figures, tables
from fedrepro.privacy.audit import epsilon_from_rates

SMALL = dataclasses.replace(A.FedPAQAuditConfig(), profile="quick", trials=4000, epsilons=(1.0,), levels=(0,))


def _sigma_eq16(cfg: A.FedPAQAuditConfig, epsilon: float, sensitivity: str, n: int) -> float:
    b = math.floor(cfg.sample_ratio * n / cfg.local_steps)
    gamma = cfg.local_steps * b / n
    delta_f = 2 * cfg.lr0 * cfg.local_steps * cfg.clip if sensitivity == "rigorous" else cfg.clip / n
    return math.sqrt(8 * math.log(1.25 * gamma / cfg.delta)) * gamma * delta_f / epsilon


@pytest.fixture(scope="module")
def problems():
    return A.canary_problems(SMALL)


def test_canary_is_the_only_difference_and_touches_a_dead_pixel(problems):
    d_out, d_in = problems
    assert d_out.sizes.tolist() == d_in.sizes.tolist() == [635]  # device 0 of HET_MNIST(2)
    diff = np.nonzero(np.any(d_out.features != d_in.features, axis=1) | (d_out.labels != d_in.labels))[0]
    assert diff.tolist() == [0]
    assert np.all(d_in.features[1:, A.CANARY_PIXEL] == 0) and d_in.features[0, A.CANARY_PIXEL] == SMALL.canary_scale


@pytest.mark.parametrize("sensitivity", ["rigorous", "authors_code"])
def test_scores_without_the_canary_are_the_calibrated_noise(problems, sensitivity):
    # std of 4000 draws: relative standard error 1/sqrt(2·4000) = 1.1 %; tolerance 5 % (4.5 s.e.)
    s = A.scores(SMALL, problems[0], {"sensitivity": sensitivity, "epsilon": 1.0, "levels": 0},
                 np.random.default_rng(1))
    sigma = _sigma_eq16(SMALL, 1.0, sensitivity, int(problems[0].sizes[0]))
    assert abs(np.std(s) / sigma - 1) < 0.05
    assert abs(np.mean(s)) < 4 * sigma / math.sqrt(s.size)


def test_canary_moves_the_score_by_one_clipped_step_in_a_fraction_gamma_of_rounds(problems):
    cfg = dataclasses.replace(SMALL, trials=3000)
    s = A.scores(cfg, problems[1], {"sensitivity": "authors_code", "epsilon": 1e9, "levels": 0},
                 np.random.default_rng(2))  # σ about 3e-12: the scores are the canary's step or 0
    n = int(problems[1].sizes[0])
    b = math.floor(cfg.sample_ratio * n / cfg.local_steps)
    step = cfg.lr0 * cfg.clip / b
    hit = s > step / 2
    gamma = cfg.local_steps * b / n
    # binomial(3000, 0.2): standard error 0.0073; tolerance 0.03 (4 s.e.)
    assert abs(hit.mean() - gamma) < 0.03
    # the step is C/b·η₀ times the cosine between the canary's residual when it is used and at x₀
    assert np.all(s[hit] <= step * (1 + 1e-5)) and np.all(s[hit] > 0.9 * step)
    assert np.all(np.abs(s[~hit]) < 1e-9)


def test_audit_refutes_the_authors_sensitivity_and_not_the_valid_one():
    res = A.run_fedpaq_audit(SMALL)
    by = {m["sensitivity"]: m for m in res["mechanisms"]}
    assert by["authors_code"]["empirical_epsilon_lower"] > 1.0  # claimed: 1 per round
    assert by["rigorous"]["empirical_epsilon_lower"] <= 1.0
    assert [m["sensitivity"] for m in tables.broken(res)] == ["authors_code"]
    frame = tables.audit_frame(res)
    assert frame["claim refuted"].tolist() == [False, True]


def test_stored_paper_audit_refutes_only_the_authors_sensitivity():
    res = A.load_fedpaq_audit("paper")  # read-only in tests: the committed result
    refuted = {(m["sensitivity"], m["claimed_epsilon"], m["levels"]) for m in tables.broken(res)}
    assert ("authors_code", 1.0, 0) in refuted
    assert all(s == "authors_code" for s, _, _ in refuted)
    for m in res["mechanisms"]:
        assert {"claimed_epsilon", "empirical_epsilon_lower", "delta", "confidence", "trials"} <= set(m)
        assert m["trials"] == A.FedPAQAuditConfig().trials and m["confidence"] == 0.95 and m["delta"] == 1e-4


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_allowed_tpr_is_the_boundary_of_the_dp_region(epsilon):
    fpr = np.logspace(-4, -0.5, 7)
    tpr = figures.allowed_tpr(fpr, epsilon, 1e-4)
    inside = tpr < 1.0
    # on the boundary the rates give back ε exactly (eq. audit-region solved for ε)
    got = np.asarray(epsilon_from_rates(fpr[inside], 1.0 - tpr[inside], 1e-4))
    np.testing.assert_allclose(got, epsilon, rtol=1e-9)


def test_config_rejects_unknown_sensitivity():
    with pytest.raises(ValueError, match="sensitivities"):
        A.FedPAQAuditConfig(sensitivities=("rigorous", "exact"))
