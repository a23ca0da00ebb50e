"""The trend rules the chapter's claims are decided by: a sequence of means increasing or
decreasing up to the seed spread (used by :mod:`.claims` and :mod:`.mlp_effects`; a module of
its own so that neither imports the other)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["decreasing", "increasing"]


def increasing(means: Sequence[float], spreads: Sequence[float] | None = None, *, strict: bool = False) -> bool:
    """Each mean ≥ the previous (> if ``strict``), or ≥ previous − max(spreads) of the pair."""
    m = np.asarray(means, dtype=float)
    s = np.zeros_like(m) if spreads is None else np.asarray(spreads, dtype=float)
    slack = np.maximum(s[1:], s[:-1])
    d = np.diff(m)
    return bool(np.all(d > 0) if strict else np.all(d >= -slack))


def decreasing(means: Sequence[float], spreads: Sequence[float] | None = None, *, strict: bool = False) -> bool:
    """:func:`increasing` of the negated means."""
    return increasing(-np.asarray(means, dtype=float), spreads, strict=strict)
