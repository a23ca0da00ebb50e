"""Runs of the Fed-PLT readings: the stored result ``fedplt/reading-v2-table-iv-tight``
(:class:`TightTableIVConfig`), v2 Table IV's remaining settings under the tight smoothness constant.

The reading, stated before it ran
---------------------------------
``fedplt/reading-v2-tables-ii-iv-tight`` reran, under the tight smoothness constant
``lambda_max(A_i^T A_i)/(4 m_i) + eps``, only the settings of v2 Tables II-IV whose cells no
point of our loose-constant grid explains; two of them are Table IV's (TAMUNA with partial
participation, Fed-PLT AGD with partial participation). A claim about Table IV (v2 C20, C21,
C23) reads every cell of the table, so that reading was tried on the table in part. This run
completes it: every other setting of v2 Table IV (:data:`REST`) under the same rule
(:func:`fedrepro.experiments.fedplt.readings.tight_small._run_unit`: the comparison's protocol,
grid fractions, caps, trials and seeds unchanged, every class building its grid from the tight
constant). Table IV under the tight constant is then this result and those two units of the
earlier one; the claims are judged by their own rules on it, whatever they give. Nothing of
the paper's counts enters the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.tight_small import SETTINGS, TightComparisonConfig, _run_unit

#: The settings (comparison units) of v2 Table IV that ``reading-v2-tables-ii-iv-tight`` did not
#: rerun: rows TAMUNA, 5GCS, Fed-PLT by columns GD / AGD, full / partial participation (TAMUNA
#: with AGD is "−" in the paper), less :data:`~fedrepro.experiments.fedplt.readings.tight_small.SETTINGS`.
REST: tuple[str, ...] = ("convex-gd-full-TAMUNA", "convex-gd-full-5GCS", "convex-gd-full-Fed-PLT",
                         "convex-gd-cohort-5GCS", "convex-gd-cohort-Fed-PLT", "convex-agd-full-5GCS",
                         "convex-agd-full-Fed-PLT", "convex-agd-cohort-5GCS")


@dataclass(frozen=True)
class TightTableIVConfig(TightComparisonConfig):
    """v2 Table IV's settings of :data:`REST` under the tight smoothness constant, by the rule
    of :class:`~fedrepro.experiments.fedplt.readings.tight_small.TightComparisonConfig` (whose
    fields and checks it keeps)."""

    experiment: ClassVar[str] = "reading-v2-table-iv-tight"
    rerun: tuple[str, ...] = REST

    def __post_init__(self) -> None:
        super().__post_init__()
        again = sorted(set(self.rerun) & set(SETTINGS))
        if again:
            raise ValueError(f"rerun must not repeat the settings of reading-v2-tables-ii-iv-tight, got {again}")


def load_tight_table_iv(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`TightTableIVConfig` (``{"units": {unit: result}}``)."""
    config = TightTableIVConfig.for_profile(profile)
    return run_units(config, list(config.rerun), _run_unit)
