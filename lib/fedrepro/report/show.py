"""How chapters show results in the book: captioned HTML tables, collapsible prose, figures.

Every chapter (existing and new) shows its results with these, never with
``print(df.to_string())``:

* :func:`table` — a DataFrame, a Series or a ``{name: value}`` mapping as an HTML table with
  a caption and compact numbers (:func:`compact`: three significant digits as
  :func:`fedrepro.report.book.sig3`, integers exact, booleans ✓/✗, missing values empty),
  inside a horizontally scrollable box so that a wide table never widens the page. The cell
  ``show.table(part.table_ii(profile), "Table II: ...")`` is the one visible call that
  computes and shows a table. Its plain-text form (what nbval compares in a
  ``nbval-check-output`` cell) is the caption and the same rounded table as text, so a checked
  table needs no separate printed copy; the HTML carries no random ids, so a rerun changes
  no byte. To show two tables from one cell, ``display(show.table(...))`` the first; a table
  shown inside an ``if`` or a loop is passed to ``display(...)`` too (only a cell's last
  expression is shown by itself). The page check refuses a dropped value and a cell that
  calls a display helper (:data:`DISPLAY_HELPERS`) but has no output.
* :func:`dropdown` — long prose produced by the library (sources, lists of checked claims)
  as a collapsed ``<details>`` block with a title; paragraphs kept, lines wrapped.
* :func:`glue` — :func:`fedrepro.report.book.glue` that also closes a glued matplotlib figure,
  so that it appears once, where the page's ``{glue:figure}`` places it.

Cells tagged ``remove-input`` (no visible output: imports, loading, gluing figures) or
``hide-input`` (printed checks) hold the helper code; the ``parameters`` cell and the
``show.table(...)`` calls stay visible. The styles are in
``fedrepro/report/static/fedrepro.css`` (added by :mod:`fedrepro.report.sphinx_site`).

This module is imported by notebooks only (never by the code of a stored result), so
changing it makes no result stale.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.report.book import glue as _book_glue
from fedrepro.report.book import sig3

__all__ = ["DISPLAY_HELPERS", "FORMATTERS", "SHOWN_BY_VALUE", "Dropdown", "Table", "compact", "dropdown", "glue",
           "table", "tex_to_mathjax"]

#: The helpers that return an object the page shows only where the cell shows it: as the cell's
#: last expression, or passed to ``display(...)``.
SHOWN_BY_VALUE: tuple[str, ...] = ("Dropdown", "Table", "dropdown", "table")
#: Every helper of this module that puts something in the page (:func:`glue` records its value
#: itself). The page check (:func:`fedrepro.report.pages.display_problems`) requires an output
#: of every committed cell that calls one.
DISPLAY_HELPERS: tuple[str, ...] = SHOWN_BY_VALUE + ("glue",)
#: The helpers that only format text (they show nothing themselves).
FORMATTERS: tuple[str, ...] = ("compact", "tex_to_mathjax")


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` for ``{glue}`` roles (:func:`fedrepro.report.book.glue`);
    a matplotlib figure is then closed, or the notebook's inline backend would show it a
    second time below the cell."""
    _book_glue(name, value, display=display)
    if type(value).__module__.startswith("matplotlib") and hasattr(value, "savefig"):
        import matplotlib.pyplot as plt

        plt.close(value)


def compact(x: Any) -> str:
    """One table cell in compact form: integers exact, floats with three significant digits
    (:func:`sig3`), booleans ``✓``/``✗``, missing values empty, anything else as text."""
    if x is None:
        return ""
    if isinstance(x, (bool, np.bool_)):
        return "✓" if bool(x) else "✗"
    if isinstance(x, str):
        return x
    if isinstance(x, np.integer):
        return str(int(x))
    if isinstance(x, np.floating):
        x = float(x)
    if isinstance(x, float) and math.isnan(x):
        return ""
    if isinstance(x, (int, float)):
        return sig3(x)
    return str(x)


_INLINE_TEX = re.compile(r"(?<![\\$])\$([^$\n]+?)\$(?!\$)")


