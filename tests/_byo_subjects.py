"""Readers' algorithms for the tests of ``python -m fedrepro.headtohead run`` (importable by
name, as a reader's module is)."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from fedrepro.experiments.headtohead.t1 import GRIDS
from fedrepro.experiments.headtohead.t2 import GRIDS as T2_GRIDS
from fedrepro.headtohead import algorithms

#: T1's own DP-FedSGD grid, named as a reader names a grid: the command must give T1's rows.
DP_FEDSGD = GRIDS["dp-fedsgd"]
#: One configuration of DPFL (a grid of one: it runs as is).
ONE_DPFL = algorithms.DPFL(lr=1.0, clip=1.0, rate=0.05)
#: Thirteen configurations: one more than the book's tuning budget.
TOO_MANY = tuple(algorithms.DPFL(lr=0.1 * (k + 1)) for k in range(13))
#: Configurations of two classes.
MIXED = (algorithms.DPFL(), algorithms.PrivateFedPAQ())


@dataclasses.dataclass(frozen=True)
class Incomplete(algorithms.UpdateAveraging):
    """A server with a message size but no name, privacy plan or client computation."""

    lr: float = 1.0

    def message_bits(self, d: int) -> float:
        return 32.0 * d


class _Delegating:
    """Every method of the interface (delegated to DPFL), but no dataclass fields."""

    name: ClassVar[str] = "delegating"

    def __getattr__(self, item: str) -> Any:
        return getattr(algorithms.DPFL(), item)


DELEGATING = _Delegating()

#: T2's own DP-FedSGD grid, named as a reader names a grid: ``--task t2`` must give T2's rows.
T2_DP_FEDSGD = T2_GRIDS["dp-fedsgd"]
