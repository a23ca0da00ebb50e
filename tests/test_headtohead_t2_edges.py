"""The edge probe of T2's grids (``fedrepro.chapters.headtohead.t2_edges``) and its verdicts
(``t2_edges_report``): the extensions around the stored selection, each run by T2's own tuning
unit; the binding extensions run by T2's own cell unit on its seeds; every stored run within
its budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.chapters.headtohead import t1_edges, t2, t2_edges
from fedrepro.chapters.headtohead import t2_edges_report as rep
from fedrepro.headtohead import cnn_algorithms as cnn

SELECTION = (("dp-fedsgd", 11), ("dpfl", 11), ("fedpaq", 7), ("fedpaq-q", 11), ("fed-plt", 6))


def test_extensions_are_one_step_beyond_the_selections_edges():
    ext = t2_edges.extensions_of("paper", "fed-plt", 6)
    assert t2.GRIDS["fed-plt"][6] == cnn.FedPLTCNN(lr=0.25, rho=1.0, local_steps=5, clip=0.1, rate=0.015)
    assert [(c.lr, c.rho, c.local_steps) for c in ext] == [
        (0.125, 1.0, 5), (0.25, 0.1, 5), (0.25, 1.0, 12), (0.125, 0.1, 12)]
    assert all(c.clip == 0.1 and c.rate == 0.015 for c in ext)
    paq = t2_edges.extensions_of("paper", "fedpaq-q", 11)
    assert [(c.lr, c.local_steps, c.levels) for c in paq] == [(2.0, 5, 16), (1.0, 25, 16), (1.0, 5, 128),
                                                               (2.0, 25, 128)]
    assert t2_edges.grid_of("quick", "dpfl") == t2.GRIDS["dpfl"][:2]


def test_tuning_units_cover_every_extension_cheap_ones_at_the_ends():
    cfg = t2_edges.T2EdgesTuningConfig(selected=SELECTION)
    units = t2_edges.tuning_units(cfg)
    total = sum(len(t2_edges.extensions_of("paper", a, k)) for a, k in SELECTION)
    assert len(units) == len(set(units)) == total == 18
    assert units[0].startswith("dp-fedsgd_") and units[-1].startswith("dp-fedsgd_")
    assert cfg.tuning() == t2.T2TuningConfig()


def test_configs_refuse_bad_selections():
    with pytest.raises(ValueError):
        t2_edges.T2EdgesTuningConfig(profile="fast")
    with pytest.raises(ValueError, match="distinct algorithms"):
        t2_edges.T2EdgesTuningConfig(selected=(("nope", 1),))
    with pytest.raises(ValueError, match="distinct algorithms"):  # the ceiling is not probed
        t2_edges.T2EdgesTuningConfig(selected=(("fedavg", 1),))
    assert "fedavg" not in t2_edges.PROBED and set(t2_edges.PROBED) == set(t2.GRIDS) - {"fedavg"}
    with pytest.raises(ValueError, match="distinct algorithms"):
        t2_edges.T2EdgesTuningConfig(selected=(("dpfl", 1), ("dpfl", 2)))
    with pytest.raises(ValueError, match="outside the grid"):
        t2_edges.T2EdgesTuningConfig(selected=(("dpfl", 12),))
    with pytest.raises(ValueError, match="non-negative"):
        t2_edges.T2EdgesTuningConfig(selected=(("dpfl", -1),))
    with pytest.raises(ValueError, match="needs its grid's selection"):
        t2_edges.T2EdgesConfig(selected=(("dpfl", 1),), chosen=(("fed-plt", 0),))


def test_run_units_are_every_chosen_extension_on_t2s_seeds():
    cfg = t2_edges.T2EdgesConfig(selected=SELECTION, chosen=(("fed-plt", 0), ("dpfl", 1)))
    assert t2_edges._units(cfg) == ["fed-plt_seed-0", "fed-plt_seed-1", "fed-plt_seed-2",
                                    "dpfl_seed-0", "dpfl_seed-1", "dpfl_seed-2"]


def _tuning(name, scores, selected):
    return {"algorithm": name, "selected": selected,
            "candidates": [{"config": {"lr": lr, "clip": 1.0}, "validation_accuracy": s}
                           for lr, s in zip((0.25, 0.5, 1.0), scores, strict=False)]}


def test_binding_compares_the_best_extension_with_the_grid_on_validation():
    tuning = {"tuning": [_tuning("dpfl", [0.3, 0.5, 0.6], 2), _tuning("fed-plt", [0.5, 0.4, 0.2], 0),
                         _tuning("fedpaq", [0.1, 0.1, 0.1], 0)]}
    edges = {"tuning": [{"algorithm": "dpfl", "grid_selected": 2, "selected": 1,
                         "candidates": [{"validation_accuracy": 0.55}, {"validation_accuracy": 0.65}]},
                        {"algorithm": "fed-plt", "grid_selected": 0, "selected": 0,
                         "candidates": [{"validation_accuracy": 0.5}]},  # a tie does not bind
                        {"algorithm": "fedpaq", "grid_selected": 0, "selected": 0,
                         "candidates": [{"validation_accuracy": math.nan}]}]}  # diverged
    assert t2_edges.binding(tuning, edges) == (("dpfl", 1),)


def test_a_quick_tuning_unit_is_t2s_own_run_of_the_extension(results_dir):
    """The probe's unit runs T2's tuning unit with the extension in place of the grid: the
    same record as T2's unit computes for that configuration patched in by hand."""
    from unittest import mock

    cfg = t2_edges.T2EdgesTuningConfig(profile="quick", selected=(("dpfl", 0),))
    ext = t2_edges.extensions_of("quick", "dpfl", 0)
    assert ext  # lr sits at the low end of the quick grid
    out = t2_edges._run_tuning_unit(cfg, "dpfl_cfg-00")
    assert out["config"] == {f: getattr(ext[0], f) for f in ("lr", "local_steps", "rate", "clip")}
    with mock.patch.dict(t2.GRIDS, {"dpfl": (ext[0],)}):
        again = t2._run_tuning_unit(t2.T2TuningConfig.for_profile("quick"), "dpfl_cfg-00")
    assert again == out
    assert t2.GRIDS["dpfl"][0] != ext[0]  # the patch is undone


