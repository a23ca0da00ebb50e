"""The numbers the participation-and-privacy page glues into its prose
(:mod:`fedrepro.chapters.fedplt.participation_privacy.facts`): the formatting helpers, each
glued number against the table the page shows beside it (built by other code of the chapter),
and the statements the prose makes around them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.fedplt.participation_privacy import facts, noise
from fedrepro.chapters.fedplt.participation_privacy import participation as pp
from fedrepro.core.cache import read_only
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "fedplt" / "participation-privacy.ipynb"


@pytest.fixture(scope="module")
def glued():
    with read_only():
        return facts.glued("paper")


@pytest.mark.stored
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(glued):
    assert prose.glue_coverage(PAGE, glued) == (set(), set())
    assert "facts.glued(profile)" in PAGE.read_text(encoding="utf-8")


@pytest.mark.stored
def test_table_vi_facts_are_the_table_the_page_shows(glued):
    with read_only():
        table = pp.table_vi("paper")
        tuning = pp.tuning_frame("paper")
        f = facts.table_vi_facts("paper")
    ratios = table["ours/paper"].astype(float)
    assert glued["fedplt-pp-vi-ratios"] == f"{ratios.min():.2f} to {ratios.max():.2f}"
    assert float(table["K* ours (mean)"].iloc[0]) == pytest.approx(f["K_first"], rel=2e-3)
    assert table["K* paper"].iloc[0] == f"{f['paper_K_first']:g}" and table["K* paper"].iloc[-1] == f"{f['paper_K_full']:g}"
    # the text: every time within the scorecard's 25 % of the paper's
    assert ratios.between(0.75, 1.25).all()
    # the text: the best penalty at partial participation is larger than the one used
    best = tuning["best rho"].astype(float)
    assert (best > f["rho"]).all() and f["best_rho"] == best.mode()[0]
    assert 0 < f["saving_min"] <= f["saving_max"] < 0.25


@pytest.mark.stored
def test_s_norm_facts_are_the_tables_the_page_shows():
    with read_only():
        exact = pp.load_exact("paper")
        frame = pp.s_norm_frame(exact)
        rates = pp.exact_frame("paper")
        f = facts.s_norm_facts("paper")
    assert frame.loc[("printed", "loose"), "||S||"] == f"{f['printed_loose']:.3g}"
    assert frame.loc[("corrected", "tight"), "||S||"] == f"{f['corrected_tight']:.3g}"
    assert f["printed_loose"] > 1 > f["corrected_tight"]  # the text: S is not even stable; S~ is
    gd = rates.loc["gd"]
    assert gd["rate"].iloc[0] == f"{f['rate_first']:.3g}" and gd.loc["cohort 100%", "rate"] == f"{f['rate_full']:.3g}"
    p = np.array([0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    r = gd["rate"].iloc[:7].astype(float).to_numpy()
    assert f["mean_contraction_dev"] == pytest.approx(np.max(np.abs(r - (1 - p * (1 - r[-1])))), abs=2e-3)


@pytest.mark.stored
def test_noise_facts_are_the_tables_the_page_shows(glued):
    with read_only():
        v2 = noise.load_noise("paper", "v2")
        reading = noise.reading_frame(v2)
        table = noise.table_vii("paper")
        v1_reading = noise.reading_frame(noise.load_noise("paper", "v1"))
        f2, f1 = facts.noise_v2_facts("paper"), facts.noise_v1_facts("paper")
    stacked = reading.loc[("||x - 1 x*|| (stacked)", "variance")]
    assert stacked["slope paper"] == f"{f2['paper_slope']:.3g}"
    assert stacked["rms log10 ratio"] == f"{f2['rms_log10']:.3g}"
    col = table["ours/paper"].astype(float)
    assert glued["fedplt-pp-v2-ratios"] == f"{col.min():.2f} to {col.max():.2f}" and len(col) == f2["rows"]
    std = table["ours/paper (tau = value)"].astype(float)
    assert f2["std_ratio_min"] == pytest.approx(std.min(), rel=2e-3) and f2["std_ratio_max"] == pytest.approx(std.max(), rel=2e-3)
    # the text: the variance reading's slope is about 1/2, the standard deviation's about 1
    assert 0.45 < f2["slope_variance_min"] <= f2["slope_variance_max"] < 0.55
    assert 0.95 < f2["slope_std_min"] <= f2["slope_std_max"] < 1.05
    assert v1_reading.loc[("||[x;z] - [x*;z*]||", "variance"), "ratio (geo. mean)"] == f"{f1['xz_ratio']:.3g}"
    assert v1_reading.loc[("||xbar - x*||", "variance"), "ratio min"] == f"{f1['model_ratio_min']:.3g}"
    # the text: Corollary 1's limit bounds the whole-state distance
    assert f2["limit_over_xz_min"] > 1


@pytest.mark.stored
def test_floor_facts_match_the_evidence_table_and_the_prose():
    with read_only():
        f = facts.floor_facts("paper")
    fit = noise.floor_models(*noise._paper("v1"))
    g = fit["quadrature"]["g_rows"][2:]
    assert (f["g_quadrature_min"], f["g_quadrature_max"]) == (pytest.approx(g.min()), pytest.approx(g.max()))
    # the text: the quadrature fit's residual is about half the additive one's
    assert 0.4 < f["residual_quadrature"] / f["residual_additive"] < 0.6
    # the text: a leftover transient of the floor's size would need a run of a few iterations
    assert 0 < f["horizon_model"] <= f["horizon_x"] <= 5
    assert f["v2_floor_fraction"] > 5 and 0.1 < f["floor_share"] < 0.5


@pytest.mark.stored
def test_readings_example_is_a_row_of_the_effects_table():
    with read_only():
        ex = facts.readings_example("paper")
    assert ex["agents"] == 9 and ex["misses"] == 9
    assert abs(ex["ours"] - ex["paper"]) <= 0.05  # the text: within the scorecard's tolerance
