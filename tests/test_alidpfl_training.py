"""DPFL / ALI-DPFL training on a tiny synthetic configuration: stopping rule, resumption."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, setting, training


@pytest.fixture(scope="module")
def tiny_data():
    rng = np.random.default_rng(0)
    tr_y = np.repeat(np.arange(10), 40)
    tr_x = rng.integers(0, 256, (400, 28, 28), dtype=np.uint8)
    te_y = rng.integers(0, 10, 60)
    te_x = rng.integers(0, 256, (60, 28, 28), dtype=np.uint8)
    s = setting.FederatedSetting(n_clients=2, n_shards=20, shards_per_client=10)
    return setting.build_clients(s, np.random.default_rng(1), arrays=(tr_x, tr_y, te_x, te_y))


def _plan(**kw):
    base = dict(budgets=budget.Budgets(2.0, 5, 7), tau=2, q=0.1, eval_rounds=(1, 3),
                curve_every=1, curve_size=30, estimate_samples=16, checkpoint_every=2)
    base.update(kw)
    return training.RunPlan(**base)


def test_fixed_tau_stops_before_exceeding_the_privacy_budget(tiny_data):
    torch.set_num_threads(1)
    out = training.train(_plan(), tiny_data)
    assert (out["rounds"], out["iterations"]) == budget.fixed_tau_stop(budget.Budgets(2.0, 5, 7), 2) == (3, 6)
    assert out["taus"].tolist() == [2, 2, 2]
    assert out["eval_rounds"].tolist() == [1, 3]
    assert out["eval_accuracy"][-1] == out["final_accuracy"]
    assert out["unaccounted_gradients"] == 0


def test_ali_dpfl_tau_at_most_doubles_and_counts_unaccounted_gradients(tiny_data):
    out = training.train(_plan(tau=None, budgets=budget.Budgets(2.0, 3, 12)), tiny_data)
    taus = out["taus"]
    assert taus[0] == 1 and np.all(taus[1:] <= 2 * taus[:-1])
    assert out["iterations"] == taus.sum() <= 12 and out["rounds"] <= 3
    assert out["unaccounted_gradients"] == 2 * 16 * 2 * out["rounds"]  # 2 gradients × 16 records × 2 clients
    assert len(out["constants"]["rho"]) == out["rounds"]


def test_equal_clients_make_the_weighting_irrelevant(tiny_data):
    a = training.train(_plan(budgets=budget.Budgets(2.0, 1, 2)), tiny_data)
    b = training.train(_plan(budgets=budget.Budgets(2.0, 1, 2), aggregation="unweighted"), tiny_data)
    # equal client sizes: weighted and unweighted averages agree
    assert a["final_loss"] == pytest.approx(b["final_loss"], rel=1e-6)


def test_killed_run_resumes_with_identical_results(tiny_data, tmp_path):
    plan = _plan(tau=None, budgets=budget.Budgets(2.0, 5, 12))
    whole = training.train(plan, tiny_data)
    part = training.train(plan, tiny_data, checkpoint_dir=tmp_path, stop_after_rounds=3)
    assert part is None
    assert (tmp_path / training.CHECKPOINT_NAME).is_file()
    resumed = training.train(plan, tiny_data, checkpoint_dir=tmp_path)
    assert whole.keys() == resumed.keys()
    for key, value in whole.items():
        if isinstance(value, dict):
            for k in value:
                np.testing.assert_array_equal(value[k], resumed[key][k])
        else:
            np.testing.assert_array_equal(value, resumed[key])


def test_bad_plans_name_the_parameter():
    with pytest.raises(ValueError, match="tau"):
        _plan(tau=0)
    with pytest.raises(ValueError, match="aggregation"):
        _plan(aggregation="median")
    with pytest.raises(ValueError, match="rule"):
        _plan(rule="oracle")
