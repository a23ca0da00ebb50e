"""``tests/planted_bugs.py`` stays applicable: each planted bug's original text occurs exactly
once in its module (the script refuses to run otherwise), and planting it changes the module."""

from __future__ import annotations

import shutil

import pytest

from tests import planted_bugs


def test_six_bugs_of_the_issue_are_listed():
    assert len(planted_bugs.BUGS) == 6
    assert len({b.module for b in planted_bugs.BUGS}) == 6


@pytest.mark.parametrize("bug", planted_bugs.BUGS, ids=lambda b: b.module)
def test_each_planted_bug_applies_once(bug, tmp_path):
    lib = tmp_path / "fedrepro"
    src = planted_bugs.ROOT / "lib" / "fedrepro" / bug.module
    (lib / bug.module).parent.mkdir(parents=True)
    shutil.copy(src, lib / bug.module)
    before = (lib / bug.module).read_text()
    planted_bugs.plant(bug, lib)
    after = (lib / bug.module).read_text()
    assert after != before and after.count(bug.planted) == 1
    assert all((planted_bugs.ROOT / "tests" / t).exists() for t in bug.tests)


def test_plant_refuses_an_ambiguous_or_missing_original(tmp_path):
    bug = planted_bugs.BUGS[0]
    (tmp_path / bug.module).parent.mkdir(parents=True)
    (tmp_path / bug.module).write_text("nothing to plant here\n")
    with pytest.raises(ValueError, match="occurs 0 times, expected once"):
        planted_bugs.plant(bug, tmp_path)
    (tmp_path / bug.module).write_text(bug.original + "\n" + bug.original + "\n")
    with pytest.raises(ValueError, match="occurs 2 times, expected once"):
        planted_bugs.plant(bug, tmp_path)
