"""Tables of the privacy-audit chapter: claimed ε against the empirical lower bound."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["SENSITIVITY_LABELS", "audit_frame", "broken", "dpsgd_frame", "dpsgd_summary", "fedpaq_summary", "lower_bound",
           "refuted"]

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
    the mechanism is Gaussian (``q`` = 1: no subsampling)."""
    if float(row.get("q", 0.0)) == 1.0:
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
