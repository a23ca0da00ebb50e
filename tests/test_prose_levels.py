"""The seed-spread rule of :mod:`fedrepro.report.prose` that the pages use to rank two entries:
"A is higher than B" only when the difference of their means over the seeds exceeds the larger
of their standard deviations (n − 1), "level" otherwise; pinned on constructed inputs (either
side of the threshold) and on the stored ALI-DPFL case the experiments page words with it."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.report import prose


def test_a_difference_above_the_larger_sd_ranks_and_one_below_it_is_level():
    b = [10.0, 11.0, 12.0]  # mean 11, sd 1
    assert prose.compare_over_seeds([12.1, 12.1, 12.1], b) == "higher"  # 1.1 > max(0, 1)
    assert prose.compare_over_seeds([11.9, 11.9, 11.9], b) == "level"  # 0.9 < 1
    assert prose.compare_over_seeds(b, [12.1, 12.1, 12.1]) == "lower"
    # the larger of the two sds decides, not the smaller (a has sd 2, b has sd 0)
    assert prose.compare_over_seeds([11.5, 13.5, 15.5], [12.0, 12.0, 12.0]) == "level"  # 1.5 < 2
    assert prose.compare_over_seeds([14.5, 16.5, 18.5], [12.0, 12.0, 12.0]) == "higher"  # 4.5 > 2
    assert prose.ranking("tau = 5", [12.1] * 3, "tau = 1", b) == "tau = 5 is higher than tau = 1"
    assert prose.ranking("tau = 5", [11.9] * 3, "tau = 1", b) == "tau = 5 and tau = 1 are level"


def test_the_rule_uses_the_sample_sd():
    a, b = [0.0, 2.0], [1.2, 1.2]  # sample sd of a: √2 ≈ 1.41 (population sd: 1)
    assert np.std(a, ddof=1) == pytest.approx(2 ** 0.5)
    assert prose.compare_over_seeds([x + 1.3 for x in a], b) == "level"  # 0.1 < 1.41


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="a must hold at least two"):
        prose.compare_over_seeds([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="b must hold at least two"):
        prose.compare_over_seeds([1.0, 2.0], [1.0, float("nan")])
    with pytest.raises(ValueError, match="entries must not be empty"):
        prose.level_group({})


def test_level_group_keeps_every_entry_level_with_the_highest_mean():
    entries = {"tau=1": [57.0, 58.0, 57.2], "tau=3": [62.5, 62.8, 62.2], "tau=5": [66.4, 66.5, 65.8],
               "tau=7": [66.6, 66.0, 65.9], "tau=9": [66.8, 66.4, 65.8]}
    assert prose.level_group(entries) == ["tau=5", "tau=7", "tau=9"]
    assert prose.level_group({"x": [1.0, 1.0], "y": [5.0, 5.0]}) == ["y"]


@pytest.mark.stored
def test_the_stored_table_iv_cell_is_worded_level():
    """Table IV at ε = 2.75 (seeds 0, 1, 2): τ = 9 leads τ = 5 by about 0.1 point against
    standard deviations of about 0.4–0.5: level; τ = 5 leads τ = 3 by several points: higher."""
    from fedrepro.chapters.alidpfl import tables
    from fedrepro.core.cache import read_only

    with read_only():
        seeds = tables.stored_seeds("paper", "spec")
    key = tables.cell_key("IV", "Rs=Rc/5", 2.75)
    vals = {m: [seeds[s]["table"][key][m] for s in sorted(seeds)] for m in ("tau=3", "tau=5", "tau=9")}
    diff = np.mean(vals["tau=9"]) - np.mean(vals["tau=5"])
    assert 0 < diff < max(np.std(vals["tau=9"], ddof=1), np.std(vals["tau=5"], ddof=1))
    assert prose.compare_over_seeds(vals["tau=9"], vals["tau=5"]) == "level"
    assert prose.compare_over_seeds(vals["tau=5"], vals["tau=3"]) == "higher"


def test_the_rule_on_summaries_matches_the_rule_on_seeds():
    rng = np.random.default_rng(7)
    for _ in range(200):
        a, b = rng.normal(0, 1, 3), rng.normal(rng.normal(0, 1), rng.uniform(0.1, 2), 3)
        expected = prose.compare_over_seeds(a, b)
        got = prose.compare_summaries(a.mean(), a.std(ddof=1), b.mean(), b.std(ddof=1))
        assert got == expected
    assert prose.compare_summaries(88.52, 0.2, 88.2, 0.2) == "higher"  # 0.32 > 0.2
    assert prose.compare_summaries(88.3, 0.2, 88.2, 0.15) == "level"  # 0.1 < 0.2
    with pytest.raises(ValueError, match="sd_b"):
        prose.compare_summaries(1.0, 0.1, 1.0, float("nan"))
    with pytest.raises(ValueError, match="standard deviations must be >= 0"):
        prose.compare_summaries(1.0, -0.1, 1.0, 0.1)


def test_the_baselines_gaps_follow_the_rule():
    from fedrepro.chapters.headtohead import baselines

    assert baselines._gap(0.9, 0.002, 0.8997, 0.002) == "+0.0 (level)"  # 0.03 pts < 0.2 pts
    assert baselines._gap(0.9, 0.002, 0.89, 0.002) == "+1.0"  # 1 pt > 0.2 pts
    assert baselines._gap(float("nan"), 0.0, 0.9, 0.0) == "—"
    with pytest.raises(ValueError, match="verdict"):
        baselines.verdict_phrase("better")
