"""The numbers that the prose of the chapter "Participation and privacy" quotes, computed from
the stored results, so that the page glues them instead of typing them.

Each function reads the stored paper-profile results of
:mod:`fedrepro.chapters.fedplt.participation_privacy.participation` and
:mod:`fedrepro.chapters.fedplt.participation_privacy.noise` (this module is imported by neither,
so it lies outside their results' code) and returns a dict of floats and short strings. The
page formats them; ``tests/test_participation_facts.py`` pins them against the stored results
and the paper's tables. Paper values that the text quotes verbatim (e.g. v2 Table VI's 19.8k)
stay in the text; values *derived* from the paper (its iteration counts, its slopes and
ratios) are computed here too.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from fedrepro.report.prose import power_of_ten, span, times_word

__all__ = ["glued", "table_vi_facts", "s_norm_facts", "noise_v2_facts", "noise_v1_facts", "floor_facts",
           "readings_example"]


def table_vi_facts(profile: str = "paper") -> dict[str, Any]:
    """v2 Table VI: the tuned ``rho`` and our full-participation ``K*``; the paper's ``K*``
    decoded from its times (first fraction and full participation); our mean ``K*`` at the
    first fraction; ours/paper of the mean times (all fractions, and below full participation);
    the best ``rho`` of the per-fraction grids (the most frequent and the others, with their
    counts) and the share of the tuned ``rho``'s iterations that the best saves (smallest and
    largest over the fractions)."""
    from fedrepro.chapters.fedplt.participation_privacy import participation as part
    from fedrepro.report.paper import load_table

    r = part.load_cohorts(profile)
    s = part.cohort_summary(r)
    cfg = part.CohortsConfig.for_profile(profile)
    paper = {c.row: c.value for c in load_table("fedplt-v2-TVI")}
    fractions = np.asarray(r["fractions"], dtype=float)
    cohort = np.asarray(r["cohort"])
    full = int(np.flatnonzero(cohort == int(r["N"]))[0])
    pv = np.array([paper.get(part._pct(f), math.nan) for f in fractions])
    ratio = s["time_mean"] / pv
    partial = np.arange(len(fractions)) != full

    def paper_k(i: int) -> float:
        return float(part.decode_paper_iterations(pv[i], cfg.Ne, int(cohort[i]), cfg.t_G, cfg.t_C))

    tune = np.asarray(r["tune_mean_K"], dtype=float)
    rows = ~np.isnan(tune).all(axis=1)
    rhos = np.asarray(r["tune_rhos"], dtype=float)
    best = rhos[np.nanargmin(tune[rows], axis=1)]
    counts = Counter(float(b) for b in best).most_common()
    used = np.flatnonzero(np.isclose(rhos, float(r["rho"])))  # empty when the grid lacks it (quick profile)
    saving = (1.0 - np.nanmin(tune[rows], axis=1) / tune[rows, used[0]] if used.size
              else np.full(int(rows.sum()), math.nan))
    others = ", ".join(f"{times_word(n)} {b:g}" for b, n in counts[1:])
    return {"rho": float(r["rho"]), "K_full": float(s["K_mean"][full]), "K_first": float(s["K_mean"][0]),
            "first_pct": float(fractions[0]), "paper_K_first": paper_k(0), "paper_K_full": paper_k(full),
            "ratio_min": float(np.nanmin(ratio)), "ratio_max": float(np.nanmax(ratio)),
            "partial_ratio_min": float(np.nanmin(ratio[partial])), "partial_ratio_max": float(np.nanmax(ratio[partial])),
            "best_rho": counts[0][0], "best_rho_others": others,
            "saving_min": float(saving.min()), "saving_max": float(saving.max())}


def s_norm_facts(profile: str = "paper") -> dict[str, float]:
    """The norms of ``S`` (Proposition 1) that the text quotes (printed with the loose constant;
    corrected with the tight one), ``sigma`` of Proposition 2 at the smallest cohort, and the
    gradient-descent cohorts' measured rates against the mean contraction ``1 - p(1 - r_1)``
    (largest deviation)."""
    from fedrepro.chapters.fedplt.participation_privacy import participation as part

    r = part.load_exact(profile)
    S = r["S"]
    gd = list(r["solvers"]).index("gd")
    cohorts = [j for j, name in enumerate(r["settings"]) if str(name).startswith("cohort")]
    p = np.asarray(r["p"], dtype=float)[cohorts]
    rates = np.asarray(r["rate"], dtype=float)[gd, cohorts]
    r1 = float(rates[int(np.argmax(p))])
    return {"printed_loose": float(S["printed_loose"]), "corrected_tight": float(S["corrected_tight"]),
            "p_first": float(p[0]), "sigma_first": float(part.participation_sigma(p[0], S["corrected_tight"])),
            "rate_first": float(rates[0]), "rate_full": r1,
            "mean_contraction_dev": float(np.max(np.abs(rates - part.mean_contraction(p, r1))))}


def _paper_rows(version: str) -> tuple[np.ndarray, np.ndarray]:
    from fedrepro.chapters.fedplt.participation_privacy import noise

    return noise._paper(version)


def noise_v2_facts(profile: str = "paper") -> dict[str, Any]:
    """v2 Table VII: the paper's log-log slope; ours under both readings (range over the three
    distances); ours/paper of the identified distance under the variance reading (range over
    the rows, RMS of ``log10`` over the rows outside the paper's floor) and the standard-deviation
    reading (range); the whole state's and the model point's ratios; the burn-in; Corollary 1's
    limit per unit ``tau`` and its ratio to our whole-state distance (range over the rows)."""
    from fedrepro.chapters.fedplt.participation_privacy import noise

    r = noise.load_noise(profile, "v2")
    v_all, p_all = _paper_rows("v2")
    keep = np.isin(v_all, r["values"])
    v, p = v_all[keep], p_all[keep]
    dom = noise._noise_dominated(p)
    q, _, rms = noise.identify_quantity(r)
    slopes = {rd: [noise.loglog_slope(v, noise.floor_values(r, qq, rd, v)) for qq in noise.QUANTITIES]
              for rd in noise.READINGS}
    ours = noise.floor_values(r, q, "variance", v) / p
    std = noise.floor_values(r, q, "std", v) / p
    xz = noise.floor_values(r, "xz", "variance", v)
    model = noise.floor_values(r, "model", "variance", v) / p
    taus = np.array([noise.noise_std(float(x), "variance") for x in v])
    limit = noise.corollary1_floor(r, taus)
    return {"quantity": q, "paper_slope": noise.loglog_slope(v, p), "rows": int(v.size),
            "slope_variance_min": min(slopes["variance"]), "slope_variance_max": max(slopes["variance"]),
            "slope_std_min": min(slopes["std"]), "slope_std_max": max(slopes["std"]),
            "ratio_min": float(ours.min()), "ratio_max": float(ours.max()), "rms_log10": rms,
            "std_ratio_min": float(std.min()), "std_ratio_max": float(std.max()),
            "xz_ratio_min": float((xz / p).min()), "xz_ratio_max": float((xz / p).max()),
            "model_ratio": float(10 ** np.mean(np.log10(model[dom]))),
            "burn_in": int(r["K_burn"]), "window": int(r["K_avg"]),
            "limit_per_tau": float(limit[0] / taus[0]),
            "limit_over_xz_min": float((limit / xz).min()), "limit_over_xz_max": float((limit / xz).max())}


def noise_v1_facts(profile: str = "paper") -> dict[str, float]:
    """v1 Table IV: the paper's factor per decade on the rows outside its floor (smallest and
    largest); our distances against the paper's there (geometric means of the whole state and
    the stacked models; range of the model point)."""
    from fedrepro.chapters.fedplt.participation_privacy import noise

    r = noise.load_noise(profile, "v1")
    v_all, p_all = _paper_rows("v1")
    keep = np.isin(v_all, r["values"])
    v, p = v_all[keep], p_all[keep]
    dom = noise._noise_dominated(p)
    vd, pd_ = v[dom], p[dom]
    per_decade = (pd_[1:] / pd_[:-1]) ** (1.0 / np.log10(vd[1:] / vd[:-1]))

    def ratio(q: str) -> np.ndarray:
        return (noise.floor_values(r, q, "variance", v) / p)[dom]

    model = ratio("model")
    return {"first_dominated": float(vd[0]), "decade_min": float(per_decade.min()), "decade_max": float(per_decade.max()),
            "xz_ratio": float(10 ** np.mean(np.log10(ratio("xz")))), "x_ratio": float(10 ** np.mean(np.log10(ratio("x")))),
            "model_ratio_min": float(model.min()), "model_ratio_max": float(model.max())}


def floor_facts(profile: str = "paper", from_value: float = 1e-4) -> dict[str, Any]:
    """v1 Table IV's floor (:func:`~fedrepro.chapters.fedplt.participation_privacy.noise.floor_evidence`):
    the noise coefficients ``g`` that each floor model implies on the rows from ``from_value`` up
    (smallest and largest), the models' largest relative residuals, the floor against ``||x*||``,
    and v2's fitted floor against v2's smallest entry."""
    from fedrepro.chapters.fedplt.participation_privacy import noise

    ev = noise.floor_evidence(profile)
    v1, _ = _paper_rows("v1")
    _, p2 = _paper_rows("v2")
    rows = v1 >= from_value * (1 - 1e-9)
    gq = np.asarray(ev["fit_v1"]["quadrature"]["g_rows"])[rows]
    ga = np.asarray(ev["fit_v1"]["additive"]["g_rows"])[rows]
    f2 = float(ev["fit_v2"]["quadrature"]["f"])
    return {"paper_floor": float(ev["paper_floor"]), "our_smallest": float(ev["our_smallest"]),
            "g_quadrature_min": float(gq.min()), "g_quadrature_max": float(gq.max()),
            "g_additive_min": float(ga.min()), "g_additive_max": float(ga.max()),
            "residual_quadrature": float(ev["fit_v1"]["quadrature"]["max_rel_residual"]),
            "residual_additive": float(ev["fit_v1"]["additive"]["max_rel_residual"]),
            "horizon_model": int(ev["horizon_model"]), "horizon_x": int(ev["horizon_x"]),
            "floor_share": float(ev["paper_floor"] / ev["x_star_norm"]),
            "stated_eps_model": float(ev["stated_eps_model"]),
            "v2_floor": f2, "v2_floor_fraction": float(p2.min() / f2)}


def readings_example(profile: str = "paper", reading: str = "weight 0.5, s = 1.5") -> dict[str, Any]:
    """v1 Table III under the readings (:func:`fedrepro.chapters.fedplt.readings.effects.effects_frame`):
    the row with the most active agents below ``N`` under ``reading`` beside the paper's value,
    and the number of misses that the readings explain (every row not a match)."""
    from fedrepro.chapters.fedplt.readings import effects

    frame = effects.effects_frame("fedplt-v1-TIII", profile)
    agents = sorted(int(a) for a in frame.index)
    misses = int(sum(c != "(match)" for c in frame["cause of the miss"]))
    if reading not in frame.columns or len(agents) < 2:  # the quick profile runs other readings
        return {"agents": agents[-1], "ours": math.nan, "paper": math.nan, "misses": misses}
    row = frame.loc[agents[-2]] if agents[-2] in frame.index else frame.loc[str(agents[-2])]
    return {"agents": agents[-2], "ours": float(row[reading]), "paper": float(row["paper"]), "misses": misses}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name
    (the page's hidden cell glues each; the formats keep round-off digits out of the text)."""
    from fedrepro.chapters.fedplt.participation_privacy import scorecard as card

    v1 = card.v1_rate_facts(profile)
    vi, sn = table_vi_facts(profile), s_norm_facts(profile)
    n2, n1 = noise_v2_facts(profile), noise_v1_facts(profile)
    fl, ex = floor_facts(profile), readings_example(profile)
    best = f"{vi['best_rho']:g}" + (f", {vi['best_rho_others']}" if vi["best_rho_others"] else "")
    return {
        # v1 Table III (scorecard.v1_rate_facts: the rates and formula deviations the scorecard uses)
        "fedplt-pp-v1-rho": f"{v1['rho_states']:g}",
        "fedplt-pp-v1-rate-states": f"{v1['states']:.3f}",
        "fedplt-pp-v1-rate-model": f"{v1['model_point']:.3f}",
        "fedplt-pp-v1-rate-rho03": f"{v1['rate_rho03']:.2f}",
        "fedplt-pp-v1-fit-paper-mean": f"{v1['fit_paper_mean']:.3f}",
        "fedplt-pp-v1-fit-paper-sigma": f"{v1['fit_paper_sigma']:.3f}",
        "fedplt-pp-v1-fit-ours-mean": f"{v1['fit_ours_mean']:.3f}",
        "fedplt-pp-rho": f"{vi['rho']:g}",
        "fedplt-pp-k-full": f"{vi['K_full']:.3g}",
        "fedplt-pp-k-first": f"{vi['K_first']:.3g}",
        "fedplt-pp-first-pct": _pct(vi["first_pct"]),
        "fedplt-pp-paper-k-full": f"{vi['paper_K_full']:.0f}",
        "fedplt-pp-paper-k-first": f"{vi['paper_K_first']:.0f}",
        "fedplt-pp-vi-ratios": span(vi["ratio_min"], vi["ratio_max"], ".2f"),
        "fedplt-pp-vi-partial-ratios": span(vi["partial_ratio_min"], vi["partial_ratio_max"], ".2f"),
        "fedplt-pp-best-rho": best,
        "fedplt-pp-saving": span(100 * vi["saving_min"], 100 * vi["saving_max"], ".0f") + " %",
        "fedplt-pp-s-printed": f"{sn['printed_loose']:.2f}",
        "fedplt-pp-s-tight": f"{sn['corrected_tight']:.3f}",
        "fedplt-pp-exact-first-pct": _pct(sn["p_first"]),
        "fedplt-pp-sigma-first": f"{sn['sigma_first']:.2f}",
        "fedplt-pp-rate-first": f"{sn['rate_first']:.2f}",
        "fedplt-pp-rate-full": f"{sn['rate_full']:.2f}",
        "fedplt-pp-mean-contraction-dev": f"{sn['mean_contraction_dev']:.3f}",
        "fedplt-pp-reading-agents": str(ex["agents"]),
        "fedplt-pp-reading-ours": f"{ex['ours']:.3f}",
        "fedplt-pp-reading-paper": f"{ex['paper']:.3f}",
        "fedplt-pp-reading-misses": str(ex["misses"]),
        "fedplt-pp-burn-in": str(n2["burn_in"]),
        "fedplt-pp-window": str(n2["window"]),
        "fedplt-pp-v2-paper-slope": f"{n2['paper_slope']:.3f}",
        "fedplt-pp-v2-slope-variance": span(n2["slope_variance_min"], n2["slope_variance_max"], ".2f"),
        "fedplt-pp-v2-slope-std": span(n2["slope_std_min"], n2["slope_std_max"], ".2f"),
        "fedplt-pp-v2-ratios": span(n2["ratio_min"], n2["ratio_max"], ".2f"),
        "fedplt-pp-v2-rows": str(n2["rows"]),
        "fedplt-pp-v2-rms": f"{n2['rms_log10']:.3f}",
        "fedplt-pp-v2-std-ratios": span(n2["std_ratio_min"], n2["std_ratio_max"], ".2g"),
        "fedplt-pp-v2-xz-ratios": span(n2["xz_ratio_min"], n2["xz_ratio_max"], ".2g"),
        "fedplt-pp-v2-model-ratio": f"{n2['model_ratio']:.2g}",
        "fedplt-pp-v2-limit": power_of_ten(n2["limit_per_tau"], 3),
        "fedplt-pp-v2-limit-ratio": span(n2["limit_over_xz_min"], n2["limit_over_xz_max"], ".0f"),
        "fedplt-pp-v1-decade": span(n1["decade_min"], n1["decade_max"], ".2g"),
        "fedplt-pp-v1-xz-ratio": f"{n1['xz_ratio']:.2g}",
        "fedplt-pp-v1-x-ratio": f"{n1['x_ratio']:.2g}",
        "fedplt-pp-v1-model-ratios": span(n1["model_ratio_min"], n1["model_ratio_max"], ".2f"),
        "fedplt-pp-v1-floor": f"{fl['paper_floor']:.3g}",
        "fedplt-pp-v1-smallest": power_of_ten(fl["our_smallest"], 2),
        "fedplt-pp-g-quadrature": span(fl["g_quadrature_min"], fl["g_quadrature_max"], ".2g"),
        "fedplt-pp-g-additive": span(fl["g_additive_min"], fl["g_additive_max"], ".2g"),
        "fedplt-pp-residual-quadrature": f"{fl['residual_quadrature']:.2f}",
        "fedplt-pp-residual-additive": f"{fl['residual_additive']:.2f}",
        "fedplt-pp-horizon-model": str(fl["horizon_model"]),
        "fedplt-pp-horizon-x": str(fl["horizon_x"]),
        "fedplt-pp-floor-share": f"{100 * fl['floor_share']:.0f} %",
        "fedplt-pp-stated-eps": f"{fl['stated_eps_model']:.2f}",
        "fedplt-pp-v2-floor": f"{fl['v2_floor']:.2g}",
        "fedplt-pp-v2-floor-fraction": f"1/{fl['v2_floor_fraction']:.0f}",
    }
