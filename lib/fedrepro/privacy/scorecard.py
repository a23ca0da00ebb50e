"""Scorecard provider: ALI-DPFL's iteration counts per privacy budget (§VI).

Provider string for :data:`fedrepro.report.scorecard.PROVIDERS`:
``"fedrepro.privacy.scorecard:outcomes"``.
"""

from __future__ import annotations

import re

from fedrepro.privacy import budget, experiments
from fedrepro.report import paper as paper_data
from fedrepro.report.scorecard import Outcome

__all__ = ["TABLE", "outcomes"]

TABLE = "alidpfl-main-Teps-iterations"
_ROW_RE = re.compile(r"^eps=([0-9.]+)$")


def _row_epsilon(row: str) -> float:
    match = _ROW_RE.match(row)
    if match is None:
        raise ValueError(f"row label {row!r} of {TABLE} is not of the form eps=<number>")
    return float(match.group(1))


def outcomes() -> dict[str, Outcome]:
    """One outcome per cell of the ALI-DPFL iteration table: our bisection count.

    Our count is the authors' code's search (bisection on real step counts, tolerance 0.01
    in ε) with q = 0.015, σ = 1.1, δ = 1e-5, the basic RDP conversion and the paper's
    integer orders, read from the results store. The status is left to the scorecard
    (exact comparison); where the count differs from the paper's, the reason gives ε at
    both counts.
    """
    cfg = experiments.IterationCountsConfig()
    result = experiments.load(cfg)
    ours = {round(float(e), 6): int(n) for e, n in zip(result["epsilon"], result["bisection_basic_paper"])}
    eps_ours = {round(float(e), 6): float(x)
                for e, x in zip(result["epsilon"], result["bisection_basic_paper_epsilon"])}
    out: dict[str, Outcome] = {}
    for cell in paper_data.load_table(TABLE):
        eps = round(_row_epsilon(cell.row), 6)
        if eps not in ours:
            out[cell.id] = Outcome(status="not-run", reason=f"budget eps={eps} is not in {cfg.experiment}")
            continue
        reason = ""
        if cell.value is not None and int(cell.value) != ours[eps]:
            eps_paper, _ = budget.epsilon_after_steps(float(cell.value), cfg.q, cfg.sigma, cfg.delta)
            reason = (f"the paper's recipe (q={cfg.q}, sigma={cfg.sigma}, delta={cfg.delta:g}, basic "
                      f"conversion, orders 2..64, bisection tol {cfg.tolerance}) gives {ours[eps]} steps "
                      f"(eps={eps_ours[eps]:.4f}); {int(cell.value)} steps spend eps={eps_paper:.4f} "
                      f"> {eps}")
        out[cell.id] = Outcome(ours=ours[eps], reason=reason)
    return out
