"""Task T2's baselines (``fedrepro.headtohead.cnn_baselines``, run ``t2-baselines``, view
``fedrepro.chapters.headtohead.t2_baselines``): central DP-SGD's step and client-level DP-FedAvg's
rounds on the CNN agree with plain loops written here from the equations on identical draws;
each ceiling is its private algorithm with the clipping norm at infinity and σ = 0 on the same
draws; the quick profile follows T2's protocol (records with T2's fields, every ε spent equal
to its target, budgets kept) and recomputes to the same values; the view renders T1's table
shape from it; bad inputs are refused naming the parameter.

Independent checks and tolerances:

* the plain loops run the test's own float64 CNN (``tests/independent/cnn_reference.py``'s
  module, loaded with the same initial weights) and take each per-record gradient by a loop over
  the records with ``torch.autograd.grad``; the library computes in float32 with its vectorised
  per-sample path: the models differ by at most 1e-4 of the distance they travelled (a wrong
  divisor, noise scale or clipping moves them by order 1);
* the server step against a numpy loop on the same normals: 1e-12 relative (the same float64
  arithmetic in another order);
* ceiling against algorithm with C = 1e12 and σ = 0: the plain gradient sum against the
  per-sample clipped path in float32, 1e-4 of the distance travelled.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from torch.func import functional_call
from torch.nn import functional as F

from fedrepro.experiments.headtohead import t2_baselines as tb
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import baselines as t1base
from fedrepro.headtohead import cnn
from fedrepro.headtohead import cnn_algorithms as ca
from fedrepro.headtohead import cnn_baselines as cb
from tests.independent import cnn_reference as ref

T2_FIELDS = {"task", "algorithm", "seed", "epsilon_target", "epsilon_spent", "epsilon_spent_rdp", "delta",
             "uplink_budget_bits", "uplink_bits", "downlink_bits", "message_bits", "rounds", "rounds_run",
             "participations", "noise_multiplier", "test_accuracy", "test_loss", "accuracy_curve", "eval_rounds",
             "sampled_records", "diverged", "config"}
HUGE = 1e12  # a clipping norm no gradient reaches


def tiny_problem(seed: int = 11, init_seed: int = 5, smallest: int = 12) -> cnn.CNNProblem:
    """Three clients of ``smallest``, +2, +4 random records and 20 evaluation records on the CNN."""
    rng = np.random.default_rng(seed)
    clients = []
    for i in range(3):
        n = smallest + 2 * i
        clients.append((rng.uniform(-1, 1, size=(n, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, size=n)))
    ex = rng.uniform(-1, 1, size=(20, 1, 28, 28)).astype(np.float32)
    return cnn.CNNProblem(clients, ex, rng.integers(0, 10, size=20), init_seed=init_seed)


@pytest.fixture(scope="module")
def problem() -> cnn.CNNProblem:
    return tiny_problem()


@pytest.fixture(scope="module")
def reference() -> ref.Reference:
    return ref.Reference()


def _record_gradients(reference: ref.Reference, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(b, d): each record's cross-entropy gradient at w, one record at a time (autograd)."""
    out = []
    for j in range(len(y)):
        params = {k: v.requires_grad_(True) for k, v in reference.unflatten(w).items()}
        logits = functional_call(reference.net, params, (torch.from_numpy(x[j:j + 1].astype(np.float64)),))
        loss = F.cross_entropy(logits, torch.from_numpy(np.asarray(y[j:j + 1], dtype=np.int64)))
        grads = torch.autograd.grad(loss, list(params.values()))
        out.append(torch.cat([g.reshape(-1) for g in grads]).numpy())
    return np.stack(out) if out else np.zeros((0, w.size))


def _data(problem, client):
    return problem.xs[client].numpy(), problem.ys[client].numpy()


def _close(ours, theirs, start):
    travelled = np.linalg.norm(theirs - start)
    assert travelled > 1e-3  # not vacuous
    assert np.linalg.norm(ours - theirs) <= 1e-4 * travelled  # tolerance: module docstring


# ----------------------------------------------------------------------------- central DP-SGD

