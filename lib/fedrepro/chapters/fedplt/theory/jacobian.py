"""Experiment of the chapter "Fed-PLT: the theory, checked", section "On logistic costs":
Proposition 1 on the logistic problems of §VII, through the Jacobian of one round
(:mod:`fedrepro.fedplt.checks.jacobian`, spec §10.6 (iii)).

For every ``(setup, smoothness, rho, Ne)`` of the grid, ``max_s ||J_T(s)||_2`` over the sampled
states (a lower bound of the round's Lipschitz constant) is compared with ``||S||_2`` (printed)
and ``||S~||_2`` (corrected), where ``S`` is stable. Kept apart from
:mod:`fedrepro.chapters.fedplt.theory.checks` so that the other stored theory results do not depend on this
module's source.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.theory.jacobian` (a run module); this module re-exports them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.experiments.fedplt.theory.jacobian import (  # noqa: F401
    VARIANTS,
    JacobianConfig,
    _run_unit,
    _units,
    load_jacobian,
)
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["JacobianConfig", "load_jacobian", "jacobian_summary", "jacobian_verdict", "figure_jacobian"]


def _ratios(result: dict[str, Any], variant: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Applicable ``observed/bound`` ratios, their ``rho`` and the fixed-point ratios."""
    ratios, rhos, fixed = [], [], []
    grid_rho = np.asarray(result["rhos"], dtype=float)
    for u in result["units"].values():
        ok = np.asarray(u[f"applicable_{variant}"], dtype=bool)
        bound = np.asarray(u[f"bound_{variant}"], dtype=float)
        ratios.append((u["observed"] / bound)[ok])
        fixed.append((u["at_fixed_point"] / bound)[ok])
        rhos.append(np.broadcast_to(grid_rho[:, None], ok.shape)[ok])
    return np.concatenate(ratios), np.concatenate(rhos), np.concatenate(fixed)


def jacobian_summary(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per variant: applicable instances, failures (``observed > bound (1 + 1e-9)``, the check's
    tolerance) in all and with ``rho < 1`` / ``rho >= 1``, max and median ``observed/bound``, and
    the median of the same ratio at the fixed point."""
    out: dict[str, dict[str, Any]] = {}
    for v in VARIANTS:
        ratio, rho, fixed = _ratios(result, v)
        fail = ratio > 1 + 1e-9
        out[v] = {
            "applicable": int(ratio.size), "failing": int(fail.sum()),
            "failing_rho_below_1": int(np.sum(fail & (rho < 1))),
            "applicable_rho_below_1": int(np.sum(rho < 1)),
            "failing_rho_at_least_1": int(np.sum(fail & (rho >= 1))),
            "max_ratio": float(ratio.max()) if ratio.size else math.nan,
            "median_ratio": float(np.median(ratio)) if ratio.size else math.nan,
            "median_ratio_fixed_point": float(np.median(fixed)) if fixed.size else math.nan,
        }
    return out


def jacobian_verdict(result: dict[str, Any], variant: str) -> str:
    """One printable line for ``variant`` (``"paper"`` or ``"corrected"``)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    s = jacobian_summary(result)[variant]
    label = "Proposition 1 on logistic costs" + (", corrected" if variant == "corrected" else "")
    evals = int(sum(np.sum(u["evaluations"]) for u in result["units"].values()))
    return (f"{label}: {'holds' if s['failing'] == 0 else 'FAILS'} ({s['failing']} failing of "
            f"{s['applicable']} applicable instances; {s['failing_rho_below_1']} of "
            f"{s['applicable_rho_below_1']} with rho < 1, {s['failing_rho_at_least_1']} with rho >= 1; "
            f"{evals} Jacobians); ratio max_s ||J(s)|| / ||S||: max {sig3(s['max_ratio'])}, median "
            f"{sig3(s['median_ratio'])}; at the fixed point median {sig3(s['median_ratio_fixed_point'])}")


def figure_jacobian(result: dict[str, Any]) -> Figure:
    """``max_s ||J_T(s)|| / ||S||`` (printed, red) and ``/ ||S~||`` (corrected, blue) against
    ``rho`` on the instances where that ``S`` is stable; hollow markers: ``||J||`` at the
    fixed point."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for v, colour, label in (("paper", "#c62828", r"$\max\|J\|/\|S\|$ (printed)"),
                             ("corrected", "#1565c0", r"$\max\|J\|/\|\tilde S\|$ (corrected)")):
        ratio, rho, fixed = _ratios(result, v)
        jitter = np.exp(0.06 * (np.random.default_rng(0).random(rho.size) - 0.5))  # horizontal jitter only
        ax.scatter(rho * jitter, ratio, s=12, color=colour, alpha=0.6, label=label)
        ax.scatter(rho * jitter, fixed, s=12, facecolors="none", edgecolors=colour, alpha=0.5,
                   label="same, at the fixed point" if v == "corrected" else None)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axvline(1.0, color="grey", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\rho$")
    ax.set_ylabel("observed / bound")
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
