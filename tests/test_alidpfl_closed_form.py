"""ALI-DPFL under the public code's closed-form τ* (a reading of claims C01, C02, C05, C20, C21).

The rule is checked against scipy (√(1 + c/a) minimises [a(τ − 1)² + c]/τ) and against the
formula restated by hand from the reference notes; one round with its statistics μ, Γ against
the independent Opacus implementation of ``tests/independent/dpfl_reference.py`` (same initial
weights, same generators), the last step's batch replayed from a fresh copy of the clients'
generators and its losses and gradients evaluated in float64 by plain torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize_scalar
from torch.nn import functional as F

from fedrepro.alidpfl import budget, closed_form_tau, models, training
from fedrepro.alidpfl.closed_form_training import expected_batch, train_closed_form
from tests import test_alidpfl_independent as fixture_module
from tests.independent.dpfl_reference import make_reference_cnn, reference_dpfl

SHAPE = (1, 28, 28)
SEED = 5
Q, CLIP, SIGMA, ETA = 0.3, 0.1, 1.1, 0.5


# the independent test's three unequal clients (images in [-1, 1]); SHAPE and SEED match it
data = fixture_module.data


def _plan(rounds: int, iterations: int, **kw) -> training.RunPlan:
    return training.RunPlan(budget.Budgets(1.0, rounds, iterations), tau=None, q=Q, clip_norm=CLIP, sigma=SIGMA,
                            eta=ETA, eval_rounds=(), curve_every=10 ** 6, curve_size=5, seed=SEED,
                            method="stacked", **kw)


RULE_CASES = [  # mu, gamma, tau, R_s, R_c, d, B
    (0.1, 0.01, 1, 158, 290, 582026, 90),
    (0.03, 0.008, 8, 158, 290, 582026, 90),
    (2.0, 0.5, 3, 10, 1000, 1000, 9),
    (0.5, 0.0, 1, 317, 576, 100, 90),
]


@pytest.mark.parametrize("case", RULE_CASES)
def test_the_rule_rounds_the_minimiser_of_the_bound(case):
    """τ* is [a(τ − 1)² + c]/τ's minimiser over τ > 0, found by scipy, rounded half up
    (tolerance: scipy's xatol 1e-10 relative to the root; cases away from a .5 boundary)."""
    mu, gamma, tau, rs, rc, d, b = case
    n = SIGMA ** 2 * CLIP ** 2 * d / b ** 2
    t = min(rs * tau, rc)
    a = (2 + 2 / t) * (CLIP ** 2 + n) + closed_form_tau.EPS
    c = 4 / mu ** 2 + 3 * CLIP ** 2 + 2 * gamma * t * mu + n
    best = minimize_scalar(lambda x: (a * (x - 1) ** 2 + c) / x, bounds=(1e-9, 1e6), method="bounded",
                           options={"xatol": 1e-10})
    assert abs(best.x - round(best.x) - 0.5) > 1e-3 or best.x < 1
    expected = min(max(int(math.floor(best.x + 0.5)), 1), 100)
    got = closed_form_tau.closed_form_tau(mu, gamma, tau=tau, rounds=rs, iterations=rc, sigma=SIGMA, clip=CLIP,
                                          d=d, batch=b)
    assert got == expected


def test_the_rule_by_hand():
    """The first case worked out by hand from the reference notes (5b): N = 1.21·0.01·582026/8100
    = 0.86944, T = 158, a = 2.01266·0.87944 = 1.77002, c = 400 + 0.03 + 0.316 + 0.86944
    = 401.215, √(1 + c/a) = 15.09 → 15."""
    assert closed_form_tau.noise_variance(SIGMA, CLIP, 582026, 90) == pytest.approx(0.869443, rel=1e-5)
    assert closed_form_tau.closed_form_tau(0.1, 0.01, tau=1, rounds=158, iterations=290, sigma=SIGMA, clip=CLIP,
                                           d=582026, batch=90) == 15


def test_the_rule_at_its_limits():
    kw = dict(tau=1, rounds=10, iterations=100, sigma=SIGMA, clip=CLIP, d=10, batch=10)
    assert closed_form_tau.closed_form_tau(0.0, 0.1, **kw) == 100  # μ → 0: τ* → ∞, clipped
    assert closed_form_tau.closed_form_tau(1e-6, 0.1, **kw) == 100
    # a large μ: τ* → round(√(1 + (3C² + N)/((2 + 2/T)(C² + N)))), 1 where N ≫ C², 2 where N ≪ C²
    assert closed_form_tau.closed_form_tau(1e6, 0.0, **(kw | {"d": 10 ** 6})) == 1
    assert closed_form_tau.closed_form_tau(1e6, 0.0, **kw) == 2
    with pytest.raises(ValueError, match="mu"):
        closed_form_tau.closed_form_tau(-1.0, 0.1, **kw)
    with pytest.raises(ValueError, match="batch"):
        closed_form_tau.closed_form_tau(1.0, 0.1, **(kw | {"batch": 0}))


def test_round_statistics_are_the_weighted_sums():
    mu, gamma = closed_form_tau.round_statistics([1.0, 2.0], [0.5, 2.5], [0.3, 0.6], [1.0, 2.0], [0.25, 0.75])
    assert mu == pytest.approx(0.25 * 0.3 / (1 + 1e-6) + 0.75 * 0.6 / (2 + 1e-6), rel=1e-12)
    assert gamma == pytest.approx(abs(0.25 * -0.5 + 0.75 * 0.5), rel=1e-12)
    with pytest.raises(ValueError, match="one entry per client"):
        closed_form_tau.round_statistics([1.0], [1.0, 2.0], [0.1], [1.0], [1.0])
    with pytest.raises(ValueError, match="summing to 1"):
        closed_form_tau.round_statistics([1.0], [1.0], [0.1], [1.0], [0.5])
    with pytest.raises(ValueError, match="finite"):
        closed_form_tau.round_statistics([math.nan], [1.0], [0.1], [1.0], [1.0])


def _loss_grad64(state: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> tuple[float, torch.Tensor]:
    model = make_reference_cnn(SHAPE).to(torch.float64)
    model.load_state_dict(state)
    loss = F.cross_entropy(model(x.to(torch.float64)), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    return float(loss.detach()), torch.cat([g.reshape(-1) for g in grads])


def test_one_round_and_its_statistics_agree_with_the_independent_implementation(data):
    """Round 1 (τ = 1): the global model agrees with the Opacus reference to 1e-4 of the
    distance travelled (tests/test_alidpfl_independent.py's tolerance); μ and Γ, recomputed
    from the reference's clients on the replayed last batch in float64, to 1e-3 relative
    (float32 gradients against float64); τ* for round 2 is the rule applied to them."""
    torch.set_num_threads(1)
    init = {k: v.detach().clone() for k, v in models.make_cnn(SHAPE, seed=SEED).state_dict().items()}
    lib = train_closed_form(_plan(2, 10 ** 4), data, return_model=True, stop_after_rounds=None)
    one = train_closed_form(_plan(1, 10 ** 4), data, return_model=True)
    clients = [(c.x, c.y) for c in data.clients]
    ref = reference_dpfl(init, clients, training.client_generators(SEED, len(clients)), rounds=1, tau=1,
                         q=Q, clip=CLIP, sigma=SIGMA, eta=ETA)
    names = list(init)
    flat = lambda s: torch.cat([s[k].double().reshape(-1) for k in names])  # noqa: E731
    w0, w_ref = flat(init), flat(ref["state"])
    assert np.linalg.norm(one["model"] - w_ref.numpy()) <= 1e-4 * float(torch.linalg.vector_norm(w_ref - w0))
    # the last (only) step's batches, replayed from fresh generators: n_i float64 uniforms each
    gens = training.client_generators(SEED, len(clients))
    weights = data.sizes / data.sizes.sum()
    mu = gamma = 0.0
    for i, (x, y) in enumerate(clients):
        idx = torch.nonzero(torch.rand(len(y), generator=gens[i], dtype=torch.float64) < Q).flatten()
        xb, yb = torch.from_numpy(x)[idx], torch.from_numpy(y)[idx]
        f0, g0 = _loss_grad64(init, xb, yb)
        f1, g1 = _loss_grad64(ref["client_states"][i], xb, yb)
        drift = float(torch.linalg.vector_norm(flat(ref["client_states"][i]) - w_ref))
        mu += weights[i] * float(torch.linalg.vector_norm(g1 - g0)) / (drift + 1e-6)
        gamma += weights[i] * (f1 - f0)
    gamma = abs(gamma)
    assert lib["mu"][0] == pytest.approx(mu, rel=1e-3)
    assert lib["gamma"][0] == pytest.approx(gamma, rel=1e-3)
    d = sum(v.numel() for v in init.values())
    tau2 = closed_form_tau.closed_form_tau(mu, gamma, tau=1, rounds=2, iterations=10 ** 4, sigma=SIGMA, clip=CLIP,
                                           d=d, batch=expected_batch(Q, data.sizes))
    assert list(lib["taus"]) == [1, tau2]


def test_round_one_is_the_round_of_the_paper_rule(data):
    """The rule acts from round 2 on: round 1 (τ = 1) equals train()'s ALI-DPFL round bit for bit."""
    torch.set_num_threads(1)
    a = training.train(_plan(1, 50), data, return_model=True)
    b = train_closed_form(_plan(1, 50), data, return_model=True)
    assert np.array_equal(a["model"], b["model"])
    assert a["sampled_records"] == b["sampled_records"]


def test_runs_within_the_budgets_and_resumes(data, tmp_path):
    torch.set_num_threads(1)
    plan = _plan(4, 12, checkpoint_every=1)
    full = train_closed_form(plan, data, return_model=True)
    assert full["rounds"] <= 4 and full["iterations"] <= 12 and full["iterations"] == int(full["taus"].sum())
    assert np.all((full["taus"] >= 1) & (full["taus"] <= 100))
    assert train_closed_form(plan, data, checkpoint_dir=tmp_path, stop_after_rounds=2) is None
    resumed = train_closed_form(plan, data, checkpoint_dir=tmp_path, return_model=True)
    assert np.array_equal(resumed["model"], full["model"])
    assert np.array_equal(resumed["taus"], full["taus"])
    with pytest.raises(training.CheckpointError, match="another plan"):
        train_closed_form(_plan(5, 12, checkpoint_every=1), data, checkpoint_dir=tmp_path)


def test_bad_plans_are_refused(data):
    with pytest.raises(ValueError, match="tau=None"):
        train_closed_form(training.RunPlan(budget.Budgets(1.0, 2, 2), tau=1, method="stacked"), data)
    with pytest.raises(ValueError, match="stacked"):
        train_closed_form(training.RunPlan(budget.Budgets(1.0, 2, 2), tau=None), data)
    with pytest.raises(TypeError):
        train_closed_form("plan", data)


# --- the chapter's runs and their verdicts -------------------------------------------------

def test_quick_profile_runs_every_rs_below_rc_cell(results_dir):
    from fedrepro.chapters.alidpfl import closed_form, experiments

    cfg = closed_form.ClosedFormConfig(profile="quick", seed=1)
    assert cfg.result_name() == "closed-form-tau-seed1-quick"
    cells = [c for c in experiments.cells(experiments.TablesConfig(profile="quick")) if c["rounds"] < c["iterations"]]
    assert closed_form.units(cfg) == [f"ali-{c['table']}-eps{c['epsilon']}" for c in cells]
    res = closed_form.load_closed_form("quick", seed=1)
    assert len(res["accuracy"]) == len(cells)
    for c in cells:
        key = f"{c['table']}|{c['condition']}|{float(c['epsilon'])}"
        taus = res["taus"][key]
        assert taus[0] == 1 and len(taus) <= c["rounds"] and sum(taus) <= c["iterations"]
        assert 0 <= res["accuracy"][key] <= 100


def _fake_tables(ali: float) -> dict:
    key3, key4 = "III|Rs=Rc/2|2.0", "IV|Rs=Rc/5|2.75"
    return {"table": {key3: {"ALI-DPFL": ali, "tau=1": 50.0, "tau=2": 60.0},
                      key4: {"ALI-DPFL": ali, "tau=1": 55.0, "tau=3": 58.0}},
            "taus": {key3: [1, 2], key4: [1, 3]}, "runs": {}}


def test_substituted_replaces_only_the_stored_closed_form_entries():
    from fedrepro.chapters.alidpfl import closed_form_effects

    orig = _fake_tables(40.0)
    closed = {"accuracy": {"III|Rs=Rc/2|2.0": 61.5}, "taus": {"III|Rs=Rc/2|2.0": [1, 9, 20]}}
    sub = closed_form_effects.substituted(orig, closed)
    assert sub["table"]["III|Rs=Rc/2|2.0"]["ALI-DPFL"] == 61.5 and sub["taus"]["III|Rs=Rc/2|2.0"] == [1, 9, 20]
    assert sub["table"]["IV|Rs=Rc/5|2.75"]["ALI-DPFL"] == 40.0  # no closed-form run there: kept
    assert orig["table"]["III|Rs=Rc/2|2.0"]["ALI-DPFL"] == 40.0  # the input is not changed
    assert closed_form_effects.substituted(orig, {"accuracy": {}, "taus": {}})["table"] == orig["table"]


def test_margins_and_summary_follow_the_substituted_entries(monkeypatch):
    from fedrepro.chapters.alidpfl import closed_form_effects, tables

    closed = {"accuracy": {"III|Rs=Rc/2|2.0": 61.0, "IV|Rs=Rc/5|2.75": 57.0},
              "taus": {"III|Rs=Rc/2|2.0": [1, 5], "IV|Rs=Rc/5|2.75": [1, 9]}}
    monkeypatch.setattr(closed_form_effects, "stored", lambda profile="paper": {0: closed})
    monkeypatch.setattr(tables, "stored_seeds", lambda profile, reading, seeds: {0: _fake_tables(40.0)})
    m = closed_form_effects.margins("paper")
    assert m[0]["paper-rule"] == pytest.approx([-20.0, -18.0])
    assert m[0]["closed-form"] == pytest.approx([1.0, -1.0])
    frame = closed_form_effects.cells_frame("paper")
    assert list(frame["ALI-DPFL, closed form (%)"]) == ["61.0", "57.0"]
    assert list(frame["closed-form tau* (seed 0)"]) == ["2 rounds, tau* 1 to 5", "2 rounds, tau* 1 to 9"]


def _spread_fixture(monkeypatch, paper_b: float, seeds=(0, 1, 2)):
    """Three seeds of fake tables with closed-form accuracies, and fake paper Tables III-IV whose
    ALI-DPFL margins over the best fixed tau are +1 (cell III) and ``paper_b`` (cell IV)."""
    from fedrepro.chapters.alidpfl import closed_form_effects, tables

    acc = {0: (61.0, 57.0), 1: (59.0, 58.5), 2: (60.5, 56.0)}  # best fixed: 60 (III), 58 (IV)
    closed = {s: {"accuracy": {"III|Rs=Rc/2|2.0": acc[s][0], "IV|Rs=Rc/5|2.75": acc[s][1]},
                  "taus": {"III|Rs=Rc/2|2.0": [1, 5], "IV|Rs=Rc/5|2.75": [1, 9]}} for s in seeds}
    paper = {"III": {"III|Rs=Rc/2|2.0": {"ALI-DPFL": 62.0, "tau=2": 61.0}},
             "IV": {"IV|Rs=Rc/5|2.75": {"ALI-DPFL": 59.5 + paper_b, "tau=3": 59.5}}}
    monkeypatch.setattr(closed_form_effects, "stored", lambda profile="paper": closed)
    monkeypatch.setattr(tables, "stored_seeds",
                        lambda profile, reading, seeds: {s: _fake_tables(40.0) for s in seeds})
    monkeypatch.setattr(tables, "paper_table", lambda name, dataset="F-MNIST": paper[name])
    return acc


def test_spread_check_against_a_plain_computation(monkeypatch):
    """Margins, means and sample standard deviations recomputed with the statistics module; a
    paper margin inside two sd of our mean is within, one far outside is not (tolerance 1e-12)."""
    import statistics

    from fedrepro.chapters.alidpfl import closed_form_effects

    acc = _spread_fixture(monkeypatch, paper_b=0.5)
    ours = [[acc[s][0] - 60.0 for s in acc], [acc[s][1] - 58.0 for s in acc]]
    check = closed_form_effects.spread_check("paper")
    assert check["seeds"] == [0, 1, 2] and check["paper"] == pytest.approx([1.0, 0.5], abs=1e-12)
    assert check["mean"] == pytest.approx([statistics.fmean(c) for c in ours], abs=1e-12)
    assert check["sd"] == pytest.approx([statistics.stdev(c) for c in ours], abs=1e-12)
    expect = [abs(p - statistics.fmean(c)) <= 2 * statistics.stdev(c) for p, c in zip((1.0, 0.5), ours, strict=True)]
    assert check["within"] == expect == [True, True] and check["all_within"]

    _spread_fixture(monkeypatch, paper_b=5.0)
    check = closed_form_effects.spread_check("paper")
    assert check["within"] == [True, False] and not check["all_within"]


def test_spread_needs_three_seeds_and_decides_the_cause(monkeypatch):
    from fedrepro.chapters.alidpfl import closed_form_effects, scorecard

    _spread_fixture(monkeypatch, paper_b=0.5, seeds=(0, 1))
    assert closed_form_effects.spread_check("paper") is None and scorecard.spread_cause("paper") is None

    _spread_fixture(monkeypatch, paper_b=0.5)
    cause, evidence, sentence = scorecard.spread_cause("paper")
    assert cause == "seed-spread" and "in 2 of 2 cells" in sentence
    assert evidence.split(", ") == [f"alidpfl/{name}-seed{s}.json" for s in (0, 1, 2)
                                    for name in ("closed-form-tau", "tables")]

    _spread_fixture(monkeypatch, paper_b=5.0)
    cause, evidence, sentence = scorecard.spread_cause("paper")
    assert (cause, evidence) == ("open", "") and "in 1 of 2 cells" in sentence


@pytest.mark.stored
def test_stored_closed_form_runs_follow_the_rule_and_the_budgets():
    """Every stored run: τ* of each round is the rule applied to the previous round's stored μ,
    Γ (replayed), the run stops only when the next τ* would exceed a budget, and it never does."""
    from fedrepro.alidpfl.closed_form_training import expected_batch
    from fedrepro.chapters.alidpfl import closed_form, closed_form_effects, experiments

    seeds = closed_form_effects.stored("paper")
    if not seeds:
        pytest.skip("the closed-form runs are not in the store")
    cells = {f"ali-{c['table']}-eps{c['epsilon']}": c for c in experiments.cells(experiments.TablesConfig())}
    units = [(seed, cell, run) for seed, res in seeds.items() for cell, run in res["runs"].items()]
    assert {cell for _, cell, _ in units} <= set(closed_form.units(closed_form.ClosedFormConfig()))
    sizes: dict[int, np.ndarray] = {}
    for seed, unit, run in units:
        c = cells[unit]
        if seed not in sizes:
            sizes[seed] = experiments._data(experiments.TablesConfig(seed=seed)).sizes
        nxt = [closed_form_tau.closed_form_tau(mu, g, tau=int(t), rounds=c["rounds"], iterations=c["iterations"],
                                               sigma=1.1, clip=0.1, d=int(run["d"]), batch=expected_batch(0.015, sizes[seed]))
               for mu, g, t in zip(run["mu"], run["gamma"], run["taus"], strict=True)]
        assert list(run["taus"][1:]) == nxt[:-1], unit
        assert int(run["taus"][0]) == 1 and int(run["iterations"]) == int(np.sum(run["taus"])) <= c["iterations"]
        assert int(run["rounds"]) == c["rounds"] or int(run["iterations"]) + nxt[-1] > c["iterations"], unit


@pytest.mark.stored
def test_stored_closed_form_supports_the_pages_reading():
    """The experiments page: under the public code's rule ALI-DPFL runs far fewer rounds and
    uses most of R_c; it comes within two points of the best fixed tau in every R_s < R_c cell
    of every stored seed (C01 holds) and closes more than half of the paper rule's shortfall,
    but is above the best fixed tau in fewer than half of the cells (the gain claims miss); the
    scorecard gives C01's miss the cause unstated-setting with the seed-0 runs as evidence, and
    the gain claims get seed-spread when the spread check holds on three seeds, or stay open
    with the closed form (and the spread check, once run) among what was tried."""
    from fedrepro.chapters.alidpfl import closed_form_effects, scorecard, tables

    s = closed_form_effects.summary("paper")
    if s is None:
        pytest.skip("the closed-form runs are not in the store")
    assert s["holds_c01"] == s["seeds"] and s["holds_c20"] == 0
    assert s["margin_low"] >= -tables.TOLERANCE and s["above_max"] < s["cells"] / 2
    assert 0.5 <= s["used_low"] <= s["used_high"] <= 1.0 and s["max_tau"] > 5
    for m in closed_form_effects.margins("paper").values():
        assert np.mean(np.abs(m["closed-form"])) < 0.5 * np.mean(np.abs(m["paper-rule"]))
    for seed, res in closed_form_effects.stored("paper").items():
        main = tables.stored_tables("paper", seed, "spec")
        for cell, run in res["runs"].items():
            assert run["rounds"] < main["runs"][cell]["rounds"], (seed, cell)
    out = scorecard.table_outcomes()
    assert (out["alidpfl-main-C01"].cause, out["alidpfl-main-C01"].evidence) == (
        "unstated-setting", "alidpfl/closed-form-tau-seed0.json")
    check = closed_form_effects.spread_check("paper")
    if check is not None:  # the page: every mean margin a few tenths below zero, the paper's mostly outside
        assert all(-1.0 < m < 0 for m in check["mean"]) and max(check["sd"]) < 0.5
        assert sum(check["within"]) < len(check["cells"]) / 2
    spread = scorecard.spread_cause("paper")  # None until three seeds are stored
    for cid in ("alidpfl-main-C02", "alidpfl-main-C05", "alidpfl-main-C20", "alidpfl-main-C21"):
        assert out[cid].status == "miss" and "closed-form tau* rule" in out[cid].reason, cid
        if spread is not None and spread[0] == "seed-spread":
            assert (out[cid].cause, out[cid].evidence) == spread[:2] and spread[2] in out[cid].reason, cid
        else:
            assert out[cid].cause in (None, "open") and out[cid].reason.endswith("not understood yet"), cid
            assert spread is None or spread[2] in out[cid].reason, cid
