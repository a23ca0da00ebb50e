"""ALI-DPFL library: the federated setting, the budgets and the τ* rule."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from fedrepro.alidpfl import budget, setting, tau_rule
from fedrepro.data.errors import MissingDataError

needs_fashion_mnist = pytest.mark.skipif(
    not os.environ.get("FEDREPRO_DATA_MIRROR")
    or not (Path(os.environ["FEDREPRO_DATA_MIRROR"]) / "fashion-mnist").is_dir(),
    reason="Fashion-MNIST mirror absent ($FEDREPRO_DATA_MIRROR)")


def _synthetic(n_train=4000, n_test=500, seed=0):
    rng = np.random.default_rng(seed)
    tr_y = np.repeat(np.arange(10), n_train // 10)
    rng.shuffle(tr_y)
    te_y = rng.integers(0, 10, n_test)
    tr_x = rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8)
    te_x = rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8)
    return tr_x, tr_y, te_x, te_y


# --------------------------------------------------------------------------- setting

def test_shards_per_client_must_divide_the_shards():
    with pytest.raises(ValueError, match="shards_per_client"):
        setting.FederatedSetting(shards_per_client=30)
    with pytest.raises(ValueError, match="shards_per_client"):
        setting.FederatedSetting(shards_per_client=80)  # 10 × 80 > 400
    setting.FederatedSetting(shards_per_client=4)


def test_bad_setting_values_name_the_parameter():
    for kw, name in [({"q": 0.0}, "q"), ({"sigma": -1.0}, "sigma"), ({"eta": 0}, "eta"),
                     ({"dataset": "svhn"}, "dataset"), ({"partition": "iid"}, "partition")]:
        with pytest.raises(ValueError, match=name):
            setting.FederatedSetting(**kw)


def test_shards_give_equal_clients_and_all_data():
    data = setting.build_clients(setting.FederatedSetting(), np.random.default_rng(0),
                                 arrays=_synthetic())
    assert data.sizes.tolist() == [400] * 10  # 4000 samples / 10 clients
    assert data.clients[0].x.shape == (400, 1, 28, 28) and data.clients[0].x.dtype == np.float32
    assert data.clients[0].x.min() >= -1.0 and data.clients[0].x.max() <= 1.0
    assert np.allclose(data.weights, 0.1)
    assert data.label_counts().sum() == 4000


def test_four_shards_give_at_most_four_labels():
    data = setting.build_clients(setting.FederatedSetting(shards_per_client=4),
                                 np.random.default_rng(1), arrays=_synthetic())
    counts = (data.label_counts() > 0).sum(axis=1)
    assert counts.max() <= 4 and data.sizes.tolist() == [40] * 10


def test_expected_labels_per_client_closed_form():
    # 10·(1 − C(360,40)/C(400,40)) computed independently with fractions of factorials
    miss = math.prod((360 - j) / (400 - j) for j in range(40))
    assert setting.expected_labels_per_client(400, 40) == pytest.approx(10 * (1 - miss), rel=1e-12)
    assert 9.87 < setting.expected_labels_per_client(400, 40) < 9.89
    # 4 shards: P(miss a label) = C(360,4)/C(400,4)
    miss4 = math.prod((360 - j) / (400 - j) for j in range(4))
    assert setting.expected_labels_per_client(400, 4) == pytest.approx(10 * (1 - miss4))


def test_dirichlet_reading_splits_train_and_test_per_client():
    tr_x, tr_y, te_x, te_y = _synthetic()
    s = setting.FederatedSetting(partition="dirichlet")
    data = setting.build_clients(s, np.random.default_rng(0), arrays=(tr_x, tr_y, te_x, te_y))
    total = data.sizes.sum() + len(data.test_y)
    assert total == 4500
    assert 0.24 < len(data.test_y) / total < 0.26
    assert len(set(data.sizes.tolist())) > 1  # unequal clients


def test_empty_client_is_rejected():
    empty = setting.ClientData(np.zeros((0, 1, 28, 28), np.float32), np.zeros(0, np.int64))
    full = setting.ClientData(np.zeros((3, 1, 28, 28), np.float32), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="client 1 has no data"):
        setting.FederatedData((full, empty), np.zeros((1, 1, 28, 28), np.float32), np.zeros(1, np.int64))


def test_missing_dataset_names_the_file_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDREPRO_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    with pytest.raises(MissingDataError) as err:
        setting.build_clients(setting.FederatedSetting(), np.random.default_rng(0))
    msg = str(err.value)
    assert "train-images-idx3-ubyte.gz" in msg and "FEDREPRO_DATA_MIRROR" in msg


@needs_fashion_mnist
def test_fashion_mnist_forty_shards_give_about_ten_labels():
    data = setting.build_clients(setting.FederatedSetting(), np.random.default_rng(0))
    assert data.sizes.tolist() == [6000] * 10 and len(data.test_y) == 10_000
    labels = (data.label_counts() > 0).sum(axis=1)
    assert labels.mean() >= 9.0  # the paper's "three or four" cannot hold


# --------------------------------------------------------------------------- budgets

def test_budgets_and_fixed_tau_stop():
    b = budget.make_budgets(1.75, 158, q=0.015, sigma=1.1, delta=1e-5)
    assert b.iterations == 177  # the accountant's bisection (reference notes §4)
    assert budget.fixed_tau_stop(b, 1) == (158, 158)  # R_s binds
    assert budget.fixed_tau_stop(b, 2) == (88, 176)   # ⌊177/2⌋ rounds: R_c binds
    assert budget.fixed_tau_stop(b, 5) == (35, 175)


def test_budgets_that_allow_no_step():
    with pytest.raises(ValueError, match=r"^epsilon=0.01 allows no step"):
        budget.make_budgets(0.01, 158, q=0.015, sigma=1.1, delta=1e-5)
    with pytest.raises(ValueError, match="rounds"):
        budget.make_budgets(2.0, 0, q=0.015, sigma=1.1, delta=1e-5)
    with pytest.raises(ValueError, match="tau"):
        budget.fixed_tau_stop(budget.Budgets(2.0, 10, 3), 4)


def test_counter_stops_before_a_round_would_exceed_a_budget():
    c = budget.BudgetCounter(budget.Budgets(2.0, 3, 7))
    for tau in (2, 3):
        assert c.allows(tau)
        c.spend(tau)
    assert not c.allows(3) and c.allows(2)  # 5 spent, 2 left
    c.spend(2)
    assert not c.allows(1)  # 3 rounds spent
    with pytest.raises(ValueError, match="tau"):
        c.allows(0)


# --------------------------------------------------------------------------- τ* rule

def test_h_vanishes_at_zero_and_one_and_matches_hand_value_at_two():
    xi, beta, eta, n = 0.2, 1.5, 0.5, 0.7
    h = tau_rule.gap_h(np.arange(3), xi, beta, eta, n)
    assert h[0] == 0 and abs(h[1]) < 1e-15
    # (ξ+N)/β((1+ηβ)² − 1) − 2η(ξ+N) = (ξ+N)η²β
    assert h[2] == pytest.approx((xi + n) * eta ** 2 * beta, rel=1e-12)
    assert tau_rule.noise_term(100, 1.1, 0.1, 90) == pytest.approx(2 * 10 * 0.11 / 90)


def _constants(rho=1e-3, beta=0.5, xi=0.1, lam=1.0, omega=1.0):
    return tau_rule.Constants(rho=rho, beta=beta, xi=xi, lam=lam, omega=omega)


def test_tau_one_when_communication_is_plentiful():
    # R_s,left ≥ R_c,left: T(τ) is the same for every τ and h(τ)/τ grows → τ* = 1
    tau, g = tau_rule.choose_tau(_constants(), tau_prev=8, eta=0.5, noise=0.1,
                                 iterations_done=0, rounds_left=200, iterations_left=100)
    assert tau == 1 and np.all(np.diff(g) > 0)


def test_tau_grows_when_rounds_are_scarce():
    # T(τ) = min(10τ, 100) grows until τ = 10; with a small penalty G is smallest there
    tau, g = tau_rule.choose_tau(_constants(), tau_prev=8, eta=0.5, noise=0.1,
                                 iterations_done=0, rounds_left=10, iterations_left=100)
    assert tau == 10 and len(g) == 16  # τ_m = min(2·8, 100)
    tau, g = tau_rule.choose_tau(_constants(), tau_prev=2, eta=0.5, noise=0.1,
                                 iterations_done=0, rounds_left=10, iterations_left=100)
    assert tau == 4 and len(g) == 4  # at most doubles


def test_no_feasible_tau_gives_one():
    # β > 2/η makes φ < 0: every denominator is negative
    tau, g = tau_rule.choose_tau(_constants(beta=5.0), tau_prev=4, eta=0.5, noise=0.1,
                                 iterations_done=0, rounds_left=10, iterations_left=100)
    assert tau == 1 and np.all(np.isinf(g))
    with pytest.raises(ValueError, match="tau_prev"):
        tau_rule.choose_tau(_constants(), tau_prev=0, eta=0.5, noise=0.1, iterations_done=0,
                            rounds_left=1, iterations_left=1)


def test_estimates_follow_section_IV_B():
    r1 = tau_rule.ClientReport(loss_local=1.0, loss_global=2.0, grad_local=np.array([1.0, 0.0]),
                               grad_global=np.array([3.0, 0.0]), distance=0.5)
    r2 = tau_rule.ClientReport(loss_local=1.5, loss_global=1.0, grad_local=np.array([0.0, 1.0]),
                               grad_global=np.array([0.0, 0.0]), distance=1.0)
    rho, beta, xi = tau_rule.estimate_constants([r1, r2], np.array([0.25, 0.75]))
    # ρ = .25·(1/.5) + .75·(.5/1); β = .25·(2/.5) + .75·(1/1); ∇F = (.75, 0)
    assert rho == pytest.approx(0.875)
    assert beta == pytest.approx(1.75)
    assert xi == pytest.approx(0.25 * 2.25 + 0.75 * 0.75)
    with pytest.raises(ValueError, match="weights"):
        tau_rule.estimate_constants([r1, r2], np.array([0.5, 0.6]))


def test_lambda_omega_rules():
    assert tau_rule.lambda_omega("loss", 0.8, 2.0) == (0.8, 0.25)
    assert tau_rule.lambda_omega("half-loss", 0.8, 2.0) == (0.4, 0.25)
    assert tau_rule.lambda_omega("fixed", 0.8, 2.0) == (0.5, 1.0)
    with pytest.raises(ValueError, match="rule"):
        tau_rule.lambda_omega("oracle", 0.8, 2.0)


def test_unaccounted_evaluations():
    out = tau_rule.unaccounted_evaluations(512, 2, 90.0)
    assert out == {"unaccounted": 1024.0, "accounted": 180.0, "ratio": 1024 / 180}
