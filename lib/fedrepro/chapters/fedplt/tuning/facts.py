"""The numbers that the prose of the chapter "Fed-PLT: tuning the penalty and the local
training" quotes, computed from the stored results, so that the page glues them instead of
typing them.

Each function reads the stored paper-profile results of
:mod:`fedrepro.chapters.fedplt.tuning.sweeps` (v2 Tables VIII-IX, v1 Figs. 2-3, the
sensitivity read from the comparison chapter's tuning) and of the readings of the v1 problem
(:mod:`fedrepro.chapters.fedplt.readings`); this module is imported by none of them, so it lies
outside their results' code. The page formats the facts with :func:`glued`;
``tests/test_fedplt_tuning_facts.py`` pins them against the tables and printed summaries the
page shows beside them. Paper values quoted verbatim (the window ``[0.3, 3]``, the paper's
``rho = 0.3``) and the protocol's settings stay in the text; values *derived* from the paper
(its iteration counts decoded from its times, their ratio) are computed here too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.report.prose import number_word, span

__all__ = ["glued", "table_viii_facts", "table_ix_facts", "sensitivity_facts", "v1_rho_facts", "v1_ne_facts",
           "readings_facts", "grid_width"]


def grid_width(values: Any, mean_K: Any, factor: float = 1.2) -> float:
    """The ratio of the largest to the smallest grid value of the contiguous run around the
    argmin of ``mean_K`` (``values`` increasing) on which ``mean_K <= factor * min``: the factor
    over which the parameter can vary keeping ``K*`` within ``factor`` of the best."""
    v, k = np.asarray(values, dtype=float), np.asarray(mean_K, dtype=float)
    if v.ndim != 1 or v.shape != k.shape or v.size < 1 or not np.all(np.diff(v) > 0):
        raise ValueError("values must be increasing and of the shape of mean_K")
    b = int(np.argmin(k))
    ok = k <= factor * k[b]
    lo, hi = b, b
    while lo > 0 and ok[lo - 1]:
        lo -= 1
    while hi < v.size - 1 and ok[hi + 1]:
        hi += 1
    return float(v[hi] / v[lo])


def table_viii_facts(profile: str = "paper") -> dict[str, float]:
    """v2 Table VIII against Tables II, III and IX (:func:`~.sweeps.table_viii_consistency`):
    Table VIII's best ``rho`` and its decoded ``K*``, the decoded ``K*`` of the tuned cells of
    the other three tables (their value and number), the ratio of the two; and ours at
    ``N_e = 5`` on the dense grid: ``K*(rho = 1)``, the best ``K*`` and their ratio (Fig. "K*
    against rho"), the best ``rho``; and at Table VIII's ``rho`` (the errata cite these): the
    paper's decoded ``K*``, ours, and ours/paper (the ratio of the times, both at the same
    per-iteration cost)."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    c = sweeps.table_viii_consistency()
    v2 = sweeps.load_v2_sweeps(profile)
    dense, Kd = np.asarray(v2["dense_rhos"], dtype=float), sweeps.k_or_inf(v2["K_dense"])
    one = int(np.argmin(np.abs(np.log(dense))))
    at = [int(np.argmin(np.abs(np.log(dense / r)))) for r in c["rho"]]
    return {"paper_best_rho": c["best_rho"], "paper_K_viii_best": c["K_viii_best"],
            "paper_K_tuned": float(np.min(c["K_tuned"])), "paper_tuned_values": float(len(c["K_tuned_values"])),
            "paper_tuned_cells": float(len(c["K_tuned"])), "paper_ratio": c["ratio"],
            "K_rho1": float(Kd[one]), "K_best": float(np.min(Kd)), "rho1_factor": float(Kd[one] / np.min(Kd)),
            "rho_best": float(dense[int(np.argmin(Kd))]), "viii_rhos": [float(r) for r in c["rho"]],
            "paper_K_viii": [float(k) for k in c["K_viii"]], "K_viii_rhos": [float(Kd[i]) for i in at],
            "viii_ratios": [float(Kd[i] / k) for i, k in zip(at, c["K_viii"], strict=True)]}


