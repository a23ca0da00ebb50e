"""Scorecard provider of the chapter "DP-FedPAQ experiments".

Provider string for :data:`fedrepro.report.scorecard.PROVIDERS`:
``"fedrepro.chapters.dpfedpaq.experiments.scorecard:outcomes"``. It reports the figure items
F2a–F4d and the experimental claims listed in
:data:`fedrepro.chapters.dpfedpaq.experiments.claims.CLAIMS`, decided by
:func:`fedrepro.chapters.dpfedpaq.experiments.claims.verdicts` from the stored paper-profile
runs. C48 (the same effects with other models) compares them with the stored runs of the
one-hidden-layer network (:mod:`fedrepro.chapters.dpfedpaq.experiments.mlp`, decided by
:func:`fedrepro.chapters.dpfedpaq.experiments.mlp_effects.verdict`); it is not-run when those
are not stored (read-only context).
"""

from __future__ import annotations

from typing import Any

from fedrepro.chapters.dpfedpaq.experiments.claims import verdicts
from fedrepro.chapters.dpfedpaq.experiments.runs import GROUPS, RunsConfig, combine, run_unit
from fedrepro.core.cache import run_units
from fedrepro.report.scorecard import Outcome

__all__ = ["growth_cause", "outcomes", "outcomes_for"]


def _all_runs(profile: str) -> dict[str, Any]:
    """Every group of runs; a group not stored raises :class:`fedrepro.core.cache.MissingResult`
    in a read-only context (the scorecard then skips this provider, computing nothing)."""
    out: dict[str, Any] = {}
    for group in GROUPS:
        cfg = RunsConfig(profile=profile, group=group)
        out.update(run_units(cfg, cfg.units(), run_unit, combine=combine)["runs"])
    return out


def growth_cause(holds: bool | None, why: str, evidence: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of a miss among Figs. 2b–d and 4b–d and their claims, from its
    verdict on the runs with the per-step noise (:mod:`.noise_growth`): holding there, the
    miss comes from the noise of the authors' code, whose sensitivity the paper does not state
    (``unstated-setting``); otherwise it stays ``open``."""
    what = "with the per-step sensitivity 2 eta C/b (a noise that grows with E and with C/b; same eps and seeds)"
    if holds:
        return "unstated-setting", evidence, f"{what} it holds: {why}"
    return "open", "", f"tried {what}: it still fails ({why}); not understood yet"


def outcomes_for(profile: str = "paper") -> dict[str, Outcome]:
    """The outcomes computed from the stored runs of ``profile`` (all groups required); the
    misses among Figs. 2b–d and 4b–d and their claims carry the cause :func:`growth_cause` finds."""
    from fedrepro.chapters.dpfedpaq.experiments import noise_growth

    out = {}
    growth: dict[str, tuple[bool | None, str]] = {}
    for item, (status, reason) in verdicts(_all_runs(profile), profile).items():
        ours = None if status == "not-run" else status == "match"
        cause, evidence = None, ""
        if status == "miss" and item in noise_growth.CLAIMS + noise_growth.FIGURES:
            growth = growth or noise_growth.verdicts(profile)
            path = f"dpfedpaq/{noise_growth.GrowthRunsConfig(profile=profile).result_name()}.json"
            cause, evidence, sentence = growth_cause(*growth[item], path)
            reason = f"{reason}; {sentence}"
        out[item] = Outcome(ours=ours, status=status, reason=reason, cause=cause, evidence=evidence)
    return out


def outcomes() -> dict[str, Outcome]:
    """Outcomes of Figs. 2–4 and the experimental claims (paper profile)."""
    return outcomes_for("paper")
