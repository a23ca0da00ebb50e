"""Scorecard provider of the chapter "Tuning Fed-PLT": v2 Tables VIII and IX (cells), v1
Figs. 2 and 3, and the claims about them (v2 C08, C09, C13, C28-C30; v1 C03, C11-C17).

Provider string: ``"fedrepro.chapters.fedplt.tuning.scorecard:outcomes"``. It reads the stored
paper-profile results of :mod:`fedrepro.chapters.fedplt.tuning.sweeps` (and, for the GD/AGD part
of v1 C16, the v1 Table II rates of :mod:`fedrepro.chapters.fedplt.comparison.experiments`).

Every claim check is a pure function of plain numbers (``check_*``), returning
``(holds, reason)``, so that the tests can feed it numbers on which it must fail. The
tolerances are written next to each check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.chapters.fedplt.tuning import sweeps
from fedrepro.chapters.fedplt.tuning.checks import (  # noqa: F401
    DRIFT_TOL,
    RES,
    _argmins,
    _profile_text,
    _rate_gap,
    check_interior_optimum,
    check_ne_grows_with_tc,
    check_no_drift,
    check_rho_optimum,
    check_u_shape,
    check_v1_close_for_small_ne,
    check_v1_close_to_prs,
    check_v1_dip,
    check_v1_dominated_by_prs,
    check_v1_inexact_faster,
    check_v1_plateau,
    check_v1_resembles_prs,
    check_v1_rho_optimum,
    check_v2_c13,
)
from fedrepro.report.book import sig3
from fedrepro.report.scorecard import ERRATUM_CAUSE, Outcome

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CLAIMS", "FIGURES", "check_interior_optimum", "check_ne_grows_with_tc", "check_no_drift",
    "check_rho_optimum", "check_u_shape", "check_v1_rho_optimum", "check_v1_resembles_prs",
    "check_v1_dip", "check_v1_plateau", "check_v1_close_to_prs", "check_v1_inexact_faster",
    "check_v1_dominated_by_prs",
    "check_v1_close_for_small_ne", "check_v2_c13", "claim_results", "claims_frame", "claims_text", "outcomes",
    "outcomes_for",
]

#: Claims this provider reports.
CLAIMS: tuple[str, ...] = (
    "fedplt-v2-C08", "fedplt-v2-C09", "fedplt-v2-C13", "fedplt-v2-C28", "fedplt-v2-C29", "fedplt-v2-C30",
    "fedplt-v1-C03", "fedplt-v1-C11", "fedplt-v1-C12", "fedplt-v1-C13", "fedplt-v1-C14", "fedplt-v1-C15",
    "fedplt-v1-C16", "fedplt-v1-C17",
)
#: Figures this provider reports ("match" when every claim about the figure holds).
FIGURES: tuple[str, ...] = ("fedplt-v1-F2", "fedplt-v1-F3")

# --------------------------------------------------------------------------- evaluation


def _times_by_tc(v2: Mapping[str, Any], rho: str = "tuned") -> dict[float, dict[int, float]]:
    K, _ = sweeps.tuned_K(v2, rho)
    return {float(tC): {int(n): float(sweeps.time_of(K[e], n, float(tC), v2["tG"], v2["N"]))
                        for e, n in enumerate(v2["Nes"])} for tC in v2["tCs"]}


def _viii_times(v2: Mapping[str, Any]) -> dict[float, float]:
    dense, Kd = np.asarray(v2["dense_rhos"]), sweeps.k_or_inf(v2["K_dense"])
    out = {}
    for r in v2["table_viii_rhos"]:
        i = int(np.argmin(np.abs(np.log(dense / r))))
        out[float(r)] = float(sweeps.time_of(Kd[i], int(v2["dense_Ne"]), 10.0, v2["tG"], v2["N"]))
    return out


def _gd_agd_gap(profile: str) -> float | None:
    from fedrepro.chapters.fedplt.comparison import experiments as comparison
    from fedrepro.core.cache import MissingResult

    try:
        units = comparison.load_v1_rates(profile)["units"]
    except MissingResult:
        return None
    gd, agd = units.get("gd-full-Fed-PLT"), units.get("agd-full-Fed-PLT")
    if gd is None or agd is None:
        return None
    return abs(float(gd["rate"]) - float(agd["rate"]))


def claim_results(v2: Mapping[str, Any], drift: Mapping[str, Any], v1: Mapping[str, Any],
                  gd_agd_gap: float | None) -> dict[str, tuple[bool, str]]:
    """``{claim id: (holds, reason)}`` from the results of the sweeps."""
    out: dict[str, tuple[bool, str]] = {}
    times = _times_by_tc(v2)
    ok, why = check_interior_optimum(times)
    okf, whyf = check_interior_optimum(_times_by_tc(v2, "fixed"))
    out["fedplt-v2-C08"] = (ok, f"rho tuned per Ne: {why}; rho fixed at the Ne=5 optimum: {whyf}")
    out["fedplt-v2-C29"] = out["fedplt-v2-C08"]
    argmins = sweeps.table_ix_argmin(v2)
    ok, why = check_ne_grows_with_tc(argmins)
    okf, whyf = check_ne_grows_with_tc(sweeps.table_ix_argmin(v2, "fixed"))
    out["fedplt-v2-C30"] = (ok, f"rho tuned per Ne: {why} (paper: 2, 2, 5, 8); rho fixed: {whyf}")
    Kt, _ = sweeps.tuned_K(v2, "tuned")
    errors = {f"Ne={int(n)}": float(e) for n, e in zip(drift["Nes"], drift["error"], strict=False)}
    errors["exact prox"] = float(drift["error"][-1])
    out["fedplt-v2-C09"] = check_no_drift(errors, bool(np.all(np.isfinite(Kt))))
    dense, Kd = np.asarray(v2["dense_rhos"]), sweeps.k_or_inf(v2["K_dense"])
    out["fedplt-v2-C28"] = check_rho_optimum(_viii_times(v2), float(dense[int(np.argmin(Kd))]),
                                             float(dense[int(np.argmin(v2["zeta_dense"]))]))
    s = sweeps.v1_rates_summary(v1)
    p03 = s["fig3"][0]
    Nes = np.asarray(v1["fig3_Nes"])
    upto20 = Nes <= 20
    p20 = sweeps.ne_profile(Nes[upto20], np.asarray(v1["fig3_rate"][0])[upto20], p03["exact"]) | {"rho": p03["rho"]}
    ok, why = check_v2_c13(p20, np.asarray(v1["fig3_S_printed"][0]))
    others = "; ".join(f"at rho={sig3(q['rho'])}: dip {_rate_gap(q['dip'])} at Ne={q['argmin']}" for q in s["fig3"][1:])
    K_prox = sweeps.k_or_inf(v2["K_prox"])
    v2_note = (f"; v2 Table IX setting (K*, rho tuned): best over Ne <= 20 {int(np.min(Kt))} against exact PRS "
               f"{int(np.min(K_prox))}" if np.all(np.isfinite([np.min(Kt), np.min(K_prox)])) else "")
    out["fedplt-v2-C13"] = (ok, why + (f"; other rho of our sweep: {others}" if others else "") + v2_note)
    out["fedplt-v1-C03"] = check_v1_dip(p03)
    out["fedplt-v1-C11"] = check_v1_rho_optimum(s["fig2_argmin_rho"], s["fig2_min_rate"], s["fig2_rate_low_end"],
                                                s["fig2_rate_high_end"])
    out["fedplt-v1-C12"] = check_v1_resembles_prs(
        check_u_shape(v1["fig2_rhos"], v1["fig2_rate"]), s["fig2_argmin_rho"],
        check_u_shape(v1["fig2_rhos"], v1["zeta"]), s["zeta_argmin_rho"],
        check_u_shape(v1["prox_rhos"], v1["prox_rate"]), s["prox_argmin_rho"])
    out["fedplt-v1-C13"] = check_v1_plateau(p03)
    out["fedplt-v1-C14"] = check_v1_close_to_prs(p03)
    ok, why = check_v1_inexact_faster(p03)
    out["fedplt-v1-C15"] = (ok, why + (f"; other rho of our sweep: {others}" if others else ""))
    out["fedplt-v1-C16"] = check_v1_dominated_by_prs(s["fig2_argmin_rho"], s["prox_argmin_rho"], p03, gd_agd_gap)
    out["fedplt-v1-C17"] = check_v1_close_for_small_ne(p03)
    return out


def _figure_claims() -> dict[str, list[str]]:
    from fedrepro.report.paper import claims

    return {fig: [c["id"] for c in claims("fedplt") if fig in (c.get("refers_to") or []) and c["id"] in CLAIMS]
            for fig in FIGURES}


def _cell_outcomes(v2: Mapping[str, Any]) -> dict[str, Outcome]:
    from fedrepro.report.paper import load_table

    out: dict[str, Outcome] = {}
    evidence = f"fedplt/{sweeps.V2SweepConfig.for_profile('paper').result_name()}.json"
    cons = sweeps.table_viii_consistency()
    dense, Kd = np.asarray(v2["dense_rhos"]), sweeps.k_or_inf(v2["K_dense"])
    viii = sweeps.paper_K_star("fedplt-v2-TVIII").set_index("id")
    for cell in load_table("fedplt-v2-TVIII"):
        rho = float(viii.loc[cell.id, "rho"])
        i = int(np.argmin(np.abs(np.log(dense / rho))))
        # K* times the cost: a multiple of 0.1 computed in floats, rounded off the float error
        ours = round(float(sweeps.time_of(Kd[i], int(v2["dense_Ne"]), 10.0, v2["tG"], v2["N"])), 6)
        out[cell.id] = Outcome(ours=ours, cause=ERRATUM_CAUSE, evidence=evidence, reason=(
            f"ours K*={int(Kd[i])} vs paper {sig3(float(viii.loc[cell.id, 'K*']))} (decoded); the paper's Table VIII "
            f"contradicts its Tables II, III and IX: its best rho (={sig3(cons['best_rho'])}) needs "
            f"K*={sig3(cons['K_viii_best'])}, {sig3(cons['ratio'])} times the K*={sig3(min(cons['K_tuned_values']))} "
            f"of the tuned rho at the same Ne=5 (see the errata page); ours: K*={int(Kd[i])} at rho={sig3(rho)}, "
            f"{int(np.min(Kd))} at the best rho={sig3(float(dense[int(np.argmin(Kd))]))}"))
    K, rhos = sweeps.tuned_K(v2, "tuned")
    Kf, _ = sweeps.tuned_K(v2, "fixed")
    ix = sweeps.paper_K_star("fedplt-v2-TIX").set_index("id")
    Nes = [int(n) for n in v2["Nes"]]
    prs_cause = prs_limit_cause(v2, _paper_plateau())
    for cell in load_table("fedplt-v2-TIX"):
        Ne, tC = int(ix.loc[cell.id, "Ne"]), float(ix.loc[cell.id, "tC"])
        e = Nes.index(Ne)
        ours = round(float(sweeps.time_of(K[e], Ne, tC, v2["tG"], v2["N"])), 6)  # as above
        out[cell.id] = Outcome(ours=ours, cause=prs_cause[0], evidence=evidence, reason=(
            f"our random data: K*={int(K[e])} (rho={sig3(float(rhos[e]))} tuned per Ne) vs paper "
            f"{sig3(float(ix.loc[cell.id, 'K*']))} (decoded); with rho fixed at the Ne=5 optimum K*={int(Kf[e])}; "
            + prs_cause[1]))
    return out


def prs_limit_cause(v2: Mapping[str, Any], paper_plateau: float) -> tuple[str, str]:
    """(cause, sentence) of a Table IX miss at large ``N_e``: Fed-PLT tends to exact PRS as
    ``N_e`` grows (v2 §V), so its ``K*`` at large ``N_e`` is set by exact PRS on the problem.
    When our exact PRS at its best ``rho`` needs fewer iterations than the paper's plateau
    (its ``K*`` at its largest ``N_e``), no ``N_e`` of ours can need the paper's count:
    the problems differ (``model-or-data-differs``); otherwise the cause is ``open``."""
    K_prox = sweeps.k_or_inf(v2["K_prox"])
    best = int(np.argmin(K_prox))
    if not np.isfinite(K_prox[best]):
        return "open", (f"exact PRS (the N_e -> infinity limit) reaches the tolerance at no rho of our grid; the "
                        f"paper's K* at its largest N_e is {sig3(paper_plateau)}; not understood yet")
    text = (f"exact PRS (the N_e -> infinity limit) needs K*={int(K_prox[best])} on our data at its best "
            f"rho={sig3(float(np.asarray(v2['rhos'])[best]))}, the paper's K* at its largest N_e is "
            f"{sig3(paper_plateau)}")
    if K_prox[best] < paper_plateau:
        return "model-or-data-differs", (text + ": the limit itself differs, so the data do (condition "
                                          "numbers: the problems section)")
    return "open", text + ": the limit does not separate them; not understood yet"


def _paper_plateau() -> float:
    """The paper's ``K*`` at the largest ``N_e`` of its Table IX (decoded from its times)."""
    ix = sweeps.paper_K_star("fedplt-v2-TIX")
    return float(ix[ix["Ne"] == ix["Ne"].max()]["K*"].iloc[0])


