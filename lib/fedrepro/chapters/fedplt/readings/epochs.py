"""v1 Fig. 3 (Fed-PLT's rate against the number of local steps N_e at the paper's rho = 0.3)
under the readings of the v1 problem (:mod:`.experiments`).

On the library's main setting the Fig. 3 curve at rho = 0.3 decreases to the exact-PRS rate
and stays there: no dip at a finite N_e, so v1 C03, C13, C15, Fig. 3 and v2 C13 miss (the
tuning chapter). v1 Fig. 2 under the printed class moves the optimum rho from 1.33 to about
0.15: rho = 0.3 is then on the other side of the optimum, where the curve over N_e can have
another shape. :class:`ReadingsEpochsConfig` reruns the tuning chapter's Fig. 3 protocol
(:class:`fedrepro.chapters.fedplt.tuning.sweeps.V1RatesConfig`: Fed-PLT with GD, default step,
full participation, x_0 = z_0 = 0, the empirical rate of ``||xbar_k - x*||``; exact PRS with
the local prox) at rho = 0.3 under each reading, with ``||S||`` of Proposition 1 for the
reading's constants (v2 C13 asks that it decreases in N_e).

Which claims then hold is decided by the tuning chapter's own checks
(:func:`fedrepro.chapters.fedplt.readings.effects.epochs_verdicts`).

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.epochs` (a run module); this module re-exports them.
"""

from __future__ import annotations

from fedrepro.experiments.fedplt.readings.epochs import (  # noqa: F401
    ReadingsEpochsConfig,
    _run_epochs,
    load_readings_epochs,
)

__all__ = ["ReadingsEpochsConfig", "load_readings_epochs"]


