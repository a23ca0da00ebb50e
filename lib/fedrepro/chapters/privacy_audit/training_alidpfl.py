"""The whole-training audit of DPFL / ALI-DPFL (section "Whole trainings: ALI-DPFL" of
``book/privacy-audit.ipynb``): a table and the facts its sentences quote.

The run is :mod:`fedrepro.experiments.privacy.audit_training_alidpfl` (the clients' DP-SGD over
the R_c = 79 steps the paper's ε = 1.55 pays, white-box, gradient canary; and the exact
one-dimensional reduction). The τ* estimate reports (§IV-B of Ling et al.) are audited per round
by :mod:`fedrepro.experiments.privacy.audit_estimates`; here they are carried to the whole run by
post-processing: a whole run releases, among other things, one round's reports, so any test on
that round's reports is a test on the run, and the round's valid lower bound is a valid lower
bound for the whole training at the same confidence. The run's exact ε is infinite (the reports
reveal the canary with probability above δ), and the bound is held to the whole training's claim.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from fedrepro.alidpfl.budget import PAPER_CELLS, PAPER_ROUNDS
from fedrepro.experiments.privacy.audit_training_alidpfl import (  # noqa: F401
    _CLASSES,
    POOL,
    RECORDS,
    TrainingAuditConfig,
    load_training_audit,
    quick,
)
from fedrepro.privacy.audit import exact_fields

__all__ = ["TIGHTNESS_TARGET", "load_training_audit", "rounds_of_budget", "estimate_rows", "verdict",
           "training_frame", "training_facts"]

#: The tightness the whole-training audit aims at (bound / exact ε).
TIGHTNESS_TARGET = 0.5

_LABELS = {"dpsgd": "DP-SGD of one client, every step observed (reduced model)",
           "reduction": "exact 1-D reduction of the 79 composed steps"}
_READINGS = {"paper": "paper: all records", "library": "library: 512-record subset"}


def rounds_of_budget(epsilon: float) -> int:
    """R_s of the Table II cell with R_s = 2R_c whose ε is ``epsilon`` (the cell whose R_c the
    audit runs)."""
    for table, condition, eps in PAPER_CELLS:
        if table == "II" and condition == "Rs=2Rc" and epsilon in eps:
            return PAPER_ROUNDS[eps.index(epsilon)]
    raise ValueError(f"epsilon must be a budget of Table II with R_s = 2R_c, got {epsilon!r}")


def estimate_rows(training: dict[str, Any], estimates: dict[str, Any]) -> list[dict[str, Any]]:
    """The τ* estimate reports at the whole-run level (module docstring): one record per
    reading, the per-round bound carried to the run, held to the whole training's claim."""
    claim = float(training["rows"][0]["claimed_epsilon"])
    out = []
    for r in estimates["rows"]:
        lower = float(r["empirical_epsilon_lower"])
        reason = (f"infinite: every run's reports reveal the canary with probability "
                  f"{float(r['inclusion_probability']):.4g} > δ")
        out.append({"record": f"estimates-{r['reading']}", "reading": r["reading"], "claimed_epsilon": claim,
                    "empirical_epsilon_lower": lower, "epsilon_ceiling": float(r["epsilon_ceiling"]),
                    "confidence": float(r["confidence"]), "trials": int(r["trials"]),
                    "inclusion_probability": float(r["inclusion_probability"]),
                    "round_claimed_epsilon": float(r["claimed_epsilon"]),
                    **exact_fields(lower, None, "training", reason)})
    return out


def verdict(row: dict[str, Any]) -> str:
    """Refuted (the bound exceeds the paper's claim); otherwise not refuted, and whether the
    claim lies at or above the exact ε (it holds) or below it."""
    claim = float(row["claimed_epsilon"])
    if row["empirical_epsilon_lower"] > claim:
        return "refuted"
    if claim >= float(row["epsilon_ceiling"]):
        return "not refutable (claim above the ceiling)"
    exact = row["exact_epsilon"]
    if exact is None:
        return "not refuted"
    return "not refuted (claim ≥ exact ε)" if claim >= exact else "not refuted (claim below exact ε)"


