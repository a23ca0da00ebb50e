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
from fedrepro.core.cache import run_units
from fedrepro.experiments.dpfedpaq.runs import GROUPS, RunsConfig, combine, run_unit
from fedrepro.report.scorecard import Outcome

__all__ = ["clip_epsilon_cause", "fig4_reading_cause", "growth_cause", "learning_rate_cause",
           "ordering_within_seeds", "subsampling_cause", "outcomes", "outcomes_for"]


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


def ordering_within_seeds(per_seed: Any) -> tuple[bool, float, float]:
    """Whether the means of ``per_seed`` (settings × seeds) are all closer to each other than the
    spread of the seeds: (verdict, largest gap between two settings' means, smallest spread
    (max − min over the seeds) of one setting)."""
    import numpy as np

    x = np.asarray(per_seed, dtype=float)
    means = x.mean(axis=1)
    gap = float(means.max() - means.min())
    spread = float((x.max(axis=1) - x.min(axis=1)).min())
    return gap < spread, gap, spread


def _stored_in(profile: str, **run: Any) -> str:
    """The store path of the group of runs that holds the run ``spec(profile, **run)``."""
    from fedrepro.experiments.dpfedpaq.runs import registry, spec

    name = spec(profile, **run).name()
    group = next(g for g in GROUPS if name in registry(profile, g))
    return f"dpfedpaq/{RunsConfig(profile=profile, group=group).result_name()}.json"


