"""Tables II–IV chapter code at the quick profile (budgets ÷ 100, 100 records per client)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fedrepro.chapters.alidpfl import experiments

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.environ.get("FEDREPRO_DATA_MIRROR")
    or not (Path(os.environ["FEDREPRO_DATA_MIRROR"]) / "fashion-mnist").is_dir(),
    reason="Fashion-MNIST mirror absent ($FEDREPRO_DATA_MIRROR)")]


def test_quick_tables_share_prefixes_and_fill_every_cell(results_dir):
    cfg = experiments.TablesConfig(profile="quick")
    cells = experiments.cells(cfg)
    assert len(cells) == 12 and cells[0]["iterations"] == max(1, 177 // 100)
    out = experiments.load_tables("quick")
    assert set(out["runs"]) == set(experiments.units(cfg))
    for c in cells:
        row = out["table"][f"{c['table']}|{c['condition']}|{c['epsilon']}"]
        assert "ALI-DPFL" in row and "tau=1" in row
        assert all(0.0 <= v <= 100.0 for v in row.values())
    # R_s >= R_c: ALI-DPFL is the tau = 1 run; R_s < R_c: a separate run within the budgets
    for key, taus in out["taus"].items():
        table, condition, eps = key.split("|")
        c = next(c for c in cells if c["table"] == table and c["condition"] == condition
                 and str(c["epsilon"]) == eps)
        assert len(taus) <= c["rounds"] and sum(taus) <= c["iterations"]
        if c["rounds"] >= c["iterations"]:
            assert set(taus) == {1}
    # the replay of the tau* rule at the stored states gives back the run's own choices
    from fedrepro.chapters.alidpfl import tables

    for c in cells:
        run = out["runs"].get(f"ali-{c['table']}-eps{c['epsilon']}")
        if run is not None and c["rounds"] < c["iterations"]:
            replay = tables.tau_rule_replay(run, c["rounds"], c["iterations"], batch=tables.noise_batch("quick"))
            assert list(replay["loss"][:-1]) == list(run["taus"][1:])
