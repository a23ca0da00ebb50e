"""The chapter runner's post-processing of executed notebooks (``fedrepro.report.chapters``)."""

from __future__ import annotations

import nbformat

from fedrepro.report.chapters import merge_streams, strip_run_metadata


def _notebook_with_split_stdout() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print('a'); print('b')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="progress\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="b\n")]
    nb.cells = [cell]
    return nb


def test_joined_stdout_chunks_stay_notebook_nodes_and_the_notebook_writes(tmp_path):
    # Regression: a joined chunk was a plain dict, and nbformat.write then failed with
    # "'dict' object has no attribute 'output_type'" whenever the kernel split a cell's printed
    # text in two (timing-dependent: it broke `make book` on a fresh clone).
    path = tmp_path / "nb.ipynb"
    nbformat.write(_notebook_with_split_stdout(), path)
    strip_run_metadata(path)
    out = nbformat.read(path, as_version=4).cells[0].outputs
    assert len(out) == 1 and out[0].output_type == "stream" and out[0].text == "a\nb\n"


def test_merge_streams_does_not_change_its_input():
    outputs = _notebook_with_split_stdout().cells[0].outputs
    before = [dict(o) for o in outputs]
    merged = merge_streams(outputs)
    assert [dict(o) for o in outputs] == before
    assert isinstance(merged[0], nbformat.NotebookNode) and merged[0].text == "a\nb\n"
