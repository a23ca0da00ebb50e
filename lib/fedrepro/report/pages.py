"""The page check: every committed chapter shows exactly what its committed results render.

The book is built from the notebooks' committed outputs (``execute_notebooks: "off"``), so a
stale or hand-edited output would be published as if it were computed. :func:`check_pages`
re-executes every chapter of ``_toc.yml`` (:func:`fedrepro.report.chapters.run_chapter`,
profile ``paper``) into a scratch folder, reading the committed results store only
(``$FEDREPRO_READ_ONLY_STORE``: a stale or missing result is an error, never a recompute),
and compares **every output of every code cell** with the committed one: printed text, HTML
tables, glued values, Markdown and LaTeX, and figures (the PNG the pinned matplotlib renders
with its bundled fonts; a figure that differs is reported with its size).

Normalisation (:func:`normalise_cell`), the only differences tolerated: execution counts;
stderr streams (progress bars and warnings; :func:`~fedrepro.report.chapters.strip_run_metadata`
drops them from the committed files too); consecutive stdout chunks joined; object addresses
(``at 0x7f…``) in plain-text representations.

A page must also show what its cells mean to show (:func:`display_problems`, read from the
committed notebooks without running them): a code cell that calls a display helper (every
helper of :data:`fedrepro.report.show.DISPLAY_HELPERS`, ``display(...)``, the glue of
:mod:`fedrepro.report.book` and of ``myst_nb``) must have an output, and the value of a helper
that only returns what the page shows (:data:`fedrepro.report.show.SHOWN_BY_VALUE`, e.g.
``show.table``) may not be dropped, as it is where the call is not the cell's last expression
(inside an ``if``, a loop, or before another statement: pass it to ``display(...)``). A cell
whose display sits in a branch that shows nothing in some state of the store shows a
"pending" note in that branch instead: no cell is exempt.

``python -m fedrepro.report.pages [NAME ...]`` prints one line per chapter and every
difference, and exits 1 on any; ``make test`` runs it (``tests/test_pages.py``).
"""

from __future__ import annotations

import argparse
import ast
import base64
import dataclasses
import hashlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["Difference", "check_displays", "check_pages", "compare_notebooks", "display_problems", "normalise_cell",
           "main"]

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: Output data (shown, or glued: ``application/papermill.record/image/png``) holding base64 images.
_BINARY = ("image/png", "image/jpeg")


def _binary(mime: str) -> bool:
    return mime.endswith(_BINARY)


@dataclasses.dataclass(frozen=True)
class Difference:
    """One output of one chapter that is not what the results render."""

    chapter: str
    cell: int
    what: str

    def line(self) -> str:
        return f"{self.chapter}: code cell {self.cell}: {self.what}"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _data(data: dict[str, Any]) -> dict[str, str]:
    out = {}
    for mime, value in sorted(data.items()):
        text = _text(value)
        if mime == "text/plain":
            text = _ADDRESS.sub(" at 0x…", text)
        elif _binary(mime):
            text = "".join(text.split())  # base64 line breaks differ between writers
        out[mime] = text
    return out


def normalise_cell(cell: dict[str, Any]) -> list[dict[str, Any]]:
    """The outputs of one code cell as compared by the page check (see the module docstring);
    stderr and stdout chunks as :func:`fedrepro.report.chapters.merge_streams` writes them."""
    from fedrepro.report.chapters import merge_streams

    outs: list[dict[str, Any]] = []
    for out in merge_streams(cell.get("outputs", [])):
        kind = out.get("output_type")
        if kind == "stream":
            outs.append({"type": "stream", "name": out.get("name"), "text": _text(out.get("text", ""))})
        elif kind in ("display_data", "execute_result"):
            outs.append({"type": "display", "data": _data(out.get("data", {})),
                         "metadata": out.get("metadata", {})})
        elif kind == "error":
            outs.append({"type": "error", "text": f"{out.get('ename')}: {out.get('evalue')}"})
        else:
            outs.append({"type": str(kind)})
    return outs


