"""Runs of the Fed-PLT readings: the stored result ``fedplt/reading-v2-tables-ii-iii-tight``
(:class:`TightTablesIIIIIConfig`), v2 Tables II and III's remaining settings under the tight
smoothness constant.

The reading, stated before it ran
---------------------------------
Under the tight smoothness constant ``lambda_max(A_i^T A_i)/(4 m_i) + eps``, v2 Table V is
stored whole (``reading-v2-table-v-tight``), Table IV whole (``reading-v2-tables-ii-iv-tight``
and ``reading-v2-table-iv-tight``), Tables II and III but for four settings (:data:`REST`).
The claims that read Tables II-V together (v2 C07: Fed-PLT the fastest exactly where the paper
says; C24: Tables III and V give the same signs) were therefore tried in part under the
reading. This run completes Tables II and III under the same rule
(:func:`fedrepro.experiments.fedplt.readings.tight_small._run_unit`: the comparison's protocol,
grid fractions, caps, trials and seeds unchanged, every class building its grid from the tight
constant); the claims are then judged by their own rules, whatever they give. Nothing of the
paper's counts enters the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fedrepro.core.cache import run_units
from fedrepro.experiments.fedplt.readings.tight_small import SETTINGS, TightComparisonConfig, _run_unit
from fedrepro.experiments.fedplt.readings.tight_table_iv import REST as TABLE_IV_REST

#: The settings of v2 Tables II and III that no tight run holds (LED convex; FedLin, 5GCS and
#: Fed-PLT nonconvex).
REST: tuple[str, ...] = ("convex-gd-full-LED", "nonconvex-gd-full-FedLin", "nonconvex-gd-full-5GCS",
                         "nonconvex-gd-full-Fed-PLT")


@dataclass(frozen=True)
class TightTablesIIIIIConfig(TightComparisonConfig):
    """v2 Tables II and III's settings of :data:`REST` under the tight smoothness constant, by
    the rule of :class:`~fedrepro.experiments.fedplt.readings.tight_small.TightComparisonConfig`."""

    experiment: ClassVar[str] = "reading-v2-tables-ii-iii-tight"
    rerun: tuple[str, ...] = REST

    def __post_init__(self) -> None:
        super().__post_init__()
        again = sorted(set(self.rerun) & (set(SETTINGS) | set(TABLE_IV_REST)))
        if again:
            raise ValueError(f"rerun must not repeat the settings of the other tight runs, got {again}")


def load_tight_tables_ii_iii(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`TightTablesIIIIIConfig` (``{"units": {unit: result}}``)."""
    config = TightTablesIIIIIConfig.for_profile(profile)
    return run_units(config, list(config.rerun), _run_unit)
