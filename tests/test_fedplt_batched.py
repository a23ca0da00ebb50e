"""The batched engine (stacked runs) and Fed-PLT written on it, against the reference
implementation of Algorithm 1 (``fedrepro.fedplt.algorithm``)."""

import re

import numpy as np
import pytest

from fedrepro.fedplt.algorithm import fedplt_iteration, run_fedplt
from fedrepro.fedplt.baselines import ALGORITHMS, algorithm_class
from fedrepro.fedplt.baselines.fedplt import FedPLT
from fedrepro.fedplt.batched import (
    DIVERGED,
    BatchedAlgorithm,
    RunStreams,
    cohort_masks,
    local_agd,
    local_gd,
    run_batched,
    stacked_grad,
    stacked_total_grad,
)
from fedrepro.fedplt.tuning import grid_points, grid_search
from fedrepro.problems.logistic import logistic_v2
from fedrepro.problems.quadratic import QuadraticProblem, random_quadratic

# Round-off of one batched product against the per-agent oracle: a few ulps of O(1) values.
ROUNDOFF = 1e-13


@pytest.fixture(scope="module")
def convex():
    return logistic_v2(True, 0, N=12, q=30)


@pytest.fixture(scope="module")
def nonconvex():
    return logistic_v2(False, 0, N=12, q=30)


@pytest.mark.parametrize("which", ["convex", "nonconvex"])
def test_stacked_grad_equals_per_agent_gradient(which, request):
    p = request.getfixturevalue(which)
    X = 3.0 * np.random.default_rng(1).standard_normal((4, 2, p.N, p.n))
    ref = np.stack([p.grad(x) for x in X.reshape(-1, p.N, p.n)]).reshape(X.shape)
    assert np.max(np.abs(stacked_grad(p, X) - ref)) <= ROUNDOFF
    x = X[:, 0, 0]
    tot = np.stack([p.total_grad(v) for v in x])
    assert np.max(np.abs(stacked_total_grad(p, x) - tot)) <= ROUNDOFF * p.N


def test_stacked_grad_falls_back_for_other_problems():
    p = random_quadratic(N=3, n=2, lam=0.5, lam_bar=2.0, rng=np.random.default_rng(0))
    X = np.random.default_rng(2).standard_normal((5, 3, 2))
    ref = np.stack([p.grad(x) for x in X])
    assert np.max(np.abs(stacked_grad(p, X) - ref)) <= ROUNDOFF


def test_stacked_grad_rejects_wrong_shape(convex):
    with pytest.raises(ValueError, match="shape"):
        stacked_grad(convex, np.zeros((2, convex.N + 1, convex.n)))


@pytest.mark.parametrize("solver", ["gd", "agd"])
def test_batched_fedplt_equals_reference_iteration(convex, solver):
    """Three runs with three rho stacked; each equals Algorithm 1's reference iteration,
    with full participation and with a given active set."""
    rhos = np.array([0.3, 1.0, 4.0])
    algo = FedPLT(convex, Ne=4, solver=solver, rho=rhos)
    rng = np.random.default_rng(3)
    state = {"x": rng.standard_normal((3, convex.N, convex.n)), "z": rng.standard_normal((3, convex.N, convex.n))}
    active = rng.random((3, convex.N)) < 0.5
    for mask in (None, active):
        new, evals = algo.step(state, mask, RunStreams(0, 3))
        for r, rho in enumerate(rhos):
            x, z, _ = fedplt_iteration(state["x"][r], state["z"][r], convex, rho=float(rho), Ne=4, solver=solver,
                                       active=None if mask is None else mask[r])
            assert np.max(np.abs(new["x"][r] - x)) <= ROUNDOFF
            assert np.max(np.abs(new["z"][r] - z)) <= ROUNDOFF
        expected = 4 * (convex.N if mask is None else mask.sum(axis=1))
        assert np.array_equal(evals, np.broadcast_to(expected, (3,)))


def test_batched_run_matches_run_fedplt(convex):
    """K* and the stopping metric of the batched driver equal those of run_fedplt."""
    b = run_batched(FedPLT(convex, Ne=5, rho=[0.5, 1.0, 2.0]), K=300, tol=1e-10)
    for r, rho in enumerate((0.5, 1.0, 2.0)):
        ref = run_fedplt(convex, rho=rho, Ne=5, K=300, tol=1e-10)
        assert b.iterations_to_tol[r] == ref.iterations_to_tol
        k = ref.iterations_to_tol
        # relative round-off of a squared gradient norm that has fallen to 1e-10
        assert np.allclose(b.grad_sq[r, :k + 1], ref.grad_sq, rtol=1e-6, atol=1e-20)


def test_runs_are_independent_of_their_neighbours(convex):
    """Run r draws from stream r: stacking more runs leaves run 0 unchanged; equal stream
    ids give equal draws (common random numbers)."""
    a = run_batched(FedPLT(convex, Ne=2, rho=1.0), K=30, runs=1, participation=("cohort", 5), seed=7)
    b = run_batched(FedPLT(convex, Ne=2, rho=1.0), K=30, runs=6, participation=("cohort", 5), seed=7)
    n = min(a.grad_sq.shape[1], b.grad_sq.shape[1])
    # same draws; only the blocking of the batched products differs (round-off)
    assert np.allclose(a.grad_sq[0, :n], b.grad_sq[0, :n], rtol=1e-9, atol=0)
    assert a.iterations_to_tol[0] == b.iterations_to_tol[0]
    c = run_batched(FedPLT(convex, Ne=2, rho=[1.0, 1.0]), K=30, participation=("cohort", 5), seed=7,
                    stream_ids=[3, 3])
    assert np.array_equal(c.grad_sq[0], c.grad_sq[1])
    d = run_batched(FedPLT(convex, Ne=2, rho=1.0), K=30, runs=6, participation=("cohort", 5), seed=7)
    assert np.array_equal(b.grad_sq, d.grad_sq, equal_nan=True)  # determinism


