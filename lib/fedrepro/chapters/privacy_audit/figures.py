"""Figures of the privacy-audit chapter: the attacks' ROC curves against the trade-off
curves the claimed ε allows."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure

from fedrepro.chapters.privacy_audit.tables import SENSITIVITY_LABELS

__all__ = ["roc_figure", "rows_roc_figure", "allowed_tpr"]


def allowed_tpr(fpr: np.ndarray, epsilon: float, delta: float) -> np.ndarray:
    """The largest true-positive rate an (ε, δ)-DP mechanism allows at each false-positive
    rate (the hypothesis-testing region: TPR ≤ min(e^ε·FPR + δ, 1 − e^{−ε}(1 − δ − FPR)))."""
    fpr = np.asarray(fpr, dtype=float)
    return np.clip(np.minimum(np.exp(epsilon) * fpr + delta, 1.0 - np.exp(-epsilon) * (1.0 - delta - fpr)), 0.0, 1.0)


def roc_figure(result: dict[str, Any]) -> Figure:
    """One panel per ε: the attack's ROC for each sensitivity (no quantizer), log axes, with
    the boundary the claimed (ε, δ) allows (an ROC above it refutes the claim)."""
    import matplotlib.pyplot as plt

    mechs = [m for m in result["mechanisms"] if not m["levels"]]
    epsilons = sorted({float(m["claimed_epsilon"]) for m in mechs})
    fig, axes = plt.subplots(1, len(epsilons), squeeze=False, figsize=(4.2 * len(epsilons), 3.6),
                             layout="constrained")
    axes = axes[0]
    grid = np.logspace(-5, 0, 200)
    for ax, eps in zip(axes, epsilons, strict=True):
        for m in (m for m in mechs if float(m["claimed_epsilon"]) == eps):
            fpr, tpr = np.asarray(m["roc_fpr"]), np.asarray(m["roc_tpr"])
            keep = fpr > 0
            ax.plot(fpr[keep], tpr[keep], marker=".", lw=1,
                    label=f"Δ = {SENSITIVITY_LABELS.get(m['sensitivity'], m['sensitivity'])}")
        delta = float(mechs[0]["delta"])
        ax.plot(grid, allowed_tpr(grid, eps, delta), "k--", lw=1, label=f"allowed by ε = {eps:g}")
        ax.plot(grid, grid, color="0.7", lw=0.8, label="chance")
        ax.set_xscale("log")
        ax.set_xlim(1e-4, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("false-positive rate")
        ax.set_title(f"claimed ε = {eps:g} per round")
    axes[0].set_ylabel("true-positive rate")
    axes[-1].legend(fontsize=8, loc="upper left")
    return fig


def rows_roc_figure(rows: list[dict[str, Any]], labels: list[str], title: str) -> Figure:
    """One panel: the attack's ROC of each audited row (log false-positive rate), each with the
    boundary its claimed (ε, δ) allows (dashed, same colour)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 3.8), layout="constrained")
    grid = np.logspace(-5, 0, 200)
    for row, label in zip(rows, labels, strict=True):
        fpr, tpr = np.asarray(row["roc_fpr"]), np.asarray(row["roc_tpr"])
        keep = fpr > 0
        line, = ax.plot(fpr[keep], tpr[keep], marker=".", lw=1, label=label)
        ax.plot(grid, allowed_tpr(grid, float(row["claimed_epsilon"]), float(row["delta"])), ls="--", lw=1,
                color=line.get_color())
    ax.plot(grid, grid, color="0.7", lw=0.8, label="chance")
    ax.set_xscale("log")
    ax.set_xlim(1e-5, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    return fig
