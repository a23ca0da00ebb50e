"""The numbers that the prose of the chapter "DP-FedPAQ experiments" quotes, computed from the
stored results, so that the page glues them instead of typing them.

Each function reads the stored paper-profile runs of :mod:`.runs` (softmax regression),
:mod:`.mlp` (the one-hidden-layer network) and :mod:`.mlp_lr` (the network at other steps)
through the chapter's own readers (this module is imported by none of them, so it lies outside
their results' code) and returns a dict of floats and ints. :func:`glued` formats them as the
page prints them; ``tests/test_dpfedpaq_facts.py`` pins them against the tables the page shows
beside them. The protocol's settings (ε, C, γ, E, M, s grids and defaults) stay typed in the
text. The same page also glues the numbers that the part's index and the DP-FedPAQ entries of
the errata cite from it (:func:`scorecard_facts`: the part's line of the scorecard).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.report.prose import number_word, order_of_magnitude, percent, thousands

__all__ = ["glued", "no_noise_facts", "uplink_facts", "valid_facts", "growth_facts", "fig4_facts", "mlp_facts", "mlp_lr_facts",
           "scorecard_facts"]


def _final_mean(run: Mapping[str, Any], metric: str = "loss") -> float:
    return float(np.mean(np.asarray(run[metric], dtype=float)[:, -1]))


def no_noise_facts(profile: str = "paper") -> dict[str, float]:
    """Claim C09 (Sec. III's remark on clipping and subsampling without noise): the mean final
    training loss of the noiseless private runs at the smallest clipping threshold of the grid
    and without clipping, and the relative spread of the final loss over the subsampling ratios
    (no noise, C = 1)."""
    from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS, load_runs, spec

    runs, st = load_runs(profile), PROFILE_SETTINGS[profile]
    clips = [c for c in st["clips_nonoise"] if c is not None]
    by_gamma = [_final_mean(runs[spec(profile, eps=None, gamma=g).name()]) for g in st["gammas_nonoise"]]
    return {"clip_min": float(min(clips)),
            "loss_clip_min": _final_mean(runs[spec(profile, eps=None, clip=min(clips)).name()]),
            "loss_unclipped": _final_mean(runs[spec(profile, eps=None, clip=None).name()]),
            "gamma_rel_spread": float(np.ptp(by_gamma) / np.mean(by_gamma))}


def uplink_facts(profile: str = "paper") -> dict[str, float]:
    """Fig. 3 (a): the uplink of a run without quantization over that with the coarsest
    quantizer ``s = 1`` (eq. (11), ``K·M·β(s)`` bits; 32-bit floats unquantized)."""
    from fedrepro.chapters.dpfedpaq.experiments import tables
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    frame = tables.final_loss_frame(load_runs(profile), profile, "3a")
    mb = frame["uplink MB"]
    return {"uplink_ratio": float(mb.loc["s=None, private"] / mb.loc["s=1, private"])}


def valid_facts(profile: str = "paper") -> dict[str, float]:
    """Fig. 4 (a) with the valid sensitivity 2η_kEC and the heuristics: the noise-to-update
    norm ratio per device at ε = 1 (valid), its range over ε, the smallest ε of the wide grid at
    which the exactly calibrated valid run ends below the initial loss ln 10, the smallest ε from
    which the per-step heuristic trains (ends below ln 10), and the smallest ε from which the
    authors' noise is below the model change; the authors' noise-to-update ratio at ε = 1."""
    from fedrepro.chapters.dpfedpaq.experiments import tables
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    runs = load_runs(profile)
    valid = tables.valid_calibration_frame(runs, profile)
    noise = tables.noise_frame(runs, profile)
    ln10 = math.log(10)

    def from_on(ok: np.ndarray) -> float:
        """The smallest ε from which ``ok`` holds at every larger ε of the grid (NaN if none)."""
        eps = valid.index.to_numpy(dtype=float)
        good = [e for i, e in enumerate(eps) if ok[i:].all()]
        return float(good[0]) if good else math.nan

    ratio = valid["‖z‖/‖u‖ rigorous"].to_numpy(dtype=float)
    trains = noise.index[noise["final loss"].to_numpy(dtype=float) < ln10]
    return {"ratio_eps1": float(valid.loc[1.0, "‖z‖/‖u‖ rigorous"]),
            "authors_ratio_eps1": float(valid.loc[1.0, "‖z‖/‖u‖ authors_code"]),
            "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
            "valid_trains_eps": float(trains[0]) if len(trains) else math.nan,
            "per_step_trains_eps": from_on(valid["loss per_step"].to_numpy(dtype=float) < ln10),
            "authors_below_eps": from_on(valid["‖z‖/‖u‖ authors_code"].to_numpy(dtype=float) < 1)}


def growth_facts(profile: str = "paper") -> dict[str, int]:
    """Figs. 2 (b–d), 4 (b–d) and their claims: how many items the chapter's runs (the authors'
    noise) miss and the runs with the per-step noise that grows with E match
    (:func:`.tables.growth_frame`)."""
    from fedrepro.chapters.dpfedpaq.experiments import claims, tables
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    runs = load_runs(profile)
    frame = tables.growth_frame(claims.verdicts(runs, profile), profile)
    rescued = (frame["authors' noise"] == "miss") & (frame["per-step noise"] == "match")
    return {"rescued": int(rescued.sum())}


def fig4_facts(profile: str = "paper") -> dict[str, int]:
    """Figs. 4 (c–d) under the authors' local training at the chapter's ε = 1
    (:func:`.fig4_readings.all_verdicts`): on how many seeds, decided alone, claim C40 holds, and
    of how many."""
    import re

    from fedrepro.chapters.dpfedpaq.experiments import fig4_readings
    from fedrepro.experiments.dpfedpaq import fig4_epsilon

    why = fig4_readings.all_verdicts(profile)[(fig4_epsilon.CHAPTER_EPSILON, "authors_code")]["dpfedpaq-main-C40"][1]
    m = re.search(r"holds for (\d+) of (\d+) seeds", why)
    if m is None:
        raise ValueError(f"C40's evidence does not say on how many seeds it holds: {why!r}")
    return {"c40_seeds_hold": int(m.group(1)), "seeds": int(m.group(2))}


def mlp_facts(profile: str = "paper") -> dict[str, Any]:
    """Claim C48 (Sec. V) with the one-hidden-layer network (:mod:`.mlp_effects`): the sizes of
    the models (parameters; the network's over the softmax model's, and the square root of
    that ratio, Assumption 4's bound at s = 1), how many effects carry over, the final losses at
    ε = 0.1 of both models and the round at which the network's mean loss is lowest there, the
    network's final losses at s = 1 and unquantized and every quantizer's gap to the unquantized
    run for both models."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_effects
    from fedrepro.dpfedpaq.mlp import dimension
    from fedrepro.experiments.dpfedpaq import mlp, mlp_width
    from fedrepro.experiments.dpfedpaq.runs import load_runs

    softmax_runs, net_runs = load_runs(profile), mlp.load_mlp_runs(profile)
    rows = mlp_effects.effects(softmax_runs, net_runs, profile)
    eps = next(e for e in rows if e["effect"] == "eps" and e["metric"] == "loss")
    s = next(e for e in rows if e["effect"] == "s" and e["metric"] == "loss")
    i01 = list(eps["values"]).index(min(eps["values"]))
    low = net_runs[mlp.mlp_spec(profile, eps=min(eps["values"])).name()]
    curve = np.asarray(low["loss"], dtype=float).mean(axis=0)
    soft_s, net_s = s["softmax"].mean(axis=1), s["network"].mean(axis=1)
    levels = list(s["values"])
    if levels[-1] is not None or levels[0] != 1:
        raise ValueError(f"the quantizer sweep must run s = 1 first and unquantized last, got {levels}")
    i10 = levels.index(10) if 10 in levels else None  # the quick profile runs s = 1 only
    d_soft = mlp_width.softmax_parameters()
    d_net = dimension(mlp.PROFILE_SETTINGS[profile]["hidden"])
    return {"d_softmax": d_soft, "d_network": d_net, "d_narrow": dimension(mlp_width.NARROW_HIDDEN),
            "size_ratio": d_net / d_soft, "sqrt_size_ratio": math.sqrt(d_net / d_soft),
            "carried": int(sum(e["carries_over"] for e in rows)), "effects": len(rows),
            "eps_min": float(eps["values"][i01]),
            "net_loss_eps_min": float(eps["network"][i01].mean()),
            "softmax_loss_eps_min": float(eps["softmax"][i01].mean()),
            "net_eps_min_lowest_round": int(np.asarray(low["rounds"])[int(np.argmin(curve))]),
            "net_loss_s1": float(net_s[0]), "net_loss_none": float(net_s[-1]),
            "net_gap_s1": float(net_s[0] / net_s[-1] - 1), "net_gap_s10": float(net_s[i10] / net_s[-1] - 1) if i10 is not None else math.nan,
            "softmax_gap_s1": float(soft_s[0] / soft_s[-1] - 1),
            "softmax_gap_s10": float(soft_s[i10] / soft_s[-1] - 1) if i10 is not None else math.nan}


def mlp_lr_facts(profile: str = "paper") -> dict[str, float]:
    """C48 at the other steps (:mod:`.mlp_lr_effects`): the proper step (lowest final loss of
    the default network run) and the smallest and largest gap of the coarsest quantizer to the
    unquantized run over all steps."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_lr_effects

    gaps = np.array(list(mlp_lr_effects.quantizer_gaps(profile).values()), dtype=float)
    return {"proper_lr": float(mlp_lr_effects.proper_learning_rate(profile)),
            "gap_min": float(gaps.min()), "gap_max": float(gaps.max())}


def scorecard_facts(profile: str = "paper") -> dict[str, Any]:
    """The part's line of the stored scorecard (:func:`fedrepro.report.scorecard.load`, the
    paper profile's whatever ``profile``): the count per status and in all, and the claims that
    match on the seed means but hold on fewer than all seeds decided alone (their ids and on how
    many seeds each holds). Without a stored scorecard (a fresh quick-profile store) every count
    is zero."""
    import re

    from fedrepro.report import scorecard as sc

    stored = sc.load() if sc.scorecard_path().is_file() else []
    items = [it for it in stored if it.paper == "dpfedpaq"]
    counts = sc.counts(items).get("dpfedpaq", dict.fromkeys(sc.STATUSES, 0))
    fragile = {}
    for it in items:
        m = re.search(r"holds for (\d+) of (\d+) seeds", it.reason)
        if it.status == "match" and m and int(m.group(1)) < int(m.group(2)):
            fragile[it.id.rsplit("-", 1)[1]] = (int(m.group(1)), int(m.group(2)))
    return {"items": len(items), **counts, "fragile": dict(sorted(fragile.items(), key=lambda kv: int(kv[0][1:])))}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name
    (the page's hidden cell glues each; the formats keep round-off digits out of the text)."""
    nn, up, va = no_noise_facts(profile), uplink_facts(profile), valid_facts(profile)
    gr, ml, lr = growth_facts(profile), mlp_facts(profile), mlp_lr_facts(profile)
    f4, sc = fig4_facts(profile), scorecard_facts(profile)
    lr_gaps = f"{100 * lr['gap_min']:.0f} to {100 * lr['gap_max']:.0f} %"
    return {
        "dpfedpaq-ex-noclip-loss": f"{nn['loss_clip_min']:.2f}",
        "dpfedpaq-ex-unclipped-loss": f"{nn['loss_unclipped']:.2f}",
        "dpfedpaq-ex-uplink-ratio": f"{up['uplink_ratio']:.0f}",
        "dpfedpaq-ex-growth-rescued": number_word(gr["rescued"]),
        "dpfedpaq-ex-c40-seeds-hold": number_word(f4["c40_seeds_hold"]),
        "dpfedpaq-ex-seeds": number_word(f4["seeds"]),
        "dpfedpaq-ex-valid-ratio": f"{va['ratio_eps1']:.0f}",
        "dpfedpaq-ex-valid-trains-eps": order_of_magnitude(va["valid_trains_eps"]),
        "dpfedpaq-ex-per-step-eps": f"{va['per_step_trains_eps']:g}",
        "dpfedpaq-ex-authors-below-eps": f"{va['authors_below_eps']:g}",
        "dpfedpaq-ex-mlp-d": thousands(ml["d_network"]),
        "dpfedpaq-ex-softmax-d": thousands(ml["d_softmax"]),
        "dpfedpaq-ex-narrow-d": thousands(ml["d_narrow"]),
        "dpfedpaq-ex-mlp-size-ratio": f"{ml['size_ratio']:.1f}",
        "dpfedpaq-ex-mlp-sqrt-ratio": f"{ml['sqrt_size_ratio']:.1f}",
        "dpfedpaq-ex-mlp-carried": number_word(ml["carried"], capital=True),
        "dpfedpaq-ex-mlp-effects": number_word(ml["effects"]),
        "dpfedpaq-ex-mlp-lowest-round": str(ml["net_eps_min_lowest_round"]),
        "dpfedpaq-ex-mlp-eps-loss": f"{ml['net_loss_eps_min']:.2f}",
        "dpfedpaq-ex-softmax-eps-loss": f"{ml['softmax_loss_eps_min']:.2f}",
        "dpfedpaq-ex-mlp-s1-gap": percent(ml["net_gap_s1"]),
        "dpfedpaq-ex-mlp-s1-loss": f"{ml['net_loss_s1']:.3g}",
        "dpfedpaq-ex-mlp-none-loss": f"{ml['net_loss_none']:.3g}",
        "dpfedpaq-ex-mlp-s10-gap": percent(ml["net_gap_s10"]),
        "dpfedpaq-ex-softmax-s1-gap": percent(ml["softmax_gap_s1"]),
        "dpfedpaq-ex-softmax-s10-gap": percent(ml["softmax_gap_s10"]),
        "dpfedpaq-ex-proper-lr": f"{lr['proper_lr']:g}",
        "dpfedpaq-ex-lr-gaps": lr_gaps,
        # cited by the part's index and the errata
        "dpfedpaq-ex-authors-ratio": f"{va['authors_ratio_eps1']:.2f}",
        "dpfedpaq-ex-scorecard-items": str(sc["items"]),
        "dpfedpaq-ex-scorecard-match": str(sc["match"]),
        "dpfedpaq-ex-scorecard-miss": str(sc["miss"]),
        "dpfedpaq-ex-scorecard-erratum": str(sc["erratum"]),
        "dpfedpaq-ex-seed-fragile": number_word(len(sc["fragile"])),
        "dpfedpaq-ex-seed-fragile-ids": ", ".join(sc["fragile"]),
    }
