"""The numbers of the Fed-PLT problems page that the errata cite
(:mod:`fedrepro.chapters.fedplt.problems_facts`): each against the table "v1's stated constants
against sampled curvatures" that the page shows, and the statements of the errata entry around
them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.fedplt import problems as problems_report
from fedrepro.chapters.fedplt import problems_facts
from fedrepro.core.cache import read_only
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "fedplt" / "problems.ipynb"
ROWS = {
    "fedplt-problems-v1-at-zero": "measured min_i lam_min(grad^2 f_i) at x = 0",
    "fedplt-problems-v1-eps-over-n": "corrected: eps/N",
    "fedplt-problems-v1-stated-lam-bar": "paper: lam_bar = max_i q_i/4 + eps",
    "fedplt-problems-v1-loose-lam-bar": "corrected loose: max_i q_i/4 + eps/N",
    "fedplt-problems-v1-tight-lam-bar": "corrected tight: max_i lam_max(A_i^T A_i)/(4 m_i) + eps/N",
}


@pytest.fixture(scope="module")
def stored():
    with read_only():
        result = problems_report.load("paper")
        return result, problems_report.v1_constants_frame(result), problems_facts.glued("paper")


@pytest.mark.stored
def test_every_glued_number_is_cited_and_the_page_glues_them(stored):
    _, _, glued = stored
    assert prose.glue_coverage(PAGE, glued) == (set(), set())
    code = "".join("".join(c["source"]) for c in json.loads(PAGE.read_text(encoding="utf-8"))["cells"]
                   if c["cell_type"] == "code")
    assert "problems_facts.glued(profile)" in code


@pytest.mark.stored
def test_glued_constants_are_the_table_the_page_shows(stored):
    _, frame, glued = stored
    value = frame["value"]
    for name, row in ROWS.items():
        assert float(glued[name]) == pytest.approx(float(value[row]), rel=5e-3), name
    far = [q for q in value.index if "||x|| = 200" in q]
    assert len(far) == 3  # min and max over the directions for the f_i, min for the sum
    assert float(glued["fedplt-problems-v1-far-min"]) == pytest.approx(float(value[far[0]]), rel=5e-3)
    assert float(glued["fedplt-problems-v1-far-total-min"]) == pytest.approx(float(value[far[2]]), rel=5e-3)


@pytest.mark.stored
def test_the_statements_of_the_errata_entry(stored):
    result, _, _ = stored
    f = result["v1_finding"]
    eps, N = float(f["eps"]), int(f["N"])
    agents, total = np.asarray(f["agent_min_eig"]), np.asarray(f["total_min_eig"])
    # "at every one of 64 points of norm 200": the far minimum is eps/N to three digits at every point
    assert agents.size == 64 and float(f["radius"]) == 200.0
    assert np.all(np.abs(agents - eps / N) < 5e-4) and np.all(agents >= eps / N - 1e-12)
    # "0.503 at x = 0 and at x*": both round alike; "the smallest eigenvalue of the sum is 5" at every point
    assert f"{f['at_zero']:.3g}" == f"{f['at_x_star']:.3g}"
    assert np.all(np.abs(total - eps) < 5e-3)
    # the stated modulus is eps, ten times eps/N; the stated smoothness carries eps where eps/N belongs
    assert float(f["stated_lam"]) == eps and float(f["corrected_lam"]) == pytest.approx(eps / N)
    assert float(f["stated_lam_bar"]) - float(f["corrected_lam_bar_loose"]) == pytest.approx(eps - eps / N)
