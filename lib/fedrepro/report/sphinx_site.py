"""Sphinx extension for the book as a web site (listed in ``_config.yml``).

Jupyter Book 1 with the book theme ships more than the pages use and a few defects; this
extension fixes them at build time, without patching the installed packages:

* **No Thebe.** The book has no launch buttons, yet ``sphinx_thebe`` adds its configuration
  script twice to every page (``SyntaxError: Identifier 'THEBE_JS_URL' has already been
  declared`` in the console) plus its own script and stylesheet. All three are dropped.
* **Icons from the theme's stylesheet.** The theme's stylesheet already carries Font Awesome
  as a web font (``@font-face``), so the 1.5 MB SVG-and-JavaScript copy
  (``scripts/fontawesome.js``) is not loaded.
* **Nothing the browser never asks for.** Source maps (``*.map``, 3.4 MB) and the TrueType
  fallbacks of the icon fonts (every browser that runs the theme reads WOFF2) are removed
  from the output, and the ``sourceMappingURL`` comments that point at the maps go too.
* **Statement titles that name the paper's number.** A ``{prf:lemma}`` whose title already
  names the statement (``Lemma 2 (gradient descent)``, ``Fed-PLT, Proposition 4``) is shown
  with that title alone, instead of the book's own counter around it
  (``Lemma (Lemma 2 (gradient descent))``, ``Proposition 1 (Fed-PLT, Proposition 4)``).
* **The book's stylesheet** (``static/fedrepro.css``): captioned tables from
  :func:`fedrepro.report.book.table` scroll inside their box, printed output wraps inside the
  text column, collapsible prose from :func:`fedrepro.report.book.dropdown`.
* **MathJax where outputs quote TeX**: a page whose formulas are only in tables or dropdowns
  of cell outputs (``mathjax_process``) loads MathJax too.
* **Search snippets from the article** (``static/fedrepro-search.js``): Sphinx 7.4 cuts a
  result's snippet from the whole main element, whose text begins with the header buttons, so
  results read ``....md``; the snippet now comes from the article, around the query's word.
* **Author-year bibliography.** Pybtex style ``author_year`` (``bibtex_default_style``):
  the list is labelled ``Surname et al., 2024`` like the citations in the text, and sorted
  by author and year.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["PROOF_KINDS", "plain_proof_titles", "prune_output", "setup"]

#: Statement kinds of ``sphinx_proof`` whose titles may carry the paper's own number.
PROOF_KINDS: tuple[str, ...] = ("Lemma", "Proposition", "Theorem", "Corollary", "Assumption",
                                "Definition", "Remark", "Conjecture", "Example", "Property")

_PROOF_TITLE = re.compile(
    r'(<p class="admonition-title"[^>]*>)<span class="caption-number">[^<]*</span>\s*\((.*)\)</p>')
_NAMES_A_STATEMENT = re.compile(r"\b(?:%s)s?\s+\d" % "|".join(PROOF_KINDS))

#: Scripts and stylesheets that no page of the book needs.
_DROPPED_SCRIPTS = ("sphinx-thebe.js", "scripts/fontawesome.js")
_DROPPED_CSS = ("sphinx-thebe.css",)


def plain_proof_titles(body: str) -> str:
    """Rewrite proof-box titles that already name the paper's statement.

    ``<span class="caption-number">Lemma </span> (Lemma 2 (gradient descent))`` becomes
    ``Lemma 2 (gradient descent)``; titles that do not name a numbered statement keep the
    book's form (``Lemma 3 (a bound)``)."""

    def fix(match: re.Match[str]) -> str:
        title = match.group(2)
        if not _NAMES_A_STATEMENT.search(re.sub(r"<[^>]+>", "", title)):
            return match.group(0)
        return f"{match.group(1)}{title}</p>"

    return _PROOF_TITLE.sub(fix, body)


def _asset_name(asset: Any) -> str:
    name = getattr(asset, "filename", asset)
    return str(name or "").split("?", 1)[0]


