"""The strength of a miss's cause: the rule (each strength can come out, and it can fail), the
committed scorecard (every miss has a valid strength; a reproduced one really lands), and the
evidence references to tests and page sections."""

from __future__ import annotations

from pathlib import Path

import pytest

from fedrepro.report import scorecard, strength
from fedrepro.report.scorecard import Outcome
from fedrepro.report.strength import Readings, judge

REPO = Path(__file__).resolve().parents[1]
TOL = {"rel": 0.25}  # the tolerance of the synthetic items: a reading within 25 % lands


def test_a_reading_within_tolerance_is_reproduced_and_keeps_its_sign():
    got = judge(100.0, TOL, Readings({"a": 130.0, "b": 80.0}, "fedplt/x.json"), ours=300.0)
    assert got.strength == "reproduced" and got.reading == "b"
    assert got.signed_distance == pytest.approx(-20.0, abs=1e-12)  # b lies below the paper: negative
    assert got.range == (80.0, 300.0)


def test_bracketing_readings_or_grid_points_are_consistent_never_reproduced():
    # no reading lands, but the paper lies between two of them
    got = judge(100.0, TOL, Readings({"a": 40.0, "b": 200.0}, "fedplt/x.json"))
    assert got.strength == "consistent" and got.range == (40.0, 200.0)
    # a grid whose points bracket the paper, however close one of them: consistent
    got = judge(100.0, TOL, Readings({}, "fedplt/x.json", span=(99.0, 500.0)), ours=300.0)
    assert got.strength == "consistent" and got.signed_distance is None


def test_an_overshoot_is_excluded_with_its_signed_distance():
    # the FedLin case: the main setting 55, the reading moves to 3, the paper's 7; the search
    # spans 3 to 4 -- with the main setting the readings span 3 to 55: consistent, and the
    # signed distance of the closest reading is -4 (an overshoot, not a closed gap)
    got = judge(7.0, TOL, Readings({"tight": 3.0}, "fedplt/x.json", span=(3.0, 4.0)), ours=55.0)
    assert got.strength == "consistent" and got.signed_distance == pytest.approx(-4.0, abs=1e-12)
    # without the main setting above it, every reading falls short: excluded
    got = judge(7.0, TOL, Readings({"tight": 3.0}, "fedplt/x.json", span=(3.0, 4.0)))
    assert got.strength == "excluded" and got.range == (3.0, 4.0)
    assert got.signed_distance == pytest.approx(-4.0, abs=1e-12)


def test_claims_are_reproduced_when_a_reading_makes_them_hold_else_excluded():
    assert judge("a claim", None, Readings({"r1": False, "r2": True}, "x/y.json")) == strength.Strength(
        "reproduced", "r2")
    assert judge("a claim", None, Readings({"r1": False}, "x/y.json")).strength == "excluded"


def test_a_claim_no_reading_makes_hold_is_open_while_one_is_tried_in_part():
    tried = Readings({"r1": False}, "x/y.json", partial=("r2",))
    got = judge("a claim", None, tried)
    assert got.strength == "open" and got.reading == "r1, r2 (in part)"
    assert judge("a claim", None, Readings({"r1": True}, "x/y.json", partial=("r2",))).strength == "reproduced"
    assert judge("a claim", None, Readings({}, "x/y.json", partial=("r2",))).strength == "open"
    assert judge("a claim", None, Readings({"r1": False}, "x/y.json")).strength == "excluded"
    with pytest.raises(ValueError, match="partial"):
        Readings({"r1": False}, "x/y.json", partial=("r1",))


def test_nothing_tried_is_open_and_bad_inputs_are_refused():
    assert judge(1.0, TOL, None).strength == "open"
    assert judge(1.0, TOL, Readings({}, "x/y.json")).strength == "open"
    with pytest.raises(ValueError, match="evidence"):
        Readings({"a": 1.0}, "")
    with pytest.raises(ValueError, match="span"):
        Readings({}, "x/y.json", span=(2.0, 1.0))
    with pytest.raises(ValueError, match="strength"):
        strength.Strength("likely")
    with pytest.raises(ValueError, match="paper_value"):
        judge("text", TOL, Readings({"a": 1.0}, "x/y.json"))


