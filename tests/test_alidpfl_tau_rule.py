"""ALI-DPFL's τ* rule (§III-D, §IV-B; spec decision 5), function by function, against the
formulas written out here with ``math`` (independent of the module's NumPy expressions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.alidpfl import tau_rule as tr


def _h(x: float, xi: float, beta: float, eta: float, noise: float) -> float:
    """Theorem 1, eq. (24): (ξ + N)/β·((ηβ + 1)^x − 1) − η(ξ + N)·x."""
    a = xi + noise
    return a / beta * ((eta * beta + 1) ** x - 1) - eta * a * x


def _G(tau: int, T: float, h: float, eta: float, phi: float, rho: float, lam: float) -> float:
    """Theorem 2, eq. (13); +inf where T·(ηφ − ρh/(τλ²)) ≤ 0."""
    denom = T * (eta * phi - rho * h / (tau * lam**2))
    return 1 / denom + math.sqrt(3) / 3 if denom > 0 else math.inf


def test_noise_term_is_lemma3():
    assert tr.noise_term(582_026, 1.1, 0.1, 90) == pytest.approx(2 * math.sqrt(582_026) * 1.1 * 0.1 / 90, rel=1e-14)
    assert tr.noise_term(1, 2.0, 0.5, 4.0) == pytest.approx(0.5, rel=1e-15)


@pytest.mark.parametrize("args, name", [((0, 1.1, 0.1, 90), "d"), ((10, 0.0, 0.1, 90), "sigma"),
                                        ((10, 1.1, -0.1, 90), "clip"), ((10, 1.1, 0.1, 0.0), "batch")])
def test_noise_term_rejects_bad_input(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        tr.noise_term(*args)


@pytest.mark.parametrize("x", [0.0, 1.0, 2.0, 3.0, 5.5, 40.0])
def test_gap_h_is_eq24(x):
    xi, beta, eta, noise = 0.3, 2.0, 0.5, 0.7
    assert float(tr.gap_h(x, xi, beta, eta, noise)) == pytest.approx(_h(x, xi, beta, eta, noise), rel=1e-12, abs=1e-15)


def test_gap_h_vanishes_at_zero_and_one_and_grows_after():
    h = tr.gap_h(np.arange(6), 0.2, 1.5, 0.5, 0.1)
    assert h[0] == 0.0 and abs(h[1]) < 1e-15
    assert np.all(np.diff(h[1:]) > 0)


@pytest.mark.parametrize("kwargs, name", [({"xi": -0.1}, "xi"), ({"beta": 0.0}, "beta"), ({"eta": 0.0}, "eta"),
                                          ({"noise": -1.0}, "noise"), ({"x": -1.0}, "x")])
def test_gap_h_rejects_bad_input(kwargs, name):
    args = {"x": 2.0, "xi": 0.1, "beta": 1.0, "eta": 0.5, "noise": 0.1, **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        tr.gap_h(**args)


def test_gap_h_printed_divides_xi_by_b_in_the_second_term():
    x, xi, beta, eta, d, sigma, clip, batch = 3.0, 0.4, 2.0, 0.5, 100, 1.1, 0.1, 75.0
    s = 2 * math.sqrt(d) * sigma * clip
    expected = (xi + s / batch) / beta * ((eta * beta + 1) ** x - 1) - eta * (xi + s) / batch * x
    assert float(tr.gap_h_printed(x, xi, beta, eta, d, sigma, clip, batch)) == pytest.approx(expected, rel=1e-12)
    # with ξ = 0 the misprint is harmless: the printed h equals eq. (24)
    assert float(tr.gap_h_printed(x, 0.0, beta, eta, d, sigma, clip, batch)) == pytest.approx(
        _h(x, 0.0, beta, eta, s / batch), rel=1e-12)
    assert float(tr.gap_h_printed(x, xi, beta, eta, d, sigma, clip, batch)) != pytest.approx(
        _h(x, xi, beta, eta, s / batch), rel=1e-3)


def test_horizon_is_done_plus_the_first_budget_to_end():
    np.testing.assert_array_equal(tr.horizon(np.array([1, 2, 3, 5]), 10, 4, 11), [14, 18, 21, 21])
    assert int(tr.horizon(3, 0, 0, 50)) == 0


def test_bound_G_is_eq13_and_infinite_where_infeasible():
    taus = np.array([1, 2, 3, 4])
    T = np.array([100.0, 150.0, 200.0, 0.0])
    h = np.array([0.0, 0.05, 2.0, 0.1])
    eta, phi, rho, lam = 0.5, 0.8, 1.0, 0.6
    got = tr.bound_G(taus, T, h, eta=eta, phi=phi, rho=rho, lam=lam)
    expected = [_G(int(t), float(TT), float(hh), eta, phi, rho, lam) for t, TT, hh in zip(taus, T, h, strict=True)]
    assert math.isfinite(expected[0]) and math.isfinite(expected[1])
    assert expected[2] == math.inf and expected[3] == math.inf  # 2/(3·0.36) > 0.4; T = 0
    np.testing.assert_allclose(got[:2], expected[:2], rtol=1e-13)
    assert np.all(np.isinf(got[2:]))


def test_bound_G_with_denominators_below_one():
    # T·(ηφ − ρh/(τλ²)) = 1·(0.4 − 0.1) = 0.3 and 2·(0.4 − 0) = 0.8: finite, above 1 + √3/3
    got = tr.bound_G(np.array([2, 1]), np.array([1.0, 2.0]), np.array([0.072, 0.0]), eta=0.5, phi=0.8, rho=1.0, lam=0.6)
    np.testing.assert_allclose(got, [1 / 0.3 + math.sqrt(3) / 3, 1 / 0.8 + math.sqrt(3) / 3], rtol=1e-12)


def test_bound_G_is_infinite_on_a_zero_denominator():
    # ηφ = ρh/(τλ²) exactly: 0.5·0.5 = 1·0.25/(1·1)
    assert np.isinf(tr.bound_G(np.array([1]), np.array([10.0]), np.array([0.25]), eta=0.5, phi=0.5, rho=1.0, lam=1.0))[0]


def test_phi_is_omega_times_one_minus_half_beta_eta():
    assert tr.Constants(rho=1.0, beta=0.8, xi=0.1, lam=0.5, omega=2.0).phi(0.5) == pytest.approx(2.0 * (1 - 0.2))


def _report(loss_local, loss_global, grad_local, grad_global, distance):
    return tr.ClientReport(loss_local, loss_global, np.array(grad_local, float), np.array(grad_global, float), distance)


def test_estimate_constants_by_hand():
    reports = [_report(1.0, 1.5, [1.0, 0.0], [0.0, 0.0], 2.0),   # ρ = 0.25, β = 0.5
               _report(2.0, 1.0, [0.0, 3.0], [0.0, 1.0], 4.0)]   # ρ = 0.25, β = 0.5
    w = np.array([0.25, 0.75])
    rho, beta, xi = tr.estimate_constants(reports, w)
    # ∇F(ŵ) = 0.25·(0, 0) + 0.75·(0, 1) = (0, 0.75): ξ = 0.25·0.75 + 0.75·0.25
    assert rho == pytest.approx(0.25) and beta == pytest.approx(0.5) and xi == pytest.approx(0.375)


def test_a_client_that_did_not_move_adds_to_xi_only():
    reports = [_report(1.0, 3.0, [5.0], [2.0], 0.0), _report(1.0, 2.0, [1.0], [0.0], 1.0)]
    rho, beta, xi = tr.estimate_constants(reports, np.array([0.5, 0.5]))
    # client 0 contributes no ρ, β; ∇F = 1: ξ = 0.5·|2 − 1| + 0.5·|0 − 1|
    assert rho == pytest.approx(0.5) and beta == pytest.approx(0.5) and xi == pytest.approx(1.0)


@pytest.mark.parametrize("weights", [[1.0], [0.5, 0.6], [-0.5, 1.5], [[0.5, 0.5]]])
def test_estimate_constants_rejects_bad_weights(weights):
    reports = [_report(1.0, 1.0, [1.0], [1.0], 1.0)] * 2
    with pytest.raises(ValueError, match="^weights must"):
        tr.estimate_constants(reports, np.array(weights))
    with pytest.raises(ValueError, match="^reports must"):
        tr.estimate_constants([], np.array([]))


def test_lambda_omega_rules():
    assert tr.lambda_omega("loss", 0.8, 2.0) == (0.8, 0.25)
    assert tr.lambda_omega("half-loss", 0.8, 2.0) == (0.4, 0.25)
    assert tr.lambda_omega("fixed", 0.8, 2.0) == (0.5, 1.0)
    lam, omega = tr.lambda_omega("loss", 0.0, 0.0)  # floors: λ ≥ 1e-12, D ≥ 1e-12
    assert lam == 1e-12 and omega == pytest.approx(1e24)
    assert tr.lambda_omega("half-loss", 0.0, 1.0)[0] == 1e-12


@pytest.mark.parametrize("args, name", [(("median", 1.0, 1.0), "rule"), (("loss", -1.0, 1.0), "loss"),
                                        (("loss", 1.0, -1.0), "distance_from_start")])
def test_lambda_omega_rejects_bad_input(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        tr.lambda_omega(*args)


def _brute_force_tau(c: tr.Constants, tau_prev, eta, noise, done, rounds_left, iters_left, cap=100):
    """τ* by trying τ = 1..min(2τ_prev, cap) with the formulas above; ties to the smallest τ;
    1 when no τ is feasible."""
    best, best_g = 1, math.inf
    for tau in range(1, min(2 * tau_prev, cap) + 1):
        T = done + min(rounds_left * tau, iters_left)
        g = _G(tau, T, _h(tau, c.xi, c.beta, eta, noise), eta, c.omega * (1 - c.beta * eta / 2), c.rho, c.lam)
        if g < best_g:
            best, best_g = tau, g
    return best


@pytest.mark.parametrize("state", [
    # (ρ, β, ξ, λ, ω), τ_prev, t_done, R_s,left, R_c,left
    ((1.0, 0.5, 0.01, 2.0, 1.0), 4, 10, 20, 100),   # budgets favour τ ≈ R_c/R_s = 5, capped at 2·4
    ((1.0, 0.5, 0.01, 2.0, 1.0), 50, 0, 30, 90),    # τ = 3 spends both budgets
    ((1.0, 0.5, 0.01, 2.0, 1.0), 3, 0, 200, 100),   # R_s ≥ R_c: τ = 1
    ((5.0, 1.5, 0.5, 0.3, 1.0), 10, 0, 20, 400),    # a large gap penalty: smaller τ
    ((0.5, 0.2, 0.0, 1.0, 0.5), 80, 5, 2, 1000),    # τ_m = min(160, 100)
])
def test_choose_tau_is_the_brute_force_minimiser(state):
    (rho, beta, xi, lam, omega), tau_prev, done, rs, rc = state
    c = tr.Constants(rho=rho, beta=beta, xi=xi, lam=lam, omega=omega)
    tau, g = tr.choose_tau(c, tau_prev=tau_prev, eta=0.5, noise=0.05, iterations_done=done,
                           rounds_left=rs, iterations_left=rc)
    assert g.shape == (min(2 * tau_prev, 100),)
    assert tau == _brute_force_tau(c, tau_prev, 0.5, 0.05, done, rs, rc)


def test_choose_tau_examples_decided_by_the_budgets():
    c = tr.Constants(rho=1.0, beta=0.5, xi=0.01, lam=2.0, omega=1.0)
    kw = {"eta": 0.5, "noise": 0.05, "iterations_done": 0}
    assert tr.choose_tau(c, tau_prev=50, rounds_left=30, iterations_left=90, **kw)[0] == 3
    assert tr.choose_tau(c, tau_prev=3, rounds_left=200, iterations_left=100, **kw)[0] == 1
    assert tr.choose_tau(c, tau_prev=2, rounds_left=10, iterations_left=100, **kw)[0] == 4  # τ_m = 4


def test_choose_tau_falls_back_to_one_when_nothing_is_feasible():
    c = tr.Constants(rho=1.0, beta=5.0, xi=0.01, lam=1.0, omega=1.0)  # βη/2 > 1, φ < 0: every denominator < 0
    tau, g = tr.choose_tau(c, tau_prev=3, eta=0.5, noise=0.05, iterations_done=0, rounds_left=5, iterations_left=50)
    assert tau == 1 and np.all(np.isinf(g)) and g.size == 6


def test_choose_tau_respects_the_cap_and_ties_go_to_the_smallest():
    c = tr.Constants(rho=0.0, beta=0.5, xi=0.0, lam=1.0, omega=1.0)  # ρ = 0: G depends on T only
    tau, g = tr.choose_tau(c, tau_prev=40, eta=0.5, noise=0.0, iterations_done=0, rounds_left=10,
                           iterations_left=30, tau_cap=7)
    assert g.size == 7 and tau == 3  # T(τ) = min(10τ, 30): τ = 3..7 tie, the smallest wins


@pytest.mark.parametrize("kwargs, name", [({"tau_prev": 0}, "tau_prev"), ({"tau_cap": 0}, "tau_cap"),
                                          ({"rounds_left": -1}, "rounds_left"),
                                          ({"iterations_left": -1}, "iterations_left"),
                                          ({"iterations_done": -1}, "iterations_done")])
def test_choose_tau_rejects_bad_input(kwargs, name):
    args = {"tau_prev": 1, "eta": 0.5, "noise": 0.1, "iterations_done": 0, "rounds_left": 1, "iterations_left": 1,
            **kwargs}
    with pytest.raises(ValueError, match=rf"^{name} must"):
        tr.choose_tau(tr.Constants(1.0, 1.0, 0.1, 1.0, 1.0), **args)


def test_choose_tau_accepts_its_boundary_values():
    c = tr.Constants(rho=1.0, beta=0.5, xi=0.01, lam=2.0, omega=1.0)
    tau, g = tr.choose_tau(c, tau_prev=1, eta=0.5, noise=0.05, iterations_done=0, rounds_left=0,
                           iterations_left=0, tau_cap=1)  # no budget left: T = 0, nothing feasible
    assert tau == 1 and g.size == 1 and np.isinf(g[0])
    assert tr.choose_tau(c, tau_prev=1, eta=0.5, noise=0.05, iterations_done=7, rounds_left=3,
                         iterations_left=0)[0] == 1


def test_estimate_constants_accepts_a_zero_weight():
    reports = [_report(1.0, 2.0, [1.0], [0.0], 1.0), _report(9.0, 0.0, [9.0], [5.0], 1.0)]
    rho, beta, xi = tr.estimate_constants(reports, np.array([1.0, 0.0]))
    assert (rho, beta, xi) == (pytest.approx(1.0), pytest.approx(1.0), pytest.approx(0.0))


def test_unaccounted_evaluations_per_client_and_round():
    got = tr.unaccounted_evaluations(128, 3, 90.0)
    assert got == {"unaccounted": 256.0, "accounted": 270.0, "ratio": pytest.approx(256 / 270)}
    assert tr.unaccounted_evaluations(1, 1, 0.5) == {"unaccounted": 2.0, "accounted": 0.5, "ratio": 4.0}


@pytest.mark.parametrize("args, name", [((0, 1, 90.0), "estimate_samples"), ((128, 0, 90.0), "tau"),
                                        ((128, 1, 0.0), "expected_batch")])
def test_unaccounted_evaluations_reject_bad_input(args, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        tr.unaccounted_evaluations(*args)
