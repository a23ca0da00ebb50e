"""The straightforward Fed-PLT (an agent-by-agent loop, v2 Algorithm 1 with GD, eq. (11))
against the vectorised implementation, and input validation of the reference."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.fedplt import default_step_size, fedplt_iteration, run_fedplt
from fedrepro.fedplt.reference import (
    agent_grad,
    fedplt_iteration_loop,
    reference_step_size,
    run_fedplt_loop,
)
from fedrepro.problems import logistic_v1, logistic_v2, random_quadratic

# Both implementations evaluate the same formulas in a different summation order (one agent's
# matrix-vector products against batched products), so they differ by round-off only:
# ~1e-16 per step on O(1) iterates, damped by the contraction. 1e-12 leaves four orders of
# margin for that and still catches any algorithmic slip (wrong sign, step, warm start or
# stale z), which moves the iterates by >= 1e-6 after a few iterations.
ATOL = 1e-12


@pytest.fixture(scope="module")
def problems():
    return {"v2": logistic_v2(convex=True, seed=0), "v2-nonconvex": logistic_v2(convex=False, seed=0),
            "v1": logistic_v1()}


def _start(p, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((p.N, p.n)), rng.standard_normal((p.N, p.n))


@pytest.mark.parametrize("name", ["v2", "v2-nonconvex", "v1"])
def test_agent_grad_is_the_agents_own_gradient(problems, name):
    p = problems[name]
    X = np.random.default_rng(1).standard_normal((p.N, p.n))
    loop = np.array([agent_grad(p, i, X[i]) for i in range(p.N)])
    # same formula, different summation order: round-off on O(1) gradients
    np.testing.assert_allclose(loop, p.grad(X), rtol=0, atol=ATOL)
    # a finite difference of the agent's own cost (central, h = 1e-6: error ~h^2 + eps/h ~ 1e-10)
    i, h = 3, 1e-6
    e = np.eye(p.n)
    fd = [(p.cost(np.tile(X[i] + h * e[j], (p.N, 1)))[i] - p.cost(np.tile(X[i] - h * e[j], (p.N, 1)))[i])
          / (2 * h) for j in range(p.n)]
    np.testing.assert_allclose(agent_grad(p, i, X[i]), fd, rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", ["v2", "v2-nonconvex", "v1"])
def test_default_step_matches_library(problems, name):
    p = problems[name]
    # two closed forms of the same expression: a few ulps
    assert reference_step_size(p, 1.0) == pytest.approx(default_step_size(p, 1.0), rel=1e-15)


@pytest.mark.parametrize("name", ["v2", "v2-nonconvex", "v1"])
@pytest.mark.parametrize("masked", [False, True])
def test_iterations_match_vectorised(problems, name, masked):
    p = problems[name]
    x, z = _start(p, 7)
    x_l, z_l = x.copy(), z.copy()
    rng = np.random.default_rng(11)
    for k in range(6):
        active = rng.random(p.N) < 0.4 if masked else None
        if masked and k == 0:
            active[:] = False  # an iteration with nobody active only moves y
        x, z, y = fedplt_iteration(x, z, p, rho=1.0, Ne=5, active=active)
        x_prev, z_prev = x_l, z_l
        x_l, z_l, y_l = fedplt_iteration_loop(x_l, z_l, p, rho=1.0, Ne=5, active=active)
        np.testing.assert_allclose(x_l, x, rtol=0, atol=ATOL)
        np.testing.assert_allclose(z_l, z, rtol=0, atol=ATOL)
        np.testing.assert_allclose(y_l, y, rtol=0, atol=ATOL)
        if masked:  # inactive agents keep their state bit for bit (Algorithm 1, line 12)
            assert np.array_equal(x_l[~active], x_prev[~active])
            assert np.array_equal(z_l[~active], z_prev[~active])
    # the check can fail: a different step size moves the iterates far beyond ATOL
    other = fedplt_iteration_loop(x_l, z_l, p, rho=1.0, Ne=5, gamma=0.5 * reference_step_size(p, 1.0))[0]
    assert np.max(np.abs(other - fedplt_iteration(x_l, z_l, p, rho=1.0, Ne=5)[0])) > 1e-6


def test_inactive_agents_untouched(problems):
    p = problems["v1"]
    x, z = _start(p, 3)
    active = np.zeros(p.N, dtype=bool)
    active[[1, 4]] = True
    x1, z1, _ = fedplt_iteration_loop(x, z, p, rho=0.5, Ne=3, active=active)
    assert np.array_equal(x1[~active], x[~active]) and np.array_equal(z1[~active], z[~active])
    assert np.all(x1[active] != x[active])


@pytest.mark.parametrize("name", ["v2", "v1"])
def test_run_matches_vectorised(problems, name):
    p = problems[name]
    K = 15
    vec = run_fedplt(p, rho=1.0, Ne=5, K=K, record=("x_err", "grad_sq"))
    loop = run_fedplt_loop(p, rho=1.0, Ne=5, K=K)
    assert loop["grad_sq"].shape == loop["x_err"].shape == (K + 1,)
    np.testing.assert_allclose(loop["x"], vec.x, rtol=0, atol=ATOL)
    np.testing.assert_allclose(loop["z"], vec.z, rtol=0, atol=ATOL)
    np.testing.assert_allclose(loop["x_err"], vec.x_err, rtol=0, atol=ATOL)
    # grad_sq is a square of a sum of N gradients of size O(1): compare the norms, whose
    # round-off is ~N * 1e-16
    np.testing.assert_allclose(np.sqrt(loop["grad_sq"]), np.sqrt(vec.grad_sq), rtol=0, atol=ATOL)
    assert loop["grad_sq"][-1] < 1e-3 * loop["grad_sq"][0]  # it does converge


def test_run_with_start_and_array_step(problems):
    p = problems["v1"]
    x0, z0 = _start(p, 5)
    gamma = default_step_size(p, 2.0, uncoordinated=True)
    vec = run_fedplt(p, rho=2.0, Ne=3, K=5, gamma=gamma, x0=x0, z0=z0, record=("x_err", "grad_sq"))
    loop = run_fedplt_loop(p, rho=2.0, Ne=3, K=5, gamma=gamma, x0=x0, z0=z0)
    np.testing.assert_allclose(loop["x"], vec.x, rtol=0, atol=ATOL)
    np.testing.assert_allclose(loop["x_err"], vec.x_err, rtol=0, atol=ATOL)


def test_nonconvex_run_has_no_error_reference(problems):
    out = run_fedplt_loop(problems["v2-nonconvex"], rho=1.0, Ne=2, K=2)
    assert out["x_err"] is None and out["grad_sq"].shape == (3,)


@pytest.mark.parametrize("kwargs, match", [
    ({"rho": 0.0}, "rho"),
    ({"rho": float("nan")}, "rho"),
    ({"Ne": 0}, "Ne"),
    ({"Ne": 2.0}, "Ne"),
    ({"gamma": -0.1}, "gamma"),
    ({"gamma": 10.0}, "gamma"),
    ({"gamma": np.ones(3)}, "gamma"),
    ({"active": np.ones(10)}, "active"),
    ({"active": np.ones(9, dtype=bool)}, "active"),
])
def test_iteration_rejects_bad_inputs(problems, kwargs, match):
    p = problems["v1"]
    args = {"rho": 1.0, "Ne": 2} | kwargs
    with pytest.raises(ValueError, match=match):
        fedplt_iteration_loop(np.zeros((p.N, p.n)), np.zeros((p.N, p.n)), p, **args)


def test_rejects_bad_states_and_problems(problems):
    p = problems["v1"]
    good = np.zeros((p.N, p.n))
    with pytest.raises(ValueError, match="x must have shape"):
        fedplt_iteration_loop(np.zeros((p.N, p.n + 1)), good, p, rho=1.0, Ne=1)
    with pytest.raises(ValueError, match="z must be finite"):
        fedplt_iteration_loop(good, np.full((p.N, p.n), np.inf), p, rho=1.0, Ne=1)
    with pytest.raises(ValueError, match="K"):
        run_fedplt_loop(p, rho=1.0, Ne=1, K=-1)
    with pytest.raises(ValueError, match="x0"):
        run_fedplt_loop(p, rho=1.0, Ne=1, K=1, x0=np.zeros(3))
    quad = random_quadratic(4, 2, 0.5, 2.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="LogisticProblem"):
        run_fedplt_loop(quad, rho=1.0, Ne=1, K=1)
