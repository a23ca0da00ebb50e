"""Figures of the chapter "DP-FedPAQ experiments" (Figs. 2–4 of the paper, reproduced).

Every curve is the mean over seeds with a min–max band. Private curves calibrated with the
authors' code's sensitivity (Δ = C/n_i) carry the mark † and every such figure says
"† not a valid (ε, δ) guarantee".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fedrepro.dpfedpaq.quantizer import bits
from fedrepro.experiments.dpfedpaq.runs import PROFILE_SETTINGS, spec

__all__ = ["INVALID_NOTE", "draw", "fig2_accuracy", "fig2_bottom", "fig2_top", "fig3", "fig4", "fig4_grid",
           "valid_calibration"]

INVALID_NOTE = "† private runs with the authors' code's noise (Δ = C/nᵢ): not a valid (ε, δ) guarantee"
Runs = Mapping[str, Mapping[str, np.ndarray]]


def _band(ax: Axes, x: np.ndarray, values: np.ndarray, label: str, **kw: Any) -> None:
    v = np.asarray(values, dtype=float)
    line, = ax.plot(x, v.mean(axis=0), label=label, **kw)
    ax.fill_between(x, v.min(axis=0), v.max(axis=0), color=line.get_color(), alpha=0.18, lw=0)


def _curve(ax: Axes, run: Mapping[str, np.ndarray], label: str, *, metric: str = "loss",
           upto: int | None = None, scale: int = 1, **kw: Any) -> None:
    r = np.asarray(run["rounds"])
    sel = r <= (upto if upto is not None else r.max())
    _band(ax, r[sel] * scale, np.asarray(run[metric])[:, sel], label, **kw)


def _get(runs: Runs, profile: str, **kw: Any) -> Mapping[str, np.ndarray]:
    return runs[spec(profile, **kw).name()]


def _finish(fig: Figure, note: bool = True) -> Figure:
    if note:
        fig.text(0.5, 0.005, INVALID_NOTE, ha="center", va="bottom", fontsize=8, style="italic")
    fig.tight_layout(rect=(0, 0.03 if note else 0, 1, 1))
    return fig


def fig2_top(runs: Runs, profile: str = "paper") -> Figure:
    """Fig. 2 (a) loss against rounds (fixed K) and (b) against local iterations (fixed T),
    E on the top-row grid, vanilla (solid) and private † (dashed)."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(10, 4))
    ax_a, ax_b = fig.subplots(1, 2)
    colors = ["C0", "C1", "C2", "C3"]
    for E, col in zip(st["E_top"], colors, strict=False):
        K = max(st["K"], st["T"] // E)
        for algo, ls, tag in (("vanilla", "-", "vanilla"), ("private", "--", "private †")):
            run = _get(runs, profile, algo=algo, E=E, K=K)
            _curve(ax_a, run, f"E={E}, {tag}", upto=st["K"], color=col, ls=ls)
            _curve(ax_b, run, f"E={E}, {tag}", upto=st["T"] // E, scale=E, color=col, ls=ls)
    ax_a.set(xlabel="round k", ylabel="training loss", title=f"(a) fixed K = {st['K']} rounds")
    ax_b.set(xlabel="local iteration t = kE", ylabel="training loss", title=f"(b) fixed T = {st['T']} iterations")
    for ax in (ax_a, ax_b):
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    return _finish(fig)


def fig2_accuracy(runs: Runs, profile: str = "paper") -> Figure:
    """Test-accuracy twin of Fig. 2 (a) (the prose speaks of accuracy)."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(5.5, 4))
    ax = fig.subplots()
    for E, col in zip(st["E_top"], ["C0", "C1", "C2", "C3"], strict=False):
        K = max(st["K"], st["T"] // E)
        for algo, ls, tag in (("vanilla", "-", "vanilla"), ("private", "--", "private †")):
            _curve(ax, _get(runs, profile, algo=algo, E=E, K=K), f"E={E}, {tag}", metric="accuracy",
                   upto=st["K"], color=col, ls=ls)
    ax.set(xlabel="round k", ylabel="test accuracy", title="Fig. 2 (a), test accuracy")
    ax.legend(fontsize=7)
    return _finish(fig)


def fig2_bottom(runs: Runs, profile: str = "paper") -> Figure:
    """Fig. 2 (c) loss after K_bottom rounds and (d) after T iterations against E (log x),
    one curve per γ (private †) and vanilla."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(10, 4))
    axes = fig.subplots(1, 2)
    Es = np.array(st["E_bottom"])
    curves = [("vanilla", {"algo": "vanilla"}, "k")] + [
        (f"γ = {g:g} †", {"gamma": g}, f"C{i}") for i, g in enumerate(st["gammas"])]
    for ax, which, title in ((axes[0], "K", f"(c) after K = {st['K_bottom']} rounds"),
                             (axes[1], "T", f"(d) after T = {st['T']} iterations")):
        for label, kw, col in curves:
            vals = []
            for E in Es:
                run = _get(runs, profile, E=int(E), K=max(st["K_bottom"], st["T"] // int(E)), **kw)
                k = st["K_bottom"] if which == "K" else st["T"] // int(E)
                j = int(np.flatnonzero(np.asarray(run["rounds"]) == k)[0])
                vals.append(np.asarray(run["loss"])[:, j])
            _band(ax, Es, np.array(vals).T, label, color=col, marker="o", ms=3)
        ax.set(xscale="log", yscale="log", xlabel="local iterations per round E", ylabel="training loss",
               title=title)
        ax.legend(fontsize=7)
    return _finish(fig)


def fig3(runs: Runs, profile: str = "paper") -> Figure:
    """Fig. 3 (a) quantization levels s (vanilla; private † dashed), legend with the cumulative
    uplink bits K·M·β(s); (b) devices per round M, both versions."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(10, 4))
    ax_a, ax_b = fig.subplots(1, 2)
    for i, s in enumerate(st["levels"]):
        van = _get(runs, profile, algo="vanilla", s=s)
        total = st["K"] * 10 * bits(7850, s)
        name = "no quantization" if s is None else f"s = {s}"
        _curve(ax_a, van, f"{name} ({total / 8e6:.2g} MB uplink), vanilla", color=f"C{i}")
        _curve(ax_a, _get(runs, profile, s=s), f"{name}, private †", color=f"C{i}", ls="--")
    ax_a.set(xlabel="round k", ylabel="training loss", yscale="log", title="(a) quantization level s (M = 10)")
    for i, M in enumerate(st["Ms"]):
        _curve(ax_b, _get(runs, profile, algo="vanilla", M=M), f"M = {M}, vanilla", color=f"C{i}")
        _curve(ax_b, _get(runs, profile, M=M), f"M = {M}, private †", color=f"C{i}", ls="--")
    ax_b.set(xlabel="round k", ylabel="training loss", yscale="log", title="(b) devices per round M")
    for ax in (ax_a, ax_b):
        ax.legend(fontsize=7)
    return _finish(fig)


def fig4(runs: Runs, profile: str = "paper") -> Figure:
    """Fig. 4 (a) ε, (b) C at ε = 1 (solid) and the smallest ε (dashed), (c) γ, (d) γ × C ∈
    {0.5, 1}; the vanilla curve as reference (black)."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(11, 8))
    (a, b), (c, d) = fig.subplots(2, 2)
    van = _get(runs, profile, algo="vanilla")
    for ax in (a, b, c, d):
        _curve(ax, van, "vanilla", color="k", lw=1)
    for i, e in enumerate(st["eps"]):
        _curve(a, _get(runs, profile, eps=e), f"ε = {e:g} †", color=f"C{i}")
    e_small = min(st["eps"])
    for i, cl in enumerate(st["clips"]):
        _curve(b, _get(runs, profile, clip=cl), f"C = {cl:g}, ε = 1 †", color=f"C{i}")
        _curve(b, _get(runs, profile, clip=cl, eps=e_small), f"C = {cl:g}, ε = {e_small:g} †", color=f"C{i}", ls="--")
    for i, g in enumerate(st["gammas"]):
        _curve(c, _get(runs, profile, gamma=g), f"γ = {g:g} †", color=f"C{i}")
        for cl, ls in ((min(st["clips"]), "--"), (1.0, "-")):
            _curve(d, _get(runs, profile, gamma=g, clip=cl), f"γ = {g:g}, C = {cl:g} †", color=f"C{i}", ls=ls)
    for ax, t in ((a, "(a) privacy budget ε"), (b, "(b) clipping threshold C"), (c, "(c) subsampling ratio γ (C = 1)"),
                  (d, "(d) γ and C")):
        ax.set(xlabel="round k", ylabel="training loss", yscale="log", title=t)
        ax.legend(fontsize=6, ncol=2 if ax is b or ax is d else 1)
    return _finish(fig)


def fig4_grid(table: np.ndarray, gammas: Sequence[float], clips: Sequence[float]) -> Figure:
    """Heat map of the final loss over γ × C (Fig. 4 (d) extended to every C)."""
    fig = plt.figure(figsize=(5, 3.6))
    ax = fig.subplots()
    im = ax.imshow(np.asarray(table), cmap="viridis", aspect="auto")
    ax.set(xticks=range(len(clips)), xticklabels=[f"{c:g}" for c in clips], yticks=range(len(gammas)),
           yticklabels=[f"{g:g}" for g in gammas], xlabel="clipping threshold C", ylabel="subsampling ratio γ",
           title="final training loss (K = 100) †")
    for i in range(len(gammas)):
        for j in range(len(clips)):
            ax.text(j, i, f"{table[i][j]:.3g}", ha="center", va="center", color="w", fontsize=8)
    fig.colorbar(im, ax=ax)
    return _finish(fig)


def valid_calibration(runs: Runs, profile: str = "paper") -> Figure:
    """Fig. 4 (a) again with the valid sensitivity 2η_kEC and with per_step (eq. 16
    calibration), beside the authors' noise; right: final loss against ε with the valid
    sensitivity and the exact calibration, to read off which ε would train."""
    st = PROFILE_SETTINGS[profile]
    fig = plt.figure(figsize=(13, 4))
    axes = fig.subplots(1, 3)
    van = _get(runs, profile, algo="vanilla")
    for ax, sens, title in ((axes[0], "rigorous", "valid: Δ = 2η_kEC (rigorous)"),
                            (axes[1], "per_step", "heuristic: Δ = 2η_kC/b (per_step)")):
        _curve(ax, van, "vanilla", color="k", lw=1)
        for i, e in enumerate(st["eps"]):
            _curve(ax, _get(runs, profile, eps=e, sensitivity=sens), f"ε = {e:g}", color=f"C{i}")
        ax.set(xlabel="round k", ylabel="training loss", yscale="log", title=title)
        ax.legend(fontsize=7)
    ax = axes[2]
    K = st["K"]
    eps = np.array(st["eps_needed"])
    vals = np.array([np.asarray(_get(runs, profile, eps=float(e), sensitivity="rigorous",
                                     calibration="exact")["loss"])[:, -1] for e in eps]).T
    _band(ax, eps, vals, "valid (2η_kEC, exact calibration)", marker="o", color="C3")
    ref = np.asarray(van["loss"])[:, -1]
    ax.axhline(float(ref.mean()), color="k", lw=1, label="vanilla")
    ax.axhline(float(np.log(10)), color="grey", ls=":", label="initial loss ln 10")
    ax.set(xscale="log", yscale="log", xlabel="target ε per round", ylabel=f"training loss after K = {K}",
           title="which ε trains with a valid guarantee")
    ax.legend(fontsize=7)
    return _finish(fig, note=False)


def draw(name: str, runs: Runs, profile: str = "paper") -> Figure:
    """The figure ``name`` (a function of this module taking (runs, profile)), or a
    placeholder saying which run is not stored (a read-only store missing a group)."""
    fn = {"fig2_top": fig2_top, "fig2_accuracy": fig2_accuracy, "fig2_bottom": fig2_bottom, "fig3": fig3,
          "fig4": fig4, "valid_calibration": valid_calibration}[name]
    try:
        return fn(runs, profile)
    except KeyError as err:
        fig = plt.figure(figsize=(6, 1.2))
        fig.text(0.5, 0.5, f"not computed: the stored runs lack {err.args[0]}", ha="center", va="center",
                 fontsize=7, wrap=True)
        return fig