def test_drop_finished_keeps_every_k_star(convex):
    algo = FedPLT(convex, Ne=5, rho=[0.1, 0.5, 1.0, 3.0])
    full = run_batched(algo, K=400, runs=4)
    dropped = run_batched(algo, K=400, runs=4, drop_finished=True)
    assert np.array_equal(full.iterations_to_tol, dropped.iterations_to_tol)
    assert np.all(full.iterations_to_tol > 0)
    for r, k in enumerate(full.iterations_to_tol):
        # dropping runs changes only the blocking of the batched products (round-off)
        assert np.allclose(full.grad_sq[r, :k + 1], dropped.grad_sq[r, :k + 1], rtol=1e-9, atol=0)


def test_cohort_masks_have_exactly_c_agents():
    m = cohort_masks(RunStreams(0, 50), 10, 4)
    assert m.shape == (50, 10) and np.all(m.sum(axis=1) == 4)
    # every agent is drawn: 50 runs x 4 = 200 draws over 10 agents, 20 expected each
    assert np.all(m.sum(axis=0) > 5)


def test_local_solvers_with_per_run_step_counts():
    """With steps=[1, 3], run 0 stops after one step, run 1 takes three (TAMUNA's L_r)."""
    A = np.array([2.0, 0.5])

    def grad(W):
        return A * W

    W0 = np.ones((2, 1, 2))
    steps = np.array([1, 3])[:, None, None]
    W = local_gd(grad, W0, 0.25, 3, steps)
    assert np.allclose(W[0, 0], (1 - 0.25 * A) ** 1) and np.allclose(W[1, 0], (1 - 0.25 * A) ** 3)
    V = local_agd(grad, W0, 2.0, 0.5, 3, steps)
    assert np.allclose(V[0], local_agd(grad, W0[:1], 2.0, 0.5, 1)[0])
    assert np.allclose(V[1], local_agd(grad, W0[1:], 2.0, 0.5, 3)[0])


def test_time_costs(convex):
    algo = FedPLT(convex, Ne=5, rho=1.0)
    assert algo.cost_per_iteration(1.0, 10.0) == (5 + 10) * convex.N
    assert algo.cost_per_iteration(1.0, 10.0, active=6) == 15 * 6
    run = run_batched(algo, K=200)
    k = int(run.iterations_to_tol[0])
    assert run.paper_time(algo)[0] == k * 15 * convex.N
    assert run.realised_time()[0] == k * 15 * convex.N  # deterministic: the two agree


@pytest.mark.parametrize("kwargs, match", [
    ({"rho": -1.0}, "rho"),
    ({"rho": 1.0, "gamma": 10.0}, "gamma"),
    ({"rho": 1.0, "tau": 0.1}, "tau"),
    ({"rho": [1.0, 2.0], "gamma": [0.1, 0.1, 0.1]}, "same length"),
    ({"rho": np.nan}, "finite"),
])
def test_bad_parameters(convex, kwargs, match):
    with pytest.raises(ValueError, match=match):
        FedPLT(convex, Ne=5, **kwargs)


def test_bad_driver_inputs(convex):
    algo = FedPLT(convex, Ne=1, rho=[1.0, 2.0])
    with pytest.raises(ValueError, match="runs"):
        run_batched(algo, K=5, runs=3)
    with pytest.raises(ValueError, match="cohort"):
        run_batched(algo, K=5, participation=("cohort", convex.N + 1))
    with pytest.raises(ValueError, match="K"):
        run_batched(algo, K=-1)
    with pytest.raises(ValueError, match="solver"):
        FedPLT(convex, Ne=1, solver="adam")


def test_noisy_gd_stalls_at_a_floor(convex):
    """Noisy GD (eq. (13)) no longer reaches the optimum: its error stops at a floor that
    grows with tau, unlike the noiseless run."""
    floors = []
    for tau in (0.0, 1e-3, 1e-2):
        algo = FedPLT(convex, Ne=5, solver="noisy-gd", rho=1.0, tau=tau)
        run = run_batched(algo, K=150, runs=4, tol=0.0, record=("grad_sq", "model_err"), stop_when_done=False)
        floors.append(float(np.mean(run.model_err[:, -50:])))
    assert floors[0] < 1e-10 < floors[1] < floors[2]


