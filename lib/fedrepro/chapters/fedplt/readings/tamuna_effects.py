"""What the TAMUNA readings of :mod:`fedrepro.chapters.fedplt.readings.tamuna` do to the cells of
v2 Tables II and IV (the stored runs only; the scorecard's rule is
:func:`fedrepro.chapters.fedplt.comparison.scorecard.tamuna_cause`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fedrepro.chapters.fedplt.readings.tamuna import READINGS, UNITS, load_tamuna_readings
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CELLS", "effects_frame"]

#: The cell of the paper each setting gives (scorecard ids).
CELLS: dict[str, str] = {"convex-gd-full-TAMUNA": "fedplt-v2-TII-tamuna-convex",
                         "convex-gd-cohort-TAMUNA": "fedplt-v2-TIV-tamuna-grad-partial"}


def effects_frame(profile: str = "paper") -> pd.DataFrame:
    """Per unit: the reading, the cell, the paper's ``K*`` (decoded), the comparison chapter's
    TAMUNA and the reading's tuned ``K*`` (or that no grid point reached the tolerance), the
    range of mean ``K*`` over the reading's grid and the share of evaluation runs that diverged."""
    import pandas as pd

    from fedrepro.chapters.fedplt.comparison import experiments as cmp
    from fedrepro.chapters.fedplt.readings.tight import window

    cells = cmp.time_cells(profile)
    units = load_tamuna_readings(profile)["units"]
    rows = []
    for unit in UNITS:
        reading, _, setting = unit.partition("-")
        u, cell = units[unit], cells[CELLS[setting]]
        span = window(u) if u["reached"] else None
        rows.append({"reading": READINGS[reading][2], "cell": CELLS[setting].removeprefix("fedplt-v2-"),
                     "paper K*": sig3(cell["paper_K"]), "ours, compression off": sig3(cell["K"]),
                     "this reading": sig3(u["mean_K"]) if u["reached"] else "not reached",
                     "K* its tuning reached": f"{sig3(span[0])} to {sig3(span[1])}" if span else "—",
                     "diverged": f"{100 * float(u['diverged_share']):.0f} %"})
    return pd.DataFrame(rows).set_index(["reading", "cell"])
