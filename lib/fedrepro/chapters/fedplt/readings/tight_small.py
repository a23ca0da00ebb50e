"""v2 Tables II-IV (the ``n = 5`` problem) again with every step size set from the tight
smoothness constant, for the settings whose cells no point of our loose-constant tuning grid
explains (the paper's ``K*`` lies outside the range of ``K*`` the whole grid produces).

The comparison chapter builds every class's steps and tuning grid from the loose bound
``lam_bar_i = q_i/4 + eps`` that the paper's problem section states; the paper never gives
its experiments' steps. :mod:`fedrepro.chapters.fedplt.readings.tight` reruns Table V with the
tight constant ``lambda_max(A_i^T A_i)/(4 m_i) + eps``; this module does the same for the
settings of :data:`SETTINGS` with the protocol of
:class:`fedrepro.chapters.fedplt.comparison.experiments.ComparisonConfig` unchanged (the same
grid fractions, caps, trials and random streams, on the same data), each class building its
grid from the tight constant.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.readings.tight_small` (a run module); this module re-exports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fedrepro.experiments.fedplt.readings.tight_small import (  # noqa: F401
    SETTINGS,
    TightComparisonConfig,
    _run_unit,
    load_tight_small,
)
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SETTINGS", "TightComparisonConfig", "load_tight_small", "effects_frame"]


def effects_frame(profile: str = "paper") -> pd.DataFrame:
    """Per rerun setting: our ``K*`` with the loose constant (the chapter's) and with the tight
    one, and the tuned parameters of the latter."""
    import pandas as pd

    from fedrepro.chapters.fedplt.comparison import experiments as cmp

    loose = cmp.load_comparison(profile)["units"]
    rows = []
    for unit, u in load_tight_small(profile)["units"].items():
        rows.append({"setting": unit, "ours, loose": sig3(loose[unit]["mean_K"]), "ours, tight": sig3(u["mean_K"]),
                     "tuned (tight)": ", ".join(f"{k}={sig3(v)}" for k, v in u["best_params"].items()) or "—"})
    return pd.DataFrame(rows).set_index("setting")
