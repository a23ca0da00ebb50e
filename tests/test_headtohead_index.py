"""The statements of the head-to-head part's index page (``book/head-to-head/index.md``), checked
against the numbers its two chapters glue (the chapters' stored outputs, which the page check
keeps equal to what the stored results render). The numbers the index quotes are cited from
those chapters; these tests pin the words around them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fedrepro.report import prose

BOOK = Path(__file__).resolve().parents[1] / "book" / "head-to-head"
EPSILONS = ("0p5", "1", "2", "4", "8")


def _glued(notebook: str) -> dict[str, object]:
    """The values the chapter glues (figures aside), read back from its stored outputs."""
    return {name: ast.literal_eval(text) for name, text in prose.stored_glues(BOOK / notebook).items()
            if text is not None and not name.startswith("fig-")}


@pytest.fixture(scope="module")
def t1():
    return _glued("t1.ipynb")


@pytest.fixture(scope="module")
def t2():
    return _glued("t2.ipynb")


def test_t1_statements(t1):
    # "the algorithms built on DP-SGD lead at every epsilon"
    assert all(t1[f"h2h-t1-best_{e}"] in ("DP-FedSGD (τ = 1)", "DPFL (fixed τ)") for e in EPSILONS)
    # "Fed-PLT's private variant follows less than three points behind"
    assert all(0 < t1[f"h2h-t1-fedplt_gap_{e}"] < 0.03 for e in EPSILONS)
    # "private FedPAQ ... does not learn at all": below 20 % (chance is 10 %) at every epsilon
    assert all(t1[f"h2h-t1-acc_{a}_{e}"] < 0.2 for a in ("fedpaq", "fedpaq-q") for e in EPSILONS)
    # "a walk ... (two steps at most)"; "Fed-PLT leads from epsilon = ... on and DP-FedSGD below"
    assert t1["h2h-t1-walk-max_steps"] <= 2 and t1["h2h-t1-walk-step_limit"] == 0
    assert t1["h2h-t1-walk-fedplt_leads"] == sum(float(e.replace("p", ".")) >= t1["h2h-t1-walk-fedplt_leads_from"]
                                                 for e in EPSILONS)
    # ALI-DPFL "ends below DPFL"; "the budget then pays for a third of the rounds"
    assert t1["h2h-t1-ali-margin_high"] < 0 and t1["h2h-t1-ali-rounds_ratio"] == pytest.approx(1 / 3)


def test_t2_statements(t2):
    # "DPFL ... leads at every epsilon"; "Fed-PLT's private variant follows far behind"
    assert all(t2[f"h2h-t2-best_{e}"] == "DPFL (fixed τ)" for e in EPSILONS)
    assert t2["h2h-t2-gap_dpfl_high"] == 0 and t2["h2h-t2-gap_fed-plt_low"] > 0.10
    assert 0 < t2["h2h-t2-gap_dp-fedsgd_low"] <= t2["h2h-t2-gap_dp-fedsgd_high"]
    # "private FedPAQ stays at chance"
    assert all(t2[f"h2h-t2-acc_{a}_{e}"] < 0.2 for a in ("fedpaq", "fedpaq-q") for e in EPSILONS)
    # "from epsilon = 0.5 to 8 the leaders' accuracy barely moves": within one point
    assert t2["h2h-t2-range_dpfl"] < 0.01
    # ALI-DPFL "again ends below DPFL"; the edges keep "the order of the three and DPFL's lead"
    assert t2["h2h-t2-ali-margin_high"] < 0
    assert t2["h2h-t2-edges-order_moves"] == 0 and t2["h2h-t2-edges-leader_changes"] == 0
