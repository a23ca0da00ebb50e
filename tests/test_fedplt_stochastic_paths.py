"""The stochastic paths of the Fed-PLT engine checked independently: noisy GD (v2 eq. (13)),
mini-batch SGD (v2 §IV-B) and the privacy initialisation ``x_0 ~ N(0, 2 tau^2 I / lam)``
(Proposition 4), in the stacked engine (``fedplt.baselines.fedplt.FedPLT``) and in the
reference iteration (``fedplt.algorithm``).

Two kinds of checks:

* same draws: the stacked step and the reference iteration are fed generators in the same
  state, so they must agree to round-off; the expected values are written out here from the
  update rules of the paper (plain loops, no library solver), not taken from either engine;
* closed forms: on a zero-gradient quadratic the iterate is Gaussian with a variance that the
  recursion ``w <- g w + sqrt(2 gamma) tau xi`` gives in closed form,
  ``2 gamma tau^2 (1 - g^(2 N_e)) / (1 - g^2)``; the sample variance of 20,000 or more
  draws is compared with it (relative standard error <= 1 %, tolerance 5 %, far from the
  factor 2 of a wrong ``sqrt(2 gamma)``).
"""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.fedplt.algorithm import fedplt_iteration, run_fedplt
from fedrepro.fedplt.baselines.fedplt import FedPLT
from fedrepro.fedplt.batched import RunStreams, run_batched
from fedrepro.fedplt.checks.instances import quadratic_problem, reference_round
from fedrepro.problems.logistic import logistic_v2
from fedrepro.problems.quadratic import QuadraticProblem

# Round-off of a few batched products against the per-agent oracle, values of order 1.
ROUNDOFF = 1e-12
# Relative tolerance of a sample variance from >= 20,000 Gaussian draws: standard error
# sqrt(2 / 20000) = 1 %, tolerance 5 % (a factor 2 error in the variance is 100 %).
VAR_RTOL = 0.05


@pytest.fixture(scope="module")
def convex():
    return logistic_v2(True, 0, N=12, q=30)


@pytest.fixture(scope="module")
def nonconvex():
    return logistic_v2(False, 0, N=12, q=30)


def _fresh_generators(seed: int, runs: int) -> list[np.random.Generator]:
    """Generators in the state RunStreams(seed, runs) starts from, built from numpy's
    SeedSequence directly (child r of SeedSequence(seed))."""
    return [np.random.default_rng(c) for c in np.random.SeedSequence(seed).spawn(runs)]


def _default_gamma(problem, rho: float) -> float:
    """``2 / (lam_bar + lam + 2/rho)`` (v2 §IV-B), written out."""
    return 2.0 / (problem.lam_bar + problem.lam + 2.0 / rho)


def _gd_rows(problem, X, Z, rho, gamma, Ne, noise_std=0.0, gen=None):
    """One round of Algorithm 1 with (noisy) GD, full participation, written from eqs.
    (11)/(13): the per-agent gradient is ``problem.grad`` (an oracle tested elsewhere)."""
    y = Z.mean(axis=0)
    V = 2 * y - Z
    W = X.copy()
    for _ in range(Ne):
        G = problem.grad(W) + (W - V) / rho
        W = W - gamma * G
        if noise_std:
            W = W + noise_std * gen.standard_normal(W.shape)
    return W, Z + 2 * (W - y)


# --------------------------------------------------------------------------- noisy GD


