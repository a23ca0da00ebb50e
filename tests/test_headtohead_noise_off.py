"""The noise-off runs of T2 (``fedrepro.headtohead.noise_off.NoiseOff``, run ``t2-noise-off``):
a private algorithm with σ = 0 and its clipping kept.

Independent check and tolerance: DP-FedSGD's noise-off message on the CNN against a plain loop
written here from the equation (x ← x − η Σ_j min(1, C/‖g_j‖) g_j / (q n), j Poisson-sampled
at q, the d normals of the noise drawn and multiplied by 0), each per-record gradient taken by
autograd on the test's own float64 CNN (``tests/independent/cnn_reference.py``) on the same
draws: the models differ by at most 1e-4 of the distance they travelled (the library computes in
float32; a kept noise term, a dropped clip or a wrong divisor moves them by order 1). The
driver's bookkeeping (σ = 0, ε spent = ∞, the private run's rounds and bits) and the quick
profile (one record per algorithm and seed, recomputed to the same values) are checked on the
library itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.core.validate import ParameterTypeError
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import cnn_algorithms as ca
from fedrepro.headtohead.noise_off import NoiseOff
from tests.independent import cnn_reference as ref
from tests.test_headtohead_t2_baselines import _close, _record_gradients, tiny_problem


@pytest.fixture(scope="module")
def problem():
    return tiny_problem(seed=17, init_seed=3, smallest=14)


def test_dpfedsgd_noise_off_matches_a_plain_loop(problem):
    reference = ref.Reference()
    algo = NoiseOff(ca.DPFLCNN(lr=0.5, clip=0.05, local_steps=2, rate=0.4))
    state = algo.start(problem)
    x0 = state["x"].copy()
    client = 1
    x, y = problem.xs[client].numpy(), problem.ys[client].numpy()
    n = len(y)
    msg, sampled = algo.client_message(problem, state, client, 0.0, np.random.default_rng(8))
    r, w, count, clipped = np.random.default_rng(8), x0.copy(), 0, 0
    for _ in range(2):
        rows = np.flatnonzero(r.random(n) < 0.4)
        r.standard_normal(w.size)  # the noise draw, multiplied by σ = 0
        g = _record_gradients(reference, w, x[rows], y[rows])
        norms = np.linalg.norm(g, axis=1)
        clipped += int((norms > 0.05).sum())
        w = w - 0.5 * (g * np.minimum(1.0, 0.05 / norms)[:, None]).sum(axis=0) / (0.4 * n)
        count += rows.size
    assert clipped > 0 and count == sampled  # the clip binds: the check is not of plain SGD
    _close(x0 + msg, w, x0)


def test_the_driver_runs_it_as_a_non_private_reference_on_the_private_draws(problem):
    private = ca.FedPLTCNN(lr=0.3, rho=1.0, local_steps=2, clip=0.1, rate=0.5)
    budget = 3 * 3 * private.message_bits(problem.dim)
    off = alg.run(problem, NoiseOff(private), epsilon=None, delta=1e-5, uplink_budget_bits=budget,
                  clients_per_round=3, seed=4, eval_rounds=1)
    on = alg.run(problem, private, epsilon=2.0, delta=1e-5, uplink_budget_bits=budget, clients_per_round=3, seed=4,
                 eval_rounds=1)
    assert off["noise_multiplier"] == 0.0 and off["epsilon_spent"] == math.inf and on["noise_multiplier"] > 0
    for key in ("rounds", "uplink_bits", "downlink_bits", "message_bits", "participations", "sampled_records"):
        assert off[key] == on[key], key  # same schedule, same Poisson samples: the noise is the only change
    assert NoiseOff(private).name == f"{private.name}, noise off" and NoiseOff(private).privacy_plan(3) is None


def test_bad_inputs_are_refused(problem):
    with pytest.raises(ValueError, match="already non-private"):
        NoiseOff(ca.FedAvgCNN())
    with pytest.raises(ParameterTypeError, match="head-to-head interface"):
        NoiseOff(object())
    algo = NoiseOff(ca.DPFLCNN())
    with pytest.raises(ValueError, match="noise_multiplier 0"):
        algo.client_message(problem, algo.start(problem), 0, 0.5, np.random.default_rng(0))


def test_config_refuses_unknown_selections():
    from fedrepro.experiments.headtohead.t2_noise_off import T2NoiseOffConfig

    with pytest.raises(ValueError, match="private algorithms"):
        T2NoiseOffConfig(selected=(("ali-dpfl", 0),))
    with pytest.raises(ValueError, match="fair grid"):
        T2NoiseOffConfig(selected=(("dpfl", 12),))


@pytest.mark.slow
def test_quick_profile_runs_every_fair_selection_and_recomputes(results_dir):
    from fedrepro.experiments.headtohead import t2_noise_off as t

    result = t.load_t2_noise_off("quick")
    recs = result["records"]
    assert [r["algorithm"] for r in recs] == list(t.ORDER)  # one seed on the quick profile
    for r in recs:
        assert r["noise_multiplier"] == 0.0 and r["epsilon_spent"] == math.inf
        assert 0.0 <= r["test_accuracy"] <= 1.0 and r["uplink_bits"] <= r["uplink_budget_bits"]
    from fedrepro.experiments.headtohead import t2_fair_grid

    tuning = t2_fair_grid.fair_selection("quick")
    cfg = t.T2NoiseOffConfig(profile="quick", selected=tuple((x["algorithm"], int(x["selected"]))
                                                             for x in tuning["tuning"] if x["algorithm"] in t.ORDER))
    again = t._run_unit(cfg, "dpfl_seed-0")
    assert again == next(r for r in recs if r["algorithm"] == "dpfl")


def _rec(name: str, acc: float, seed: int, epsilon: float = math.inf, budget: float = 5.6e9) -> dict:
    return {"algorithm": name, "seed": seed, "epsilon_target": epsilon, "uplink_budget_bits": budget,
            "test_accuracy": acc, "rounds": 30, "noise_multiplier": 0.0, "test_loss": 1.0}


def test_the_view_splits_noise_from_clipping_by_the_seed_spread_rule():
    """Hand-made records with known answers: the noise costs DPFL 10 points (beyond its spread
    of 1) and Fed-PLT 0.5 (within it); DPFL's ceiling is level with its noise-off run, Fed-PLT's
    20 points below it."""
    from fedrepro.chapters.headtohead import t2_baselines as view

    accs = {"dpfl": (0.60, 0.70, 0.70), "fed-plt": (0.50, 0.505, 0.305)}  # private, noise off, ceiling means
    private, noise_off, ceilings = [], [], []
    for a, (p, n, c) in accs.items():
        for s, d in enumerate((-0.01, 0.0, 0.01)):
            private.append(_rec(a, p + d, s, epsilon=2.0))
            noise_off.append(_rec(a, n + d, s))
            ceilings.append(_rec(f"{a}-ceiling", c + d, s))
    f = view.decomposition_frame({"records": private}, {"records": ceilings}, {"records": noise_off}, 2.0, 5.6e9)
    f = f.set_index("algorithm")
    assert f.loc["dpfl", "noise"] == "higher" and f.loc["dpfl", "clipping"] == "level"
    assert f.loc["fed-plt", "noise"] == "level" and f.loc["fed-plt", "clipping"] == "lower"
    assert f.loc["dpfl", "noise_off"] - f.loc["dpfl", "private"] == pytest.approx(0.10, abs=1e-12)
    assert f.loc["dp-fedsgd", "noise"] == ""  # no records: no verdict
    table = view.decomposition_table(f.reset_index(), 2.0)
    assert table.loc[view.T2_LABELS["fed-plt"], "ceiling − noise off (pts)"] == "-20.0"
    assert table.loc[view.T2_LABELS["fed-plt"], "noise off − private (pts)"] == "+0.5 (level)"


@pytest.mark.stored
def test_the_stored_split_supports_the_pages_reading():
    """The baselines page ("Reading the split") and the index: the ceilings of DP-FedSGD and
    Fed-PLT fall below their clipped, noise-free runs beyond the seed spread, and both selections
    take the largest step of their fair grids; DPFL's and the private FedPAQs' ceilings are above
    theirs beyond the spread; the noise costs DPFL and Fed-PLT beyond the spread and the private
    FedPAQs more than 40 points, which learn without it (above 50 %) and stay near chance with it
    (below 15 %); DP-FedSGD's noise-off run lies below its private run at ε = 2 and inside the
    range of its private means over ε."""
    from fedrepro.chapters.headtohead import t2_baselines as view
    from fedrepro.experiments.headtohead import t2_fair

    stored, noise_off = view.stored("paper"), view.noise_off_stored("paper")
    assert stored is not None and noise_off is not None
    p = view.T2Config.for_profile("paper")
    f = view.decomposition_frame(*stored, noise_off, p.tuning_epsilon, p.budget_bits).set_index("algorithm")
    assert list(f.loc[["dp-fedsgd", "fed-plt"], "clipping"]) == ["lower", "lower"]
    assert list(f.loc[["dpfl", "fedpaq", "fedpaq-q"], "clipping"]) == ["higher"] * 3
    assert list(f.loc[["dpfl", "fed-plt", "fedpaq", "fedpaq-q"], "noise"]) == ["higher"] * 4
    for a in ("fedpaq", "fedpaq-q"):
        assert f.loc[a, "noise_off"] - f.loc[a, "private"] > 0.4
        assert f.loc[a, "noise_off"] > 0.5 and f.loc[a, "private"] < 0.15
    facts = view.facts(*stored, noise_off)
    assert facts["clipping_helps"] == 2 and facts["noise_costs"] == 4
    assert f.loc["dp-fedsgd", "noise"] == "lower"
    assert facts["private_low_dp-fedsgd"] <= facts["noise_off_dp-fedsgd"] <= facts["private_high_dp-fedsgd"]
    by_name = {r["algorithm"]: r["config"] for r in noise_off["records"]}
    for a in ("dp-fedsgd", "fed-plt"):
        assert by_name[a]["lr"] == max(g.lr for g in t2_fair.GRIDS[a])
    assert all(r["noise_multiplier"] == 0.0 and math.isinf(r["epsilon_spent"]) for r in noise_off["records"])
