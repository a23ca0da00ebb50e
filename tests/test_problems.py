"""Federated problems: oracles against independent computations, moduli, the optimum."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.problems import (
    FederatedProblem,
    LogisticProblem,
    QuadraticProblem,
    generate_logistic_data,
    logistic_v1,
    logistic_v2,
    random_quadratic,
)


def _small_logistic(reg="l2", seed=3, N=4, q=30, n=3, intercept=False):
    rng = np.random.default_rng(seed)
    A, b, _ = generate_logistic_data(N, q, n, rng, intercept=intercept)
    return LogisticProblem(A, b, reg=reg, reg_weight=0.3)


def _loop_cost(p: LogisticProblem, X):
    """f_i(x_i) agent by agent, sample by sample (independent of the vectorised code)."""
    out = []
    for i in range(p.N):
        x = X[i]
        loss = np.mean([np.log1p(np.exp(-p.labels[i, h] * p.features[i, h] @ x)) for h in range(p.q)])
        r = 0.5 * x @ x if p.reg == "l2" else np.sum(x ** 2 / (1 + x ** 2))
        out.append(loss + p.reg_weight * r)
    return np.array(out)


# ----------------------------------------------------------------------------------------
# quadratic problems
# ----------------------------------------------------------------------------------------
def test_random_quadratic_moduli_and_oracles():
    p = random_quadratic(6, 4, 0.5, 8.0, np.random.default_rng(1))
    assert isinstance(p, FederatedProblem)
    eig = np.linalg.eigvalsh(p.A)
    # extremes included in every A_i: eigvalsh agrees with the prescribed ones to round-off
    # (1e-12 relative)
    np.testing.assert_allclose(eig[:, 0], 0.5, rtol=1e-12)
    np.testing.assert_allclose(eig[:, -1], 8.0, rtol=1e-12)
    assert p.lam == 0.5 and p.lam_bar == 8.0
    X = np.random.default_rng(2).standard_normal((6, 4))
    for i in range(6):  # per-agent closed forms; 1e-12 relative for matrix products
        np.testing.assert_allclose(p.cost(X)[i], 0.5 * X[i] @ p.A[i] @ X[i] - p.b[i] @ X[i], rtol=1e-12)
        np.testing.assert_allclose(p.grad(X)[i], p.A[i] @ X[i] - p.b[i], rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(p.hessian(X), p.A)
    xs = p.x_star()
    assert np.linalg.norm(p.total_grad(xs)) <= 1e-12  # a linear solve: round-off only


def test_quadratic_prox_closed_form_equals_newton():
    p = random_quadratic(5, 3, 1.0, 10.0, 7)
    V = np.random.default_rng(8).standard_normal((5, 3))
    closed = p.local_prox(V, 0.7)
    newton = FederatedProblem._local_prox(p, V, 0.7, None, V.copy(), 1e-15)
    # the generic Newton solve reaches the linear solve to round-off (1e-12)
    np.testing.assert_allclose(newton, closed, atol=1e-12)
    # optimality of (I + rho A) x = v + rho b
    res = closed + 0.7 * p.grad(closed) - V
    assert np.max(np.abs(res)) <= 1e-13


def test_v2_footnote_6_prox_drops_rho():
    """v2 footnote 6: for f = x^T A x/2 + <c, x> it prints prox_{rho f}(v) = (I + rho A)^{-1}(v - c);
    the minimiser is (I + rho A)^{-1}(v - rho c). Here c = -b in our sign convention."""
    p = random_quadratic(3, 2, 1.0, 3.0, 5)
    c = -p.b
    V = np.random.default_rng(6).standard_normal((3, 2))
    for rho in (0.5, 1.0, 2.0):
        exact = p.local_prox(V, rho)
        footnote = np.linalg.solve(np.eye(2) + rho * p.A, (V - c)[:, :, None])[:, :, 0]
        gap = np.max(np.abs(exact - footnote))
        if rho == 1.0:
            assert gap <= 1e-14  # identical at rho = 1 (round-off)
        else:
            assert gap > 1e-3  # a visible difference otherwise


# ----------------------------------------------------------------------------------------
# logistic problems: oracles
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("reg", ["l2", "nonconvex"])
def test_logistic_cost_grad_hessian(reg):
    p = _small_logistic(reg)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((p.N, p.n))
    # vectorised cost equals the loop reference (1e-13 relative: summation order)
    np.testing.assert_allclose(p.cost(X), _loop_cost(p, X), rtol=1e-13)
    G, H = p.grad(X), p.hessian(X)
    e = 1e-6
    for j in range(p.n):
        E = np.zeros_like(X)
        E[:, j] = e
        fd = (p.cost(X + E) - p.cost(X - E)) / (2 * e)
        # central differences: truncation O(e^2) ~ 1e-12, round-off ~ 1e-16/e = 1e-10
        np.testing.assert_allclose(G[:, j], fd, atol=1e-8)
        fdg = (p.grad(X + E) - p.grad(X - E)) / (2 * e)
        np.testing.assert_allclose(H[:, :, j], fdg, atol=1e-8)
    assert np.allclose(H, H.transpose(0, 2, 1), atol=1e-15)
    # total gradient sums the agents' gradients at one point
    x = X[0]
    np.testing.assert_allclose(p.total_grad(x), p.grad(np.tile(x, (p.N, 1))).sum(0), rtol=1e-14, atol=1e-15)
    # agents subset: row j uses agent agents[j]
    sel = np.array([2, 0])
    np.testing.assert_allclose(p.grad(X[sel], agents=sel), G[sel], rtol=1e-15, atol=1e-16)


def test_stochastic_grad_full_batch_and_unbiased():
    p = _small_logistic(q=20)
    X = np.random.default_rng(11).standard_normal((p.N, p.n))
    full = p.grad(X)
    # batch = q: the full gradient, exactly (same arithmetic)
    np.testing.assert_array_equal(p.stochastic_grad(X, p.q, np.random.default_rng(0)), full)
    rng = np.random.default_rng(12)
    B, M = 10, 4000
    draws = np.stack([p.stochastic_grad(X, B, rng) for _ in range(M)])
    mean, std = draws.mean(0), draws.std(0)
    # unbiased: the Monte Carlo mean is within 5 standard errors of the full gradient
    assert np.all(np.abs(mean - full) <= 5 * std / np.sqrt(M) + 1e-15)
    # without replacement: per-sample gradients g_h have population variance s2; the batch
    # mean has variance s2/B * (q - B)/(q - 1) (finite-population correction; with replacement
    # it would be s2/B, about twice as large here). Tolerance 15%: the relative standard
    # error of a variance estimate from 4000 draws is about 2-3%.
    margins = p.labels * np.matmul(p.features, X[:, :, None])[:, :, 0]
    per_sample = (-p.labels / (1 + np.exp(margins)))[:, :, None] * p.features  # (N, q, n)
    s2 = per_sample.var(axis=1)
    expected = s2 / B * (p.q - B) / (p.q - 1)
    np.testing.assert_allclose(draws.var(0), expected, rtol=0.15)


# ----------------------------------------------------------------------------------------
# logistic problems: moduli
# ----------------------------------------------------------------------------------------
def test_v1_strong_convexity_is_eps_over_N():
    """v1 states f_i in F_{eps, q_i/4 + eps}; with the per-agent regulariser eps/(2N)||x||^2
    the Hessian's smallest eigenvalue is eps/N (0.5), not eps (5)."""
    p = logistic_v1()
    eps, N = p.info["eps"], p.N
    assert (eps, N, p.q, p.n) == (5.0, 10, 20, 16)
    assert p.lam == pytest.approx(eps / N, rel=1e-15) and p.info["stated_lam"] == eps
    xs = p.x_star()
    min_eig_star = np.linalg.eigvalsh(p.hessian(np.tile(xs, (N, 1))))[:, 0]
    # at x*: every agent's curvature is eps/N plus a small data part, far below eps
    assert np.all(min_eig_star >= eps / N - 1e-12)  # lower bound holds (round-off 1e-12)
    assert np.all(min_eig_star < 0.6 * eps / N + eps / N)  # within 60% of eps/N ...
    assert np.all(min_eig_star < eps / 5)  # ... and so far below the stated eps
    # far away the data curvature vanishes: min eigenvalue -> eps/N (to 1e-6 at |x| = 200)
    u = np.random.default_rng(0).standard_normal(p.n)
    far = 200 * u / np.linalg.norm(u)
    min_eig_far = np.linalg.eigvalsh(p.hessian(np.tile(far, (N, 1))))[:, 0]
    np.testing.assert_allclose(min_eig_far, eps / N, atol=1e-6)


