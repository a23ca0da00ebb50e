"""Tables of the chapter "Privacy accounting", as pandas DataFrames of printable strings.

Numbers are rounded with :func:`fedrepro.report.book.sig3` (counts are integers, printed
exactly), so the printed tables do not depend on the last bits of floating point.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.alidpfl.setting import PAPER as ALIDPFL
from fedrepro.privacy import budget
from fedrepro.report.book import sig3
from fedrepro.report.paper import PaperCell

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["accountant_frame", "accountant_gaps", "accountant_lines", "calibration_looseness", "calibration_table", "iteration_table", "paper_counts"]


def paper_counts(cells: Iterable[PaperCell]) -> dict[float, int]:
    """``{ε: iterations}`` from the cells of the paper's table ``alidpfl-main-Teps-iterations``."""
    out = {}
    for cell in cells:
        eps = float(cell.row.split("=", 1)[1])
        out[round(eps, 6)] = int(cell.value) if cell.value is not None else None
    return out


def iteration_table(result: Mapping[str, Any], cells: Iterable[PaperCell], q: float, sigma: float,
                    delta: float) -> pd.DataFrame:
    """Paper's counts beside ours: the bisection count (the authors' search), whether it
    matches, the overshoot ε(T) − target, ε at the paper's count, the exact largest T, and
    the improved conversion's counts (what the public code computes)."""
    import pandas as pd

    paper = paper_counts(cells)
    rows = []
    for i, eps in enumerate(np.asarray(result["epsilon"], dtype=float)):
        p = paper.get(round(float(eps), 6))
        ours = int(result["bisection_basic_paper"][i])
        eps_at_paper = (float(budget.epsilon_after_steps(float(p), q, sigma, delta)[0])
                        if p is not None else float("nan"))
        rows.append({
            "budget eps": sig3(float(eps)),
            "paper T": p,
            "bisection T": ours,
            "match": ours == p,
            "eps(bisection T) - budget": sig3(float(result["bisection_basic_paper_epsilon"][i]) - eps),
            "eps(paper T)": sig3(eps_at_paper),
            "exact largest T": int(result["exact_basic_paper"][i]),
            "improved: bisection T": int(result["bisection_improved_code"][i]),
            "improved: exact T": int(result["exact_improved_code"][i]),
        })
    return pd.DataFrame(rows).set_index("budget eps")


def calibration_table(result: Mapping[str, Any], which: str = "realized") -> pd.DataFrame:
    """DP-FedPAQ eq. (16) per γ (rows) and target ε (columns).

    ``which``: ``"realized"`` (ε actually guaranteed by eq. (16)'s σ), ``"paper_sigma"``
    (σ/Δ of eq. 16) or ``"exact_sigma"`` (σ/Δ of the exact calibration).
    """
    import pandas as pd

    key = {"realized": "fedpaq_realized", "paper_sigma": "fedpaq_paper_sigma",
           "exact_sigma": "fedpaq_exact_sigma"}.get(which)
    if key is None:
        raise ValueError(f"which must be 'realized', 'paper_sigma' or 'exact_sigma', got {which!r}")
    values = np.asarray(result[key])
    cols = [f"eps={sig3(float(e))}" for e in result["table_epsilons"]]
    idx = [f"gamma={sig3(float(g))}" for g in result["gammas"]]
    return pd.DataFrame([[sig3(float(v)) for v in row] for row in values], index=idx, columns=cols)


