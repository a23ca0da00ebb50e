"""Tables of the privacy-audit chapter: claimed ε against the empirical lower bound."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["SENSITIVITY_LABELS", "VIEW_LABELS", "READING_LABELS", "audit_frame", "broken", "dpsgd_frame", "dpsgd_summary",
           "estimates_frame", "estimates_summary", "fedpaq_summary", "fedplt_frame", "fedplt_summary", "lower_bound",
           "overview_frame", "refuted"]

#: How the chapter names the Fed-PLT audit's views and the estimates audit's readings.
VIEW_LABELS = {"model": "released model x_{0,K}", "messages": "messages z_{i,1..K}"}
READING_LABELS = {"paper": "paper: all records", "library": "library: 512-record subset"}

#: How the chapter names DP-FedPAQ's sensitivities.
SENSITIVITY_LABELS = {"rigorous": "valid 2ηEC", "theory": "theory 4ηEC", "per_step": "per step 2ηC/b",
                      "authors_code": "authors' C/n"}


def audit_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per audited DP-FedPAQ mechanism: sensitivity, quantizer, claimed ε, the
    empirical lower bound (ε at δ from the attack's rates; valid for any mechanism), the ε the
    GDP μ bound implies (a lower bound only for a Gaussian trade-off curve, which a subsampled
    mechanism does not have: shown, never used to refute), δ, confidence, trials per world, and
    whether the lower bound exceeds the claim."""
    rows = []
    for m in result["mechanisms"]:
        rows.append({
            "sensitivity": SENSITIVITY_LABELS.get(m["sensitivity"], m["sensitivity"]),
            "quantizer": f"s = {m['levels']}" if m["levels"] else "none",
            "claimed ε": float(m["claimed_epsilon"]),
            "ε lower bound": float(m["empirical_epsilon_lower"]),
            "ε from μ (if Gaussian)": float(m["epsilon_from_mu"]),
            "δ": float(m["delta"]),
            "confidence": float(m["confidence"]),
            "trials per world": int(m["trials"]),
            "claim refuted": bool(m["empirical_epsilon_lower"] > m["claimed_epsilon"]),
        })
    return pd.DataFrame(rows)


