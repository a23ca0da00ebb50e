"""The numbers the Fed-PLT theory page glues into its prose
(:mod:`fedrepro.chapters.fedplt.theory.facts`), recomputed here by a plain loop over the stored
units of the logistic Proposition 1 check, and the statements the prose makes around them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.fedplt.theory import facts, jacobian
from fedrepro.core.cache import read_only
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "fedplt" / "theory.ipynb"


@pytest.fixture(scope="module")
def stored():
    with read_only():
        return jacobian.load_jacobian("paper"), facts.glued("paper")


def _loop(result, variant):
    """(ratio, rho, ratio at the fixed point) of every applicable instance, one by one."""
    out = []
    for unit in result["units"].values():
        observed, fixed = np.asarray(unit["observed"]), np.asarray(unit["at_fixed_point"])
        bound, ok = np.asarray(unit[f"bound_{variant}"]), np.asarray(unit[f"applicable_{variant}"])
        for i, rho in enumerate(result["rhos"]):
            for j in range(ok.shape[1]):
                if ok[i, j]:
                    out.append((observed[i, j] / bound[i, j], float(rho), fixed[i, j] / bound[i, j]))
    return np.array(out)


@pytest.mark.stored
def test_glued_numbers_are_the_stored_instances(stored):
    result, glued = stored
    printed, corrected = _loop(result, "paper"), _loop(result, "corrected")
    below = printed[:, 1] < 1
    fails = printed[:, 0] > 1 + 1e-9
    assert glued["fedplt-theory-j-failing-below-1"] == str(int(np.sum(fails & below)))
    assert glued["fedplt-theory-j-applicable-below-1"] == str(int(np.sum(below)))
    assert glued["fedplt-theory-j-max-printed"] == f"{printed[:, 0].max():.2f}"
    assert glued["fedplt-theory-j-fixed-median-printed"] == f"{np.median(printed[:, 2]):.2f}"
    assert glued["fedplt-theory-j-fixed-median-corrected"] == f"{np.median(corrected[:, 2]):.2f}"


@pytest.mark.stored
def test_the_statements_around_the_glued_numbers(stored):
    result, _ = stored
    printed, corrected = _loop(result, "paper"), _loop(result, "corrected")
    # "no sampled state gives ||J|| > ||S~||"; "the largest ratio is 1 to within 1e-10"
    assert corrected[:, 0].max() <= 1 + 1e-9 and abs(corrected[:, 0].max() - 1) < 1e-10
    # "reached at rho < 1"; "it fails at none with rho >= 1"; "already at the fixed point"
    assert corrected[np.argmax(corrected[:, 0]), 1] < 1
    assert not np.any((printed[:, 0] > 1 + 1e-9) & (printed[:, 1] >= 1))
    assert np.median(printed[printed[:, 1] < 1, 2]) > 1
    # "at the fixed point itself the ratio is smaller"
    assert np.median(corrected[:, 2]) < 1


@pytest.mark.stored
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(stored):
    _, glued = stored
    assert prose.glue_coverage(PAGE, glued) == (set(), set())
    assert "facts.glued(profile)" in PAGE.read_text(encoding="utf-8")
