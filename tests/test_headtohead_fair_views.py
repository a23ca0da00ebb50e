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
