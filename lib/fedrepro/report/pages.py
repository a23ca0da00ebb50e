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

``python -m fedrepro.report.pages [NAME ...]`` prints one line per chapter and every
difference, and exits 1 on any; ``make test`` runs it (``tests/test_pages.py``).
"""

from __future__ import annotations

import argparse
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

__all__ = ["Difference", "check_pages", "compare_notebooks", "normalise_cell", "main"]

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


def _check_one(nb_path: Path, root: Path, scratch: Path) -> tuple[str, list[Difference], float]:
    import nbformat

    from fedrepro.report.chapters import run_chapter

    rel = str(nb_path.relative_to(root))
    out = scratch / rel
    t0 = time.perf_counter()
    try:
        run_chapter(nb_path, out, profile="paper")
    except Exception as exc:  # noqa: BLE001 - a chapter that cannot render is a difference
        first = str(exc).strip().splitlines()
        return rel, [Difference(rel, -1, f"does not render: {type(exc).__name__}: "
                                         f"{first[-1] if first else ''}"[:500])], time.perf_counter() - t0
    committed = nbformat.read(nb_path, as_version=4)
    rendered = nbformat.read(out, as_version=4)
    return rel, compare_notebooks(committed, rendered, rel), time.perf_counter() - t0


def check_pages(names: Sequence[str] = (), progress: bool = True) -> tuple[list[Difference], dict[str, float]]:
    """Render every chapter (or those whose path contains one of ``names``) from the committed
    store and compare; returns (differences, seconds per chapter). The chapters run one after
    another: papermill runs each kernel in its chapter's folder by changing this process's
    working directory, which threads would race on."""
    from fedrepro.core.cache import results_root
    from fedrepro.report.chapters import book_root, chapters

    root = book_root()
    selected = [nb for nb in chapters(root) if not names or any(n in str(nb.relative_to(root)) for n in names)]
    if not selected:
        raise ValueError(f"no chapter matches {list(names)}")
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
        print(f"{len(diffs)} output(s) differ from what the committed results render: run `make book` "
              "(and commit the chapters) if the results changed on purpose")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