@pytest.mark.parametrize("which", ["convex", "nonconvex"])
def test_stacked_noisy_gd_equals_the_reference_iteration_with_the_same_draws(which, request):
    """Three stacked runs (three rho, three tau) of two rounds; run r against
    fedplt_iteration and against the written-out eq. (13), each fed child r of the seed."""
    p = request.getfixturevalue(which)
    rhos, taus = np.array([0.3, 1.0, 1.5]), np.array([0.05, 0.2, 0.5])
    Ne, seed = 3, 11
    algo = FedPLT(p, Ne=Ne, solver="noisy-gd", rho=rhos, tau=taus)
    rng = np.random.default_rng(3)
    state = {"x": rng.standard_normal((3, p.N, p.n)), "z": rng.standard_normal((3, p.N, p.n))}
    streams = RunStreams(seed, 3)
    s1, evals = algo.step(state, None, streams)
    s2, _ = algo.step(s1, None, streams)
    assert np.array_equal(evals, np.full(3, p.N * Ne))
    gens_a, gens_b = _fresh_generators(seed, 3), _fresh_generators(seed, 3)
    for r in range(3):
        rho, tau = float(rhos[r]), float(taus[r])
        x, z = state["x"][r], state["z"][r]
        xr, zr = x, z
        for s in (s1, s2):
            x, z, _ = fedplt_iteration(x, z, p, rho=rho, Ne=Ne, solver="noisy-gd", tau=tau, rng=gens_a[r])
            gamma = _default_gamma(p, rho)
            xr, zr = _gd_rows(p, xr, zr, rho, gamma, Ne, np.sqrt(2 * gamma) * tau, gens_b[r])
            assert np.max(np.abs(s["x"][r] - x)) <= ROUNDOFF
            assert np.max(np.abs(s["z"][r] - z)) <= ROUNDOFF
            assert np.max(np.abs(x - xr)) <= ROUNDOFF
            assert np.max(np.abs(z - zr)) <= ROUNDOFF


def test_stacked_noisy_gd_with_partial_participation_equals_the_transcription():
    """Partial participation: the stacked step draws noise for every agent (so that run r's
    numbers do not depend on the active set); the active agents follow eq. (13) with those
    draws (independent transcription, instances.reference_round) and the others keep x, z."""
    p = quadratic_problem(5, 3, 0.5, 3.0, np.random.default_rng(4))
    rho, tau, gamma, Ne, seed = 0.8, 0.3, 0.25, 4, 5
    algo = FedPLT(p, Ne=Ne, solver="noisy-gd", rho=rho, tau=tau, gamma=gamma)
    rng = np.random.default_rng(6)
    X, Z = rng.standard_normal((2, 2, p.N, p.n))
    active = np.array([[True, False, True, True, False], [False, True, False, True, True]])
    new, evals = algo.step({"x": X, "z": Z}, active, RunStreams(seed, 2))
    assert np.array_equal(evals, Ne * active.sum(axis=1))
    gens = _fresh_generators(seed, 2)
    noise = np.sqrt(2 * gamma) * tau * np.stack(
        [np.stack([g.standard_normal((p.N, p.n)) for _ in range(Ne)]) for g in gens])
    Xr, Zr = reference_round(p, X, Z, rho=rho, Ne=Ne, solver="gd", gamma=gamma, active=active, noise=noise)
    assert np.max(np.abs(new["x"] - Xr)) <= ROUNDOFF
    assert np.max(np.abs(new["z"] - Zr)) <= ROUNDOFF
    assert np.array_equal(new["x"][~active], X[~active])


def _zero_gradient_quadratic(N: int, n: int, lam: float) -> QuadraticProblem:
    """``f_i(x) = lam ||x||^2 / 2``: with ``x = z = 0`` the only force is the noise."""
    return QuadraticProblem(np.broadcast_to(lam * np.eye(n), (N, n, n)).copy(), np.zeros((N, n)))


def _noisy_gd_variance(gamma: float, tau: float, lam: float, rho: float, Ne: int) -> float:
    """Closed form: ``w_{l+1} = g w_l + sqrt(2 gamma) tau xi_l`` with
    ``g = 1 - gamma (lam + 1/rho)`` (``v = 2y - z = 0``), ``w_0 = 0``:
    ``Var w_Ne = 2 gamma tau^2 sum_{l < Ne} g^(2l)``."""
    g = 1.0 - gamma * (lam + 1.0 / rho)
    return 2.0 * gamma * tau ** 2 * sum(g ** (2 * ell) for ell in range(Ne))


