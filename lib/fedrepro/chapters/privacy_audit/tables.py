"""Tables and facts of the privacy-audit chapter: claimed ε, exact ε and the empirical lower bound.

Every audit record (:mod:`fedrepro.experiments.privacy`, ``audit_*``) carries its bound
``empirical_epsilon_lower`` (valid at its ``confidence`` jointly over the routes it uses), the
mechanism's ``exact_epsilon`` for the ``scope`` audited (None with an ``exact_reason`` where
infinite or not computed), ``tightness`` = bound/exact and ``epsilon_ceiling``, the largest bound
the trial count could report. The tables show the three side by side: claim − exact is the
accounting's slack, exact − bound the audit's."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["SENSITIVITY_LABELS", "VIEW_LABELS", "READING_LABELS", "audit_frame", "broken", "dpsgd_facts", "dpsgd_frame",
           "dpsgd_summary", "estimates_frame", "estimates_summary", "exact_cell", "fedpaq_facts", "fedpaq_summary",
           "fedplt_frame", "fedplt_summary", "lower_bound", "overview_frame", "overview_facts", "refuted",
           "refutable", "quantized_frame", "quantized_summary", "tight_frame", "tight_summary"]

#: How the chapter names the attacks on the quantized message.
ATTACK_LABELS = {"linear": "linear (projection)", "likelihood": "likelihood ratio over the levels"}

#: How the chapter names the Fed-PLT audit's views and the estimates audit's readings.
VIEW_LABELS = {"model": "released model x_{0,K}", "messages": "messages z_{i,1..K}"}
READING_LABELS = {"paper": "paper: all records", "library": "library: 512-record subset"}

#: How the chapter names DP-FedPAQ's sensitivities.
SENSITIVITY_LABELS = {"rigorous": "valid 2ηEC", "theory": "theory 4ηEC", "per_step": "per step 2ηC/b",
                      "authors_code": "authors' C/n"}


def exact_cell(row: dict[str, Any]) -> float | str:
    """A record's exact ε for a table: the number, "∞" where infinite, "not computed" else."""
    if row.get("exact_epsilon") is not None:
        return float(row["exact_epsilon"])
    return "∞" if str(row.get("exact_reason", "")).startswith("infinite") else "not computed"


def _claim(row: dict[str, Any]) -> float:
    """The smallest claim a record is held to (the improved conversion's, where it has one)."""
    return float(min(row["claimed_epsilon"], row.get("claimed_epsilon_improved", row["claimed_epsilon"])))


def refutable(row: dict[str, Any]) -> bool:
    """Whether the audit could have refuted the record's claim at all: the claim lies below the
    ceiling (the largest bound the trial count can report)."""
    return bool(_claim(row) < float(row["epsilon_ceiling"]))


def _bound_columns(row: dict[str, Any]) -> dict[str, Any]:
    """The columns every audit table shows: exact ε, the bound, tightness, ceiling."""
    return {"exact ε": exact_cell(row), "ε lower bound": float(row["empirical_epsilon_lower"]),
            "bound / exact": row["tightness"], "ceiling": float(row["epsilon_ceiling"])}


def audit_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per audited DP-FedPAQ mechanism: sensitivity, quantizer, claimed ε, the exact ε
    of what the attack sees (the canary's pixel weights: a subsampled Gaussian mechanism; not
    computed with the quantizer), the empirical lower bound (from the attack's rates, the only
    route valid for a subsampled mechanism), bound/exact, the ceiling, δ, confidence, trials per
    world, and whether the lower bound exceeds the claim."""
    rows = []
    for m in result["mechanisms"]:
        rows.append({
            "sensitivity": SENSITIVITY_LABELS.get(m["sensitivity"], m["sensitivity"]),
            "quantizer": f"s = {m['levels']}" if m["levels"] else "none",
            "claimed ε": float(m["claimed_epsilon"]),
            **_bound_columns(m),
            "δ": float(m["delta"]),
            "confidence": float(m["confidence"]),
            "trials per world": int(m["trials"]),
            "claim refuted": refuted(m),
        })
    return pd.DataFrame(rows)


def broken(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The audited mechanisms whose empirical lower bound (from the rates) exceeds the claimed ε."""
    return [m for m in result["mechanisms"] if m["empirical_epsilon_lower"] > m["claimed_epsilon"]]


def refuted(row: dict[str, Any]) -> bool:
    """Whether an audited row's lower bound exceeds its smallest claimed ε (the improved
    conversion's, where a row has one)."""
    return bool(lower_bound(row) > _claim(row))


