"""Lemma 7 as a search (``stabilising_parameters``, ``StabilityGrid``, ``minimal_Ne``) against a
brute-force loop over ``matrix_S`` with ``spectral_radius`` / ``spectral_norm``, and the AGD
bounds of Lemma 8 (``agd_contraction_sqrt``, ``agd_output_contraction``) against hand values and
their relation to ``agd_contraction``; every message in full."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.core import operators as ops

LAM, LAM_BAR = 1.0, 4.0


# ---- Lemma 8 bounds -----------------------------------------------------------------------


@pytest.mark.parametrize("Ne, kappa", [(0, 4.0), (1, 4.0), (2, 4.0), (7, 9.0), (3, 1.0), (40, 250.0)])
def test_agd_sqrt_bound_is_the_square_root_of_lemma8(Ne, kappa):
    # (sqrt(1+k) q^(Ne/2))² = (1+k) q^Ne, q = 1 − 1/sqrt(k): the square of the potential bound is
    # Lemma 8's factor (independently computed by agd_contraction), to round-off
    assert ops.agd_contraction_sqrt(Ne, kappa) ** 2 == pytest.approx(ops.agd_contraction(Ne, kappa), rel=1e-13)


def test_agd_bounds_hand_values():
    # kappa = 4: q = 1/2, beta = (2 − 1)/(2 + 1) = 1/3
    assert ops.agd_contraction_sqrt(2, 4.0) == pytest.approx(math.sqrt(5) / 2, rel=1e-15)
    assert ops.agd_contraction_sqrt(0, 4.0) == pytest.approx(math.sqrt(5), rel=1e-15)
    assert ops.agd_contraction_sqrt(2.0, 4.0) == ops.agd_contraction_sqrt(2, 4.0)  # integral float accepted
    assert ops.agd_output_contraction(0, 4.0) == 1.0
    # Ne = 1: sqrt(5) q^0 ((1 + 1/3) sqrt(1/2) + 1/3)
    assert ops.agd_output_contraction(1, 4.0) == pytest.approx(math.sqrt(5) * (4 / 3 * math.sqrt(0.5) + 1 / 3), rel=1e-15)
    # Ne = 3: sqrt(5) (1/2)^1 ((4/3) sqrt(1/2) + 1/3)
    assert ops.agd_output_contraction(3, 4.0) == pytest.approx(math.sqrt(5) / 2 * (4 / 3 * math.sqrt(0.5) + 1 / 3), rel=1e-15)
    assert ops.agd_output_contraction(3.0, 4.0) == ops.agd_output_contraction(3, 4.0)
    # kappa = 1 (q = 0): the output is exact after one step
    assert ops.agd_output_contraction(2, 1.0) == 0.0 and ops.agd_contraction_sqrt(2, 1.0) == 0.0


@pytest.mark.parametrize("fn", [ops.agd_contraction_sqrt, ops.agd_output_contraction, ops.agd_contraction])
def test_agd_bounds_messages(fn):
    with pytest.raises(ValueError, match=r"^Ne must be an integer >= 0, got -1$"):
        fn(-1, 4.0)
    with pytest.raises(ValueError, match=r"^kappa must be >= 1, got 0\.5$"):
        fn(2, 0.5)


# ---- Lemma 7 grid against the brute-force loop --------------------------------------------


def _loop_grid(rhos, Nes, thetas, corrected):
    """radius and norm of S for every (rho, Ne, theta), one matrix at a time."""
    radius = np.empty((len(rhos), len(Nes), len(thetas)))
    norm = np.empty_like(radius)
    gamma = np.empty((len(rhos), len(thetas)))
    for r, rho in enumerate(rhos):
        for t, theta in enumerate(thetas):
            gamma[r, t] = theta * 2 / (LAM_BAR + 1 / rho)
            chi = ops.local_gd_contraction(gamma[r, t], rho, LAM, LAM_BAR)
            for e, Ne in enumerate(Nes):
                S = ops.matrix_S(rho, Ne, LAM, LAM_BAR, chi, corrected=corrected)
                radius[r, e, t] = ops.spectral_radius(S)
                norm[r, e, t] = ops.spectral_norm(S)
    return gamma, radius, norm


@pytest.mark.parametrize("corrected", [True, False])
def test_stabilising_parameters_equal_the_loop(corrected):
    rhos, Nes, thetas = [0.05, 0.3, 1.0, 4.0], [1, 2, 5, 20], [0.25, 1.0, 1.75]
    grid = ops.stabilising_parameters(LAM, LAM_BAR, rhos, Nes, thetas, corrected=corrected)
    gamma, radius, norm = _loop_grid(rhos, Nes, thetas, corrected)
    assert grid.corrected is corrected
    assert np.allclose(grid.gamma, gamma, rtol=1e-14, atol=0)
    assert np.allclose(grid.radius, radius, rtol=1e-12, atol=1e-15)
    assert np.allclose(grid.norm, norm, rtol=1e-12, atol=1e-15)
    assert 0 < grid.stable.sum() < grid.stable.size and 0 < grid.contractive.sum() < grid.contractive.size
    for which, values in (("stable", radius), ("contractive", norm)):
        want = [(rhos[r], Nes[e], gamma[r, t]) for r in range(len(rhos)) for e in range(len(Nes))
                for t in range(len(thetas)) if values[r, e, t] < 1]
        got = grid.points(which)
        assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]
        assert np.allclose([g for *_, g in got], [g for *_, g in want], rtol=1e-14, atol=0)
        assert all(type(a) is float and type(b) is int and type(g) is float for a, b, g in got)
    assert grid.points() == grid.points("stable")


def test_stabilising_parameters_defaults():
    grid = ops.stabilising_parameters(LAM, LAM_BAR, 1.0, 3)
    assert grid.theta.tolist() == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5] and grid.corrected is True
    _, radius, _ = _loop_grid([1.0], [3], grid.theta.tolist(), True)
    assert np.allclose(grid.radius, radius, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("corrected", [True, False])
@pytest.mark.parametrize("criterion, measure", [("radius", ops.spectral_radius), ("norm", ops.spectral_norm)])
@pytest.mark.parametrize("rho, theta", [(1.0, 0.25), (0.3, 0.6), (4.0, 0.6), (0.05, 0.25), (1.0, 1.0)])
def test_minimal_Ne_equals_the_first_Ne_of_the_loop(corrected, criterion, measure, rho, theta):
    gamma = theta * 2 / (LAM_BAR + 1 / rho)
    chi = ops.local_gd_contraction(gamma, rho, LAM, LAM_BAR)
    want = next((Ne for Ne in range(1, 501)
                 if measure(ops.matrix_S(rho, Ne, LAM, LAM_BAR, chi, corrected=corrected)) < 1), None)
    got = ops.minimal_Ne(rho, gamma, LAM, LAM_BAR, corrected=corrected, criterion=criterion, Ne_max=500)
    assert got == want
    if want is not None and want > 1:  # a shorter search finds none
        assert ops.minimal_Ne(rho, gamma, LAM, LAM_BAR, corrected=corrected, criterion=criterion,
                              Ne_max=want - 1) is None


def test_minimal_Ne_cases():
    # a small step (theta = 1/4) needs several local steps, with either criterion
    for criterion in ("radius", "norm"):
        assert ops.minimal_Ne(1.0, 0.25 * 2 / (LAM_BAR + 1), LAM, LAM_BAR, criterion=criterion) > 1
    # chi >= 1 (step at the end of the range): no Ne helps
    rho = 1.0
    assert ops.minimal_Ne(rho, 2 / (LAM_BAR + 1 / rho), LAM, LAM_BAR) is None
    # defaults: corrected coupling, radius criterion, Ne_max = 100_000
    gamma = ops.default_local_step(rho, LAM, LAM_BAR)
    assert ops.minimal_Ne(rho, gamma, LAM, LAM_BAR) == ops.minimal_Ne(rho, gamma, LAM, LAM_BAR, corrected=True,
                                                                      criterion="radius", Ne_max=100_000)
    assert ops.minimal_Ne(rho, gamma, LAM, LAM_BAR, Ne_max=2.0) == ops.minimal_Ne(rho, gamma, LAM, LAM_BAR, Ne_max=2)


def test_minimal_Ne_needs_more_than_the_default_search_at_a_slow_solver():
    # chi just below 1: a = chi^Ne decays slowly, so the first stable Ne is large; it is found
    # when Ne_max allows it and the default search (100_000) covers it
    rho, lam, lam_bar = 1.0, 1e-3, 1.0
    gamma = 1e-3
    chi = ops.local_gd_contraction(gamma, rho, lam, lam_bar)
    zeta = ops.prs_contraction(rho, lam, lam_bar)
    c = ops.coupling_constant(rho, lam, True)
    # closed form of Lemma 7 (1 − zeta)(1 − a) > 4ca, i.e. a < (1 − zeta)/(1 − zeta + 4c)
    bound = (1 - zeta) / (1 - zeta + 4 * c)
    want = math.floor(math.log(bound) / math.log(chi)) + 1
    assert 1 < want < 100_000
    assert ops.minimal_Ne(rho, gamma, lam, lam_bar) == want
    assert ops.minimal_Ne(rho, gamma, lam, lam_bar, Ne_max=want - 1) is None


def test_one_step_threshold():
    # At Ne = 1, S is stable iff chi < (1 − zeta)/(1 − zeta + 4c) (Lemma 7 at a = chi)
    out = ops.gd_one_step_threshold(1.0, LAM, LAM_BAR, corrected=True)
    zeta = max(abs(1 - LAM_BAR) / (1 + LAM_BAR), abs(1 - LAM) / (1 + LAM))  # rho = 1
    c = 1 / (1 + LAM)
    assert out["zeta"] == pytest.approx(zeta, rel=1e-15) and out["c"] == pytest.approx(c, rel=1e-15)
    assert out["threshold"] == pytest.approx((1 - zeta) / (1 - zeta + 4 * c), rel=1e-15)
    kd = (LAM_BAR + 1) / (LAM + 1)
    assert out["chi_min"] == pytest.approx((kd - 1) / (kd + 1), rel=1e-14)
    # default: the coupling as printed, 1/(lam + 1/rho) (rho = 2: 2/3, corrected 1/3)
    assert ops.gd_one_step_threshold(2.0, LAM, LAM_BAR)["c"] == pytest.approx(2 / 3, rel=1e-15)
    assert ops.gd_one_step_threshold(2.0, LAM, LAM_BAR, corrected=True)["c"] == pytest.approx(1 / 3, rel=1e-15)
    assert set(out) == {"threshold", "chi_min", "zeta", "c"}


@pytest.mark.parametrize("fn", [ops.lemma7_condition, ops.lemma7_condition_as_printed])
def test_lemma7_conditions_at_the_boundary(fn):
    # zeta = a = 1/2, c = 1/8: (1 − zeta)(1 − a) = 4ca = 1/4 exactly, where S has eigenvalues 1
    # and 1/8: not stable, so the strict closed form is False there; the printed one (<) too.
    S = ops.matrix_S_from(0.5, 0.5, 0.125)
    assert ops.spectral_radius(S) == pytest.approx(1.0, abs=1e-15)
    assert fn(0.5, 0.5, 0.125) is False
    inside = fn(0.1, 0.5, 0.125)  # stable S: (0.9)(0.5) > 0.25
    outside = fn(0.5, 0.9, 0.125)  # unstable: (0.5)(0.1) < 0.45
    assert (inside, outside) == ((True, False) if fn is ops.lemma7_condition else (False, True))
    assert type(inside) is bool and type(outside) is bool
    arr = fn([0.1, 0.5], [0.5, 0.9], 0.125)
    assert isinstance(arr, np.ndarray) and arr.tolist() == [inside, outside]


def test_condition_numbers_and_steps():
    # lam_bar/lam when rho is None or for v1 (here 8/2 = 4), (lam_bar + 1/rho)/(lam + 1/rho) for v2
    assert ops.local_condition_number(None, 2.0, 8.0) == 4.0
    assert ops.local_condition_number(0.5, 2.0, 8.0, "v1") == 4.0
    assert ops.local_condition_number(0.5, 2.0, 8.0) == pytest.approx(10 / 4, rel=1e-15)
    assert ops.agd_contraction(0, 4.0) == 5.0 and ops.agd_contraction(2.0, 4.0) == pytest.approx(1.25, rel=1e-15)
    assert ops.agd_momentum(9.0) == pytest.approx(0.5, rel=1e-15)
    S = ops.matrix_S(1.0, 2.0, LAM, LAM_BAR, 0.5)  # an integral float Ne is accepted
    assert np.array_equal(S, ops.matrix_S(1.0, 2, LAM, LAM_BAR, 0.5))


@pytest.mark.parametrize("call, message", [
    (lambda: ops.default_local_step(0.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.max_local_step(0.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.prs_contraction_v1_as_printed(0.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.local_condition_number(-1.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got -1\.0$"),
    (lambda: ops.local_condition_number(1.0, LAM, LAM_BAR, "v3"), r"^version must be 'v1' or 'v2', got 'v3'$"),
    (lambda: ops.matrix_S(0.0, 1, LAM, LAM_BAR, 0.5), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.matrix_S(1.0, 1, LAM, LAM_BAR, np.inf), r"^chi must be finite, in \(-inf, inf\), got inf$"),
    (lambda: ops.matrix_S(1.0, 1, LAM, LAM_BAR, -0.5), r"^chi must be >= 0, got -0\.5$"),
    (lambda: ops.agd_momentum(np.nan), r"^kappa must be a real number, got nan$"),
    (lambda: ops.agd_momentum(0.5), r"^kappa must be >= 1, got 0\.5$"),
    (lambda: ops.agd_contraction(1, np.nan), r"^kappa must be a real number, got nan$"),
])
def test_constant_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, [], 1), r"^rhos must be a non-empty array of values > 0$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, [1.0, 0.0], 1), r"^rhos must be a non-empty array of values > 0$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, [np.inf], 1), r"^rhos must be a non-empty array of values > 0$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, []), r"^Nes must be a non-empty array of integers >= 1$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, [1.5]), r"^Nes must be a non-empty array of integers >= 1$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, [0, 2]), r"^Nes must be a non-empty array of integers >= 1$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, 1, []), r"^thetas must be a non-empty array of values in \(0, 2\)$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, 1, [0.0]), r"^thetas must be a non-empty array of values in \(0, 2\)$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, 1, [2.0]), r"^thetas must be a non-empty array of values in \(0, 2\)$"),
    (lambda: ops.stabilising_parameters(LAM, 0.5, 1.0, 1), r"^lam_bar must be >= lam = 1 \(0 < lam <= lam_bar\), got 0\.5$"),
    (lambda: ops.stabilising_parameters(LAM, LAM_BAR, 1.0, 1).points("x"), r"^which must be 'stable' or 'contractive', got 'x'$"),
    (lambda: ops.minimal_Ne(1.0, 0.1, LAM, LAM_BAR, criterion="x"), r"^criterion must be 'radius' or 'norm', got 'x'$"),
    (lambda: ops.minimal_Ne(1.0, 0.1, LAM, LAM_BAR, Ne_max=0), r"^Ne_max must be an integer >= 1, got 0$"),
])
def test_grid_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: ops.spectral_norm([[np.nan, 1.0], [1.0, 1.0]]), r"^S must have finite entries$"),
    (lambda: ops.spectral_norm(np.ones(3)), r"^S must be a matrix, got shape \(3,\)$"),
    (lambda: ops.matrix_S(1.0, -1, LAM, LAM_BAR, 0.5), r"^Ne must be an integer >= 1, got -1$"),
    (lambda: ops.gd_contraction(0.0, LAM, LAM_BAR), r"^step must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.coupling_constant(0.0, LAM), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.coupling_constant(1.0, 0.0), r"^lam must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.local_gd_contraction(0.1, 0.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.prs_contraction(0.0, LAM, LAM_BAR), r"^rho must be in \(0, inf\), got 0\.0$"),
    (lambda: ops.prs_contraction(1.0, -1.0, LAM_BAR), r"^lam must be in \(0, inf\), got -1\.0$"),
    (lambda: ops.prs_contraction(1.0, LAM, np.inf), r"^lam_bar must be finite, in \(-inf, inf\), got inf$"),
    (lambda: ops.matrix_S_from(np.nan, 0.1, 0.1), r"^a must be a real number, got nan$"),
    (lambda: ops.matrix_S_from(0.1, np.nan, 0.1), r"^zeta must be a real number, got nan$"),
    (lambda: ops.matrix_S_from(0.1, 0.1, np.inf), r"^c must be finite, in \(-inf, inf\), got inf$"),
    (lambda: ops.matrix_S_from(0.1, 0.1, -0.1), r"^a, zeta and c must be >= 0, got a=0\.1, zeta=0\.1, c=-0\.1$"),
    (lambda: ops.matrix_S_from(0.1, -0.1, 0.1), r"^a, zeta and c must be >= 0, got a=0\.1, zeta=-0\.1, c=0\.1$"),
    (lambda: ops.matrix_S_from(-0.1, 0.1, 0.1), r"^a, zeta and c must be >= 0, got a=-0\.1, zeta=0\.1, c=0\.1$"),
])
def test_more_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_zero_entries_and_hand_values():
    # a = 0, zeta = 0, c = 0 and chi = 0 are allowed (exact local solver, rho·lam = 1, no coupling)
    assert np.array_equal(ops.matrix_S_from(0.0, 0.0, 0.0), np.zeros((2, 2)))
    assert ops.matrix_S(1.0, 3, LAM, LAM_BAR, 0.0)[0, 0] == 0.0
    # coupling: rho = 2, lam = 4: corrected 1/(1 + 8), as printed 1/(4 + 1/2)
    assert ops.coupling_constant(2.0, 4.0, corrected=True) == pytest.approx(1 / 9, rel=1e-15)
    assert ops.coupling_constant(2.0, 4.0) == pytest.approx(1 / 4.5, rel=1e-15)
    # v1's Lemma 3 as printed at rho = 1/2, lam = 1, lam_bar = 4: max(0.5/3, 0.5/1.5) = 1/3
    assert ops.prs_contraction_v1_as_printed(0.5, 1.0, 4.0) == pytest.approx(1 / 3, rel=1e-15)


def test_stabilising_parameters_with_other_moduli():
    # lam = 2, lam_bar = 8 (lam != 1, so rho·lam and rho/lam differ); Ne as integers
    lam, lam_bar = 2.0, 8.0
    rhos, Nes, thetas = [0.1, 0.7, 3.0], [1, 4], [0.5, 1.2]
    grid = ops.stabilising_parameters(lam, lam_bar, rhos, Nes, thetas)
    assert grid.Ne.dtype.kind == "i"
    for r, rho in enumerate(rhos):
        for t, theta in enumerate(thetas):
            gamma = theta * 2 / (lam_bar + 1 / rho)
            chi = ops.local_gd_contraction(gamma, rho, lam, lam_bar)
            for e, Ne in enumerate(Nes):
                S = ops.matrix_S(rho, Ne, lam, lam_bar, chi, corrected=True)
                assert grid.radius[r, e, t] == pytest.approx(ops.spectral_radius(S), rel=1e-12, abs=1e-15)


def test_minimal_Ne_at_the_end_of_the_search():
    # chi chosen so that the first stable Ne is 100_000 (log(bound)/log(chi) = 99_999.5 by the
    # closed form of Lemma 7): found by the default search, and at Ne_max = 100_000 exactly;
    # one step further (first stable Ne 100_001) is beyond the default search
    rho, lam, lam_bar = 1.0, 1e-3, 1.0
    zeta = ops.prs_contraction(rho, lam, lam_bar)
    c = ops.coupling_constant(rho, lam, True)
    bound = (1 - zeta) / (1 - zeta + 4 * c)
    for first, found in ((100_000, True), (100_001, False)):
        chi = math.exp(math.log(bound) / (first - 0.5))
        gamma = (1 - chi) / (lam + 1 / rho)  # chi = 1 − gamma(lam + 1/rho) for this small step
        assert ops.local_gd_contraction(gamma, rho, lam, lam_bar) == pytest.approx(chi, rel=1e-12)
        assert ops.minimal_Ne(rho, gamma, lam, lam_bar) == (first if found else None)
        assert ops.minimal_Ne(rho, gamma, lam, lam_bar, Ne_max=first) == first