def _describe(mime: str, old: str | None, new: str | None) -> str:
    if old is None or new is None:
        return f"{mime} {'added' if old is None else 'missing'}"
    if _binary(mime):
        size_old, size_new = len(base64.b64decode(old)), len(base64.b64decode(new))
        return (f"figure {mime} differs (committed {size_old} bytes, sha256 "
                f"{hashlib.sha256(old.encode()).hexdigest()[:12]}; rendered {size_new} bytes, "
                f"{hashlib.sha256(new.encode()).hexdigest()[:12]})")
    i = next((k for k, (x, y) in enumerate(zip(old, new, strict=False)) if x != y), min(len(old), len(new)))
    lo = max(0, i - 40)
    return (f"{mime} differs at character {i}: committed …{old[lo:i + 40]!r}… "
            f"rendered …{new[lo:i + 40]!r}…")


def compare_notebooks(committed: dict[str, Any], rendered: dict[str, Any], chapter: str) -> list[Difference]:
    """Every difference between the code-cell outputs of two notebooks (nbformat dicts)."""
    a = [c for c in committed.get("cells", []) if c.get("cell_type") == "code"]
    b = [c for c in rendered.get("cells", []) if c.get("cell_type") == "code"]
    if len(a) != len(b):
        return [Difference(chapter, 0, f"{len(a)} code cells committed, {len(b)} rendered")]
    diffs = []
    for i, (ca, cb) in enumerate(zip(a, b, strict=True)):
        oa, ob = normalise_cell(ca), normalise_cell(cb)
        if oa == ob:
            continue
        if len(oa) != len(ob):
            diffs.append(Difference(chapter, i, f"{len(oa)} outputs committed, {len(ob)} rendered"))
            continue
        for x, y in zip(oa, ob, strict=True):
            if x == y:
                continue
            if x["type"] != y["type"]:
                diffs.append(Difference(chapter, i, f"output {x['type']} committed, {y['type']} rendered"))
            elif x["type"] == "display":
                for mime in sorted(set(x["data"]) | set(y["data"])):
                    if x["data"].get(mime) != y["data"].get(mime):
                        diffs.append(Difference(chapter, i, _describe(mime, x["data"].get(mime),
                                                                      y["data"].get(mime))))
                if x["metadata"] != y["metadata"]:
                    diffs.append(Difference(chapter, i, "output metadata differs"))
            else:
                diffs.append(Difference(chapter, i, _describe("text", x.get("text"), y.get("text"))))
    return diffs


#: The calls besides :mod:`fedrepro.report.show`'s helpers that put something in a page, by
#: their full names: the kernel's ``display`` (a builtin of IPython) and the glue functions.
_OTHER_DISPLAY_CALLS = frozenset({"display", "IPython.display.display", "IPython.core.display_functions.display",
                                  "fedrepro.report.book.glue", "myst_nb.glue"})


def _display_calls() -> tuple[frozenset[str], frozenset[str]]:
    """(the full names of every display call, those of the helpers shown by their value)."""
    from fedrepro.report import show

    every = frozenset(f"fedrepro.report.show.{h}" for h in show.DISPLAY_HELPERS) | _OTHER_DISPLAY_CALLS
    return every, frozenset(f"fedrepro.report.show.{h}" for h in show.SHOWN_BY_VALUE)


def _parse(source: str) -> ast.Module | None:
    """A cell's code as a syntax tree (IPython's ``%`` and ``!`` lines blanked); ``None`` when
    it is not Python (such a cell fails when the page runs)."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _imports(tree: ast.Module, names: dict[str, str]) -> None:
    """Add to ``names`` what every name ``tree`` imports stands for (its full dotted name)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                names[a.asname or top] = a.name if a.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"


def _full_name(func: ast.expr, names: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(names.get(func.id, func.id))
    return ".".join(reversed(parts))


def display_problems(notebook: dict[str, Any], chapter: str) -> list[Difference]:
    """The code cells of ``notebook`` (an nbformat dict, as committed) that do not show what
    they mean to show (module docstring): a cell that calls a display helper but has no
    output, and every call to a helper shown by its value whose value the cell drops. Cells
    are numbered as in :func:`compare_notebooks` (code cells from 0); each difference quotes
    the cell's first line."""
    every, by_value = _display_calls()
    names: dict[str, str] = {}
    diffs = []
    cells = [c for c in notebook.get("cells", []) if c.get("cell_type") == "code"]
    for i, cell in enumerate(cells):
        source = _text(cell.get("source", ""))
        tree = _parse(source)
        if tree is None:
            continue
        _imports(tree, names)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _full_name(n.func, names) in every]
        if not calls:
            continue
        first_line = next((line for line in source.splitlines() if line.strip()), "")
        where = f"(the cell starting {first_line.strip()[:80]!r})"
        if not cell.get("outputs"):
            call = min(calls, key=lambda n: (n.lineno, n.col_offset))
            diffs.append(Difference(chapter, i, f"calls {ast.unparse(call.func)}(...) on line {call.lineno} but has "
                                                f"no output {where}"))
        last = tree.body[-1] if tree.body else None
        for node in ast.walk(tree):
            if (isinstance(node, ast.Expr) and node is not last and isinstance(node.value, ast.Call)
                    and _full_name(node.value.func, names) in by_value):
                diffs.append(Difference(chapter, i, f"drops the value of {ast.unparse(node.value.func)}(...) on "
                                                    f"line {node.lineno}, which shows nothing unless it is the cell's "
                                                    f"last expression: pass it to display(...) {where}"))
    return diffs


