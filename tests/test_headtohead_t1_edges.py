"""The edge probe of T1's grids (``fedrepro.chapters.headtohead.t1_edges``) and its verdicts
(``t1_edges_report``): one step beyond every edge a selection sits on, tuned by T1's own
protocol; the stored probe reproduces T1's tuning and keeps every run within its budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.chapters.headtohead import t1, t1_edges
from fedrepro.chapters.headtohead import t1_edges_report as rep
from fedrepro.headtohead import algorithms as alg


def test_axes_are_the_fields_that_vary():
    assert t1_edges.axes(t1.GRIDS["fed-plt"]) == {"lr": [0.1, 0.3, 1.0], "rho": [1.0, 10.0], "local_steps": [2, 5]}
    assert t1_edges.axes(t1.GRIDS["fed-plt"][:1]) == {}
    with pytest.raises(ValueError, match="at least one"):
        t1_edges.axes(())


@pytest.mark.parametrize("field, values, end, expected", [
    ("lr", [0.3, 1.0, 3.0], "high", 9.0),
    ("lr", [0.3, 1.0, 3.0], "low", 0.09),
    ("clip", [0.3, 1.0], "high", 1 / 0.3),
    ("rate", [0.05, 0.2], "high", 0.8),
    ("rate", [0.3, 0.6], "high", None),  # a rate above 1
    ("local_steps", [3, 10], "high", 33),
    ("local_steps", [1, 5], "low", None),  # fewer than one step
    ("levels", [2, 16], "low", None),  # fewer than two levels
    ("levels", [2, 16], "high", 128),
])
def test_one_step_beyond_an_end(field, values, end, expected):
    got = t1_edges.beyond(field, values, end)
    assert got == (pytest.approx(expected) if isinstance(expected, float) else expected)


def test_beyond_refuses_what_has_no_step():
    with pytest.raises(ValueError, match="cannot step"):
        t1_edges.beyond("lr", [1.0], "high")
    with pytest.raises(ValueError, match="cannot step"):
        t1_edges.beyond("lr", [0.1, 1.0], "middle")


def test_extensions_move_every_edge_alone_then_together():
    grid = t1.GRIDS["fed-plt"]
    top = next(i for i, c in enumerate(grid) if (c.lr, c.rho, c.local_steps) == (1.0, 10.0, 5))
    ext = t1_edges.extensions(grid, top)
    assert [(c.lr, c.rho, c.local_steps) for c in ext] == [
        (pytest.approx(10 / 3), 10.0, 5), (1.0, 100.0, 5), (1.0, 10.0, 12), (pytest.approx(10 / 3), 100.0, 12)]
    mid = next(i for i, c in enumerate(grid) if (c.lr, c.rho, c.local_steps) == (0.3, 1.0, 2))
    assert [(c.lr, c.rho, c.local_steps) for c in t1_edges.extensions(grid, mid)] == [
        (0.3, 0.1, 2), (0.3, 1.0, 1), (0.3, 0.1, 1)]  # lr in the middle: not moved
    fedpaq = t1.GRIDS["fedpaq-q"]
    low = next(i for i, c in enumerate(fedpaq) if (c.lr, c.local_steps, c.levels) == (1.0, 1, 2))
    assert t1_edges.extensions(fedpaq, low) == ()  # every edge it sits on has no step beyond
    assert all(isinstance(c, alg.PrivateFedPAQ) for c in t1_edges.extensions(fedpaq, 0))


def test_units_are_the_main_budget_cells():
    cfg = t1_edges.T1EdgesConfig()
    base = cfg.t1()
    units = t1_edges.units(cfg)
    assert units[0] == t1.unit_name("fedavg", None, base.budget_bits)
    assert len(units) == 1 + len(base.epsilons) * (len(t1.GRIDS) - 1)
    with pytest.raises(ValueError):
        t1_edges.T1EdgesConfig(profile="fast")


def test_one_quick_unit_follows_t1s_protocol(results_dir):
    cfg = t1_edges.T1EdgesConfig(profile="quick")
    unit = t1.unit_name("dpfl", 4.0, cfg.t1().budget_bits)
    out = t1_edges._run_unit(cfg, unit)
    grid = t1.grid_of(cfg.t1(), "dpfl")
    assert len(out["grid"]["tuning"]) == len(grid) and len(out["grid"]["runs"]) == 1
    ext = t1_edges.extensions(grid, int(out["grid"]["selected"]))
    assert [c["config"] for c in out["extensions"]["tuning"]] == [t1._config_dict(c) for c in ext]
    for r in out["extensions"]["runs"]:
        assert r["epsilon_spent"] == pytest.approx(4.0, rel=1e-6) and r["uplink_bits"] <= cfg.t1().budget_bits


def _unit(name, eps, grid_val, ext_val, ext_tests, edges_value=3.0):
    cands = [{"config": {"lr": v, "clip": 1.0}, "validation_accuracy": s, "diverged": False}
             for v, s in ((0.3, 0.1), (1.0, 0.2), (3.0, grid_val))]
    ext = None if ext_val is None else {
        "tuning": [{"config": {"lr": 9.0, "clip": 1.0}, "validation_accuracy": ext_val}], "selected": 0,
        "runs": [{"test_accuracy": np.array([0.0, t])} for t in ext_tests]}
    return {"algorithm": name, "epsilon_target": eps, "uplink_budget_bits": 4e8,
            "grid": {"tuning": cands, "selected": 2, "runs": []}, "extensions": ext}


def _records(name, eps, tests):
    return [{"algorithm": name, "epsilon_target": eps, "uplink_budget_bits": 4e8, "test_accuracy": t} for t in tests]


def test_verdicts_rankings_and_summary_on_known_numbers():
    data = {"edges": {"a": _unit("dpfl", 1.0, 0.5, 0.6, [0.70, 0.72, 0.74]),
                      "b": _unit("fed-plt", 1.0, 0.5, 0.4, [0.9, 0.9, 0.9]),
                      "c": _unit("fedavg", math.inf, 0.8, None, [])},
            "t1": {"records": _records("dpfl", 1.0, [0.6, 0.6, 0.6]) + _records("fed-plt", 1.0, [0.65, 0.65, 0.65])
                   + _records("fedavg", math.inf, [0.8, 0.8, 0.8])}}
    v = {x["unit"]: x for x in rep.verdicts(data)}
    assert v["a"]["binds"] and v["a"]["edges"] == ["lr high"]
    assert v["a"]["extension_test"] == pytest.approx(0.72) and v["a"]["grid_test"] == pytest.approx(0.6)
    assert not v["b"]["binds"] and not v["c"]["binds"]  # worse on validation; nothing beyond
    assert rep.rankings(data) == {1.0: {"grid": ["fed-plt", "dpfl"], "wider": ["dpfl", "fed-plt"]}}
    s = rep.summary(data)
    assert (s["units"], s["binds"], s["max_gain"], s["fedplt_max_gain"]) == (3, 1, 12.0, 0.0)
    assert (s["order_changes"], s["leader_changes"], s["epsilons"]) == (1, 1, 1)
    frame = rep.edges_frame(data)
    assert list(frame["edge binds"]) == ["yes", "no", "no"]


@pytest.mark.stored
def test_stored_probe_reproduces_t1s_tuning_and_keeps_its_budgets():
    """The probe tunes the grid again by T1's protocol: the same validation scores (T1's
    verify tolerance, rtol 1e-3) and the same selection, except where two scores tie within it;
    every extension run is calibrated to its ε and within its uplink budget."""
    from fedrepro.core.cache import load_if_computed

    edges = load_if_computed(t1_edges.T1EdgesConfig())
    base = load_if_computed(t1.T1Config())
    if edges is None or base is None:
        pytest.skip("the T1 edge probe is not in the store")
    tuning = {(t["algorithm"], t["epsilon_target"], t["uplink_budget_bits"]): t for t in base.result["tuning"]}
    for unit, u in edges.result["units"].items():
        t = tuning[(u["algorithm"], u["epsilon_target"], u["uplink_budget_bits"])]
        ours = [c["validation_accuracy"] for c in u["grid"]["tuning"]]
        theirs = [c["validation_accuracy"] for c in t["candidates"]]
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-6, err_msg=unit)
        if u["grid"]["selected"] != t["selected"]:
            assert abs(ours[u["grid"]["selected"]] - ours[t["selected"]]) <= 1e-3, unit
        if u["extensions"] is not None:
            for r in u["extensions"]["runs"]:
                assert r["uplink_bits"] <= u["uplink_budget_bits"], unit
                if math.isfinite(u["epsilon_target"]):
                    assert r["epsilon_spent"] == pytest.approx(u["epsilon_target"], rel=1e-6), unit


@pytest.mark.stored
def test_stored_probe_supports_the_pages_reading():
    """The T1 page and the part's index: every cell selects at an edge; the binding moves are
    small on the test set except Fed-PLT's, whose largest gain is the largest of all; with the
    wider grid Fed-PLT leads exactly from its first leading ε on (the two largest ε) ahead of
    both DP-SGD algorithms; private FedPAQ's extensions stay near chance."""
    data = rep.stored("paper")
    if data is None:
        pytest.skip("the T1 edge probe is not in the store")
    s = rep.summary(data)
    assert s["edge_units"] == s["units"] and 0 < s["binds"] < s["units"]
    assert s["max_gain_algorithm"] == t1.LABELS["fed-plt"] and s["fedplt_max_gain"] == s["max_gain"] > 2
    others = [100 * (v["extension_test"] - v["grid_test"]) for v in rep.verdicts(data)
              if v["binds"] and v["algorithm"] != "fed-plt"]
    assert np.median(np.abs(others)) < 1
    r = rep.rankings(data)
    eps = sorted(r)
    assert s["fedplt_leads"] == 2 and s["fedplt_leads_from"] == eps[-2]
    for e, c in r.items():
        wider = c["wider"]
        leads = e >= s["fedplt_leads_from"]
        assert (wider[0] == "fed-plt") == leads, e
        if leads:
            assert wider.index("dp-fedsgd") > 0 and wider.index("dpfl") > 0
        assert c["grid"][0] in ("dp-fedsgd", "dpfl"), e  # the grid's ranking: a DP-SGD algorithm leads
    assert s["fedpaq_beyond_max"] < 0.15
