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
