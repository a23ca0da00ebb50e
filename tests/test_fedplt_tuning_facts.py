"""The numbers the Fed-PLT tuning page glues into its prose
(:mod:`fedrepro.chapters.fedplt.tuning.facts`): the formatting helpers, each glued number
against the table or printed summary the page shows beside it (built by other code of the
chapter) or an independent recomputation, and the statements the prose makes around them."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.fedplt.tuning import facts, sweeps
from fedrepro.core.cache import read_only
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "fedplt" / "tuning.ipynb"


def test_grid_width_takes_the_contiguous_run_around_the_best():
    v = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    assert facts.grid_width(v, [13, 11, 10, 12, 11]) == pytest.approx(8.0)
    assert facts.grid_width(v, [13, 20, 10, 12, 13]) == pytest.approx(2.0)
    assert facts.grid_width(v, [10, 20, 10.5, 30, 10]) == pytest.approx(1.0)  # a run, not every point within
    with pytest.raises(ValueError):
        facts.grid_width([2.0, 1.0], [1.0, 2.0])


@pytest.fixture(scope="module")
def glued():
    with read_only():
        return facts.glued("paper")


@pytest.fixture(scope="module")
def v1_text():
    with read_only():
        return sweeps.v1_rates_text(sweeps.load_v1_rates("paper"))


@pytest.mark.stored
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(glued):
    nb = json.loads(PAGE.read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    cited = set(re.findall(r"\{glue:text\}`([a-z0-9-]+)`", text))
    by_name = set(re.findall(r'book\.glue\("([a-z0-9-]+)"', code))
    assert cited <= set(glued) | by_name, f"cited but not glued: {sorted(cited - set(glued) - by_name)}"
    # a glued name is cited by the page or by another page of the book (the errata)
    assert prose.glue_coverage(PAGE, glued) == (set(), set())
    assert "facts.glued(profile)" in code


@pytest.mark.stored
def test_table_viii_facts_are_the_decoded_paper_and_the_table_the_page_shows(glued):
    printed = sweeps.table_viii_text()
    with read_only():
        v2 = sweeps.load_v2_sweeps("paper")
        table = sweeps.table_viii(v2)
        f = facts.table_viii_facts("paper")
    assert f"rho=1: {glued['fedplt-tn-viii-paper-k']}," in printed
    m = re.search(r"Tables II, III and IX at Ne=5 \(rho tuned\): (\S+) \((\d+) cells\)", printed)
    assert m.group(1) == glued["fedplt-tn-paper-k-tuned"] and prose.number_word(int(m.group(2))) == \
        glued["fedplt-tn-paper-tuned-cells"]
    assert f"best rho / tuned K*: {f['paper_ratio']:.3g}" in printed
    assert f["paper_best_rho"] == 1.0  # the text: Table VIII's best is rho = 1
    assert f["paper_tuned_values"] == 1  # the text: all equal
    assert "every decoded value an integer: True" in printed  # the setting: every decoded value an integer
    assert f["paper_ratio"] > 4  # the introduction: more than four times
    ours = table["K* ours"]
    assert ours.loc["1"] / ours.iloc[-1] == pytest.approx(f["rho1_factor"])
    assert table.index[-1] == f"tuned ({sweeps.sig3(float(v2['dense_rhos'][np.argmin(sweeps.k_or_inf(v2['K_dense']))]))})"
    # the text: rho = 1 beats 0.1 and 10; our counts between a half and a quarter of the paper's
    assert ours.loc["1"] < min(ours.loc["0.1"], ours.loc["10"])
    ratio = ours.iloc[:3].astype(float) / table["K* paper"].iloc[:3].astype(float)
    assert ratio.between(0.25, 0.5).all()
    # the text: our tuned K* is close to Table II's (within the scorecard's 25 %)
    assert abs(float(table["ours/paper"].iloc[-1]) - 1) <= 0.25
    # the text: the minimum of K* and of zeta lie in [0.3, 3] (claim v2-C28)
    dense = np.asarray(v2["dense_rhos"])
    assert 0.3 <= dense[np.argmin(sweeps.k_or_inf(v2["K_dense"]))] <= 3
    assert 0.3 <= dense[np.argmin(v2["zeta_dense"])] <= 3


@pytest.mark.stored
def test_table_ix_facts_are_the_tables_the_page_shows(glued):
    with read_only():
        v2 = sweeps.load_v2_sweeps("paper")
        tuned, fixed = sweeps.table_ix(v2), sweeps.table_ix(v2, "fixed")
        printed = sweeps.table_ix_text(v2)
        f = facts.table_ix_facts("paper")
    paper = tuned["K* paper"].astype(float).groupby(level="Ne").first()
    ours = tuned["K* ours"].astype(float).groupby(level="Ne").first()
    # the text: the paper's counts settle at the plateau from N_e = 8 on; ours keep falling
    assert (paper.loc[[8, 10, 20]] == float(glued["fedplt-tn-paper-plateau"])).all()
    assert ours.is_monotonic_decreasing and ours.loc[20] < ours.loc[5]
    # the text: within 25 % of the paper's for N_e <= 5
    r = tuned["ours/paper"].astype(float)
    assert r[r.index.get_level_values("Ne") <= 5].between(0.75, 1.25).all()
    assert f"exact PRS (Ne = infinity): best K* = {glued['fedplt-tn-prs-k']} at" in printed
    assert f"Fed-PLT GD: best K* = {glued['fedplt-tn-gd-k']} at Ne = 20" in printed  # "twenty local steps"
    assert f["gd_K"] < f["prs_K"]  # fewer than exact PRS
    lo, hi = glued["fedplt-tn-fixed-ne-low"], glued["fedplt-tn-fixed-ne-high"]
    assert f"(rho fixed): tC=0.1: [{lo}], tC=1: [{lo}], tC=10: [{lo}], tC=100: [{hi}]" in printed
    assert (fixed.index.get_level_values("Ne").unique() == tuned.index.get_level_values("Ne").unique()).all()
    # the text: no interior optimum at t_C = 10 and 100, twenty local steps fastest there
    assert "(rho tuned): tC=0.1: [2], tC=1: [2, 5], tC=10: [20], tC=100: [20]" in printed
    assert max(v2["Nes"]) == 20


def _width(frame, algorithm: str, key: str) -> float:
    m = re.search(rf"{key}: x([0-9.]+) of", frame.loc[algorithm, "range within 20%"])
    return float(m.group(1))


@pytest.mark.stored
def test_sensitivity_facts_are_the_table_the_page_shows(glued):
    with read_only():
        s = sweeps.sensitivity("paper")
        frame = sweeps.sensitivity_frame(s)
        f = facts.sensitivity_facts("paper")
    widths = sorted([_width(frame, "FedPD", "eta"), _width(frame, "Fed-PLT", "rho")])
    assert f["flat_min"] == pytest.approx(widths[0], rel=5e-3) and f["flat_max"] == pytest.approx(widths[1], rel=5e-3)
    assert glued["fedplt-tn-flat-range"] == f"{widths[0]:.2g} to {widths[1]:.2g}"
    slices = {name: sweeps._slices(s[name]) for name in s["algorithms"]}
    # the text: Fed-PLT's rho and FedPD's eta have interior optima
    for name, key in (("Fed-PLT", "rho"), ("FedPD", "eta")):
        k = slices[name][key][1]
        assert 0 < int(np.argmin(k)) < k.size - 1
    # the text: FedLin, TAMUNA and LED are tuned at the largest step, K* falling as the step grows
    for name, key in (("FedLin", "eta"), ("TAMUNA", "gamma"), ("LED", "alpha")):
        k = slices[name][key][1]
        assert int(np.argmin(k)) == k.size - 1
        finite = k[np.isfinite(k)]
        assert np.all(np.diff(finite) < 0)
    # the text: 5GCS's sharp optimum, only its chosen point within 20 %, most of its grid over the cap
    assert all(_width(frame, "5GCS", key) == 1 for key in s["5GCS"]["keys"])
    assert frame.loc["5GCS", "K* > cap"] == f["gcs_over_cap"] and frame.loc["5GCS", "grid points"] == f["gcs_points"]
    assert f["gcs_over_cap"] > f["gcs_points"] / 2


@pytest.mark.stored
def test_v1_rho_facts_are_the_summary_the_page_prints(glued, v1_text):
    from fedrepro.core import operators as ops

    with read_only():
        v1 = sweeps.load_v1_rates("paper")
        f = facts.v1_rho_facts("paper")
    best = glued["fedplt-tn-v1-best-rho"]
    assert f"best rho {best} (rate" in v1_text and f"exact PRS: best rho {best} (rate" in v1_text  # the same best rho
    # zeta of Lemma 3: its minimiser, recomputed on a fine grid, and the grid point the summary prints
    lam, lam_bar = float(v1["lam"]), float(v1["lam_bar"])
    fine = np.geomspace(0.05, 5, 40001)
    zeta = [ops.prs_contraction(float(r), lam, lam_bar) for r in fine]
    assert fine[int(np.argmin(zeta))] == pytest.approx(f["zeta_rho"], rel=1e-3)
    rhos = np.asarray(v1["fig2_rhos"])
    nearest = rhos[np.argmin(np.abs(np.log(rhos / f["zeta_rho"])))]
    assert f"zeta of Lemma 3: best rho {sweeps.sig3(float(nearest))}" in v1_text
    # the bands of 10 GD steps against the exact prox, recomputed on the rho both sweeps share
    gap = {round(float(r), 9): float(np.asarray(v1["fig2_rate"])[np.argmin(np.abs(rhos - r))] - p)
           for r, p in zip(v1["prox_rhos"], v1["prox_rate"], strict=True) if np.min(np.abs(rhos / r - 1)) < 1e-9}
    res = sweeps.RATE_RESOLUTION
    slow = [r for r, d in gap.items() if d > res]
    fast = [r for r, d in gap.items() if d < -res]
    assert (min(slow), max(slow)) == (pytest.approx(f["slower_lo"]), pytest.approx(f["slower_hi"]))
    assert f"largest |Fed-PLT - exact PRS| over the {len(gap)} common rho: {f['slower_gap']:.3g}" in v1_text
    faster = re.search(r"faster than the exact prox \(by > [0-9.]+\) at rho = (.*)", v1_text).group(1).split(", ")
    assert (faster[0], faster[-1]) == (f"{f['faster_lo']:.3g}", f"{f['faster_hi']:.3g}")
    assert (min(fast), max(fast)) == (pytest.approx(f["faster_lo"]), pytest.approx(f["faster_hi"]))
    # the text: each band is one interval; as fast below the slower band, and again above the faster one
    order = sorted(gap)
    kinds = ["slow" if r in slow else "fast" if r in fast else "equal" for r in order]
    runs = [k for i, k in enumerate(kinds) if i == 0 or k != kinds[i - 1]]
    assert runs == ["equal", "slow", "fast", "equal"]
    assert max(r for r in order if r < min(slow)) == pytest.approx(f["equal_max"])
    assert f["equal_max"] < 0.3 < f["slower_lo"]  # the paper's rho lies at the edge of the slower band
    # the hollow symbols: rates fitted on the second half of the run, at both ends of the range, above 0.99
    tail = np.asarray(v1["fig2_window"]) == "tail"
    rate = np.asarray(v1["fig2_rate"])
    assert f"{int(tail.sum())} of {rhos.size} rates fitted on the second half" in v1_text
    assert tail[0] and tail[-1] and np.count_nonzero(np.diff(tail.astype(int))) == 2
    assert rate[tail].min() == f["tail_rate_min"] and f["tail_rate_min"] > 0.99


def _fig3_line(text: str, rho: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"Fig. 3 at rho={rho}:"))


@pytest.mark.stored
def test_v1_ne_facts_are_the_summary_the_page_prints(glued, v1_text):
    with read_only():
        v1 = sweeps.load_v1_rates("paper")
    # within 0.05 of exact PRS from N_e = ... on, recomputed from the curve at the paper's rho
    assert float(v1["fig3_rhos"][0]) == 0.3
    Nes, r, exact = np.asarray(v1["fig3_Nes"]), np.asarray(v1["fig3_rate"][0]), float(v1["fig3_prox_rate"][0])
    far = Nes[np.abs(r - exact) >= 0.05]
    assert str(int(Nes[Nes > far.max()].min())) == glued["fedplt-tn-close-from"]
    # the text at rho = 0.3: falls monotonically to exact PRS, never below it, equal for N_e > 20
    line = _fig3_line(v1_text, "0.3")
    assert np.all(np.diff(r) <= sweeps.RATE_RESOLUTION) and r.min() > exact - sweeps.RATE_RESOLUTION
    assert np.max(np.abs(r[Nes > 20] - exact)) < sweeps.RATE_RESOLUTION
    assert f"exact PRS {sweeps.sig3(exact)}" in line
    # the text at rho = 3: a minimum at the glued N_e, a rise, a plateau at exact PRS from about 20
    line3 = _fig3_line(v1_text, "3")
    assert f"first reached at Ne={glued['fedplt-tn-shape-argmin']}," in line3
    r3, e3 = np.asarray(v1["fig3_rate"][2]), float(v1["fig3_prox_rate"][2])
    assert r3.min() < e3 - sweeps.RATE_RESOLUTION and abs(r3[Nes == 20][0] - e3) < sweeps.RATE_RESOLUTION
    # the text at rho = 1: a deeper dip that settles later
    p = sweeps.v1_rates_summary(v1)["fig3"]
    assert p[1]["dip"] > p[2]["dip"] and p[1]["argmin"] > p[2]["argmin"]
    assert p[1]["max_gap_over_20"] > p[2]["max_gap_over_20"]


@pytest.mark.stored
def test_readings_facts_are_the_tables_and_claims_the_page_shows(glued):
    from fedrepro.chapters.fedplt.readings import effects
    from fedrepro.chapters.fedplt.readings.experiments import load_readings_grid, reading_label
    from fedrepro.chapters.fedplt.tuning import scorecard

    with read_only():
        f = facts.readings_facts("paper")
        epochs = effects.epochs_frame("paper")
        grid = load_readings_grid("paper")
        claims = scorecard.claims_text("paper")
    label = reading_label(*f["reading"])
    assert label == "weight 5, s = 4"  # the reading the text names
    assert str(epochs.loc[label, "at Ne"]) == glued["fedplt-tn-reading-argmin"]
    # weight 5 (v1's function class) at every feature scale of the grid: the optimum rho
    row = np.asarray(grid["argmin_rho"])[int(np.flatnonzero(np.isclose(grid["weights"], 5.0))[0])]
    assert prose.span(row.min(), row.max(), ".2g", "–") == glued["fedplt-tn-class-rho"]
    assert np.all((row >= 0.1) & (row <= 1))  # inside the window of v1's claim C11
    assert f"under the reading 'weight 5, s = 1' it holds: argmin rho={sweeps.sig3(f['other_rho'][(5.0, 1.0)])}" in claims
    # the text: scale 1 puts the optimum below 0.3, weight 0.5 above it
    assert glued["fedplt-tn-scale1-rho"] == f"{row[0]:.2g}" and float(glued["fedplt-tn-scale1-rho"]) < 0.3
    w05 = np.asarray(grid["argmin_rho"])[int(np.flatnonzero(np.isclose(grid["weights"], 0.5))[0]),
                                         int(np.flatnonzero(np.isclose(grid["scales"], 1.5))[0])]
    assert glued["fedplt-tn-weight05-rho"] == f"{w05:.2g}" and w05 > 0.3
    assert set(f["other_rho"]) == {(5.0, 1.0), (0.5, 1.5)}
    assert not math.isnan(f["class_rho_min"])


@pytest.mark.stored
def test_table_viii_facts_the_errata_cite_are_the_paper_times_and_our_sweep(glued):
    """The errata's Table VIII entry: the paper's K* decoded from its printed times (cost
    (N_e t_G + t_C) N of v2 Table II), ours at the same rho on the stored dense sweep, their
    ratio (the ratio of the times), and the best rho of the sweep, recomputed here from the
    paper's table and the stored sweep."""
    from fedrepro.report.paper import load_table

    with read_only():
        v2 = sweeps.load_v2_sweeps("paper")
    dense, Kd = np.asarray(v2["dense_rhos"], dtype=float), sweeps.k_or_inf(v2["K_dense"])
    cells = sorted(load_table("fedplt-v2-TVIII"), key=lambda c: float(sweeps.paper_K_star("fedplt-v2-TVIII")
                                                                     .set_index("id").loc[c.id, "rho"]))
    Ne, tC, N = int(v2["dense_Ne"]), 10.0, int(v2["N"])
    paper_K = [c.value / ((Ne * float(v2["tG"]) + tC) * N) for c in cells]
    assert np.allclose(paper_K, np.round(paper_K))  # every decoded value is an integer
    assert glued["fedplt-tn-viii-paper-k-all"] == ", ".join(f"{k:.0f}" for k in paper_K)
    ours = [float(Kd[int(np.argmin(np.abs(np.log(dense / r))))]) for r in (0.1, 1.0, 10.0)]
    assert glued["fedplt-tn-viii-ours-k-all"] == ", ".join(f"{k:.0f}" for k in ours)
    times = [sweeps.time_of(k, Ne, tC, v2["tG"], N) for k in ours]
    assert glued["fedplt-tn-viii-ours-over-paper"] == ", ".join(f"{t / c.value:.3f}" for t, c in zip(times, cells, strict=True))
    assert glued["fedplt-tn-k-best"] == f"{Kd.min():.0f}" and glued["fedplt-tn-rho-best"] == f"{dense[np.argmin(Kd)]:.3g}"
    # the errata: "U-shaped with its minimum in [0.3, 3]"; "a rho far from 1 [would have to be] faster than rho = 1"
    b = int(np.argmin(Kd))
    assert 0.3 <= dense[b] <= 3 and (np.diff(Kd[: b + 1]) <= 0).all() and (np.diff(Kd[b:]) >= 0).all()
    assert glued["fedplt-tn-viii-ratio-exact"] == f"{paper_K[1] / float(glued['fedplt-tn-paper-k-tuned']):.3g}"