def training_frame(training: dict[str, Any], estimates: dict[str, Any]) -> pd.DataFrame:
    """One row per whole-training record: mechanism, the paper's ε for the training, exact ε,
    the bound (95 %), bound / exact, ceiling, runs per world, verdict."""
    rows = []
    for r in training["rows"]:
        rows.append({"mechanism": _LABELS[r["record"]], "claimed ε (paper)": float(r["claimed_epsilon"]),
                     "exact ε": float(r["exact_epsilon"]), "ε lower bound": float(r["empirical_epsilon_lower"]),
                     "bound / exact": float(r["tightness"]), "ceiling": float(r["epsilon_ceiling"]),
                     "runs per world": int(r["trials"]), "verdict": verdict(r)})
    for r in estimate_rows(training, estimates):
        rows.append({"mechanism": f"DP-SGD + τ* estimate reports, {_READINGS[r['reading']]} (from one round)",
                     "claimed ε (paper)": float(r["claimed_epsilon"]), "exact ε": "∞",
                     "ε lower bound": float(r["empirical_epsilon_lower"]), "bound / exact": None,
                     "ceiling": float(r["epsilon_ceiling"]), "runs per world": int(r["trials"]),
                     "verdict": verdict(r)})
    return pd.DataFrame(rows)


def training_facts(training: dict[str, Any], estimates: dict[str, Any]) -> dict[str, Any]:
    """The numbers the section quotes: the reduced model and client (from the config), steps, rounds, the setting, the claims, the exact ε, each
    record's bound, tightness and ceiling, whether the tightness target is met, and the
    estimate reports' whole-run bounds and inclusion probabilities (with the probability that a
    subset redrawn every round would leave the canary out of every round's reports)."""
    rows = {r["record"]: r for r in training["rows"]}
    dp, red = rows["dpsgd"], rows["reduction"]
    rounds = rounds_of_budget(float(dp["claimed_epsilon"]))
    est = {r["reading"]: r for r in estimate_rows(training, estimates)}
    p = est["library"]["inclusion_probability"]
    cfg = TrainingAuditConfig()  # the stored result's config (a stale result is refused on load)
    out: dict[str, Any] = {
        "records": cfg.records, "canary_norm_factor": cfg.canary_norm_factor,
        "parameters": _CLASSES * ((28 // POOL) ** 2 + 1), "pooled_side": 28 // POOL,
        "steps": int(training["steps"]), "rounds": rounds, "q": float(dp["q"]), "sigma": float(dp["sigma"]),
        "clip": float(dp["clip"]), "delta": float(dp["delta"]), "claim": float(dp["claimed_epsilon"]),
        "claim_improved": float(dp["claimed_epsilon_improved"]), "exact": float(dp["exact_epsilon"]),
        "expected_canary_steps": float(dp["q"]) * int(training["steps"]), "target": TIGHTNESS_TARGET,
        "n_refuted": sum(verdict(r) == "refuted" for r in training["rows"]),
        "n_estimates_refuted": sum(verdict(r) == "refuted" for r in est.values()),
        "estimates_paper_lower": est["paper"]["empirical_epsilon_lower"],
        "estimates_library_lower": est["library"]["empirical_epsilon_lower"],
        "estimates_library_inclusion": p,
        "estimates_redrawn_miss": (1.0 - p) ** rounds,
        "estimates_round_claim": est["paper"]["round_claimed_epsilon"],
    }
    for name, r in (("dpsgd", dp), ("reduction", red)):
        out[f"{name}_lower"] = float(r["empirical_epsilon_lower"])
        out[f"{name}_tightness"] = float(r["tightness"])
        out[f"{name}_ceiling"] = float(r["epsilon_ceiling"])
        out[f"{name}_trials"] = int(r["trials"])
        out[f"{name}_target_met"] = bool(r["tightness"] >= TIGHTNESS_TARGET)
        out[f"{name}_target_verb"] = "reaches" if out[f"{name}_target_met"] else "falls short of"
    return out