def _page_context(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if scripts is not None:
        kept = []
        for script in scripts:
            name = _asset_name(script)
            body = getattr(script, "attributes", {}).get("body", "")
            if name.endswith(_DROPPED_SCRIPTS) or "THEBE_JS_URL" in body:
                continue
            kept.append(script)
        scripts[:] = kept
    css = context.get("css_files")
    if css is not None:
        css[:] = [c for c in css if not _asset_name(c).endswith(_DROPPED_CSS)]
    if "body" in context:
        context["body"] = plain_proof_titles(context["body"])
    # the theme adds its icon script through its own template variable
    for key in ("theme_scripts", "pst_script_files"):
        if isinstance(context.get(key), list):
            context[key] = [s for s in context[key] if not _asset_name(s).endswith(_DROPPED_SCRIPTS)]


def _math_in_outputs(app, pagename, templatename, context, doctree) -> None:
    """A page whose only formulas are in cell outputs (tables quoting the papers' TeX, marked
    ``mathjax_process`` by :mod:`fedrepro.report.show`) has no math node, so Sphinx would not
    load MathJax there: count it as a page with equations (runs before Sphinx's own hook)."""
    body = context.get("body", "")
    if "mathjax_process" in body and "\\(" in body:
        app.env.get_domain("math").data.setdefault("has_equations", {})[pagename] = True


_ICON_SCRIPT = re.compile(r'[ \t]*<script[^>]*src="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*></script>\n?')
_SOURCE_MAP_COMMENT = re.compile(rb"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^*]*\*/)\s*$")


def prune_output(outdir: Path) -> list[Path]:
    """Remove from a built site what no browser requests: source maps, TrueType fallbacks of
    the WOFF2 icon fonts, and the ``sourceMappingURL`` comments. Returns the removed files."""
    static = Path(outdir) / "_static"
    removed = []
    for path in sorted(static.rglob("*.map")) + sorted(static.glob("vendor/fontawesome/webfonts/*.ttf")):
        path.unlink()
        removed.append(path)
    for path in list(static.rglob("*.js")) + list(static.rglob("*.css")):
        if "mathjax" in path.parts:
            continue
        data = path.read_bytes()
        new = _SOURCE_MAP_COMMENT.sub(b"\n", data)
        if new != data:
            path.write_bytes(new)
    # the theme writes the icon script into its page template, not into ``script_files``
    for page in Path(outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new_text = _ICON_SCRIPT.sub("", text)
        if new_text != text:
            page.write_text(new_text, encoding="utf-8")
    # the redirect page at the root (written by sphinx-external-toc) names no icon, so a
    # browser asks for /favicon.ico, outside a site served from a sub-path
    index, icon = Path(outdir) / "index.html", static / "favicon.svg"
    if index.exists() and icon.exists():
        text = index.read_text(encoding="utf-8")
        if 'http-equiv="Refresh"' in text and 'rel="icon"' not in text:
            index.write_text('<link rel="icon" href="_static/favicon.svg" type="image/svg+xml" />\n' + text,
                             encoding="utf-8")
    icons = static / "scripts" / "fontawesome.js"
    if icons.exists():
        icons.unlink()
        removed.append(icons)
    return removed


def _build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        prune_output(Path(app.outdir))


def _register_bibliography_style() -> None:
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        """``Surname, 2021``, ``Surname and Other, 2021``, ``Surname et al., 2021``."""

        def format_labels(self, sorted_entries):
            for entry in sorted_entries:
                people = entry.persons.get("author") or entry.persons.get("editor") or []
                names = [" ".join(p.last_names) for p in people]
                who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2
                       else f"{names[0]} et al." if names else entry.key)
                year = entry.fields.get("year")
                yield f"{who}, {year}" if year else who

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = "author_year_labels"
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.labels", "author_year_labels", AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", "author_year", AuthorYearStyle, force=True)


def _add_static(app) -> None:
    app.config.html_static_path.append(str(STATIC))


#: The book's own stylesheet (tables, dropdowns, wrapped output).
STATIC = Path(__file__).parent / "static"


def setup(app) -> dict[str, Any]:
    _register_bibliography_style()
    app.connect("builder-inited", _add_static)
    app.add_css_file("fedrepro.css")
    app.add_js_file("fedrepro-search.js", priority=900)
    app.connect("html-page-context", _math_in_outputs, priority=400)
    app.connect("html-page-context", _page_context, priority=900)
    app.connect("build-finished", _build_finished, priority=900)  # after the root redirect is written
    return {"parallel_read_safe": True, "parallel_write_safe": True}
