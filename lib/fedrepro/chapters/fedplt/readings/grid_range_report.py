"""What the whole grids of :mod:`fedrepro.chapters.fedplt.readings.grid_range` say about the
paper's iteration counts of v2 Tables II-IV: their range, where the paper's count falls in it,
the grid points that enclose it, the nonconvex against the convex counts at equal grid
points, and the curvature of the two problems at their solutions (the scorecard's rule is
:func:`fedrepro.chapters.fedplt.comparison.scorecard.grid_cause`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.chapters.fedplt.readings.grid_range import GridRangeConfig, load_grid_range
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["DECODE_RTOL", "full_range", "bracket", "bracket_text", "count_ratios", "position", "position_frame",
           "figure_positions", "curvature_at_solution", "curvature_frame"]

#: relative round-off allowed when the paper's ``K*`` (decoded from a printed time) meets a count of ours.
DECODE_RTOL = 1e-9


def _counts(unit: Mapping[str, Any]) -> np.ndarray:
    return np.asarray(unit["mean_K"], dtype=np.float64).ravel()


def full_range(unit: Mapping[str, Any]) -> tuple[float, float, int, int] | None:
    """(smallest, largest, points that reach the tolerance within the cap, points) of the mean
    ``K*`` over the whole grid of one setting, or None when no point reaches it."""
    k = _counts(unit)
    finite = k[np.isfinite(k)]
    return (float(finite.min()), float(finite.max()), int(finite.size), int(k.size)) if finite.size else None


def position(paper_K: float, span: tuple[float, ...]) -> str:
    """``"below"``, ``"within"`` or ``"above"`` the range ``span`` (smallest and largest count
    first, as :func:`full_range` gives them), with the round-off of a decoded count allowed at
    both ends."""
    lo, hi = span[0], span[1]
    if paper_K < lo * (1 - DECODE_RTOL):
        return "below"
    return "above" if paper_K > hi * (1 + DECODE_RTOL) else "within"


def bracket(unit: Mapping[str, Any], K: float) -> tuple[tuple[dict[str, float], float] | None,
                                                          tuple[dict[str, float], float] | None]:
    """The grid point with the largest count at most ``K`` and the one with the smallest count
    at least ``K`` (each ``(point, count)``, or None where no count lies on that side)."""
    k = _counts(unit)
    points = unit["points"]
    ok = np.isfinite(k)
    below = np.flatnonzero(ok & (k <= K * (1 + DECODE_RTOL)))
    above = np.flatnonzero(ok & (k >= K * (1 - DECODE_RTOL)))
    lo = int(below[np.argmax(k[below])]) if below.size else None
    hi = int(above[np.argmin(k[above])]) if above.size else None
    return ((dict(points[lo]), float(k[lo])) if lo is not None else None,
            (dict(points[hi]), float(k[hi])) if hi is not None else None)


def _point_text(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k} = {sig3(v)}" for k, v in point.items()) or "its only point"


def bracket_text(unit: Mapping[str, Any], K: float) -> str:
    """The grid points whose counts enclose ``K``, in words."""
    lo, hi = bracket(unit, K)
    if lo is not None and hi is not None and lo[1] == hi[1]:
        return f"{_point_text(lo[0])} needs {sig3(lo[1])}"
    parts = [f"{_point_text(side[0])} needs {sig3(side[1])}" for side in (lo, hi) if side is not None]
    return " and ".join(parts)


def count_ratios(convex: Mapping[str, Any], nonconvex: Mapping[str, Any]) -> tuple[float, float, int] | None:
    """(smallest, largest, points) of nonconvex count / convex count at equal grid positions
    (the grids are built from each problem's constants with the same fractions when they have
    as many points), over the points that reach the tolerance on both; None otherwise."""
    a, b = _counts(convex), _counts(nonconvex)
    if a.size != b.size:
        return None
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0)
    if not ok.any():
        return None
    r = b[ok] / a[ok]
    return float(r.min()), float(r.max()), int(ok.sum())


def _cells(profile: str) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """``(time cell, whole-grid unit, comparison unit)`` of every cell of v2 Tables II and IV
    with a count on both sides (Table III reuses Table II's counts)."""
    from fedrepro.chapters.fedplt.comparison import experiments as cmp

    stored = cmp.load_comparison(profile)["units"]
    units = load_grid_range(profile)["units"]
    out = []
    for c in cmp.time_cells(profile).values():
        if c["table"] not in ("fedplt-v2-TII", "fedplt-v2-TIV") or c["paper_K"] is None or c["K"] is None:
            continue
        if c["table"] == "fedplt-v2-TII":
            key = cmp.unit_name(c["row"], "convex" if c["column"] == "Convex" else "nonconvex", "gd", False)
        else:
            solver, partial = cmp.TABLE_IV_COLUMNS[c["column"]]
            key = cmp.unit_name(c["row"], "convex", solver, partial)
        out.append((c, units[key], stored[key]))
    return out


def position_frame(profile: str = "paper") -> pd.DataFrame:
    """Per cell of v2 Tables II and IV (Table III reuses Table II's counts): the paper's ``K*``
    (decoded), ours (tuned), the counts the tuning saw (points that reached the tolerance
    within the tuning's first sufficient cap), the counts of the whole grid, where the paper's
    count falls among the latter, and the grid points that enclose it."""
    import pandas as pd

    rows = []
    for c, u, tuned in _cells(profile):
        seen = np.asarray(tuned["tune_mean_K"], dtype=np.float64)
        seen = seen[np.isfinite(seen)]
        span = full_range(u)
        where = position(float(c["paper_K"]), span) if span else "—"
        rows.append({"table": c["table"].removeprefix("fedplt-v2-T"), "algorithm": c["row"], "column": c["column"],
                     "paper K*": sig3(c["paper_K"]), "ours": sig3(c["K"]),
                     "K* the tuning saw (its cap)": f"{sig3(seen.min())} to {sig3(seen.max())} ({tuned['tune_cap']})",
                     "K* of the whole grid (points reached)": (f"{sig3(span[0])} to {sig3(span[1])} ({span[2]}/{span[3]})"
                                                                if span else "—"),
                     "paper's count": where,
                     "grid points around it": bracket_text(u, float(c["paper_K"])) if span else "—"})
    return pd.DataFrame(rows).set_index(["table", "algorithm", "column"])


def figure_positions(profile: str = "paper") -> Figure:
    """One row per cell of v2 Tables II and IV: the count of every point of its grid (grey
    ticks; log scale), the tuning's first cap (dotted), our tuned ``K*`` and the paper's."""
    import matplotlib.pyplot as plt

    cells = _cells(profile)
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(cells) + 1.2))
    for y, (c, u, tuned) in enumerate(cells):
        k = _counts(u)
        k = k[np.isfinite(k)]
        ax.plot(k, np.full(k.size, y), "|", color="0.6", ms=7)
        ax.plot([float(tuned["tune_cap"])], [y], ":", marker="|", color="0.3", ms=9)
        ax.plot([float(c["K"])], [y], "o", color="C0", ms=5)
        ax.plot([float(c["paper_K"])], [y], "x", color="C3", ms=7, mew=2)
    ax.set_yticks(range(len(cells)))
    ax.set_yticklabels([f"{c['table'].removeprefix('fedplt-v2-T')} {c['row']}, {c['column']}" for c, _, _ in cells],
                       fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("iterations to the accuracy, $K^\\star$")
    ax.legend([plt.Line2D([], [], marker="|", ls="none", color="0.6", ms=7),
               plt.Line2D([], [], marker="|", ls="none", color="0.3", ms=9),
               plt.Line2D([], [], marker="o", ls="none", color="C0", ms=5),
               plt.Line2D([], [], marker="x", ls="none", color="C3", ms=7, mew=2)],
              ["a point of our grid", "the tuning's first cap", "ours (tuned)", "paper"], fontsize=7,
              loc="lower right")
    ax.grid(axis="x", which="major", alpha=0.3)
    fig.tight_layout()
    return fig


def curvature_at_solution(profile: str = "paper") -> dict[str, dict[str, float]]:
    """Per problem of Tables II-IV (``"convex"``, ``"nonconvex"``: v2 §VII's regulariser
    ``eps ||x||^2/2`` or ``eps sum x_j^2/(1+x_j^2)``, the comparison's data): the largest
    ``|x*_j|``, the smallest and largest eigenvalue of ``Hess F(x*)/N`` (the curvature per
    agent at the solution, ``F = sum_i f_i``; for the nonconvex problem ``x*`` is the
    stationary point Newton reaches from 0) and the loose smoothness constant the steps are
    built from."""
    from fedrepro.chapters.fedplt.comparison.experiments import _problem_v2

    config = GridRangeConfig.for_profile(profile)
    out = {}
    for kind in ("convex", "nonconvex"):
        problem = _problem_v2(kind == "convex", config)
        x = problem.x_star()
        eig = np.linalg.eigvalsh(problem.total_hessian(x) / problem.N)
        out[kind] = {"max_abs_x": float(np.max(np.abs(x))), "min_curvature": float(eig[0]),
                     "max_curvature": float(eig[-1]), "lam_bar": float(problem.lam_bar)}
    return out


def curvature_frame(profile: str = "paper") -> pd.DataFrame:
    """:func:`curvature_at_solution` as a table."""
    import pandas as pd

    rows = {kind: {"largest |x*_j|": sig3(v["max_abs_x"]), "smallest curvature per agent": sig3(v["min_curvature"]),
                   "largest curvature per agent": sig3(v["max_curvature"]),
                   "loose smoothness constant (steps)": sig3(v["lam_bar"])}
            for kind, v in curvature_at_solution(profile).items()}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("problem")
