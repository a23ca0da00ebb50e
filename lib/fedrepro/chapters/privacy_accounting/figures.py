"""Figures of the chapter "Privacy accounting" (matplotlib; each function returns a Figure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["calibration_figure", "epsilon_steps_figure", "proposition4_figure"]


def epsilon_steps_figure(curve: Mapping[str, Any], paper_steps: Sequence[float] | None = None,
                         paper_epsilons: Sequence[float] | None = None) -> Figure:
    """ε after T steps (ALI-DPFL setting): basic and improved RDP conversions, PLD accountant,
    and the paper's (T, ε) pairs as markers."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    steps = np.asarray(curve["steps"])
    ax.plot(steps, curve["basic_paper"], color="#1565c0", label="RDP, basic conversion (paper)")
    ax.plot(steps, curve["improved_code"], color="#2e7d32", label="RDP, improved conversion (code)")
    ax.plot(curve["pld_steps"], curve["pld"], "o-", color="#6a1b9a", ms=3,
            label="PLD accountant (dp-accounting)")
    if paper_steps is not None:
        ax.plot(paper_steps, paper_epsilons, "x", color="#c62828", ms=7, mew=1.6,
                label="paper's (T, budget)")
    ax.set_xscale("log")
    ax.set_xlabel("steps T")
    ax.set_ylabel(r"$\varepsilon$ at $\delta = 10^{-5}$")
    ax.grid(alpha=0.3, which="both")
    ax.legend(frameon=False, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def calibration_figure(cal: Mapping[str, Any]) -> Figure:
    """(a) σ_classical/σ_analytic for the Gaussian mechanism; (b) σ of DP-FedPAQ eq. (16)
    over the exact σ. Ratios below 1 mean the calibration does not give the target (ε, δ)."""
    import matplotlib.pyplot as plt

    eps = np.asarray(cal["epsilon"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
    for d, ratio, fail in zip(cal["deltas"], cal["plain_ratio"], cal["plain_failure_epsilon"], strict=False):
        line, = ax1.plot(eps, ratio, label=rf"$\delta = {d:.0e}$")
        ax1.axvline(fail, color=line.get_color(), ls=":", lw=1)
    ax1.axvspan(1.0, eps.max(), color="#ffe0b2", alpha=0.5, label=r"$\varepsilon \geq 1$: not proven")
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.set_title("(a) Gaussian mechanism, eq. (13)", fontsize=10)
    ax1.set_ylabel(r"$\sigma_{\mathrm{classical}} / \sigma_{\mathrm{analytic}}$")
    for g, ratio, fail in zip(cal["gammas"], cal["fedpaq_ratio"], cal["fedpaq_failure_epsilon"], strict=False):
        line, = ax2.plot(eps, ratio, label=rf"$\gamma = {g:g}$")
        if fail <= eps.max():
            ax2.axvline(fail, color=line.get_color(), ls=":", lw=1)
    ax2.axhline(1.0, color="k", lw=0.8)
    ax2.set_title(r"(b) DP-FedPAQ eq. (16), $\delta = 10^{-4}$", fontsize=10)
    ax2.set_ylabel(r"$\sigma_{\mathrm{eq. (16)}} / \sigma_{\mathrm{exact}}$")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_yticks([0.5, 1, 2, 4] if ax is ax2 else [0.9, 1, 1.5, 2])
        ax.set_xlabel(r"target $\varepsilon$")
        ax.axhspan(ax.get_ylim()[0], 1.0, color="#ffcdd2", alpha=0.4, zorder=0)
        ax.grid(alpha=0.3, which="both")
        ax.legend(frameon=False, fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def proposition4_figure(p4: Mapping[str, Any], Ne_values: Sequence[int], K_values: Sequence[int]) -> Figure:
    """Proposition 4 + Lemma 5 (optimal order): ε vs K per Ne (a) and vs Ne per K (b)."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for ne, row in zip(Ne_values, p4["eps_vs_K"], strict=False):
        ax1.plot(p4["K"], row, label=rf"$N_e = {ne}$")
    for k, row in zip(K_values, p4["eps_vs_Ne"], strict=False):
        ax2.plot(p4["Ne"], row, label=rf"$K = {k}$")
    for ax, xlabel in ((ax1, "rounds K"), (ax2, r"local steps $N_e$")):
        ax.axhline(p4["ceiling"], color="k", ls="--", lw=0.9, label=r"limit $K N_e \to \infty$")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(r"$\varepsilon$ (Lemma 5, best order)")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    ax1.set_title("(a) against K", fontsize=10)
    ax2.set_title(r"(b) against $N_e$", fontsize=10)
    fig.tight_layout()
    return fig