def table_ix_facts(profile: str = "paper") -> dict[str, Any]:
    """v2 Table IX: the paper's decoded ``K*`` at its largest ``N_e`` (its plateau); ours: the
    best ``K*`` of exact PRS (``N_e -> infinity``) and of Fed-PLT with GD over ``N_e`` (``rho``
    tuned per ``N_e``), and with ``rho`` fixed at the ``N_e = 5`` optimum the best ``N_e`` at the
    smaller costs ``t_C`` (one value for all of them) and at the largest."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    v2 = sweeps.load_v2_sweeps(profile)
    paper = sweeps.paper_K_star("fedplt-v2-TIX")
    last = paper["Ne"].max()
    Kt, _ = sweeps.tuned_K(v2, "tuned")
    fixed = sweeps.table_ix_argmin(v2, "fixed")
    tcs = sorted(fixed)
    low = {n for t in tcs[:-1] for n in fixed[t]}
    if len(low) != 1 or len(fixed[tcs[-1]]) != 1:
        raise ValueError(f"the best N_e with rho fixed is not one value below the largest t_C: {fixed}")
    return {"paper_plateau": float(paper.loc[paper["Ne"] == last, "K*"].mean()), "paper_last_Ne": int(last),
            "prs_K": float(np.min(sweeps.k_or_inf(v2["K_prox"]))), "gd_K": float(np.min(Kt)),
            "gd_Ne": int(np.asarray(v2["Nes"])[int(np.argmin(Kt))]),
            "fixed_Ne_low": int(low.pop()), "fixed_Ne_high": int(fixed[tcs[-1]][0]),
            "low_tC_max": float(tcs[-2]), "high_tC": float(tcs[-1])}


def _slice(entry: Mapping[str, Any], key: str) -> tuple[np.ndarray, np.ndarray]:
    from fedrepro.chapters.fedplt.tuning import sweeps

    return sweeps._slices(entry)[key]


def sensitivity_facts(profile: str = "paper") -> dict[str, float]:
    """The sensitivity of the tuned algorithms (:func:`~.sweeps.sensitivity`, the comparison
    chapter's grid searches in the setting of v2 Table II): the factor over which Fed-PLT's
    ``rho`` and FedPD's ``eta`` keep the mean ``K*`` within 20 % of the best (smallest and
    largest of the two), and how many of 5GCS's grid points miss the tuning cap (of how many)."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    s = sweeps.sensitivity(profile)
    widths = [grid_width(*_slice(s[name], key)) for name, key in (("FedPD", "eta"), ("Fed-PLT", "rho"))]
    g = np.asarray(s["5GCS"]["mean_K"], dtype=float)
    return {"flat_min": min(widths), "flat_max": max(widths),
            "gcs_over_cap": float(np.sum(~np.isfinite(g))), "gcs_points": float(g.size)}


