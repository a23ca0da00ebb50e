"""How computed numbers are written into the book's prose (:mod:`fedrepro.report.prose`), and the
check that a page's text cites exactly the names its facts glue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fedrepro.report import prose


def test_number_and_times_words():
    assert [prose.number_word(n) for n in (0, 4, 9, 12, 13, -1)] == ["zero", "four", "nine", "twelve", "13", "-1"]
    assert prose.number_word(5, capital=True) == "Five"
    assert [prose.times_word(n) for n in (1, 2, 3)] == ["once", "twice", "3 times"]


def test_span_collapses_equal_values_and_formats_both_ends():
    assert prose.span(0.8318, 1.1111, ".2f") == "0.83 to 1.11"
    assert prose.span(0.501, 0.504, ".2f") == "0.50"
    assert prose.span(2.56, 3.147, ".2g") == "2.6 to 3.1"
    assert prose.span(0.1334, 0.1778, ".2g", "–") == "0.13–0.18"


def test_power_of_ten_keeps_the_significant_digits_and_carries_a_rounded_mantissa():
    assert prose.power_of_ten(1942.7, 3) == "1.94·10³"
    assert prose.power_of_ten(0.0015839, 2) == "1.6·10⁻³"
    assert prose.power_of_ten(9.996e-5, 3) == "1.00·10⁻⁴"
    assert prose.power_of_ten(3.01e9, 1, "×") == "3×10⁹" and prose.power_of_ten(9.7e10, 1, "×") == "1×10¹¹"
    assert prose.power_of_ten(0.0) == "0"


def test_order_of_magnitude_rounds_the_exponent_and_refuses_non_positive_values():
    assert prose.order_of_magnitude(1000.0) == "10³" and prose.order_of_magnitude(1.33e-6) == "10⁻⁶"
    assert prose.order_of_magnitude(3163.0) == "10⁴" and prose.order_of_magnitude(3162.0) == "10³"
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            prose.order_of_magnitude(bad)


def test_percent_keeps_whole_percent_and_one_digit_below_one_percent():
    assert prose.percent(0.4013) == "40 %" and prose.percent(0.0329) == "3 %"
    assert prose.percent(0.001645) == "0.2 %" and prose.percent(0.0872) == "9 %"


def test_thousands():
    assert prose.thousands(50890) == "50,890" and prose.thousands(785) == "785"


def _page(tmp_path, markdown, code):
    nb = {"cells": [{"cell_type": "markdown", "source": [markdown]}, {"cell_type": "code", "source": [code]}]}
    path = tmp_path / "page.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_glue_coverage_finds_unglued_citations_and_uncited_glues(tmp_path):
    page = _page(tmp_path, "a {glue:text}`x-a` b {glue:text}`x-b:.1f` c {glue}`lit` d {glue:text}`pre-7`",
                 'book.glue("lit", 1)\nfor k, v in d.items():\n    book.glue(f"pre-{k}", v)')
    assert prose.glue_coverage(page, {"x-a", "x-b"}) == (set(), set())
    assert prose.glue_coverage(page, {"x-a"}) == ({"x-b"}, set())
    assert prose.glue_coverage(page, {"x-a", "x-b", "x-c"}) == (set(), {"x-c"})
    no_prefix = _page(tmp_path, "{glue:text}`pre-7`", 'book.glue("lit", 1)')
    assert prose.glue_coverage(no_prefix, set()) == ({"pre-7"}, set())


def test_cross_document_glues_resolve_to_the_cited_notebook(tmp_path):
    (tmp_path / "part").mkdir()
    nb = {"cells": [{"cell_type": "code", "source": [], "outputs": [
        {"output_type": "display_data", "data": {"text/plain": "'177'"},
         "metadata": {"scrapbook": {"name": "rc", "mime_prefix": "application/papermill.record/"}}}]}]}
    (tmp_path / "part" / "chapter.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    page = tmp_path / "part" / "index.md"
    page.write_text("R_c = {glue:text}`chapter.ipynb::rc:s` and {glue:text}`chapter.ipynb::gone`", encoding="utf-8")
    refs = prose.cross_document_glues(page)
    assert [(p.name, n, f) for p, n, f in refs] == [("chapter.ipynb", "rc", ":s"), ("chapter.ipynb", "gone", "")]
    assert prose.stored_glue_names(tmp_path / "part" / "chapter.ipynb") == {"rc"}


BOOK = Path(__file__).resolve().parents[1] / "book"


def test_every_cross_document_glue_of_the_book_resolves():
    """Every ``{glue:text}`doc::name:fmt``` of the book names a notebook that exists, a name its
    stored outputs hold, and a format (MyST-NB needs one to see the ``::``)."""
    pages = sorted(BOOK.rglob("*.md")) + sorted(BOOK.rglob("*.ipynb"))
    pages = [p for p in pages if "_build" not in p.parts]
    problems = []
    for page in pages:
        for notebook, name, fmt in prose.cross_document_glues(page):
            where = f"{page.relative_to(BOOK)} -> {notebook.name}::{name}"
            if not notebook.exists():
                problems.append(f"{where}: no such notebook")
            elif name not in prose.stored_glue_names(notebook):
                problems.append(f"{where}: not glued there")
            if not fmt:
                problems.append(f"{where}: no format (write ::{name}:s)")
    assert not problems, problems


def test_a_name_cited_only_by_another_page_counts_as_cited(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: intro\n", encoding="utf-8")
    (tmp_path / "part").mkdir()
    chapter = _page(tmp_path / "part", "{glue:text}`here`", "")
    assert prose.glue_coverage(chapter, {"here", "there"}) == (set(), {"there"})
    (tmp_path / "part" / "index.md").write_text("{glue:text}`page.ipynb::there:s`", encoding="utf-8")
    assert prose.glue_coverage(chapter, {"here", "there"}) == (set(), set())