def accountant_gaps(curve: Mapping[str, Any], counts: Mapping[str, Any]) -> dict[str, float]:
    """Ranges quoted in the chapter's text, computed from the stored results.

    ``improved_cut_min/max`` and ``pld_cut_min/max``: relative reduction of ε against the
    basic conversion at the PLD accountant's step counts; ``steps_ratio_min/max``: improved
    over basic bisection counts; ``exact_gap_min/max``: bisection minus exact count (basic).
    """
    steps = np.asarray(curve["steps"], dtype=float)
    pld_steps = np.asarray(curve["pld_steps"], dtype=float)
    basic = np.interp(pld_steps, steps, curve["basic_paper"])
    improved = np.interp(pld_steps, steps, curve["improved_code"])
    improved_cut = 1 - improved / basic
    pld_cut = 1 - np.asarray(curve["pld"]) / basic
    ratio = np.asarray(counts["bisection_improved_code"]) / np.asarray(counts["bisection_basic_paper"])
    gap = np.asarray(counts["bisection_basic_paper"]) - np.asarray(counts["exact_basic_paper"])
    return {
        "improved_cut_min": float(improved_cut.min()), "improved_cut_max": float(improved_cut.max()),
        "pld_cut_min": float(pld_cut.min()), "pld_cut_max": float(pld_cut.max()),
        "steps_ratio_min": float(ratio.min()), "steps_ratio_max": float(ratio.max()),
        "exact_gap_min": int(gap.min()), "exact_gap_max": int(gap.max()),
    }


def calibration_looseness(cal: Mapping[str, Any], epsilon: float) -> dict[str, float]:
    """Noise ratios at one target ε: classical/analytic (eq. 13, over the δ values) and
    eq. (16)/exact (over γ, ε must be one of ``table_epsilons``)."""
    from fedrepro.privacy import gaussian

    plain = [gaussian.classical_gaussian_sigma(epsilon, float(d), 1.0)
             / gaussian.analytic_gaussian_sigma(epsilon, float(d), 1.0) for d in cal["deltas"]]
    col = int(np.argmin(np.abs(np.asarray(cal["table_epsilons"]) - epsilon)))
    if not np.isclose(cal["table_epsilons"][col], epsilon):
        raise ValueError(f"epsilon must be one of {list(cal['table_epsilons'])}, got {epsilon!r}")
    fedpaq = np.asarray(cal["fedpaq_paper_sigma"])[:, col] / np.asarray(cal["fedpaq_exact_sigma"])[:, col]
    return {"plain_min": float(min(plain)), "plain_max": float(max(plain)),
            "fedpaq_min": float(fedpaq.min()), "fedpaq_max": float(fedpaq.max())}


def accountant_lines(curve: Mapping[str, Any], q: float = ALIDPFL.q, sigma: float = ALIDPFL.sigma,
                     delta: float = ALIDPFL.delta) -> list[str]:
    """At each step count of the PLD reference: ε by the basic RDP conversion (orders 2..64),
    the improved conversion on the authors' code's orders, and the PLD accountant (3 digits)."""
    from fedrepro.privacy import rdp

    lines = []
    for t, pld in zip(curve["pld_steps"], curve["pld"], strict=True):
        basic = budget.epsilon_after_steps(float(t), q, sigma, delta, conversion="basic")[0]
        improved = budget.epsilon_after_steps(float(t), q, sigma, delta, rdp.ALIDPFL_CODE_ORDERS, "improved")[0]
        lines.append(f"T = {int(t):5d}   basic {sig3(basic):>6}   improved {sig3(improved):>6}   PLD {sig3(pld):>6}")
    return lines


def accountant_frame(curve: Mapping[str, Any], q: float = ALIDPFL.q, sigma: float = ALIDPFL.sigma,
                     delta: float = ALIDPFL.delta) -> pd.DataFrame:
    """:func:`accountant_lines` as a table: one row per step count ``T`` of the PLD reference,
    ε by the basic and the improved RDP conversions and by the PLD accountant."""
    import pandas as pd

    from fedrepro.privacy import rdp

    rows = []
    for t, pld in zip(curve["pld_steps"], curve["pld"], strict=True):
        basic = budget.epsilon_after_steps(float(t), q, sigma, delta, conversion="basic")[0]
        improved = budget.epsilon_after_steps(float(t), q, sigma, delta, rdp.ALIDPFL_CODE_ORDERS, "improved")[0]
        rows.append({"T": int(t), "basic": float(basic), "improved": float(improved), "PLD": float(pld)})
    return pd.DataFrame(rows)


def epsilon_at_steps(steps: float, q: float, sigma: float, delta: float) -> float:
    """ε spent after ``steps`` steps (basic conversion, orders 2..64), as the paper's recipe."""
    return float(budget.epsilon_after_steps(float(steps), q, sigma, delta)[0])
