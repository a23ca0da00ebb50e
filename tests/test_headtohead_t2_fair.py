"""T2 with fair tuning axes (``fedrepro.experiments.headtohead.t2_fair``): every private
algorithm tunes the same clip set with 12 configurations; configurations shared with T2's old
grids are read from its stored tuning, and recomputing one gives the stored value."""

from __future__ import annotations

import pytest

from fedrepro.experiments.headtohead import t2, t2_alidpfl, t2_fair, t2_fair_edges, t2_fair_grid


@pytest.fixture(scope="module")
def quick_store(tmp_path_factory):
    """One private store for the quick-profile runs of this module (computed once)."""
    root = tmp_path_factory.mktemp("results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FEDREPRO_RESULTS_DIR", str(root))
        mp.delenv("FEDREPRO_FORCE", raising=False)
        mp.delenv("FEDREPRO_FORCE_SINCE", raising=False)
        yield root


def test_every_fair_grid_has_twelve_configurations_and_tunes_the_common_clips():
    for name, grid in t2_fair.GRIDS.items():
        assert len(grid) == len(set(grid)) == 12, name
        clips = [c.clip for c in grid]
        assert sorted(set(clips)) == list(t2_fair.CLIPS), name  # fails if one lacks the clip axis
        assert all(clips.count(c) == 4 for c in t2_fair.CLIPS), name  # 4 own combinations per clip
        assert {c.rate for c in grid} == {0.015}, name


def test_the_own_knobs_are_those_stated():
    g = t2_fair.GRIDS
    assert {(c.lr, c.local_steps) for c in g["fed-plt"]} == {(0.25, 2), (0.5, 2), (0.25, 5), (0.5, 5)}
    assert {c.rho for c in g["fed-plt"]} == {1.0}
    assert {(c.levels, c.local_steps) for c in g["fedpaq-q"]} == {(16, 1), (16, 5)}
    assert {c.levels for c in g["fedpaq"]} == {None}
    assert g["dp-fedsgd"] == t2.GRIDS["dp-fedsgd"]  # DP-FedSGD's T2 grid was fair already
    assert {c.mean_steps for c in g["ali-dpfl"]} == {2, 5}


def test_new_units_are_exactly_the_configurations_t2_never_ran():
    cfg = t2_fair.T2FairTuningConfig()
    units = t2_fair.new_units(cfg)
    assert len(units) == len(set(units)) == 28
    for name, grid in t2_fair.GRIDS.items():
        old = set(t2_alidpfl.GRID if name == "ali-dpfl" else t2.GRIDS[name])
        new = {int(u.split("_cfg-")[1]) for u in units if u.startswith(f"{name}_cfg-")}
        assert new == {k for k, c in enumerate(grid) if c not in old}, name
    assert {u.split("_cfg-")[0] for u in units[:8]} == {"fed-plt"}
    assert cfg.protocol() == t2.T2TuningConfig()  # the same protocol as the stored T2 tuning


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="grid_size"):
        t2_fair.T2FairTuningConfig(grid_size=13)
    with pytest.raises(ValueError, match="algorithms"):
        t2_fair.T2FairTuningConfig(algorithms=("fedavg",))
    with pytest.raises(ValueError, match="selected"):
        t2_fair_grid.T2FairConfig(selected=(("fedavg", 0),))
    with pytest.raises(ValueError, match="reused"):
        t2_fair_grid.T2FairConfig(selected=(("dpfl", 0),), reused=("fed-plt",))


def test_quick_fair_tuning_reuses_stored_runs_that_recompute_identically(quick_store):
    cfg = t2_fair.T2FairTuningConfig.for_profile("quick")
    table = t2_fair_grid.fair_selection("quick")
    assert [t["algorithm"] for t in table["tuning"]] == list(cfg.algorithms)
    sources = {c["source"] for t in table["tuning"] for c in t["candidates"]}
    assert sources == {"t2-tuning", "t2-alidpfl-tuning", "t2-fair-tuning"}
    for t in table["tuning"]:
        assert len(t["candidates"]) == cfg.grid_size
        scores = [c["validation_accuracy"] for c in t["candidates"]]
        assert t["selected"] == scores.index(max(scores))
    # every reused quick configuration recomputes, through the new unit's function, to the
    # stored value of the old experiment (same function, same inputs: equal to the last bit)
    checked = 0
    for t in table["tuning"]:
        for k, c in enumerate(t["candidates"]):
            if c["source"] != cfg.experiment:
                again = t2_fair.tune_one(cfg.protocol(t["algorithm"]), t2_fair.GRIDS[t["algorithm"]][k])
                assert again == {key: v for key, v in c.items() if key != "source"}
                checked += 1
    assert checked == 2 * len(cfg.algorithms) - len(t2_fair.new_units(cfg)) == 7