def _selected(names: Sequence[str]) -> tuple[Path, list[Path]]:
    from fedrepro.report.chapters import book_root, chapters

    root = book_root()
    selected = [nb for nb in chapters(root) if not names or any(n in str(nb.relative_to(root)) for n in names)]
    if not selected:
        raise ValueError(f"no chapter matches {list(names)}")
    return root, selected


def check_displays(names: Sequence[str] = ()) -> list[Difference]:
    """:func:`display_problems` over every committed chapter of ``_toc.yml`` (or those whose
    path contains one of ``names``); runs nothing."""
    import nbformat

    root, selected = _selected(names)
    diffs = []
    for nb in selected:
        diffs += display_problems(nbformat.read(nb, as_version=4), str(nb.relative_to(root)))
    return diffs


def _check_one(nb_path: Path, root: Path, scratch: Path) -> tuple[str, list[Difference], float]:
    import nbformat

    from fedrepro.report.chapters import run_chapter

    rel = str(nb_path.relative_to(root))
    out = scratch / rel
    t0 = time.perf_counter()
    committed = nbformat.read(nb_path, as_version=4)
    shown = display_problems(committed, rel)
    try:
        run_chapter(nb_path, out, profile="paper")
    except Exception as exc:  # noqa: BLE001 - a chapter that cannot render is a difference
        first = str(exc).strip().splitlines()
        return rel, shown + [Difference(rel, -1, f"does not render: {type(exc).__name__}: "
                                                 f"{first[-1] if first else ''}"[:500])], time.perf_counter() - t0
    rendered = nbformat.read(out, as_version=4)
    return rel, shown + compare_notebooks(committed, rendered, rel), time.perf_counter() - t0


def check_pages(names: Sequence[str] = (), progress: bool = True) -> tuple[list[Difference], dict[str, float]]:
    """Render every chapter (or those whose path contains one of ``names``) from the committed
    store and compare; returns (differences, seconds per chapter). The chapters run one after
    another: papermill runs each kernel in its chapter's folder by changing this process's
    working directory, which threads would race on."""
    from fedrepro.core.cache import results_root

    root, selected = _selected(names)
    os.environ["FEDREPRO_READ_ONLY_STORE"] = str(results_root().resolve())
    os.environ["FEDREPRO_NO_PAPER_COMPUTE"] = "1"
    diffs: list[Difference] = []
    seconds: dict[str, float] = {}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="fedrepro-pages-") as tmp:
        for nb in selected:
            rel, found, took = _check_one(nb, root, Path(tmp))
            if os.getcwd() != cwd:  # never leave the caller in a chapter's folder
                os.chdir(cwd)
            seconds[rel] = took
            diffs.extend(found)
            if progress:
                status = "ok" if not found else f"{len(found)} difference(s)"
                print(f"{rel:<45} {took:6.1f} s  {status}", flush=True)
    return diffs, seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; returns 1 when any page is not what its results render."""
    parser = argparse.ArgumentParser(prog="python -m fedrepro.report.pages", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="only chapters whose path contains one of these")
    args = parser.parse_args(argv)
    diffs, _ = check_pages(args.names)
    for d in diffs:
        print(d.line())
    if diffs:
        print(f"{len(diffs)} difference(s): outputs that are not what the committed results render (run `make "
              "book` and commit the chapters if the results changed on purpose), or cells that do not show what "
              "they display (fix the cell, then run the chapter)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