def test_build_gives_a_miss_its_strength_and_a_reproduced_one_its_run():
    base = dict(kind="check", paper="fedplt", ref="x", status="miss", reason="r", ours=300.0,
                paper_value=100.0, tolerance=TOL, cause="unstated-setting", evidence="fedplt/a.json")
    built = {it.id: it for it in scorecard.build({
        "t-1": Outcome(**base, readings=Readings({"r": 110.0}, "fedplt/b.json")),
        "t-2": Outcome(**base, readings=Readings({"r": 500.0}, "fedplt/b.json")),
        "t-3": Outcome(**base),
        "t-4": Outcome(**{**base, "cause": None, "evidence": ""}, readings=Readings({"r": 110.0}, "fedplt/b.json")),
        "t-5": Outcome(ours=1.0, status="match", reason="", kind="check", paper="fedplt", ref="x"),
    })}
    assert (built["t-1"].strength, built["t-1"].reading) == ("reproduced", "r")
    assert built["t-1"].evidence == "fedplt/a.json, fedplt/b.json"
    assert built["t-2"].strength == "excluded" and built["t-2"].range == [300.0, 500.0]
    assert built["t-3"].strength == "open" and built["t-4"].strength == "open"  # cause open: open
    assert "strength" not in built["t-5"].to_dict()  # not a miss: no strength
    frame = scorecard.strength_frame(built.values(), by="cause")
    assert int(frame.loc["total", "misses"]) == 4 and int(frame.loc["unstated-setting", "reproduced"]) == 1


def test_every_committed_miss_has_a_valid_strength():
    items = scorecard.load(REPO / "data" / "results" / "scorecard.json")
    misses = [it for it in items if it.status == "miss"]
    assert misses and all(it.strength in strength.STRENGTHS for it in misses)
    assert all(it.strength in ("open", "excluded") for it in misses if it.cause == "open")
    assert all(not it.strength for it in items if it.status != "miss")


def test_a_committed_reproduced_miss_really_lands():
    """Every numeric ``reproduced`` item: the reading's value (the paper's plus the signed
    distance) lies within the item's tolerance of the paper's, and ours does not; the reading's
    stored results are in its evidence (and in the store: the evidence test)."""
    items = scorecard.load(REPO / "data" / "results" / "scorecard.json")
    landed = [it for it in items if it.status == "miss" and it.strength == "reproduced"]
    assert landed
    for it in landed:
        assert it.reading and it.evidence
        if isinstance(it.paper_value, (int, float)):
            value = float(it.paper_value) + float(it.signed_distance)
            # the stored distance keeps 6 significant digits: allow that much round-off
            slack = 1e-5 * abs(float(it.paper_value))
            assert strength.lands(it.paper_value, value, it.tolerance) or strength.lands(
                it.paper_value, value - slack * (1 if it.signed_distance > 0 else -1), it.tolerance), it.id
            assert not strength.lands(it.paper_value, it.ours, it.tolerance), it.id


def test_evidence_may_name_a_test_or_a_page_section_that_exists(tmp_path):
    assert scorecard.reference_problem("tests/test_strength.py::test_evidence_may_name_a_test_or_a_page_section_that_exists",
                                       tmp_path) is None
    assert "defines no test" in scorecard.reference_problem("tests/test_strength.py::test_nothing", tmp_path)
    assert "does not exist" in scorecard.reference_problem("tests/test_nowhere.py::test_x", tmp_path)
    assert scorecard.reference_problem("book/report.ipynb#how-sure-we-are-of-each-cause", tmp_path) is None
    assert "no section" in scorecard.reference_problem("book/report.ipynb#no-such-section", tmp_path)
    assert "does not exist" in scorecard.reference_problem("book/nowhere.md", tmp_path)
    assert scorecard.reference_problem("fedplt/none.json", tmp_path) == "is not in the store"


def test_a_cause_not_understood_is_excluded_or_open_never_reproduced():
    from fedrepro.report.strength import strength_of

    landing = Readings({"r": 110.0}, "fedplt/x.json")
    assert strength_of("unstated-setting", 100.0, TOL, landing, ours=300.0).strength == "reproduced"
    assert strength_of("open", 100.0, TOL, landing, ours=300.0).strength == "open"
    missing = Readings({"r": 500.0}, "fedplt/x.json")
    assert strength_of("open", 100.0, TOL, missing, ours=300.0).strength == "excluded"


@pytest.mark.parametrize("paper_value, value, tol", [
    (100.0, 124.0, {"rel": 0.25}), (100.0, 126.0, {"rel": 0.25}), (0.531, 0.58, {"abs": 0.05}),
    (0.531, 0.59, {"abs": 0.05}), (79, 79, {"exact": True}), (1585, 1538, {"exact": True}),
])
def test_lands_is_the_scorecards_match(paper_value, value, tol):
    assert strength.lands(paper_value, value, tol) == (scorecard.compare(paper_value, value, tol)[0] == "match")