def test_grid_search_picks_the_smallest_mean(convex):
    res = grid_search("Fed-PLT", convex, Ne=5, grid={"rho": [0.05, 1.0, 50.0]}, K=2000)
    assert res.best == int(np.argmin(res.mean_K))
    assert res.best_params == {"rho": 1.0}
    assert grid_points({"a": [1, 2], "b": [3]}) == [{"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 3.0}]
    with pytest.raises(ValueError, match="algorithm"):
        grid_search("FedAvg", convex, Ne=5)


def test_registry_names():
    assert set(ALGORITHMS) == {"FedPD", "FedLin", "TAMUNA", "LED", "5GCS", "Fed-PLT"}
    assert algorithm_class("Fed-PLT") is FedPLT


def test_fedplt_tuning_grid(convex, nonconvex):
    """rho on a strictly increasing log-type grid from 1e-2 to 1e2 that covers v1 Fig. 2's
    optimum range [0.3, 2]; the nonconvex case keeps exactly the rho with lam + 1/rho > 0, and
    every grid point is accepted."""
    full = FedPLT.tuning_grid(convex, 5)["rho"]
    assert list(FedPLT.tuning_grid(convex, 5, "agd")) == ["rho"]
    assert len(full) == 15 and full[0] == 0.01 and full[-1] == 100.0
    assert all(a < b for a, b in zip(full, full[1:], strict=False))
    assert sum(0.3 <= r <= 2.0 for r in full) >= 5
    ratios = np.array(full[1:]) / np.array(full[:-1])
    assert np.all((ratios > 1.3) & (ratios <= 3.4))  # no gap wider than a factor ~3
    kept = FedPLT.tuning_grid(nonconvex, 5)["rho"]
    assert kept == [r for r in full if nonconvex.lam + 1.0 / r > 0] and 0 < len(kept) < len(full)
    for P, grid in ((convex, full), (nonconvex, kept)):
        for rho in grid:
            FedPLT(P, Ne=5, rho=rho)  # no ValueError


@pytest.mark.parametrize("kwargs, message", [
    (dict(rho=0.0), r"^rho must be > 0"),
    (dict(rho=-1.0), r"^rho must be > 0"),
    (dict(tau=-0.1, solver="noisy-gd"), r"^tau must be >= 0, got -0\.1$"),
    (dict(tau=0.1), r"^tau must be 0 unless solver='noisy-gd' \(eq\. \(13\)\)$"),
    (dict(gamma=0.0), r"^gamma must lie in \(0, 2/\(lam_bar \+ 1/rho\)\)"),
    (dict(gamma=-0.1), r"^gamma must lie in"),
    (dict(init="other"), r"^init must be 'zeros' or 'privacy', got 'other'$"),
    (dict(init="privacy", solver="noisy-gd"),
     r"^init='privacy' needs lam > 0 and tau > 0 \(x_0 ~ N\(0, 2 tau\^2 I / lam\)\)$"),
])
def test_fedplt_parameters_are_validated(convex, kwargs, message):
    with pytest.raises(ValueError, match=message):
        FedPLT(convex, Ne=2, **kwargs)


def test_fedplt_step_range_defaults_and_floor(convex, nonconvex):
    rho = 1.0
    upper = 2.0 / (convex.lam_bar + 1.0 / rho)
    for gamma in (upper, 1.25 * upper):  # the open upper end, and beyond it
        with pytest.raises(ValueError, match="gamma must lie"):
            FedPLT(convex, Ne=2, rho=rho, gamma=gamma)
    FedPLT(convex, Ne=2, rho=rho, gamma=0.999 * upper)
    algo = FedPLT(convex, Ne=2)
    assert algo.solver == "gd" and float(algo.params["rho"]) == 1.0 and float(algo.params["tau"]) == 0.0
    assert float(algo.params["gamma"]) == pytest.approx(2.0 / (convex.lam_bar + convex.lam + 2.0), rel=1e-15)
    # weakly convex: mu_d = lam + 1/rho (here 6e-4) is floored at 1e-3 in the default step
    rho = 3.99
    assert 0 < nonconvex.lam + 1 / rho < 1e-3
    gamma = float(FedPLT(nonconvex, Ne=2, rho=rho).params["gamma"])
    assert gamma == pytest.approx(2.0 / (nonconvex.lam_bar + 1 / rho + 1e-3), rel=1e-15)
    with pytest.raises(ValueError, match="init='privacy' needs lam > 0"):
        FedPLT(nonconvex, Ne=2, solver="noisy-gd", rho=1.0, tau=0.1, init="privacy")


def test_fedplt_tuning_grid_values():
    # Regression guard: the grid is a choice of ours (spec §1 asks for a log grid only), and the
    # committed tuned results depend on it, so its values are pinned here; its properties (range,
    # spacing, coverage of [0.3, 2]) are checked independently in test_fedplt_tuning_grid.
    assert FedPLT.tuning_grid(random_quadratic(2, 2, 1.0, 2.0, rng=0), 5)["rho"] == [
        0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0]


def test_privacy_initialisation_needs_strong_convexity():
    # x_0 ~ N(0, 2 tau^2 I / lam) is undefined at lam = 0 (convex, not strongly convex): rejected
    # there as for lam < 0. The quadratic's moduli are overwritten to make lam exactly 0.
    problem = random_quadratic(2, 2, 1.0, 2.0, rng=0)
    problem.lam_i = np.array([0.0, 1.0])
    assert problem.lam == 0.0 and problem.convex
    with pytest.raises(ValueError, match=r"^init='privacy' needs lam > 0 and tau > 0"):
        FedPLT(problem, Ne=2, solver="noisy-gd", rho=1.0, tau=0.1, init="privacy")


# ----------------------------------------------------------------------------------------
# the driver on a toy algorithm with a closed-form trajectory, every message in full
# ----------------------------------------------------------------------------------------


def _q(s: str) -> str:
    """A message as an anchored regular expression."""
    return "^" + re.escape(s) + "$"


class _Scale(BatchedAlgorithm):
    """Toy algorithm: the model of run r is ``c_r^k (1, ..., 1)`` after k iterations; each
    iteration reports ``N_e |A|`` gradient evaluations. Every class attribute is the default."""

    name = "Scale"
    solvers = ("gd",)

    def init_state(self, runs, streams):
        return {"m": np.ones((runs, self.problem.n)), "seen": np.zeros((runs, self.problem.N))}

    def step(self, state, active, streams):
        c = self.params["c"]
        c = c[:, None] if c.ndim == 1 else c
        runs = state["m"].shape[0]
        n_active = np.full(runs, self.problem.N) if active is None else active.sum(axis=1)
        seen = state["seen"] + (1.0 if active is None else active)
        return {"m": state["m"] * c, "seen": seen}, self.Ne * n_active

    def model(self, state):
        return state["m"]


class _ScaleP(_Scale):
    partial_participation = True


@pytest.fixture(scope="module")
def unit():
    """f_i(x) = ||x||^2 / 2 on N = 3 agents, n = 2: sum_i grad f_i(x) = 3 x, so the toy's
    grad_sq after k iterations is 9 * 2 * c^(2k)."""
    return QuadraticProblem(np.broadcast_to(np.eye(2), (3, 2, 2)), np.zeros((3, 2)))


def _k_star(c, tol, K):
    for k in range(K + 1):
        if 18.0 * c ** (2 * k) <= tol:
            return k
    return -1


def test_driver_follows_the_closed_form_of_the_toy(unit):
    c = np.array([0.5, 0.1, 0.9])
    algo = _Scale(unit, Ne=2, c=c)
    assert algo.runs_required == 3 and algo.rounds == 1 and algo.extra_gradients == 0
    assert algo.partial_participation is False and algo.random_local_steps is False
    run = run_batched(algo, K=12, tol=1e-3)
    k = np.arange(13)
    expected = 18.0 * c[:, None] ** (2 * k)
    assert run.iterations == 12 and run.grad_sq.shape == (3, 13)  # run 2 is not done by K = 12
    np.testing.assert_allclose(run.grad_sq, expected, rtol=1e-13)
    np.testing.assert_array_equal(run.iterations_to_tol, [_k_star(v, 1e-3, 12) for v in c])
    np.testing.assert_array_equal(run.converged, [True, True, False])
    np.testing.assert_array_equal(run.comms, np.tile(3 * k, (3, 1)))
    np.testing.assert_array_equal(run.grad_evals, np.tile(6 * k, (3, 1)))
    np.testing.assert_array_equal(run.active_count, np.tile(np.where(k > 0, 3, 0), (3, 1)))
    np.testing.assert_array_equal(run.diverged, False)
    assert run.model_err is None and run.models is None and run.name == "Scale" and run.Ne == 2
    np.testing.assert_allclose(run.final_state["m"], c[:, None] ** 12 * np.ones((3, 2)), rtol=1e-14)
    assert run.settings == {"name": "Scale", "Ne": 2, "solver": "gd", "params": {"c": [0.5, 0.1, 0.9]},
                            "participation": None, "seed": 0, "tol": 1e-3, "runs": 3}
    # Table II cost ((N_e + 0) t_G + 1 t_C) N per iteration, K* times; realised: the counters at K*
    cost = (2 * 1.0 + 10.0) * 3
    assert algo.cost_per_iteration(1.0, 10.0) == cost and algo.cost_per_iteration(2.0, 1.0, active=2) == 10.0
    ks = run.iterations_to_tol
    np.testing.assert_array_equal(run.paper_time(algo), [ks[0] * cost, ks[1] * cost, np.nan])
    np.testing.assert_array_equal(run.paper_time(algo, 2.0, 1.0, 2), [ks[0] * 10.0, ks[1] * 10.0, np.nan])
    np.testing.assert_array_equal(run.realised_time(), [6 * ks[0] + 10 * 3 * ks[0], 6 * ks[1] + 30 * ks[1], np.nan])
    np.testing.assert_array_equal(run.realised_time(2.0, 1.0), [12 * ks[0] + 3 * ks[0], 15 * ks[1], np.nan])
    np.testing.assert_allclose(algo.fixed_point_residual(run.final_state),
                               3 * np.sqrt(2) * c ** 12, rtol=1e-13)


def test_driver_stops_when_every_run_is_done_or_diverged(unit):
    algo = _Scale(unit, Ne=1, c=[1e8, 0.1])
    run = run_batched(algo, K=50, tol=1e-3)
    # run 0: 1.8e17 after one iteration, 1.8e33 > 1e30 after two; run 1 reaches 1e-3 at k = 3
    assert DIVERGED == 1e30
    np.testing.assert_array_equal(run.diverged, [True, False])
    np.testing.assert_array_equal(run.iterations_to_tol, [-1, 3])
    assert run.iterations == 3 and run.grad_sq.shape == (2, 4)
    inf = run_batched(_Scale(unit, Ne=1, c=[1e200, 0.1]), K=50, tol=1e-3)
    np.testing.assert_array_equal(inf.diverged, [True, False])  # an overflow to inf also diverges
    assert inf.iterations == 3
    go_on = run_batched(algo, K=5, tol=1e-3, stop_when_done=False)
    assert go_on.iterations == 5 and go_on.grad_sq.shape == (2, 6)
    assert run_batched(algo, K=5, tol=1e-3, drop_finished=True).iterations == 3


def test_driver_at_k0_and_ties(unit):
    algo = _Scale(unit, Ne=1, c=0.5)
    done = run_batched(algo, K=5, tol=18.0)  # grad_sq(0) = 18 <= tol: done before any iteration
    assert done.iterations == 0 and done.grad_sq.shape == (1, 1)
    np.testing.assert_array_equal(done.iterations_to_tol, [0])
    more = run_batched(algo, K=5, tol=18.0, stop_when_done=False)
    assert more.iterations == 5 and more.iterations_to_tol[0] == 0
    tie = run_batched(algo, K=5, tol=18.0 * 0.5 ** 4)  # exact in binary: reached with equality at k = 2
    np.testing.assert_array_equal(tie.iterations_to_tol, [2])
    assert run_batched(algo, K=0).grad_sq.shape == (1, 1)
    assert run_batched(algo, K=3, tol=0).settings["tol"] == 0.0


def test_driver_records_models_and_errors(unit):
    c = np.array([0.5, 2.0])
    algo = _Scale(unit, Ne=1, c=c)
    run = run_batched(algo, K=4, tol=0.0, record=("grad_sq", "model", "model_err"))
    k = np.arange(5)
    np.testing.assert_allclose(run.models, (c[:, None] ** k)[:, :, None] * np.ones(2), rtol=1e-15)
    np.testing.assert_allclose(run.model_err, np.sqrt(2) * c[:, None] ** k, rtol=1e-15)  # x* = 0
    xr = np.array([1.0, -1.0])
    err = run_batched(algo, K=4, tol=0.0, record=("model_err",), x_ref=xr).model_err
    np.testing.assert_allclose(err, np.sqrt((c[:, None] ** k - 1) ** 2 + (c[:, None] ** k + 1) ** 2), rtol=1e-15)
    assert run_batched(algo, K=4, tol=0.0, record=("model",)).model_err is None


def test_drop_finished_freezes_a_finished_run(unit):
    c = np.array([0.1, 0.9, 0.5])
    run = run_batched(_Scale(unit, Ne=1, c=c), K=10, tol=1e-3, drop_finished=True, stop_when_done=False)
    k0 = _k_star(0.1, 1e-3, 10)
    assert run.iterations_to_tol[0] == k0 == 3
    assert np.all(np.isnan(run.grad_sq[0, k0 + 1:])) and not np.any(np.isnan(run.grad_sq[1]))
    np.testing.assert_array_equal(run.comms[0, k0 + 1:], 0)  # no longer computed
    np.testing.assert_allclose(run.grad_sq[1], 18.0 * 0.9 ** (2 * np.arange(11)), rtol=1e-13)
    np.testing.assert_allclose(run.grad_sq[2, :6], 18.0 * 0.25 ** np.arange(6), rtol=1e-13)
    assert run.final_state["m"].shape == (1, 2)  # only the unfinished run is left
    np.testing.assert_allclose(run.final_state["m"][0], 0.9 ** 10, rtol=1e-13)


def test_drop_finished_with_participation_when_every_run_finishes_before_K():
    # every run reaches tol long before K; with stop_when_done=False the loop goes on with no run left
    algo = FedPLT(logistic_v2(True, 0, N=12, q=30), Ne=5, rho=1.0)
    kw = dict(K=100, runs=2, participation=("cohort", 6), stop_when_done=False)
    run = run_batched(algo, drop_finished=True, **kw)
    kept = run_batched(algo, **kw)
    k_tol = kept.iterations_to_tol
    assert np.all((k_tol >= 0) & (k_tol < 100))
    np.testing.assert_array_equal(run.iterations_to_tol, k_tol)
    assert run.iterations == 100 and run.grad_sq.shape == (2, 101)
    for r, k in enumerate(k_tol):
        np.testing.assert_array_equal(run.grad_sq[r, :k + 1], kept.grad_sq[r, :k + 1])
        assert np.all(np.isnan(run.grad_sq[r, k + 1:]))


def test_partial_participation_counts(unit):
    algo = _ScaleP(unit, Ne=2, c=[0.5, 0.5, 0.5, 0.5])
    run = run_batched(algo, K=3, tol=0.0, participation=("cohort", 2))
    np.testing.assert_array_equal(run.active_count[:, 1:], 2)
    np.testing.assert_array_equal(run.comms, np.tile(2 * np.arange(4), (4, 1)))
    np.testing.assert_array_equal(run.grad_evals, np.tile(4 * np.arange(4), (4, 1)))
    np.testing.assert_array_equal(run.final_state["seen"].sum(axis=1), 6)
    assert run.settings["participation"] == ("cohort", 2)
    p = np.array([1.0, 1e-300, 1.0])  # agents 0, 2 always, agent 1 (in effect) never
    run = run_batched(algo, K=3, tol=0.0, participation=p)
    np.testing.assert_array_equal(run.final_state["seen"], np.tile([3.0, 0.0, 3.0], (4, 1)))
    assert run.settings["participation"] == [1.0, 1e-300, 1.0]
    half = run_batched(algo, K=30, tol=0.0, participation=0.5)
    assert 0 < half.final_state["seen"].min() and half.final_state["seen"].max() < 30
    np.testing.assert_array_equal(run_batched(algo, K=2, tol=0.0, participation=1.0).active_count[:, 1:], 3)
    np.testing.assert_array_equal(run_batched(algo, K=2, tol=0.0, participation=("cohort", 3)).active_count[:, 1:], 3)
    np.testing.assert_array_equal(
        run_batched(algo, K=2, tol=0.0, participation=("cohort", np.int64(1))).active_count[:, 1:], 1)


def test_progress_bar_is_optional(unit, capsys):
    algo = _Scale(unit, Ne=2, c=[0.5, 0.5])
    run_batched(algo, K=3, tol=0.0)
    assert capsys.readouterr().err == ""
    run_batched(algo, K=3, tol=0.0, progress=True)
    err = capsys.readouterr().err
    assert "Scale (gd, Ne=2, R=2)" in err
    assert err.endswith("\r")  # leave=False: the bar is cleared at the end


def test_run_streams_are_children_of_the_seed_sequence():
    s = RunStreams(5, 3)
    assert s.runs == 3
    kids = np.random.SeedSequence(5).spawn(3)
    u = s.uniform((2,))
    np.testing.assert_array_equal(u, np.stack([np.random.default_rng(k).random(2) for k in kids]))
    s = RunStreams(5, 3)
    z = s.normal((2, 2))
    np.testing.assert_array_equal(z, np.stack([np.random.default_rng(k).standard_normal((2, 2)) for k in kids]))
    s = RunStreams(np.random.SeedSequence(5), 3, stream_ids=np.array([2, 0, 2]))
    g = s.geometric(0.3)
    ref = [np.random.default_rng(kids[i]).geometric(0.3) for i in (2, 0, 2)]
    np.testing.assert_array_equal(g, ref)
    assert g.dtype == np.int64 and s.uniform().shape == (3,)
    sub = RunStreams(5, 3).subset(np.array([2]))
    assert sub.runs == 1
    np.testing.assert_array_equal(sub.uniform((2,))[0], np.random.default_rng(kids[2]).random(2))
    geo = RunStreams(1, 2000).geometric(0.25)
    assert geo.min() >= 1 and geo.mean() == pytest.approx(4.0, rel=0.1)  # sd of the mean 0.08


def test_cohort_masks_are_the_c_smallest_uniforms():
    m = cohort_masks(RunStreams(3, 20), 7, 3)
    u = RunStreams(3, 20).uniform((7,))
    ref = np.zeros_like(m)
    np.put_along_axis(ref, np.argsort(u, axis=1)[:, :3], True, axis=1)
    np.testing.assert_array_equal(m, ref)
    assert cohort_masks(RunStreams(3, 4), 7, 7).all() and cohort_masks(RunStreams(3, 4), 7, 9).shape == (4, 7)
    one = cohort_masks(RunStreams(3, 20), 7, 1)
    np.testing.assert_array_equal(one.sum(axis=1), 1)


def test_param_and_subset(unit):
    algo = _Scale(unit, Ne=1, c=[0.1, 0.2, 0.3], d=5.0)
    assert algo.param("c").shape == (3, 1, 1) and algo.param("d").shape == ()
    sub = algo.subset(np.array([2, 0]))
    np.testing.assert_array_equal(sub.params["c"], [0.3, 0.1])
    assert sub.params["d"] == 5.0 and sub.runs_required == 2 and algo.runs_required == 3
    scalar = _Scale(unit, Ne=1, c=0.5)
    assert scalar.runs_required == 1 and scalar.subset(np.array([0, 1])).runs_required == 1
    assert run_batched(scalar, K=1, runs=4).grad_sq.shape[0] == 4


def test_stacked_grad_of_a_plain_state_and_under_overflow(convex):
    import warnings
    X = 2.0 * np.random.default_rng(0).standard_normal((convex.N, convex.n))
    np.testing.assert_allclose(stacked_grad(convex, X), convex.grad(X), rtol=0, atol=ROUNDOFF)
    X3 = np.stack([X, -X])
    ref = np.stack([convex.grad(X), convex.grad(-X)])
    np.testing.assert_allclose(stacked_grad(convex, X3), ref, rtol=0, atol=ROUNDOFF)
    big = 1e4 * np.stack([X, -X])  # exp(b a x) overflows: sigma(-b a x) = 0 exactly, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        G = stacked_grad(convex, big)
    ref = np.stack([convex.grad(x) for x in big])
    np.testing.assert_allclose(G, ref, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(stacked_total_grad(convex, X[:2]), np.stack([convex.total_grad(v) for v in X[:2]]),
                               rtol=0, atol=ROUNDOFF * convex.N)


BATCHED_MESSAGES = [
    (lambda p, u: stacked_grad(p, np.zeros((2, 13, 5))), _q("X must have shape (..., 12, 5), got (2, 13, 5)")),
    (lambda p, u: stacked_grad(p, np.zeros(5)), _q("X must have shape (..., 12, 5), got (5,)")),
    (lambda p, u: stacked_grad(p, np.zeros((12, 4))), _q("X must have shape (..., 12, 5), got (12, 4)")),
    (lambda p, u: stacked_total_grad(p, np.zeros(5)), _q("x must have shape (R, 5), got (5,)")),
    (lambda p, u: stacked_total_grad(p, np.zeros((2, 4))), _q("x must have shape (R, 5), got (2, 4)")),
    (lambda p, u: _Scale("p", Ne=1, c=1.0), _q("problem must be a FederatedProblem, got str")),
    (lambda p, u: _Scale(u, Ne=0, c=1.0), _q("Ne (local steps) must be an integer >= 1, got 0")),
    (lambda p, u: _Scale(u, Ne=True, c=1.0), _q("Ne (local steps) must be an integer >= 1, got True (bool)")),
    (lambda p, u: _Scale(u, Ne=1.0, c=1.0), _q("Ne (local steps) must be an integer >= 1, got 1.0 (float)")),
    (lambda p, u: _Scale(u, Ne=1, solver="agd", c=1.0), _q("solver for Scale must be one of ('gd',), got 'agd'")),
    (lambda p, u: _Scale(u, Ne=1, c=np.nan), _q("parameter c must be a finite scalar or a 1-D array (one value "
                                                "per run), got nan")),
    (lambda p, u: _Scale(u, Ne=1, c=np.ones((2, 2))), r"^parameter c must be a finite scalar or a 1-D array "),
    (lambda p, u: _Scale(u, Ne=1, c=[1.0, 2.0], d=[1.0, 2.0, 3.0]),
     _q("parameter arrays must all have the same length (runs); c has 2, another has 3")),
    (lambda p, u: run_batched("a", K=1), _q("algorithm must be a BatchedAlgorithm, got str")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=-1), _q("K (iterations) must be an integer >= 0, got -1")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=True), _q("K (iterations) must be an integer >= 0, got True (bool)")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1.0), _q("K (iterations) must be an integer >= 0, got 1.0 (float)")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=0), _q("runs must be an integer >= 1, got 0")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=True), _q("runs must be an integer >= 1, got True")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=2.0), _q("runs must be an integer >= 1, got 2.0")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=[1.0, 1.0]), K=1, runs=3),
     _q("runs=3 does not match the algorithm's parameter arrays of length 2")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, tol=-1.0), _q("tol must be finite and >= 0, got -1.0")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, tol=np.inf), _q("tol must be finite and >= 0, got inf")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, tol=np.nan), _q("tol must be finite and >= 0, got nan")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, record=("grad_sq", "x")),
     _q("record entries must be among ('grad_sq', 'model_err', 'model'), got ['x']")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, participation=0.5),
     _q("Scale has no partial participation (v2 Table I); participation must be None")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=("cohort", 0)),
     _q("participation ('cohort', c) needs an integer c in [1, 3], got 0")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=("cohort", 4)),
     _q("participation ('cohort', c) needs an integer c in [1, 3], got 4")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=("cohort", True)),
     _q("participation ('cohort', c) needs an integer c in [1, 3], got True")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=("cohort", 2.0)),
     _q("participation ('cohort', c) needs an integer c in [1, 3], got 2.0")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation={}),
     _q("participation must be None, ('cohort', c) or probabilities in (0, 1], got {}")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=0.0),
     _q("participation probabilities must lie in (0, 1] with shape () or (3,), got 0.0")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=1.5),
     _q("participation probabilities must lie in (0, 1] with shape () or (3,), got 1.5")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=np.nan),
     _q("participation probabilities must lie in (0, 1] with shape () or (3,), got nan")),
    (lambda p, u: run_batched(_ScaleP(u, Ne=1, c=1.0), K=1, participation=[0.5, 0.5]),
     _q("participation probabilities must lie in (0, 1] with shape () or (3,), got [0.5, 0.5]")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=2, stream_ids=[0]),
     _q("stream_ids must be 2 integers >= 0 (one per run), got array([0])")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=2, stream_ids=[0, -1]),
     _q("stream_ids must be 2 integers >= 0 (one per run), got array([ 0, -1])")),
    (lambda p, u: run_batched(_Scale(u, Ne=1, c=1.0), K=1, runs=2, stream_ids=[0.0, 1.0]),
     _q("stream_ids must be 2 integers >= 0 (one per run), got array([0., 1.])")),
]