def test_central_dpsgd_step_matches_a_plain_loop(problem, reference):
    algo = cb.CentralDPSGDCNN(lr=0.5, clip=0.3, rate=0.3, epochs=0.6)  # T = 2 steps
    assert algo.steps == 2
    data = cb.pooled(problem)
    assert data.n_devices == 1 and data.sizes[0] == problem.sizes.sum()
    np.testing.assert_array_equal(data.initial_model(), problem.initial_model())
    x_all = np.concatenate([problem.xs[i].numpy() for i in range(3)])
    y_all = np.concatenate([problem.ys[i].numpy() for i in range(3)])
    np.testing.assert_array_equal(data.xs[0].numpy(), x_all)
    x0 = problem.initial_model()
    ours = x0
    r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
    w, n, sigma = x0.copy(), len(y_all), 1.3
    sampled = 0
    for _ in range(2):
        ours, s = algo.step(data, ours, sigma, r1)
        sampled += s
        # x ← x − η (Σ_j min(1, C/‖g_j‖) g_j + σ C z) / (q n), j Poisson-sampled at q
        rows = np.flatnonzero(r2.random(n) < algo.rate)
        g = _record_gradients(reference, w, x_all[rows], y_all[rows])
        scale = np.minimum(1.0, algo.clip / np.linalg.norm(g, axis=1))
        total = (g * scale[:, None]).sum(axis=0) + sigma * algo.clip * r2.standard_normal(w.size)
        w = w - algo.lr * total / (algo.rate * n)
        assert s == rows.size
    assert sampled > 0
    _close(ours, w, x0)
    # the driver: T steps, exact calibration, nothing sent
    out = cb.run_central(problem, algo, epsilon=2.0, delta=1e-5, uplink_budget_bits=1.0, clients_per_round=1,
                         seed=0, eval_rounds=2)
    assert out["rounds"] == out["rounds_run"] == out["participations"] == 2 and out["uplink_bits"] == 0
    rng, z = np.random.default_rng(np.random.SeedSequence(0)), x0  # the driver runs the checked step T times
    for _ in range(2):
        z, _ = algo.step(data, z, out["noise_multiplier"], rng)
    assert out["train_loss"][-1] == problem.loss(z) and out["test_accuracy"][-1] == problem.accuracy(z)
    assert out["epsilon_spent"] == pytest.approx(2.0, rel=1e-6) and out["epsilon_spent_rdp"] >= 2.0 * (1 - 1e-6)
    assert set(out) == set(alg.run(problem, ca.FedAvgCNN(local_steps=1), epsilon=None, delta=1e-5,
                                   uplink_budget_bits=3 * 32 * problem.dim, clients_per_round=3, seed=0,
                                   eval_rounds=1))


# ----------------------------------------------------------------------------- client-level DP-FedAvg