def lower_bound(row: dict[str, Any]) -> float:
    """The ε lower bound of an audited row, valid at its confidence: the run already takes
    the larger of the rates and μ routes where the mechanism is Gaussian, each at half the
    error probability (:func:`fedrepro.privacy.audit.joint_audit`)."""
    return float(row["empirical_epsilon_lower"])


def dpsgd_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per audited ALI-DPFL client round: q, steps, the accountant's ε (basic and
    improved conversions), the exact ε, the empirical lower bound (at q = 1 the larger of the
    two routes), bound/exact, the ceiling, δ, confidence, trials per world."""
    rows = []
    for r in result["rounds"]:
        rows.append({
            "q": float(r["q"]),
            "steps observed": int(r["tau"]),
            "claimed ε (basic)": float(r["claimed_epsilon"]),
            "claimed ε (improved)": float(r["claimed_epsilon_improved"]),
            **_bound_columns(r),
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
    """One row per audited Fed-PLT view: rounds K, Proposition 4's ε (with Lemma 5), the exact
    ε (the Gaussian mechanism's at the exact μ), the lower bounds (from the rates; from the GDP
    μ bound, valid here: the mechanism is Gaussian; each at half the error probability),
    bound/exact (of the larger), the ceiling, the attack's μ estimate and the exact μ, δ, runs
    per world."""
    rows = []
    for r in result["rows"]:
        rows.append({
            "adversary sees": VIEW_LABELS.get(r["view"], r["view"]),
            "rounds K": int(r["rounds"]),
            "claimed ε (Prop. 4)": float(r["claimed_epsilon"]),
            "exact ε": exact_cell(r),
            "ε lower bound (rates)": float(r["epsilon_lower_rates"]),
            "ε lower bound (μ)": float(r["epsilon_lower_mu"]),
            "bound / exact": r["tightness"],
            "ceiling": float(r["epsilon_ceiling"]),
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
            "messages_rates_lower": float(worst["epsilon_lower_rates"]) if worst else float("nan"),
            "messages_exact": float(worst["exact_epsilon"]) if worst else float("nan"),
            "model_exact": max(float(r["exact_epsilon"]) for r in model) if model else float("nan"),
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
            **_bound_columns(r),
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
        out[f"{name}_ceiling"] = float(r["epsilon_ceiling"])
        out[f"{name}_flagged"] = float(r["in_fraction_detected"])
        out[f"{name}_false_flags"] = float(r["out_fraction_detected"])
        out[f"{name}_inclusion"] = float(r["inclusion_probability"])
    return out


def _verdict(row: dict[str, Any]) -> str:
    """Refuted; or not, and why where the record says: the claim above the ceiling (no outcome
    of these trials could refute it), below the exact ε (wrong, and the audit missed it), or at
    or above it (it holds: no valid audit can refute it but by chance)."""
    if refuted(row):
        return "refuted"
    if not refutable(row):
        return "not refutable (claim above the ceiling)"
    exact = row.get("exact_epsilon")
    if exact is None:
        return "not refuted"
    return "not refuted (claim below exact ε)" if _claim(row) < exact else "not refuted (claim ≥ exact ε)"


def _overview_rows(fedpaq: dict[str, Any], dpsgd: dict[str, Any], estimates: dict[str, Any],
                   fedplt: dict[str, Any], tight: dict[str, Any] | None,
                   quantized: dict[str, Any] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    rows = []
    for m in fedpaq["mechanisms"]:
        quant = f", s = {m['levels']}" if m["levels"] else ""
        rows.append(("DP-FedPAQ", f"one round, Δ = {SENSITIVITY_LABELS.get(m['sensitivity'], m['sensitivity'])}{quant}", m))
    for m in (quantized or {"rows": []})["rows"]:
        if m["attack"] != "linear":
            rows.append(("DP-FedPAQ", f"one round, Δ = {SENSITIVITY_LABELS.get(m['sensitivity'], m['sensitivity'])}, "
                                      f"s = {m['levels']}, {ATTACK_LABELS.get(m['attack'], m['attack'])}", m))
    for r in dpsgd["rounds"]:
        rows.append(("ALI-DPFL", f"client DP-SGD, q = {r['q']:g}, {r['tau']} step(s)", r))
    for r in estimates["rows"]:
        rows.append(("ALI-DPFL", f"τ* estimate reports, {READING_LABELS.get(r['reading'], r['reading'])}", r))
    for r in fedplt["rows"]:
        rows.append(("Fed-PLT", f"noisy GD, {VIEW_LABELS.get(r['view'], r['view'])}, K = {r['rounds']}", r))
    for r in (tight or {"rows": []})["rows"]:
        rows.append((r["paper"], f"exact reduction: {r['mechanism']}", r))
    return rows


def overview_frame(fedpaq: dict[str, Any], dpsgd: dict[str, Any], estimates: dict[str, Any],
                   fedplt: dict[str, Any], tight: dict[str, Any] | None = None,
                   quantized: dict[str, Any] | None = None) -> pd.DataFrame:
    """Every audit record in one table: paper, mechanism, scope, the claim it is held to, the
    exact ε, the valid lower bound, bound/exact, the ceiling, and the verdict (refuted; not
    refuted, with the claim below the exact ε (the audit missed a wrong claim) or at or above
    it (the claim holds); or not refutable: the claim lies above the ceiling, so no outcome of
    these trials could have refuted it)."""
    return pd.DataFrame([{"paper": paper, "mechanism": label, "scope": row["scope"], "claimed ε": _claim(row),
                          **_bound_columns(row), "verdict": _verdict(row)}
                         for paper, label, row in _overview_rows(fedpaq, dpsgd, estimates, fedplt, tight, quantized)])


def overview_facts(fedpaq: dict[str, Any], dpsgd: dict[str, Any], estimates: dict[str, Any],
                   fedplt: dict[str, Any], tight: dict[str, Any],
                   quantized: dict[str, Any] | None = None) -> dict[str, Any]:
    """The numbers the overview quotes: records, how many have a finite exact ε, how many of
    those have a claim below the exact ε (the claim is wrong), above it (accounting slack), how
    many bounds exceed their exact ε (none may, beyond the confidence), how many claims lie above
    the ceiling, and the smallest and largest tightness of the ordinary audits and of the tight
    ones."""
    rows = [r for _, _, r in _overview_rows(fedpaq, dpsgd, estimates, fedplt, tight, quantized)]
    finite = [r for r in rows if r["exact_epsilon"] is not None]
    ordinary = [r["tightness"] for r in finite if "thresholds" not in r and r["exact_epsilon"] > 0]
    tight_t = [r["tightness"] for r in tight["rows"]]
    return {"n_records": len(rows), "n_exact": len(finite),
            "n_claim_below_exact": sum(_claim(r) < r["exact_epsilon"] for r in finite),
            "n_bound_above_exact": sum(r["empirical_epsilon_lower"] > r["exact_epsilon"] for r in finite),
            "n_unrefutable": sum(not refutable(r) for r in rows),
            "ordinary_tightness_max": max(ordinary), "tight_tightness_min": min(tight_t),
            "tight_tightness_max": max(tight_t)}


def tight_frame(tight: dict[str, Any]) -> pd.DataFrame:
    """One row per tight audit (exact one-dimensional reductions): mechanism, sampling
    probability p, μ = Δ/σ, δ, claim, exact ε, the bound (rates; μ where Gaussian), bound/exact,
    ceiling, draws per world."""
    rows = []
    for r in tight["rows"]:
        rows.append({"paper": r["paper"], "release": r["mechanism"], "p": float(r["p"]), "μ = Δ/σ": float(r["mu"]),
                     "δ": float(r["delta"]), "claimed ε": _claim(r),
                     "ε lower bound (rates)": float(r["epsilon_lower_rates"]),
                     "ε lower bound (μ)": r["epsilon_lower_mu"], **_bound_columns(r),
                     "draws per world": int(r["trials"])})
    return pd.DataFrame(rows)


def tight_summary(tight: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter quotes about the tight audits, by mechanism name."""
    out: dict[str, Any] = {}
    for r in tight["rows"]:
        key = r["name"].replace("-", "_").replace(".", "")
        out[f"{key}_lower"] = float(r["empirical_epsilon_lower"])
        out[f"{key}_exact"] = float(r["exact_epsilon"])
        out[f"{key}_tightness"] = float(r["tightness"])
        out[f"{key}_claim"] = _claim(r)
        out[f"{key}_trials"] = int(r["trials"])
    return out


