"""The readings that decide the strength of DP-FedPAQ's misses (:mod:`fedrepro.report.strength`).

Every miss of the part is a figure or a claim, so a reading's value is whether the claim (or
every claim about the figure) holds under it:

* the per-step sensitivity ``2 eta C/b`` (:mod:`fedrepro.chapters.dpfedpaq.experiments.noise_growth`)
  for Figs. 2b-d and 4b-d and their claims;
* for Fig. 4 (b) and its claim C36, Fig. 4 (a)'s smallest eps (the panel states none);
* for Figs. 4 (c)-(d) and their claims, each other eps of Fig. 4 (a) and the authors' code's
  local training (:mod:`fedrepro.chapters.dpfedpaq.experiments.fig4_readings`), as the cause's
  rule reads them.

The network claim (C48) and the seed-spread claim (C09) have no rule here yet: their strength
stays ``open``.
"""

from __future__ import annotations

from fedrepro.report.strength import Readings

__all__ = ["readings"]

_GROWTH = "per-step sensitivity 2 eta C/b"


def readings(profile: str = "paper") -> dict[str, Readings]:
    """``{item id: Readings}`` of the figures and claims above (the reading provider of
    :data:`fedrepro.report.scorecard.READING_PROVIDERS`)."""
    from fedrepro.chapters.dpfedpaq.experiments import fig4_readings, noise_growth
    from fedrepro.chapters.dpfedpaq.experiments import scorecard as card
    from fedrepro.experiments.dpfedpaq.fig4_epsilon import CHAPTER_EPSILON, Fig4EpsilonRunsConfig

    out: dict[str, Readings] = {}
    growth = noise_growth.verdicts(profile)
    path = f"dpfedpaq/{noise_growth.GrowthRunsConfig(profile=profile).result_name()}.json"
    values: dict[str, dict[str, bool]] = {}
    evidence: dict[str, list[str]] = {}
    sources: dict[str, dict[str, str]] = {}
    for item in noise_growth.CLAIMS + noise_growth.FIGURES:
        if item in growth and growth[item][0] is not None:
            values.setdefault(item, {})[_GROWTH] = bool(growth[item][0])
            evidence.setdefault(item, []).append(path)
            sources.setdefault(item, {})[_GROWTH] = path
    runs = card._all_runs(profile)  # noqa: SLF001 -- the provider's own loader of the stored runs
    cause, found, _ = card.clip_epsilon_cause(runs, profile)
    for item in ("dpfedpaq-main-C36", "dpfedpaq-main-F4b"):
        values.setdefault(item, {})["the smallest eps of Fig. 4 (a)"] = cause == "unstated-setting"
        if found:
            evidence.setdefault(item, []).append(found)
            sources.setdefault(item, {})["the smallest eps of Fig. 4 (a)"] = found
    fig4 = fig4_readings.all_verdicts(profile)
    # the reading that changes the fewest of the chapter's settings first, as the cause's rule
    # (fedrepro.chapters.dpfedpaq.experiments.scorecard.fig4_reading_cause) orders them
    order = sorted(fig4, key=lambda k: (k[0] != CHAPTER_EPSILON) + (k[1] != "paper"))
    for eps, semantics in order:
        verdict = fig4[(eps, semantics)]
        name = f"eps = {eps:g}" + (" with the authors' code's local training" if semantics == "authors_code" else "")
        stored = f"dpfedpaq/{Fig4EpsilonRunsConfig(profile=profile, epsilon=eps, semantics=semantics).result_name()}.json"
        for item in fig4_readings.CLAIMS + fig4_readings.FIGURES:
            if item in verdict and verdict[item][0] is not None:
                values.setdefault(item, {})[name] = bool(verdict[item][0])
                evidence.setdefault(item, []).append(stored)
                sources.setdefault(item, {})[name] = stored
    for item, v in values.items():
        names = evidence.get(item) or [path]
        out[item] = Readings(values=v, evidence=", ".join(dict.fromkeys(names)), sources=sources.get(item, {}))
    return out
