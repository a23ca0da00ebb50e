"""T1 with fair tuning axes (``fedrepro.experiments.headtohead.t1_fair``): every private
algorithm tunes the same clip set with 12 configurations; the algorithms whose fair grid is
their T1 grid are read from the stored T1 result (the same function of the same inputs)."""

from __future__ import annotations

import pytest

from fedrepro.experiments.headtohead import t1, t1_fair


def test_every_fair_grid_has_twelve_configurations_and_tunes_the_common_clips():
    assert set(t1_fair.GRIDS) == set(t1.GRIDS) - {"fedavg"}
    for name, grid in t1_fair.GRIDS.items():
        assert len(grid) == len(set(grid)) == 12, name
        clips = [c.clip for c in grid]
        assert sorted(set(clips)) == list(t1_fair.CLIPS), name  # fails if one lacks the clip axis
        assert all(clips.count(c) == 6 for c in t1_fair.CLIPS), name


def test_only_the_quantized_fedpaq_and_fed_plt_change_and_as_stated():
    assert t1_fair.CHANGED == ("fedpaq-q", "fed-plt")
    g = t1_fair.GRIDS
    assert {(c.lr, c.local_steps, c.levels) for c in g["fedpaq-q"]} == {
        (lr, e, 2) for lr in (0.3, 1.0, 3.0) for e in (1, 5)}
    assert {(c.lr, c.local_steps, c.rho) for c in g["fed-plt"]} == {
        (lr, e, 10.0) for lr in (0.1, 0.3, 1.0) for e in (2, 5)}
    for name in ("dp-fedsgd", "dpfl", "fedpaq"):
        assert g[name] == t1.GRIDS[name]  # their stored T1 cells are the fair ones


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="algorithms"):
        t1_fair.T1FairConfig(algorithms=("fedavg",))
    with pytest.raises(ValueError, match="profile"):
        t1_fair.T1FairConfig(profile="fast")


def test_quick_fair_t1_merges_the_new_cells_with_the_unchanged_stored_ones(results_dir):
    result = t1_fair.load_t1_fair("quick")
    old = t1.load_t1("quick")
    cfg = t1.T1Config.for_profile("quick")

    def key(r):
        return (r["algorithm"], r["seed"], r["epsilon_target"], r["uplink_budget_bits"], r["test_accuracy"])

    old_keys = {key(r) for r in old["records"]}
    assert len(result["records"]) == len(old["records"])
    assert len(result["tuning"]) == len(old["tuning"])
    for r in result["records"]:
        assert r["uplink_bits"] <= r["uplink_budget_bits"]
        if r["algorithm"] in t1_fair.CHANGED:
            assert r["config"] in [t1._config_dict(c) for c in t1_fair.GRIDS[r["algorithm"]][:cfg.grid_size]]
        else:
            assert key(r) in old_keys
    for t in result["tuning"]:
        if t["algorithm"] in t1_fair.CHANGED:
            assert [c["config"]["clip"] for c in t["candidates"]] == [
                c.clip for c in t1_fair.GRIDS[t["algorithm"]][:cfg.grid_size]]
    # a reused cell recomputes through the fair run's unit function to the stored value
    fair = t1_fair.T1FairConfig(profile="quick", algorithms=("dpfl",))
    unit = t1_fair._units(fair)[-1]
    stored = next(t for t in old["tuning"] if t["algorithm"] == "dpfl"
                  and t1.unit_name("dpfl", t["epsilon_target"], t["uplink_budget_bits"]) == unit)
    again = t1_fair._run_unit(fair, unit)
    assert again["tuning"] == stored["candidates"] and again["selected"] == stored["selected"]