@pytest.mark.parametrize("Ne", [1, 4])
def test_noise_variance_matches_the_closed_form(Ne):
    lam, rho, gamma, tau = 1.0, 1.0, 0.3, 0.05
    N, n, R = 400, 5, 10  # 20,000 draws per engine
    p = _zero_gradient_quadratic(N, n, lam)
    expected = _noisy_gd_variance(gamma, tau, lam, rho, Ne)
    zeros = np.zeros((R, N, n))
    algo = FedPLT(p, Ne=Ne, solver="noisy-gd", rho=rho, tau=tau, gamma=gamma)
    stacked, _ = algo.step({"x": zeros, "z": zeros}, None, RunStreams(1, R))
    x_ref = np.concatenate([
        fedplt_iteration(zeros[0], zeros[0], p, rho=rho, Ne=Ne, solver="noisy-gd", gamma=gamma, tau=tau,
                         rng=np.random.default_rng(100 + r))[0] for r in range(R)])
    for x in (stacked["x"], x_ref):
        assert x.var() == pytest.approx(expected, rel=VAR_RTOL)
        assert abs(x.mean()) <= 5 * np.sqrt(expected / x.size)  # 5 standard errors
    np.testing.assert_allclose(stacked["z"], 2 * stacked["x"], rtol=0, atol=1e-15)  # y = 0


def test_noise_variance_of_per_run_taus():
    """Per-run tau: the variance of run r is proportional to tau_r^2 (and to 2 gamma)."""
    lam, rho, gamma = 1.0, 1.0, 0.3
    taus = np.array([0.02, 0.1])
    p = _zero_gradient_quadratic(4000, 5, lam)
    zeros = np.zeros((2, p.N, p.n))
    algo = FedPLT(p, Ne=1, solver="noisy-gd", rho=rho, tau=taus, gamma=gamma)
    new, _ = algo.step({"x": zeros, "z": zeros}, None, RunStreams(2, 2))
    for r, tau in enumerate(taus):
        assert new["x"][r].var() == pytest.approx(2 * gamma * tau ** 2, rel=VAR_RTOL)


def test_run_batched_noisy_round_matches_the_closed_form():
    """The driver (run_batched, its own seeding) gives the same law after one round."""
    lam, rho, gamma, tau, Ne = 1.0, 1.0, 0.3, 0.1, 2
    p = _zero_gradient_quadratic(2000, 5, lam)
    algo = FedPLT(p, Ne=Ne, solver="noisy-gd", rho=rho, tau=tau, gamma=gamma)
    run = run_batched(algo, K=1, runs=2, tol=0.0, stop_when_done=False, seed=9)
    x1 = run.final_state["x"]
    assert x1.var() == pytest.approx(_noisy_gd_variance(gamma, tau, lam, rho, Ne), rel=VAR_RTOL)


# --------------------------------------------------------------------------- privacy initialisation


def test_stacked_privacy_initialisation_equals_the_formula_with_the_same_draws(convex):
    taus = np.array([0.1, 0.4, 1.0])
    algo = FedPLT(convex, Ne=2, solver="noisy-gd", rho=1.0, tau=taus, init="privacy")
    state = algo.init_state(3, RunStreams(8, 3))
    for r, g in enumerate(_fresh_generators(8, 3)):
        expected = np.sqrt(2 * taus[r] ** 2 / convex.lam) * g.standard_normal((convex.N, convex.n))
        assert np.max(np.abs(state["x"][r] - expected)) <= ROUNDOFF
    assert np.array_equal(state["z"], np.zeros_like(state["z"]))