def dpsgd_facts(dpsgd: dict[str, Any]) -> dict[str, Any]:
    """The facts behind the chapter's account of the q = 1 round: the attack's μ estimate
    against 1/σ (at q = 1 the other records' gradients are the same in every trial, a fixed
    offset, so the scores are exactly Gaussian with μ = 1/σ), the exact ε, the bound, the ceiling
    of the rates route, the improved conversion's claim; and at the paper's q the exact ε and the
    bound."""
    full = next(r for r in dpsgd["rounds"] if float(r["q"]) == 1.0)
    paper = [r for r in dpsgd["rounds"] if float(r["q"]) != 1.0]
    return {"full_mu_estimate": float(full["mu_estimate"]), "full_mu_exact": 1.0 / float(full["sigma"]),
            "full_mu_lower": float(full["mu_lower"]), "full_exact": float(full["exact_epsilon"]),
            "full_lower": float(full["empirical_epsilon_lower"]), "full_tightness": float(full["tightness"]),
            "full_claim": _claim(full), "full_trials": int(full["trials"]),
            "full_accounting_slack": _claim(full) - float(full["exact_epsilon"]),
            "paper_exact_min": min(float(r["exact_epsilon"]) for r in paper),
            "paper_exact_max": max(float(r["exact_epsilon"]) for r in paper),
            "paper_lower": max(float(r["empirical_epsilon_lower"]) for r in paper)}