def broken(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The audited mechanisms whose empirical lower bound (from the rates) exceeds the claimed ε."""
    return [m for m in result["mechanisms"] if m["empirical_epsilon_lower"] > m["claimed_epsilon"]]


def refuted(row: dict[str, Any]) -> bool:
    """Whether an audited row's lower bound exceeds its smallest claimed ε (the improved
    conversion's, where a row has one): the bound from the rates, and for a Gaussian mechanism
    (a row with q = 1) also the one the GDP μ bound implies."""
    claim = min(row["claimed_epsilon"], row.get("claimed_epsilon_improved", row["claimed_epsilon"]))
    return bool(lower_bound(row) > claim)


def lower_bound(row: dict[str, Any]) -> float:
    """The valid ε lower bound of an audited row: from the rates, or from the GDP μ bound where
    the mechanism is Gaussian (``q`` = 1: no subsampling; or a row marked ``gaussian``)."""
    if float(row.get("q", 0.0)) == 1.0 or bool(row.get("gaussian", False)):
        return float(max(row["empirical_epsilon_lower"], row["epsilon_from_mu"]))
    return float(row["empirical_epsilon_lower"])


def dpsgd_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per audited ALI-DPFL client round: q, steps, the accountant's ε (basic and
    improved conversions), the empirical lower bounds, δ, confidence, trials per world."""
    rows = []
    for r in result["rounds"]:
        rows.append({
            "q": float(r["q"]),
            "steps observed": int(r["tau"]),
            "claimed ε (basic)": float(r["claimed_epsilon"]),
            "claimed ε (improved)": float(r["claimed_epsilon_improved"]),
            "ε lower bound": float(r["empirical_epsilon_lower"]),
            "ε from μ (if Gaussian)": float(r["epsilon_from_mu"]),
            "δ": float(r["delta"]),
            "confidence": float(r["confidence"]),
            "trials per world": int(r["trials"]),
            "claim refuted": refuted(r),
        })
    return pd.DataFrame(rows)


def fedpaq_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter quotes about the DP-FedPAQ audit: trials per world, how many
    mechanisms were audited and refuted, the largest lower bound and its claim, and the
    largest lower bound with the valid sensitivity."""
    mechs = result["mechanisms"]
    worst = max(mechs, key=lambda m: m["empirical_epsilon_lower"])
    valid = [m["empirical_epsilon_lower"] for m in mechs if m["sensitivity"] == "rigorous"]
    return {"trials": int(mechs[0]["trials"]), "n_mechanisms": len(mechs), "n_refuted": len(broken(result)),
            "refuted": sorted((m["sensitivity"], float(m["claimed_epsilon"]), int(m["levels"])) for m in broken(result)),
            "worst_lower": float(worst["empirical_epsilon_lower"]), "worst_claim": float(worst["claimed_epsilon"]),
            "valid_max": float(max(valid)) if valid else float("nan")}


def dpsgd_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter quotes about the DP-SGD audit: rounds refuted, the largest
    valid lower bound at the paper's q and at q = 1, and the improved conversion's claim at q = 1."""
    rows = result["rounds"]
    full = [r for r in rows if float(r["q"]) == 1.0]
    paper = [r for r in rows if float(r["q"]) != 1.0]
    return {"n_refuted": sum(refuted(r) for r in rows),
            "lowers": [lower_bound(r) for r in rows],
            "paper_lower": max(lower_bound(r) for r in paper) if paper else float("nan"),
            "full_lower": max(lower_bound(r) for r in full) if full else float("nan"),
            "full_claim": min(float(r["claimed_epsilon_improved"]) for r in full) if full else float("nan")}


def fedplt_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per audited Fed-PLT view: rounds K, Proposition 4's ε (with Lemma 5), the lower
    bounds (from the rates; from the GDP μ bound, valid here: the mechanism is Gaussian), the
    attack's μ estimate and the exact μ, δ, confidence, runs per world."""
    rows = []
    for r in result["rows"]:
        rows.append({
            "adversary sees": VIEW_LABELS.get(r["view"], r["view"]),
            "rounds K": int(r["rounds"]),
            "claimed ε (Prop. 4)": float(r["claimed_epsilon"]),
            "ε lower bound (rates)": float(r["empirical_epsilon_lower"]),
            "ε lower bound (μ)": float(r["epsilon_from_mu"]),
            "μ estimated": float(r["mu_estimate"]),
            "μ exact": float(r["mu_exact"]),
            "δ": float(r["delta"]),
            "trials per world": int(r["trials"]),
            "claim refuted": refuted(r),
        })
    return pd.DataFrame(rows)


def fedplt_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter quotes about the Fed-PLT audit: the released-model row's lower
    bound and claim, and the messages rows' largest lower bound (from the rates and from μ),
    their claim, and how many rows are refuted."""
    rows = result["rows"]
    model = [r for r in rows if r["view"] == "model"]
    msgs = [r for r in rows if r["view"] == "messages"]
    worst = max(msgs, key=lower_bound) if msgs else None
    return {"n_refuted": sum(refuted(r) for r in rows), "n_rows": len(rows),
            "model_lower": max(lower_bound(r) for r in model) if model else float("nan"),
            "model_claim": min(float(r["claimed_epsilon"]) for r in model) if model else float("nan"),
            "messages_lower": lower_bound(worst) if worst else float("nan"),
            "messages_rates_lower": float(worst["empirical_epsilon_lower"]) if worst else float("nan"),
            "messages_claim": float(worst["claimed_epsilon"]) if worst else float("nan"),
            "messages_rounds": int(worst["rounds"]) if worst else 0,
            "trials": int(rows[0]["trials"])}


def estimates_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per reading of ALI-DPFL's estimate reports: records used, the probability that
    the canary is among them, the round's accounted ε (basic, improved), the lower bound,
    the fraction of reports with the canary that the attack flags (and without it)."""
    rows = []
    for r in result["rows"]:
        rows.append({
            "records of the report": READING_LABELS.get(r["reading"], r["reading"]),
            "canary in the report": float(r["inclusion_probability"]),
            "claimed ε of the round (basic)": float(r["claimed_epsilon"]),
            "claimed ε (improved)": float(r["claimed_epsilon_improved"]),
            "ε lower bound": float(r["empirical_epsilon_lower"]),
            "flagged with canary": float(r["in_fraction_detected"]),
            "flagged without": float(r["out_fraction_detected"]),
            "δ": float(r["delta"]),
            "trials per world": int(r["trials"]),
            "claim refuted": refuted(r),
        })
    return pd.DataFrame(rows)


def estimates_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter quotes about the estimates audit."""
    rows = {r["reading"]: r for r in result["rows"]}
    out: dict[str, Any] = {"n_refuted": sum(refuted(r) for r in result["rows"]),
                           "head_coordinates": int(result["head_coordinates"]),
                           "claim": float(result["rows"][0]["claimed_epsilon"]),
                           "claim_improved": float(result["rows"][0]["claimed_epsilon_improved"]),
                           "trials": int(result["rows"][0]["trials"])}
    for name, r in rows.items():
        out[f"{name}_lower"] = lower_bound(r)
        out[f"{name}_flagged"] = float(r["in_fraction_detected"])
        out[f"{name}_false_flags"] = float(r["out_fraction_detected"])
        out[f"{name}_inclusion"] = float(r["inclusion_probability"])
    return out


def overview_frame(fedpaq: dict[str, Any], dpsgd: dict[str, Any], estimates: dict[str, Any],
                   fedplt: dict[str, Any]) -> pd.DataFrame:
    """Every audited mechanism in one table: paper, mechanism, the claim it is held to, the
    valid lower bound, and the verdict (refuted, or not refuted: which proves nothing)."""
    rows = []

    def add(paper: str, mechanism: str, claim: float, lower: float) -> None:
        rows.append({"paper": paper, "mechanism": mechanism, "claimed ε": claim, "ε lower bound": lower,
                     "verdict": "refuted" if lower > claim else "not refuted"})

    for m in fedpaq["mechanisms"]:
        quant = f", s = {m['levels']}" if m["levels"] else ""
        add("DP-FedPAQ", f"one round, Δ = {SENSITIVITY_LABELS.get(m['sensitivity'], m['sensitivity'])}{quant}",
            float(m["claimed_epsilon"]), float(m["empirical_epsilon_lower"]))
    for r in dpsgd["rounds"]:
        add("ALI-DPFL", f"client DP-SGD, q = {r['q']:g}, {r['tau']} step(s)",
            min(float(r["claimed_epsilon"]), float(r["claimed_epsilon_improved"])), lower_bound(r))
    for r in estimates["rows"]:
        add("ALI-DPFL", f"τ* estimate reports, {READING_LABELS.get(r['reading'], r['reading'])}",
            min(float(r["claimed_epsilon"]), float(r["claimed_epsilon_improved"])), lower_bound(r))
    for r in fedplt["rows"]:
        add("Fed-PLT", f"noisy GD, {VIEW_LABELS.get(r['view'], r['view'])}, K = {r['rounds']}",
            float(r["claimed_epsilon"]), lower_bound(r))
    return pd.DataFrame(rows)
