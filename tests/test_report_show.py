"""How the book shows results (fedrepro.report.show), the site extension's rewrites
(fedrepro.report.sphinx_site) and the site folder check (fedrepro.report.publish)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fedrepro.report import publish, show, sphinx_site


def test_compact_numbers():
    assert show.compact(0.000123456) == "0.000123"
    assert show.compact(123456.7) == "1.23e+05"
    assert show.compact(np.float64(2.0 / 3.0)) == "0.667"
    assert show.compact(np.int64(1585)) == "1585" and show.compact(31_900) == "31900"
    assert show.compact(True) == "✓" and show.compact(np.bool_(False)) == "✗"
    assert show.compact(math.nan) == "" and show.compact(None) == ""
    assert show.compact("< 1e-10") == "< 1e-10"


def test_table_has_caption_compact_cells_and_a_stable_html():
    frame = pd.DataFrame({"rate": [0.123456, 0.5], "ok": [True, False]}, index=["FedPD", "Fed-PLT"])
    table = show.table(frame, "Table II: rates <ours>")
    html = table._repr_html_()
    assert "<caption>Table II: rates &lt;ours&gt;</caption>" in html  # escaped
    assert "<td>0.123</td>" in html and "<td>✓</td>" in html and "<th>FedPD</th>" in html
    assert 'class="fedrepro-table-wrapper mathjax_process"' in html and "overflow-x:auto" in html
    assert html == show.table(frame, "Table II: rates <ours>")._repr_html_()  # no random ids
    text = repr(table)
    assert text.splitlines()[0] == "Table II: rates <ours>" and "0.123" in text and "0.123456" not in text


def test_table_from_a_mapping_and_bad_input():
    table = show.table({"paper_sigma": 0.0392, "points": 25}, "fit")
    assert list(table.frame.index) == ["paper_sigma", "points"]
    assert list(table.frame["value"]) == ["0.0392", "25"]
    range_index = show.table(pd.DataFrame({"a": [1.0]}), "no index")
    assert range_index.index is False and "<th>0</th>" not in range_index._repr_html_()
    with pytest.raises(ValueError, match="caption"):
        show.table({"a": 1}, " ")
    with pytest.raises(ValueError, match="data"):
        show.table([1, 2], "a list")


def test_dropdown_keeps_paragraphs_and_escapes():
    html = show.dropdown("Sources", "== FedPD ==\nline <1>\n\nsecond").__repr__()
    assert html.startswith("Sources")
    body = show.dropdown("Sources", "== FedPD ==\nline <1>\n\nsecond")._repr_html_()
    assert body.startswith('<details class="fedrepro-dropdown mathjax_process"><summary>Sources</summary>')
    assert "<p>== FedPD ==<br/>line &lt;1&gt;</p><p>second</p>" in body
    assert " open>" in show.dropdown("t", "x", open=True)._repr_html_()
    with pytest.raises(ValueError, match="title"):
        show.dropdown("", "x")


def test_glue_closes_a_figure(monkeypatch):
    import matplotlib.pyplot as plt

    stored = {}
    monkeypatch.setattr(show, "_book_glue", lambda name, value, display=False: stored.update({name: value}))
    fig = plt.figure()
    show.glue("fig-x", fig)
    assert stored["fig-x"] is fig and not plt.fignum_exists(fig.number)


def test_proof_titles_that_name_the_statement_lose_the_book_counter():
    lemma = ('<p class="admonition-title" id="x"><span class="caption-number">Lemma </span> '
             '(Lemma 2 (gradient descent))</p>')
    assert sphinx_site.plain_proof_titles(lemma) == '<p class="admonition-title" id="x">Lemma 2 (gradient descent)</p>'
    prop = ('<p class="admonition-title"><span class="caption-number">Proposition 1 </span> '
            '(Fed-PLT, Proposition 4)</p>')
    assert sphinx_site.plain_proof_titles(prop) == '<p class="admonition-title">Fed-PLT, Proposition 4</p>'
    own = '<p class="admonition-title"><span class="caption-number">Lemma 3 </span> (a bound)</p>'
    assert sphinx_site.plain_proof_titles(own) == own


def _site(tmp_path, body):
    (tmp_path / "index.html").write_text(f"<html><body>{body}</body></html>")
    (tmp_path / ".nojekyll").write_text("")
    return tmp_path


def test_check_site_finds_what_breaks_a_sub_path_or_file_url(tmp_path):
    ok = _site(tmp_path / "a", "") if (tmp_path / "a").mkdir() is None else None
    assert publish.check_site(ok) == []
    (tmp_path / "b").mkdir()
    bad = _site(tmp_path / "b", '<a href="/book/x.html">x</a><script src="https://cdn.example/m.js"></script>'
                                '<a href="https://arxiv.org/abs/1">paper</a>')
    problems = publish.check_site(bad)
    assert any("root-absolute" in p for p in problems)
    assert any("another host" in p and "cdn.example" in p for p in problems)
    assert not any("arxiv" in p for p in problems)  # a plain link to another site is fine
    (bad / ".nojekyll").unlink()
    assert any(".nojekyll" in p for p in publish.check_site(bad))


def test_prune_output_removes_maps_and_their_comments(tmp_path):
    static = tmp_path / "_static" / "scripts"
    static.mkdir(parents=True)
    (static / "a.js").write_text("var a = 1;\n//# sourceMappingURL=a.js.map\n")
    (static / "a.js.map").write_text("{}")
    (static / "fontawesome.js").write_text("icons")
    (tmp_path / "p.html").write_text('<head>\n  <script defer src="_static/scripts/fontawesome.js?digest=1"></script>\n'
                                     "</head>")
    removed = sphinx_site.prune_output(tmp_path)
    assert {p.name for p in removed} == {"a.js.map", "fontawesome.js"}
    assert (static / "a.js").read_text() == "var a = 1;\n"
    assert "fontawesome" not in (tmp_path / "p.html").read_text()


def test_quoted_tex_gets_mathjax_delimiters_in_tables_and_dropdowns():
    assert show.tex_to_mathjax(r"optimized for $\rho \approx 0.3$, costs $$x$$") == \
        r"optimized for \(\rho \approx 0.3\), costs $$x$$"
    html = show.table({"claim": r"minimum for $N_{\rm e} \approx 10$"}, "claims")._repr_html_()
    assert r"\(N_{\rm e} \approx 10\)" in html and "mathjax_process" in html
    assert repr(show.table({"claim": r"$x$"}, "claims")).endswith("$x$")  # the text form keeps the quote
    assert r"\(\tau\)" in show.dropdown("t", r"noise $\tau$")._repr_html_()