def _data():
    tuning = {"tuning": [_tuning("fedavg", [0.7, 0.8, 0.9], 2), _tuning("dpfl", [0.3, 0.5, 0.6], 2),
                         _tuning("fed-plt", [0.5, 0.4, 0.2], 0)]}
    edges_tuning = {"tuning": [
        {"algorithm": "fedavg", "grid_selected": 2, "selected": 0,
         "candidates": [{"config": {"lr": 3.0, "clip": 1.0}, "validation_accuracy": 0.85}]},
        {"algorithm": "dpfl", "grid_selected": 2, "selected": 0,
         "candidates": [{"config": {"lr": 2.0, "clip": 1.0}, "validation_accuracy": 0.7}]},
        {"algorithm": "fed-plt", "grid_selected": 0, "selected": 0,
         "candidates": [{"config": {"lr": 0.125, "clip": 1.0}, "validation_accuracy": 0.45}]}]}

    def records(name, eps, tests):
        return [{"algorithm": name, "epsilon_target": eps, "uplink_budget_bits": 5.6e9, "test_accuracy": t}
                for t in tests]

    t2_records = (records("fedavg", math.inf, [0.8, 0.8, 0.8]) + records("dpfl", 2.0, [0.6, 0.62, 0.64])
                  + records("fed-plt", 2.0, [0.63, 0.63, 0.63]) + records("dpfl", 1.0, [0.1, 0.1, 0.1]))
    return {"tuning": tuning, "t2": {"records": t2_records}, "edges_tuning": edges_tuning,
            "edges": {"records": records("dpfl", 2.0, [0.70, 0.72, 0.74])}, "reference": (2.0, 5.6e9)}


def test_verdicts_ranking_and_summary_on_known_numbers():
    data = _data()
    v = {x["algorithm"]: x for x in rep.verdicts(data)}
    assert v["dpfl"]["binds"] and v["dpfl"]["edges"] == ["lr high"]
    assert v["dpfl"]["grid_test"] == pytest.approx(0.62) and v["dpfl"]["extension_test"] == pytest.approx(0.72)
    assert v["dpfl"]["grid_test_sd"] == pytest.approx(0.02)
    assert "fedavg" not in v  # the ceiling is not probed
    assert not v["fed-plt"]["binds"] and v["fed-plt"]["edges"] == ["lr low"]
    assert rep.ranking(data) == {"grid": ["fed-plt", "dpfl"], "wider": ["dpfl", "fed-plt"]}
    s = rep.summary(data)
    assert (s["algorithms"], s["edge_algorithms"], s["extensions"], s["binds"], s["ties"]) == (2, 2, 2, 1, 0)
    assert (s["max_gain"], s["min_gain"], s["order_moves"], s["leader_changes"]) == (10.0, 10.0, 2, 1)
    assert s["gain_dpfl"] == 10.0 and "gain_fed-plt" not in s
    assert s["leader_wider"] == t2.LABELS["dpfl"] and s["leader_grid"] == t2.LABELS["fed-plt"]
    frame = rep.edges_frame(data)
    assert list(frame["edge binds"]) == ["yes", "no"]
    assert frame.loc[t2.LABELS["dpfl"], "test: beyond (%)"] == "72.0 ± 2.0"


