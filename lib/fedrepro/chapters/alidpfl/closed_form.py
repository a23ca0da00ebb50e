"""ALI-DPFL under the public code's closed-form τ* rule: the runs are in
:mod:`fedrepro.experiments.alidpfl.closed_form`, whose names stay importable from here; the
verdicts are in :mod:`fedrepro.chapters.alidpfl.closed_form_effects`.
"""

from fedrepro.experiments.alidpfl.closed_form import (  # noqa: F401
    SEEDS,
    ClosedFormConfig,
    _cells,
    checkpoint_dir,
    combine,
    load_closed_form,
    run_unit,
    units,
)

__all__ = ["ClosedFormConfig", "SEEDS", "units", "run_unit", "combine", "load_closed_form", "checkpoint_dir"]
