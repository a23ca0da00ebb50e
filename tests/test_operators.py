"""Contraction constants and the matrix S of Fed-PLT (fedrepro.core.operators)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.core import operators as ops
from fedrepro.core import prox


def test_prox_operators_are_reexported():
    for name in ("prox_zero", "prox_sq_norm", "prox_l1", "prox_box", "prox_ball", "regularizer", "reflective"):
        assert getattr(ops, name) is getattr(prox, name)


def test_gd_contraction_is_the_norm_of_the_gradient_step():
    # exact: ||I - step A||_2 for a diagonal A with both extremes; round-off only (1e-15)
    lam, lam_bar = 0.5, 8.0
    A = np.diag([lam, 2.0, lam_bar])
    for step in (0.01, 0.1, 0.2, 0.249):
        exact = np.linalg.norm(np.eye(3) - step * A, 2)
        assert ops.gd_contraction(step, lam, lam_bar) == pytest.approx(exact, abs=1e-15)
    assert ops.gd_contraction(2 / lam_bar * 0.999, lam, lam_bar) < 1
    assert ops.gd_contraction(2 / lam_bar * 1.001, lam, lam_bar) > 1  # Lemma 2's range is sharp


def test_local_step_and_chi():
    rho, lam, lam_bar = 0.5, 1.0, 5.0
    gamma = ops.default_local_step(rho, lam, lam_bar)
    assert gamma == pytest.approx(2 / (lam + lam_bar + 2 / rho))
    # at the default step chi = (kappa_d - 1)/(kappa_d + 1) (exact up to round-off)
    kd = ops.local_condition_number(rho, lam, lam_bar)
    assert ops.local_gd_contraction(gamma, rho, lam, lam_bar) == pytest.approx((kd - 1) / (kd + 1), rel=1e-14)
    assert ops.max_local_step(rho, lam, lam_bar) == pytest.approx(2 / (lam_bar + 2))
    assert ops.max_local_step(rho, lam, lam_bar, as_printed=True) == pytest.approx(2 / (lam + 2))


def test_prs_contraction_v2_and_v1_as_printed():
    # spec §10.2 example: lam = 1, lam_bar = 10, rho = 1 -> v2 zeta = 9/11, v1 as printed 0
    assert ops.prs_contraction(1.0, 1.0, 10.0) == pytest.approx(9 / 11)
    assert ops.prs_contraction_v1_as_printed(1.0, 1.0, 10.0) == 0.0
    # both agree when lam = lam_bar
    assert ops.prs_contraction(0.3, 2.0, 2.0) == pytest.approx(ops.prs_contraction_v1_as_printed(0.3, 2.0, 2.0))


def test_accelerated_factors():
    assert ops.local_condition_number(1.0, 1.0, 3.0, "v2") == pytest.approx(2.0)
    assert ops.local_condition_number(1.0, 1.0, 3.0, "v1") == pytest.approx(3.0)
    kappa = 4.0
    assert ops.agd_momentum(kappa) == pytest.approx(1 / 3)
    assert ops.agd_contraction(3, kappa) == pytest.approx(5 * 0.5 ** 3)
    assert ops.agd_contraction_sqrt(4, kappa) == pytest.approx(math.sqrt(5) * 0.5 ** 2)
    assert ops.agd_output_contraction(0, kappa) == 1.0
    q, beta = 0.5, 1 / 3
    assert ops.agd_output_contraction(3, kappa) == pytest.approx(math.sqrt(5) * q * ((1 + beta) * math.sqrt(q) + beta))


def test_matrix_S_entries_and_correction():
    rho, Ne, lam, lam_bar, chi = 0.3, 2, 1.0, 4.0, 0.5
    S = ops.matrix_S(rho, Ne, lam, lam_bar, chi)
    a, z, c = chi ** Ne, ops.prs_contraction(rho, lam, lam_bar), 1 / (lam + 1 / rho)
    np.testing.assert_allclose(S, [[a, c * (1 + a)], [2 * a, z + 2 * c * a]], rtol=1e-15)
    Sc = ops.matrix_S(rho, Ne, lam, lam_bar, chi, corrected=True)
    assert Sc[0, 1] == pytest.approx((1 + a) / (1 + rho * lam))
    # for rho < 1 the printed coupling is the smaller one; for rho >= 1 the larger one
    assert ops.coupling_constant(0.3, 1.0) < ops.coupling_constant(0.3, 1.0, corrected=True)
    assert ops.coupling_constant(3.0, 1.0) > ops.coupling_constant(3.0, 1.0, corrected=True)
    assert ops.spectral_norm(S) >= ops.spectral_radius(S)


def test_lemma7_closed_form_matches_eigenvalues_on_a_grid():
    # 20,000 random (zeta, a, c): the closed form decides rho(S) < 1 exactly (no tolerance:
    # draws on the boundary have probability 0); the printed condition is its complement
    rng = np.random.default_rng(7)
    zeta, a, c = rng.random(20000), rng.random(20000), 10 ** rng.uniform(-3, 2, 20000)
    S = np.stack([np.stack([a, c * (1 + a)], -1), np.stack([2 * a, zeta + 2 * c * a], -1)], -2)
    eig = np.linalg.eigvals(S)
    assert np.all(np.abs(eig.imag) < 1e-12)  # the eigenvalues are real
    stable = np.max(np.abs(eig), axis=1) < 1
    assert 0 < stable.sum() < stable.size
    assert np.array_equal(ops.lemma7_condition(zeta, a, c), stable)
    assert np.all(ops.lemma7_condition_as_printed(zeta, a, c) != stable)


def test_stabilising_parameters_and_minimal_Ne():
    lam, lam_bar = 0.5, 7.5
    grid = ops.stabilising_parameters(lam, lam_bar, np.logspace(-2, 2, 9), np.arange(1, 31), (0.5, 0.9))
    assert grid.radius.shape == (9, 30, 2) == grid.norm.shape
    assert np.all(grid.stable[grid.contractive])  # ||S|| < 1 implies rho(S) < 1
    assert grid.stable.sum() > grid.contractive.sum() > 0
    pts = grid.points("contractive")
    assert len(pts) == grid.contractive.sum() and all(isinstance(p[1], int) for p in pts)
    rho, _, gamma = pts[0]
    chi = ops.local_gd_contraction(gamma, rho, lam, lam_bar)
    for criterion, measure in (("radius", ops.spectral_radius), ("norm", ops.spectral_norm)):
        Ne = ops.minimal_Ne(rho, gamma, lam, lam_bar, criterion=criterion)
        assert Ne is not None and Ne > 1
        assert measure(ops.matrix_S(rho, Ne, lam, lam_bar, chi, corrected=True)) < 1
        assert measure(ops.matrix_S(rho, Ne - 1, lam, lam_bar, chi, corrected=True)) >= 1
    # a step outside Lemma 2's range never stabilises S
    assert ops.minimal_Ne(rho, 2.5 / (lam_bar + 1 / rho), lam, lam_bar) is None


def test_one_step_threshold_of_lemma7():
    info = ops.gd_one_step_threshold(1.0, 1.0, 100.0, corrected=True)
    # kappa_d = 101/2: chi_min = 49.5/51.5; zeta = 99/101, c = 1/2
    assert info["chi_min"] == pytest.approx(49.5 / 51.5)
    assert info["threshold"] == pytest.approx((2 / 101) / (2 / 101 + 2))
    assert info["chi_min"] > info["threshold"]


@pytest.mark.parametrize("call, name", [
    (lambda: ops.gd_contraction(0.0, 1.0, 2.0), "step"),
    (lambda: ops.gd_contraction(0.1, -1.0, 2.0), "lam"),
    (lambda: ops.gd_contraction(0.1, 2.0, 1.0), "lam_bar"),
    (lambda: ops.prs_contraction(-1.0, 1.0, 2.0), "rho"),
    (lambda: ops.prs_contraction(float("nan"), 1.0, 2.0), "rho"),
    (lambda: ops.matrix_S(1.0, 0, 1.0, 2.0, 0.5), "Ne"),
    (lambda: ops.matrix_S(1.0, 1, 1.0, 2.0, -0.5), "chi"),
    (lambda: ops.agd_contraction(2, 0.5), "kappa"),
    (lambda: ops.local_condition_number(1.0, 1.0, 2.0, "v3"), "version"),
    (lambda: ops.minimal_Ne(1.0, 0.1, 1.0, 2.0, criterion="other"), "criterion"),
    (lambda: ops.stabilising_parameters(1.0, 2.0, [0.0], [1]), "rhos"),
    (lambda: ops.stabilising_parameters(1.0, 2.0, [1.0], [0]), "Nes"),
    (lambda: ops.stabilising_parameters(1.0, 2.0, [1.0], [1], [2.0]), "thetas"),
    (lambda: ops.spectral_radius(np.ones((2, 3))), "S"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
