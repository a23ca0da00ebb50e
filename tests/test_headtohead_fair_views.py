"""The views of the fair tuning axes (``fedrepro.chapters.headtohead.t2_fair``, ``t1_fair``):
table shapes on the committed results and on small synthetic ones, and that they never compute
(a pending result is ``None``)."""

from __future__ import annotations

import math

import pytest

from fedrepro.chapters.headtohead import t1_fair as t1_view
from fedrepro.chapters.headtohead import t2_fair as view
from fedrepro.experiments.headtohead import t1_fair, t2_fair


def _cand(clip: float, acc: float, **more) -> dict:
    return {"config": {"clip": clip, "lr": 0.5, **more}, "validation_accuracy": acc, "source": "t2-tuning"}


def test_clip_frame_has_a_row_per_algorithm_and_a_column_per_clip():
    table = {"tuning": [
        {"algorithm": "dpfl", "selected": 2, "candidates": [_cand(0.1, 0.5), _cand(0.1, 0.6), _cand(1.0, 0.7)]},
        {"algorithm": "fed-plt", "selected": 0, "candidates": [_cand(0.1, 0.55), _cand(0.3, math.nan)]},
    ]}
    frame = view.clip_frame(table)
    assert list(frame.columns) == ["C = 0.1", "C = 0.3", "C = 1", "selected C"]
    assert list(frame.index) == [view.LABELS["dpfl"], view.LABELS["fed-plt"]]
    assert frame.loc[view.LABELS["dpfl"], "C = 0.1"] == "60.0 % (of 2)"
    assert frame.loc[view.LABELS["dpfl"], "C = 0.3"] == "—"
    assert frame.loc[view.LABELS["fed-plt"], "C = 0.3"] == "diverged"
    assert frame.loc[view.LABELS["dpfl"], "selected C"] == "1"
    sel = view.selected_frame(table)
    assert list(sel.columns) == ["selected", "validation accuracy", "run read from"]


def test_verdicts_follow_the_seed_spread_rule():
    def rec(a, eps, acc):
        return {"algorithm": a, "epsilon_target": eps, "uplink_budget_bits": 1.0, "test_accuracy": acc}

    result = {"records": [rec("dpfl", 1.0, x) for x in (0.70, 0.71, 0.72)]
              + [rec("fed-plt", 1.0, x) for x in (0.695, 0.705, 0.715)]
              + [rec("fedpaq", 1.0, x) for x in (0.10, 0.11, 0.12)]}
    v = view.verdicts(result, 1.0)
    assert v == {1.0: {"dpfl": "leader", "fed-plt": "level", "fedpaq": "lower"}}
    older = {"records": [r for r in result["records"] if r["algorithm"] != "fed-plt"]
             + [rec("fed-plt", 1.0, x) for x in (0.50, 0.51, 0.52)]}
    assert "verdict changed from the old grids: " + view.LABELS["fed-plt"] in \
        view.verdict_text(result, older, 1.0).markdown


def test_fedplt_text_reads_both_tables_by_the_seed_spread_rule():
    def rec(a, eps, acc, seed):
        return {"algorithm": a, "epsilon_target": eps, "uplink_budget_bits": 1.0, "test_accuracy": acc,
                "test_loss": 1.0, "rounds": 30, "noise_multiplier": 1.0, "seed": seed}

    def table(fedplt_shift):
        out = []
        for eps in (1.0, 2.0):
            out += [rec("dpfl", eps, 0.70 + 0.01 * s, s) for s in range(3)]
            out += [rec("fed-plt", eps, 0.70 + 0.01 * s - fedplt_shift[eps], s) for s in range(3)]
        return {"records": out}

    fair, old = table({1.0: 0.005, 2.0: 0.05}), table({1.0: 0.2, 2.0: 0.3})
    s = view.fair_summary(fair, old, 1.0)
    assert s["epsilons"] == 2
    assert s["fair_gap_fed-plt_low"] == pytest.approx(0.005) and s["fair_gap_fed-plt_high"] == pytest.approx(0.05)
    assert s["old_gap_fed-plt_high"] == pytest.approx(0.3)
    assert (s["fair_top_fed-plt"], s["old_top_fed-plt"], s["fair_leads_dpfl"]) == (1, 0, 2)
    text = view.fedplt_text(fair, old, 1.0).markdown
    assert "0.5 to 5.0 points below" in text and "level with it at 1 of the 2 ε" in text
    assert "20.0 to 30.0 points below and was below the leader at all 2 ε" in text
    # Fed-PLT against another algorithm, ε by ε: higher by more than the larger sd at ε = 1, level at ε = 2
    other = {"records": [{**r, "algorithm": "dp-fedsgd", "test_accuracy": r["test_accuracy"] - (0.1 if r[
        "epsilon_target"] == 1.0 else 0.05)} for r in fair["records"] if r["algorithm"] == "dpfl"]}
    both = {"records": fair["records"] + other["records"]}
    assert view.pair_counts(both, 1.0, "fed-plt", "dp-fedsgd") == {"higher": 1, "level": 1, "lower": 0}
    assert view.pair_counts(both, 1.0, "dp-fedsgd", "fed-plt") == {"higher": 0, "level": 1, "lower": 1}
    assert view.pair_counts(both, 2.0, "fed-plt", "dp-fedsgd") == {"higher": 0, "level": 0, "lower": 0}


def test_pending_results_are_none_never_computed(results_dir):
    assert view.fair_computed("quick") is None
    assert view.stored_old_tunings("quick") is None
    assert t1_view.computed("quick") is None
    assert not results_dir.exists() or not any(results_dir.rglob("*.json"))


