"""The head-to-head part's accountant and T1 engine (``fedrepro.headtohead``).

Independent checks:
* the calibrated noise, fed to Opacus's PRV accountant (another implementation of the same
  sampled-Gaussian composition), gives the target ε within Opacus's own error bound (``eps_error``
  0.01, tolerance 0.02 absolute); for plain Gaussian compositions the analytic Gaussian mechanism
  (Balle and Wang) at the composed noise σ/√k gives the target within 1e-3 relative;
* the client computations are recomputed by plain float64 loops over the records written from the
  equations (per-record outer-product gradient, clip, sum, noise, divisor), on the same random draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.headtohead import accounting as acc
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import softmax as eng
from fedrepro.problems.softmax import softmax_problem


# ------------------------------------------------------------------ accountant
@pytest.mark.parametrize("plan, target", [(acc.PrivacyPlan(0.05, 60), 1.0), (acc.PrivacyPlan(0.01, 400), 4.0)])
def test_calibration_is_exact_and_agrees_with_opacus_prv(plan, target):
    from opacus.accountants import PRVAccountant

    sigma = acc.calibrate(plan, target, 1e-5)
    assert acc.epsilon(plan, sigma, 1e-5) == pytest.approx(target, rel=1e-6)
    prv = PRVAccountant()
    prv.history = [(sigma, plan.sampling_rate, plan.compositions)]
    assert prv.get_epsilon(1e-5, eps_error=0.01) == pytest.approx(target, abs=0.02)
    assert acc.epsilon(plan, sigma, 1e-5, "rdp") >= target - 1e-3  # RDP is never tighter than PLD


@pytest.mark.parametrize("k, target", [(1, 2.0), (30, 4.0)])
def test_gaussian_plan_matches_the_analytic_gaussian_mechanism(k, target):
    from fedrepro.privacy.gaussian import analytic_gaussian_epsilon

    plan = acc.PrivacyPlan(1.0, k)
    sigma = acc.calibrate(plan, target, 1e-5)
    # k Gaussian releases of sensitivity 1 and noise sigma compose to one with noise sigma/sqrt(k)
    assert analytic_gaussian_epsilon(1e-5, 1.0, sigma / math.sqrt(k)) == pytest.approx(target, rel=1e-3)


def test_bad_plans_and_targets_are_refused():
    with pytest.raises(ValueError, match="sampling_rate"):
        acc.PrivacyPlan(0.0, 10)
    with pytest.raises(ValueError, match="compositions"):
        acc.PrivacyPlan(0.1, 0)
    with pytest.raises(ValueError, match="accountant"):
        acc.epsilon(acc.PrivacyPlan(0.1, 1), 1.0, 1e-5, "moments")
    with pytest.raises(ValueError, match="target_epsilon"):
        acc.calibrate(acc.PrivacyPlan(0.1, 1), -1.0, 1e-5)
    with pytest.raises(ValueError, match="out of reach"):
        acc.calibrate(acc.PrivacyPlan(1.0, 10), 1e-7, 1e-5)


# ------------------------------------------------------------------ engine
@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(60, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=60)
    return softmax_problem(images, labels, [np.arange(0, 25), np.arange(25, 60)], mu=1e-3,
                           test_images=images[:10], test_labels=labels[:10])


def _plain_dpsgd(problem, x, client, steps, rate, lr, clip, sigma, rng):
    rows = problem.device_rows(client)
    A = problem.features[rows].astype(np.float64)
    y = problem.labels[rows]
    n = A.shape[0]
    x = np.array(x, dtype=np.float64)
    for _ in range(steps):
        take = rng.random(n) < rate
        total = np.zeros_like(x)
        for j in np.flatnonzero(take):
            logits = A[j] @ x
            p = np.exp(logits - logits.max())
            p /= p.sum()
            p[y[j]] -= 1.0
            g = np.outer(A[j], p)
            total += g * min(1.0, clip / np.linalg.norm(g))
        total = (total + sigma * clip * rng.standard_normal(x.shape)) / (rate * n)
        x = x - lr * (total + problem.mu * x)
    return x


def test_dpsgd_steps_agree_with_a_plain_loop(problem):
    x0 = np.random.default_rng(1).normal(scale=0.01, size=(785, 10))
    got, sampled = eng.dpsgd_steps(problem, x0, 1, steps=3, rate=0.4, lr=0.3, clip=0.5, noise_multiplier=1.1,
                                   rng=np.random.default_rng(7))
    ref = _plain_dpsgd(problem, x0, 1, 3, 0.4, 0.3, 0.5, 1.1, np.random.default_rng(7))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7)  # float32 residuals against float64
    assert sampled > 0


def test_fedpaq_update_agrees_with_a_plain_loop_and_its_noise_scale(problem):
    x0 = np.zeros((785, 10))
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    got, _ = eng.fedpaq_update(problem, x0, 0, local_steps=2, rate=0.5, lr=0.2, clip=0.7, noise_multiplier=0.9,
                               levels=None, rng=rng_a)
    rows = problem.device_rows(0)
    A, y, n = problem.features[rows].astype(np.float64), problem.labels[rows], rows.stop - rows.start
    w = x0.copy()
    for _ in range(2):
        take = np.flatnonzero(rng_b.random(n) < 0.5)
        total = np.zeros_like(w)
        for j in take:
            logits = A[j] @ w
            p = np.exp(logits - logits.max())
            p /= p.sum()
            p[y[j]] -= 1.0
            g = np.outer(A[j], p)
            total += g * min(1.0, 0.7 / np.linalg.norm(g))
        w = w - 0.2 * (total / max(take.size, 1) + problem.mu * w)
    ref = w - x0 + 0.9 * (2 * 0.2 * 2 * 0.7) * rng_b.standard_normal(x0.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7)


def test_fedpaq_sensitivity_bounds_two_coupled_runs(problem):
    # neighbouring by substitution of a whole device's data is far more than one record; the
    # bound 2*eta*E*C holds for any two datasets with the same draws because each clipped mean has norm <= C
    x0 = np.zeros((785, 10))
    a, _ = eng.fedpaq_update(problem, x0, 0, local_steps=3, rate=0.5, lr=0.2, clip=0.7, noise_multiplier=0.0,
                             levels=None, rng=np.random.default_rng(5))
    b, _ = eng.fedpaq_update(problem, x0, 1, local_steps=3, rate=0.5, lr=0.2, clip=0.7, noise_multiplier=0.0,
                             levels=None, rng=np.random.default_rng(5))
    assert np.linalg.norm(a - b) <= eng.fedpaq_sensitivity(0.2, 3, 0.7) + 1e-12


def test_noise_without_clipping_is_refused(problem):
    with pytest.raises(ValueError, match="clipping"):
        eng.dpsgd_steps(problem, np.zeros((785, 10)), 0, steps=1, rate=0.5, lr=0.1, clip=None, noise_multiplier=1.0,
                        rng=np.random.default_rng(0))


@pytest.mark.parametrize("n, m", [(10, 3), (10, 5), (100, 10)])
def test_participation_schedule_draws_distinct_clients(n, m):
    s = eng.participation_schedule(n, m, 53, np.random.default_rng(0))
    assert s.shape == (53, m) and all(len(set(r)) == m for r in s) and s.min() >= 0 and s.max() < n
    if n % m == 0:  # balanced: every client sends floor or ceil of R*M/N messages
        counts = np.bincount(s.ravel(), minlength=n)
        assert counts.max() == -(-53 * m // n) and counts.min() >= 53 * m // n


# ------------------------------------------------------------------ a whole run
@pytest.mark.parametrize("algorithm, epsilon", [(alg.FedAvg(local_steps=2, rate=0.3), None),
                                                (alg.DPFL(local_steps=2, rate=0.3, clip=1.0), 2.0),
                                                (alg.PrivateFedPAQ(local_steps=2, rate=0.3, levels=4), 2.0)])
def test_run_respects_the_budget_and_spends_exactly_the_target(problem, algorithm, epsilon):
    budget = 7.5 * 2 * algorithm.message_bits(problem.dim)  # 7 whole rounds of 2 messages
    r = alg.run(problem, algorithm, epsilon=epsilon, delta=1e-5, uplink_budget_bits=budget, clients_per_round=2,
                seed=0, eval_rounds=3)
    assert r["rounds"] == 7 and r["uplink_bits"] <= budget
    assert r["participations"] == 7  # two clients, both in every round
    if epsilon is None:
        assert r["noise_multiplier"] == 0 and math.isinf(r["epsilon_spent"])
    else:
        assert r["epsilon_spent"] == pytest.approx(epsilon, rel=1e-6) and r["noise_multiplier"] > 0
    assert len(r["test_accuracy"]) == len(r["eval_rounds"]) == 3


def test_run_refuses_a_budget_below_one_round_and_a_mismatched_epsilon(problem):
    with pytest.raises(ValueError, match="does not pay for one round"):
        alg.run(problem, alg.FedAvg(), epsilon=None, delta=1e-5, uplink_budget_bits=100.0, clients_per_round=2, seed=0)
    with pytest.raises(ValueError, match="epsilon must be None"):
        alg.run(problem, alg.FedAvg(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1e7, clients_per_round=2, seed=0)


# ------------------------------------------------------------------ Fed-PLT (private)
def _plain_fedplt(problem, schedule, rounds, lr, rho, ne, clip, sigma, rng):
    """v2 Algorithm 1 (h = 0) written from the paper with eq. (13)'s noisy local GD, the data
    term a clipped per-record sum plus N(0, sigma^2 C^2 I) over n_i; one record at a time."""
    n_agents = problem.n_devices
    z = [np.zeros((785, 10)) for _ in range(n_agents)]
    xl = [np.zeros((785, 10)) for _ in range(n_agents)]
    y = np.zeros((785, 10))
    for k in range(rounds):
        new_z = {}
        for i in schedule[k]:
            rows = problem.device_rows(int(i))
            A = problem.features[rows].astype(np.float64)
            lab = problem.labels[rows]
            v = 2 * y - z[i]
            w = xl[i].copy()
            for _ in range(ne):
                total = np.zeros_like(w)
                for j in range(A.shape[0]):
                    logits = A[j] @ w
                    p = np.exp(logits - logits.max())
                    p /= p.sum()
                    p[lab[j]] -= 1.0
                    g = np.outer(A[j], p)
                    total += g * min(1.0, clip / np.linalg.norm(g))
                total += sigma * clip * rng.standard_normal(w.shape)
                w = w - lr * (total / A.shape[0] + problem.mu * w + (w - v) / rho)
            xl[i] = w
            new_z[int(i)] = z[i] + 2 * (w - y)
        for i, zi in new_z.items():
            z[i] = zi
        y = sum(z) / n_agents
    return y


@pytest.mark.parametrize("epsilon", [None, 3.0])
def test_private_fedplt_run_agrees_with_a_plain_loop_of_algorithm_1(problem, epsilon):
    a = alg.FedPLT(lr=0.2, rho=2.0, local_steps=2, clip=0.8)
    budget = 3.5 * a.message_bits(problem.dim)  # 3 rounds of one message
    if epsilon is None:  # the noiseless iteration: the run needs a private target, so call the engine's loop
        state = a.start(problem)
        for k, c in enumerate([0, 1, 0]):
            m, _ = a.client_message(problem, state, c, 0.0, np.random.default_rng(k))
            a.aggregate(problem, state, np.array([c]), m[None])
        ref = _plain_fedplt(problem, [[0], [1], [0]], 3, 0.2, 2.0, 2, 0.8, 0.0, np.random.default_rng(0))
        np.testing.assert_allclose(a.model(state), ref, rtol=1e-5, atol=1e-7)
        return
    r = alg.run(problem, a, epsilon=epsilon, delta=1e-5, uplink_budget_bits=budget, clients_per_round=1, seed=4,
                eval_rounds=1)
    # the same public schedule and noise stream as the run (SeedSequence(4) spawns schedule, run)
    schedule_ss, run_ss = np.random.SeedSequence(4).spawn(2)
    schedule = eng.participation_schedule(2, 1, 3, np.random.default_rng(schedule_ss))
    ref = _plain_fedplt(problem, schedule, 3, 0.2, 2.0, 2, 0.8, r["noise_multiplier"], np.random.default_rng(run_ss))
    assert r["rounds"] == 3 and r["epsilon_spent"] == pytest.approx(epsilon, rel=1e-6)
    # every message composes N_e = 2 Gaussian releases: the plan of the busiest client
    assert r["participations"] == int(np.bincount(schedule.ravel()).max())
    assert r["test_accuracy"][-1] == pytest.approx(problem.accuracy(ref))
    assert r["train_loss"][-1] == pytest.approx(problem.loss(ref), rel=1e-5)


def test_downlink_is_counted_apart_from_the_uplink(problem):
    a = alg.PrivateFedPAQ(local_steps=1, rate=0.5, levels=2)
    budget = 4.5 * 2 * a.message_bits(problem.dim)
    r = alg.run(problem, a, epsilon=2.0, delta=1e-5, uplink_budget_bits=budget, clients_per_round=2, seed=0)
    assert r["uplink_bits"] == pytest.approx(4 * 2 * a.message_bits(problem.dim))
    assert r["downlink_bits"] == 4 * 2 * 32 * problem.dim  # the float32 model to each participant
    assert r["uplink_bits"] < r["downlink_bits"]


def test_a_diverging_run_stops_and_says_so(problem):
    r = alg.run(problem, alg.FedAvg(lr=1e6, local_steps=3, rate=1.0), epsilon=None, delta=1e-5,
                uplink_budget_bits=20 * 2 * 32 * problem.dim, clients_per_round=2, seed=0, eval_rounds=20)
    assert r["diverged"] and r["rounds_run"] < r["rounds"]
    assert np.isnan(r["test_accuracy"][-1]) and r["uplink_bits"] == r["rounds_run"] * 2 * 32 * problem.dim


# ------------------------------------------------------------------ round semantics
@pytest.mark.parametrize("algorithm", [alg.FedAvg(local_steps=2, rate=0.5), alg.DPFL(local_steps=3, rate=0.5),
                                       alg.PrivateFedPAQ(local_steps=2, rate=0.5, levels=None)])
def test_a_round_starts_every_client_from_the_global_model(problem, algorithm):
    """A client's training never writes into the global model, and a round equals the
    n_i-weighted mean of updates each computed from the global model alone (so the order of
    the clients changes the aggregate only by rounding)."""
    state = algorithm.start(problem)
    state["x"] = np.random.default_rng(2).normal(scale=0.01, size=(785, 10))
    x0 = state["x"].copy()
    m0, _ = algorithm.client_message(problem, state, 0, 0.5, np.random.default_rng(10))
    assert np.array_equal(state["x"], x0)  # the global model is untouched by local training
    m1, _ = algorithm.client_message(problem, state, 1, 0.5, np.random.default_rng(11))
    # client 1's update is the same whether or not client 0 trained first
    alone, _ = algorithm.client_message(problem, algorithm.start(problem) | {"x": x0.copy()}, 1, 0.5,
                                        np.random.default_rng(11))
    np.testing.assert_array_equal(m1, alone)
    forward = {"x": x0.copy()}
    algorithm.aggregate(problem, forward, np.array([0, 1]), np.stack([m0, m1]))
    backward = {"x": x0.copy()}
    algorithm.aggregate(problem, backward, np.array([1, 0]), np.stack([m1, m0]))
    n = problem.sizes.astype(float)
    np.testing.assert_allclose(forward["x"], x0 + (n[0] * m0 + n[1] * m1) / n.sum(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(forward["x"], backward["x"], rtol=1e-12, atol=1e-15)
