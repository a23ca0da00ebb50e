"""Numbers in the book's prose: how a computed value is written into a sentence, and which glued
names a page's text cites.

The chapters' ``facts`` modules (one per page or part, e.g.
:mod:`fedrepro.chapters.fedplt.participation_privacy.facts`) compute every number a page's prose
quotes and format it with these helpers; the page glues the texts
(``for name, text in facts.glued(profile).items(): book.glue(name, text)``) and cites them with
``{glue:text}`` roles. :func:`glue_coverage` tells a test which cited names nothing glues and
which glued names the text never cites. The formats keep round-off digits out of the text.

A page without code (an ``.md`` page: a part's index, the errata) cites a number glued by a
notebook of the book as ``{glue:text}`experiments.ipynb::name:s``` (path relative to the page;
the trailing format is required: MyST-NB splits the last ``:`` off as the format before it looks
for ``::``). :func:`cross_document_glues` lists such citations and :func:`stored_glue_names` the
names a notebook's stored outputs hold, so that a test can check that every citation resolves.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["number_word", "times_word", "span", "power_of_ten", "order_of_magnitude", "percent", "thousands",
           "compare_over_seeds", "compare_summaries", "ranking", "level_group", "glue_coverage", "cross_document_glues", "stored_glues", "stored_glue_names"]

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_CITED = re.compile(r"\{glue(?::text)?\}`([A-Za-z0-9_.-]+?)(?::[^`]*)?`")
_GLUED = re.compile(r"""\bglue\(\s*["']([A-Za-z0-9_.-]+)["']""")
_CROSS = re.compile(r"\{glue(?::text)?\}`([^`]+?)::([A-Za-z0-9_.-]+)(:[^`:]*)?`")
_GLUED_PREFIX = re.compile(r"""\bglue\(\s*f["']([A-Za-z0-9_.-]*)\{""")


def number_word(n: int, capital: bool = False) -> str:
    """``n`` in words up to twelve, in digits above (and below zero); capitalised on request."""
    n = int(n)
    word = _WORDS[n] if 0 <= n < len(_WORDS) else str(n)
    return word.capitalize() if capital else word


def times_word(n: int) -> str:
    """'once', 'twice', 'n times'."""
    n = int(n)
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def span(lo: float, hi: float, fmt: str, sep: str = " to ") -> str:
    """``lo`` and ``hi`` formatted with ``fmt`` and joined by ``sep`` (one value when both
    format alike): ``span(0.8318, 1.1111, ".2f") == "0.83 to 1.11"``."""
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a}{sep}{b}"


def power_of_ten(x: float, digits: int = 3, times: str = "·") -> str:
    """``x`` as ``m·10^e`` with ``digits`` significant digits (Unicode superscript exponent;
    ``times`` joins mantissa and power): ``power_of_ten(1942.7) == "1.94·10³"``,
    ``power_of_ten(3.01e9, 1, "×") == "3×10⁹"``."""
    if not math.isfinite(x) or x == 0:
        return format(x, "g")
    e = int(math.floor(math.log10(abs(x))))
    m = x / 10 ** e
    if abs(round(m, digits - 1)) >= 10:
        m, e = m / 10, e + 1
    return f"{m:.{digits - 1}f}{times}10" + str(e).translate(_SUPERSCRIPT)


def order_of_magnitude(x: float) -> str:
    """``10^e`` with ``e = round(log10 x)`` for a positive ``x`` (``1000.0`` → ``"10³"``)."""
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"x must be finite and positive, got {x!r}")
    return "10" + str(round(math.log10(x))).translate(_SUPERSCRIPT)


def percent(x: float) -> str:
    """A fraction ``x`` as a percentage: whole percent from 1 % up, one significant digit below
    (``0.0016`` → ``"0.2 %"``)."""
    p = 100 * float(x)
    return f"{p:.0f} %" if abs(p) >= 0.995 else f"{p:.1g} %"


def thousands(n: int) -> str:
    """An integer with a comma between thousands (``50890`` → ``"50,890"``)."""
    return f"{int(n):,}"


def _mean_sd(values: Iterable[float], name: str) -> tuple[float, float]:
    v = [float(x) for x in values]
    if len(v) < 2 or not all(math.isfinite(x) for x in v):
        raise ValueError(f"{name} must hold at least two finite per-seed values, got {v!r}")
    mean = sum(v) / len(v)
    return mean, math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1))


def compare_over_seeds(a: Iterable[float], b: Iterable[float]) -> str:
    """``"higher"``, ``"lower"`` or ``"level"``: entry ``a`` against entry ``b`` from their
    per-seed values (at least two each).

    The rule: ``a`` is higher (lower) than ``b`` only when its mean over the seeds exceeds
    (falls short of) ``b``'s by more than the larger of the two entries' standard deviations
    over the seeds (sample standard deviation, n − 1); otherwise the two are level. Why this
    rule: the seeds' standard deviation is the scale on which the book tells its reader to read
    a difference (how far one more run with another seed moves an entry); a difference smaller
    than the scatter of either entry can be reversed by the next seed. With the three seeds the
    pages have, twice the standard error of a mean (2·sd/√3 ≈ 1.15·sd) would be almost the same
    threshold, but rests on a normal approximation that three values cannot support; the larger
    sd is the plainer statement and does not shrink as seeds are added, since the question is
    whether the entries differ by more than a run's scatter, not whether their means are
    resolved."""
    (ma, sa), (mb, sb) = _mean_sd(a, "a"), _mean_sd(b, "b")
    return compare_summaries(ma, sa, mb, sb)


