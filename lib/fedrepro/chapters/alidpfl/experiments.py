"""Tables II–IV of ALI-DPFL (Fashion-MNIST columns): the run, its config and its loader are in
:mod:`fedrepro.experiments.alidpfl.tables`; their names stay importable from here (the
notebook ``book/alidpfl/experiments.ipynb``, :mod:`.tables`, :mod:`.scorecard`, :mod:`.facts`).
"""

from fedrepro.experiments.alidpfl.tables import (  # noqa: F401
    _TAUS,
    ESTIMATE_SAMPLES,
    TABLE_READINGS,
    TablesConfig,
    _data,
    cells,
    checkpoint_dir,
    combine,
    load_tables,
    run_unit,
    spent_epsilon,
    units,
)

__all__ = ["TablesConfig", "TABLE_READINGS", "ESTIMATE_SAMPLES", "cells", "units", "run_unit", "combine",
           "load_tables", "spent_epsilon", "checkpoint_dir"]
