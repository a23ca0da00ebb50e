"""The reading study's helpers: the public code's iteration count and the spread over seeds."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.chapters.alidpfl import settings
from fedrepro.privacy.budget import epsilon_after_steps


def test_public_code_iterations_spend_at_most_the_papers_epsilon():
    n = settings.public_code_iterations()
    eps_n = float(epsilon_after_steps(n, 0.05, 1.1, 1e-5, conversion="improved")[0])
    eps_next = float(epsilon_after_steps(n + 1, 0.05, 1.1, 1e-5, conversion="improved")[0])
    assert eps_n <= 1.55 < eps_next
    # the paper's 79 iterations at q = 0.05 would spend far more than 1.55
    assert float(epsilon_after_steps(79, 0.05, 1.1, 1e-5, conversion="improved")[0]) > 2.5


def _run(acc: float, best: float, its: int = 79) -> dict:
    return {"eval_rounds": np.array([its]), "eval_accuracy": np.array([acc]), "best_curve_accuracy": best}


def test_seeds_frame_gives_each_readings_spread_and_gap():
    results = {0: {"spec": _run(0.50, 0.52), "public-code": _run(0.20, 0.25, 3)},
               1: {"spec": _run(0.56, 0.57), "public-code": _run(0.10, 0.12, 3)},
               2: {"spec": _run(0.53, 0.55), "public-code": _run(0.30, 0.31, 3)}}
    frame = settings.seeds_frame(results, paper_level=80.0)
    spec = frame.loc[settings.READINGS["spec"][0]]
    assert spec["iterations"] == 79
    assert (spec["seed 0 (%)"], spec["seed 1 (%)"], spec["seed 2 (%)"]) == (50.0, 56.0, 53.0)
    assert (spec["mean (%)"], spec["min (%)"], spec["max (%)"]) == (53.0, 50.0, 56.0)
    assert spec["best over curve, mean (%)"] == pytest.approx(54.7)
    assert spec["mean − paper (points)"] == pytest.approx(-27.0)
    assert frame.loc[settings.READINGS["public-code"][0], "iterations"] == 3


def test_every_chapter_reading_is_defined_and_runs_under_each_seed():
    units = settings._seed_units()
    assert len(units) == len(settings.CHAPTER_READINGS) * len(settings.SPREAD_SEEDS)
    assert all(u.split("@seed")[0] in settings.READINGS for u in units)
