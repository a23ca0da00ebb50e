"""The readings that decide the strength of DP-FedPAQ's misses (:mod:`fedrepro.report.strength`).

Every miss of the part is a figure or a claim, so a reading's value is whether the claim (or
every claim about the figure) holds under it:

* the per-step sensitivity ``2 eta C/b`` (:mod:`fedrepro.chapters.dpfedpaq.experiments.noise_growth`)
  for Figs. 2b-d and 4b-d and their claims;
* for Fig. 4 (b) and its claim C36, Fig. 4 (a)'s smallest eps (the panel states none);
* for Figs. 4 (c)-(d) and their claims, each other eps of Fig. 4 (a) and the authors' code's
  local training (:mod:`fedrepro.chapters.dpfedpaq.experiments.fig4_readings`), as the cause's
  rule reads them.

* for the network claim C48 (:func:`network_readings`), each step of the network runs, the
  narrow network and each block size of the quantizer, as the cause's rules read them;
* for the seed-spread claim C09 (:func:`seed_readings`), each stored seed alone.
"""

from __future__ import annotations

from typing import Any

from fedrepro.report.strength import Readings

__all__ = ["network_readings", "network_values", "readings", "seed_readings", "seed_values"]

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
    return {**out, **network_readings(profile), **seed_readings(profile, runs)}


def network_values(profile: str = "paper") -> dict[str, tuple[bool, str]]:
    """``{reading: (C48 holds, stored results)}`` for the readings of the network claim C48
    ("having set the learning rate to a proper value, the same effects can be seen" on networks),
    each decided as its cause's rule reads it
    (:mod:`fedrepro.chapters.dpfedpaq.experiments.scorecard`):

    * every step ``eta0`` of the network runs but the chapter's own (ours): the chapter's rule
      (:func:`~fedrepro.chapters.dpfedpaq.experiments.mlp_lr_effects.verdicts`, a ``match``);
    * the narrow network and each block size of the quantizer, at the proper step (the lowest
      final loss of the default network run): the effects other than the quantizer's carry over
      at that step and both quantizer effects are the softmax model's
      (``holds`` of :func:`~fedrepro.chapters.dpfedpaq.experiments.mlp_width_effects.width_effects`
      and :func:`~fedrepro.chapters.dpfedpaq.experiments.mlp_block_effects.block_effects`).

    C48 also names CNNs and spiking networks, run under no reading: every reading checks the
    claim on the fully connected network only, as ours does."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_block_effects, mlp_lr_effects, mlp_width_effects
    from fedrepro.experiments.dpfedpaq import mlp_block, mlp_lr, mlp_width

    def lr_name(lr: float) -> str:
        return f"dpfedpaq/{mlp_lr.MLPLearningRateConfig(profile=profile, lr0=lr).result_name()}.json"

    out: dict[str, tuple[bool, str]] = {}
    for lr, (status, _) in sorted(mlp_lr_effects.verdicts(profile).items()):
        if lr != mlp_lr.CHAPTER_LEARNING_RATE:
            out[f"eta0 = {lr:g}"] = (status == "match", lr_name(lr))
    w = mlp_width_effects.width_effects(profile)
    width = mlp_width.MLPWidthConfig(profile=profile, hidden=w["hidden"], lr0=w["lr0"])
    out[f"eta0 = {w['lr0']:g}, a network of {w['hidden']} hidden units"] = (
        not w["others"] and bool(w["holds"]), f"dpfedpaq/{width.result_name()}.json, {lr_name(w['lr0'])}")
    b = mlp_block_effects.block_effects(profile)
    for n, v in b["blocks"].items():
        block = mlp_block.MLPBlockConfig(profile=profile, block=n, lr0=b["lr0"])
        out[f"eta0 = {b['lr0']:g}, the quantizer in blocks of {n} coordinates"] = (
            not b["others"] and bool(v["holds"]), f"dpfedpaq/{block.result_name()}.json, {lr_name(b['lr0'])}")
    return out


def network_readings(profile: str = "paper") -> dict[str, Readings]:
    """``{"dpfedpaq-main-C48": Readings}`` from :func:`network_values`."""
    found = network_values(profile)
    if not found:
        return {}
    sources = {name: stored for name, (_, stored) in found.items()}
    evidence = ", ".join(dict.fromkeys(x.strip() for s in sources.values() for x in s.split(",")))
    return {"dpfedpaq-main-C48": Readings(values={name: ok for name, (ok, _) in found.items()},
                                          evidence=evidence, sources=sources)}


def seed_values(runs: Any, profile: str = "paper") -> dict[str, bool]:
    """``{"seed k": C09 holds}``: C09 ("clipping to a small value, and subsampling, may inversely
    impact the convergence in the non-secure setting") decided by the chapter's rule
    (:func:`fedrepro.chapters.dpfedpaq.experiments.claims.evidence`) on each stored seed alone.
    A seed-spread cause is ``reproduced`` only where a stored seed makes the claim hold."""
    import warnings

    import numpy as np

    from fedrepro.chapters.dpfedpaq.experiments import claims

    n = min(int(np.shape(run["loss"])[0]) for run in runs.values()) if runs else 0
    out: dict[str, bool] = {}
    for seed in range(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ok = claims.evidence(claims.seed_slice(runs, seed), profile).get("dpfedpaq-main-C09", (None, ""))[0]
        if ok is not None:
            out[f"seed {seed}"] = bool(ok)
    return out


def seed_readings(profile: str = "paper", runs: Any = None) -> dict[str, Readings]:
    """``{"dpfedpaq-main-C09": Readings}`` from :func:`seed_values` (``runs``: the chapter's
    stored runs, loaded when None); the seeds live in the claims' stored result."""
    from fedrepro.chapters.dpfedpaq.experiments import scorecard as card
    from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS

    runs = card._all_runs(profile) if runs is None else runs  # noqa: SLF001 -- the provider's own loader
    values = seed_values(runs, profile)
    if not values:
        return {}
    gamma = PROFILE_SETTINGS[profile]["gammas_nonoise"][0]
    evidence = card._stored_in(profile, eps=None, gamma=gamma)  # noqa: SLF001 -- where the no-noise runs are stored
    return {"dpfedpaq-main-C09": Readings(values=values, evidence=evidence)}
