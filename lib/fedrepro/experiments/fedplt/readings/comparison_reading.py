"""Runs of the Fed-PLT readings: :class:`ComparisonReading` (the base the readings' configs share)
and the helpers it needs. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.readings.comparison_reading`, which re-exports these names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from fedrepro.core.profiles import check_profile
from fedrepro.experiments.fedplt.comparison import ComparisonConfig

_R = TypeVar("_R", bound="ComparisonReading")


@dataclass(frozen=True)
class ComparisonReading(ComparisonConfig):
    """A reading of v2 Tables II-IV: the fields (and their defaults per profile) are those of
    :class:`~fedrepro.chapters.fedplt.comparison.experiments.ComparisonConfig`, whose random
    streams it shares (its stream name, :mod:`fedrepro.core.streams`); a subclass names its ``experiment`` and may add
    fields of its own, which keep their defaults in :meth:`for_profile`."""

    @classmethod
    def for_profile(cls: type[_R], profile: str) -> _R:
        base = ComparisonConfig.for_profile(check_profile(profile))
        return cls(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