def tex_to_mathjax(text: str) -> str:
    """``$x$`` (the papers' quoted TeX) as ``\\(x\\)``, the inline delimiters MathJax reads in
    the book; the table or dropdown that holds it is marked ``mathjax_process``."""
    return _INLINE_TEX.sub(lambda m: "\\(" + m.group(1) + "\\)", text)


class Table:
    """A captioned table for the book: HTML in the page, rounded text for nbval.

    Built by :func:`table`; ``frame`` holds the formatted strings."""

    def __init__(self, frame: Any, caption: str, index: bool) -> None:
        self.frame = frame
        self.caption = caption
        self.index = index

    def to_html(self) -> str:
        body = self.frame.to_html(index=self.index, escape=True, border=0, na_rep="",
                                  classes=["fedrepro-table"])
        cap = f"<caption>{html.escape(self.caption)}</caption>"
        body = body.replace(">", ">" + cap, 1)
        # a stable id (from the caption) keeps the committed output byte-identical on rerun
        ident = "table-" + hashlib.sha1(self.caption.encode()).hexdigest()[:10]
        return (f'<div class="fedrepro-table-wrapper mathjax_process" id="{ident}" '
                f'style="overflow-x:auto;max-width:100%">{tex_to_mathjax(body)}</div>')

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"{self.caption}\n{self.frame.to_string(index=self.index)}"


def table(data: Any, caption: str, *, index: bool | None = None, columns: Mapping[str, str] | None = None) -> Table:
    """Show ``data`` (a DataFrame, a Series or a ``{name: value}`` mapping) as a captioned
    HTML table with compact numbers (:func:`compact`).

    ``index``: show the row labels (default: yes unless they are the default 0..n-1 range).
    ``columns``: optional renaming of the columns for display."""
    import pandas as pd

    if not isinstance(caption, str) or not caption.strip():
        raise ValueError(f"caption must be a non-empty string, got {caption!r}")
    if isinstance(data, Mapping):
        frame = pd.DataFrame({"value": list(data.values())}, index=[str(k) for k in data.keys()])
        frame.index.name = "quantity"
    elif isinstance(data, pd.Series):
        frame = data.to_frame()
    elif isinstance(data, pd.DataFrame):
        frame = data
    else:
        raise ValueError(f"data must be a DataFrame, a Series or a mapping, got {type(data).__name__}")
    if index is None:
        index = not isinstance(frame.index, pd.RangeIndex)
    shown = frame.rename(columns=dict(columns)) if columns else frame
    formatted = shown.astype(object).map(compact) if len(shown.columns) else shown
    if index:
        formatted.index = [compact(i) if not isinstance(i, tuple) else " / ".join(map(compact, i))
                           for i in shown.index]
        formatted.index.name = shown.index.name if not isinstance(shown.index, pd.MultiIndex) else \
            " / ".join(str(n) for n in shown.index.names if n is not None) or None
    return Table(formatted, caption.strip(), bool(index))


class Dropdown:
    """Collapsible text for the book (built by :func:`dropdown`)."""

    def __init__(self, title: str, text: str, open_: bool) -> None:
        self.title = title
        self.text = text
        self.open = open_

    def _repr_html_(self) -> str:
        paragraphs = [p.strip() for p in self.text.strip().split("\n\n") if p.strip()]
        body = "".join("<p>" + html.escape(p).replace("\n", "<br/>") + "</p>" for p in paragraphs)
        state = " open" if self.open else ""
        return (f'<details class="fedrepro-dropdown mathjax_process"{state}><summary>'
                f'{tex_to_mathjax(html.escape(self.title))}</summary>'
                f'<div class="fedrepro-dropdown-body">{tex_to_mathjax(body)}</div></details>')

    def __repr__(self) -> str:
        return f"{self.title}\n{self.text}"


def dropdown(title: str, text: str, *, open: bool = False) -> Dropdown:  # noqa: A002 - HTML's name
    """Show long prose from the library (``text``, paragraphs separated by blank lines) as a
    collapsed block titled ``title``; ``open=True`` shows it unfolded."""
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title must be a non-empty string, got {title!r}")
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    return Dropdown(title.strip(), text, bool(open))
