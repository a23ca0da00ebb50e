"""The iterations a budget ε buys under each RDP → (ε, δ) conversion, for the ALI-DPFL pages
(the settings chapter's reading "improved conversion" and the experiments chapter's table of it)."""

from __future__ import annotations

from fedrepro.alidpfl.setting import PAPER
from fedrepro.privacy.budget import max_steps_bisection

__all__ = ["improved_iterations"]


def improved_iterations(epsilons: tuple[float, ...] = (1.55, 1.75, 2.0), q: float = PAPER.q,
                        sigma: float = PAPER.sigma, delta: float = PAPER.delta) -> dict[str, list[int]]:
    """R_c by the bisection under the basic (paper) and the improved (public code) conversion."""
    return {"epsilon": list(epsilons),
            "basic": [max_steps_bisection(e, q, sigma, delta) for e in epsilons],
            "improved": [max_steps_bisection(e, q, sigma, delta, conversion="improved")
                         for e in epsilons]}
