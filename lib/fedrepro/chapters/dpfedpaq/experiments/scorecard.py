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

__all__ = ["outcomes", "outcomes_for"]


def _all_runs(profile: str) -> dict[str, Any]:
    """Every group of runs; a group not stored raises :class:`fedrepro.core.cache.MissingResult`
    in a read-only context (the scorecard then skips this provider, computing nothing)."""
    out: dict[str, Any] = {}
    for group in GROUPS:
        cfg = RunsConfig(profile=profile, group=group)
        out.update(run_units(cfg, cfg.units(), run_unit, combine=combine)["runs"])
    return out


def outcomes_for(profile: str = "paper") -> dict[str, Outcome]:
    """The outcomes computed from the stored runs of ``profile`` (all groups required)."""
    out = {}
    for item, (status, reason) in verdicts(_all_runs(profile), profile).items():
        ours = None if status == "not-run" else status == "match"
        out[item] = Outcome(ours=ours, status=status, reason=reason)
    return out


def outcomes() -> dict[str, Outcome]:
    """Outcomes of Figs. 2–4 and the experimental claims (paper profile)."""
    return outcomes_for("paper")