def fedpaq_facts(fedpaq: dict[str, Any]) -> dict[str, Any]:
    """The facts behind the DP-FedPAQ section: the subsample fraction γ and batch b (the
    subsample is hidden from the attacker), and for the authors' sensitivity at the smallest ε
    the exact ε of the canary's view against the claim and the bound; at the largest ε the
    authors' bound without and with the quantizer."""
    mechs = fedpaq["mechanisms"]
    small = min((m for m in mechs if m["sensitivity"] == "authors_code" and not m["levels"]),
                key=lambda m: m["claimed_epsilon"])
    valid = [m for m in mechs if m["sensitivity"] == "rigorous" and not m["levels"]]
    top = max(float(m["claimed_epsilon"]) for m in mechs)
    large = {bool(m["levels"]): float(m["empirical_epsilon_lower"]) for m in mechs
             if m["sensitivity"] == "authors_code" and float(m["claimed_epsilon"]) == top}
    return {"authors_large_claim": top, "authors_large_lower": large[False], "authors_large_lower_quantized": large[True],
            "gamma": float(mechs[0]["gamma"]), "batch": int(mechs[0]["batch"]),
            "authors_small_claim": float(small["claimed_epsilon"]), "authors_small_exact": float(small["exact_epsilon"]),
            "authors_small_lower": float(small["empirical_epsilon_lower"]),
            "authors_small_ceiling": float(small["epsilon_ceiling"]),
            "valid_exact_max": max(float(m["exact_epsilon"]) for m in valid),
            "n_above_exact": sum(m["exact_epsilon"] is not None and m["empirical_epsilon_lower"] > m["exact_epsilon"]
                                 for m in mechs)}


def quantized_frame(quantized: dict[str, Any]) -> pd.DataFrame:
    """One row per (ε, attack) of the quantized DP-FedPAQ audit: the claim, the bound (rates
    route), the ceiling, trials per world, whether the claim is refuted."""
    return pd.DataFrame([{"sensitivity": SENSITIVITY_LABELS.get(r["sensitivity"], r["sensitivity"]),
                          "quantizer": f"s = {r['levels']}", "attack": ATTACK_LABELS.get(r["attack"], r["attack"]),
                          "claimed ε": float(r["claimed_epsilon"]), **_bound_columns(r),
                          "trials per world": int(r["trials"]), "claim refuted": refuted(r)}
                         for r in quantized["rows"]])


def quantized_summary(quantized: dict[str, Any]) -> dict[str, Any]:
    """The bounds of both attacks at each ε, keyed ``<attack>_<ε>`` (ε without its point), the
    trials per world, and ``verdict``: whether the likelihood-ratio attack gives a larger bound
    than the linear one at some ε (a phrase for the text)."""
    out: dict[str, Any] = {f"{r['attack']}_{str(r['epsilon']).replace('.', '')}": float(r["empirical_epsilon_lower"])
                           for r in quantized["rows"]}
    by = {(r["epsilon"], r["attack"]): float(r["empirical_epsilon_lower"]) for r in quantized["rows"]}
    better = any(by[(e, "likelihood")] > by[(e, "linear")] for e, a in by if a == "linear")
    out["trials"] = int(quantized["rows"][0]["trials"])
    out["verdict"] = "gives a larger bound at some ε" if better else "gives no larger bound"
    return out