@pytest.mark.parametrize("call, message", BATCHED_MESSAGES)
def test_batched_messages_in_full(convex, unit, call, message):
    with pytest.raises(ValueError, match=message):
        call(convex, unit)


def test_stream_ids_accept_unsigned_and_zero(unit):
    a = run_batched(_ScaleP(unit, Ne=1, c=1.0), K=3, runs=2, participation=0.5, tol=0.0,
                    stream_ids=np.array([0, 0], dtype=np.uint8))
    np.testing.assert_array_equal(a.final_state["seen"][0], a.final_state["seen"][1])


def test_local_solvers_return_a_float_copy():
    W0 = np.ones((2, 3, 2), dtype=np.int64)

    def grad(W):
        return 2.0 * W

    for out in (local_gd(grad, W0, 0.1, 0), local_agd(grad, W0, 4.0, 1.0, 0)):
        assert out.dtype == np.float64 and not np.shares_memory(out, W0)
        np.testing.assert_array_equal(out, 1.0)
    F0 = np.ones((2, 3, 2))
    for out in (local_gd(grad, F0, 0.1, 0), local_agd(grad, F0, 4.0, 1.0, 0)):
        assert not np.shares_memory(out, F0)
    # one AGD step from u^0 = w^0: u^1 = w^0 - grad/L, w^1 = u^1 + beta (u^1 - u^0), beta = (2 - 1)/(2 + 1)
    u1 = 1.0 - 2.0 / 4.0
    np.testing.assert_allclose(local_agd(grad, W0, 4, 1, 1), u1 + (u1 - 1.0) / 3.0, rtol=1e-15)


