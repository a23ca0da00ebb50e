"""The outcome of one proof-as-check evaluation (PEPit style: a computed value against the
bound a statement gives for it)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core.validate import ParameterTypeError, as_real, check_finite, check_nonnegative

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

    ``observed`` and ``bound`` are real numbers (not NaN; ``+-inf`` allowed, not both at
    once where applicable: their ratio is undefined), ``rtol`` is in ``[0, inf)``, ``atol``
    finite (it may be negative, to make a bound strict) and ``applicable`` a boolean.
    """
    as_real("observed", observed)
    as_real("bound", bound)
    check_nonnegative("rtol", rtol)
    check_finite("atol", atol)
    if not isinstance(applicable, (bool, np.bool_)):
        raise ParameterTypeError(f"applicable must be a boolean, got {applicable!r} ({type(applicable).__name__})")
    observed, bound = float(observed), float(bound)
    if not applicable:
        return CheckResult(observed, bound, True, math.nan,
                           {"rtol": rtol, "atol": atol, "applicable": False, **details})
    if math.isinf(observed) and math.isinf(bound):
        raise ValueError(f"observed and bound cannot both be infinite, got observed={observed!r}, bound={bound!r}")
    holds = bool(observed <= bound * (1 + rtol) + atol)
    if bound != 0:
        ratio = observed / bound
    else:
        ratio = 0.0 if observed == 0 else math.inf
    return CheckResult(observed, bound, holds, float(ratio),
                       {"rtol": rtol, "atol": atol, "applicable": True, **details})