def test_client_level_dpfedavg_matches_a_plain_loop(problem, reference):
    algo = cb.DPFedAvgClientCNN(lr=0.2, local_steps=2, rate=0.4, clip=0.05)
    bits = algo.message_bits(problem.dim)
    m, n_clients = 2, problem.n_devices
    out = cb.run_client_level(problem, algo, epsilon=8.0, delta=1e-5, uplink_budget_bits=2 * m * bits,
                              clients_per_round=m, seed=11, eval_rounds=2)
    assert out["rounds"] == 2 and out["epsilon_spent"] == pytest.approx(8.0, rel=1e-6)
    sigma, q = out["noise_multiplier"], m / n_clients
    sampling_ss, run_ss = np.random.SeedSequence(11).spawn(2)
    sampling, rng = np.random.default_rng(sampling_ss), np.random.default_rng(run_ss)
    x0 = problem.initial_model()
    x, sent, sampled = x0.copy(), 0, 0
    for _ in range(2):  # x ← x + (Σ_k clip_S(Δ_k) + σ S z) / (q N), k Poisson-sampled at q
        clients = np.flatnonzero(sampling.random(n_clients) < q)
        sent += clients.size
        total = np.zeros_like(x)
        for c in clients:
            xc, yc = _data(problem, int(c))
            w = x.copy()
            for _ in range(algo.local_steps):  # FedAvg's local step: the mean over the realised batch
                rows = np.flatnonzero(rng.random(len(yc)) < algo.rate)
                sampled += rows.size
                g = _record_gradients(reference, w, xc[rows], yc[rows]).sum(axis=0) / max(rows.size, 1)
                w = w - algo.lr * g
            u = w - x
            total += u * min(1.0, algo.clip / np.linalg.norm(u))
        x = x + (total + sigma * algo.clip * rng.standard_normal(x.size)) / (q * n_clients)
    assert out["uplink_bits"] == sent * bits and out["sampled_records"] == sampled
    assert sent != 2 * m  # the realised clients differ from q·N: the fixed denominator is checked
    # the driver's model, through its evaluation loss (float32 against float64 models: 1e-3 relative)
    assert out["train_loss"][-1] == pytest.approx(problem.loss(x), rel=1e-3)
    want = [problem.accuracy(x)]
    # the model itself: rerun the driver's loop through the library's pieces on the same streams
    sampling, rng = np.random.default_rng(sampling_ss), np.random.default_rng(run_ss)
    y = x0.copy()
    for _ in range(2):
        clients = np.flatnonzero(sampling.random(n_clients) < q)
        ups = [algo.client_update(problem, y, int(c), rng)[0] for c in clients]
        ups = np.stack(ups) if ups else np.zeros((0, y.size))
        y = t1base.server_step(y, ups, clip=algo.clip, noise_multiplier=sigma, expected_clients=q * n_clients,
                               rng=rng)
    _close(y, x, x0)
    assert out["test_accuracy"][-1] == pytest.approx(want[0], abs=1 / 20 + 1e-12)  # one evaluation record


def test_server_step_matches_a_numpy_loop(problem):
    d = problem.dim
    rng = np.random.default_rng(5)
    updates = rng.standard_normal((3, d)) * np.array([[1e-4], [1.0], [10.0]])
    clipped = np.stack([t1base.clip_update(u, 0.5) for u in updates])
    norms = np.linalg.norm(clipped, axis=1)
    np.testing.assert_allclose(norms[1:], 0.5, rtol=1e-12)
    assert norms[0] == pytest.approx(np.linalg.norm(updates[0]), rel=1e-12)  # below S: unchanged
    x0 = rng.standard_normal(d)
    got = t1base.server_step(x0, clipped, clip=0.5, noise_multiplier=1.7, expected_clients=2.5,
                             rng=np.random.default_rng(9))
    z = np.random.default_rng(9).standard_normal(d)
    want = x0.copy()
    for i in range(d):  # coordinate by coordinate
        want[i] = x0[i] + (clipped[0, i] + clipped[1, i] + clipped[2, i] + 1.7 * 0.5 * z[i]) / 2.5
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- ceilings

def test_each_ceiling_is_its_algorithm_with_clipping_and_noise_off(problem):
    x0 = problem.initial_model()
    state = {"x": x0}
    pairs = [(ca.DPFLCNN(lr=0.3, local_steps=1, rate=0.5, clip=HUGE), cb.DPFLCeilingCNN(lr=0.3, local_steps=1,
                                                                                        rate=0.5)),
             (ca.PrivateFedPAQCNN(lr=0.3, local_steps=3, rate=0.5, clip=HUGE),
              cb.FedPAQCeilingCNN(lr=0.3, local_steps=3, rate=0.5))]
    for private, ceiling in pairs:
        a, sa = private.client_message(problem, state, 1, 0.0, np.random.default_rng(4))
        b, sb = ceiling.client_message(problem, state, 1, 0.0, np.random.default_rng(4))
        _close(b, a, np.zeros_like(a))
        assert sa == sb
        assert ceiling.privacy_plan(3) is None and ceiling.message_bits(problem.dim) == private.message_bits(
            problem.dim)
    p = ca.FedPLTCNN(lr=0.3, rho=2.0, local_steps=1, clip=HUGE, rate=0.5)
    c = cb.FedPLTCeilingCNN(lr=0.3, rho=2.0, local_steps=1, rate=0.5)
    sp, sc = p.start(problem), c.start(problem)
    y = x0 + 0.01 * np.random.default_rng(1).standard_normal(x0.size)
    for s in (sp, sc):
        s["y"] = y
    mp, _ = p.client_message(problem, sp, 2, 0.0, np.random.default_rng(0))
    mc, _ = c.client_message(problem, sc, 2, 0.0, np.random.default_rng(0))
    _close(sc["x_local"][2], sp["x_local"][2], x0)
    np.testing.assert_allclose(mc, mp, rtol=0, atol=1e-4 * np.linalg.norm(sp["x_local"][2] - x0) * 2 + 1e-12)
    assert c.privacy_plan(2) is None and c.message_bits(problem.dim) == p.message_bits(problem.dim)


