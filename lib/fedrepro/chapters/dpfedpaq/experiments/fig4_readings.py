"""The claims of DP-FedPAQ's Figs. 4 (c)–(d) decided under each reading of what the paper does
not state (the runs of :mod:`.fig4_epsilon`: the other ε of Fig. 4 (a), and the authors' code's
local training at every ε).

:func:`verdicts` decides the claims with the chapter's own rules
(:func:`fedrepro.chapters.dpfedpaq.experiments.claims.evidence`) with a reading's runs standing
in for the chapter's runs of the grid. Every reading is reported, whichever way its verdicts go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fedrepro.experiments.dpfedpaq.fig4_epsilon import grid_runs, load_fig4_epsilon_runs, readings

__all__ = ["CLAIMS", "FIGURES", "verdicts", "all_verdicts", "c40_ranks"]

#: The claims about Figs. 4 (c)–(d), and the panels.
CLAIMS: tuple[str, ...] = ("dpfedpaq-main-C37", "dpfedpaq-main-C40", "dpfedpaq-main-C41", "dpfedpaq-main-C42",
                           "dpfedpaq-main-C47")
FIGURES: tuple[str, ...] = ("dpfedpaq-main-F4c", "dpfedpaq-main-F4d")


def verdicts(profile: str = "paper", epsilon: float = 0.1, semantics: str = "paper",
             chapter_runs: Mapping[str, Any] | None = None) -> dict[str, tuple[bool | None, str]]:
    """The claims of Figs. 4 (c)–(d) (:data:`CLAIMS`; :data:`FIGURES`: every claim about the
    panel holds) decided by the chapter's rules with the runs of the reading (``epsilon``,
    ``semantics``) standing in for the chapter's runs of the grid (``chapter_runs``: the
    chapter's runs, loaded when ``None``)."""
    from fedrepro.chapters.dpfedpaq.experiments.claims import FIGURE_CLAIMS, _seed_note, evidence, per_seed
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    runs = dict(load_runs(profile) if chapter_runs is None else chapter_runs)
    mine = load_fig4_epsilon_runs(profile, epsilon, semantics)
    for name, (_, stands_for) in grid_runs(profile, epsilon, semantics).items():
        runs[stands_for.name()] = mine[name]
    decided = evidence(runs, profile)
    counts = per_seed(runs, profile)
    out = {c: (decided[c][0], decided[c][1] + _seed_note(decided[c][0], counts.get(c))) for c in CLAIMS}
    for fig in FIGURES:
        ids = [f"dpfedpaq-main-{c}" for c in FIGURE_CLAIMS[fig]]
        failing = [c for c in ids if decided[c][0] is not True]
        out[fig] = (not failing, "every claim about the panel holds" if not failing
                    else "not holding: " + ", ".join(c.removeprefix("dpfedpaq-main-") for c in failing))
    return out


def all_verdicts(profile: str = "paper") -> dict[tuple[float, str], dict[str, tuple[bool | None, str]]]:
    """:func:`verdicts` of every reading of :func:`readings` (the chapter's runs loaded once)."""
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    chapter = load_runs(profile)
    return {(e, sem): verdicts(profile, e, sem, chapter) for e, sem in readings(profile)}


def c40_ranks(verdict: Mapping[str, tuple[bool | None, str]]) -> list[int]:
    """The rank of C = 0.5 among the clippings at each γ (1 = lowest final loss), as C40's
    decision (:func:`fedrepro.chapters.dpfedpaq.experiments.claims.decide_C40`) states it."""
    import json

    return json.loads(verdict["dpfedpaq-main-C40"][1].split(" [decided")[0].rpartition(": ")[2])
