"""The decade-grid reading of v2 Tables II-IV: the grid is the one stated (powers of ten in each
parameter's unit, within our grid's range), and the stored result tunes on it."""

from __future__ import annotations

import math

import pytest

from fedrepro.chapters.fedplt.readings import decade_grid as dg


def test_decades_are_the_powers_of_ten_in_the_range():
    assert dg.decades(0.05, 1.0) == [0.1, 1.0]
    assert dg.decades(0.01, 100.0) == [0.01, 0.1, 1.0, 10.0, 100.0]
    assert dg.decades(0.2, 0.9) == []  # no power of ten inside
    with pytest.raises(ValueError, match="lo and hi"):
        dg.decades(0.0, 1.0)
    with pytest.raises(ValueError, match="lo and hi"):
        dg.decades(2.0, 1.0)


def test_the_grid_is_the_stated_one():
    from fedrepro.problems import logistic_v2

    problem = logistic_v2(convex=True, seed=0, N=20, n=5, q=50)
    lam_bar = float(problem.lam_bar)
    assert dg.decade_grid("Fed-PLT", problem, 5, "gd") == {"rho": [0.01, 0.1, 1.0, 10.0, 100.0]}
    fedlin = dg.decade_grid("FedLin", problem, 5, "gd")["eta"]
    assert fedlin == pytest.approx([0.2 / lam_bar, 2.0 / lam_bar], rel=1e-12)  # {0.1, 1} x 2/lam_bar
    led = dg.decade_grid("LED", problem, 5, "gd")
    assert led["alpha"] == pytest.approx([0.1 / lam_bar, 1.0 / lam_bar], rel=1e-12)
    assert led["beta"] == pytest.approx([0.1 / 5, 1.0 / 5], rel=1e-12)
    assert dg.decade_grid("FedPD", problem, 5, "gd")["theta"] == [1.0]


def test_the_stored_reading_tunes_on_its_grid():
    result = dg.load_decade_grid("paper")["units"]
    config = dg.DecadeGridConfig.for_profile("paper")
    assert sorted(result) == sorted(config.units())
    for unit in result.values():
        means = [m for m in unit["tune_mean_K"] if m is not None and math.isfinite(m)]
        if unit["best_index"] >= 0:
            assert unit["tune_mean_K"][unit["best_index"]] == min(means)
            assert unit["best_params"] == unit["points"][unit["best_index"]]