def v1_rho_facts(profile: str = "paper") -> dict[str, float]:
    """v1 Fig. 2 (:func:`~.sweeps.v1_rates_summary`): the best ``rho`` of Fed-PLT (10 local GD
    steps); ``1/sqrt(lam lam_bar)``, where ``zeta`` of Lemma 3 is smallest; the smallest rate
    fitted on the second half of the run; and, on the ``rho`` of the exact-PRS sweep, the bands
    where 10 GD steps are as fast as the exact prox (within :data:`~.sweeps.RATE_RESOLUTION`,
    the largest such ``rho`` below the slower band), slower (its ends and the largest gap) and
    faster (its ends)."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    v1 = sweeps.load_v1_rates(profile)
    s = sweeps.v1_rates_summary(v1)
    rhos, rate = np.asarray(v1["fig2_rhos"], dtype=float), np.asarray(v1["fig2_rate"], dtype=float)
    tail = np.asarray(v1["fig2_window"]) == "tail"
    common, gap = [], []
    for r, p in zip(np.asarray(v1["prox_rhos"], dtype=float), np.asarray(v1["prox_rate"], dtype=float), strict=True):
        d = np.abs(np.log(rhos / r))
        if d.min() < 1e-9:
            common.append(r)
            gap.append(float(rate[int(np.argmin(d))] - p))
    common, gap = np.array(common), np.array(gap)
    slower, faster = gap > sweeps.RATE_RESOLUTION, gap < -sweeps.RATE_RESOLUTION
    first_slow = common[slower].min()
    equal_below = common[(~slower & ~faster) & (common < first_slow)]
    return {"best_rho": s["fig2_argmin_rho"], "prox_best_rho": s["prox_argmin_rho"],
            "zeta_rho": 1.0 / math.sqrt(float(v1["lam"]) * float(v1["lam_bar"])),
            "tail_rate_min": float(rate[tail].min()),
            "equal_max": float(equal_below.max()),
            "slower_lo": float(first_slow), "slower_hi": float(common[slower].max()), "slower_gap": float(gap.max()),
            "faster_lo": float(common[faster].min()), "faster_hi": float(common[faster].max())}


def v1_ne_facts(profile: str = "paper", rho_shape: float = 3.0) -> dict[str, int]:
    """v1 Fig. 3 (:func:`~.sweeps.ne_profile`): at the paper's ``rho`` (the first of the sweep),
    the smallest ``N_e`` from which every rate is within 0.05 of exact PRS; at ``rho_shape``,
    the ``N_e`` of the minimum."""
    from fedrepro.chapters.fedplt.tuning import sweeps

    fig3 = sweeps.v1_rates_summary(sweeps.load_v1_rates(profile))["fig3"]
    shape = next(p for p in fig3 if np.isclose(p["rho"], rho_shape))
    return {"close_from_Ne": int(fig3[0]["within_005_from_Ne"]), "shape_argmin": int(shape["argmin"])}


def readings_facts(profile: str = "paper") -> dict[str, Any]:
    """The readings of the v1 problem: the optimum ``rho`` of Fed-PLT's Fig. 2 curve under the
    printed class (the regulariser weight of v1's function class) at every feature scale of the
    grid (smallest and largest); Fig. 3 at ``rho = 0.3`` (:mod:`.readings.epochs`): the ``N_e``
    of the minimum under the reading that the figure adopts, and the optimum ``rho`` under each
    other reading (not the main setting), by reading."""
    from fedrepro.chapters.fedplt.readings import effects
    from fedrepro.chapters.fedplt.readings.epochs import load_readings_epochs
    from fedrepro.chapters.fedplt.readings.experiments import MAIN, PRINTED_CLASS, load_readings_grid
    from fedrepro.chapters.fedplt.tuning import sweeps

    g = load_readings_grid(profile)
    a = int(np.flatnonzero(np.isclose(g["weights"], PRINTED_CLASS[0]))[0])
    opt = np.asarray(g["argmin_rho"], dtype=float)[a]
    e = load_readings_epochs(profile)
    chosen = effects.epochs_reading(e)
    readings = [tuple(float(x) for x in r) for r in np.asarray(e["readings"])]
    j = readings.index(chosen)
    p = sweeps.ne_profile(e["Nes"], e["rate"][j], float(e["prox_rate"][j]))
    others = {r: effects.rho_optimum(profile, *r)["argmin_rho"] for r in readings if r not in (chosen, MAIN)}
    return {"class_rho_min": float(opt.min()), "class_rho_max": float(opt.max()),
            "reading": chosen, "reading_argmin": int(p["argmin"]), "other_rho": others}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name
    (the page's hidden cell glues each; the formats keep round-off digits out of the text)."""
    from fedrepro.chapters.fedplt.readings.experiments import PRINTED_CLASS

    viii, ix, sens = table_viii_facts(profile), table_ix_facts(profile), sensitivity_facts(profile)
    rho, ne, rd = v1_rho_facts(profile), v1_ne_facts(profile), readings_facts(profile)
    # the other readings' optima (the quick profile runs fewer readings: NaN where one is missing)
    scale1 = next((v for (w, s), v in rd["other_rho"].items() if w == PRINTED_CLASS[0]), math.nan)
    weight05 = next((v for (w, s), v in rd["other_rho"].items() if w != PRINTED_CLASS[0]), math.nan)
    return {
        "fedplt-tn-viii-paper-k": f"{viii['paper_K_viii_best']:.0f}",
        "fedplt-tn-paper-k-tuned": f"{viii['paper_K_tuned']:.0f}",
        "fedplt-tn-paper-tuned-cells": number_word(int(viii["paper_tuned_cells"])),
        "fedplt-tn-viii-ratio": f"{viii['paper_ratio']:.2g}",
        "fedplt-tn-rho1-factor": f"{viii['rho1_factor']:.2g}",
        "fedplt-tn-viii-paper-k-all": ", ".join(f"{k:.0f}" for k in viii["paper_K_viii"]),
        "fedplt-tn-viii-ours-k-all": ", ".join(f"{k:.0f}" for k in viii["K_viii_rhos"]),
        "fedplt-tn-viii-ours-over-paper": ", ".join(f"{r:.3f}" for r in viii["viii_ratios"]),
        "fedplt-tn-k-best": f"{viii['K_best']:.0f}",
        "fedplt-tn-rho-best": f"{viii['rho_best']:.3g}",
        "fedplt-tn-viii-ratio-exact": f"{viii['paper_ratio']:.3g}",
        "fedplt-tn-paper-plateau": f"{ix['paper_plateau']:.0f}",
        "fedplt-tn-prs-k": f"{ix['prs_K']:.0f}",
        "fedplt-tn-gd-k": f"{ix['gd_K']:.0f}",
        "fedplt-tn-fixed-ne-low": str(ix["fixed_Ne_low"]),
        "fedplt-tn-fixed-ne-high": str(ix["fixed_Ne_high"]),
        "fedplt-tn-flat-range": f"{sens['flat_min']:.2g} to {sens['flat_max']:.2g}",
        "fedplt-tn-tail-rate": f"{rho['tail_rate_min']:.2g}",
        "fedplt-tn-v1-best-rho": f"{rho['best_rho']:.3g}",
        "fedplt-tn-zeta-rho": f"{rho['zeta_rho']:.2g}",
        "fedplt-tn-class-rho": span(rd["class_rho_min"], rd["class_rho_max"], ".2g", "–"),
        "fedplt-tn-equal-max": f"{rho['equal_max']:.2g}",
        "fedplt-tn-slower-lo": f"{rho['slower_lo']:.2g}",
        "fedplt-tn-slower-hi": f"{rho['slower_hi']:.2g}",
        "fedplt-tn-slower-gap": f"{rho['slower_gap']:.2g}",
        "fedplt-tn-faster-lo": f"{rho['faster_lo']:.2g}",
        "fedplt-tn-faster-hi": f"{rho['faster_hi']:.2g}",
        "fedplt-tn-close-from": str(ne["close_from_Ne"]),
        "fedplt-tn-shape-argmin": str(ne["shape_argmin"]),
        "fedplt-tn-reading-argmin": str(rd["reading_argmin"]),
        "fedplt-tn-scale1-rho": f"{scale1:.2g}",
        "fedplt-tn-weight05-rho": f"{weight05:.2g}",
    }
