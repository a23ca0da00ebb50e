"""The outcome of one proof-as-check evaluation (PEPit style: a computed value against the
bound a statement gives for it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckResult", "make_result"]


@dataclass(frozen=True)
class CheckResult:
    """``observed`` (the computed quantity) against ``bound`` (what the statement claims).

    ``holds = observed <= bound * (1 + rtol) + atol``, with the tolerances recorded in
    ``details`` (each check states why it uses them); ``ratio = observed / bound``
    (``inf`` when the bound is 0 and the observed value is not).
    """

    observed: float
    bound: float
    holds: bool
    ratio: float
    details: dict[str, Any] = field(default_factory=dict)


def make_result(observed: float, bound: float, *, rtol: float, atol: float = 0.0,
                applicable: bool = True, **details: Any) -> CheckResult:
    """Build a :class:`CheckResult`; ``rtol``/``atol`` are stored in ``details``.

    ``applicable=False`` marks an instance outside the statement's hypotheses (e.g. an
    unstable ``S``): the statement claims nothing there, so it holds vacuously and the
    ratio is ``nan`` (left out of the ratio statistics).
    """
    observed, bound = float(observed), float(bound)
    if not applicable:
        return CheckResult(observed, bound, True, math.nan,
                           {"rtol": rtol, "atol": atol, "applicable": False, **details})
    holds = bool(observed <= bound * (1 + rtol) + atol)
    if bound != 0:
        ratio = observed / bound
    else:
        ratio = 0.0 if observed == 0 else math.inf
    return CheckResult(observed, bound, holds, float(ratio),
                       {"rtol": rtol, "atol": atol, "applicable": True, **details})