def test_masks_subsets_and_realised_time_edges(unit):
    full = cohort_masks(RunStreams(0, 3), 4, 4)
    assert full.dtype == bool and full.all()
    assert cohort_masks(RunStreams(0, 3), 4, 2).dtype == bool
    two = _Scale(unit, Ne=1, c=[0.5, 0.6])
    assert two.subset(np.array([0, 1])).runs_required == 2 and two.subset(np.array([1])).runs_required == 1
    done = run_batched(_Scale(unit, Ne=1, c=0.5), K=5, tol=100.0)  # reached at k = 0: nothing spent
    np.testing.assert_array_equal(done.realised_time(), [0.0])
    np.testing.assert_array_equal(done.paper_time(_Scale(unit, Ne=1, c=0.5)), [0.0])


class _Drawn(_Scale):
    """The toy with a random start: m_0 = one standard normal vector per run, from its init stream."""

    def init_state(self, runs, streams):
        return {"m": streams.normal((self.problem.n,)), "seen": np.zeros((runs, self.problem.N))}


class _Bounce(_Scale):
    """Run r's model is 1e20 (1, ..., 1) at k = 1 if bounce_r, else c^k (1, ..., 1)."""

    def init_state(self, runs, streams):
        return {**super().init_state(runs, streams), "k": np.zeros((runs, 1))}

    def step(self, state, active, streams):
        new, evals = super().step(state, active, streams)
        k = state["k"] + 1
        jump = (self.params["bounce"][:, None] > 0) & (k == 1)
        m = np.where(jump, 1e20, self.params["c"] ** k * np.ones_like(new["m"]))
        return {**new, "m": m, "k": k}, evals


