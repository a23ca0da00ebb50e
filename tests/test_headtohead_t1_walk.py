"""The walk beyond T1's grids (``fedrepro.chapters.headtohead.t1_walk``) and its verdicts
(``t1_walk_report``): steps beyond the edges until none binds, by T1's own protocol; every
stored run within its budgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.chapters.headtohead import t1, t1_walk
from fedrepro.chapters.headtohead import t1_walk_report as rep


def _peak(lr, clip=1.0, local_steps=10):
    """A validation score with one maximum, at (lr, clip, local_steps)."""
    def score(configs):
        return [-abs(math.log(c.lr / lr)) - abs(math.log(c.clip / clip)) - abs(math.log(c.local_steps / local_steps))
                for c in configs]
    return score


def test_the_walk_climbs_past_the_grid_to_a_peak_and_stops_where_no_edge_binds():
    grid = t1.GRIDS["dpfl"]  # lr (0.3, 1, 3), clip (0.3, 1), local_steps (3, 10)
    w = t1_walk.walk(grid, _peak(27.0), max_steps=6)
    best = w["explored"][w["best"]]
    assert (best.lr, best.clip, best.local_steps) == (pytest.approx(27.0), 1.0, 10)
    assert w["stop"] == "no-edge-binds" and len(w["steps"]) == 3  # 9, 27, then 81 is worse
    assert w["explored"][:len(grid)] == list(grid) and len(w["scores"]) == len(w["explored"])
    # lr, clip and local steps beyond, then all three together; then only lr is still at an end
    assert [len(s) for s in w["steps"]] == [4, 1, 1]


def test_a_peak_inside_the_grid_needs_no_step_and_a_limit_stops_the_walk():
    grid = t1.GRIDS["dpfl"]
    inside = t1_walk.walk(grid, _peak(1.0, 1.0, 10), max_steps=6)
    assert inside["best"] < len(grid) and inside["stop"] == "no-edge-binds" and len(inside["steps"]) == 1
    limited = t1_walk.walk(grid, _peak(81.0), max_steps=2)
    assert limited["stop"] == "step-limit" and len(limited["steps"]) == 2
    assert limited["explored"][limited["best"]].lr == pytest.approx(27.0)


def test_refused_or_impossible_steps_stop_the_walk_inside():
    grid = t1.GRIDS["dpfl"]
    capped = t1_walk.walk(grid, _peak(1.0, 1.0, 1000), max_steps=6,
                          allowed=lambda c: c.local_steps <= 10 and c.clip <= 1.0)
    assert capped["stop"] == "inside" and not capped["steps"]
    one = t1_walk.walk(grid[:1], _peak(1.0), max_steps=3)  # one configuration: no axis to step on
    assert one["stop"] == "inside" and one["best"] == 0


def test_non_finite_scores_lose_and_ties_keep_the_first():
    grid = t1.GRIDS["dpfl"]
    w = t1_walk.walk(grid, lambda cs: [math.nan] * len(cs), max_steps=3)
    assert w["best"] == 0 and w["stop"] == "no-edge-binds"
    with pytest.raises(ValueError, match="at least one"):
        t1_walk.walk((), _peak(1.0), max_steps=1)


def test_config_and_units():
    cfg = t1_walk.T1WalkConfig()
    units = t1_walk.walk_units(cfg)
    assert len(units) == 1 + len(cfg.t1().epsilons) * (len(t1_walk.WALKED) - 1)
    assert {t1._parse(u)[0] for u in units} == set(t1_walk.WALKED)
    for bad in ({"profile": "fast"}, {"max_steps": 0}, {"max_local_steps": 0}):
        with pytest.raises(ValueError):
            t1_walk.T1WalkConfig(**bad)


def test_one_quick_unit_follows_t1s_protocol(results_dir):
    cfg = t1_walk.T1WalkConfig(profile="quick")
    unit = t1.unit_name("dpfl", 4.0, cfg.t1().budget_bits)
    out = t1_walk._run_unit(cfg, unit)
    grid = t1.grid_of(cfg.t1(), "dpfl")
    assert [c["config"] for c in out["tuning"][:len(grid)]] == [t1._config_dict(c) for c in grid]
    assert out["config"] == out["tuning"][out["best"]]["config"]
    assert len(out["runs"]) == len(cfg.t1().seeds)
    for r in out["runs"]:
        assert r["epsilon_spent"] == pytest.approx(4.0, rel=1e-6) and r["uplink_bits"] <= cfg.t1().budget_bits


def _unit(name, eps, grid_scores, best, tests, stop="no-edge-binds", steps=1):
    tuning = [{"config": {"lr": lr, "clip": 1.0}, "validation_accuracy": s}
              for lr, s in zip((0.3, 1.0, 3.0, 9.0), grid_scores, strict=True)]
    return {"algorithm": name, "epsilon_target": eps, "uplink_budget_bits": 4e8, "tuning": tuning, "grid_size": 3,
            "best": best, "steps": [[3]] * steps, "stop": stop, "config": tuning[best]["config"],
            "runs": [{"test_accuracy": np.array([0.0, t])} for t in tests]}


def _records(name, eps, tests):
    return [{"algorithm": name, "epsilon_target": eps, "uplink_budget_bits": 4e8, "test_accuracy": t} for t in tests]


def test_verdicts_rankings_and_summary_on_known_numbers():
    data = {"walk": {"a": _unit("dpfl", 1.0, [0.1, 0.2, 0.5, 0.6], 3, [0.70, 0.72, 0.74], steps=2),
                     "b": _unit("fed-plt", 1.0, [0.1, 0.5, 0.2, 0.4], 1, [0.65, 0.65, 0.65]),
                     "c": _unit("fedavg", math.inf, [0.8, 0.2, 0.1, 0.1], 0, [0.8, 0.8, 0.8], stop="inside", steps=0)},
            "t1": {"records": _records("dpfl", 1.0, [0.6, 0.6, 0.6]) + _records("fed-plt", 1.0, [0.65, 0.65, 0.65])
                   + _records("fedavg", math.inf, [0.8, 0.8, 0.8])}}
    v = {x["unit"]: x for x in rep.verdicts(data)}
    assert v["a"]["moved"] and v["a"]["steps"] == 2 and v["a"]["grid_validation"] == 0.5
    assert v["a"]["test"] == pytest.approx(0.72) and v["a"]["grid_test"] == pytest.approx(0.6)
    assert not v["b"]["moved"] and v["b"]["grid_config"] == {"lr": 1.0, "clip": 1.0}
    assert rep.rankings(data) == {1.0: {"grid": ["fed-plt", "dpfl"], "walk": ["dpfl", "fed-plt"]}}
    s = rep.summary(data)
    assert (s["units"], s["moved"], s["no_edge_binds"], s["inside"], s["step_limit"]) == (3, 1, 2, 1, 0)
    assert (s["max_gain"], s["max_gain_epsilon"], s["order_changes"], s["leader_changes"]) == (12.0, "1", 1, 1)
    assert s["fedplt_leads"] == 0 and math.isnan(s["fedplt_leads_from"]) and s["ceiling_gain"] == 0.0
    assert (s["fedplt_max_gain"], s["others_max_abs_gain"]) == (0.0, 12.0)
    frame = rep.walk_frame(data)
    assert list(frame["best found"])[1:] == ["the grid's selection", "the grid's selection"]


@pytest.mark.stored
def test_stored_walk_keeps_its_budgets_and_reproduces_t1s_grid():
    """The walk tunes the grid again by T1's protocol: the same validation scores as T1's
    (T1's verify tolerance, rtol 1e-3); every final run is calibrated to its ε and within its
    uplink budget; the best is the highest validation score of everything explored."""
    data = rep.stored("paper")
    if data is None:
        pytest.skip("the T1 walk is not in the store")
    tuning = {(t["algorithm"], t["epsilon_target"], t["uplink_budget_bits"]): t for t in data["t1"]["tuning"]}
    for unit, u in data["walk"].items():
        t = tuning[(u["algorithm"], u["epsilon_target"], u["uplink_budget_bits"])]
        ours = [c["validation_accuracy"] for c in u["tuning"][:u["grid_size"]]]
        np.testing.assert_allclose(ours, [c["validation_accuracy"] for c in t["candidates"]], rtol=1e-3, atol=1e-6,
                                   err_msg=unit)
        scores = [c["validation_accuracy"] if math.isfinite(c["validation_accuracy"]) else -math.inf
                  for c in u["tuning"]]
        assert scores[u["best"]] == max(scores), unit
        assert u["stop"] in t1_walk.STOPS and len(u["steps"]) <= t1_walk.T1WalkConfig().max_steps
        for r in u["runs"]:
            assert r["uplink_bits"] <= u["uplink_budget_bits"], unit
            if math.isfinite(u["epsilon_target"]):
                assert r["epsilon_spent"] == pytest.approx(u["epsilon_target"], rel=1e-6), unit


@pytest.mark.stored
def test_stored_walk_supports_the_pages_reading():
    """The T1 page and the part's index: no walk reaches the step limit; the walks that stop
    with a step left unrefused are exactly DP-FedSGD's and the ceiling's, at a sampling rate of
    0.8; the DP-SGD algorithms move by less than a point, Fed-PLT by more than 2, with a step
    size of 10/3 and rho = 10 where it gains most; Fed-PLT leads at the two largest epsilon and
    DP-FedSGD below them."""
    data = rep.stored("paper")
    if data is None:
        pytest.skip("the T1 walk is not in the store")
    s = rep.summary(data)
    assert s["step_limit"] == 0 and s["max_steps"] <= 2
    inside = [v for v in rep.verdicts(data) if v["stop"] == "inside"]
    assert {v["algorithm"] for v in inside} == {"dp-fedsgd", "fedavg"}
    assert all(v["config"]["rate"] == 0.8 for v in inside)
    assert s["others_max_abs_gain"] < 1 and s["fedplt_max_gain"] == s["max_gain"] > 2
    top = [v for v in rep.verdicts(data) if v["algorithm"] == "fed-plt" and f"{v['epsilon']:g}" == s["max_gain_epsilon"]]
    assert top[0]["config"]["lr"] == pytest.approx(10 / 3) and top[0]["config"]["rho"] == 10.0
    r = rep.rankings(data)
    eps = sorted(r)
    assert s["fedplt_leads"] == 2 and s["fedplt_leads_from"] == eps[-2]
    for e, c in r.items():
        assert c["walk"][0] == ("fed-plt" if e >= eps[-2] else "dp-fedsgd"), e
