"""ALI-DPFL's statements as checks: every finding pinned (book/errata.md, ALI-DPFL)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.alidpfl.checks import lemma3, statements, theorem1, theorem2


def test_theorem1_holds_without_noise():
    observed, bound = theorem1.theorem1_gap(tau=6, sigma=0.0)
    assert observed[-1] > 0.05  # the clients do drift apart
    assert np.all(observed <= bound + 1e-12)


def test_theorem1_fails_at_the_first_step_with_noise():
    observed, bound = theorem1.theorem1_gap(tau=4, sigma=1.1, clip=1.0, batch=10.0)
    exact = theorem1.expected_gap_at_one(1.1, 1.0, 10.0, 0.5, 5, 4)
    assert bound[1] == pytest.approx(0.0, abs=1e-15)
    assert observed[1] == pytest.approx(exact, rel=0.02)  # Monte Carlo tolerance 2 %
    assert observed[1] > 0.1


def test_lemma3_holds_for_noise_alone_and_fails_with_sampling_or_clipping():
    obs, bound = lemma3.lemma3_error("full batch, no clipping")
    # the noise alone: E‖N(0, σ²C²I_2)‖/B = σC·√(π/2)/B, half the bound's factor 2 aside
    assert obs == pytest.approx(1.1 * 0.1 * math.sqrt(math.pi / 2) / 4000, rel=0.03)
    assert obs <= bound
    for case in ("sampled, no clipping", "full batch, clipped", "sampled and clipped"):
        obs, bound = lemma3.lemma3_error(case)
        assert obs > 2 * bound, case


def test_jensen_step_goes_the_wrong_way():
    inv_mean_cube, mean_inv_cube = theorem2.jensen_step()
    assert inv_mean_cube == pytest.approx(1 / 0.365)  # E[X³] = (0.001 + 0.729)/2
    assert mean_inv_cube == pytest.approx((1000 + 1 / 0.729) / 2)
    assert inv_mean_cube < mean_inv_cube  # the proof claims ≥


def test_final_step_of_theorem2_fails_on_a_two_point_distribution():
    mean, bound = theorem2.final_step()
    assert mean == pytest.approx(0.01 * 1e-4 + 0.99 * 0.999)
    assert bound == pytest.approx(1 / (0.01 / 1e-4 + 0.99 / 0.999) + math.sqrt(3) / 3)
    assert mean > bound


def test_x_minus_x3_maximum_is_two_sqrt3_over_9():
    observed, claimed = theorem2.x_minus_x3_max()
    assert observed == pytest.approx(2 * math.sqrt(3) / 9, abs=1e-10)
    assert claimed == pytest.approx(math.sqrt(3) / 3)
    assert observed < claimed  # the constant is loose, not invalid


def test_lemma6_on_a_noisy_gradient():
    increase, bound = theorem2.lemma6_noisy_step(beta=1.0, eta=0.5, noise=0.3)
    assert increase == pytest.approx(0.5 * 0.15 ** 2) and bound == pytest.approx(0.5 * (0.25 - 1) * 0.09)
    assert increase > 0 > bound


def test_definition3_direction():
    out = statements.definition3_direction(alpha=8)
    assert out["divergence"] == pytest.approx(out["formula"], rel=1e-8)  # eq. (17) is D_α
    assert out["printed_allowed_R"] < out["divergence"]  # "R ≤" admits levels below D_α


def test_printed_clipping_never_clips():
    norm, clip = statements.clipping_printed(np.array([3.0, 4.0]), 0.1)
    assert norm == pytest.approx(5.0) and norm > clip
    assert np.linalg.norm(statements.clip_corrected(np.array([3.0, 4.0]), 0.1)) == pytest.approx(0.1)


def test_eq7_index_slip():
    out = statements.eq7_residual()
    assert out["corrected"] < 1e-12 and out["printed"] > 1e-2


def test_eq8_auxiliary_noise_exceeds_lemma3():
    noise, bound = statements.eq8_auxiliary_noise()
    # E‖N(0, s²I_d)‖ ≈ s√d for large d
    assert noise == pytest.approx(0.11 * math.sqrt(582_026), rel=1e-5)
    assert noise / bound == pytest.approx(90 / 2, rel=1e-5)


def test_eq11_printed_h_is_not_zero_at_one():
    out = statements.eq11_h_at_one(xi=0.1, eta=0.5, batch=90.0)
    assert out["printed"] == pytest.approx(0.5 * 0.1 * (1 - 1 / 90), rel=1e-9)
    assert abs(out["corrected"]) < 1e-12
