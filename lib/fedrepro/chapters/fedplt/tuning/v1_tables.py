"""v1 Tables II-IV for the tuning chapter's section on the earlier version: each table as the
chapter that computes it renders it (ours, the paper's value and the ratio). Presentation only:
nothing here is in an experiment's import graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fedrepro.report.book import check_profile

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["earlier_version_tables"]


def earlier_version_tables(profile: str = "paper") -> dict[str, pd.DataFrame]:
    """``{"Table II": ..., "Table III": ..., "Table IV": ...}``: v1 Table II from the comparison
    chapter (:func:`fedrepro.chapters.fedplt.comparison.experiments.v1_table_ii`), Tables III and
    IV from the participation-and-privacy chapter
    (:func:`fedrepro.chapters.fedplt.participation_privacy.participation.v1_table_iii`,
    :func:`fedrepro.chapters.fedplt.participation_privacy.noise.v1_table_iv`)."""
    from fedrepro.chapters.fedplt.comparison.experiments import v1_table_ii
    from fedrepro.chapters.fedplt.participation_privacy.noise import v1_table_iv
    from fedrepro.chapters.fedplt.participation_privacy.participation import v1_table_iii

    check_profile(profile)
    return {"Table II": v1_table_ii(profile), "Table III": v1_table_iii(profile), "Table IV": v1_table_iv(profile)}
