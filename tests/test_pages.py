"""The page check (``fedrepro.report.pages``): the committed chapters show exactly what the
committed results render, any edit of an output is found, and the guards that keep the
store read-only hold however pytest is invoked."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fedrepro.report import pages

REPO = Path(__file__).resolve().parents[1]


def _nb(rel: str) -> dict:
    return nbformat.read(REPO / rel, as_version=4)


def _outputs(nb: dict, mime: str):
    """Outputs holding ``mime``, shown or glued (``application/papermill.record/<mime>``)."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for out in cell.get("outputs", []):
            for key in out.get("data", {}):
                if key == mime or key.endswith("/" + mime):
                    yield out, key


@pytest.mark.notebooks
@pytest.mark.slow
def test_every_page_is_what_the_committed_results_render():
    cwd = os.getcwd()
    diffs, seconds = pages.check_pages(progress=False)
    assert os.getcwd() == cwd  # papermill runs kernels in the chapters' folders: the caller's cwd is kept
    assert len(seconds) >= 13
    assert not diffs, "\n".join(d.line() for d in diffs)


@pytest.mark.parametrize("rel", ["book/alidpfl/experiments.ipynb", "book/report.ipynb"])
def test_a_changed_digit_in_a_table_is_found(rel):
    committed = _nb(rel)
    edited = copy.deepcopy(committed)
    out = next(o for o, _ in _outputs(edited, "text/html")
               if re.search(r"<td[^>]*>\s*\d", "".join(o["data"]["text/html"])))
    html = "".join(out["data"]["text/html"])
    m = re.search(r"(<td[^>]*>\s*)(\d)", html)
    digit = m.group(2)
    out["data"]["text/html"] = html[:m.start(2)] + str((int(digit) + 5) % 10) + html[m.end(2):]
    diffs = pages.compare_notebooks(committed, edited, rel)
    assert len(diffs) == 1 and "text/html differs" in diffs[0].what
    assert pages.compare_notebooks(committed, copy.deepcopy(committed), rel) == []


def test_a_changed_byte_of_a_figure_is_found():
    rel = "book/alidpfl/experiments.ipynb"
    committed = _nb(rel)
    edited = copy.deepcopy(committed)
    out, key = next(_outputs(edited, "image/png"))
    raw = bytearray(base64.b64decode("".join(out["data"][key])))
    raw[len(raw) // 2] ^= 0x01
    out["data"][key] = base64.b64encode(bytes(raw)).decode()
    diffs = pages.compare_notebooks(committed, edited, rel)
    assert len(diffs) == 1 and "image/png differs" in diffs[0].what


def test_a_changed_glued_value_and_printed_text_are_found():
    committed = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {"text/plain": "'67.3'"},
         "metadata": {"scrapbook": {"name": "x", "mime_prefix": ""}}},
        {"output_type": "stream", "name": "stdout", "text": "holds: True\n"}]}]}
    glued = copy.deepcopy(committed)
    glued["cells"][0]["outputs"][0]["data"]["text/plain"] = "'72.3'"
    printed = copy.deepcopy(committed)
    printed["cells"][0]["outputs"][1]["text"] = "holds: False\n"
    assert len(pages.compare_notebooks(committed, glued, "t")) == 1
    assert len(pages.compare_notebooks(committed, printed, "t")) == 1


def test_only_the_documented_normalisation_is_tolerated():
    committed = {"cells": [{"cell_type": "code", "execution_count": 3, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "a b\n"},
        {"output_type": "execute_result", "execution_count": 3, "metadata": {},
         "data": {"text/plain": "<Figure at 0x7f00aa>", "image/png": "iVBORw0KGgo=\n"}}]}]}
    rerun = {"cells": [{"cell_type": "code", "execution_count": 9, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "a "},
        {"output_type": "stream", "name": "stderr", "text": "progress 50%\n"},
        {"output_type": "stream", "name": "stdout", "text": "b\n"},
        {"output_type": "execute_result", "execution_count": 9, "metadata": {},
         "data": {"text/plain": "<Figure at 0x55bb01>", "image/png": "iVBORw0K\nGgo="}}]}]}
    assert pages.compare_notebooks(committed, rerun, "t") == []
    rerun["cells"][0]["outputs"].append({"output_type": "stream", "name": "stdout", "text": "extra\n"})
    assert len(pages.compare_notebooks(committed, rerun, "t")) == 1


def test_a_chapter_tested_alone_runs_under_the_read_only_guards(tmp_path):
    """``pytest book/<chapter>.ipynb`` loads the root conftest: the store is read-only and no
    paper-profile result may be computed (the chapter's kernels inherit the environment)."""
    probe = tmp_path / "guards.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEDREPRO_READ_ONLY")
           and k != "FEDREPRO_NO_PAPER_COMPUTE"}
    env["FEDREPRO_GUARD_PROBE_OUT"] = str(probe)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "tests._guard_probe",
                           "book/privacy-accounting.ipynb"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(probe.read_text())
    assert Path(seen["FEDREPRO_READ_ONLY_STORE"]).resolve() == (REPO / "data" / "results").resolve()
    assert seen["FEDREPRO_NO_PAPER_COMPUTE"] == "1"


# ------------------------------------------------------------------ every display shows something
def _code(source: str, outputs: list | None = None) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs or []}


