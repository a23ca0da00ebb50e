"""The "Whole trainings" section of ``book/privacy-audit.ipynb``: audits of complete private
trainings (scope "training") of DP-FedPAQ (:mod:`fedrepro.experiments.privacy.audit_dpfedpaq_training`)
and Fed-PLT (:mod:`fedrepro.experiments.privacy.audit_fedplt_training`): their table, the facts the
section quotes and its figure. Reads the stored results only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fedrepro.chapters.privacy_audit.tables import SENSITIVITY_LABELS, exact_cell, refutable, refuted
from fedrepro.experiments.privacy.audit_dpfedpaq_training import load_fedpaq_training_audit
from fedrepro.experiments.privacy.audit_fedplt_training import load_fedplt_training_audit
from fedrepro.privacy.audit import epsilon_ceiling

__all__ = ["load_fedpaq_training_audit", "load_fedplt_training_audit", "verdict", "training_rows",
           "training_frame", "training_facts", "trials_to_refute", "training_figure"]

CALIBRATION_LABELS = {"paper": "eq. (16)", "exact": "exact amplification"}


def verdict(row: dict[str, Any]) -> str:
    """Refuted; not refutable (the claim lies above the ceiling); or not refuted, with the claim
    below the exact ε (wrong, and the audit missed it) or at or above it (it holds)."""
    if refuted(row):
        return "refuted"
    if not refutable(row):
        return "not refutable (claim above the ceiling)"
    exact = row.get("exact_epsilon")
    if exact is None:
        return "not refuted"
    return "not refuted (claim below exact ε)" if row["claimed_epsilon"] < exact else "not refuted (claim ≥ exact ε)"


def _fedpaq_label(r: dict[str, Any]) -> str:
    device = "paper's device" if r["setting"] == "paper" else "reduced device"
    return (f"T = {r['rounds']} rounds, {device} (n = {r['records']}, E = {r['local_steps']}, b = {r['batch']}), "
            f"per-round ε = {r['claimed_epsilon_round']:g}")


def training_rows(fedpaq: dict[str, Any], fedplt: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(paper, mechanism, calibration, record) of every whole-training audit."""
    rows = []
    for r in fedpaq["rows"]:
        calib = (f"Δ = {SENSITIVITY_LABELS.get(r['sensitivity'], r['sensitivity'])}, "
                 f"{CALIBRATION_LABELS.get(r['calibration'], r['calibration'])}")
        rows.append(("DP-FedPAQ", _fedpaq_label(r), calib, r))
    for r in fedplt["rows"]:
        rows.append(("Fed-PLT", f"noisy GD, released model x_{{0,K}}, K = {r['rounds']}, N = {r['agents']}",
                     f"τ = {r['tau']:g} (Proposition 4)", r))
    return rows


def training_frame(fedpaq: dict[str, Any], fedplt: dict[str, Any]) -> pd.DataFrame:
    """One row per whole-training audit: paper, mechanism, calibration, the claim for the whole
    training (DP-FedPAQ: the per-round claim composed, Tε at Tδ; Fed-PLT: Proposition 4), δ, the exact
    ε of the audited view, the valid lower bound (95 %), bound / exact, the ceiling, trainings (or
    canaries) per world and the verdict."""
    return pd.DataFrame([{
        "paper": paper, "mechanism": label, "calibration": calib, "claimed ε": float(r["claimed_epsilon"]),
        "δ": float(r["delta"]), "exact ε": exact_cell(r), "ε lower bound": float(r["empirical_epsilon_lower"]),
        "bound / exact": r["tightness"], "ceiling": float(r["epsilon_ceiling"]), "runs per world": int(r["trials"]),
        "verdict": verdict(r)} for paper, label, calib, r in training_rows(fedpaq, fedplt)])


def trials_to_refute(row: dict[str, Any]) -> int:
    """The fewest evaluated runs per world whose ceiling (:func:`fedrepro.privacy.audit.epsilon_ceiling`,
    rates route, at the row's confidence) exceeds the row's claim (doubling, then bisection)."""
    claim, delta, conf = float(row["claimed_epsilon"]), float(row["delta"]), float(row["route_confidence"])

    def above(n: int) -> bool:
        return epsilon_ceiling(n, delta=delta, confidence=conf) > claim

    hi = 1
    while not above(hi):
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if above(mid) else (mid, hi)
    return hi


def _key(name: str) -> str:
    return name.replace("-", "_").replace(".", "").replace("=", "")