def test_dpfl_ceiling_matches_a_plain_loop(problem, reference):
    """Over several steps (where the private algorithm's noise draws shift its stream): the sum
    over the Poisson sample divided by the expected batch q·n_i."""
    x0 = problem.initial_model()
    ours, sampled = cb.sgd_steps(problem, x0, 0, steps=3, rate=0.4, lr=0.3, rng=np.random.default_rng(2))
    rng = np.random.default_rng(2)
    xc, yc = _data(problem, 0)
    w, count = x0.copy(), 0
    for _ in range(3):
        rows = np.flatnonzero(rng.random(len(yc)) < 0.4)
        count += rows.size
        w = w - 0.3 * _record_gradients(reference, w, xc[rows], yc[rows]).sum(axis=0) / (0.4 * len(yc))
    assert sampled == count
    _close(ours, w, x0)


def test_ceiling_grids_drop_only_the_privacy_axis():
    from fedrepro.experiments.headtohead import t2

    for name, grid in tb.BASELINES.items():
        assert len(grid) == 12 and len(set(grid)) == 12, name
    for a in ("dp-fedsgd", "dpfl", "fedpaq"):  # the clipping axis becomes a step factor
        private, ceiling = t2.GRIDS[a], tb.CEILING_GRIDS[f"{a}-ceiling"]
        assert {g.lr for g in private} <= {g.lr for g in ceiling} and min(g.lr for g in ceiling) < min(
            g.lr for g in private)
        assert {g.local_steps for g in private} == {g.local_steps for g in ceiling}
        assert {g.rate for g in ceiling} == {0.015}
    assert {(g.lr, g.local_steps, g.levels) for g in t2.GRIDS["fedpaq-q"]} == {
        (g.lr, g.local_steps, g.levels) for g in tb.CEILING_GRIDS["fedpaq-q-ceiling"]}
    assert {(g.lr, g.rho, g.local_steps) for g in t2.GRIDS["fed-plt"]} == {
        (g.lr, g.rho, g.local_steps) for g in tb.CEILING_GRIDS["fed-plt-ceiling"]}
    assert {(g.lr, g.clip) for g in tb.CENTRAL_GRID} == {(g.lr, g.clip) for g in t2.GRIDS["dp-fedsgd"]}


# ----------------------------------------------------------------------------- bad inputs

