"""Fed-PLT (v2 Algorithm 1): convergence, exact-PRS limit, fixed point, composite problems,
noise, determinism and input validation."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.core.prox import prox_l1, regularizer
from fedrepro.fedplt import (
    FedPLTRun,
    default_step_size,
    fedplt_iteration,
    fixed_point,
    local_moduli,
    run_fedplt,
)
from fedrepro.problems import QuadraticProblem, logistic_v1, logistic_v2, random_quadratic
from tests._local_solvers import agd_steps, gd_steps


@pytest.fixture(scope="module")
def v1():
    return logistic_v1()


@pytest.fixture(scope="module")
def v2():
    return logistic_v2()


@pytest.fixture(scope="module")
def quad():
    return random_quadratic(6, 3, 0.5, 4.0, np.random.default_rng(21))


# ----------------------------------------------------------------------------------------
# convergence to x*
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("setup", ["v1", "v2"])
@pytest.mark.parametrize("solver", ["gd", "agd"])
@pytest.mark.parametrize("participation", [None, 0.5, "cohort"])
def test_converges_to_x_star(setup, solver, participation, v1, v2):
    p = v1 if setup == "v1" else v2
    Ne = 10 if setup == "v1" else 5
    if participation == "cohort":
        participation = ("cohort", p.N // 2)
    run = run_fedplt(p, rho=1.0, Ne=Ne, K=200, solver=solver, participation=participation, seed=3,
                     record=("x_err", "z_err", "grad_sq", "x_bar"))
    xs = p.x_star()
    # linear convergence to the round-off floor (~1e-15 in 200 iterations); 1e-10 is the
    # required accuracy, with margin
    assert np.linalg.norm(run.x_bar[-1] - xs) <= 1e-10
    assert run.x_err[-1] <= 1e-10 and run.z_err[-1] <= 1e-10
    assert run.grad_sq[-1] <= 1e-20
    assert run.x_err[0] == pytest.approx(np.sqrt(p.N) * np.linalg.norm(xs), rel=1e-14)  # x_0 = 0


def test_uncoordinated_and_array_step_sizes(v2):
    g = default_step_size(v2, 1.0)
    assert g == pytest.approx(2.0 / (v2.lam_bar + v2.lam + 2.0), rel=1e-15)
    a = run_fedplt(v2, rho=1.0, Ne=3, K=20, gamma=g)
    b = run_fedplt(v2, rho=1.0, Ne=3, K=20, gamma=np.full(v2.N, g))
    np.testing.assert_allclose(b.x, a.x, rtol=1e-14, atol=1e-16)  # same steps, same iterates
    gi = default_step_size(v2, 1.0, uncoordinated=True)
    np.testing.assert_allclose(gi, 2.0 / (v2.lam_bar_i + v2.lam_i + 2.0), rtol=1e-15)
    u = run_fedplt(v2, rho=1.0, Ne=3, K=200, gamma="uncoordinated")
    assert u.x_err[-1] <= 1e-10  # Remark 1: still exact
    assert u.settings["gamma"].shape == (v2.N,)


def test_gd_iterations_fall_with_Ne_only_under_the_loose_bound(v2):
    """Finding (spec §9.4): K* (grad_sq <= 1e-5, rho = 1, default GD step) falls with N_e
    like v2 Table IX when the step uses the loose smoothness bound, and stays flat with the
    tight one."""
    counts = {}
    for sm in ("loose", "tight"):
        p = v2.with_smoothness(sm)
        counts[sm] = [run_fedplt(p, rho=1.0, Ne=Ne, K=500, tol=1e-5, record=()).iterations_to_tol
                      for Ne in (1, 2, 5, 8, 10, 20)]
    loose, tight = counts["loose"], counts["tight"]
    assert all(a >= b for a, b in zip(loose, loose[1:], strict=False)) and loose[0] >= 3 * loose[2]
    assert max(tight) - min(tight) <= 1 and max(tight) < loose[2]


# ----------------------------------------------------------------------------------------
# exact PRS (solver "prox") against a direct implementation
# ----------------------------------------------------------------------------------------
def _prs_quadratic(p: QuadraticProblem, z, x, rho, active, w_l1=None):
    """One PRS step (v2 eq. (8)) agent by agent, local prox by the closed form of footnote 6."""
    zbar = z.mean(axis=0)
    y = zbar if w_l1 is None else np.sign(zbar) * np.maximum(np.abs(zbar) - rho * w_l1 / p.N, 0)
    x, z = x.copy(), z.copy()
    for i in np.flatnonzero(active):
        v = 2 * y - z[i]
        x[i] = np.linalg.solve(np.eye(p.n) + rho * p.A[i], v + rho * p.b[i])
        z[i] = z[i] + 2 * (x[i] - y)
    return x, z, y


@pytest.mark.parametrize("w_l1", [None, 0.7])
def test_prox_solver_is_exact_prs_on_quadratics(quad, w_l1):
    rng = np.random.default_rng(4)
    h = None if w_l1 is None else regularizer("l1", weight=w_l1)
    x = rng.standard_normal((quad.N, quad.n))
    z = rng.standard_normal((quad.N, quad.n))
    xr, zr = x.copy(), z.copy()
    for _ in range(40):
        active = rng.random(quad.N) < 0.6
        x, z, y = fedplt_iteration(x, z, quad, rho=0.8, Ne=1, solver="prox", active=active, h=h)
        xr, zr, yr = _prs_quadratic(quad, zr, xr, 0.8, active, w_l1)
        # identical maths, different order of operations: 1e-12 absolute
        np.testing.assert_allclose(x, xr, atol=1e-12, rtol=0)
        np.testing.assert_allclose(z, zr, atol=1e-12, rtol=0)
        np.testing.assert_allclose(y, yr, atol=1e-12, rtol=0)


def test_prox_solver_is_exact_prs_on_logistic(v1):
    """Exact PRS on v1 with an agent-by-agent Newton prox written here."""
    rho = 0.3
    x = np.zeros((v1.N, v1.n))
    z = np.zeros((v1.N, v1.n))
    xr, zr = x.copy(), z.copy()
    for _ in range(25):
        x, z, y = fedplt_iteration(x, z, v1, rho=rho, Ne=1, solver="prox")
        yr = zr.mean(axis=0)
        for i in range(v1.N):
            v, w = 2 * yr - zr[i], xr[i].copy()
            for _ in range(30):  # plain Newton on d_i; converges quadratically from the warm start
                g = v1.grad(w[None], agents=np.array([i]))[0] + (w - v) / rho
                H = v1.hessian(w[None], agents=np.array([i]))[0] + np.eye(v1.n) / rho
                w = w - np.linalg.solve(H, g)
            xr[i] = w
            zr[i] = zr[i] + 2 * (w - yr)
        # both solves reach round-off (~1e-16 relative); 1e-12 absolute
        np.testing.assert_allclose(x, xr, atol=1e-12, rtol=0)
        np.testing.assert_allclose(z, zr, atol=1e-12, rtol=0)
    # exact PRS converges at least at the rate zeta of Lemma 3 (here zeta < 0.75)
    assert np.linalg.norm(x - v1.x_star()) <= 1e-3


# ----------------------------------------------------------------------------------------
# fixed point
# ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", ["gd", "agd", "prox"])
@pytest.mark.parametrize("Ne", [1, 2, 5, 20])
def test_fixed_point_is_invariant(v2, solver, Ne):
    rho = 0.7
    X, Z = fixed_point(v2, rho)
    xs = v2.x_star()
    np.testing.assert_allclose(Z, xs - rho * v2.grad(np.tile(xs, (v2.N, 1))), rtol=0, atol=0)
    outputs = ("w", "u") if solver == "agd" else ("w",)
    for out in outputs:
        active = np.arange(v2.N) % 3 != 0
        x, z, y = fedplt_iteration(X, Z, v2, rho=rho, Ne=Ne, solver=solver, active=active,
                                   accelerated_output=out)
        # grad d_i(x*) is ~1e-16 at the fixed point; N_e steps keep the iterates within
        # round-off: 1e-13
        np.testing.assert_allclose(y, xs, atol=1e-13, rtol=0)
        np.testing.assert_allclose(x, X, atol=1e-13, rtol=0)
        np.testing.assert_allclose(z, Z, atol=1e-13, rtol=0)


# ----------------------------------------------------------------------------------------
# composite problem h = w ||x||_1
# ----------------------------------------------------------------------------------------
def test_composite_l1_solution(v2):
    w = 2.0
    # independent reference: proximal gradient on F + h, step 1/L with L = sum_i lam_bar_i
    # (tight, valid), run to its fixed point
    L = float(np.sum(v2.lam_bar_i_tight))
    xr = np.zeros(v2.n)
    for _ in range(400):
        xr = prox_l1(xr - v2.total_grad(xr) / L, 1.0 / L, w)
    residual = np.linalg.norm(xr - prox_l1(xr - v2.total_grad(xr) / L, 1.0 / L, w))
    assert residual <= 1e-15  # the reference is converged to round-off
    assert np.sum(xr == 0.0) >= 1  # the l1 term is active: a sparse solution
    h = regularizer("l1", weight=w)
    for solver in ("gd", "agd"):
        run = run_fedplt(v2, rho=1.0, Ne=5, K=200, solver=solver, h=h, x_ref=xr,
                         record=("x_err", "z_err", "x_bar"))
        # linear convergence to the round-off floor; 1e-10 required
        assert np.linalg.norm(run.x_bar[-1] - xr) <= 1e-10
        assert np.linalg.norm(run.y - xr) <= 1e-10
        assert run.x_err[-1] <= 1e-10 and run.z_err[-1] <= 1e-10
    # without x_ref there is no reference for the composite problem: errors are None
    run = run_fedplt(v2, rho=1.0, Ne=2, K=3, h=h)
    assert run.x_err is None and run.z_err is None and run.grad_sq is not None


# ----------------------------------------------------------------------------------------
# stochastic solvers
# ----------------------------------------------------------------------------------------
def test_noisy_gd_noise_variance():
    """Zero-gradient instance: f_i = ||x||^2/2, x = z = 0, N_e = 1, so x_new is the noise
    t ~ sqrt(2 gamma) N(0, tau^2 I) of eq. (13) alone."""
    N, n = 4000, 5
    p = QuadraticProblem(np.broadcast_to(np.eye(n), (N, n, n)), np.zeros((N, n)))
    gamma, tau = 0.3, 0.05
    x, z, _ = fedplt_iteration(np.zeros((N, n)), np.zeros((N, n)), p, rho=1.0, Ne=1,
                               solver="noisy-gd", gamma=gamma, tau=tau, rng=np.random.default_rng(7))
    var = x.var()
    # 20,000 samples: relative standard error of a variance estimate sqrt(2/20000) = 1%;
    # tolerance 5%
    assert var == pytest.approx(2 * gamma * tau ** 2, rel=0.05)
    assert abs(x.mean()) <= 5 * np.sqrt(2 * gamma) * tau / np.sqrt(x.size)
    np.testing.assert_array_equal(z, 2 * x)  # y = 0


def test_stochastic_solvers_reduce_to_gd(v2):
    gd = run_fedplt(v2, rho=1.0, Ne=4, K=15, solver="gd")
    sgd_full = run_fedplt(v2, rho=1.0, Ne=4, K=15, solver="sgd", batch_size=v2.q)
    noisy0 = run_fedplt(v2, rho=1.0, Ne=4, K=15, solver="noisy-gd", tau=0.0)
    np.testing.assert_array_equal(sgd_full.x, gd.x)  # batch = q is the full gradient
    np.testing.assert_array_equal(noisy0.x, gd.x)  # tau = 0 is GD
    # mini-batches leave a noise floor whose size falls with the batch: the gradient-noise
    # variance scales as (q - B) / (B (q - 1)), 36x smaller at B = 200 than at B = 25 (std 6x);
    # we ask for a factor 2 between the tail medians, and both below the initial error
    floors = []
    for B in (25, 200):
        sgd = run_fedplt(v2, rho=1.0, Ne=4, K=60, solver="sgd", batch_size=B, seed=2)
        floors.append(np.median(sgd.x_err[-20:]))
        assert floors[-1] < sgd.x_err[0]
    assert floors[0] > 2 * floors[1]


def test_privacy_initialisation(v2):
    tau = 0.2
    run = run_fedplt(v2, rho=1.0, Ne=2, K=0, solver="noisy-gd", tau=tau, init="privacy", seed=5,
                     record=("x_err",))
    # x_0 ~ N(0, 2 tau^2 I / lam): 500 entries, relative standard error of the variance 6%;
    # tolerance 25%
    assert run.x.var() == pytest.approx(2 * tau ** 2 / v2.lam, rel=0.25)
    np.testing.assert_array_equal(run.z, 0.0)


# ----------------------------------------------------------------------------------------
# participation, counters, determinism
# ----------------------------------------------------------------------------------------
def test_counters_and_participation(v2):
    full = run_fedplt(v2, rho=1.0, Ne=3, K=10, record=())
    np.testing.assert_array_equal(full.comms, np.arange(11) * v2.N)
    np.testing.assert_array_equal(full.grad_evals, np.arange(11) * v2.N * 3)
    assert full.active_count[0] == 0 and np.all(full.active_count[1:] == v2.N)
    np.testing.assert_array_equal(full.time_cost(1.0, 10.0), np.arange(11) * v2.N * (3 + 10))
    coh = run_fedplt(v2, rho=1.0, Ne=3, K=10, participation=("cohort", 37), record=())
    assert np.all(coh.active_count[1:] == 37)
    bern = run_fedplt(v2, rho=1.0, Ne=3, K=200, participation=0.3, record=())
    # 200 x 100 Bernoulli(0.3) draws: standard error of the mean count 0.3; tolerance 1.5
    assert bern.active_count[1:].mean() == pytest.approx(30.0, abs=1.5)
    prox = run_fedplt(v2, rho=1.0, Ne=3, K=2, solver="prox", record=())
    np.testing.assert_array_equal(prox.grad_evals, 0)  # the exact prox is not counted


def test_inactive_agents_keep_their_state(v2):
    rng = np.random.default_rng(1)
    x, z = rng.standard_normal((2, v2.N, v2.n))
    active = rng.random(v2.N) < 0.5
    x1, z1, y = fedplt_iteration(x, z, v2, rho=1.0, Ne=3, active=active)
    np.testing.assert_array_equal(x1[~active], x[~active])
    np.testing.assert_array_equal(z1[~active], z[~active])
    assert np.all(np.any(x1[active] != x[active], axis=1))
    np.testing.assert_allclose(y, z.mean(0), rtol=1e-15)  # h = 0: the plain average
    np.testing.assert_allclose(z1[active], z[active] + 2 * (x1[active] - y), rtol=1e-15)


def test_tol_stops_the_run(v2):
    run = run_fedplt(v2, rho=1.0, Ne=5, K=500, tol=1e-5)
    k = run.iterations_to_tol
    assert k is not None and run.iterations == k and len(run.grad_sq) == k + 1
    assert run.grad_sq[k] <= 1e-5 and np.all(run.grad_sq[:k] > 1e-5)
    cont = run_fedplt(v2, rho=1.0, Ne=5, K=k + 5, tol=1e-5, stop_at_tol=False)
    assert cont.iterations_to_tol == k and len(cont.grad_sq) == k + 6


def test_determinism(v2):
    kw = dict(rho=1.0, Ne=3, K=12, solver="sgd", batch_size=20, participation=("cohort", 40))
    a = run_fedplt(v2, seed=9, **kw)
    b = run_fedplt(v2, seed=9, **kw)
    c = run_fedplt(v2, seed=10, **kw)
    for f in ("x", "z", "y", "x_err", "z_err", "grad_sq", "active_count"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert not np.array_equal(a.x, c.x)
    n1 = run_fedplt(v2, rho=1.0, Ne=2, K=5, solver="noisy-gd", tau=0.1, init="privacy",
                    rng=np.random.default_rng(3))
    n2 = run_fedplt(v2, rho=1.0, Ne=2, K=5, solver="noisy-gd", tau=0.1, init="privacy",
                    rng=np.random.default_rng(3))
    np.testing.assert_array_equal(n1.x, n2.x)
    assert isinstance(n1, FedPLTRun)


def test_local_moduli(v2):
    mu, L = local_moduli(v2, 2.0)
    assert mu == pytest.approx(v2.lam + 0.5, rel=1e-15) and L == pytest.approx(v2.lam_bar + 0.5, rel=1e-15)
    nc = logistic_v2(convex=False)
    mu, _ = local_moduli(nc, 3.0)
    assert mu == pytest.approx(1 / 3 - 0.25, rel=1e-12)
    mu, _ = local_moduli(nc, 10.0)  # 1/rho - eps/2 < 0: floored
    assert mu == 1e-3


# ----------------------------------------------------------------------------------------
# bad inputs
# ----------------------------------------------------------------------------------------
def _it(p, **kw):
    args = dict(rho=1.0, Ne=2)
    args.update(kw)
    x = args.pop("x", np.zeros((p.N, p.n)))
    z = args.pop("z", np.zeros((p.N, p.n)))
    return fedplt_iteration(x, z, p, **args)


BAD_ITERATION = [
    (dict(rho=0.0), "rho"),
    (dict(rho=-1.0), "rho"),
    (dict(Ne=0), "Ne"),
    (dict(Ne=2.5), "Ne"),
    (dict(solver="adam"), "solver"),
    (dict(gamma=0.0), "gamma"),
    (dict(gamma=1.0), "gamma"),  # 1 > 2/(lam_bar + 1) for the loose v2 bound
    (dict(gamma=np.ones(3)), "gamma"),
    (dict(gamma=-np.ones(100)), "gamma"),
    (dict(gamma="fast"), "gamma"),
    (dict(solver="agd", gamma=0.1), "gamma"),
    (dict(tau=-1.0), "tau"),
    (dict(tau=0.1), "tau"),
    (dict(solver="sgd", batch_size=0, rng=np.random.default_rng()), "batch_size"),
    (dict(solver="sgd", batch_size=251, rng=np.random.default_rng()), "batch_size"),
    (dict(batch_size=10), "batch_size"),
    (dict(solver="sgd", batch_size=10), "rng"),
    (dict(solver="noisy-gd", tau=0.1), "rng"),
    (dict(x=np.zeros((99, 5))), "x"),
    (dict(z=np.zeros((100, 4))), "z"),
    (dict(x=np.full((100, 5), np.nan)), "x"),
    (dict(active=np.ones(100)), "active"),
    (dict(active=np.ones(99, dtype=bool)), "active"),
    (dict(h="l1"), "h"),
    (dict(solver="agd", accelerated_output="v"), "accelerated_output"),
]


@pytest.mark.parametrize("kwargs,param", BAD_ITERATION)
def test_bad_iteration_inputs_raise(v2, kwargs, param):
    with pytest.raises(ValueError, match=param):
        _it(v2, **kwargs)


def test_step_size_range_uses_lam_bar(v2):
    """v2 eq. (11) prints gamma < 2/(lam + 1/rho); the valid range is 2/(lam_bar + 1/rho)."""
    upper = 2.0 / (v2.lam_bar + 1.0)
    _it(v2, gamma=0.99 * upper)  # accepted
    between = 0.5 * (upper + 2.0 / (v2.lam + 1.0))
    with pytest.raises(ValueError, match=r"gamma must lie in \(0, 2/\(lam_bar \+ 1/rho\)\)"):
        _it(v2, gamma=between)


def test_sgd_needs_a_finite_sum_and_prox_needs_strong_convexity(quad):
    with pytest.raises(ValueError, match="batch_size"):
        _it(quad, solver="sgd", batch_size=1, rng=np.random.default_rng())
    with pytest.raises(ValueError, match="rho"):
        _it(logistic_v2(convex=False), solver="prox", rho=5.0)
    with pytest.raises(ValueError, match="problem"):
        fedplt_iteration(np.zeros((2, 2)), np.zeros((2, 2)), "quadratic", rho=1.0, Ne=1)


# ----------------------------------------------------------------------------------------
# every message in full (anchored), and the boundaries of the accepted ranges
# ----------------------------------------------------------------------------------------
def _q(s: str) -> str:
    """A message as an anchored regular expression."""
    import re
    return "^" + re.escape(s) + "$"


_V2_SOLVERS = "('gd', 'agd', 'sgd', 'noisy-gd', 'prox')"

ITERATION_MESSAGES = [
    (dict(rho=0.0), _q("rho must be in (0, inf), got 0.0")),
    (dict(Ne=0), _q("Ne (local steps) must be an integer >= 1, got 0")),
    (dict(Ne=True), _q("Ne (local steps) must be an integer >= 1, got True (bool)")),
    (dict(Ne=2.0), _q("Ne (local steps) must be an integer >= 1, got 2.0 (float)")),
    (dict(solver="adam"), _q(f"solver must be one of {_V2_SOLVERS}, got 'adam'")),
    (dict(tau="a"), _q("tau must be a real number >= 0, got 'a'")),
    (dict(tau=None), _q("tau must be a real number >= 0, got None")),
    (dict(tau=-1.0), _q("tau must be finite and >= 0, got -1.0")),
    (dict(tau=np.inf, solver="noisy-gd"), _q("tau must be finite and >= 0, got inf")),
    (dict(tau=np.nan, solver="noisy-gd"), _q("tau must be finite and >= 0, got nan")),
    (dict(tau=0.1), _q("tau must be 0 unless solver='noisy-gd' (eq. (13)), got tau=0.1 with solver='gd'")),
    (dict(solver="sgd", batch_size=0), _q("batch_size must be an integer in [1, 250] for solver='sgd', got 0")),
    (dict(solver="sgd", batch_size=251), _q("batch_size must be an integer in [1, 250] for solver='sgd', got 251")),
    (dict(solver="sgd", batch_size=True), _q("batch_size must be an integer in [1, 250] for solver='sgd', got True")),
    (dict(solver="sgd", batch_size=5.0), _q("batch_size must be an integer in [1, 250] for solver='sgd', got 5.0")),
    (dict(solver="sgd"), _q("batch_size must be an integer in [1, 250] for solver='sgd', got None")),
    (dict(batch_size=10), _q("batch_size is only used by solver='sgd'; got batch_size=10 with solver='gd' "
                             "(pass None)")),
    (dict(h="l1"), _q("h must be a fedrepro.core.prox.Regularizer or None, got str")),
    (dict(solver="agd", accelerated_output="v"),
     _q("accelerated_output must be 'w' (eq. (12)) or 'u', got 'v'")),
    (dict(gamma="fast"), _q("gamma must be a number, an array of shape (100,), None or 'uncoordinated', got 'fast'")),
    (dict(gamma={}), _q("gamma must be a number or an array of shape (100,), got {}")),
    (dict(gamma=0.0), r"^gamma must lie in \(0, 2/\(lam_bar \+ 1/rho\)\) = \(0, 0\.233582\), got 0\.0$"),
    (dict(gamma=-0.1), r"^gamma must lie in \(0, 2/\(lam_bar \+ 1/rho\)\) = \(0, 0\.233582\), got -0\.1$"),
    (dict(gamma=np.nan), r"^gamma must lie in .*, got nan$"),
    (dict(gamma=np.full(100, 0.1) * (np.arange(100) != 7)),
     r"^gamma\[7\] must lie in \(0, 2/\(lam_bar_i \+ 1/rho\)\) = \(0, 0\.\d+\), got np\.float64\(0\.0\)$"),
    (dict(gamma=np.ones(3)), _q("gamma must be a scalar or an array of shape (100,), got shape (3,)")),
    (dict(gamma=np.full((100, 1), 0.1)), _q("gamma must be a scalar or an array of shape (100,), got shape (100, 1)")),
    (dict(solver="agd", gamma=0.1), _q("gamma is only used by solvers ('gd', 'sgd', 'noisy-gd'); got gamma=0.1 "
                                       "with solver='agd'")),
    (dict(solver="prox", gamma=0.1), r"^gamma is only used by solvers .* with solver='prox'$"),
    (dict(solver="sgd", batch_size=10), _q("rng must be a numpy.random.Generator for solver='sgd'")),
    (dict(solver="noisy-gd", tau=0.1), _q("rng must be a numpy.random.Generator for solver='noisy-gd' with tau > 0")),
    (dict(solver="noisy-gd", tau=0.1, rng=1), _q("rng must be a numpy.random.Generator for solver='noisy-gd' "
                                                 "with tau > 0")),
    (dict(x=np.zeros((99, 5))), _q("x must have shape (100, 5) (one row per agent), got (99, 5)")),
    (dict(z=np.zeros((100, 4))), _q("z must have shape (100, 5) (one row per agent), got (100, 4)")),
    (dict(x=np.full((100, 5), np.nan)), _q("x must be finite")),
    (dict(z=np.full((100, 5), np.inf)), _q("z must be finite")),
    (dict(active=np.ones(100)), _q("active must be None or a boolean mask of shape (100,), got dtype float64 "
                                   "and shape (100,)")),
    (dict(active=np.ones(99, dtype=bool)), _q("active must be None or a boolean mask of shape (100,), got dtype "
                                              "bool and shape (99,)")),
]


@pytest.mark.parametrize("kwargs,message", ITERATION_MESSAGES)
def test_iteration_messages_in_full(v2, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _it(v2, **kwargs)


def test_problem_and_finite_sum_messages_in_full(quad):
    with pytest.raises(ValueError, match=_q("problem must be a FederatedProblem, got str")):
        fedplt_iteration(np.zeros((2, 2)), np.zeros((2, 2)), "quadratic", rho=1.0, Ne=1)
    for call in (lambda: local_moduli("q", 1.0), lambda: fixed_point("q", 1.0),
                 lambda: run_fedplt("q", rho=1.0, Ne=1, K=1)):
        with pytest.raises(ValueError, match=_q("problem must be a FederatedProblem, got str")):
            call()
    with pytest.raises(ValueError, match=_q("solver='sgd' needs a finite-sum problem with data points; "
                                            "QuadraticProblem has none (batch_size has no valid range)")):
        _it(quad, solver="sgd", batch_size=1, rng=np.random.default_rng())
    nc = logistic_v2(convex=False)  # lam = -0.25: the exact prox needs rho < 4
    with pytest.raises(ValueError, match=_q("rho must satisfy lam + 1/rho > 0, i.e. rho < 4, for the exact local "
                                            "prox (solver='prox'), got rho=4.0")):
        _it(nc, solver="prox", rho=4.0)
    _it(nc, solver="prox", rho=3.9)  # lam + 1/rho > 0: accepted
    with pytest.raises(ValueError, match=_q("rho must be in (0, inf), got -1.0")):
        local_moduli(quad, -1.0)
    with pytest.raises(ValueError, match=_q("rho must be in (0, inf), got 0")):
        fixed_point(quad, 0)


RUN_MESSAGES = [
    (dict(K=-1), _q("K (outer iterations) must be an integer >= 0, got -1")),
    (dict(K=True), _q("K (outer iterations) must be an integer >= 0, got True (bool)")),
    (dict(K=2.0), _q("K (outer iterations) must be an integer >= 0, got 2.0 (float)")),
    (dict(seed=-3), _q("seed must be an integer >= 0, got -3")),
    (dict(seed=True), _q("seed must be an integer >= 0, got True (bool)")),
    (dict(seed=1.0), _q("seed must be an integer >= 0, got 1.0 (float)")),
    (dict(rng=3), _q("rng must be a numpy.random.Generator or None")),
    (dict(participation=("cohort", 0)), _q("participation ('cohort', c) needs an integer c in [1, 100], got 0")),
    (dict(participation=("cohort", 101)), _q("participation ('cohort', c) needs an integer c in [1, 100], got 101")),
    (dict(participation=("cohort", True)),
     _q("participation ('cohort', c) needs an integer c in [1, 100], got True")),
    (dict(participation=("cohort", 2.0)), _q("participation ('cohort', c) needs an integer c in [1, 100], got 2.0")),
    (dict(participation="half"), _q("participation must be None, a probability in (0, 1], an array of shape (100,) "
                                    "of probabilities in (0, 1], or ('cohort', c), got 'half'")),
    (dict(participation=("cohort", 2, 3)), r"^participation must be None, a probability .* got \('cohort', 2, 3\)$"),
    (dict(participation=("all", 2)), r"^participation must be None, a probability .* got \('all', 2\)$"),
    (dict(participation={}), _q("participation must be None, a probability in (0, 1], an array of shape (100,), "
                                "or ('cohort', c), got {}")),
    (dict(participation=np.full(3, 0.5)),
     _q("participation probabilities must be a scalar or have shape (100,), got (3,)")),
    (dict(participation=0.0), _q("participation probabilities p_i must lie in (0, 1] (Assumption 2), got 0.0")),
    (dict(participation=1.5), _q("participation probabilities p_i must lie in (0, 1] (Assumption 2), got 1.5")),
    (dict(participation=np.nan), _q("participation probabilities p_i must lie in (0, 1] (Assumption 2), got nan")),
    (dict(record=("x_err", "loss")), _q("record entries must be among ('x_err', 'z_err', 'xz_err', 'grad_sq', "
                                        "'x_bar'), got ['loss']")),
    (dict(tol="a"), _q("tol must be a real number >= 0 or None, got 'a'")),
    (dict(tol=-1.0), _q("tol must be finite and >= 0, got -1.0")),
    (dict(tol=np.inf), _q("tol must be finite and >= 0, got inf")),
    (dict(tol=np.nan), _q("tol must be finite and >= 0, got nan")),
    (dict(init="random"), _q("init must be 'zeros' or 'privacy', got 'random'")),
    (dict(init="privacy"), _q("tau must be > 0 for init='privacy' (x_0 ~ N(0, 2 tau^2 I / lam)), got 0.0")),
    (dict(x0=np.zeros((5, 5))), _q("x0 must have shape (100, 5) (one row per agent), got (5, 5)")),
    (dict(z0=np.zeros((100, 6))), _q("z0 must have shape (100, 5) (one row per agent), got (100, 6)")),
    (dict(x_ref=np.zeros(4)), _q("x_ref must have shape (5,), got (4,)")),
]


@pytest.mark.parametrize("kwargs,message", RUN_MESSAGES)
def test_run_messages_in_full(v2, kwargs, message):
    args = dict(rho=1.0, Ne=2, K=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        run_fedplt(v2, **args)


def test_privacy_init_needs_strong_convexity_message():
    nc = logistic_v2(convex=False)
    with pytest.raises(ValueError, match=_q("init='privacy' needs lam > 0 (strongly convex costs), got lam=-0.25")):
        run_fedplt(nc, rho=1.0, Ne=1, K=1, solver="noisy-gd", tau=0.1, init="privacy")


# ----------------------------------------------------------------------------------------
# one iteration against an agent-by-agent transcription of Algorithm 1
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    return logistic_v2(True, 0, N=12, q=30)


def _agent_loop(p, x, z, rho, Ne, active, gamma=None, agd=None):
    """Algorithm 1 written agent by agent: y = mean z; for each active agent N_e GD steps with
    its own step gamma[i] (eq. (11)), or Nesterov steps (eq. (12)) when ``agd = (L, mu, out)``,
    on d_i(w) = f_i(w) + ||w - v_i||^2 / (2 rho), v_i = 2 y - z_i; z_i += 2 (x_i - y)."""
    y = z.mean(axis=0)
    x, z = x.copy(), z.copy()
    for i in np.flatnonzero(active):
        v = 2.0 * y - z[i]

        def g(w, i=i, v=v):
            return p.grad(w[None], agents=np.array([i]))[0] + (w - v) / rho
        if agd is None:
            w = gd_steps(g, x[i], Ne, gamma[i])
        else:
            L, mu, out = agd
            w, u = agd_steps(g, x[i], Ne, L, mu)
            w = w if out == "w" else u
        x[i] = w
        z[i] = z[i] + 2.0 * (w - y)
    return x, z, y


def _random_state(p, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((p.N, p.n)), rng.standard_normal((p.N, p.n)), rng.random(p.N) < 0.5


def test_per_agent_steps_with_partial_participation_follow_the_agent_loop(small):
    rho, Ne = 0.8, 3
    x, z, active = _random_state(small, 11)
    assert 0 < active.sum() < small.N
    upper = 2.0 / (np.asarray(small.lam_bar_i) + 1.0 / rho)
    gamma = upper * np.linspace(0.2, 0.9, small.N)
    x1, z1, y = fedplt_iteration(x, z, small, rho=rho, Ne=Ne, gamma=gamma, active=active)
    xr, zr, yr = _agent_loop(small, x, z, rho, Ne, active, gamma=gamma)
    # the same operations up to the order of the batched products: 1e-12
    np.testing.assert_allclose(x1, xr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(z1, zr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(y, yr, rtol=0, atol=1e-15)
    # Remark 1: "uncoordinated" is gamma_i = 2 / (lam_bar_i + lam_i + 2/rho)
    gi = 2.0 / (np.asarray(small.lam_bar_i) + np.asarray(small.lam_i) + 2.0 / rho)
    assert np.ptp(gi) > 0  # the agents' steps differ
    x2, z2, _ = fedplt_iteration(x, z, small, rho=rho, Ne=Ne, gamma="uncoordinated", active=active)
    xr, zr, _ = _agent_loop(small, x, z, rho, Ne, active, gamma=gi)
    np.testing.assert_allclose(x2, xr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(z2, zr, rtol=0, atol=1e-12)
    # the default step: 2 / (lam_bar + lam + 2/rho) for every agent
    x3, _, _ = fedplt_iteration(x, z, small, rho=rho, Ne=Ne, active=active)
    g0 = np.full(small.N, 2.0 / (small.lam_bar + small.lam + 2.0 / rho))
    np.testing.assert_allclose(x3, _agent_loop(small, x, z, rho, Ne, active, gamma=g0)[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("out", ["w", "u"])
@pytest.mark.parametrize("convex", [True, False])
def test_agd_iteration_follows_eq12_agent_by_agent(out, convex):
    p = logistic_v2(convex, 0, N=12, q=30)
    rho, Ne = (0.8, 4) if convex else (3.99, 4)  # nonconvex: lam + 1/rho = 6e-4 < 1e-3, floored
    x, z, active = _random_state(p, 5)
    mu = max(p.lam + 1.0 / rho, 1e-3) if not convex else p.lam + 1.0 / rho
    L = p.lam_bar + 1.0 / rho
    x1, z1, _ = fedplt_iteration(x, z, p, rho=rho, Ne=Ne, solver="agd", active=active, accelerated_output=out)
    xr, zr, _ = _agent_loop(p, x, z, rho, Ne, active, agd=(L, mu, out))
    np.testing.assert_allclose(x1, xr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(z1, zr, rtol=0, atol=1e-12)
    other = "u" if out == "w" else "w"
    assert np.max(np.abs(x1 - _agent_loop(p, x, z, rho, Ne, active, agd=(L, mu, other))[0])) > 1e-6


def test_local_moduli_per_agent_and_floor(small):
    rho = 2.0
    mu, L = local_moduli(small, rho, per_agent=True)
    np.testing.assert_allclose(mu, np.asarray(small.lam_i) + 0.5, rtol=1e-15)
    np.testing.assert_allclose(L, np.asarray(small.lam_bar_i) + 0.5, rtol=1e-15)
    assert mu.shape == L.shape == (small.N,)
    nc = logistic_v2(False, 0, N=12, q=30)
    mu, L = local_moduli(nc, 10.0, per_agent=True)  # lam_i + 1/rho = -0.15 < 0: floored
    np.testing.assert_array_equal(mu, np.full(nc.N, 1e-3))
    np.testing.assert_allclose(L, np.asarray(nc.lam_bar_i) + 0.1, rtol=1e-15)
    mu, L = local_moduli(nc, 3.0)
    assert mu == pytest.approx(nc.lam + 1 / 3, rel=1e-12) and L == pytest.approx(nc.lam_bar + 1 / 3, rel=1e-15)
    assert isinstance(mu, float) and isinstance(L, float)
    mu, _ = local_moduli(nc, 1 / 0.2509)  # lam + 1/rho = 9e-4: just below the floor
    assert mu == 1e-3
    # a strongly convex problem is never floored, however small lam + 1/rho is
    q = QuadraticProblem(np.broadcast_to(1e-5 * np.eye(2), (3, 2, 2)), np.zeros((3, 2)))
    mu, _ = local_moduli(q, 1e6)
    assert mu == pytest.approx(1e-5 + 1e-6, rel=1e-12)


def test_fixed_point_with_a_reference(small):
    rho = 0.6
    xr = np.linspace(-1.0, 1.0, small.n)
    X, Z = fixed_point(small, rho, xr)
    np.testing.assert_array_equal(X, np.tile(xr, (small.N, 1)))
    G = np.stack([small.grad(xr[None], agents=np.array([i]))[0] for i in range(small.N)])
    np.testing.assert_allclose(Z, xr - rho * G, rtol=0, atol=1e-15)
    X, Z = fixed_point(small, rho)
    np.testing.assert_array_equal(X[3], small.x_star())


# ----------------------------------------------------------------------------------------
# run_fedplt: records, settings, stopping, defaults
# ----------------------------------------------------------------------------------------
def test_run_records_follow_their_definitions(small):
    rho = 0.7
    run = run_fedplt(small, rho=rho, Ne=2, K=4, record=("x_err", "z_err", "xz_err", "grad_sq", "x_bar"))
    xs = small.x_star()
    zs = xs - rho * small.grad(np.tile(xs, (small.N, 1)))
    assert run.x_err[-1] == pytest.approx(np.linalg.norm(run.x - xs), rel=1e-14)
    assert run.z_err[-1] == pytest.approx(np.linalg.norm(run.z - zs), rel=1e-12)
    np.testing.assert_allclose(run.xz_err, np.hypot(run.x_err, run.z_err), rtol=1e-15)
    np.testing.assert_allclose(run.x_bar[-1], run.x.mean(axis=0), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(run.x_bar[0], 0.0)
    g = small.total_grad(run.x.mean(axis=0))
    assert run.grad_sq[-1] == pytest.approx(float(g @ g), rel=1e-12)
    assert run.grad_sq[0] == pytest.approx(float(small.total_grad(np.zeros(small.n)) @ small.total_grad(
        np.zeros(small.n))), rel=1e-12)
    assert all(len(a) == 5 for a in (run.x_err, run.z_err, run.xz_err, run.grad_sq, run.x_bar))
    # y is the coordinator's y_K = mean z_{K-1} (h = 0), from the run one iteration shorter
    prev = run_fedplt(small, rho=rho, Ne=2, K=3, record=())
    np.testing.assert_allclose(run.y, prev.z.mean(axis=0), rtol=0, atol=1e-15)
    assert run.iterations == 4 and run.iterations_to_tol is None
    np.testing.assert_array_equal(run.x_ref, xs)


def test_run_records_only_what_is_asked(small):
    only_z = run_fedplt(small, rho=1.0, Ne=1, K=2, record=("z_err",))
    assert only_z.x_err is None and only_z.xz_err is None and only_z.grad_sq is None and only_z.x_bar is None
    assert only_z.z_err is not None and len(only_z.z_err) == 3
    only_x = run_fedplt(small, rho=1.0, Ne=1, K=2, record=("x_err",))
    assert only_x.z_err is None and only_x.x_err is not None
    assert run_fedplt(small, rho=1.0, Ne=1, K=2, record=("xz_err",)).xz_err.shape == (3,)
    with_tol = run_fedplt(small, rho=1.0, Ne=1, K=2, record=(), tol=1e-30)
    assert with_tol.grad_sq is not None and len(with_tol.grad_sq) == 3 and with_tol.iterations_to_tol is None
    assert run_fedplt(small, rho=1.0, Ne=1, K=2, record=["grad_sq"]).grad_sq.shape == (3,)  # a list is accepted
    nc = logistic_v2(False, 0, N=12, q=30)
    plain = run_fedplt(nc, rho=1.0, Ne=1, K=2)  # weakly convex, no x_ref: no reference point
    assert plain.x_err is None and plain.z_err is None and plain.x_ref is None and plain.grad_sq is not None
    xr = np.ones(nc.n)
    ref = run_fedplt(nc, rho=1.0, Ne=1, K=2, x_ref=xr)
    np.testing.assert_array_equal(ref.x_ref, xr)
    assert ref.x_err[0] == pytest.approx(np.sqrt(nc.N * nc.n), rel=1e-15)  # x_0 = 0


def test_zero_regulariser_is_dropped(small):
    h0 = regularizer("l1", weight=0.0)
    a = run_fedplt(small, rho=1.0, Ne=2, K=3, h=h0)
    b = run_fedplt(small, rho=1.0, Ne=2, K=3)
    assert a.settings["h"] is None and a.x_err is not None  # x* is the reference again
    np.testing.assert_array_equal(a.x, b.x)
    h = regularizer("l1", weight=0.5)
    c = run_fedplt(small, rho=1.0, Ne=2, K=3, h=h)
    assert c.settings["h"] == ("l1", dict(h.params)) and c.x_err is None


def test_run_settings_are_the_resolved_parameters(small):
    rho = 0.5
    run = run_fedplt(small, rho=rho, Ne=3, K=1, solver="noisy-gd", tau=0.01, participation=("cohort", 4),
                     seed=7, tol=1e-9, record=())
    mu, L = small.lam + 1 / rho, small.lam_bar + 1 / rho
    expected = {"rho": rho, "Ne": 3, "solver": "noisy-gd", "gamma": pytest.approx(2 / (L + mu), rel=1e-15),
                "mu_d": pytest.approx(mu, rel=1e-15), "L_d": pytest.approx(L, rel=1e-15), "tau": 0.01,
                "batch_size": None, "participation": ("cohort", 4), "init": "zeros", "seed": 7, "tol": 1e-9,
                "accelerated_output": "w", "h": None}
    assert run.settings == expected
    s = run_fedplt(small, rho=1.0, Ne=1, K=1, solver="sgd", batch_size=30, record=()).settings
    assert s["batch_size"] == 30 and s["gamma"] == pytest.approx(2 / (small.lam_bar + small.lam + 2), rel=1e-15)
    a = run_fedplt(small, rho=1.0, Ne=1, K=1, solver="agd", accelerated_output="u", record=()).settings
    assert a["gamma"] is None and a["accelerated_output"] == "u" and a["tol"] is None
    gamma = np.full(small.N, 0.1)
    g = run_fedplt(small, rho=1.0, Ne=1, K=1, gamma=gamma, record=()).settings["gamma"]
    np.testing.assert_array_equal(g, gamma)
    gamma[0] = 0.2  # the run keeps its own copy
    assert g[0] == 0.1


def test_tol_ties_and_a_start_below_tol(small):
    run = run_fedplt(small, rho=1.0, Ne=2, K=6, record=("grad_sq",))
    assert np.all(np.diff(run.grad_sq) < 0)
    tie = run_fedplt(small, rho=1.0, Ne=2, K=6, tol=float(run.grad_sq[3]))
    assert tie.iterations_to_tol == 3 and tie.iterations == 3  # grad_sq <= tol, reached with equality
    at0 = run_fedplt(small, rho=1.0, Ne=2, K=6, tol=1e9, record=("grad_sq", "x_err"))
    assert at0.iterations_to_tol == 0 and at0.iterations == 0
    assert len(at0.grad_sq) == 1 and len(at0.x_err) == 1 and len(at0.comms) == 1
    np.testing.assert_array_equal(at0.x, 0.0)
    go_on = run_fedplt(small, rho=1.0, Ne=2, K=6, tol=1e9, stop_at_tol=False)
    assert go_on.iterations_to_tol == 0 and go_on.iterations == 6 and len(go_on.grad_sq) == 7
    zero = run_fedplt(small, rho=1.0, Ne=2, K=2, tol=0)
    assert zero.settings["tol"] == 0.0 and zero.iterations_to_tol is None


def test_run_defaults(small):
    base = dict(rho=1.0, Ne=2, K=4, participation=0.5)
    a = run_fedplt(small, **base)
    b = run_fedplt(small, seed=0, **base)
    c = run_fedplt(small, seed=1, **base)
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.array_equal(a.active_count, c.active_count) or not np.array_equal(a.x, c.x)
    assert a.settings["seed"] == 0 and a.settings["init"] == "zeros" and a.settings["solver"] == "gd"
    assert a.x_err is not None and a.z_err is not None and a.grad_sq is not None and a.xz_err is None
    assert a.x_bar is None
    np.testing.assert_array_equal(a.time_cost(), a.grad_evals + 10.0 * a.comms)
    np.testing.assert_array_equal(a.time_cost(2.0), 2.0 * a.grad_evals + 10.0 * a.comms)
    # fedplt_iteration's defaults: GD with the default step, every agent, output w
    x, z, _ = _random_state(small, 3)
    d = fedplt_iteration(x, z, small, rho=1.0, Ne=2)
    e = fedplt_iteration(x, z, small, rho=1.0, Ne=2, solver="gd", gamma=None, active=None, tau=0.0)
    for u, v in zip(d, e, strict=True):
        np.testing.assert_array_equal(u, v)


def test_initial_states_and_seeded_generator(small):
    x0, z0, _ = _random_state(small, 8)
    run0 = run_fedplt(small, rho=1.0, Ne=2, K=0, x0=x0, z0=z0)
    np.testing.assert_array_equal(run0.x, x0)
    np.testing.assert_array_equal(run0.z, z0)
    np.testing.assert_allclose(run0.y, z0.mean(axis=0), rtol=0, atol=1e-15)
    run1 = run_fedplt(small, rho=1.0, Ne=2, K=1, x0=x0, z0=z0)
    x1, z1, y1 = fedplt_iteration(x0, z0, small, rho=1.0, Ne=2)
    np.testing.assert_array_equal(run1.x, x1)
    np.testing.assert_array_equal(run1.z, z1)
    np.testing.assert_array_equal(run1.y, y1)
    g = run_fedplt(small, rho=1.0, Ne=2, K=3, participation=0.5, rng=np.random.default_rng(4), seed=-1)
    s = run_fedplt(small, rho=1.0, Ne=2, K=3, participation=0.5, seed=4)
    np.testing.assert_array_equal(g.x, s.x)  # rng given: seed is not read


def test_participation_probabilities_per_agent_and_boundaries(small):
    N = small.N
    p = np.where(np.arange(N) < N // 2, 1.0, 1e-300)  # half always, half (in effect) never active
    run = run_fedplt(small, rho=1.0, Ne=2, K=5, participation=p, record=())
    np.testing.assert_array_equal(run.active_count[1:], N // 2)
    np.testing.assert_array_equal(run.x[N // 2:], 0.0)
    assert np.all(np.any(run.x[:N // 2] != 0.0, axis=1))
    np.testing.assert_array_equal(run.grad_evals, np.arange(6) * (N // 2) * 2)
    np.testing.assert_array_equal(run.comms, np.arange(6) * (N // 2))
    full = run_fedplt(small, rho=1.0, Ne=2, K=3, participation=1.0, record=())
    np.testing.assert_array_equal(full.active_count[1:], N)
    for c in (1, N):
        coh = run_fedplt(small, rho=1.0, Ne=2, K=3, participation=("cohort", c), record=())
        np.testing.assert_array_equal(coh.active_count, [0, c, c, c])
        np.testing.assert_array_equal(coh.grad_evals, np.arange(4) * 2 * c)
    coh = run_fedplt(small, rho=1.0, Ne=2, K=1, participation=("cohort", np.int64(N - 1)), record=())
    assert coh.active_count[1] == N - 1
    bern = run_fedplt(small, rho=1.0, Ne=3, K=40, participation=0.5, record=())
    np.testing.assert_array_equal(np.diff(bern.grad_evals), 3 * bern.active_count[1:])
    assert 0 < bern.active_count[1:].min() and bern.active_count[1:].max() < N


def test_progress_bar_is_optional(small, capsys):
    run_fedplt(small, rho=1.0, Ne=2, K=3, record=())
    assert capsys.readouterr().err == ""
    run_fedplt(small, rho=1.0, Ne=2, K=3, record=(), progress=True)
    err = capsys.readouterr().err
    assert "Fed-PLT (gd, Ne=2)" in err
    assert err.endswith("\r")  # leave=False: the bar is cleared at the end, not left on its line


def test_integer_states_and_noiseless_noisy_gd_without_rng(small):
    xi = np.arange(small.N * small.n).reshape(small.N, small.n) % 3  # integer arrays
    zi = -xi
    a = fedplt_iteration(xi, zi, small, rho=1.0, Ne=2)
    b = fedplt_iteration(xi.astype(float), zi.astype(float), small, rho=1.0, Ne=2)
    for u, v in zip(a, b, strict=True):
        assert u.dtype == np.float64
        np.testing.assert_array_equal(u, v)
    run = run_fedplt(small, rho=1.0, Ne=2, K=1, x0=xi, z0=zi)
    np.testing.assert_array_equal(run.x, b[0])
    # tau = 0: noisy GD is GD and needs no generator
    c = fedplt_iteration(xi, zi, small, rho=1.0, Ne=2, solver="noisy-gd", tau=0.0)
    np.testing.assert_array_equal(c[0], b[0])


def test_participation_probabilities_as_python_numbers(small):
    from fractions import Fraction
    run = run_fedplt(small, rho=1.0, Ne=1, K=2, participation=[Fraction(1, 1)] * small.N, record=())
    np.testing.assert_array_equal(run.active_count[1:], small.N)
    one = run_fedplt(small, rho=1.0, Ne=1, K=2, participation=Fraction(1, 1), record=())
    np.testing.assert_array_equal(one.active_count[1:], small.N)


def test_privacy_init_rejects_lam_zero_and_records_are_float(small):
    from fedrepro.problems.logistic import LogisticProblem
    flat = LogisticProblem(small.features, small.labels, reg="nonconvex", reg_weight=0.0)
    assert flat.lam == 0.0  # the boundary of lam > 0
    with pytest.raises(ValueError, match=r"^init='privacy' needs lam > 0 \(strongly convex costs\), got lam=-?0\.0$"):
        run_fedplt(flat, rho=1.0, Ne=1, K=1, solver="noisy-gd", tau=0.1, init="privacy", x_ref=np.zeros(flat.n))
    run = run_fedplt(small, rho=1.0, Ne=1, K=2, record=("x_err", "z_err", "xz_err", "grad_sq", "x_bar"))
    for name in ("x_err", "z_err", "xz_err", "grad_sq", "x_bar"):
        assert getattr(run, name).dtype == np.float64, name
    for name in ("comms", "grad_evals", "active_count"):
        assert getattr(run, name).dtype == np.int64, name


def test_xz_err_needs_a_reference():
    nc = logistic_v2(False, 0, N=12, q=30)
    run = run_fedplt(nc, rho=1.0, Ne=1, K=2, record=("xz_err", "grad_sq"))
    assert run.xz_err is None and run.x_err is None and run.grad_sq.shape == (3,)


def test_step_range_ends_are_open(small):
    rho = 0.5
    # scalar: gamma = 2/(lam_bar + 1/rho) itself is rejected, just below it accepted
    upper = 2.0 / (small.lam_bar + 1.0 / rho)
    with pytest.raises(ValueError, match=r"^gamma must lie in \(0, 2/\(lam_bar \+ 1/rho\)\)"):
        _it(small, rho=rho, gamma=upper)
    _it(small, rho=rho, gamma=np.nextafter(upper, 0.0))
    # per agent: 2/(lam_bar_i + 1/rho), each end open
    up_i = 2.0 / (np.asarray(small.lam_bar_i) + 1.0 / rho)
    ok = 0.5 * up_i
    _it(small, rho=rho, gamma=np.nextafter(up_i, 0.0))
    for i, factor in ((4, 1.0), (9, 1.01)):
        g = ok.copy()
        g[i] = factor * up_i[i]
        with pytest.raises(ValueError, match=rf"^gamma\[{i}\] must lie in \(0, 2/\(lam_bar_i \+ 1/rho\)\)"):
            _it(small, rho=rho, gamma=g)


def test_smallest_batch_and_no_active_agent(small):
    x, z, _ = _random_state(small, 2)
    x1, _, _ = fedplt_iteration(x, z, small, rho=1.0, Ne=2, solver="sgd", batch_size=1, rng=np.random.default_rng(0))
    assert np.all(np.isfinite(x1)) and not np.array_equal(x1, x)
    none = run_fedplt(small, rho=1.0, Ne=2, K=3, participation=1e-300, record=())
    np.testing.assert_array_equal(none.active_count, 0)
    np.testing.assert_array_equal(none.grad_evals, 0)  # no agent, no gradient
    np.testing.assert_array_equal(none.comms, 0)
    with pytest.raises(ValueError, match=r"^x_ref must have shape \(5,\), got \(3,\)$"):
        fixed_point(small, 1.0, np.zeros(3))