@pytest.mark.stored
def test_stored_probe_runs_keep_their_budgets():
    """Every stored probe run: the extension it claims, calibrated to the reference ε (within
    1e-6 relative) and within its uplink budget; the binding set is the one its verdicts give."""
    data = rep.stored("paper")
    if data is None:
        pytest.skip("the T2 edge probe is not in the store")
    eps, budget = data["reference"]
    chosen = dict(t2_edges.binding(data["tuning"], data["edges_tuning"]))
    assert {r["algorithm"] for r in data["edges"]["records"]} == set(chosen)
    sel = {t["algorithm"]: int(t["selected"]) for t in data["tuning"]["tuning"]}
    for r in data["edges"]["records"]:
        ext = t2_edges.extensions_of("paper", r["algorithm"], sel[r["algorithm"]])[chosen[r["algorithm"]]]
        assert r["config"] == t2._config_dict(ext)
        assert r["uplink_bits"] <= r["uplink_budget_bits"] == budget
        if r["algorithm"] != "fedavg":
            assert r["epsilon_spent"] == pytest.approx(eps, rel=1e-6)
    for t in data["edges_tuning"]["tuning"]:
        ext = t2_edges.extensions_of("paper", t["algorithm"], sel[t["algorithm"]])
        assert [c["config"] for c in t["candidates"]] == [t2._config_dict(c) for c in ext]
        assert t1_edges.extensions(t2.GRIDS[t["algorithm"]], sel[t["algorithm"]]) == ext
    assert sorted(v["binds"] for v in rep.verdicts(data)).count(True) == len(chosen)
    assert np.isfinite([v["grid_test"] for v in rep.verdicts(data)]).all()


@pytest.mark.stored
def test_stored_probe_supports_the_pages_reading():
    """The T2 page and the part's index: every private algorithm selects at an edge; the edges
    bind for DP-FedSGD (a clipping norm of 10/3), DPFL (12 local steps) and the quantized
    FedPAQ (25 local steps), which stays near chance; DPFL gains on the test set; Fed-PLT's
    best extension (12 local steps) ties with its grid on validation and its rho = 0.1 run
    diverges; float32 FedPAQ does not bind; the three algorithms that learn keep their order
    and DPFL its lead."""
    data = rep.stored("paper")
    if data is None:
        pytest.skip("the T2 edge probe is not in the store")
    s = rep.summary(data)
    v = {x["algorithm"]: x for x in rep.verdicts(data)}
    assert s["edge_algorithms"] == s["algorithms"] == len(t2_edges.PROBED)
    assert {a for a, x in v.items() if x["binds"]} == {"dp-fedsgd", "dpfl", "fedpaq-q"}
    assert v["dp-fedsgd"]["extension_config"]["clip"] == pytest.approx(10 / 3)
    assert v["dpfl"]["extension_config"]["local_steps"] == 12
    assert v["fedpaq-q"]["extension_config"]["local_steps"] == 25 and v["fedpaq-q"]["extension_test"] < 0.15
    assert s["gain_dpfl"] > 2
    plt = v["fed-plt"]
    assert not plt["binds"] and plt["extension_validation"] == plt["grid_validation"]
    assert plt["extension_config"]["local_steps"] == 12
    probe = {t["algorithm"]: t for t in data["edges_tuning"]["tuning"]}
    assert any(c["diverged"] and c["config"]["rho"] == 0.1 for c in probe["fed-plt"]["candidates"])
    assert not v["fedpaq"]["binds"]
    r = rep.ranking(data)
    assert r["grid"][:3] == r["wider"][:3] == ["dpfl", "dp-fedsgd", "fed-plt"]
    assert s["leader_wider"] == s["leader_grid"] == t2.LABELS["dpfl"]
