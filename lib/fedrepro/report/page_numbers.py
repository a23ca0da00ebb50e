"""Numbers a page shows, read for digits that no one should print: a float with more than
:data:`MAX_SIGNIFICANT` significant digits (the last ones are noise of the run or of the CPU, see
:func:`fedrepro.report.book.sig3`) or an e-notation value below
:data:`fedrepro.report.book.ROUNDOFF_FLOOR` (round-off, which :func:`fedrepro.report.book.roundoff`
prints as ``"< 1e-10"``).

:func:`page_numbers` scans a committed notebook: the markdown of its cells and every output of
its code cells (printed text, HTML and plain-text tables, markdown, glued values), never figure
data (images, JavaScript, widget state). :func:`flagged` gives the offending numbers with the page
and the cell. What counts as a number is :data:`NUMBER`: a decimal with a point or an e-notation
value standing on its own; integers (years, counts, seeds), identifiers (``eps-1p55``, arXiv
numbers such as ``arXiv 2102.07053``), version strings (``1.0.4``), hexadecimal digests and
hashes, paths and addresses (``10.1109/…``) are not read. A value after ``<`` or ``≤`` is a
stated bound (``< 1e-12``: the form :func:`~fedrepro.report.book.roundoff` prints round-off
in), and an exact power of ten (``to 1e-12 relative``) a stated tolerance, never round-off itself. A glued value is read as the pages show it: through the format its
citations give (``{glue:text}`name:.1f```), or as its text where a page cites it bare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedrepro.report.book import ROUNDOFF_FLOOR

__all__ = ["MAX_SIGNIFICANT", "NUMBER", "Flag", "significant_digits", "numbers_in", "glue_formats", "shown_glue",
           "page_texts", "flagged", "page_numbers"]

#: The most significant digits a printed float may carry (the house's 3, and 4 for values such
#: as ε = 1.0986 or an accuracy of 58.38 % that the pages print to two decimals).
MAX_SIGNIFICANT = 4

#: A float standing on its own: optional sign, digits (thousands commas allowed) with a decimal
#: point and/or an exponent; not inside a word, an identifier, a version string, a path or a hash.
NUMBER = re.compile(
    r"(?<![\w.,/:#-])(?P<sign>[-−+]?)"
    r"(?<![\w.,/:#])"
    r"(?P<mantissa>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+)"
    r"(?P<exponent>[eE][-−+]?\d+)?"
    r"(?![\w/#]|\.\d|,\d{3}|\.[A-Za-z_])")

#: Mime types never read: figure data and code, not numbers a reader reads.
_SKIPPED = ("image/", "application/javascript", "application/vnd.jupyter.widget", "text/latex")
_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class Flag:
    """One number a page should not show: where it is and why."""

    page: str
    cell: int
    where: str
    text: str
    why: str

    def line(self) -> str:
        return f"{self.page}, cell {self.cell} ({self.where}): {self.text!r}: {self.why}"


def significant_digits(mantissa: str) -> int:
    """Significant digits of a decimal written without exponent (``"0.000717"`` → 3,
    ``"58.380"`` → 5: trailing zeros after the point count, they are printed digits)."""
    digits = mantissa.replace(",", "").replace("-", "").replace("+", "")
    if "." in digits:
        return len(digits.replace(".", "").lstrip("0")) or 1
    return len(digits.strip("0")) or 1


def numbers_in(text: str) -> Iterator[tuple[str, str]]:
    """(the number as written, why it is flagged) for every offending number of ``text``."""
    for m in NUMBER.finditer(text):
        mantissa, exponent = m["mantissa"], m["exponent"]
        if "." not in mantissa and not exponent:
            continue  # an integer: a count, a year, a seed
        written = m.group(0)
        before = text[max(0, m.start() - 8):m.start()]
        if re.search(r"arXiv[: ]?$", before) and re.fullmatch(r"\d{4}\.\d{4,5}", mantissa):
            continue  # an arXiv identifier, not a measured number
        bound = re.search(r"(<|&lt;|≤|&le;)\s*$", text[max(0, m.start() - 16):m.start()]) is not None
        threshold = mantissa in ("1", "1.0")  # 1e-12: a stated tolerance; round-off never lands on a power of ten
        if exponent and not (bound or threshold):
            value = float(mantissa.replace(",", "") + exponent.replace("−", "-"))
            if value != 0 and abs(value) < ROUNDOFF_FLOOR:
                yield written, f"round-off: below {ROUNDOFF_FLOOR:g} (print it with book.roundoff)"
                continue
        n = significant_digits(mantissa)
        if n > MAX_SIGNIFICANT:
            yield written, f"{n} significant digits (at most {MAX_SIGNIFICANT})"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


#: ``{glue:text}`name:fmt``` and ``{glue:text}`doc::name:fmt``` (and ``{glue}`name```).
_CITATION = re.compile(r"\{glue(?::text)?\}`(?:[^`]*?::)?(?P<name>[A-Za-z0-9_.-]+?)(?::(?P<fmt>[^`:]*))?`")


def glue_formats(root: str | Path) -> dict[str, set[str]]:
    """For every glue name that a page under ``root`` (``.md`` pages and the markdown of
    notebooks) cites: the formats it is cited with (``""`` for none)."""
    out: dict[str, set[str]] = {}
    root = Path(root)
    for page in sorted((*root.rglob("*.md"), *root.rglob("*.ipynb"))):
        if any(part.startswith(("_build", ".")) for part in page.relative_to(root).parts):
            continue
        if page.suffix == ".ipynb":
            cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
            text = "".join(_text(c["source"]) for c in cells if c["cell_type"] == "markdown")
        else:
            text = page.read_text(encoding="utf-8")
        for m in _CITATION.finditer(text):
            out.setdefault(m["name"], set()).add(m["fmt"] or "")
    return out


def shown_glue(plain: str, formats: set[str] | None) -> list[str]:
    """What the pages show of a glued value whose plain text (its ``repr``) is ``plain``: the
    value formatted with each format a page cites it with, when every citation formats a number
    (``.1f``, ``.0%``, ``d``: the digits of the repr never reach the page); nothing when no page
    cites it (a glue is recorded hidden: only a citation shows it); else the plain text itself (a
    string's quotes removed), which a bare citation shows."""
    if not formats:
        return []
    text = plain.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return [text[1:-1]]
    numeric = [f for f in (formats or set()) if f and f[-1] in "eEfFgGd%n"]
    if formats and len(numeric) == len(formats):
        try:
            value = float(text)
        except ValueError:
            return [text]
        shown = []
        for fmt in sorted(numeric):
            try:
                shown.append(format(int(value) if fmt.endswith("d") and value.is_integer() else value, fmt))
            except (ValueError, TypeError):
                shown.append(text)
        return shown
    return [text]


def page_texts(notebook: str | Path, formats: dict[str, set[str]] | None = None) -> Iterator[tuple[int, str, str]]:
    """(cell index, what, text) for the markdown of every cell and every textual output of a
    notebook (``what``: ``"markdown"``, ``"stream"``, ``"error"``, a mime type, or
    ``"glue <name> (<mime>)"`` for a glued value, read as the pages show it: :func:`shown_glue`
    with ``formats``, the citations of :func:`glue_formats`)."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown":
            yield i, "markdown", _text(cell["source"])
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                yield i, "stream", _text(out.get("text", ""))
            elif out.get("output_type") == "error":
                yield i, "error", _text(out.get("evalue", ""))
            meta = out.get("metadata")
            name = meta.get("scrapbook", {}).get("name") if isinstance(meta, dict) else None
            for mime, value in out.get("data", {}).items():
                if any(s in mime for s in _SKIPPED):
                    continue
                text = _text(value) if isinstance(value, (str, list)) else json.dumps(value)
                if "html" in mime:
                    text = _TAG.sub(" ", text)
                if name and mime.endswith("text/plain"):
                    for shown in shown_glue(text, (formats or {}).get(name)):
                        yield i, f"glue {name} ({mime})", shown
                else:
                    yield i, f"glue {name} ({mime})" if name else mime, text


def _book_root(path: Path) -> Path | None:
    return next((d for d in path.resolve().parents if (d / "_toc.yml").exists()), None)


def flagged(notebook: str | Path, page: str | None = None,
            formats: dict[str, set[str]] | None = None) -> list[Flag]:
    """Every number of ``notebook``'s markdown and outputs that shows noise digits or round-off
    (glued values as the pages cite them: ``formats``, by default the citations of the book that
    holds the notebook)."""
    page = page or str(notebook)
    if formats is None:
        root = _book_root(Path(notebook))
        formats = glue_formats(root) if root is not None else {}
    return [Flag(page, i, where, text, why)
            for i, where, body in page_texts(notebook, formats) for text, why in numbers_in(body)]


def page_numbers(root: str | Path) -> dict[str, list[Flag]]:
    """:func:`flagged` for every committed notebook under ``root`` (``_build`` and hidden folders
    left out), by path relative to ``root``."""
    root = Path(root)
    book = _book_root(root / "_") or root
    formats = glue_formats(book)
    out = {}
    for nb in sorted(root.rglob("*.ipynb")):
        rel = nb.relative_to(root)
        if any(part.startswith(("_build", ".")) for part in rel.parts):
            continue
        out[rel.as_posix()] = flagged(nb, rel.as_posix(), formats)
    return out
