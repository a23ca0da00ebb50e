"""Privacy and communication budgets of ALI-DPFL (Ling et al., §V, §VI-B; spec decision 4).

* R_c, the number of local iterations a privacy budget ε allows each client, comes from
  the accountant's bisection (:func:`fedrepro.privacy.budget.max_steps_bisection`: RDP of
  the Poisson-sampled Gaussian mechanism at integer orders, the basic conversion of
  Definition 5, tolerance 0.01 in ε as in the authors' code). With q = 0.015, σ = 1.1 and
  δ = 1e-5 it reproduces nine of the ten counts of §VI-B.
* R_s, the number of communication rounds, is a table column's value in {158, 231, 317}.
* :class:`BudgetCounter` implements the stopping rule: a run stops *before* a round that
  would exceed R_s rounds or R_c local iterations (Algorithm 2's loop tests the budgets at
  the start of a round and could overrun them; we never do).

:data:`PAPER_CELLS` lists the (table, condition, ε, R_s) of Tables II–IV.
"""

from __future__ import annotations

import dataclasses

from fedrepro.core.validate import ParameterTypeError, check_int, check_interval, check_positive
from fedrepro.privacy.budget import max_steps_bisection

__all__ = ["Budgets", "BudgetCounter", "PAPER_CELLS", "PAPER_ROUNDS", "privacy_iterations",
           "make_budgets", "fixed_tau_stop"]

#: R_s of the three columns of every table (§VI-B).
PAPER_ROUNDS: tuple[int, ...] = (158, 231, 317)

#: (table, condition, ε of the three columns in ascending order, paired with PAPER_ROUNDS).
PAPER_CELLS: tuple[tuple[str, str, tuple[float, ...]], ...] = (
    ("II", "Rs=Rc", (1.75, 1.85, 2.0)),
    ("II", "Rs=2Rc", (1.55, 1.65, 1.75)),
    ("III", "Rs=Rc/2", (2.0, 2.25, 2.5)),
    ("IV", "Rs=Rc/5", (2.75, 3.25, 3.75)),
)


def privacy_iterations(epsilon: float, q: float, sigma: float, delta: float) -> int:
    """R_c: local iterations allowed by ``epsilon`` (bisection of the authors' code).

    Raises ValueError naming ``epsilon`` when the budget allows no step (or more steps than
    the bisection searches), and ValueError/TypeError naming any parameter out of range."""
    check_positive("epsilon", epsilon)
    check_interval("q", q, 0.0, 1.0, closed_low=False)
    check_positive("sigma", sigma)
    check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    try:
        return max_steps_bisection(epsilon, q, sigma, delta)
    except ValueError as exc:  # the accountant names its own parameter target_epsilon
        raise ValueError(str(exc).replace("target_epsilon", "epsilon")) from None


@dataclasses.dataclass(frozen=True)
class Budgets:
    """ε, the rounds R_s and the local iterations R_c of one table cell."""

    epsilon: float
    rounds: int
    iterations: int

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        check_int("rounds", self.rounds, 1)
        check_int("iterations", self.iterations, 1)


def make_budgets(epsilon: float, rounds: int, *, q: float, sigma: float,
                 delta: float) -> Budgets:
    """The :class:`Budgets` of a cell: R_c from ε by :func:`privacy_iterations`.

    Raises ValueError naming the parameter when ε allows no step or ``rounds`` < 1."""
    check_int("rounds", rounds, 1)
    iterations = privacy_iterations(epsilon, q, sigma, delta)
    return Budgets(float(epsilon), int(rounds), iterations)


def _check_budgets(budgets: object) -> None:
    if not isinstance(budgets, Budgets):
        raise ParameterTypeError(f"budgets must be a Budgets, got {type(budgets).__name__}")


def fixed_tau_stop(budgets: Budgets, tau: int) -> tuple[int, int]:
    """(rounds, local iterations) a fixed-τ run executes: min(R_s, ⌊R_c/τ⌋) rounds.

    Raises ValueError naming ``tau`` when τ < 1 or when τ > R_c (no round fits)."""
    _check_budgets(budgets)
    tau = check_int("tau", tau, 1)
    if tau > budgets.iterations:
        raise ValueError(f"tau must be at most R_c = {budgets.iterations} (the privacy budget "
                         f"allows no round of {tau} local iterations), got tau={tau}")
    rounds = min(budgets.rounds, budgets.iterations // tau)
    return rounds, rounds * tau


@dataclasses.dataclass
class BudgetCounter:
    """Rounds and local iterations spent so far against :class:`Budgets`."""

    budgets: Budgets
    rounds_done: int = 0
    iterations_done: int = 0

    def __post_init__(self) -> None:
        _check_budgets(self.budgets)
        check_int("rounds_done", self.rounds_done, 0, self.budgets.rounds)
        check_int("iterations_done", self.iterations_done, 0, self.budgets.iterations)

    @property
    def rounds_left(self) -> int:
        return self.budgets.rounds - self.rounds_done

    @property
    def iterations_left(self) -> int:
        return self.budgets.iterations - self.iterations_done

    def allows(self, tau: int) -> bool:
        """Whether a round of ``tau`` local iterations fits in both budgets."""
        tau = check_int("tau", tau, 1)
        return self.rounds_left >= 1 and self.iterations_left >= tau

    def spend(self, tau: int) -> None:
        """Record a round of ``tau`` iterations (ValueError if it does not fit)."""
        if not self.allows(tau):
            raise ValueError(f"tau={tau}: the round exceeds the budgets ({self.rounds_left} "
                             f"rounds and {self.iterations_left} iterations left)")
        self.rounds_done += 1
        self.iterations_done += int(tau)