@pytest.mark.parametrize("factory", [lambda: logistic_v1(), lambda: logistic_v2(),
                                     lambda: logistic_v2(convex=False)])
def test_smoothness_bounds(factory):
    p = factory()
    assert np.all(p.lam_bar_i_tight <= p.lam_bar_i_loose + 1e-15)
    assert p.lam_bar == p.lam_bar_loose  # default selection: loose
    assert p.with_smoothness("tight").lam_bar == p.lam_bar_tight
    # tight bound is attained at x = 0 (s(1-s) = 1/4 there) for the data part
    H0 = p.hessian(np.zeros((p.N, p.n)))
    top0 = np.linalg.eigvalsh(H0)[:, -1]
    reg_curv0 = p.reg_weight * (1.0 if p.reg == "l2" else 2.0)
    np.testing.assert_allclose(top0, p.data_smoothness_tight + reg_curv0, rtol=1e-12)
    # at random points every Hessian eigenvalue lies in [lam_i, lam_bar_i_tight]
    rng = np.random.default_rng(9)
    for scale in (0.3, 1.0, 5.0):
        X = scale * rng.standard_normal((p.N, p.n))
        eig = np.linalg.eigvalsh(p.hessian(X))
        assert np.all(eig[:, 0] >= p.lam_i - 1e-12)  # round-off 1e-12
        assert np.all(eig[:, -1] <= p.lam_bar_i_tight + 1e-12)


