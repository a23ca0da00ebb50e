"""v2 Tables II-IV tuned on a grid of powers of ten, the reading of how the paper may have
tuned (stated before it ran: :mod:`fedrepro.experiments.fedplt.readings.decade_grid`), and the
table that sets each tuned count beside the paper's.

The experiment config and the functions that compute the stored result live in
:mod:`fedrepro.experiments.fedplt.readings.decade_grid` (a run module); this module re-exports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fedrepro.experiments.fedplt.readings.decade_grid import (  # noqa: F401
    UNITS,
    DecadeGridConfig,
    _run_unit,
    decade_grid,
    decades,
    load_decade_grid,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["UNITS", "DecadeGridConfig", "decade_grid", "decades", "effects_frame", "load_decade_grid"]


def effects_frame(profile: str = "paper") -> pd.DataFrame:
    """One row per time cell of v2 Tables II-IV: the paper's value, ours (our grid), the
    decade grid's (its tuned point), whether it lands, and the strength the scorecard computes
    for a miss (:func:`fedrepro.report.strength.strength_of` of the cause and the readings of
    :func:`fedrepro.chapters.fedplt.strength.time_readings`)."""
    import pandas as pd

    from fedrepro.chapters.fedplt import strength
    from fedrepro.chapters.fedplt.comparison import experiments as cmp
    from fedrepro.chapters.fedplt.comparison.scorecard import cell_outcomes
    from fedrepro.core.numbers import sig3
    from fedrepro.report.paper import tolerance_for
    from fedrepro.report.scorecard import compare
    from fedrepro.report.strength import strength_of

    units = load_decade_grid(profile)["units"]
    found, causes = strength.time_readings(profile), cell_outcomes(profile)
    rows = []
    for cid, c in cmp.time_cells(profile).items():
        if c["table"] == "fedplt-v2-TV" or c["ours"] is None:
            continue
        unit = units.get(strength._setting(c))  # noqa: SLF001
        decade = None if unit is None else unit["mean_K"] * float(c["ours"]) / float(c["K"])
        status = compare(c["paper"], c["ours"], tolerance_for(c["table"]))[0]
        lands = decade is not None and compare(c["paper"], decade, tolerance_for(c["table"]))[0] == "match"
        verdict = (strength_of(causes[cid].cause or "open", c["paper"], tolerance_for(c["table"]), found.get(cid),
                               ours=c["ours"]) if status == "miss" else None)
        rows.append({"table": c["table"].removeprefix("fedplt-v2-"), "algorithm": c["row"], "column": c["column"],
                     "paper": sig3(c["paper"]), "ours": sig3(c["ours"]),
                     "decade grid": "—" if decade is None else sig3(decade),
                     "decade point": "—" if unit is None or not unit["best_params"] else
                     ", ".join(f"{k} = {sig3(v)}" for k, v in unit["best_params"].items()),
                     "lands": "✓" if lands else "✗",
                     "strength of the miss": "— (a match)" if verdict is None else verdict.strength})
    return pd.DataFrame(rows)