def training_facts(fedpaq: dict[str, Any], fedplt: dict[str, Any], tight: dict[str, Any]) -> dict[str, Any]:
    """The numbers the section quotes: per record (by name) the claim, exact ε, bound, tightness,
    ceiling and runs per world; how many bounds exceed their exact ε (none may, beyond the
    confidence); the tightness range of the valid (correctly calibrated) mechanisms; for a wrong
    claim (below the exact ε) above its ceiling the runs per world that could refute it; and the single-round C/n case at
    ε = 0.1 of the tight audits (its claim, bound, exact ε and ceiling)."""
    out: dict[str, Any] = {}
    rows = [r for _, _, _, r in training_rows(fedpaq, fedplt)]
    for r in rows:
        k = _key(r["name"]) if r["paper"] == "DP-FedPAQ" else "fedplt_" + _key(r["name"])
        out[f"{k}_claim"] = float(r["claimed_epsilon"])
        out[f"{k}_exact"] = float(r["exact_epsilon"])
        out[f"{k}_lower"] = float(r["empirical_epsilon_lower"])
        out[f"{k}_tightness"] = float(r["tightness"])
        out[f"{k}_ceiling"] = float(r["epsilon_ceiling"])
        out[f"{k}_trials"] = int(r["trials"])
        out[f"{k}_rounds"] = int(r["rounds"])
        if not refutable(r) and r["claimed_epsilon"] < r["exact_epsilon"]:  # a wrong claim out of reach
            out[f"{k}_trials_to_refute"] = trials_to_refute(r)
    for r in fedpaq["rows"]:
        if r["accounted_epsilon"] is not None:
            out[f"{_key(r['name'])}_accounted"] = float(r["accounted_epsilon"])
    valid = [r for r in fedpaq["rows"] if r["valid_sensitivity"]] + list(fedplt["rows"])
    out["n_records"] = len(rows)
    out["n_bound_above_exact"] = sum(r["empirical_epsilon_lower"] > r["exact_epsilon"] for r in rows)
    out["n_refuted"] = sum(refuted(r) for r in rows)
    out["n_unrefutable"] = sum(not refutable(r) for r in rows)
    out["valid_tightness_min"] = float(min(r["tightness"] for r in valid))
    out["valid_tightness_max"] = float(max(r["tightness"] for r in valid))
    out["n_valid_below_half"] = sum(r["tightness"] < 0.5 for r in valid)
    one = next(r for r in tight["rows"] if r["name"] == "fedpaq-authors-0.1")
    out["round01_claim"] = float(one["claimed_epsilon"])
    out["round01_lower"] = float(one["empirical_epsilon_lower"])
    out["round01_exact"] = float(one["exact_epsilon"])
    out["round01_ceiling"] = float(one["epsilon_ceiling"])
    out["round01_covered"] = bool(refutable(one))
    out["round01_refuted"] = bool(refuted(one))
    return out


def training_figure(fedpaq: dict[str, Any], fedplt: dict[str, Any]) -> Figure:
    """Claim, exact ε, lower bound and ceiling of every whole-training audit (log scale), one line per
    record: the bound must stay left of the exact ε; a claim left of the bound is refuted, a claim
    right of the ceiling could not have been."""
    import matplotlib.pyplot as plt

    rows = training_rows(fedpaq, fedplt)
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * len(rows) + 1.6), layout="constrained")
    y = np.arange(len(rows))[::-1]
    marks = (("claimed_epsilon", "claim", "s", "C3"), ("exact_epsilon", "exact ε", "o", "C0"),
             ("empirical_epsilon_lower", "lower bound (95 %)", "D", "C2"), ("epsilon_ceiling", "ceiling", "|", "0.4"))
    for key, label, marker, colour in marks:
        vals = np.array([max(float(r[key]), 1e-3) for *_, r in rows])
        ax.scatter(vals, y, marker=marker, color=colour, label=label, zorder=3)
    for yi, (*_, r) in zip(y, rows, strict=True):
        ax.plot([max(float(r["empirical_epsilon_lower"]), 1e-3), float(r["exact_epsilon"])], [yi, yi], color="C0",
                lw=1, alpha=0.5)
    ax.set_xscale("log")
    ax.set_yticks(y, [f"{paper}: {r['name']}" for paper, _, _, r in rows])
    ax.set_xlabel("ε (whole training; bounds below 0.001 drawn at 0.001)")
    fig.legend(loc="outside lower center", ncol=4, fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return fig
