"""The numbers the three ALI-DPFL pages glue into their prose
(:mod:`fedrepro.chapters.alidpfl.facts`): the formatting helper, each glued number against the
table the page shows beside it (built by other code of the chapter) or an independent
recomputation, and the statements the prose makes around them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fedrepro.alidpfl.models import make_cnn, num_parameters
from fedrepro.chapters.alidpfl import experiments, facts, scorecard, settings, tables, theory
from fedrepro.core.cache import read_only
from fedrepro.privacy.budget import max_steps_bisection
from fedrepro.report import paper as paper_values
from fedrepro.report import prose

BOOK = Path(__file__).resolve().parents[1] / "book" / "alidpfl"


def test_glued_refuses_an_unknown_page():
    with pytest.raises(ValueError, match="page must be one of"):
        facts.glued("paper", "errata")


@pytest.fixture(scope="module")
def glued():
    with read_only():
        return {page: facts.glued("paper", page) for page in facts.PAGES}


@pytest.mark.stored
@pytest.mark.parametrize("page", facts.PAGES)
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(glued, page):
    path = BOOK / f"{page}.ipynb"
    assert prose.glue_coverage(path, glued[page]) == (set(), set())
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert f'facts.glued(profile, "{page}")' in code
    ours = set(glued[page])
    # no page glues another page's facts under the same name
    others = set().union(*(set(glued[p]) for p in facts.PAGES if p != page))
    assert not ours & others


@pytest.mark.stored
def test_accounting_facts_are_the_iterations_table_and_invert_the_accountant(glued):
    frame = settings.iterations_frame()
    f = facts.accounting_facts()
    g = glued["settings"]
    assert frame.loc[1.55, "R_c basic (paper)"] == f["rc_basic"] == 79  # the paper's R_c, typed in the text
    assert g["alidpfl-sf-improved-iterations"] == str(frame.loc[1.55, "R_c improved (public code)"])
    steps = frame.loc[1.55, "DP-SGD steps if 'iteration' = local epoch"]
    assert g["alidpfl-sf-epoch-steps"] == f"{steps:,}"
    ratio = frame["R_c improved (public code)"] / frame["R_c basic (paper)"]
    assert g["alidpfl-sf-improved-ratio"] == f"{ratio.min():.1f} to {ratio.max():.1f}"
    assert g["alidpfl-sf-epoch"] == f"{1 / 0.015:.0f}"
    # the ε that 79 steps spend at q = 0.05: the accountant allows exactly 79 steps at that ε, fewer just below
    for conversion, eps in (("basic", f["code_eps_basic"]), ("improved", f["code_eps_improved"])):
        assert max_steps_bisection(eps * (1 + 1e-9), 0.05, 1.1, 1e-5, conversion=conversion) == 79
        assert 70 < max_steps_bisection(eps * 0.99, 0.05, 1.1, 1e-5, conversion=conversion) < 79
    # the text: not 1.55, and the improved conversion spends less than the basic one
    assert 1.55 < f["code_eps_improved"] < f["code_eps_basic"]
    assert settings.public_code_iterations() < f["rc_basic"]


@pytest.mark.stored
def test_reading_facts_are_the_tables_the_settings_page_shows(glued):
    with read_only():
        seeds = settings.load_seeds("paper")
        f = facts.reading_facts("paper")
    paper = settings.paper_level_79()
    frame = settings.seeds_frame(seeds, paper)
    labels = settings.labels_frame(seeds[0])
    unaccounted = settings.unaccounted_frame()
    g = glued["settings"]
    assert labels.loc["spec (q = 0.015, ÷ 90, shards) (drawn, seed 0)", "|D_i| (mean)"] == f["client_size"]
    assert g["alidpfl-sf-unaccounted"] == str(unaccounted.loc[1, "unaccounted (estimates)"])
    assert unaccounted.loc[1, "accounted (DP-SGD)"] == f["accounted"]
    assert g["alidpfl-sf-full-passes"] == "12,000" and g["alidpfl-sf-full-ratio"] == f"{12000 / 90:.0f}"
    # the expected batches against the records the runs actually sampled (79 steps, 10 clients)
    for reading, batch in (("spec", f["accounted"]), ("code-q-divisor", f["code_batch"])):
        assert seeds[0][reading]["sampled_records"] / (79 * 10) == pytest.approx(batch, rel=0.02)
    assert f["code_step_ratio"] == pytest.approx(f["code_batch"] / 64)
    assert f["step_bound"] == pytest.approx(0.5 * 0.1)
    gap = (frame["best over curve, mean (%)"] - frame["mean (%)"]).abs().max()
    assert f["best_gap_max"] == pytest.approx(gap, abs=0.11)
    # the text: the spec misses the paper by more than 20 points; the non-private run stays below
    # it on every seed; without the noise the runs reach the same as with it; eta = 4 stays well below
    assert f["spec_gap"] > 20 and frame.loc["spec (q = 0.015, ÷ 90, shards)", "mean − paper (points)"] < -20
    assert frame.loc["no noise, no clipping", "max (%)"] < paper
    spec, no_noise = frame.loc["spec (q = 0.015, ÷ 90, shards)"], frame.loc["clipping, no noise"]
    assert abs(spec["mean (%)"] - no_noise["mean (%)"]) < 1
    assert frame.loc["spec with eta = 4", "mean (%)"] < paper - 10
    # the public code's complete setting: best over rounds the same as its final accuracy
    code = frame.loc[settings.READINGS["public-code"][0]]
    assert code["best over curve, mean (%)"] == code["mean (%)"]
    # the best over rounds stays far below the paper for every reading (the gap's bound is small against it)
    assert frame["best over curve, mean (%)"].max() < paper - 5 and f["best_gap_max"] < 5
    # four random shards per client give the paper's "three or four labels"
    assert 3 <= labels.loc["4 random shards (expected)", "labels per client"] <= 4


@pytest.mark.stored
def test_tau1_growth_is_read_off_the_tau1_curve(glued):
    with read_only():
        run = experiments.load_tables("paper")["runs"]["tau-1"]
        f = facts.tau1_growth_facts("paper")
    rounds, acc = np.asarray(run["curve_rounds"]), 100 * np.asarray(run["curve_accuracy"])

    def at(n: int) -> float:
        return float(acc[rounds <= n][-1])

    assert (f["first_iterations"], f["last_iterations"]) == (79, 317)  # the text's 79 and 317
    assert f["growth"] == pytest.approx(at(317) - at(79))
    assert glued["settings"]["alidpfl-sf-tau1-growth"] == f"{at(317) - at(79):.1f}"
    assert 0 < f["growth"] and at(317) < 80 - 20  # the text: far from 80 %


@pytest.mark.stored
def test_experiments_facts_are_the_tables_the_page_shows(glued):
    with read_only():
        result = experiments.load_tables("paper")
        code = tables.stored_tables("paper", 0, "authors_code")
        seeds = tables.stored_seeds("paper", "spec")
        f = facts.experiments_facts("paper")
    g = glued["experiments"]
    budget = tables.budget_frame(result, "paper")
    first = budget.loc["II: Rs=Rc, eps = 1.75"]
    assert first["R_s"] == f["first_rounds"] == 158 and g["alidpfl-ef-first-rc"] == f"{first['R_c']:.0f}"
    assert first["R_s"] < first["R_c"]  # the text: not Condition I
    # the authors'-code reading: its runs, and its per-sample gradients against the spec's
    assert code is not None and g["alidpfl-ef-code-runs"] == str(len(code["runs"]))
    sampled = [code["runs"][n]["sampled_records"] / result["runs"][n]["sampled_records"]
               for n in result["runs"] if n.startswith("tau-")]
    assert f["code_work"] == pytest.approx(np.mean(sampled), rel=0.01)
    # seeds: the median ranges of the spread table, below the gaps to the paper and Table IV's shortfall
    spread = tables.seeds_spread_frame(seeds)
    assert g["alidpfl-ef-median-range"] == f"{spread['median range (points)'].max():.1f}"
    counts = tables.summary_counts(result)
    ours_iv = tables.ours_frame(result, "IV")
    shortfall_iv = ours_iv.drop(index="ALI-DPFL").max() - ours_iv.loc["ALI-DPFL"]
    assert f["median_range_max"] < abs(counts["mean"]) and f["median_range_max"] < shortfall_iv.min()
    # the text: on every seed every claim has the same outcome
    frame = scorecard.claims_by_seed_frame(seeds, "paper")
    seed_cols = [c for c in frame.columns if c.startswith("seed ")]
    assert len(seed_cols) == 3 and (frame[seed_cols].nunique(axis=1) == 1).all()
    # Table III: ALI-DPFL's shortfall to the best fixed tau, of the size of the spread
    ours_iii = tables.ours_frame(result, "III")
    shortfall = ours_iii.drop(index="ALI-DPFL").max() - ours_iii.loc["ALI-DPFL"]
    assert g["alidpfl-ef-iii-shortfall"] == f"{shortfall.min():.1f} to {shortfall.max():.1f}"
    assert 0 < shortfall.max() <= spread.loc["Table III", "largest range (points)"]
    # the paper's Table IV entry tau = 9 at eps = 3.25 against its neighbours
    paper_iv = {c.column: float(c.value) for c in paper_values.load_table(tables.TABLES["IV"])
                if c.row == "tau=9" and "F-MNIST" in c.column}
    row = [paper_iv[f"Rs=Rc/5 F-MNIST eps={e}"] for e in ("2.75", "3.25", "3.75")]
    assert row[1] == 71.13 and f["misprint_dip"] == pytest.approx(min(row[0], row[2]) - row[1])
    assert 9 < f["misprint_dip"] < 10  # the text's "almost ten points"


@pytest.mark.stored
def test_the_findings_statements_of_the_experiments_page():
    with read_only():
        result = experiments.load_tables("paper")
        code = tables.stored_tables("paper", 0, "authors_code")
    # the gap is largest in Table II and smallest in Table IV
    gaps = {t: float(np.nanmean(tables.diff_frame(result, t).to_numpy(dtype=float))) for t in ("II", "III", "IV")}
    assert gaps["II"] < gaps["III"] < gaps["IV"] < 0
    # in Table II every fixed tau lands within two points of every other
    ours_ii = tables.ours_frame(result, "II").drop(index="ALI-DPFL")
    assert ((ours_ii.max() - ours_ii.min()) <= tables.TOLERANCE).all()
    # rho of order 1e-2 and beta of order 1e-1 to 1, growing during training
    ali = [r["constants"] for n, r in result["runs"].items() if n.startswith("ali-")]
    assert all(1e-3 < np.median(c["rho"]) < 1e-1 for c in ali)
    assert all(0.05 < np.min(c["beta"]) and np.max(c["beta"]) < 5 and c["beta"][-1] > c["beta"][0] for c in ali)
    # the authors' code's reading closes less than half of the gap
    assert 0 < tables.authors_code_summary(result, code)["closed"] < 0.5


@pytest.mark.stored
def test_theory_facts_are_the_stored_checks_and_the_cnn(glued):
    with read_only():
        res = theory.load_theory("paper")
        f = facts.theory_facts("paper")
    g = glued["theory"]
    summary = theory.summary_frame(res)
    for case in ("det", "noisy"):
        obs, bound = res[f"theorem1_{case}_observed"], res[f"theorem1_{case}_bound"]
        assert bound[1] == 0 and obs.size == 7  # h(1) = 0; t = 0..6 within one interval of tau = 6
        for t in (3, 6):
            assert g[f"alidpfl-tf-{case}-ratio-{t}"] == f"{bound[t] / obs[t]:.0f}"
        assert 1 < f[f"{case}_ratio_3"] < f[f"{case}_ratio_6"]  # loose, and looser with t
    assert f["det_ratio_6"] > 40  # the text's "more than fortyfold" without noise
    row = summary.loc["Lemma 3, full batch, no clipping"]
    assert f["lemma3_spare"] == pytest.approx(float(row["bound"]) / float(row["observed"]), rel=2e-3)
    assert 2 <= f["lemma3_spare"] < 3 and row["verdict"] == "holds"
    assert all(summary.loc[f"Lemma 3, {c}", "verdict"] == "fails"
               for c in ("sampled, no clipping", "full batch, clipped", "sampled and clipped"))
    # eq. (8): B/2 with B = q|D_i| = 90
    assert f["eq8_ratio"] == pytest.approx(90 / 2, rel=1e-4) and g["alidpfl-tf-eq8-ratio"] == "45"
    # d: the CNN of the runs, counted on a fresh model, and the d of the statements' checks
    assert f["d"] == num_parameters(make_cnn((1, 28, 28), seed=0)) == 582_026
    assert g["alidpfl-tf-d"] == "582,026"