def test_bad_inputs_name_the_parameter(problem):
    x0 = problem.initial_model()
    cases = [(lambda: cb.CentralDPSGDCNN(lr=0.0), "lr"), (lambda: cb.CentralDPSGDCNN(rate=2.0), "rate"),
             (lambda: cb.CentralDPSGDCNN(rate=0.5, epochs=0.1), "epochs"),
             (lambda: cb.DPFedAvgClientCNN(clip=0.0), "clip"), (lambda: cb.DPFLCeilingCNN(local_steps=0), "local_steps"),
             (lambda: cb.FedPAQCeilingCNN(levels=0), "levels"), (lambda: cb.FedPLTCeilingCNN(rho=-1.0), "rho"),
             (lambda: cb.FedPLTCeilingCNN(rate=0.0), "rate"),
             (lambda: cb.sgd_steps(problem, x0, 0, steps=0, rate=0.5, lr=0.1, rng=np.random.default_rng(0)),
              "steps"),
             (lambda: cb.prox_sgd_steps(problem, x0, 0, steps=1, rate=0.5, lr=0.1, v=x0,
                                        rng=np.random.default_rng(0)), "rho"),
             (lambda: cb.CentralDPSGDCNN().step(problem, x0, 1.0, np.random.default_rng(0)), "pooled"),
             (lambda: cb.CentralDPSGDCNN().step(cb.pooled(problem), x0, -1.0, np.random.default_rng(0)),
              "noise_multiplier"),
             (lambda: cb.run_central(problem, cb.CentralDPSGDCNN(), epsilon=0.0, delta=1e-5, uplink_budget_bits=1.0,
                                     clients_per_round=1, seed=0), "epsilon"),
             (lambda: cb.run_central(problem, cb.CentralDPSGDCNN(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1.0,
                                     clients_per_round=1, seed=0, eval_rounds=0), "eval_rounds"),
             (lambda: cb.run_client_level(problem, cb.DPFedAvgClientCNN(), epsilon=1.0, delta=1e-5,
                                          uplink_budget_bits=1e12, clients_per_round=4, seed=0), "clients_per_round"),
             (lambda: cb.run_client_level(problem, cb.DPFedAvgClientCNN(), epsilon=1.0, delta=1e-5,
                                          uplink_budget_bits=10.0, clients_per_round=1, seed=0), "budget"),
             (lambda: cb.run_client_level(problem, cb.DPFedAvgClientCNN(), epsilon=1.0, delta=2.0,
                                          uplink_budget_bits=1e12, clients_per_round=1, seed=0), "delta"),
             (lambda: tb.grid_of(tb.T2BaselinesConfig(), "sgd"), "name"), (lambda: tb.runner_of("sgd"), "name"),
             (lambda: tb.T2BaselinesConfig(profile="full"), "profile"),
             (lambda: tb.T2BaselinesConfig(central_epochs=0.0), "central_epochs"),
             (lambda: tb.T2BaselinesConfig(selected=(("central-dpsgd", 12),)), "selected")]
    for make, word in cases:
        with pytest.raises(ValueError, match=word):
            make()
    with pytest.raises(TypeError, match="CentralDPSGDCNN"):
        cb.run_central(problem, cb.DPFedAvgClientCNN(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1.0,
                       clients_per_round=1, seed=0)
    with pytest.raises(TypeError, match="DPFedAvgClientCNN"):
        cb.run_client_level(problem, cb.CentralDPSGDCNN(), epsilon=1.0, delta=1e-5, uplink_budget_bits=1.0,
                            clients_per_round=1, seed=0)


# ----------------------------------------------------------------------------- the protocol

def test_units_and_grids_of_the_paper_profile():
    cfg = tb.T2BaselinesConfig()
    p = cfg.protocol()
    units = tb._units(cfg)
    assert len(units) == len(set(units)) == 5 * 3 + 2 * len(p.epsilons)
    assert all("ceiling" in u for u in units[:15]) and units[-1] == "central-dpsgd_eps-8_bits-5.6e+09"
    assert {g.epochs for g in tb.grid_of(cfg, "central-dpsgd")} == {2.0}
    assert {g.steps for g in tb.grid_of(cfg, "central-dpsgd")} == {133}
    assert len(tb._tuning_units(cfg.tuning_config())) == 7 * 12


def _check(result, tuning, cfg):
    p = cfg.protocol()
    recs = result["records"]
    assert recs and all(set(r) == T2_FIELDS for r in recs)  # exactly T2's fields
    for r in recs:
        assert r["task"] == "T2" and r["delta"] == p.delta and r["seed"] in p.seeds
        if r["algorithm"].endswith("-ceiling"):
            assert math.isinf(r["epsilon_target"]) and r["noise_multiplier"] == 0
            assert r["uplink_bits"] <= r["uplink_budget_bits"] and r["rounds"] <= p.max_rounds
        else:  # tolerance: the calibration's 1e-9 relative, the PLD's discretisation
            assert r["epsilon_spent"] <= r["epsilon_target"] * (1 + 1e-6)
            assert r["epsilon_spent"] == pytest.approx(r["epsilon_target"], rel=1e-6)
            assert r["epsilon_spent_rdp"] >= r["epsilon_target"] * (1 - 1e-6)
            assert r["uplink_budget_bits"] == p.budget_bits and r["epsilon_target"] in p.epsilons
        if r["algorithm"] == "central-dpsgd":
            assert r["uplink_bits"] == 0 and r["rounds"] == round(cfg.central_epochs / r["config"]["rate"])
        if r["algorithm"] == "dp-fedavg-client":  # q_c = 1 on T2: every client every round
            assert r["uplink_bits"] == r["rounds"] * 10 * r["message_bits"] <= r["uplink_budget_bits"]
            assert r["rounds"] <= p.max_rounds
    for t in tuning["tuning"]:
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf
                  for c in t["candidates"]]
        assert int(t["selected"]) == scores.index(max(scores)) and len(scores) == p.grid_size
    cells = {(r["algorithm"], r["epsilon_target"], r["uplink_budget_bits"]) for r in recs}
    assert len(cells) == len(tb._units(cfg)) and len(recs) == len(cells) * len(p.seeds)
    assert {r["algorithm"] for r in recs} == set(tb.BASELINES)


@pytest.mark.slow
def test_quick_profile_follows_the_protocol_recomputes_and_the_view_reads_it(results_dir):
    from fedrepro.chapters.headtohead import t2_baselines as view
    from fedrepro.experiments.headtohead import t2

    cfg = tb.T2BaselinesConfig.for_profile("quick")
    before = view.progress("quick")
    assert (before["tuning_done"], before["cells_done"]) == (0, 0) and view.stored("quick") is None
    result = tb.load_t2_baselines("quick")
    tuning = tb.load_t2_baselines_tuning("quick")
    _check(result, tuning, cfg)
    after = view.progress("quick")
    assert (after["tuning_done"], after["cells_done"]) == (after["tuning_total"], after["cells_total"])
    assert after["tuning_total"] == len(tb._tuning_units(cfg.tuning_config())) > 0
    # determinism: a tuning unit and two cells computed again give the same values
    tcfg = cfg.tuning_config()
    again = tb._run_tuning_unit(tcfg, "central-dpsgd_cfg-01")
    stored = next(t for t in tuning["tuning"] if t["algorithm"] == "central-dpsgd")["candidates"][1]
    assert {k: v for k, v in again.items() if k not in ("algorithm", "index")} == stored
    cells = tb.with_selection(cfg, tuning)
    for unit in ("dp-fedavg-client_eps-4_bits-4e+08", "dpfl-ceiling_eps-none_bits-2e+08"):
        recs = t2.records(cfg.protocol(), tb._run_unit(cells, unit))
        name = unit.split("_")[0]
        budget = float(unit.split("bits-")[1])
        stored_recs = [r for r in result["records"] if r["algorithm"] == name and r["uplink_budget_bits"] == budget]
        assert len(recs) == len(stored_recs)
        for a, b in zip(recs, stored_recs, strict=True):
            assert a.keys() == b.keys()
            for k in a:
                np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)
    # the view, on the quick T2 grid of two private algorithms
    t2_result = t2.compute(dataclasses.replace(t2.T2Config.for_profile("quick"), algorithms=("dp-fedsgd", "fedpaq")))
    table = view.table_of(t2_result, result, cfg.protocol().budget_bits)
    assert list(table.index) == ["4"] and table.shape[1] == 10
    assert table.iloc[0, 0] in (view.T2_LABELS["dp-fedsgd"], view.T2_LABELS["fedpaq"])
    assert "—" not in set(table.iloc[0, 1:])  # every baseline present at the main budget
    f = view.comparison_frame(t2_result, result, cfg.protocol().budget_bits)
    central = [r["test_accuracy"] for r in result["records"] if r["algorithm"] == "central-dpsgd"]
    assert f["central"].iloc[0] == pytest.approx(float(np.mean(central)), abs=1e-12)
    assert table.iloc[0]["central − private (pts)"] == f"{100 * (f['central'] - f['private']).iloc[0]:+.1f}"
    ceilings = view.ceilings_table_of(t2_result, result)
    assert ceilings.shape == (5, 3)


