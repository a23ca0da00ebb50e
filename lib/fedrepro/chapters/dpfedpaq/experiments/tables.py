"""Tables of the chapter "DP-FedPAQ experiments": final losses per figure, the γ × C grid,
the valid-calibration costs and the claim verdicts, as pandas DataFrames (shown by :func:`fedrepro.report.show.table`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from fedrepro.chapters.dpfedpaq.experiments import claims as _claims
from fedrepro.dpfedpaq.quantizer import bits
from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS, spec
from fedrepro.report.book import sig3

__all__ = ["available", "authors_profile_frame", "claims_frame", "final_loss_frame", "gamma_clip_table", "growth_frame",
           "items_frame", "noise_frame",
           "valid_calibration_frame", "valid_summary", "verdict_counts"]

Runs = Mapping[str, Mapping[str, np.ndarray]]


def available(fn, *args: Any) -> pd.DataFrame:
    """``fn(*args)``, or a one-row frame saying which run is not stored (read-only store
    missing a group)."""
    try:
        return fn(*args)
    except KeyError as err:
        return pd.DataFrame({"not computed": [f"the stored runs lack {err.args[0]}"]})


def _final(run: Mapping[str, np.ndarray], metric: str = "loss") -> np.ndarray:
    return np.asarray(run[metric])[:, -1]


def _row(label: str, run: Mapping[str, np.ndarray], **extra: Any) -> dict[str, Any]:
    f = _final(run)
    row = {"run": label, "final loss (mean)": float(f.mean()), "min": float(f.min()), "max": float(f.max())}
    acc = _final(run, "accuracy")
    if np.all(np.isfinite(acc)):
        row["test accuracy"] = float(acc.mean())
    row.update(extra)
    return row


def final_loss_frame(runs: Runs, profile: str, figure: str) -> pd.DataFrame:
    """Final training loss (mean, min, max over seeds) of every curve of ``figure`` ∈
    {"2a", "3a", "3b", "4a", "4b", "4c"}."""
    st = PROFILE_SETTINGS[profile]
    rows = []
    get = lambda **kw: runs[spec(profile, **kw).name()]  # noqa: E731
    if figure == "2a":
        for E in st["E_top"]:
            K = max(st["K"], st["T"] // E)
            for algo in ("vanilla", "private"):
                run = get(algo=algo, E=E, K=K)
                j = int(np.flatnonzero(np.asarray(run["rounds"]) == st["K"])[0])
                sub = {k: (np.asarray(v)[:, : j + 1] if np.ndim(v) == 2 else v) for k, v in run.items()}
                rows.append(_row(f"E={E}, {algo}{' †' if algo == 'private' else ''}", sub))
    elif figure == "3a":
        for s in st["levels"]:
            total = st["K"] * 10 * bits(7850, s)
            for algo in ("vanilla", "private"):
                rows.append(_row(f"s={s}, {algo}", get(algo=algo, s=s), **{"uplink MB": total / 8e6}))
    elif figure == "3b":
        for M in st["Ms"]:
            for algo in ("vanilla", "private"):
                rows.append(_row(f"M={M}, {algo}", get(algo=algo, M=M)))
    elif figure == "4a":
        rows.append(_row("vanilla", get(algo="vanilla")))
        for e in st["eps"]:
            rows.append(_row(f"eps={e:g} †", get(eps=e)))
        for dl in st["deltas"]:
            rows.append(_row(f"eps=1, delta={dl:g} †", get(delta=dl)))
    elif figure == "4b":
        for e in sorted({1.0, min(st["eps"])}):
            for c in st["clips"]:
                rows.append(_row(f"C={c:g}, eps={e:g} †", get(clip=c, eps=e)))
    elif figure == "4c":
        for g in st["gammas"]:
            rows.append(_row(f"gamma={g:g} †", get(gamma=g)))
    else:
        raise ValueError(f"figure must be one of 2a, 3a, 3b, 4a, 4b, 4c, got {figure!r}")
    return pd.DataFrame(rows).set_index("run")


def gamma_clip_table(runs: Runs, profile: str) -> pd.DataFrame:
    """Final loss (mean over seeds) over γ (rows) × C (columns), ε = 1 (Fig. 4 (d))."""
    st = PROFILE_SETTINGS[profile]
    data = [[float(_final(runs[spec(profile, gamma=g, clip=c).name()]).mean()) for c in st["clips"]]
            for g in st["gammas"]]
    return pd.DataFrame(data, index=pd.Index([f"{g:g}" for g in st["gammas"]], name="gamma"),
                        columns=[f"C={c:g}" for c in st["clips"]])


def valid_calibration_frame(runs: Runs, profile: str) -> pd.DataFrame:
    """Per ε: final loss with the authors' noise, per_step and the valid 2η_kEC, and the
    mean noise and update norms per device over the first 10 rounds."""
    st = PROFILE_SETTINGS[profile]
    rows = []
    for e in st["eps"]:
        row: dict[str, Any] = {"eps": e}
        for sens in ("authors_code", "per_step", "rigorous"):
            run = runs[spec(profile, eps=e, sensitivity=sens).name()]
            row[f"loss {sens}"] = float(_final(run).mean())
            row[f"‖z‖/‖u‖ {sens}"] = float(np.mean(run["noise_norm_first10"]) / np.mean(run["update_norm_first10"]))
        rows.append(row)
    return pd.DataFrame(rows).set_index("eps")


def noise_frame(runs: Runs, profile: str) -> pd.DataFrame:
    """Valid sensitivity with the exact calibration over a wide ε grid: final loss, noise and
    update norms (which ε would be needed to train)."""
    st = PROFILE_SETTINGS[profile]
    rows = []
    for e in st["eps_needed"]:
        run = runs[spec(profile, eps=e, sensitivity="rigorous", calibration="exact").name()]
        rows.append({"eps": e, "final loss": float(_final(run).mean()),
                     "noise std (round 0)": float(np.mean(run["noise_std_round0"])),
                     "‖z‖ first 10 rounds": float(np.mean(run["noise_norm_first10"])),
                     "‖u‖ first 10 rounds": float(np.mean(run["update_norm_first10"]))})
    return pd.DataFrame(rows).set_index("eps")


def valid_summary(runs: Runs, profile: str) -> str:
    """Three lines: the smallest ε of the wide grid whose valid-calibration run ends below the
    initial loss ln 10, and the noise-to-update ratios at ε = 1 (valid and authors')."""
    try:
        noise = noise_frame(runs, profile)
        valid = valid_calibration_frame(runs, profile)
    except KeyError as err:
        return f"not computed: the stored runs lack {err.args[0]}"
    trains = noise.index[noise["final loss"] < np.log(10)].tolist()
    return "\n".join([
        f"smallest eps on the grid that ends below the initial loss: {sig3(trains[0]) if trains else None}",
        f"noise/update norm ratio at eps=1, valid sensitivity: {sig3(float(valid.loc[1.0, '‖z‖/‖u‖ rigorous']))}",
        f"noise/update norm ratio at eps=1, authors' sensitivity: "
        f"{sig3(float(valid.loc[1.0, '‖z‖/‖u‖ authors_code']))}"])


def authors_profile_frame(runs: Runs, profile: str) -> pd.DataFrame:
    """The paper's Alg. 2 semantics (steps, per-sample clipping) against the authors' code
    emulated (epochs of batches of 64, batch clipping), both with the authors' noise."""
    st = PROFILE_SETTINGS[profile]
    rows = []
    for e in st["eps_authors"]:
        for sem in ("paper", "authors_code"):
            rows.append(_row(f"eps={e:g}, {sem} semantics †", runs[spec(profile, eps=e, semantics=sem).name()]))
    rows.append(_row("vanilla", runs[spec(profile, algo="vanilla").name()]))
    return pd.DataFrame(rows).set_index("run")


def claims_frame(runs: Runs, profile: str = "paper") -> pd.DataFrame:
    """One row per item decided by the chapter: status and evidence."""
    from fedrepro.report.paper import claims as paper_claims

    quotes = {c["id"]: c["quote"] for c in paper_claims("dpfedpaq")}
    v = _claims.verdicts(runs, profile)
    rows = [{"item": k, "status": s, "paper says": (quotes.get(k, "")[:80] + ("…" if len(quotes.get(k, "")) > 80 else "")),
             "evidence": why} for k, (s, why) in v.items()]
    return pd.DataFrame(rows).set_index("item")


def items_frame(verdicts_: Mapping[str, tuple[str, str]], *items: str) -> pd.DataFrame:
    """:func:`claims.lines` as a table: one row per item (short id such as ``"C24"``) with its
    verdict and evidence."""
    if not items:
        raise ValueError("items must name at least one item, e.g. 'C24'")
    rows = [{"item": item, "verdict": verdicts_[f"dpfedpaq-main-{item}"][0],
             "evidence": verdicts_[f"dpfedpaq-main-{item}"][1]} for item in items]
    return pd.DataFrame(rows).set_index("item")


def verdict_counts(runs: Runs, profile: str = "paper") -> dict[str, int]:
    """How many items are match / miss / not-run."""
    out: dict[str, int] = {}
    for s, _ in _claims.verdicts(runs, profile).values():
        out[s] = out.get(s, 0) + 1
    return dict(sorted(out.items()))


def growth_frame(verdicts_: Mapping[str, tuple[str, str]], profile: str = "paper") -> pd.DataFrame:
    """Figs. 2b–d and 4b–d and their claims: the chapter's verdict (the authors' noise ``C/n_i``)
    beside the verdict on the runs with the per-step noise 2η_kC/b_i, which grows with E
    (:func:`fedrepro.chapters.dpfedpaq.experiments.noise_growth.verdicts`) and its evidence."""
    from fedrepro.chapters.dpfedpaq.experiments import noise_growth

    growth = noise_growth.verdicts(profile)
    rows = []
    for item in noise_growth.FIGURES + noise_growth.CLAIMS:
        ok, why = growth[item]
        rows.append({"item": item.removeprefix("dpfedpaq-main-"), "authors' noise": verdicts_[item][0],
                     "per-step noise": "match" if ok else "miss", "evidence (per-step noise)": why})
    return pd.DataFrame(rows).set_index("item")


def fig4_readings_frame(verdicts_: Mapping[str, tuple[str, str]], profile: str = "paper") -> pd.DataFrame:
    """Figs. 4 (c)–(d) and their claims under every reading of
    :mod:`fedrepro.chapters.dpfedpaq.experiments.fig4_readings` (one row per reading, after the
    chapter's own setting): the verdict of each item, and the rank of C = 0.5 over γ (C40's
    evidence)."""
    from fedrepro.chapters.dpfedpaq.experiments import fig4_readings
    from fedrepro.experiments.dpfedpaq import fig4_epsilon

    items = fig4_readings.FIGURES + fig4_readings.CLAIMS

    def row(label: str, verdict: Mapping[str, tuple[Any, str]], chapter: bool) -> dict[str, str]:
        out = {"reading": label}
        for item in items:
            ok = verdict[item][0]
            out[item.removeprefix("dpfedpaq-main-")] = ok if chapter else ("match" if ok else "miss")
        out["rank of C = 0.5 over γ (C40)"] = str(fig4_readings.c40_ranks(verdict))
        return out

    rows = [row(f"ε = {fig4_epsilon.CHAPTER_EPSILON:g}, Alg. 2 (the chapter)", verdicts_, True)]
    for (eps, semantics), v in fig4_readings.all_verdicts(profile).items():
        rows.append(row(f"ε = {eps:g}, " + ("the authors' code" if semantics == "authors_code" else "Alg. 2"), v,
                        False))
    return pd.DataFrame(rows).set_index("reading")


def mlp_lr_frame(profile: str = "paper") -> pd.DataFrame:
    """C48 at every step of :mod:`fedrepro.chapters.dpfedpaq.experiments.mlp_lr`: the default
    network run's final training loss (mean over seeds; the lowest marks the proper step), how
    far the coarsest quantizer ends above the unquantized run, and C48's verdict."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_lr_effects
    from fedrepro.experiments.dpfedpaq import mlp_lr

    losses, proper = mlp_lr_effects.final_losses(profile), mlp_lr_effects.proper_learning_rate(profile)
    gaps = mlp_lr_effects.quantizer_gaps(profile)
    rows = []
    for lr, (status, _) in mlp_lr_effects.verdicts(profile).items():
        rows.append({"η₀": f"{lr:g}" + (" (the chapter's)" if lr == mlp_lr.CHAPTER_LEARNING_RATE else ""),
                     "final loss, default run": sig3(losses[lr]), "proper": lr == proper,
                     "s = 1 above unquantized": f"{100 * gaps[lr]:.0f} %", "C48": status})
    return pd.DataFrame(rows).set_index("η₀")
