"""Figures shared by several chapters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from fedrepro.report import paper as paper_data
from fedrepro.report.scorecard import STATUSES, Item, counts

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["STATUS_COLOURS", "scorecard_bars"]

#: One colour per status, used wherever statuses are drawn.
STATUS_COLOURS = {"match": "#2e7d32", "miss": "#c62828", "erratum": "#ef6c00", "not-run": "#9e9e9e"}


def scorecard_bars(items: Iterable[Item]) -> Figure:
    """Horizontal stacked bars: for each paper, how many items have each status."""
    import matplotlib.pyplot as plt

    table = counts(items)
    papers = [p for p in paper_data.PAPERS if p in table]
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.6 * len(papers)))
    left = [0] * len(papers)
    labels = [paper_data.PAPERS[p] for p in papers]
    for status in STATUSES:
        widths = [table[p][status] for p in papers]
        ax.barh(labels, widths, left=left, color=STATUS_COLOURS[status], label=status)
        left = [a + b for a, b in zip(left, widths, strict=False)]
    ax.invert_yaxis()
    ax.set_xlabel("items (table cells, figures, claims, checks)")
    ax.legend(ncols=len(STATUSES), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
