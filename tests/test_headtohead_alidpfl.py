"""ALI-DPFL behind the head-to-head interface (``fedrepro.headtohead.alidpfl``): the estimate
report against a plain per-record loop, the step budget the accountant is calibrated for never
exceeded, τ starting at 1 and at most doubling, and the uplink counting the report.

Independent check: the report's loss and gradient are recomputed record by record in float64
from the definitions (cross-entropy of the softmax, outer-product gradient, the μ/2‖w‖²
regulariser), tolerance 1e-10 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.alidpfl import ALIDPFL, client_loss_and_gradient
from fedrepro.problems.softmax import softmax_problem


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(90, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=90)
    parts = [np.arange(0, 30), np.arange(30, 55), np.arange(55, 90)]
    return softmax_problem(images, labels, parts, mu=1e-3, test_images=images[:10], test_labels=labels[:10])


def test_the_report_agrees_with_a_plain_loop(problem):
    w = np.random.default_rng(1).normal(scale=0.05, size=(785, 10))
    loss, grad = client_loss_and_gradient(problem, w, 1)
    rows = problem.device_rows(1)
    A, y = problem.features[rows].astype(np.float64), problem.labels[rows]
    total_loss, total_grad = 0.0, np.zeros((785, 10))
    for j in range(A.shape[0]):
        z = A[j] @ w
        p = np.exp(z - z.max())
        p /= p.sum()
        total_loss -= np.log(p[y[j]])
        p[y[j]] -= 1.0
        total_grad += np.outer(A[j], p)
    n = A.shape[0]
    assert loss == pytest.approx(total_loss / n + 0.5e-3 * np.sum(w * w), rel=1e-10)
    np.testing.assert_allclose(grad, (total_grad / n + 1e-3 * w).reshape(-1), rtol=1e-10, atol=1e-13)


def test_a_run_keeps_every_client_within_the_step_budget(problem):
    a = ALIDPFL(lr=0.3, mean_steps=2, rate=0.5, clip=1.0)
    assert a.message_bits(problem.dim) == 32 * (3 * problem.dim + 3)
    budget = 6.5 * 2 * a.message_bits(problem.dim)  # 6 rounds of 2 of the 3 clients
    r = alg.run(problem, a, epsilon=3.0, delta=1e-5, uplink_budget_bits=budget, clients_per_round=2, seed=3)
    assert r["rounds"] == 6 and r["epsilon_spent"] == pytest.approx(3.0, rel=1e-6)
    # the run's own state is not returned: replay it through the interface on the same schedule
    schedule_ss, run_ss = np.random.SeedSequence(3).spawn(2)
    from fedrepro.headtohead import softmax as eng

    schedule = eng.participation_schedule(3, 2, 6, np.random.default_rng(schedule_ss))
    state = a.start(problem)
    a.prepare(state, schedule, r["noise_multiplier"])
    rng = np.random.default_rng(run_ss)
    for k in range(6):
        msgs = [a.client_message(problem, state, int(c), r["noise_multiplier"], rng)[0] for c in schedule[k]]
        a.aggregate(problem, state, schedule[k], np.stack(msgs))
    counts = np.bincount(schedule.ravel(), minlength=3)
    assert state["budget"] == counts.max() * 2
    assert np.all(state["steps"] <= state["budget"]) and state["steps"].sum() > 0
    taus = state["taus"]
    assert taus[0] == 1 and all(b <= 2 * t for t, b in zip(taus, taus[1:], strict=False))
    assert np.all(np.isfinite(a.model(state)))
    assert problem.accuracy(a.model(state)) == pytest.approx(r["test_accuracy"][-1])  # the replay is the run


def test_quick_alidpfl_cells_follow_the_protocol(results_dir):
    from fedrepro.chapters.headtohead import t1_alidpfl

    result = t1_alidpfl.load_t1_alidpfl("quick")
    cfg = t1_alidpfl.T1ALIConfig(profile="quick").protocol()
    assert {r["epsilon_target"] for r in result["records"]} == set(cfg.epsilons)
    for r in result["records"]:
        assert r["algorithm"] == "ali-dpfl" and r["uplink_bits"] <= r["uplink_budget_bits"]
        assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
    for t in result["tuning"]:
        scores = [c["validation_accuracy"] for c in t["candidates"]]
        assert int(t["selected"]) == scores.index(max(scores)) and len(scores) == cfg.grid_size


def test_alidpfl_grid_mirrors_dpfl():
    from fedrepro.chapters.headtohead import t1, t1_alidpfl

    dpfl = {(g.lr, g.clip, g.local_steps) for g in t1.GRIDS["dpfl"]}
    ali = {(g.lr, g.clip, g.mean_steps) for g in t1_alidpfl.GRID}
    assert ali == dpfl and len(t1_alidpfl.GRID) == 12


@pytest.mark.stored
def test_stored_alidpfl_within_budgets():
    from fedrepro.chapters.headtohead import t1_alidpfl
    from fedrepro.core.cache import read_only

    with read_only():
        result = t1_alidpfl.load_t1_alidpfl("paper")
    cfg = t1_alidpfl.T1ALIConfig().protocol()
    assert len(result["records"]) == len(cfg.epsilons) * len(cfg.seeds)
    for r in result["records"]:
        assert r["uplink_bits"] <= r["uplink_budget_bits"]
        assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
        assert r["message_bits"] == 32 * (3 * 7850 + 3)  # the update and the estimate report


@pytest.mark.stored
def test_stored_alidpfl_supports_the_pages_reading():
    from fedrepro.chapters.headtohead import t1, t1_alidpfl, t1_report
    from fedrepro.core.cache import read_only

    with read_only():
        result, ali = t1.load_t1("paper"), t1_alidpfl.load_t1_alidpfl("paper")
    s = t1_report.alidpfl_summary(result, ali, t1.T1Config().budget_bits)
    assert s["margin_high"] < 0  # below DPFL with a fixed tau at every epsilon
    assert s["rounds_ratio"] == pytest.approx(1 / 3, abs=0.01)  # the report triples the message