def compare_summaries(mean_a: float, sd_a: float, mean_b: float, sd_b: float) -> str:
    """:func:`compare_over_seeds`'s rule on the entries' means and seed standard deviations
    (sample sd, n − 1) when the per-seed values are not at hand: ``"higher"``, ``"lower"`` or
    ``"level"``."""
    values = {"mean_a": mean_a, "sd_a": sd_a, "mean_b": mean_b, "sd_b": sd_b}
    for name, v in values.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if sd_a < 0 or sd_b < 0:
        raise ValueError(f"standard deviations must be >= 0, got {sd_a!r} and {sd_b!r}")
    ma, mb, threshold = float(mean_a), float(mean_b), max(float(sd_a), float(sd_b))
    if ma - mb > threshold:
        return "higher"
    if mb - ma > threshold:
        return "lower"
    return "level"


def ranking(name_a: str, a: Iterable[float], name_b: str, b: Iterable[float]) -> str:
    """A sentence fragment ranking two entries by :func:`compare_over_seeds`:
    ``"A is higher than B"``, ``"A is lower than B"`` or ``"A and B are level"``."""
    verdict = compare_over_seeds(a, b)
    return f"{name_a} and {name_b} are level" if verdict == "level" else f"{name_a} is {verdict} than {name_b}"


def level_group(entries: dict[str, Iterable[float]]) -> list[str]:
    """The entries (names of ``entries``: per-seed values) level with the entry of the highest
    mean by :func:`compare_over_seeds`, that entry included, in the order of ``entries``: the
    entries a page may call "best" together, since the seeds cannot rank them."""
    values = {k: [float(x) for x in v] for k, v in entries.items()}
    if not values:
        raise ValueError("entries must not be empty")
    top = max(values, key=lambda k: _mean_sd(values[k], k)[0])
    return [k for k, v in values.items() if k == top or compare_over_seeds(values[top], v) == "level"]


def glue_coverage(notebook: str | Path, glued: Iterable[str]) -> tuple[set[str], set[str]]:
    """For a page and the names its ``facts.glued`` returns: the names its markdown cites that
    nothing glues (neither ``glued`` nor a ``glue("name", ...)`` call of the page, nor a
    ``glue(f"prefix{...}", ...)`` call whose literal prefix starts the name), and the names of
    ``glued`` that neither its markdown nor another page of the book (:func:`cross_document_glues`
    of every page under the folder that holds ``_toc.yml``) cites. Both are empty for a consistent
    page."""
    notebook = Path(notebook).resolve()
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    cited = set(_CITED.findall(text))
    glued = set(glued)
    prefixes = tuple(_GLUED_PREFIX.findall(code))
    missing = {n for n in cited - glued - set(_GLUED.findall(code)) if not n.startswith(prefixes)}
    return missing, glued - cited - _cited_elsewhere(notebook)


def _cited_elsewhere(notebook: Path) -> set[str]:
    root = next((d for d in notebook.parents if (d / "_toc.yml").exists()), None)
    if root is None:
        return set()
    pages = [p for p in (*root.rglob("*.md"), *root.rglob("*.ipynb"))
             if not any(part.startswith(("_build", ".")) for part in p.relative_to(root).parts)]
    return {name for page in pages for target, name, _ in cross_document_glues(page) if target == notebook}


def cross_document_glues(page: str | Path) -> list[tuple[Path, str, str]]:
    """The ``{glue:text}`doc::name:fmt``` citations of a page (``.md``, or an ``.ipynb``'s
    markdown): (the cited notebook's path, resolved against the page's folder, the name, the
    format with its colon, ``""`` when missing)."""
    page = Path(page)
    if page.suffix == ".ipynb":
        cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
        text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = page.read_text(encoding="utf-8")
    return [((page.parent / doc).resolve(), name, fmt) for doc, name, fmt in _CROSS.findall(text)]


def stored_glues(notebook: str | Path) -> dict[str, str | None]:
    """What a notebook's stored outputs glue: each name with its plain-text form (``repr`` of
    the value; ``None`` for a name glued without one)."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    out: dict[str, str | None] = {}
    for c in cells:
        for o in c.get("outputs", []):
            meta = o.get("metadata")
            if isinstance(meta, dict) and "name" in meta.get("scrapbook", {}):
                plain = o.get("data", {}).get("application/papermill.record/text/plain")
                out[meta["scrapbook"]["name"]] = "".join(plain) if isinstance(plain, list) else plain
    return out


def stored_glue_names(notebook: str | Path) -> set[str]:
    """The glue names that a notebook's stored outputs hold (what other pages can cite)."""
    return set(stored_glues(notebook))
