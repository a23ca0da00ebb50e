"""Figs. 2 (b)–(d) and 4 (b)–(d) of DP-FedPAQ again with the per-step sensitivity, a noise that
grows with E and with the clipping threshold relative to the subsample, and their claims decided
on those runs (a reading of the noise, never the chapter's main setting).

Why and how the runs differ from the chapter's (the per-step sensitivity ``2η_kC/b_i``, common
random numbers with the chapter's runs): :mod:`fedrepro.experiments.dpfedpaq.noise_growth`.

:func:`verdicts` decides the claims of Figs. 2b–d with the chapter's own decision rules
(:func:`fedrepro.chapters.dpfedpaq.experiments.claims.evidence`) on these runs.
"""

from __future__ import annotations

import dataclasses

from fedrepro.experiments.dpfedpaq.noise_growth import (  # noqa: F401
    _GROUPS,
    GrowthRunsConfig,
    RunSpec,
    _combine,
    _train,
    growth_runs,
    load_growth_runs,
)

__all__ = ["CLAIMS", "FIGURES", "GrowthRunsConfig", "load_growth_runs", "growth_runs", "verdicts"]

#: Claims and figure items decided on these runs.
CLAIMS: tuple[str, ...] = ("dpfedpaq-main-C22", "dpfedpaq-main-C25", "dpfedpaq-main-C26", "dpfedpaq-main-C28",
                           "dpfedpaq-main-C39", "dpfedpaq-main-C46", "dpfedpaq-main-C36", "dpfedpaq-main-C40",
                           "dpfedpaq-main-C41", "dpfedpaq-main-C42", "dpfedpaq-main-C47")
FIGURES: tuple[str, ...] = ("dpfedpaq-main-F2b", "dpfedpaq-main-F2c", "dpfedpaq-main-F2d", "dpfedpaq-main-F4b",
                            "dpfedpaq-main-F4c", "dpfedpaq-main-F4d")


def verdicts(profile: str = "paper", sensitivity: str = "per_step") -> dict[str, tuple[bool | None, str]]:
    """The claims of Figs. 2b–d and 4b–d (:data:`CLAIMS`, and :data:`FIGURES`: every claim about the
    panel holds) decided by the chapter's rules on the chapter's vanilla runs and these
    private runs, each standing in for the chapter's run it reruns."""
    from fedrepro.chapters.dpfedpaq.experiments.claims import FIGURE_CLAIMS, evidence
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    runs = dict(load_runs(profile))  # every group: some claims compare with noiseless runs
    mine = load_growth_runs(profile, sensitivity)
    for name, (_, run, _) in growth_runs(profile, sensitivity).items():
        runs[dataclasses.replace(run, sensitivity=RunSpec.sensitivity).name()] = mine[name]
    decided = evidence(runs, profile)
    out = {c: decided[c] for c in CLAIMS}
    for fig in FIGURES:
        ids = [f"dpfedpaq-main-{c}" for c in FIGURE_CLAIMS[fig]]
        failing = [c for c in ids if decided[c][0] is not True]
        out[fig] = (not failing, "every claim about the panel holds" if not failing
                    else "not holding: " + ", ".join(c.removeprefix("dpfedpaq-main-") for c in failing))
    return out