_SHOWN = [{"output_type": "display_data", "data": {"text/plain": "shown"}, "metadata": {}}]
_IMPORTS = _code("from fedrepro.report import book, show\nfrom fedrepro.report.show import table as tab\n"
                 "import fedrepro.report.show as s")


def test_every_helper_of_show_is_classified():
    """A helper added to ``fedrepro.report.show`` must be declared a display helper or a
    formatter, so that the rule below covers it."""
    from fedrepro.report import show

    helpers = set(show.__all__) - {"DISPLAY_HELPERS", "FORMATTERS", "SHOWN_BY_VALUE"}
    assert set(show.DISPLAY_HELPERS) | set(show.FORMATTERS) == helpers
    assert not set(show.DISPLAY_HELPERS) & set(show.FORMATTERS)
    assert set(show.SHOWN_BY_VALUE) < set(show.DISPLAY_HELPERS)


def test_no_cell_of_the_book_that_displays_is_empty():
    """The committed book: every code cell that calls a display helper has an output, and no
    cell drops the value of ``show.table`` or ``show.dropdown`` (read only, nothing runs)."""
    diffs = pages.check_displays()
    assert not diffs, "\n".join(d.line() for d in diffs)


@pytest.mark.parametrize("call", ["show.table(frame, 'T')", "show.dropdown('t', 'x')", "show.glue('k', 1)",
                                  "book.glue('k', 1)", "display(view)", "tab(frame, 'T')", "s.table(frame, 'T')",
                                  "show.Table(frame, 'T', True)"])
def test_a_display_cell_without_output_is_found(call):
    """A cell that calls a display helper inside a branch that did not run at the committed
    profile (or that drops the value) and has no output: the difference names the notebook,
    the cell (numbered as the page check numbers code cells) and quotes its first line."""
    empty = _code(f"if result is not None:\n    {call}")
    nb = {"cells": [_IMPORTS, {"cell_type": "markdown", "source": "text", "metadata": {}}, empty]}
    diffs = pages.display_problems(nb, "book/part/page.ipynb")
    lines = [d.line() for d in diffs if "no output" in d.what]
    assert len(lines) == 1, [d.line() for d in diffs]
    assert lines[0].startswith("book/part/page.ipynb: code cell 1: calls ")
    assert "'if result is not None:'" in lines[0]
    empty["outputs"] = _SHOWN
    assert not [d for d in pages.display_problems(nb, "p") if "no output" in d.what]


def test_a_cell_with_no_display_call_may_be_empty():
    nb = {"cells": [_IMPORTS, _code("x = show.compact(1.0)\ny = book.sig3(2.0)\n%matplotlib inline"),
                    _code("cfg = config.displayed\nresult = display_name(1)")]}
    assert pages.display_problems(nb, "p") == []


def test_a_dropped_table_is_found_even_where_the_cell_shows_something_else():
    """The bug the T2 page had: ``show.table(...)`` inside an ``if`` shows nothing; here the
    cell also glues a value, so it has outputs and only the dropped value gives it away."""
    cell = _code("if ok:\n    show.table(frame, 'T')\nshow.glue('k', 1)", _SHOWN)
    diffs = pages.display_problems({"cells": [_IMPORTS, cell]}, "book/p.ipynb")
    assert len(diffs) == 1 and diffs[0].line().startswith("book/p.ipynb: code cell 1: drops the value of show.table(")
    assert "line 2" in diffs[0].what and "display(" in diffs[0].what
    for fine in ("if ok:\n    display(show.table(frame, 'T'))", "show.glue('k', 1)\nshow.table(frame, 'T')",
                 "t = show.table(frame, 'T')\ndisplay(t)"):
        assert pages.display_problems({"cells": [_IMPORTS, _code(fine, _SHOWN)]}, "p") == [], fine


def test_the_t2_page_as_it_was_fails_the_rule():
    """The committed T2 page with the side-by-side table's cell as it was before the fix (its
    show.table inside an ``if``, no output) is refused."""
    rel = "book/head-to-head/t2.ipynb"
    nb = copy.deepcopy(_nb(rel))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and "task_ranks_frame" in c["source"])
    cell["source"] = cell["source"].split("else:")[0].replace("display(show.table(", "show.table(")[:-2]
    cell["outputs"] = []
    lines = [d.line() for d in pages.display_problems(nb, rel)]
    assert len(lines) == 2 and all(line.startswith(f"{rel}: code cell 7: ") for line in lines), lines


def test_the_page_check_applies_the_rule(tmp_path, monkeypatch):
    """:func:`pages.check_pages` reports an empty display cell even where the rendered page
    equals the committed one."""
    from fedrepro.report import chapters

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from fedrepro.report import show"),
                nbformat.v4.new_code_cell("if False:\n    display(show.table({'a': 1}, 'T'))")]
    path = tmp_path / "book" / "page.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    monkeypatch.setattr(chapters, "run_chapter", lambda src, out, profile: (out.parent.mkdir(parents=True),
                                                                           out.write_bytes(src.read_bytes())))
    rel, diffs, _ = pages._check_one(path, tmp_path, tmp_path / "scratch")
    assert rel == "book/page.ipynb"
    assert len(diffs) == 1 and diffs[0].line().startswith("book/page.ipynb: code cell 1: calls display(...)")
