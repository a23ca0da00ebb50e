"""Summaries, tables and figures of the chapter "Fed-PLT: exact worst-case rates", from the
stored results of :mod:`fedrepro.chapters.fedplt.worst_case.experiments`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.fedplt.checks.pep import RATE_RTOL
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "Table", "table", "looseness", "regions", "prox_summary", "agents_summary", "validation_summary",
    "grid_frame", "region_frame", "prox_frame", "attained_frame", "agents_frame",
    "figure_rates", "figure_regions",
]


# --------------------------------------------------------------------------- display


class Table:
    """A captioned table for the notebook: HTML from pandas' Styler with a fixed id (so a
    rerun writes identical bytes) and a plain-text form without object addresses."""

    def __init__(self, frame: pd.DataFrame, caption: str, uid: str):
        self.frame, self.caption, self.uid = frame, caption, uid

    def _repr_html_(self) -> str:
        return self.frame.style.set_caption(self.caption).set_uuid(self.uid).to_html()

    def __repr__(self) -> str:
        return f"{self.caption}\n{self.frame.to_string()}"


def table(frame: pd.DataFrame, caption: str) -> Table:
    """:class:`Table` with an id derived from the caption."""
    import re

    return Table(frame, caption, "wc-" + re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")[:40])


# --------------------------------------------------------------------------- summaries


def _rate_units(grid: dict[str, Any]) -> list[dict[str, Any]]:
    return [u for name, u in grid["units"].items() if name.split("-")[0] in ("gd", "agd")]


def looseness(grid: dict[str, Any], solver: str) -> dict[str, float]:
    """``||S|| / exact`` (printed and corrected) and ``measured / exact`` (largest quadratic
    ``||M||``) over the grid for ``solver``; where the printed bound is below the exact
    rate (a violated bound); how far the ``K``-round rate is below the one-round rate."""
    us = [u for u in _rate_units(grid) if u["solver"] == solver]
    exact = np.concatenate([u["pep"] for u in us])
    corr = np.concatenate([u["S_corrected"] for u in us]) / exact
    paper = np.concatenate([u["S_paper"] for u in us]) / exact
    meas = np.concatenate([u["quad_max"] for u in us]) / exact
    rounds = np.concatenate([u["pep_rounds"] for u in us]) / exact
    rounds = rounds[np.isfinite(rounds)]

    return {"points": int(exact.size), "corrected_min": float(corr.min()), "corrected_max": float(corr.max()),
            "corrected_median": float(np.median(corr)), "paper_min": float(paper.min()),
            "paper_max": float(paper.max()), "paper_below_exact": int(np.sum(paper < 1 - RATE_RTOL)),
            "corrected_below_exact": int(np.sum(corr < 1 - RATE_RTOL)),
            "measured_min": float(meas.min()), "measured_max": float(meas.max()),
            "measured_median": float(np.median(meas)), "rounds_min": float(rounds.min()),
            "rounds_max": float(rounds.max())}


def regions(grid: dict[str, Any], solver: str) -> dict[str, np.ndarray]:
    """Boolean ``(rho, Ne)`` maps for ``solver``: ``exact`` (one round contracts for every
    function of the class), ``exact_rounds`` (``K`` rounds contract: convergence for every
    function; where the ``K``-round rate was not computed, the one-round one), ``paper_norm`` / ``corrected_norm`` (``||S|| < 1``, printed / corrected:
    Propositions 1/3 certify a one-round contraction), ``stable`` (``rho(S~) < 1``: the
    propositions' hypothesis)."""
    us = sorted((u for u in _rate_units(grid) if u["solver"] == solver), key=lambda u: u["Ne"])
    stack = {k: np.stack([u[k] for u in us], axis=1) for k in ("pep", "pep_rounds", "S_paper", "S_corrected",
                                                                "S_radius")}
    return {"rho": np.asarray(us[0]["rho"]), "Ne": np.array([u["Ne"] for u in us]),
            "exact": stack["pep"] < 1, "exact_rounds": (stack["pep"] < 1) | (stack["pep_rounds"] < 1),
            "paper_norm": stack["S_paper"] < 1, "corrected_norm": stack["S_corrected"] < 1,
            "stable": stack["S_radius"] < 1}


def prox_summary(grid: dict[str, Any]) -> dict[str, Any]:
    """Exact PRS: the PEP rate in ``z`` against ``zeta`` (largest relative gap), and in
    ``(x, z)`` against the ``N_e -> infinity`` limit of ``||S~||``."""
    u = grid["units"]["prox"]
    gap = np.abs(u["pep_z"] - u["zeta"]) / u["zeta"]
    return {"max_rel_gap": float(gap.max()), "points": int(gap.size),
            "xz_over_S": (u["S_corrected"] / u["pep_xz"]).tolist(), "xz_min": float(u["pep_xz"].min()),
            "xz_max_ratio": float(np.max(u["S_corrected"] / u["pep_xz"])),
            "xz_min_ratio": float(np.min(u["S_corrected"] / u["pep_xz"]))}


def agents_summary(val: dict[str, Any]) -> dict[str, Any]:
    """Largest relative spread of the rate over ``N = 1, 2, 3`` at the ``agents`` points."""
    r = val["units"]["agents"]["rates"]
    spread = (r.max(axis=1) - r.min(axis=1)) / r.min(axis=1)
    return {"points": int(r.shape[0]), "max_spread": float(spread.max())}


def validation_summary(val: dict[str, Any]) -> dict[str, Any]:
    """Counts: instances where the measured contraction is within the PEP (quadratic,
    logistic), largest measured/PEP; worst cases attained."""
    out: dict[str, Any] = {}
    for kind in ("quadratic", "logistic"):
        u = val["units"][kind]
        ratio = u["measured"] / u["pep"]
        out[kind] = {"instances": int(ratio.size), "holding": int(np.sum(u["holds"])),
                     "max_ratio": float(ratio.max()), "median_ratio": float(np.median(ratio))}
    a = val["units"]["attained"]
    gap = np.abs(a["implementation"] - a["pep"]) / a["pep"]
    out["attained"] = {"points": int(gap.size), "agree": int(np.sum(a["agree"])), "max_rel_gap": float(gap.max())}
    return out


# --------------------------------------------------------------------------- tables


def grid_frame(grid: dict[str, Any], solver: str) -> pd.DataFrame:
    """Per ``(rho, N_e)``: the exact one-round rate, the ``K``-round rate, ``||S||`` printed and
    corrected, the largest measured quadratic contraction, and ``||S~|| / exact``."""
    import pandas as pd

    rows = []
    for u in sorted((u for u in _rate_units(grid) if u["solver"] == solver), key=lambda u: u["Ne"]):
        for j, rho in enumerate(u["rho"]):
            rows.append({"Ne": int(u["Ne"]), "rho": sig3(float(rho)), "exact": sig3(u["pep"][j]),
                         f"exact, {grid['config']['rounds']} rounds": (sig3(u["pep_rounds"][j])
                                                                        if np.isfinite(u["pep_rounds"][j]) else "-"),
                         "||S|| printed": sig3(u["S_paper"][j]), "||S~||": sig3(u["S_corrected"][j]),
                         "measured (quadratics)": sig3(u["quad_max"][j]),
                         "||S~|| / exact": sig3(u["S_corrected"][j] / u["pep"][j]),
                         "measured / exact": sig3(u["quad_max"][j] / u["pep"][j])})
    return pd.DataFrame(rows).set_index(["Ne", "rho"])


def region_frame(grid: dict[str, Any]) -> pd.DataFrame:
    """Number of ``(rho, N_e)`` grid points in each region, per solver."""
    import pandas as pd

    rows = []
    for solver in grid["config"]["solvers"]:
        r = regions(grid, solver)
        rows.append({"solver": solver, "grid points": int(r["exact"].size),
                     "||S|| < 1 (printed)": int(r["paper_norm"].sum()),
                     "||S~|| < 1 (corrected)": int(r["corrected_norm"].sum()),
                     "rho(S~) < 1 (stable)": int(r["stable"].sum()),
                     "exact one round < 1": int(r["exact"].sum()),
                     f"exact {grid['config']['rounds']} rounds < 1": int(r["exact_rounds"].sum()),
                     "||S~|| < 1 but exact >= 1": int(np.sum(r["corrected_norm"] & ~r["exact"]))})
    return pd.DataFrame(rows).set_index("solver")


def prox_frame(grid: dict[str, Any]) -> pd.DataFrame:
    """Exact PRS per ``rho``: PEP in ``z`` and ``zeta``; PEP in ``(x, z)`` and ``||S~||`` at
    ``chi^{N_e} = 0``."""
    import pandas as pd

    u = grid["units"]["prox"]
    return pd.DataFrame({"rho": [sig3(float(r)) for r in u["rho"]], "PEP (z)": [sig3(v) for v in u["pep_z"]],
                         "zeta (Lemma 3)": [sig3(v) for v in u["zeta"]],
                         "PEP (x, z)": [sig3(v) for v in u["pep_xz"]],
                         "||S~||, chi = 0": [sig3(v) for v in u["S_corrected"]]}).set_index("rho")


def attained_frame(val: dict[str, Any]) -> pd.DataFrame:
    """The worst cases fed back to the implementation: its ratio against the PEP value."""
    import pandas as pd

    a = val["units"]["attained"]
    return pd.DataFrame({"solver": a["solver"], "Ne": a["Ne"], "rho": [sig3(float(r)) for r in a["rho"]],
                         "N": a["N"], "rounds": a["rounds"], "dimension": a["dimension"],
                         "PEP": [sig3(v) for v in a["pep"]], "implementation": [sig3(v) for v in a["implementation"]],
                         "agree (1e-3)": a["agree"]})


def agents_frame(val: dict[str, Any]) -> pd.DataFrame:
    """The one-round rate with ``N = 1, 2, 3`` agents."""
    import pandas as pd

    u = val["units"]["agents"]
    rows = [{"solver": p[0], "Ne": int(p[1]), "rho": sig3(float(p[2])),
             **{f"N = {n}": sig3(u["rates"][i, j]) for j, n in enumerate(u["N"])}}
            for i, p in enumerate(u["points"])]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- figures


def figure_rates(grid: dict[str, Any]) -> Figure:
    """Exact one-round rate (solid), ``K``-round rate (dash-dot), ``||S~||`` (dotted) and the
    largest measured quadratic contraction (markers) against ``rho``, per ``N_e``; GD and AGD."""
    import matplotlib.pyplot as plt

    solvers = grid["config"]["solvers"]
    fig, axes = plt.subplots(1, len(solvers), figsize=(10, 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, solver in zip(axes, solvers, strict=False):
        us = sorted((u for u in _rate_units(grid) if u["solver"] == solver), key=lambda u: u["Ne"])
        colours = plt.cm.viridis(np.linspace(0, 0.85, len(us)))
        for u, col in zip(us, colours, strict=False):
            ax.plot(u["rho"], u["pep"], "-", color=col, label=f"Ne={int(u['Ne'])}")
            ax.plot(u["rho"], u["pep_rounds"], "-.", color=col, lw=0.8)
            ax.plot(u["rho"], u["S_corrected"], ":", color=col)
            ax.plot(u["rho"], u["quad_max"], "o", color=col, ms=3)
        ax.axhline(1.0, color="grey", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"$\rho$")
        ax.set_title("local GD (default step)" if solver == "gd" else "local AGD (eq. (12))", fontsize=10)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_ylabel("contraction per round")
    axes[0].legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def figure_regions(grid: dict[str, Any]) -> Figure:
    """``(rho, N_e)`` grid: where the corrected ``||S~|| < 1`` (the paper's certificate), where
    the exact one-round rate is below 1, and where the ``K``-round rate is."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    solvers = grid["config"]["solvers"]
    fig, axes = plt.subplots(1, len(solvers), figsize=(9, 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    cmap = ListedColormap(["#eeeeee", "#c5e1a5", "#7cb342", "#1565c0"])
    for ax, solver in zip(axes, solvers, strict=False):
        r = regions(grid, solver)
        level = np.where(r["corrected_norm"], 3, np.where(r["exact"], 2, np.where(r["exact_rounds"], 1, 0)))
        ax.pcolormesh(r["rho"], np.arange(r["Ne"].size), level.T, cmap=cmap, vmin=0, vmax=3, shading="nearest")
        ax.set_yticks(np.arange(r["Ne"].size), [str(int(n)) for n in r["Ne"]])
        ax.set_xscale("log")
        ax.set_xlabel(r"$\rho$")
        ax.set_title("local GD" if solver == "gd" else "local AGD", fontsize=10)
    axes[0].set_ylabel(r"$N_e$")
    fig.text(0.5, 0.01, f"dark blue: ||S~|| < 1; green: exact one-round rate < 1; light green: exact "
             f"{grid['config']['rounds']}-round rate < 1; grey: neither", ha="center", fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig
