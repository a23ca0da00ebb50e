"""The papers' own values and claims, as transcribed in ``data/paper/``.

* ``data/paper/tables/<paper>-<version>-table-<T>.csv``: one row per table cell, with the
  value as printed (``value_text``), its numeric reading (``value``, empty when the cell is
  not a number), the unit and the exact source line in the paper's text.
* ``data/paper/claims/<paper>.yaml``: the tables index, the figures and the qualitative
  claims of each paper (verbatim quote, section, source line, what would check it).
* ``data/paper/tolerances.yaml``: the tolerance with which each table is compared, fixed
  before any result was computed, with the reason.

These values are what the book compares *against*; they are never used as results.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CSV_HEADER",
    "EXPECTED_TABLES",
    "PAPERS",
    "PaperCell",
    "all_cells",
    "claims",
    "figures",
    "load_paper",
    "load_table",
    "paper_dir",
    "table_frame",
    "table_id",
    "table_index",
    "tolerance_for",
    "tolerances",
]

_REPO_ROOT = Path(__file__).resolve().parents[3]

#: Paper slugs, in book order, with their display names.
PAPERS: dict[str, str] = {
    "fedplt": "Fed-PLT",
    "dpfedpaq": "DP-FedPAQ",
    "alidpfl": "ALI-DPFL",
}

#: Every table the book reproduces, as ``<paper>-<version>-T<table>`` (the issue's list).
EXPECTED_TABLES: tuple[str, ...] = (
    *(f"fedplt-v2-T{t}" for t in ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX")),
    *(f"fedplt-v1-T{t}" for t in ("II", "III", "IV")),
    *(f"alidpfl-main-T{t}" for t in ("II", "III", "IV", "eps-iterations")),
)

CSV_HEADER: tuple[str, ...] = (
    "id", "paper", "version", "table", "row", "column", "value", "value_text", "unit",
    "source_file", "source_line", "source_text",
)

_ID_RE = re.compile(r"^[a-z0-9]+-[a-z0-9]+-T[A-Za-z0-9-]+$")


def paper_dir() -> Path:
    """The ``data/paper`` folder of the repository."""
    return _REPO_ROOT / "data" / "paper"


@dataclasses.dataclass(frozen=True)
class PaperCell:
    """One cell of a paper's table, as printed."""

    id: str
    paper: str
    version: str
    table: str
    row: str
    column: str
    value: float | None
    value_text: str
    unit: str
    source_file: str
    source_line: int
    source_text: str

    @property
    def table_id(self) -> str:
        """``<paper>-<version>-T<table>``, the key of the table in the index."""
        return table_id(self.paper, self.version, self.table)


def table_id(paper: str, version: str, table: str) -> str:
    """The table key ``<paper>-<version>-T<table>``."""
    return f"{paper}-{version}-T{table}"


def _csv_path(tid: str) -> Path:
    paper, version, table = tid.split("-", 2)
    return paper_dir() / "tables" / f"{paper}-{version}-table-{table[1:]}.csv"


@cache
def load_table(tid: str) -> tuple[PaperCell, ...]:
    """The cells of table ``tid`` (e.g. ``"fedplt-v2-TII"``), in file order.

    Raises ``ValueError`` naming the file and line for a malformed file.
    """
    if not _ID_RE.match(tid):
        raise ValueError(f"table id {tid!r} is not of the form <paper>-<version>-T<table>")
    path = _csv_path(tid)
    if not path.exists():
        raise FileNotFoundError(f"no transcription of table {tid}: expected {path.name} in data/paper/tables")
    cells = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != CSV_HEADER:
            raise ValueError(f"{path.name}: header must be {','.join(CSV_HEADER)}")
        for lineno, row in enumerate(reader, start=2):
            try:
                value = float(row["value"]) if row["value"].strip() else None
                cell = PaperCell(
                    id=row["id"], paper=row["paper"], version=row["version"],
                    table=row["table"], row=row["row"], column=row["column"], value=value,
                    value_text=row["value_text"], unit=row["unit"],
                    source_file=row["source_file"], source_line=int(row["source_line"]),
                    source_text=row["source_text"],
                )
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path.name}, line {lineno}: {exc}") from exc
            if cell.table_id != tid:
                raise ValueError(f"{path.name}, line {lineno}: cell belongs to {cell.table_id}, not {tid}")
            cells.append(cell)
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path.name}: duplicate cell ids")
    return tuple(cells)


def all_cells() -> list[PaperCell]:
    """Every transcribed cell of every expected table."""
    return [cell for tid in EXPECTED_TABLES for cell in load_table(tid)]


def table_frame(tid: str, field: str = "value_text") -> pd.DataFrame:
    """Table ``tid`` as a pandas DataFrame (rows x columns, in the paper's order)."""
    import pandas as pd

    cells = load_table(tid)
    rows = list(dict.fromkeys(c.row for c in cells))
    cols = list(dict.fromkeys(c.column for c in cells))
    frame = pd.DataFrame(index=pd.Index(rows, name="row"), columns=cols, dtype=object)
    for c in cells:
        frame.loc[c.row, c.column] = getattr(c, field)
    return frame


@cache
def load_paper(paper: str) -> dict[str, Any]:
    """The claims file of ``paper``: ``{"paper", "title", "tables", "figures", "claims"}``."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")
    path = paper_dir() / "claims" / f"{paper}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in ("tables", "figures", "claims"):
        data.setdefault(key, [])
        data[key] = data[key] or []
    return data


def table_index(paper: str) -> list[dict[str, Any]]:
    """The tables listed for ``paper`` (id, caption, setting, csv)."""
    return list(load_paper(paper)["tables"])


def figures(paper: str) -> list[dict[str, Any]]:
    """The figures of ``paper`` (id, caption, what it shows, what to reproduce)."""
    return list(load_paper(paper)["figures"])


def claims(paper: str) -> list[dict[str, Any]]:
    """The qualitative claims of ``paper`` (id, quote, section, check)."""
    return list(load_paper(paper)["claims"])


@cache
def tolerances() -> dict[str, dict[str, Any]]:
    """Per-table tolerances from ``data/paper/tolerances.yaml``."""
    data = yaml.safe_load((paper_dir() / "tolerances.yaml").read_text(encoding="utf-8"))
    return dict(data["tables"])


def tolerance_for(tid: str) -> dict[str, Any]:
    """The tolerance of table ``tid``: ``{"rel": r}``, ``{"abs": a}`` or ``{"exact": True}``."""
    tol = tolerances().get(tid)
    if tol is None:
        raise KeyError(f"no tolerance recorded for table {tid} in data/paper/tolerances.yaml")
    return {k: v for k, v in tol.items() if k in ("rel", "abs", "exact")}