def test_init_draws_come_from_the_init_stream_of_each_run(unit):
    run = run_batched(_Drawn(unit, Ne=1, c=0.5), K=0, runs=3, seed=4, stream_ids=[1, 1, 0])
    init_ss = np.random.SeedSequence(4).spawn(3)[0]
    kids = init_ss.spawn(2)
    ref = np.stack([np.random.default_rng(kids[i]).standard_normal(2) for i in (1, 1, 0)])
    np.testing.assert_array_equal(run.final_state["m"], ref)


def test_divergence_flags_stay_and_the_threshold_is_strict(unit):
    run = run_batched(_Bounce(unit, Ne=1, c=0.5, bounce=[1.0, 0.0]), K=4, tol=0.0)
    assert run.grad_sq[0, 1] > DIVERGED and run.grad_sq[0, 2] < 2.0  # back below after one iteration
    np.testing.assert_array_equal(run.diverged, [True, False])  # a diverged run stays diverged
    one = QuadraticProblem(np.ones((1, 1, 1)), np.zeros((1, 1)))  # grad_sq = m^2
    at = run_batched(_Scale(one, Ne=1, c=1e15), K=1, tol=0.0)
    assert at.grad_sq[0, 1] == DIVERGED and not at.diverged[0]  # 1e30 itself is not beyond
    above = run_batched(_Scale(one, Ne=1, c=1.0000001e15), K=1, tol=0.0)
    assert above.diverged[0]