def test_quick_fair_grid_reuses_unchanged_selections(quick_store):
    result = t2_fair_grid.compute_fair("quick")
    tuning = t2.load_t2_tuning("quick")
    cfg = t2_fair_grid.final_config("quick", result["tuning"], tuning)
    p = cfg.protocol()
    assert {r["algorithm"] for r in result["records"]} == set(t2_fair.PRIVATE)
    assert len(result["records"]) == len(t2_fair.PRIVATE) * len(p.epsilons) * len(p.seeds)
    def key(r):
        return (r["algorithm"], r["seed"], r["epsilon_target"], r["uplink_budget_bits"], r["test_accuracy"])

    old = {key(r) for r in t2.load_t2("quick")["records"]}
    for r in result["records"]:
        assert r["uplink_bits"] <= r["uplink_budget_bits"] == p.budget_bits
        k = dict(cfg.selected)[r["algorithm"]]
        assert r["config"] == t2._config_dict(t2_fair.GRIDS[r["algorithm"]][k])
        if r["algorithm"] in cfg.reused:
            assert key(r) in old


def test_the_edge_probe_moves_the_clip_of_every_selection_at_a_clip_end():
    # Fed-PLT at (η = 0.25, N_e = 5, C = 0.1): the low ends of η and C and the high end of N_e
    k = t2_fair.GRIDS["fed-plt"].index(t2.GRIDS["fed-plt"][6])
    ext = t2_fair_edges.extensions_of("fed-plt", k)
    assert [(c.lr, c.local_steps, round(c.clip, 6)) for c in ext] == [
        (0.125, 5, 0.1), (0.25, 12, 0.1), (0.25, 5, 0.033333), (0.125, 12, 0.033333)]
    # DPFL at (η = 1, τ = 5, C = 1): all three at their high ends
    ext = t2_fair_edges.extensions_of("dpfl", 11)
    assert [(c.lr, c.local_steps, round(c.clip, 6)) for c in ext] == [
        (2.0, 5, 1.0), (1.0, 12, 1.0), (1.0, 5, 3.333333), (2.0, 12, 3.333333)]
    for name, grid in t2_fair.GRIDS.items():  # the clip is an axis of every fair grid
        if name in t2_fair.PRIVATE:
            assert any(c.clip != grid[0].clip for c in t2_fair_edges.extensions_of(name, 0)), name
    with pytest.raises(ValueError, match="selected"):
        t2_fair_edges.extensions_of("dpfl", 12)
    with pytest.raises(ValueError, match="selected"):
        t2_fair_edges.T2FairEdgesTuningConfig(selected=(("fedavg", 0),))


def test_quick_edge_probe_runs_every_extension_and_the_binding_ones(quick_store):
    probe = t2_fair_edges.load_t2_fair_edges("quick")
    fair = {t["algorithm"]: t for t in probe["tuning"]["tuning"]}
    for t in probe["edges_tuning"]["tuning"]:
        ext = t2_fair_edges.extensions_of(t["algorithm"], fair[t["algorithm"]]["selected"])
        assert [c["config"] for c in t["candidates"]] == [t2._config_dict(c) for c in ext]
        assert any(c["config"]["clip"] != fair[t["algorithm"]]["candidates"][t["grid_selected"]]["config"]["clip"]
                   for c in t["candidates"])  # the clip is probed
    chosen = dict(t2_fair_edges.binding(probe["tuning"], probe["edges_tuning"]))
    seeds = t2.T2Config.for_profile("quick").seeds
    assert len(probe["edges"]["records"]) == len(chosen) * len(seeds)
    for r in probe["edges"]["records"]:
        assert r["algorithm"] in chosen and r["uplink_bits"] <= r["uplink_budget_bits"]


def test_the_fair_probe_view_reads_the_quick_store(quick_store):
    """The page's view of the probe around the fair selections: one verdict per private
    algorithm, the clip end each sits on as the fair grid says, and a reading that names each
    binding algorithm."""
    from fedrepro.chapters.headtohead import t2_edges_report
    from fedrepro.chapters.headtohead import t2_fair_edges_report as view

    t2_fair_grid.compute_fair("quick")
    probe = t2_fair_edges.load_t2_fair_edges("quick")
    data = view.stored("quick")
    assert data is not None
    verdicts = t2_edges_report.verdicts(data)
    assert sorted(v["algorithm"] for v in verdicts) == sorted(t2_fair.PRIVATE)
    fair = {t["algorithm"]: t for t in probe["tuning"]["tuning"]}
    for name, end in view.clip_edges(data).items():
        clip = fair[name]["candidates"][fair[name]["selected"]]["config"]["clip"]
        clips = sorted({c["config"]["clip"] for c in fair[name]["candidates"]})  # the profile's grid
        expected = None if len(clips) < 2 else "clip low" if clip == clips[0] else "clip high" if clip == clips[
            -1] else None
        assert end == expected, name
    text = view.reading_text(data).markdown
    for name, _ in t2_fair_edges.binding(probe["tuning"], probe["edges_tuning"]):
        assert t2_report_label(name) in text


def t2_report_label(name: str) -> str:
    from fedrepro.chapters.headtohead import t2 as t2_view

    return t2_view.LABELS.get(name, name)
