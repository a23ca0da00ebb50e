"""Chapters: conventions, execution from scratch at the quick profile, strict book build.

(The committed chapters are also re-executed and compared by nbval: `pytest` collects
`book/**/*.ipynb` with `--nbval-lax`.)"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fedrepro.report import chapters

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = chapters.chapters(REPO)
IDS = [str(p.relative_to(REPO)) for p in CHAPTERS]


def test_toc_lists_existing_pages_only():
    import yaml

    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    for name in chapters._toc_files(toc):
        assert any((REPO / f"{name}{ext}").exists() for ext in (".md", ".ipynb")), name
    assert CHAPTERS, "the book has at least one notebook chapter"


#: What a notebook may import: the chapter code and the book helpers, plus plotting and tables.
_NOTEBOOK_IMPORTS = ("fedrepro.chapters", "fedrepro.report", "matplotlib", "pandas")


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chapter_conventions(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "first cell is the H1 title"
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = code[0]
    assert "parameters" in params.metadata.get("tags", []), "first code cell is tagged parameters"
    for node in ast.parse(params.source).body:  # literals only
        assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant), params.source
    for cell in code:
        tree = ast.parse("\n".join(l for l in cell.source.splitlines() if not l.startswith(("%", "!"))))
        for node in ast.walk(tree):  # two hops from a table to its code: chapters -> the algorithm
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.startswith(_NOTEBOOK_IMPORTS), f"a notebook imports {name}"
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda))]
        assert not defs, "notebooks only call the library: no functions or classes in cells"
        assert cell.execution_count is not None, "the committed chapter is executed"
        assert not any(o.get("output_type") == "error" for o in cell.outputs)
        for out in cell.outputs:  # a figure is recorded as an image, not only as its text repr
            data = out.get("data", {})
            if any("<Figure size" in str(v) for v in data.values()):
                assert any(k.endswith("image/png") or k.endswith("image/svg+xml") for k in data), \
                    "a figure output carries no image (build it with pyplot so that its image is recorded)"


@pytest.mark.slow
@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chapter_runs_from_scratch_quick(path, tmp_path, monkeypatch):
    """Execute the chapter with profile="quick" into a temp dir, with an empty results store."""
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(tmp_path / "results"))
    out = chapters.run_chapter(path, tmp_path / path.name, profile="quick", timeout=600)
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "quick" in injected[0].source
    assert all(c.execution_count is not None for c in nb.cells if c.cell_type == "code")


@pytest.mark.book
@pytest.mark.slow
def test_book_builds_strictly(tmp_path):
    """`jupyter-book build -W -n --keep-going`: any warning fails, no network needed."""
    exe = Path(sys.executable).parent / "jupyter-book"
    proc = subprocess.run([str(exe), "build", str(REPO), "-W", "-n", "--keep-going",
                           "--path-output", str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ}, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    html = tmp_path / "_build" / "html"
    assert (html / "index.html").exists()
    assert (html / "book" / "report.html").exists()


@pytest.mark.slow
def test_rerunning_a_chapter_gives_an_identical_file(tmp_path, monkeypatch):
    """Papermill's timestamps and random ids are stripped: a rerun changes no byte."""
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(tmp_path / "results"))
    report = REPO / "book" / "report.ipynb"
    first = chapters.run_chapter(report, tmp_path / "a.ipynb", profile="quick").read_bytes()
    second = chapters.run_chapter(report, tmp_path / "b.ipynb", profile="quick").read_bytes()
    assert first == second


#: Checked cells that print a number below 1e-10 that is not round-off, with the reason.
_SMALL_BUT_EXACT = {
    ("book/fedplt/theory.ipynb", "lemma5"): "Lemma 5's observed/bound ratio, computed in log space",
}


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_checked_outputs_print_no_roundoff_digits(path):
    """Cells that nbval compares never print the digits of a round-off quantity (they differ
    between CPUs and BLAS kernels): residuals print as bounds ('< 1e-10')."""
    import re

    nb = nbformat.read(path, as_version=4)
    rel = str(path.relative_to(REPO))
    for cell in nb.cells:
        if cell.cell_type != "code" or "nbval-check-output" not in cell.metadata.get("tags", []):
            continue
        text = " ".join("".join(o.get("text", "") if o.get("output_type") == "stream"
                                else "".join(o.get("data", {}).get("text/plain", ""))  # tables (show.table)
                                for o in cell.outputs).split())  # undo line wrapping
        tiny = re.findall(r"(?<!< )(?<![<\w.])\d(?:\.\d+)?e-(?:1\d|[2-9]\d|\d{3})\b", text)
        allowed = any(rel == f and key in cell.source for (f, key) in _SMALL_BUT_EXACT)
        assert not tiny or allowed, f"{rel}: cell `{cell.source[:60]}` prints {tiny[:3]}"


#: Text a page shows only when a computation it renders was not found.
_PLACEHOLDERS = ("not available yet",)


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_committed_pages_show_no_placeholder(path):
    """A committed page renders what it is about: no output says that a table or result is
    not available (a renamed module once left three v1 tables of the tuning page as such a note)."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            text = out.get("text", "") + " ".join("".join(v) if isinstance(v, list) else str(v)
                                                   for v in out.get("data", {}).values())
            for p in _PLACEHOLDERS:
                assert p not in text, f"{path.name}: cell `{cell.source[:60]}` shows '{p}'"
