"""Task T1's baselines (``fedrepro.headtohead.baselines``, run ``t1-baselines``, view
``fedrepro.chapters.headtohead.baselines``): the quick profile follows T1's protocol and gives
records with T1's fields; the ceilings are their private algorithm with clipping and noise off;
central DP-SGD's step and client-level DP-FedAvg's server step agree with plain loops written
from the equations on identical draws; every privacy plan is checked against an independent
computation; bad inputs are refused naming the parameter.

Independent checks and tolerances:

* the calibrated σ of each new plan is fed to dp-accounting's Rényi accountant called here
  directly: its ε is never below the PLD target (RDP is an upper bound: 1e-6 relative slack)
  and at most 30 % above it (the accountant page measures 8-28 % for T1's plans); and to
  dp-accounting's PLD accountant with a 10× coarser discretisation (pessimistic: never below
  the target, at most 0.02 above it);
* one Gaussian release (q = 1, one composition): the δ at the target ε from the exact formula
  of the Gaussian mechanism, δ(ε) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ), equals the target
  1e-5 within 1 % relative (the PLD's discretisation);
* the plain loops recompute every per-record gradient in float64 from its definition; the
  engine's logits are float32: tolerance 1e-5 absolute on the models after two steps.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from fedrepro.experiments.headtohead import t1_baselines as tb
from fedrepro.headtohead import accounting
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import baselines as base
from fedrepro.problems.softmax import softmax_problem

T1_FIELDS = {"task", "algorithm", "seed", "epsilon_target", "epsilon_spent", "epsilon_spent_rdp", "delta",
             "uplink_budget_bits", "uplink_bits", "downlink_bits", "message_bits", "rounds", "rounds_run",
             "participations", "noise_multiplier", "test_accuracy", "train_loss", "accuracy_curve", "eval_rounds",
             "sampled_records", "diverged", "config"}


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(120, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=120)
    parts = [np.arange(0, 30), np.arange(30, 55), np.arange(55, 90), np.arange(90, 120)]
    return softmax_problem(images, labels, parts, mu=1e-3, test_images=images[:40], test_labels=labels[:40])


# ----------------------------------------------------------------------------- plain loops

def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _grads(problem, x, rows):
    """Per-record gradients ã_j (p_j − e_j)ᵀ in float64, (m, 785, 10)."""
    a = problem.features[rows].astype(np.float64)
    r = _softmax(a @ x)
    r[np.arange(rows.size), problem.labels[rows]] -= 1.0
    return a[:, :, None] * r[:, None, :]


def _accuracy(problem, x):
    pred = np.argmax(problem.test_features.astype(np.float64) @ x, axis=1)
    return float(np.mean(pred == problem.test_labels))


def test_central_dpsgd_matches_a_plain_loop(problem):
    algo = base.CentralDPSGD(lr=0.7, clip=0.5, rate=0.5, epochs=1.0)  # T = 2 steps
    assert algo.steps == 2
    out = base.run_central(problem, algo, epsilon=4.0, delta=1e-5, uplink_budget_bits=1e6, clients_per_round=2,
                           seed=7, eval_rounds=2)
    sigma = out["noise_multiplier"]
    rng = np.random.default_rng(np.random.SeedSequence(7))
    n = problem.labels.size
    x = np.zeros((785, 10))
    accs, sampled = [], 0
    for _ in range(2):  # x ← x − η((Σ_j clip_C(g_j) + σC z)/(qn) + μx), j Poisson-sampled at q
        rows = np.flatnonzero(rng.random(n) < algo.rate)
        sampled += rows.size
        g = _grads(problem, x, rows)
        scale = np.minimum(1.0, algo.clip / np.sqrt((g ** 2).sum(axis=(1, 2))))
        total = (g * scale[:, None, None]).sum(axis=0) + sigma * algo.clip * rng.standard_normal((785, 10))
        x = x - algo.lr * (total / (algo.rate * n) + problem.mu * x)
        accs.append(_accuracy(problem, x))
    # tolerance: one test prediction in 40 may flip between float32 and float64 logits
    np.testing.assert_allclose(out["test_accuracy"], accs, atol=1 / 40 + 1e-12)
    assert out["sampled_records"] == sampled and out["rounds"] == 2 and out["uplink_bits"] == 0
    # the step itself on identical draws: the model to 1e-5
    data = base.pooled(problem)
    r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
    y = np.zeros((785, 10))
    z = np.zeros((785, 10))
    for _ in range(2):
        y, _ = algo.step(data, y, 1.3, r1)
        rows = np.flatnonzero(r2.random(n) < algo.rate)
        g = _grads(problem, z, rows)
        scale = np.minimum(1.0, algo.clip / np.sqrt((g ** 2).sum(axis=(1, 2))))
        total = (g * scale[:, None, None]).sum(axis=0) + 1.3 * algo.clip * r2.standard_normal((785, 10))
        z = z - algo.lr * (total / (algo.rate * n) + problem.mu * z)
    np.testing.assert_allclose(y, z, atol=1e-5)
    assert np.abs(y).max() > 1e-3  # the check is not vacuous


def _local_sgd(problem, x, client, steps, rate, lr, rng):
    rows_of = problem.device_rows(client)
    w = x.copy()
    for _ in range(steps):  # FedAvg's local step: the mean gradient over the realised batch
        rows = rows_of.start + np.flatnonzero(rng.random(rows_of.stop - rows_of.start) < rate)
        g = _grads(problem, w, rows).sum(axis=0) / max(rows.size, 1)
        w = w - lr * (g + problem.mu * w)
    return w


def test_client_level_dpfedavg_matches_a_plain_loop(problem):
    algo = base.DPFedAvgClient(lr=0.5, local_steps=2, rate=0.5, clip=0.2)
    bits = algo.message_bits(problem.dim)
    n_clients, m = problem.n_devices, 2
    budget = 2 * m * bits  # two rounds of m expected messages
    out = base.run_client_level(problem, algo, epsilon=8.0, delta=1e-5, uplink_budget_bits=budget,
                                clients_per_round=m, seed=11, eval_rounds=2)
    assert out["rounds"] == 2
    sigma, q = out["noise_multiplier"], m / n_clients
    sampling_ss, run_ss = np.random.SeedSequence(11).spawn(2)
    sampling, rng = np.random.default_rng(sampling_ss), np.random.default_rng(run_ss)
    x = np.zeros((785, 10))
    accs, sent = [], 0
    for _ in range(2):  # x ← x + (Σ_k clip_S(Δ_k) + σS z)/(qN), k Poisson-sampled at q
        clients = np.flatnonzero(sampling.random(n_clients) < q)
        sent += clients.size
        total = np.zeros((785, 10))
        for c in clients:
            u = _local_sgd(problem, x, int(c), algo.local_steps, algo.rate, algo.lr, rng) - x
            total += u * min(1.0, algo.clip / np.linalg.norm(u))
        x = x + (total + sigma * algo.clip * rng.standard_normal((785, 10))) / (q * n_clients)
        accs.append(_accuracy(problem, x))
    np.testing.assert_allclose(out["test_accuracy"], accs, atol=1 / 40 + 1e-12)
    assert out["uplink_bits"] == sent * bits
    # the server step alone on identical draws
    updates = np.random.default_rng(5).standard_normal((3, 785, 10))
    clipped = np.stack([base.clip_update(u, 0.2) for u in updates])
    assert np.allclose(np.linalg.norm(clipped.reshape(3, -1), axis=1), 0.2)
    x0 = np.random.default_rng(6).standard_normal((785, 10))
    got = base.server_step(x0, clipped, clip=0.2, noise_multiplier=1.7, expected_clients=2.5,
                           rng=np.random.default_rng(9))
    want = x0 + (clipped.sum(axis=0) + 1.7 * 0.2 * np.random.default_rng(9).standard_normal((785, 10))) / 2.5
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    empty = base.server_step(x0, np.zeros((0, 785, 10)), clip=0.2, noise_multiplier=0.0, expected_clients=2.5,
                             rng=np.random.default_rng(9))
    np.testing.assert_array_equal(empty, x0)


# ----------------------------------------------------------------------------- ceilings

def test_each_ceiling_is_its_algorithm_with_clipping_and_noise_off(problem):
    x = np.random.default_rng(1).standard_normal((785, 10)) * 0.01
    huge = 1e12  # a clipping norm no gradient reaches
    state = {"x": x}
    pairs = [(alg.DPFL(lr=0.4, local_steps=1, rate=0.5, clip=huge), base.DPFLCeiling(lr=0.4, local_steps=1, rate=0.5)),
             (alg.PrivateFedPAQ(lr=0.4, local_steps=3, rate=0.5, clip=huge),
              base.FedPAQCeiling(lr=0.4, local_steps=3, rate=0.5))]
    for private, ceiling in pairs:
        a, sa = private.client_message(problem, state, 1, 0.0, np.random.default_rng(4))
        b, sb = ceiling.client_message(problem, state, 1, 0.0, np.random.default_rng(4))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
        assert sa == sb and np.abs(b).max() > 0
        assert ceiling.privacy_plan(3) is None and ceiling.message_bits(7850) == private.message_bits(7850)
    p, c = alg.FedPLT(lr=0.2, rho=2.0, local_steps=3, clip=huge), base.FedPLTCeiling(lr=0.2, rho=2.0, local_steps=3)
    sp, sc = p.start(problem), c.start(problem)
    for s in (sp, sc):
        s["y"] = x
    mp, _ = p.client_message(problem, sp, 2, 0.0, np.random.default_rng(0))
    mc, _ = c.client_message(problem, sc, 2, 0.0, np.random.default_rng(0))
    np.testing.assert_allclose(mp, mc, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sp["x_local"][2], sc["x_local"][2], rtol=1e-12, atol=1e-15)


def test_ceiling_grids_drop_only_the_privacy_axis():
    from fedrepro.experiments.headtohead import t1

    for name, grid in tb.BASELINES.items():
        assert len(grid) == 12 and len(set(grid)) == 12, name
    for a in ("dp-fedsgd", "dpfl", "fedpaq"):  # the clipping axis replaced by a finer step axis
        private, ceiling = t1.GRIDS[a], tb.CEILING_GRIDS[f"{a}-ceiling"]
        assert {g.lr for g in private} < {g.lr for g in ceiling}
        keep = [f for f in ("rate", "local_steps") if len({getattr(g, f) for g in private}) > 1]
        assert {tuple(getattr(g, f) for f in keep) for g in private} == {
            tuple(getattr(g, f) for f in keep) for g in ceiling}
    assert {(g.lr, g.local_steps, g.levels) for g in t1.GRIDS["fedpaq-q"]} == {
        (g.lr, g.local_steps, g.levels) for g in tb.CEILING_GRIDS["fedpaq-q-ceiling"]}
    assert {(g.lr, g.rho, g.local_steps) for g in t1.GRIDS["fed-plt"]} == {
        (g.lr, g.rho, g.local_steps) for g in tb.CEILING_GRIDS["fed-plt-ceiling"]}


# ----------------------------------------------------------------------------- accounting

def _rdp_epsilon(q, sigma, compositions, delta):
    import dp_accounting

    event = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(event, compositions))
    return acc.get_epsilon(delta)


def _pld_epsilon_coarse(q, sigma, compositions, delta):
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    event = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(dp_accounting.SelfComposedDpEvent(event, compositions))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize(("kind", "epsilon"), [("central", 1.0), ("central", 8.0), ("client", 2.0)])
def test_new_plans_agree_with_independent_accountants(kind, epsilon):
    if kind == "central":  # T1's main cell: 10 epochs at q = 0.02 (T = 500 steps)
        algo = base.CentralDPSGD(rate=0.02, epochs=10.0)
        plan = algo.privacy_plan()
        assert plan == accounting.PrivacyPlan(0.02, 500)
    else:  # client level at T1's main budget: q = 10/100, R = 4e8 / (10 · 32 · 7850) rounds
        algo = base.DPFedAvgClient()
        rounds = math.floor(4e8 / (10 * algo.message_bits(7850)))
        plan = algo.privacy_plan(rounds, 0.1)
        assert plan == accounting.PrivacyPlan(0.1, 159)
    sigma = accounting.calibrate(plan, epsilon, 1e-5)
    rdp = _rdp_epsilon(plan.sampling_rate, sigma, plan.compositions, 1e-5)
    assert epsilon * (1 - 1e-6) <= rdp <= 1.3 * epsilon
    coarse = _pld_epsilon_coarse(plan.sampling_rate, sigma, plan.compositions, 1e-5)
    assert epsilon - 1e-6 <= coarse <= epsilon + 0.02


def test_one_gaussian_release_matches_the_exact_formula():
    plan = accounting.PrivacyPlan(1.0, 1)  # one round of client-level DP-FedAvg with every client
    for eps in (0.5, 2.0):
        sigma = accounting.calibrate(plan, eps, 1e-5)
        delta = norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(-0.5 / sigma - eps * sigma)
        assert delta == pytest.approx(1e-5, rel=0.01)


def test_drivers_calibrate_each_run_exactly(problem):
    c = base.run_central(problem, base.CentralDPSGD(rate=0.5, epochs=2.0), epsilon=2.0, delta=1e-5,
                         uplink_budget_bits=1.0, clients_per_round=1, seed=0, eval_rounds=1)
    assert c["epsilon_spent"] == pytest.approx(2.0, rel=1e-6) and c["epsilon_spent_rdp"] >= 2.0 * (1 - 1e-6)
    assert c["participations"] == c["rounds"] == 4
    algo = base.DPFedAvgClient(local_steps=1)
    d = base.run_client_level(problem, algo, epsilon=3.0, delta=1e-5, uplink_budget_bits=5 * 2 * algo.message_bits(7850),
                              clients_per_round=2, seed=0, eval_rounds=1)
    assert d["rounds"] == 5 and d["epsilon_spent"] == pytest.approx(3.0, rel=1e-6)
    assert d["noise_multiplier"] == pytest.approx(accounting.calibrate(accounting.PrivacyPlan(0.5, 5), 3.0, 1e-5))


# ----------------------------------------------------------------------------- bad inputs

def test_bad_inputs_name_the_parameter(problem):
    cases = [(lambda: base.CentralDPSGD(lr=-1.0), "lr"), (lambda: base.CentralDPSGD(clip=0.0), "clip"),
             (lambda: base.CentralDPSGD(rate=0.0), "rate"), (lambda: base.CentralDPSGD(epochs=0.0), "epochs"),
             (lambda: base.CentralDPSGD(rate=0.5, epochs=0.1), "epochs"),
             (lambda: base.DPFedAvgClient(clip=-1.0), "clip"), (lambda: base.DPFedAvgClient(local_steps=0), "local_steps"),
             (lambda: base.DPFLCeiling(rate=1.5), "rate"), (lambda: base.FedPAQCeiling(levels=0), "levels"),
             (lambda: base.FedPLTCeiling(rho=0.0), "rho"), (lambda: base.clip_update(np.ones(3), 0.0), "clip"),
             (lambda: base.server_step(np.zeros((785, 10)), np.zeros((0, 785, 10)), clip=1.0, noise_multiplier=1.0,
                                       expected_clients=0.0, rng=np.random.default_rng(0)), "expected_clients"),
             (lambda: base.server_step(np.zeros((785, 10)), np.zeros((0, 785, 10)), clip=1.0, noise_multiplier=-1.0,
                                       expected_clients=1.0, rng=np.random.default_rng(0)), "noise_multiplier"),
             (lambda: base.run_central(problem, base.CentralDPSGD(), epsilon=0.0, delta=1e-5, uplink_budget_bits=1.0,
                                       clients_per_round=1, seed=0), "epsilon"),
             (lambda: base.run_central(problem, base.CentralDPSGD(), epsilon=1.0, delta=1.5, uplink_budget_bits=1.0,
                                       clients_per_round=1, seed=0), "delta"),
             (lambda: base.run_client_level(problem, base.DPFedAvgClient(), epsilon=1.0, delta=1e-5,
                                            uplink_budget_bits=1e9, clients_per_round=9, seed=0), "clients_per_round"),
             (lambda: base.run_client_level(problem, base.DPFedAvgClient(), epsilon=1.0, delta=1e-5,
                                            uplink_budget_bits=10.0, clients_per_round=1, seed=0), "budget"),
             (lambda: base.CentralDPSGD().step(problem, np.zeros((785, 10)), 1.0, np.random.default_rng(0)), "pooled"),
             (lambda: tb.grid_of(tb.T1BaselinesConfig(), "sgd"), "name"),
             (lambda: tb.runner_of("sgd"), "name"),
             (lambda: tb.T1BaselinesConfig(profile="full"), "profile")]
    for make, word in cases:
        with pytest.raises(ValueError, match=word):
            make()
    with pytest.raises(TypeError, match="CentralDPSGD"):
        base.run_central(problem, base.DPFedAvgClient(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1.0,
                         clients_per_round=1, seed=0)
    with pytest.raises(TypeError, match="DPFedAvgClient"):
        base.run_client_level(problem, base.CentralDPSGD(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1.0,
                              clients_per_round=1, seed=0)


# ----------------------------------------------------------------------------- the protocol

def test_units_put_the_ceilings_first_and_cheap_units_at_both_ends():
    cfg = tb.T1BaselinesConfig()
    units = tb._units(cfg)
    assert len(units) == len(set(units)) == 5 * 4 + 2 * 5
    assert units[0] == "dp-fedsgd-ceiling_eps-none_bits-5e+07" and units[-1] == "central-dpsgd_eps-8_bits-4e+08"
    assert all("ceiling" in u for u in units[:20])


def _check(result, protocol):
    recs = result["records"]
    assert recs and all(set(r) == T1_FIELDS for r in recs)  # exactly T1's fields
    for r in recs:
        assert r["delta"] == protocol.delta
        if r["algorithm"].endswith("-ceiling"):
            assert math.isinf(r["epsilon_target"]) and r["noise_multiplier"] == 0
            assert r["uplink_bits"] <= r["uplink_budget_bits"]
        else:
            assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
            assert r["epsilon_spent_rdp"] >= r["epsilon_target"] * (1 - 1e-6)
            assert r["uplink_budget_bits"] == protocol.budget_bits
        if r["algorithm"] == "central-dpsgd":
            assert r["uplink_bits"] == 0 and r["rounds"] == round(tb.CENTRAL_EPOCHS / r["config"]["rate"])
        if r["algorithm"] == "dp-fedavg-client":  # the budget binds in expectation: Poisson spread
            assert abs(r["uplink_bits"] / r["uplink_budget_bits"] - 1) < 0.5
    for t in result["tuning"]:
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf
                  for c in t["candidates"]]
        assert int(t["selected"]) == scores.index(max(scores)) and len(scores) == protocol.grid_size
    cells = {(r["algorithm"], r["epsilon_target"], r["uplink_budget_bits"]) for r in recs}
    assert len(cells) == len(tb._units(tb.T1BaselinesConfig(profile=protocol.profile)))
    assert len(recs) == len(cells) * len(protocol.seeds)


def test_quick_profile_follows_the_protocol_and_the_view_reads_it(results_dir):
    from fedrepro.chapters.headtohead import baselines as view

    cfg = tb.T1BaselinesConfig.for_profile("quick")
    _check(tb.load_t1_baselines("quick"), cfg.protocol())
    table = view.baselines_table("quick")
    assert list(table.index) == ["4"] and table.shape[1] == 10
    f = view.comparison_frame(*view.load("quick"), cfg.protocol().budget_bits)
    assert f["best_private"].iloc[0] in view.PRIVATE and bool(np.isfinite(f[["central", "client", "own_ceiling"]].to_numpy()).all())
    assert view.ceilings_table("quick").shape == (5, 3)
    fig = view.figure_accuracy_vs_epsilon("quick")
    assert len(fig.axes) == 1
    s = view.baselines_summary("quick")
    assert s["central_gap_smallest_epsilon"] == pytest.approx(100 * (f["central"] - f["private"]).iloc[0])
    assert s["ceiling_gap_largest_epsilon"] == pytest.approx(100 * (f["best_ceiling"] - f["private"]).iloc[-1])


@pytest.mark.stored
def test_stored_paper_result_follows_the_protocol():
    from fedrepro.core.cache import read_only

    with read_only():
        result = tb.load_t1_baselines("paper")
    _check(result, tb.T1BaselinesConfig().protocol())
