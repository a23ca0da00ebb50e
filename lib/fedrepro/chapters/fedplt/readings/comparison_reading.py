"""The base of the readings that rerun v2 Tables II-IV on the comparison chapter's protocol
(:mod:`~fedrepro.chapters.fedplt.readings.tight_small`,
:mod:`~fedrepro.chapters.fedplt.readings.tamuna`,
:mod:`~fedrepro.chapters.fedplt.readings.grid_range`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from fedrepro.chapters.fedplt.comparison.experiments import ComparisonConfig
from fedrepro.report.book import check_profile

__all__ = ["ComparisonReading"]

_R = TypeVar("_R", bound="ComparisonReading")


@dataclass(frozen=True)
class ComparisonReading(ComparisonConfig):
    """A reading of v2 Tables II-IV: the fields (and their defaults per profile) are those of
    :class:`~fedrepro.chapters.fedplt.comparison.experiments.ComparisonConfig`, whose random
    streams it shares (its ``seed_name``); a subclass names its ``experiment`` and may add
    fields of its own, which keep their defaults in :meth:`for_profile`."""

    @classmethod
    def for_profile(cls: type[_R], profile: str) -> _R:
        base = ComparisonConfig.for_profile(check_profile(profile))
        return cls(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})