@pytest.mark.stored
def test_the_pending_t2_table_reads_the_stored_tuning_runs():
    old = view.stored_old_tunings("paper")
    if old is None:
        pytest.skip("T2's tuning is not stored")
    frame = view.clip_frame(old)
    assert len(frame) == len(t2_fair.PRIVATE) + 1
    plt = frame.loc[view.LABELS["fed-plt"]]
    assert plt["C = 0.3"] == plt["C = 1"] == "—" and plt["C = 0.1"].endswith("(of 12)")
    assert "pending" in view.pending_text("paper").markdown


@pytest.mark.stored
def test_the_t1_clip_table_counts_every_cell():
    from fedrepro.core.cache import load_if_computed
    from fedrepro.experiments.headtohead import t1

    stored = load_if_computed(t1.T1Config())
    if stored is None:
        pytest.skip("T1 is not stored")
    frame = t1_view.clip_selection_frame(stored.result)
    assert list(frame.index) == [t1_view.LABELS[a] for a in t1_fair.GRIDS]
    assert frame.loc[t1_view.LABELS["fed-plt"], "C = 0.3"] == "not in the grid"
    assert set(frame["fair grid"]) == {"0.3, 1"}


@pytest.mark.stored
def test_the_t2_page_sentence_on_fedplt_follows_the_stored_tables():
    """"The fixed clip explains part of its gap, not the distance to DPFL" (T2 page, claims):
    with fair axes Fed-PLT's distance to the best shrinks at every ε and stays beyond the seed
    spread at every ε; the page quotes the counts through glue."""
    from fedrepro.chapters.headtohead import t2_report

    table = view.fair_computed("paper")
    assert table is not None
    fair = view.final_computed("paper", table)
    _, old = t2_report.load_computed("paper")
    budget = t2_fair.T2FairTuningConfig.for_profile("paper").protocol().budget_bits
    s = view.fair_summary(fair, old, budget)
    assert s["fair_gap_fed-plt_high"] < s["old_gap_fed-plt_low"]
    assert s["fair_top_fed-plt"] == 0 and s["fair_leads_dpfl"] == s["epsilons"]


@pytest.mark.stored
def test_no_t1_verdict_changes_with_fair_axes_as_the_index_says():
    """The index: "with the clip tuned over the same set by every algorithm, no verdict of T1
    changes" — every algorithm's verdict against the leader at every ε (the seed-spread rule)
    is the same on the fair grids as on T1's."""
    from fedrepro.experiments.headtohead import t1

    fair = t1_view.computed("paper")
    assert fair is not None
    cfg = t1.T1Config.for_profile("paper")
    old = t1.load_t1("paper")
    assert view.verdicts(fair, cfg.budget_bits) == view.verdicts(old, cfg.budget_bits)


@pytest.mark.stored
def test_the_fair_edge_probe_supports_the_pages_reading():
    """The T2 page ("Reading the probe around the fair selections") and the index: four of the
    five private algorithms do better one step beyond the fair edges on validation; Fed-PLT's
    binding edge is the clip (C = 10/3) and DPFL's the local steps (12); each gains more than
    its seed spread on the test set while DP-FedSGD's gain is within it; the float32 FedPAQ does
    not bind and the quantized one stays near chance; the order of the three that learn and
    DPFL's lead do not move, and Fed-PLT's distance to DPFL stays within a point of the fair
    selections' (above five points)."""
    from fedrepro.chapters.headtohead import t2_edges_report
    from fedrepro.chapters.headtohead import t2_fair_edges_report as rep

    data = rep.stored("paper")
    assert data is not None
    f = rep.facts(data)
    v = {x["algorithm"]: x for x in t2_edges_report.verdicts(data)}
    assert f["algorithms"] == 5 and f["binds"] == 4
    assert {a for a, x in v.items() if x["binds"]} == {"dp-fedsgd", "dpfl", "fedpaq-q", "fed-plt"}
    plt, dpfl = v["fed-plt"], v["dpfl"]
    assert plt["extension_config"]["clip"] == pytest.approx(10 / 3)
    assert {k: plt["extension_config"][k] for k in ("local_steps", "lr", "rho")} == \
        {k: plt["grid_config"][k] for k in ("local_steps", "lr", "rho")}
    assert dpfl["extension_config"]["local_steps"] == 12 and dpfl["extension_config"]["clip"] == 1.0
    for x in (plt, dpfl):  # beyond the larger of the two seed spreads (the book's rule)
        assert x["extension_test"] - x["grid_test"] > max(x["extension_test_sd"], x["grid_test_sd"])
    sgd = v["dp-fedsgd"]
    assert abs(sgd["extension_test"] - sgd["grid_test"]) <= max(sgd["extension_test_sd"], sgd["grid_test_sd"])
    assert not v["fedpaq"]["binds"] and v["fedpaq-q"]["extension_test"] < 0.15
    r = t2_edges_report.ranking(data)
    assert r["grid"][:3] == r["wider"][:3] == ["dpfl", "fed-plt", "dp-fedsgd"]
    assert f["order_moves"] == f["leader_changes"] == 0
    assert f["gap_wider"] > 5 and abs(f["gap_wider"] - f["gap_grid"]) < 1
    # the seed-spread verdicts the page states: DPFL above Fed-PLT beyond the larger sd, on the
    # fair selections and one step beyond; Fed-PLT and DP-FedSGD level (difference <= larger sd)
    for test, sd in (("grid_test", "grid_test_sd"), ("extension_test", "extension_test_sd")):
        assert dpfl[test] - plt[test] > max(dpfl[sd], plt[sd])
        assert abs(plt[test] - sgd[test]) <= max(plt[sd], sgd[sd])