@pytest.mark.stored
def test_stored_paper_result_follows_the_protocol():
    from fedrepro.core.cache import read_only

    cfg = tb.T2BaselinesConfig()
    with read_only():
        _check(tb.load_t2_baselines("paper"), tb.load_t2_baselines_tuning("paper"), cfg)


@pytest.mark.stored
def test_the_stored_t2_baselines_support_the_pages_reading():
    """The baselines page ("Reading the T2 table"): DPFL is the best private algorithm on the
    fair grids at every ε; central DP-SGD is ahead of it beyond the seed spread at the smallest
    and the largest ε; client-level DP-FedAvg stays within ten points of chance (10 %) at every ε,
    behind beyond the spread, with a server noise more than 100 times the largest norm of the
    sum it is added to; DPFL's own ceiling and the best ceiling (the quantized FedPAQ's, 45
    rounds against 30) are ahead beyond the spread; both trusted baselines select at the edges
    the page names; two ceilings (DP-FedSGD's, Fed-PLT's) fall below their private algorithm at
    the reference cell beyond the spread; on T1 too (the index), central DP-SGD is ahead beyond
    the spread at both ends of ε."""
    from fedrepro.chapters.headtohead import t2_baselines as view
    from fedrepro.report.prose import compare_summaries

    stored = view.stored("paper")
    assert stored is not None
    private, base = stored
    p = view.T2Config.for_profile("paper")
    f = view.comparison_frame(private, base, p.budget_bits)
    assert set(f["best_private"]) == {"dpfl"}
    facts = view.facts(private, base, None)
    assert facts["best_private_text"] == f"{view.T2_LABELS['dpfl']} at every ε"
    for key in ("central_smallest_epsilon", "central_largest_epsilon", "own_ceiling_largest_epsilon",
                "best_ceiling_largest_epsilon"):
        assert facts[f"verdict-{key}"] == "the baseline is ahead", key
    assert facts["verdict-client_smallest_epsilon"] == facts["verdict-client_largest_epsilon"] == "the baseline is behind"
    assert (f["client"] < 0.2).all() and facts["client_noise_to_signal_largest"] > 100
    assert f["best_ceiling_of"].iloc[-1] == "fedpaq-q-ceiling"
    assert (facts["best_ceiling_rounds"], facts["own_ceiling_rounds"]) == (45, 30)
    # the selections, read from the cells' configurations
    central = next(r["config"] for r in base["records"] if r["algorithm"] == "central-dpsgd")
    client = next(r["config"] for r in base["records"] if r["algorithm"] == "dp-fedavg-client")
    assert central["lr"] == max(g.lr for g in tb.CENTRAL_GRID) and central["clip"] == max(g.clip for g in tb.CENTRAL_GRID)
    assert client["lr"] == max(g.lr for g in tb.CLIENT_GRID) and client["clip"] == max(g.clip for g in tb.CLIENT_GRID)
    assert client["local_steps"] == min(g.local_steps for g in tb.CLIENT_GRID)
    below = []
    for a in view.PRIVATE:
        pr = [r["test_accuracy"] for r in private["records"] if r["algorithm"] == a
              and r["epsilon_target"] == p.tuning_epsilon and r["uplink_budget_bits"] == p.budget_bits]
        ce = [r["test_accuracy"] for r in base["records"] if r["algorithm"] == f"{a}-ceiling"
              and r["uplink_budget_bits"] == p.budget_bits]
        ce = [x for x in ce if math.isfinite(x)]  # a diverged seed: the tables count the others
        if compare_summaries(np.mean(ce), np.std(ce, ddof=1), np.mean(pr), np.std(pr, ddof=1)) == "lower":
            below.append(a)
    assert below == ["dp-fedsgd", "fed-plt"] and facts["ceilings_below"] == 2
    # the one diverged run the page names: Fed-PLT's ceiling, one seed of three at the main budget
    diverged = [(r["algorithm"], r["uplink_budget_bits"]) for r in base["records"] if r["diverged"]]
    assert diverged == [("fed-plt-ceiling", p.budget_bits)]
    assert view.ceilings_table_of(private, base).loc[view.T2_LABELS["fed-plt"]].iloc[2].endswith("(1 of 3 diverged)")
    # the index: central DP-SGD ahead beyond the spread at both ends of ε on T1 as well
    from fedrepro.chapters.headtohead import baselines as t1view

    t1f = t1view.comparison_frame(*t1view.load("paper"), t1view.T1Config.for_profile("paper").budget_bits)
    v1 = t1view.verdicts_of(t1f)
    assert v1["central_smallest_epsilon"] == v1["central_largest_epsilon"] == "higher"
