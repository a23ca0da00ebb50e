"""What it would take to reach the paper's level: the stated grid, the accounting-validity
rule, the wide model, the view's tables and the cause of a miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, setting, training, validity, wide
from fedrepro.chapters.alidpfl import what_it_takes as view
from fedrepro.experiments.alidpfl import what_it_takes as runs

# ---------------------------------------------------------------- the stated grid


def test_the_grid_is_the_one_stated_in_the_docstring():
    ladders = {k: tuple(r.multiplier for r in rungs) for k, (_, rungs) in runs.KNOBS.items()}
    assert ladders == {"recipe": (1.0,), "eta": (2, 4, 8, 16, 32), "clip": (0.25, 0.5, 2, 4), "steps": (2, 4),
                       "batch": (2, 4), "width": (2,), "split": (None, None, None), "code": (1, 4, 16)}
    doc = runs.__doc__
    for text in ("η × {2, 4, 8, 16, 32}", "C × {0.25, 0.5, 2, 4}", "τ × {2, 4}", "q × {2, 4}", "× {2}",
                 "η × {1, 4, 16}", "4 shards per client", "Dirichlet(1.0)", "IID"):
        assert text in doc, text
    eta = dict(runs.KNOBS["eta"][1][2].plan)["eta"]
    assert eta == pytest.approx(8 * setting.PAPER.eta)  # rung 2 is x 8
    assert runs.KNOBS["steps"][1][1].tau == 4
    assert dict(runs.KNOBS["clip"][1][0].plan)["clip_norm"] == pytest.approx(0.025)


def test_rounds_are_79_and_the_public_code_rounds_come_from_the_accountant():
    assert runs.rung_rounds(runs.KNOBS["eta"][1][0]) == 79
    assert runs.rung_rounds(runs.KNOBS["code"][1][0]) == 3  # q = 0.05, improved conversion, eps = 1.55
    assert runs.rung_rounds(runs.KNOBS["eta"][1][0], "quick") == 2


def test_config_rejects_an_unknown_knob_and_names_units_by_rung_and_seed():
    with pytest.raises(ValueError, match="knob"):
        runs.WhatItTakesConfig(knob="momentum")
    with pytest.raises(ValueError, match="seeds"):
        runs.WhatItTakesConfig(seeds=())
    cfg = runs.WhatItTakesConfig(knob="steps", seeds=(0, 1))
    assert cfg.units() == ["0@seed0", "1@seed0", "0@seed1", "1@seed1"]
    assert cfg.result_name() == "what-it-takes-steps-seeds0-1"
    assert runs.WhatItTakesConfig(knob="eta", profile="quick").result_name() == "what-it-takes-eta-quick"


# ---------------------------------------------------------------- the accounting rule


def _acc(**kw) -> validity.RunAccounting:
    base = dict(epsilon=1.55, steps=79, q=0.015, sigma=1.1, delta=1e-5)
    base.update(kw)
    return validity.RunAccounting(**base)


def test_the_papers_79_steps_are_valid_and_one_more_breaks_the_accounting():
    assert validity.allowed_steps(1.55, 0.015, 1.1, 1e-5) == 79
    ok, why = validity.accounting_valid(_acc())
    assert ok and "allows 79" in why
    ok, why = validity.accounting_valid(_acc(steps=80))
    assert not ok and "allows only 79" in why


@pytest.mark.parametrize(("change", "valid"), [
    ({"q": 0.03}, False),                        # q x 2 at 79 steps: eps allows 3
    ({"q": 0.06}, False),                        # one step already spends more than 1.55
    ({"steps": 158}, False),                     # two steps per round for 79 rounds
    ({"per_sample_clip": False}, False),
    ({"noise_matches_clip": False}, False),
    ({"divisor_data_independent": False}, False),
    ({"q": 0.05, "steps": 3, "conversion": "improved"}, True),   # the public code's R_c
    ({"q": 0.05, "steps": 3}, False),                          # the same under the paper's conversion
])
def test_each_condition_of_the_rule(change, valid):
    assert validity.accounting_valid(_acc(**change))[0] is valid


def test_step_size_clip_and_width_rungs_keep_the_paper_profile_accounting():
    """Validity of the paper-profile rungs, from what each would run (no training)."""
    def check(knob: str, i: int) -> bool:
        rung = runs.KNOBS[knob][1][i]
        steps = runs.rung_rounds(rung) * rung.tau
        q = dict(rung.plan).get("q", setting.PAPER.q)
        return validity.accounting_valid(_acc(steps=steps, q=q, conversion=rung.conversion))[0]

    assert all(check("eta", i) for i in range(5)) and all(check("clip", i) for i in range(4))
    assert check("width", 0) and all(check("split", i) for i in range(3)) and all(check("code", i) for i in range(3))
    assert not any(check("steps", i) for i in range(2)) and not any(check("batch", i) for i in range(2))


def test_run_accounting_names_its_bad_parameter():
    with pytest.raises(ValueError, match="steps"):
        _acc(steps=-1)
    with pytest.raises(ValueError, match="conversion"):
        _acc(conversion="tight")
    with pytest.raises(ValueError, match="q"):
        _acc(q=0.0)


# ---------------------------------------------------------------- the wide model


def _plan(**kw) -> training.RunPlan:
    base = dict(budgets=budget.Budgets(2.0, 2, 4), tau=2, q=0.1, eval_rounds=(2,), curve_every=1, curve_size=30,
                method="stacked", eta=2.0)
    base.update(kw)
    return training.RunPlan(**base)


def test_width_one_is_the_papers_model_and_run():
    torch.manual_seed(0)
    a = wide.make_wide_cnn((1, 28, 28), 1, seed=3)
    from fedrepro.alidpfl.models import make_cnn
    b = make_cnn((1, 28, 28), seed=3)
    for p, r in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, r)
    plan = _plan()
    mine = wide.train_wide(plan, tiny_data_cached(), 1)
    theirs = training.train(plan, tiny_data_cached()).as_dict()
    # same draws, same arithmetic up to float32 summation order: 1e-6 on the accuracy of 60 records
    assert mine["final_accuracy"] == pytest.approx(float(theirs["eval_accuracy"][-1]), abs=1e-6)
    assert mine["final_loss"] == pytest.approx(float(theirs["eval_loss"][-1]), rel=1e-4)
    assert mine["sampled_records"] == int(theirs["sampled_records"])
    assert mine["iterations"] == 4


def test_width_two_has_four_times_the_hidden_weights_and_trains():
    model = wide.make_wide_cnn((1, 28, 28), 2, seed=0)
    assert (model.conv1.out_channels, model.conv2.out_channels, model.fc1.out_features) == (64, 128, 1024)
    out = wide.train_wide(_plan(), tiny_data_cached(), 2)
    assert out["d"] == sum(p.numel() for p in model.parameters())
    assert 0.0 <= out["final_accuracy"] <= 1.0 and np.isfinite(out["final_loss"])
    with pytest.raises(ValueError, match="width"):
        wide.train_wide(_plan(), tiny_data_cached(), 0)
    with pytest.raises(ValueError, match="tau"):
        wide.train_wide(_plan(tau=None), tiny_data_cached(), 2)


_TINY: list = []


def tiny_data_cached():
    if not _TINY:
        rng = np.random.default_rng(0)
        tr_y = np.repeat(np.arange(10), 40)
        tr_x = rng.integers(0, 256, (400, 28, 28), dtype=np.uint8)
        te_y = rng.integers(0, 10, 60)
        te_x = rng.integers(0, 256, (60, 28, 28), dtype=np.uint8)
        s = setting.FederatedSetting(n_clients=2, n_shards=20, shards_per_client=10)
        _TINY.append(setting.build_clients(s, np.random.default_rng(1), arrays=(tr_x, tr_y, te_x, te_y)))
    return _TINY[0]


# ---------------------------------------------------------------- the view


def _unit(acc: float, steps: int = 79, q: float = 0.015) -> dict:
    return {"final_accuracy": acc, "steps": steps, "q": q, "sigma": 1.1}


def _synthetic() -> dict:
    """Stored-result shapes with made-up accuracies (seed 0; eta's x 8 rung also under seed 1)."""
    return {"recipe": {"0@seed0": _unit(0.54)},
            "eta": {"0@seed0": _unit(0.60), "1@seed0": _unit(0.66), "2@seed0": _unit(0.79),
                    "2@seed1": _unit(0.81), "3@seed0": _unit(0.85), "4@seed0": _unit(0.20)},
            "clip": {f"{i}@seed0": _unit(a) for i, a in enumerate((0.50, 0.52, 0.56, 0.57))},
            "steps": {"0@seed0": _unit(0.70, 158), "1@seed0": _unit(0.83, 316)},
            "batch": {"0@seed0": _unit(0.65, 79, 0.03), "1@seed0": _unit(0.72, 79, 0.06)},
            "width": {"0@seed0": _unit(0.51)},
            "split": {f"{i}@seed0": _unit(a) for i, a in enumerate((0.30, 0.55, 0.58))},
            "code": {f"{i}@seed0": _unit(a, 3, 0.05) for i, a in enumerate((0.60, 0.65, 0.70))}}


def test_what_it_takes_frame_has_one_row_per_knob_and_the_smallest_reaching_rung():
    frame = view.what_it_takes_frame(_synthetic(), 80.0)
    assert list(frame.columns) == ["range searched", "smallest reaching the paper", "accuracy reached (%)",
                                   "accounting valid"]
    assert len(frame) == len(runs.KNOBS) - 1 + 1  # every knob but the recipe, plus the divisor row
    eta = frame.loc[runs.KNOBS["eta"][0]]
    # x 8 reaches (mean 80.0 of two seeds; x 16 is higher but not the smallest)
    assert eta["smallest reaching the paper"] == "eta x 8"
    assert eta["accuracy reached (%)"] == "80.0 (79.0 to 81.0, 2 seeds)" and eta["accounting valid"] == "yes"
    steps = frame.loc[runs.KNOBS["steps"][0]]
    assert steps["smallest reaching the paper"] == "steps x 4" and steps["accounting valid"] == "no"
    clip = frame.loc[runs.KNOBS["clip"][0]]
    assert clip["smallest reaching the paper"] == "none within the range"
    assert clip["accuracy reached (%)"].startswith("57.0 (1 seed), best: C x 4")
    assert frame.iloc[1]["smallest reaching the paper"] == "/ 8"


def test_rungs_frame_lists_every_rung_with_its_computed_validity():
    frame = view.rungs_frame(_synthetic(), 80.0)
    assert len(frame) == sum(len(r) for _, r in runs.KNOBS.values())
    assert frame.loc[("batch", "q x 2"), "accounting valid"] == "no"
    assert frame.loc[("eta", "eta x 2"), "accounting valid"] == "yes"
    assert frame.loc[("eta", "eta x 8"), "accuracy (%)"] == 80.0


def test_figure_draws_one_line_per_numeric_knob_and_the_paper():
    import matplotlib
    matplotlib.use("Agg")
    fig = view.figure_ladders(_synthetic(), 80.0)
    ax = fig.axes[0]
    assert len(ax.get_legend().get_texts()) == len(runs.KNOBS) - 2 + 1  # no recipe, no split; + the paper


# ---------------------------------------------------------------- the cause of a miss


READ = [("eta: x 8", 79.5, True), ("steps: x 4", 83.0, False), ("clip: x 2", 56.0, True)]


def test_classify_reproduced_when_a_valid_reading_lands_at_the_reference_cell():
    cause, strength, reason = view.classify_miss(80.0, 54.0, 2.0, 54.0, READ, direct=True)
    assert (cause, strength) == ("unstated-setting", "reproduced") and "eta: x 8" in reason


def test_classify_consistent_when_the_paper_lies_in_the_span_but_no_run_lands():
    cause, strength, _ = view.classify_miss(70.0, 54.0, 2.0, 54.0, READ, direct=True)
    assert (cause, strength) == ("unstated-setting", "consistent")
    # elsewhere the gains are carried over, never run: at most consistent, even when one would land
    cause, strength, reason = view.classify_miss(85.0, 60.0, 2.0, 54.0, READ, direct=False)
    assert (cause, strength) == ("unstated-setting", "consistent") and "carried over" in reason


def test_classify_excluded_when_every_valid_reading_misses():
    # only the invalid reading (83 %) would land: it does not count
    cause, strength, reason = view.classify_miss(83.0, 54.0, 2.0, 54.0, READ, direct=True)
    assert (cause, strength) == ("model-or-data-differs", "excluded")
    assert "54.0 to 79.5" in reason and "above" in reason
    with pytest.raises(ValueError, match="tolerance"):
        view.classify_miss(83.0, 54.0, -1.0, 54.0, READ, direct=True)


def test_miss_cause_is_open_for_items_the_study_cannot_speak_to_and_names_its_evidence():
    assert view.miss_cause({"id": "alidpfl-main-C14", "paper_value": True, "ours": False})[:2] == ("open", "open")
    assert view.miss_cause({"id": "alidpfl-main-TII-tau-1-rs-eq-rc-cifar10-eps-2", "paper_value": 56.4,
                            "ours": 30.0, "tolerance": {"abs": 2.0}})[:2] == ("open", "open")
    cause, strength, evidence, _ = view.miss_cause(
        {"id": view.REFERENCE_CELL, "paper_value": 80.0, "ours": 54.0, "tolerance": {"abs": 2.0}},
        results=_synthetic())
    assert (cause, strength) == ("unstated-setting", "reproduced")
    assert "alidpfl/what-it-takes-eta.json" in evidence


@pytest.mark.slow
def test_quick_profile_runs_each_kind_of_rung(results_dir):
    """A rung of the paper's model, of the wide model and of the public code, end to end."""
    for knob in ("recipe", "width"):
        out = runs.load_knob(knob, "quick")
        assert set(out) == {f"{i}@seed0" for i in range(len(runs.KNOBS[knob][1]))}
        assert all(0.0 <= r["final_accuracy"] <= 1.0 and r["steps"] == 2 for r in out.values())
    code = runs.run_rung(runs.WhatItTakesConfig(profile="quick", knob="code"), "2@seed0")
    assert code["q"] == 0.05 and code["eta"] == pytest.approx(8.0) and code["rounds"] == 2


def test_reading_seeds_join_the_rungs_that_are_the_same_runs():
    seeds = {0: {}, 1: {"eta-4": {"eval_rounds": np.array([79]), "eval_accuracy": np.array([0.70])},
                        "spec": {"eval_rounds": np.array([79]), "eval_accuracy": np.array([0.52])}},
             2: {"eta-4": {"eval_rounds": np.array([79]), "eval_accuracy": np.array([0.74])}}}
    results = {"recipe": {"0@seed0": {**_unit(0.54), "rounds": 79}},
               "eta": {"2@seed0": {**_unit(0.72), "rounds": 79}}}
    out = view.with_reading_seeds(results, seeds)
    assert sorted(out["eta"]) == ["2@seed0", "2@seed1", "2@seed2"] and sorted(out["recipe"]) == ["0@seed0", "0@seed1"]
    assert out["eta"]["2@seed2"]["final_accuracy"] == 0.74 and out["eta"]["2@seed2"]["steps"] == 79
    assert "2@seed1" not in results["eta"]  # the input is not changed
    frame = view.rungs_frame(out, 80.0)
    assert frame.loc[("eta", "eta x 8"), "accuracy (%)"] == 72.0
    seeds[1]["spec"]["eval_rounds"] = np.array([3])
    with pytest.raises(ValueError, match="rounds"):
        view.with_reading_seeds(results, seeds)


def test_miss_split_counts_each_cause_and_strength():
    items = [{"id": view.REFERENCE_CELL, "paper_value": 80.0, "ours": 54.0, "tolerance": {"abs": 2.0}},
             {"id": "alidpfl-main-TII-tau-2-rs-eq-rc-fmnist-eps-2", "paper_value": 82.9, "ours": 60.0,
              "tolerance": {"abs": 2.0}},
             {"id": "alidpfl-main-TII-tau-2-rs-eq-rc-fmnist-eps-1p75", "paper_value": 99.0, "ours": 60.0,
              "tolerance": {"abs": 2.0}}]
    causes = [view.miss_cause(item, "paper", _synthetic())[:2] for item in items]
    assert causes == [("unstated-setting", "reproduced"), ("unstated-setting", "consistent"),
                      ("model-or-data-differs", "excluded")]
    # the page's split reads the committed scorecard: items it does not list are not misses
    assert view.scorecard_split([{"id": "alidpfl-main-no-such-cell"}]) == [("not a miss", "")]
    facts = view.glued(_synthetic(), 80.0, items)
    split = view.scorecard_split(items)
    assert facts["misses"] == "3"
    assert facts["unstated"] == str(sum(c == "unstated-setting" for c, _ in split))
    assert facts["differs"] == str(sum(c == "model-or-data-differs" for c, _ in split))
    assert facts["best-valid"] == "eta x 16" and facts["best-broken"] == "steps x 4"


def test_the_page_split_is_the_scorecards_and_agrees_with_the_search_on_the_stored_misses():
    """The scorecard's split (the strength rule on every reading, the search's included) and
    :func:`miss_cause` (the search alone, same rule) agree on every stored table miss's strength
    where the search decides it; the frame counts every miss once."""
    import json

    items = view.table_misses("paper")
    split = view.scorecard_split(items)
    assert all(c in ("unstated-setting", "model-or-data-differs") for c, _ in split)
    frame = view.miss_split_frame(items, None)
    assert frame.loc[("all", ""), "misses"] == len(items) == sum(frame["misses"].iloc[:-1])
    scored = json.loads((Path(__file__).resolve().parents[1] / "data" / "results" / "scorecard.json").read_text())
    by_id = {i["id"]: i for i in scored["items"]}
    assert [(by_id[i["id"]]["cause"], by_id[i["id"]]["strength"]) for i in items] == split
    # the scorecard's readings include the search's, so a miss the search alone brackets
    # (consistent) stays bracketed: the scorecard never calls it excluded
    search = dict(zip((i["id"] for i in items), (view.miss_cause(i, "paper")[:2] for i in items), strict=True))
    for item, (_cause, strength) in zip(items, split, strict=True):
        if search[item["id"]][1] == "consistent":
            assert strength in ("consistent", "reproduced"), item["id"]


def test_the_stored_tables_misses_are_fashion_mnist_cells_beyond_the_tolerance():
    items = view.table_misses("paper")
    assert items and all("-fmnist-" in it["id"] for it in items)
    assert all(abs(it["ours"] - it["paper_value"]) > 2.0 for it in items)


def test_a_knob_not_run_is_listed_with_the_validity_of_its_stated_rungs():
    results = {k: v for k, v in _synthetic().items() if k not in ("steps", "width")}
    frame = view.what_it_takes_frame(results, 80.0)
    assert len(frame) == len(runs.KNOBS)  # the knobs but the recipe, the divisor row
    steps = frame.loc[runs.KNOBS["steps"][0]]
    assert steps["smallest reaching the paper"].startswith("not run") and steps["accounting valid"] == "no (every rung)"
    assert frame.loc[runs.KNOBS["width"][0], "accounting valid"] == "yes (every rung)"
    assert not validity.accounting_valid(view.planned_accounting(runs.KNOBS["batch"][1][0]))[0]
    assert validity.accounting_valid(view.planned_accounting(runs.KNOBS["code"][1][2]))[0]


def test_the_facts_name_each_knobs_best_and_top_rungs():
    facts = view.glued(_synthetic(), 80.0, [])
    assert facts["eta-best"] == "eta x 16" and facts["eta-best-acc"] == "85.0"
    assert facts["eta-last-acc"] == "20.0" and facts["eta-second-last-acc"] == "85.0"
    assert facts["clip-best"] == "C x 4" and facts["misses"] == "0"
    assert facts["reaching-valid"] == "eta" and facts["recipe"] == "54.0"
    assert facts["clip-x0p25-acc"] == "50.0" and facts["eta-x8-acc"] == "80.0"
