"""What the T1 page shows of the fair tuning axes (:mod:`fedrepro.experiments.headtohead.t1_fair`):
the clipping norms each algorithm's grid tunes and how often T1's tuning selected each, and,
once the fair cells are stored, T1's table at the main budget re-derived from the fair grids
with the verdicts against the leader. Presentation only: it reads stored results and never
computes one."""

from __future__ import annotations

from typing import Any

from fedrepro.chapters.headtohead import t1_report as common
from fedrepro.chapters.headtohead.t1 import LABELS
from fedrepro.chapters.headtohead.t2_fair import verdict_text as _verdict_text
from fedrepro.chapters.headtohead.t2_report import Text
from fedrepro.core.cache import load_if_computed
from fedrepro.experiments.headtohead import t1, t1_fair

__all__ = ["computed", "clip_selection_frame", "pending_text", "ranking_frame", "verdict_text"]


def computed(profile: str = "paper") -> dict[str, Any] | None:
    """The fair T1 result (:func:`fedrepro.experiments.headtohead.t1_fair.merged`) when its new
    cells and the stored T1 result are both stored, else ``None``."""
    new = load_if_computed(t1_fair.T1FairConfig(profile=profile))
    old = load_if_computed(t1.T1Config.for_profile(profile))
    if new is None or old is None:
        return None
    return t1_fair.merged(new.result, old.result)


def clip_selection_frame(result: dict[str, Any]) -> Any:
    """Rows: the private algorithms; columns: the clipping norms of the fair set, each with the
    number of T1's cells whose tuning selected it ("not in the grid" where the algorithm's
    grid lacks it), and the clipping norms of its fair grid."""
    import pandas as pd

    rows = []
    for name in t1_fair.GRIDS:
        cells = [t for t in result["tuning"] if t["algorithm"] == name]
        tuned = sorted({c["config"]["clip"] for t in cells for c in t["candidates"]})
        row = {"algorithm": LABELS.get(name, name)}
        for clip in t1_fair.CLIPS:
            picks = sum(t["candidates"][int(t["selected"])]["config"]["clip"] == clip for t in cells)
            row[f"C = {clip:g}"] = f"{picks} of {len(cells)} cells" if clip in tuned else "not in the grid"
        row["fair grid"] = ", ".join(f"{c:g}" for c in sorted({c.clip for c in t1_fair.GRIDS[name]}))
        rows.append(row)
    return pd.DataFrame(rows).set_index("algorithm")


def pending_text(profile: str = "paper") -> Text:
    """The note the page shows while the fair cells are not stored."""
    cfg = t1_fair.T1FairConfig(profile=profile)
    n = len(t1_fair._units(cfg))
    names = " and ".join(LABELS.get(a, a) for a in cfg.algorithms)
    return Text(f"**The fair rerun is pending.** Its {n} new cells (`headtohead/t1-fair`: {names} on their fair "
                f"grids at every cell of T1) are not stored yet; the table below is computed from T1's stored "
                f"tuning.")


def ranking_frame(result: dict[str, Any], budget: float) -> Any:
    """T1's ranking table for the fair records."""
    return common.ranking_frame(result, budget)


def verdict_text(fair: dict[str, Any], old: dict[str, Any], budget: float) -> Text:
    """The verdicts against the leader at every ε (:func:`fedrepro.report.prose.compare_over_seeds`)
    and where they differ from T1's."""
    return _verdict_text(fair, old, budget, labels=LABELS)