def test_overflow_in_the_loop_is_silent_and_counters_are_integers(unit):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = run_batched(_Scale(unit, Ne=1, c=[1e200, 0.5]), K=3, tol=0.0)
    assert run.diverged[0] and not run.diverged[1]
    for name in ("grad_evals", "comms", "active_count", "iterations_to_tol"):
        assert getattr(run, name).dtype == np.int64, name


class _Start(_ScaleP):
    """The toy from m_0 = m0_r (1, ..., 1), drawing one uniform per iteration from its solver stream."""

    def init_state(self, runs, streams):
        m0 = np.broadcast_to(self.params["m0"], (runs,))[:, None]
        return {"m": m0 * np.ones((runs, self.problem.n)), "seen": np.zeros((runs, self.problem.N)),
                "u": np.zeros((runs, 0))}

    def step(self, state, active, streams):
        new, evals = super().step(state, active, streams)
        return {**new, "u": np.concatenate([state["u"], streams.uniform((1,))], axis=1)}, evals


def test_drop_finished_drops_a_run_done_at_k0_and_keeps_the_others_streams(unit):
    algo = _Start(unit, Ne=1, c=0.5, m0=[0.01, 1.0])  # grad_sq(0) = 18 m0^2: run 0 is done at k = 0
    kw = dict(K=6, tol=1e-2, participation=("cohort", 2), stop_when_done=False, seed=2)
    dropped = run_batched(algo, drop_finished=True, **kw)
    kept = run_batched(algo, **kw)
    np.testing.assert_array_equal(dropped.iterations_to_tol, [0, 6])
    assert np.all(np.isnan(dropped.grad_sq[0, 1:])) and not np.any(np.isnan(kept.grad_sq[0]))
    np.testing.assert_array_equal(dropped.active_count[0], 0)
    # run 1 draws the same cohorts and solver numbers with or without run 0 beside it
    np.testing.assert_array_equal(dropped.final_state["seen"][-1], kept.final_state["seen"][1])
    np.testing.assert_array_equal(dropped.final_state["u"][-1], kept.final_state["u"][1])
    np.testing.assert_array_equal(dropped.grad_sq[1], kept.grad_sq[1])