def finite_ne_cause(v2: Mapping[str, Any]) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of v2 C08/C29 ("an optimal, finite number of epochs") when
    our best ``N_e`` is the largest tried: our ``K*`` keeps falling towards the exact-PRS
    limit, so the cause is the one of the Table IX cells at large ``N_e``
    (:func:`prs_limit_cause`): when our limit needs fewer iterations than the paper's plateau,
    the data differ (``model-or-data-differs``)."""
    cause, text = prs_limit_cause(v2, _paper_plateau())
    evidence = f"fedplt/{sweeps.V2SweepConfig.for_profile('paper').result_name()}.json" if cause != "open" else ""
    return cause, evidence, ("our best N_e is the largest tried because K* keeps falling towards the exact-PRS "
                             "limit; " + text)


def outcomes_for(profile: str = "paper") -> dict[str, Outcome]:
    """The outcomes computed from the stored results of ``profile``."""
    v2 = sweeps.load_v2_sweeps(profile)
    drift = sweeps.load_drift(profile)
    v1 = sweeps.load_v1_rates(profile)
    results = claim_results(v2, drift, v1, _gd_agd_gap(profile))
    out = _cell_outcomes(v2) if profile == "paper" else {}
    causes = {"fedplt-v1-C11": c11_cause(profile)} if not results["fedplt-v1-C11"][0] else {}
    if profile == "paper":
        from fedrepro.chapters.fedplt.readings.effects import EPOCH_CLAIMS, epochs_cause

        causes |= {cid: epochs_cause(cid, profile) for cid in EPOCH_CLAIMS if not results[cid][0]}
        causes |= {cid: finite_ne_cause(v2) for cid in ("fedplt-v2-C08", "fedplt-v2-C29") if not results[cid][0]}
    for cid, (ok, why) in results.items():
        cause, evidence, sentence = causes.get(cid, ("", "", ""))
        reason = f"{why}; {sentence}" if sentence else why
        out[cid] = Outcome(ours=bool(ok), status="match" if ok else "miss", reason=reason, cause=cause or None,
                           evidence=evidence)
    for fig, ids in _figure_claims().items():
        failing = [c for c in ids if not results[c][0]]
        # a figure that misses only through claims with a demonstrated cause inherits it
        inherited = {causes[c][:2] for c in failing if c in causes}
        cause, evidence = next(iter(inherited)) if len(inherited) == 1 and all(c in causes for c in failing) else ("", "")
        out[fig] = Outcome(ours=not failing, status="miss" if failing else "match", cause=cause or None,
                           evidence=evidence,
                           reason=(f"claims about the figure: {', '.join(ids)}; "
                                   + (f"not holding: {', '.join(failing)} ("
                                      + "; ".join(f"{c}: {results[c][1]}" for c in failing) + ")"
                                      if failing else "all hold")))
    return out


def c11_cause(profile: str = "paper") -> tuple[str, str, str]:
    """(cause, evidence, sentence) of v1 C11 (the optimum ``rho`` ≈ 0.3) when it misses: the
    check of C11 rerun on Fed-PLT's rate curve under the printed-class reading (an ``eps = 5``
    regulariser on every ``f_i``; the grid of readings). Holding there: ``unstated-setting``."""
    from fedrepro.chapters.fedplt.readings.effects import grid_evidence, rho_optimum
    from fedrepro.chapters.fedplt.readings.experiments import PRINTED_CLASS, reading_label

    r = rho_optimum(profile, *PRINTED_CLASS)
    ok, why = check_v1_rho_optimum(r["argmin_rho"], r["min_rate"], r["rate_low_end"], r["rate_high_end"])
    label = reading_label(*PRINTED_CLASS)
    if ok:
        return "unstated-setting", grid_evidence(profile), f"under the reading '{label}' it holds: {why}"
    return "open", "", f"tried the reading '{label}': {why}; not understood yet"


def outcomes() -> dict[str, Outcome]:
    """Outcomes of v2 Tables VIII-IX, v1 Figs. 2-3 and their claims (paper profile)."""
    out = outcomes_for("paper")
    for key, o in out.items():
        if isinstance(o.ours, float) and math.isnan(o.ours):
            raise ValueError(f"outcome {key} has no value")
    return out


def claims_frame(profile: str = "paper") -> pd.DataFrame:
    """Claim and figure verdicts of the chapter (✓ holds / ✗ does not) with the evidence."""
    import pandas as pd

    from fedrepro.report.paper import claims

    quotes = {c["id"]: c["quote"] for c in claims("fedplt")}
    out = outcomes_for(profile)
    rows = [{"item": k, "verdict": "✓" if out[k].status == "match" else "✗",
             "paper says": (quotes.get(k, "")[:90] + ("…" if len(quotes.get(k, "")) > 90 else "")),
             "evidence": out[k].reason} for k in (*CLAIMS, *FIGURES)]
    return pd.DataFrame(rows).set_index("item")


def claims_text(profile: str = "paper") -> str:
    """One line per claim and figure: ✓ (holds on our reproduction) or ✗, the id and the
    evidence."""
    f = claims_frame(profile)
    return "\n".join(f"{row['verdict']} {item}: {row['evidence']}" for item, row in f.iterrows())
