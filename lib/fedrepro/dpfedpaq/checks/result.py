"""The outcome of one proof-as-check: a computed value against the bound a statement gives."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckResult", "make_result"]


@dataclass(frozen=True)
class CheckResult:
    """``observed`` against ``bound``; ``holds = observed <= bound·(1 + rtol) + atol`` with the
    tolerances in ``details`` (each check says why it uses them); ``ratio = observed/bound``."""

    observed: float
    bound: float
    holds: bool
    ratio: float
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"observed": self.observed, "bound": self.bound, "holds": self.holds,
                "ratio": self.ratio, **self.details}


def make_result(observed: float, bound: float, *, rtol: float, atol: float = 0.0,
                **details: Any) -> CheckResult:
    """Build a :class:`CheckResult`; ``rtol``/``atol`` are stored in ``details``."""
    if not (rtol >= 0 and atol >= 0):
        raise ValueError(f"rtol and atol must be >= 0, got rtol={rtol!r}, atol={atol!r}")
    observed, bound = float(observed), float(bound)
    holds = bool(observed <= bound * (1 + rtol) + atol)
    ratio = observed / bound if bound != 0 else (0.0 if observed == 0 else math.inf)
    return CheckResult(observed, bound, holds, float(ratio), {"rtol": rtol, "atol": atol, **details})