def test_reference_privacy_initialisation_equals_the_formula_with_the_same_draws(convex):
    tau, seed = 0.3, 12
    run = run_fedplt(convex, rho=1.0, Ne=2, K=0, solver="noisy-gd", tau=tau, init="privacy", seed=seed,
                     record=())
    init_rng = np.random.default_rng(seed).spawn(3)[2]  # documented: the third child stream
    expected = np.sqrt(2 * tau ** 2 / convex.lam) * init_rng.standard_normal((convex.N, convex.n))
    assert np.max(np.abs(run.x - expected)) <= ROUNDOFF


def test_privacy_initialisation_variance_matches_proposition4():
    """``x_0 ~ N(0, 2 tau^2 I / lam)`` in both engines, 20,000 draws each."""
    lam, tau = 0.5, 0.2
    p = _zero_gradient_quadratic(4000, 5, lam)
    algo = FedPLT(p, Ne=1, solver="noisy-gd", rho=1.0, tau=tau, init="privacy")
    x_stacked = algo.init_state(1, RunStreams(3, 1))["x"]
    x_ref = run_fedplt(p, rho=1.0, Ne=1, K=0, solver="noisy-gd", tau=tau, init="privacy", seed=3, record=()).x
    for x in (x_stacked, x_ref):
        assert x.var() == pytest.approx(2 * tau ** 2 / lam, rel=VAR_RTOL)


# --------------------------------------------------------------------------- SGD


def _minibatch_grad_written_out(problem, X, B, gen):
    """Mini-batch logistic gradient of v2 §IV-B written out: per agent, the ``B`` points with
    the smallest of ``q`` uniform draws (a uniform draw without replacement), loss
    ``log(1 + exp(-b a x))``, plus the exact regulariser gradient."""
    u = gen.random((problem.N, problem.q))
    out = np.empty_like(X)
    for i in range(problem.N):
        pick = np.argsort(u[i], kind="stable")[:B]
        g = np.zeros(problem.n)
        for h in pick:
            a, b = problem.features[i, h], problem.labels[i, h]
            g += -b * a / (1.0 + np.exp(b * (a @ X[i])))
        reg = X[i] if problem.reg == "l2" else 2 * X[i] / (1 + X[i] ** 2) ** 2
        out[i] = g / B + problem.reg_weight * reg
    return out


@pytest.mark.parametrize("which", ["convex", "nonconvex"])
def test_sgd_iteration_equals_the_written_out_minibatch_steps(which, request):
    p = request.getfixturevalue(which)
    rho, Ne, B, gamma = 0.7, 3, 7, 0.2
    rng = np.random.default_rng(21)
    X, Z = rng.standard_normal((2, p.N, p.n))
    x, z, y = fedplt_iteration(X, Z, p, rho=rho, Ne=Ne, solver="sgd", batch_size=B, gamma=gamma,
                               rng=np.random.default_rng(5))
    gen = np.random.default_rng(5)
    y_ref = Z.mean(axis=0)
    V = 2 * y_ref - Z
    W = X.copy()
    for _ in range(Ne):
        W = W - gamma * (_minibatch_grad_written_out(p, W, B, gen) + (W - V) / rho)
    assert np.max(np.abs(x - W)) <= ROUNDOFF
    assert np.max(np.abs(z - (Z + 2 * (W - y_ref)))) <= ROUNDOFF
    assert np.max(np.abs(y - y_ref)) <= ROUNDOFF


def test_sgd_gradient_is_unbiased(convex):
    """The mean of many mini-batch gradients is the full gradient: 4000 draws, each entry
    within 5 standard errors (estimated from the draws)."""
    X = np.random.default_rng(2).standard_normal((convex.N, convex.n))
    gen = np.random.default_rng(3)
    draws = np.stack([convex.stochastic_grad(X, 5, gen) for _ in range(4000)])
    mean, se = draws.mean(axis=0), draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(mean - convex.grad(X)) <= 5 * se + 1e-15)
    # and the draw is random: without-replacement sampling of 5 of 30 points has variance
    assert np.all(se > 0)