def test_fallback_shape_feature_cache_and_float_parameters(unit):
    p = random_quadratic(N=3, n=2, lam=0.5, lam_bar=2.0, rng=np.random.default_rng(0))
    X = np.random.default_rng(5).standard_normal((2, 4, 3, 2))
    G = stacked_grad(p, X)
    assert G.shape == X.shape
    np.testing.assert_allclose(G[1, 2], p.grad(X[1, 2]), rtol=0, atol=ROUNDOFF)
    lp = logistic_v2(True, 1, N=4, q=6)  # a fresh problem: the transposed features are made once
    stacked_grad(lp, np.zeros((2, lp.N, lp.n)))
    first = lp._stacked_signed_features
    np.testing.assert_array_equal(first, lp._signed_t.transpose(0, 2, 1))
    stacked_grad(lp, np.ones((3, lp.N, lp.n)))
    assert lp._stacked_signed_features is first
    algo = _Scale(unit, Ne=1, c=[1, 2], d=3)
    assert algo.params["c"].dtype == np.float64 and algo.params["d"].dtype == np.float64


def test_overflow_of_the_initial_metric_is_silent(unit):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = run_batched(_Start(unit, Ne=1, c=0.5, m0=[1e200, 1.0]), K=1, tol=0.0, stop_when_done=False)
    assert run.grad_sq[0, 0] == np.inf and run.diverged[0] and not run.diverged[1]