def test_nonconvex_moduli_are_honest():
    p = logistic_v2(convex=False)
    assert p.lam == pytest.approx(-0.25, rel=1e-15) and not p.convex  # -eps/2 with eps = 0.5
    assert logistic_v2().convex
    # phi(t) = t^2/(1+t^2) has phi'' in [-1/2, 2]: grid check of the regulariser curvature
    t = np.linspace(-5, 5, 200001)[:, None]
    d2 = p._reg_hess_diag(t)[:, 0]
    assert d2.min() == pytest.approx(-0.5, abs=1e-9) and d2.max() == pytest.approx(2.0, abs=1e-9)
    assert np.allclose(p.lam_bar_i_tight, p.data_smoothness_tight + 2 * 0.5, rtol=1e-15)


# ----------------------------------------------------------------------------------------
# optimum, generator, determinism
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("factory", [lambda: logistic_v1(), lambda: logistic_v2()])
def test_x_star_to_machine_precision(factory):
    p = factory()
    xs = p.x_star()
    # Newton reaches the round-off floor; 1e-13 leaves room for summing N gradients
    assert np.linalg.norm(p.total_grad(xs)) <= 1e-13
    assert p.x_star_info["hessian_min_eig"] >= p.N * p.lam - 1e-9
    xs[0] += 1.0  # a copy is returned: the cache is untouched
    assert np.linalg.norm(p.total_grad(p.x_star())) <= 1e-13


def test_generator_setups_and_determinism():
    p1, p2 = logistic_v2(seed=4), logistic_v2(seed=4)
    np.testing.assert_array_equal(p1.features, p2.features)
    np.testing.assert_array_equal(p1.labels, p2.labels)
    assert not np.array_equal(p1.features, logistic_v2(seed=5).features)
    assert p1.features.shape == (100, 250, 5) and p1.labels.shape == (100, 250)
    # 50-50 split in expectation: 25,000 labels give a standard error of 0.003 on the share
    assert abs(np.mean(p1.labels > 0) - 0.5) < 0.02
    v1 = logistic_v1()
    assert v1.features.shape == (10, 20, 16)
    np.testing.assert_array_equal(v1.features[:, :, 0], 1.0)  # intercept column
    assert v1.info["x_true"][0] == 0.0
    assert v1.reg_weight == pytest.approx(5.0 / 10, rel=1e-15)


@pytest.mark.parametrize("call,param", [
    (lambda: QuadraticProblem(np.ones((2, 3, 3)), np.ones((2, 3))), "positive definite"),
    (lambda: QuadraticProblem(np.eye(3)[None], np.ones((2, 3))), "b"),
    (lambda: QuadraticProblem(np.array([[[1.0, 2.0], [0.0, 1.0]]]), np.ones((1, 2))), "symmetric"),
    (lambda: random_quadratic(3, 2, 2.0, 1.0), "lam_bar"),
    (lambda: random_quadratic(3, 2, 0.0, 1.0), "lam"),
    (lambda: random_quadratic(0, 2, 1.0, 2.0), "N"),
    (lambda: logistic_v2(smoothness="medium"), "smoothness"),
    (lambda: logistic_v2(eps=-1.0), "eps"),
    (lambda: logistic_v2(seed=-1), "seed"),
    (lambda: logistic_v1(N=0), "N"),
    (lambda: LogisticProblem(np.ones((2, 3, 4)), np.ones((2, 3)), reg="l1", reg_weight=1.0), "reg"),
    (lambda: LogisticProblem(np.ones((2, 3, 4)), np.ones((2, 3)), reg="l2", reg_weight=0.0), "reg_weight"),
    (lambda: LogisticProblem(np.ones((2, 3, 4)), 2 * np.ones((2, 3)), reg_weight=1.0), "labels"),
    (lambda: _small_logistic().grad(np.ones((3, 3))), "X"),
    (lambda: _small_logistic().grad(np.ones((1, 3)), agents=np.array([7])), "agents"),
    (lambda: _small_logistic().total_grad(np.ones(4)), "x"),
    (lambda: _small_logistic().stochastic_grad(np.ones((4, 3)), 0, np.random.default_rng()), "batch_size"),
    (lambda: _small_logistic().stochastic_grad(np.ones((4, 3)), 31, np.random.default_rng()), "batch_size"),
    (lambda: random_quadratic(2, 2, 1.0, 2.0).stochastic_grad(np.ones((2, 2)), 1, None), "stochastic_grad"),
    (lambda: random_quadratic(2, 2, 1.0, 2.0).local_prox(np.ones((2, 2)), -1.0), "rho"),
    (lambda: logistic_v2(convex=False).local_prox(np.ones((100, 5)), 5.0), "rho"),
])
def test_bad_inputs_raise(call, param):
    with pytest.raises(ValueError, match=param):
        call()