def subsampling_cause(runs: dict[str, Any], profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of C09 ("clipping to a small value and subsampling may
    inversely impact the convergence in the non-secure setting") when it misses: the clipping
    half holds; the subsampling half fails when the no-noise final losses over γ are not
    ordered. When those final losses are closer to each other than the spread of the seeds,
    the cause is ``seed-spread``; the sentence also gives the rounds at which the mean curves
    are in the claimed order (the transient). Otherwise ``open``."""
    import numpy as np

    from fedrepro.chapters.dpfedpaq.experiments.claims import _run
    from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS

    gammas = PROFILE_SETTINGS[profile]["gammas_nonoise"]
    rs = [_run(runs, profile, eps=None, gamma=g) for g in gammas]
    rounds = np.asarray(rs[0]["rounds"])
    loss = np.stack([np.asarray(r["loss"], dtype=float) for r in rs])  # (gammas, seeds, rounds)
    within, gap, spread = ordering_within_seeds(loss[:, :, -1])
    mean = loss.mean(axis=1)
    ordered = [int(k) for j, k in enumerate(rounds) if k > 0 and np.all(np.diff(mean[:, j]) < 0)]
    when = (f"the mean curves are in the claimed order (loss decreasing in γ) at the recorded rounds "
            f"{', '.join(map(str, ordered))} of {int(rounds[-1])}" if ordered else
            "the mean curves are in the claimed order at no recorded round")
    evidence = _stored_in(profile, eps=None, gamma=gammas[0])
    what = (f"the no-noise final losses over γ = {', '.join(f'{g:g}' for g in gammas)} differ by at most "
            f"{gap:.2g}, {'less' if within else 'more'} than the spread of the seeds ({spread:.2g})")
    if within:
        return "seed-spread", evidence, f"{what}; {when}: subsampling slows the start, not the end"
    return "open", "", f"tried: {what}; {when}; not understood yet"


def clip_epsilon_cause(runs: dict[str, Any], profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of C36 ("larger C, inducing more noise, delays convergence",
    Fig. 4 (b)) when it misses at the default ε = 1: Fig. 4 (b) does not state its ε. At the
    smallest ε of Fig. 4 (a) the noise, not the clipping bias, dominates: when the final loss
    is non-decreasing in C there (up to the seed spread), the unstated ε is the cause
    (``unstated-setting``); otherwise ``open``."""
    import numpy as np

    from fedrepro.chapters.dpfedpaq.experiments.claims import _at, _run, increasing
    from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS

    st = PROFILE_SETTINGS[profile]
    clips, e_small, K = st["clips"], min(st["eps"]), st["K"]
    per = [np.asarray(_at(_run(runs, profile, clip=c, eps=e_small), K), dtype=float) for c in clips]
    means, spreads = [float(x.mean()) for x in per], [float(x.max() - x.min()) for x in per]
    holds = increasing(means, spreads)
    evidence = _stored_in(profile, clip=clips[-1], eps=e_small)
    what = (f"Fig. 4 (b) does not state its eps; at eps = {e_small:g} (the smallest of Fig. 4 (a)) the final loss over "
            f"C = {', '.join(f'{c:g}' for c in clips)} is {', '.join(f'{m:.3g}' for m in means)}")
    if holds:
        return "unstated-setting", evidence, f"{what}: non-decreasing in C, as the claim says"
    return "open", "", f"tried: {what}, decreasing somewhere; not understood yet"


def fig4_reading_cause(item: str, readings: dict[tuple[float, str], dict[str, tuple[bool | None, str]]],
                       profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of a miss among Figs. 4 (c)–(d) and their claims, from its
    verdicts under the readings of :mod:`.fig4_readings` (each other ε of Fig. 4 (a); the authors'
    code's local training at every ε). Holding under some reading, the miss comes from a setting
    the paper does not state (``unstated-setting``; the evidence is the stored runs of the
    reading that changes the fewest of the chapter's settings, the first listed among equals);
    holding under none, it stays ``open`` and the sentence lists what was tried."""
    from fedrepro.experiments.dpfedpaq.fig4_epsilon import CHAPTER_EPSILON, Fig4EpsilonRunsConfig

    def name(e: float, sem: str) -> str:
        return f"eps = {e:g}" + (" with the authors' code's local training" if sem == "authors_code" else "")

    holding = [key for key, v in readings.items() if v[item][0] is True]
    tried = "; ".join(f"{name(*key)}: {'holds' if v[item][0] else 'fails'} ({v[item][1]})"
                      for key, v in readings.items())
    if holding:
        # the evidence is the reading that changes the fewest of the chapter's settings
        e, sem = min(holding, key=lambda k: (k[0] != CHAPTER_EPSILON) + (k[1] != "paper"))
        cfg = Fig4EpsilonRunsConfig(profile=profile, epsilon=e, semantics=sem)
        return ("unstated-setting", f"dpfedpaq/{cfg.result_name()}.json",
                f"Figs. 4 (c)-(d) state neither their eps nor their local training; it holds at "
                f"{', '.join(name(*k) for k in holding)} ({tried})")
    return "open", "", f"tried the other eps of Fig. 4 (a) and the authors' code's local training: {tried}"


def learning_rate_cause(profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of C48 when it misses with the softmax step: the paper says the
    effects hold on networks "having set the learning rate to a proper value" and gives none.
    The network runs are repeated at other steps (:mod:`.mlp_lr`); when C48 holds at the step
    with the lowest final loss of the default network run (the *proper* step, chosen without
    the claim), the unstated step is the cause (``unstated-setting``); otherwise ``open``."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_lr_effects
    from fedrepro.experiments.dpfedpaq import mlp_lr

    losses = mlp_lr_effects.final_losses(profile)
    proper = mlp_lr_effects.proper_learning_rate(profile)
    status = {lr: v[0] for lr, v in mlp_lr_effects.verdicts(profile).items()}
    tried = "; ".join(f"eta0 = {lr:g}: final loss of the default run {losses[lr]:.3g}, C48 {status[lr]}"
                      for lr in sorted(losses))
    what = (f"the paper gives no step for the network ('having set the learning rate to a proper value'); "
            f"the network runs repeated at every step ({tried}); the proper step, the one with the lowest "
            f"final loss, is eta0 = {proper:g}")
    if status[proper] == "match" and proper != mlp_lr.CHAPTER_LEARNING_RATE:
        cfg = mlp_lr.MLPLearningRateConfig(profile=profile, lr0=proper)
        return "unstated-setting", f"dpfedpaq/{cfg.result_name()}.json", f"{what}, and there C48 holds"
    return "open", "", f"tried: {what}, and there C48 still misses; not understood yet"


def width_cause(profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of C48 when it still misses at the proper step
    (:func:`learning_rate_cause`): C48 names networks and gives none of their sizes, while the
    quantizer's loss q grows with the dimension (Assumption 4, q = √d/s at s = 1), so the
    quantizer sweep is trained again with a network no larger than the softmax model
    (:mod:`.mlp_width_effects`). When only the quantizer's effects differ at the proper step
    and both are the softmax model's for the narrow network, the unstated size is the cause
    (``unstated-setting``); otherwise ``open`` with what the narrow network gave."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_width_effects
    from fedrepro.experiments.dpfedpaq import mlp_width

    w = mlp_width_effects.width_effects(profile)
    if w["others"]:
        return "open", "", f"at eta0 = {w['lr0']:g} effects other than the quantizer's differ too ({'; '.join(w['others'])})"
    p = w["parameters"]
    what = (f"a network of {w['hidden']} hidden units ({p['narrow']:,} parameters; the softmax model {p['softmax']:,}, "
            f"the chapter's network {p['network']:,}) at eta0 = {w['lr0']:g}: "
            + "; ".join(d[3].replace("network", "narrow network") for d in w["decided"]))
    if w["holds"]:
        cfg = mlp_width.MLPWidthConfig(profile=profile, hidden=w["hidden"], lr0=w["lr0"])
        return ("unstated-setting", f"dpfedpaq/{cfg.result_name()}.json",
                f"{what}: at the softmax model's size the quantizer's effects are the softmax model's; the cost "
                f"of the coarsest quantizer grows with the size (q = sqrt(d)/s at s = 1), which C48 does not give")
    return "open", "", f"tried {what}: the quantizer's effects still differ, so the model's size does not explain it"


def block_cause(profile: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of C48 when neither the step nor the network's size explains
    it (:func:`width_cause`): the paper's remark after Assumption 4 gives quantized-SGD's loss
    q = min(n/s², √n/s) for a block size n and assumes n = d only "for simplicity", and the
    experiments' block size is not stated, so the quantizer sweep is trained again with the
    quantizer applied to blocks of each size of :data:`.mlp_block.BLOCK_SIZES`
    (:mod:`.mlp_block_effects`). When only the quantizer's effects differ at the proper step and,
    for some block size, both are the softmax model's, the unstated block size is the cause
    (``unstated-setting``, with the first such block size's result as evidence); otherwise
    ``open`` with what each block size gave."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_block_effects
    from fedrepro.experiments.dpfedpaq import mlp_block

    b = mlp_block_effects.block_effects(profile)
    if b["others"]:
        return "open", "", f"at eta0 = {b['lr0']:g} effects other than the quantizer's differ too ({'; '.join(b['others'])})"
    tried = "; ".join(f"blocks of {n} coordinates (q = {v['q_at_1']:.3g} at s = 1): "
                      + "; ".join(x[3].replace("network", f"network with blocks of {n}") for x in v["decided"])
                      for n, v in b["blocks"].items())
    explaining = [n for n, v in b["blocks"].items() if v["holds"]]
    if explaining:
        n = explaining[0]
        cfg = mlp_block.MLPBlockConfig(profile=profile, block=n, lr0=b["lr0"])
        return ("unstated-setting", f"dpfedpaq/{cfg.result_name()}.json",
                f"the quantizer in blocks (the paper's remark after Assumption 4 names a block size n and assumes "
                f"n = d only for the analysis): {tried}; with blocks of {n} the quantizer's effects are the softmax "
                f"model's, so the unstated block size of the experiments explains the miss")
    return "open", "", f"tried the quantizer in blocks: {tried}: the quantizer's effects still differ"


def outcomes_for(profile: str = "paper") -> dict[str, Outcome]:
    """The outcomes computed from the stored runs of ``profile`` (all groups required); the
    misses among Figs. 2b–d and 4b–d and their claims carry the cause :func:`growth_cause` finds, then
    (Figs. 4c–d) :func:`fig4_reading_cause`."""
    from fedrepro.chapters.dpfedpaq.experiments import fig4_readings, noise_growth

    out = {}
    growth: dict[str, tuple[bool | None, str]] = {}
    readings: dict[tuple[float, str], dict[str, tuple[bool | None, str]]] = {}
    runs = _all_runs(profile)
    for item, (status, reason) in verdicts(runs, profile).items():
        ours = None if status == "not-run" else status == "match"
        cause, evidence = None, ""
        if status == "miss" and item in noise_growth.CLAIMS + noise_growth.FIGURES:
            growth = growth or noise_growth.verdicts(profile)
            path = f"dpfedpaq/{noise_growth.GrowthRunsConfig(profile=profile).result_name()}.json"
            cause, evidence, sentence = growth_cause(*growth[item], path)
            if cause == "open" and item in ("dpfedpaq-main-C36", "dpfedpaq-main-F4b"):
                cause, evidence, other = clip_epsilon_cause(runs, profile)
                sentence = (sentence.removesuffix("; not understood yet") + f"; {other}") if cause != "open" \
                    else f"{sentence}; {other}"
            elif cause == "open" and item in fig4_readings.CLAIMS + fig4_readings.FIGURES:
                readings = readings or fig4_readings.all_verdicts(profile)
                cause, evidence, other = fig4_reading_cause(item, readings, profile)
                sentence = sentence.removesuffix("; not understood yet") + f"; {other}" + \
                    ("; not understood yet" if cause == "open" else "")
            reason = f"{reason}; {sentence}"
        elif status == "miss" and item == "dpfedpaq-main-C48":
            cause, evidence, sentence = learning_rate_cause(profile)
            if cause == "open":
                cause, evidence, width = width_cause(profile)
                sentence = sentence.removesuffix("; not understood yet") + "; " + width
                if cause == "open":
                    cause, evidence, blocks = block_cause(profile)
                    sentence += "; " + blocks
                sentence += "; not understood yet" if cause == "open" else ""
            reason = f"{reason}; {sentence}"
        elif status == "miss" and item == "dpfedpaq-main-C09":
            cause, evidence, sentence = subsampling_cause(runs, profile)
            reason = f"{reason}; {sentence}"
        out[item] = Outcome(ours=ours, status=status, reason=reason, cause=cause, evidence=evidence)
    return out


def outcomes() -> dict[str, Outcome]:
    """Outcomes of Figs. 2–4 and the experimental claims (paper profile)."""
    return outcomes_for("paper")
