"""The numbers that the prose of the chapter "Fed-PLT: exact worst-case rates" quotes, computed
from the stored results, so that the page glues them instead of typing them.

Each function reads the stored paper-profile results of
:mod:`fedrepro.chapters.fedplt.worst_case.experiments` (through the summaries of
:mod:`~fedrepro.chapters.fedplt.worst_case.render` and
:mod:`~fedrepro.chapters.fedplt.worst_case.compare`; this module is imported by none of them,
so it lies outside their results' code) and returns a dict of floats. The page formats them;
``tests/test_fedplt_comparison_facts.py`` pins them against the tables the page shows. The
settings of the grid and the solvers' tolerances stay typed in the text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.report.prose import power_of_ten, span

__all__ = ["glued", "moduli_facts", "agents_facts", "looseness_facts", "theory_facts"]


def moduli_facts(profile: str = "paper") -> dict[str, float]:
    """The moduli of the class the programs are solved over (the convex v2 logistic problem of
    §VII, data seed 0): ``lam``, the loose ``lam_bar`` of the experiments (as stored with the
    grid) and the problem's tight smoothness constant."""
    from fedrepro.chapters.fedplt.worst_case import experiments
    from fedrepro.problems.logistic import logistic_v2

    unit = next(u for u in experiments.load_grid(profile)["units"].values() if "lam_bar" in u)
    return {"lam": float(unit["lam"]), "lam_bar": float(unit["lam_bar"]),
            "lam_bar_tight": float(logistic_v2(convex=True, seed=0).lam_bar_tight)}


def agents_facts(profile: str = "paper") -> dict[str, Any]:
    """The one-round rate with ``N = 1, 2, 3`` agents (the validation's ``agents`` points): the
    largest relative spread over ``N``, and where it lies (solver, ``N_e``, ``rho``, and the
    ``N`` farthest from ``N = 1``)."""
    from fedrepro.chapters.fedplt.worst_case import experiments

    u = experiments.load_validation(profile)["units"]["agents"]
    r = np.asarray(u["rates"], dtype=float)
    spread = (r.max(axis=1) - r.min(axis=1)) / r.min(axis=1)
    i = int(np.argmax(spread))
    solver, Ne, rho = u["points"][i]
    return {"max_spread": float(spread[i]), "solver": str(solver), "Ne": int(Ne), "rho": float(rho),
            "N": int(np.asarray(u["N"])[int(np.argmax(np.abs(r[i] - r[i, 0])))])}


def looseness_facts(profile: str = "paper") -> dict[str, float]:
    """Per local solver (``gd``, ``agd``), over the grid: the largest ``||S~|| / r_1`` (corrected
    bound over the exact one-round rate), the points where the printed ``||S||`` lies below
    ``r_1``, of all points, and the smallest ``||S|| / r_1`` (printed; the errata cite these)
    (:func:`fedrepro.chapters.fedplt.worst_case.render.looseness`)."""
    from fedrepro.chapters.fedplt.worst_case import experiments, render

    grid = experiments.load_grid(profile)
    out: dict[str, float] = {}
    for solver in grid["config"]["solvers"]:
        lo = render.looseness(grid, solver)
        out[f"{solver}_corrected_max"] = lo["corrected_max"]
        out[f"{solver}_paper_below"] = lo["paper_below_exact"]
        out[f"{solver}_points"] = lo["points"]
        out[f"{solver}_paper_min"] = lo["paper_min"]
    return out


def theory_facts(profile: str = "paper") -> dict[str, float]:
    """At the theory chapter's points (GD, the v2 problem): the empirical rate over the exact
    one-round worst case, smallest and largest
    (:func:`fedrepro.chapters.fedplt.worst_case.compare.theory_points`)."""
    from fedrepro.chapters.fedplt.worst_case import compare, experiments

    ratio = np.asarray(compare.theory_points(experiments.load_validation(profile), profile)["empirical_over_exact"])
    return {"empirical_over_exact_min": float(np.nanmin(ratio)), "empirical_over_exact_max": float(np.nanmax(ratio))}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name
    (the page's hidden cell glues each; the formats keep round-off digits out of the text)."""
    mo, ag = moduli_facts(profile), agents_facts(profile)
    lo, th = looseness_facts(profile), theory_facts(profile)
    return {
        "fedplt-wc-lam-bar": f"{mo['lam_bar']:.2f}",
        "fedplt-wc-lam-bar-tight": f"{mo['lam_bar_tight']:.2f}",
        "fedplt-wc-agents-spread": power_of_ten(ag["max_spread"], 2),
        "fedplt-wc-gd-looseness": f"{lo['gd_corrected_max']:.1f}",
        "fedplt-wc-agd-looseness": f"{lo['agd_corrected_max']:.1f}",
        "fedplt-wc-gd-paper-below": str(lo["gd_paper_below"]),
        "fedplt-wc-agd-paper-below": str(lo["agd_paper_below"]),
        "fedplt-wc-gd-paper-min": f"{lo['gd_paper_min']:.3f}",
        "fedplt-wc-empirical-over-exact": span(th["empirical_over_exact_min"], th["empirical_over_exact_max"], ".2g"),
    }
