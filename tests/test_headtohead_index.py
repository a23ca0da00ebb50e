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


def test_where_the_client_sizes_enter():
    """The threat-model section's account of the sizes n_i (treated as public): the server of the
    update-averaging algorithms weights by n_i, Fed-PLT's server by equal weights; the
    participation schedule is drawn from the number of clients alone, and on T2 it takes every
    client in every round. Checked on the library's own functions (exact arithmetic up to
    float64 round-off, 1e-12)."""
    import inspect
    from types import SimpleNamespace

    import numpy as np

    from fedrepro.headtohead import algorithms as alg
    from fedrepro.headtohead import softmax as engine
    from fedrepro.headtohead.t2_task import N_CLIENTS

    problem = SimpleNamespace(sizes=np.array([1, 3, 6]))
    messages = np.array([[1.0], [2.0], [4.0]])
    state = {"x": np.zeros(1)}
    alg.DPFL().aggregate(problem, state, np.array([0, 1, 2]), messages)
    assert state["x"][0] == pytest.approx((1 * 1 + 3 * 2 + 6 * 4) / 10, abs=1e-12)  # weights n_i
    plt_state = {"z": np.zeros((3, 1))}
    alg.FedPLT().aggregate(problem, plt_state, np.array([0, 1, 2]), messages)
    assert plt_state["y"][0] == pytest.approx(7 / 3, abs=1e-12)  # equal weights
    assert list(inspect.signature(engine.participation_schedule).parameters) == [
        "n_clients", "clients_per_round", "rounds", "rng"]
    every = engine.participation_schedule(N_CLIENTS, N_CLIENTS, 4, np.random.default_rng(0))
    assert (every == np.arange(N_CLIENTS)).all()


def test_the_threat_model_section_states_the_size_assumption():
    text = (BOOK / "index.md").read_text(encoding="utf-8")
    section = text.split("## One threat model, one accountant", 1)[1].split("\n## ", 1)[0]
    flat = " ".join(section.split())
    assert "treats the client dataset sizes $n_i$ as public" in flat
    assert "Were the sizes private" in flat
