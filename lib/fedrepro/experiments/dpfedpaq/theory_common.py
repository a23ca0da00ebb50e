"""Shared pieces of the chapter's experiments: the row format of a check instance and the
synthetic problem of the Monte Carlo checks (spec §8 items 9–11)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SYNTHETIC_E", "SYNTHETIC_S", "lemma_setup", "row"]

SYNTHETIC_E: tuple[int, ...] = (1, 5, 10)
#: quantization levels of the synthetic runs: none, and s = 4 (q = min(10/16, √10/4) = 0.625 < 1)
SYNTHETIC_S: tuple[int | None, ...] = (None, 4)


def row(family: str, statement: str, instance: str, res: Any, *, applicable: bool = True,
         paper_claims: bool = True) -> dict[str, Any]:
    """One check instance; ``paper_claims``: False for the corrected readings (the paper's
    statement is the other row)."""
    return {"family": family, "statement": statement, "instance": instance,
            "observed": float(res.observed), "bound": float(res.bound), "ratio": float(res.ratio),
            "holds": bool(res.holds), "applicable": bool(applicable), "paper_reading": bool(paper_claims)}


def lemma_setup(n: int, rng: np.random.Generator):
    from fedrepro.dpfedpaq.checks import synthetic as sy

    p = sy.make_problem(rng, N=20, n=n, d=10, mu_reg=0.5)
    radius = 1.5 * float(np.linalg.norm(p.x_star))
    return p, radius
