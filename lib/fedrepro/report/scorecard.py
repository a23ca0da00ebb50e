"""The reproduction scorecard: every table cell, figure, claim and check of the three
papers, with our value, the paper's, the tolerance and a status.

Statuses
--------
``match``
    our value is within the tolerance recorded for the item (or the claim holds on our
    reproduction).
``miss``
    it is not; the reason gives the ratio ours/paper (or why the claim fails).
``erratum``
    the paper's statement, or one of its values, is shown wrong by a check of the library:
    false, or inconsistent with the paper's own recipe or other tables (see the errata page).
``not-run``
    not reproduced, with the reason (not implemented yet, data unavailable...).

Causes
------
Every ``miss`` carries a ``cause`` from :data:`CAUSES` and, unless the cause is ``open``, the
``evidence``: the stored results (``<part>/<name>.json``, comma-separated) whose computation
demonstrates it. ``open`` means not understood yet; its reason says what was tried.

Every ``miss`` also carries the *strength* of its cause (``strength``, with ``reading``,
``range`` and ``signed_distance`` where they apply; :mod:`fedrepro.report.strength`):
``reproduced``, ``consistent``, ``excluded`` or ``open``, computed by one rule from the values
the stated readings give for the item, which each part's *reading provider*
(:data:`READING_PROVIDERS`) reads from the stored evidence. Evidence names stored results; where
none applies it may name a test (``tests/<file>.py::<test>``) or a page section
(``book/<page>#<anchor>``), and :func:`evidence_problems` checks that each exists.

A provider that shows a value of the paper to be wrong (inconsistent with the paper's own
recipe or with its other tables) reports it with ``cause=ERRATUM_CAUSE`` and its evidence:
the item is then an ``erratum``, not a miss, and keeps the evidence (:func:`build`).

Items come from ``data/paper`` (:mod:`fedrepro.report.paper`); our values come from the
*providers*: functions named in :data:`PROVIDERS` that read the results store and return
``{item_id: Outcome}``. A provider may also add items of kind ``check`` (a theorem turned
into a numerical check) that have no row in ``data/paper``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fedrepro.core.cache import MissingResult, atomic_write_text, read_only, results_root, store_is_read_only
from fedrepro.report import paper as paper_data
from fedrepro.report.quiet import import_tqdm_quietly
from fedrepro.report.strength import STRENGTHS, Readings, strength_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CAUSES",
    "ERRATUM_CAUSE",
    "KINDS",
    "PROVIDERS",
    "READING_PROVIDERS",
    "STATUSES",
    "Item",
    "Outcome",
    "build",
    "by_ref_frame",
    "causes_frame",
    "causes_legend_frame",
    "evidence_problems",
    "collect_outcomes",
    "compare",
    "counts",
    "load",
    "render",
    "scorecard_path",
    "reference_problem",
    "strength_counts",
    "strength_frame",
    "strength_legend_frame",
    "summary_frame",
    "to_frame",
    "write",
]

STATUSES: tuple[str, ...] = ("match", "miss", "erratum", "not-run")
KINDS: tuple[str, ...] = ("table-cell", "figure", "claim", "check")

#: Why a reproduction misses the paper (the ``cause`` of a ``miss``).
CAUSES: dict[str, str] = {
    "paper-misprint": "the paper's number is most likely a misprint: it breaks a pattern that the paper's own "
                      "neighbouring numbers and ours follow (not proven; a proven error is an erratum)",
    "unstated-setting": "the paper leaves a setting open or states one it cannot have used; a reading "
                        "study of ours moves the number",
    "tuning-range": "the paper's tuning differs from ours (parameters of our grid other than those our tuning picks give its value)",
    "seed-spread": "within the spread of our seeds",
    "model-or-data-differs": "our model or data differ from the paper's (shown by a run on both)",
    "open": "not understood yet: the reason says what was tried",
}

#: The cause with which a provider reports a value of the paper that a check of the library shows
#: wrong: :func:`build` scores the item ``erratum`` (with its evidence), never ``miss``.
ERRATUM_CAUSE = "paper-erratum"

#: ``"module:function"`` of every provider of outcomes; each part adds its own.
PROVIDERS: tuple[str, ...] = (
    "fedrepro.chapters.fedplt.theory.scorecard:outcomes",
    "fedrepro.chapters.fedplt.comparison.claim_causes:outcomes",
    "fedrepro.chapters.fedplt.participation_privacy.scorecard:outcomes",
    "fedrepro.chapters.fedplt.tuning.scorecard:outcomes",
    "fedrepro.chapters.fedplt.worst_case.scorecard:outcomes",
    "fedrepro.chapters.privacy_accounting.scorecard:outcomes",
    "fedrepro.chapters.dpfedpaq.theory.scorecard:outcomes",
    "fedrepro.chapters.alidpfl.scorecard:outcomes",
    "fedrepro.chapters.alidpfl.scorecard:table_outcomes",
    "fedrepro.chapters.dpfedpaq.experiments.scorecard:outcomes",
)

#: ``"module:function"`` of every reading provider: ``{item_id: Readings}``, the values the
#: stated readings give for a miss, from which :func:`fedrepro.report.strength.judge`
#: computes its strength (one function per part and cause group).
READING_PROVIDERS: tuple[str, ...] = (
    "fedrepro.chapters.fedplt.strength:readings",
    "fedrepro.chapters.dpfedpaq.strength:readings",
    "fedrepro.chapters.alidpfl.strength:readings",
)

#: Why an item is not run yet, per paper, until its part is implemented.
_NOT_IMPLEMENTED = {
    "fedplt": "not reproduced yet: the Fed-PLT experiments are not implemented",
    "dpfedpaq": "not reproduced yet: the DP-FedPAQ experiments are not implemented",
    "alidpfl": "not reproduced: no function of the stored ALI-DPFL results decides this item",
}
_CIFAR_UNAVAILABLE = "data unavailable: CIFAR-10 has no offline copy on the build machines"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a provider reports for one item.

    ``ours`` is our value (a number, a boolean for a claim, a short text). Leave ``status``
    as ``None`` to have it computed by :func:`compare` against the paper's value with the
    recorded tolerance; set it for ``erratum``/``not-run`` or for claims and checks.
    ``kind``/``paper``/``version``/``ref``/``paper_value``/``tolerance`` are needed only
    for items that have no row in ``data/paper`` (kind ``check``).
    """

    ours: Any = None
    status: str | None = None
    reason: str = ""
    kind: str | None = None
    paper: str | None = None
    version: str | None = None
    ref: str | None = None
    paper_value: Any = None
    tolerance: Any = None
    cause: str | None = None
    evidence: str = ""
    readings: Readings | None = None


@dataclasses.dataclass(frozen=True)
class Item:
    """One line of the scorecard."""

    id: str
    paper: str
    version: str
    kind: str
    ref: str
    paper_value: Any
    ours: Any
    tolerance: Any
    status: str
    reason: str
    cause: str = ""
    evidence: str = ""
    strength: str = ""
    reading: str = ""
    range: list[float] | None = None
    signed_distance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The item as plain data; an item that is not a miss has no strength fields."""
        data = dataclasses.asdict(self)
        if self.status != "miss":
            for key in _STRENGTH_FIELDS:
                data.pop(key)
        return data


_STRENGTH_FIELDS = ("strength", "reading", "range", "signed_distance")


def compare(paper_value: float, ours: float, tolerance: Mapping[str, Any]) -> tuple[str, str]:
    """Status and reason of a numeric comparison of ``ours`` with ``paper_value``.

    ``tolerance`` is ``{"rel": r}`` (``|ours-paper| <= r|paper|``), ``{"abs": a}`` or
    ``{"exact": True}``. A miss reports the ratio ours/paper.
    """
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        raise ValueError("ours must be a number to compare; use status 'not-run' otherwise")
    if paper_value is None:
        raise ValueError("the paper's value is not a number; compare claims by status")
    diff = abs(float(ours) - float(paper_value))
    if "rel" in tolerance:
        rel = float(tolerance["rel"])
        if rel < 0:
            raise ValueError(f"tolerance rel must be >= 0, got {rel}")
        ok, bound = diff <= rel * abs(float(paper_value)), f"rel {rel:g}"
    elif "abs" in tolerance:
        tol = float(tolerance["abs"])
        if tol < 0:
            raise ValueError(f"tolerance abs must be >= 0, got {tol}")
        ok, bound = diff <= tol, f"abs {tol:g}"
    elif tolerance.get("exact"):
        ok, bound = float(ours) == float(paper_value), "exact"
    else:
        raise ValueError(f"tolerance must have 'rel', 'abs' or 'exact', got {dict(tolerance)}")
    if ok:
        return "match", f"within {bound}"
    ratio = float(ours) / float(paper_value) if float(paper_value) != 0 else math.inf
    return "miss", f"ours/paper = {ratio:.3g} (tolerance {bound})"


def _paper_items() -> list[dict[str, Any]]:
    """Every item that ``data/paper`` defines, before any outcome is known."""
    items: list[dict[str, Any]] = []
    for cell in paper_data.all_cells():
        items.append(dict(
            id=cell.id, paper=cell.paper, version=cell.version, kind="table-cell",
            ref=cell.table_id,
            paper_value=cell.value if cell.value is not None else cell.value_text,
            tolerance=paper_data.tolerance_for(cell.table_id),
            _column=cell.column,
        ))
    for paper in paper_data.PAPERS:
        for fig in paper_data.figures(paper):
            if str(fig.get("reproduce", "")).strip().lower() in ("", "none"):
                continue  # diagrams: nothing to reproduce
            items.append(dict(
                id=fig["id"], paper=paper, version=str(fig.get("version", "")), kind="figure",
                ref=_figure_ref(fig), paper_value=fig.get("shows", ""),
                tolerance="all claims about the figure hold", _column="",
            ))
        for claim in paper_data.claims(paper):
            items.append(dict(
                id=claim["id"], paper=paper, version=str(claim.get("version", "")),
                kind="claim", ref=", ".join(claim.get("refers_to") or []) or str(claim.get("section", "")),
                paper_value=claim["quote"], tolerance="the claim holds on our reproduction",
                _column="",
            ))
    return items


def _figure_ref(fig: Mapping[str, Any]) -> str:
    version = str(fig.get("version", "main"))
    ref = f"Fig. {fig['figure']}"
    return ref if version == "main" else f"{ref} ({version})"


def _default_reason(item: Mapping[str, Any]) -> str:
    if "CIFAR" in item.get("_column", "").upper():
        return _CIFAR_UNAVAILABLE
    return _NOT_IMPLEMENTED[item["paper"]]


def build(outcomes: Mapping[str, Outcome] | None = None) -> list[Item]:
    """The scorecard: every paper item, with the given outcomes applied.

    Items without an outcome are ``not-run`` with the reason why. Outcomes for ids that are
    not paper items must carry ``kind`` (``"check"``), ``paper`` and ``ref``.
    """
    outcomes = dict(outcomes or {})
    result: list[Item] = []
    seen: set[str] = set()
    for raw in _paper_items():
        if raw["id"] in seen:
            raise ValueError(f"duplicate scorecard id {raw['id']}")
        seen.add(raw["id"])
        out = outcomes.pop(raw["id"], None)
        result.append(_resolve(raw, out))
    for item_id, out in sorted(outcomes.items()):
        if out.kind not in KINDS or out.paper not in paper_data.PAPERS or not out.ref:
            raise ValueError(
                f"outcome {item_id!r} is not a paper item; it needs kind in {KINDS}, "
                f"paper in {sorted(paper_data.PAPERS)} and ref")
        raw = dict(id=item_id, paper=out.paper, version=out.version or "", kind=out.kind,
                   ref=out.ref, paper_value=out.paper_value, tolerance=out.tolerance, _column="")
        result.append(_resolve(raw, out))
    return result


def _resolve(raw: Mapping[str, Any], out: Outcome | None) -> Item:
    base = {k: v for k, v in raw.items() if not k.startswith("_")}
    if out is None:
        return Item(**base, ours=None, status="not-run", reason=_default_reason(raw))
    status, reason = out.status, out.reason
    if status is None:
        if raw["kind"] != "table-cell" or not isinstance(raw["paper_value"], (int, float)):
            raise ValueError(f"outcome for {raw['id']} needs an explicit status")
        status, reason0 = compare(raw["paper_value"], out.ours, raw["tolerance"])
        reason = f"{reason0}; {reason}" if reason else reason0
    if status not in STATUSES:
        raise ValueError(f"status of {raw['id']} must be one of {STATUSES}, got {status!r}")
    if status in ("miss", "erratum", "not-run") and not reason:
        raise ValueError(f"a {status} for {raw['id']} needs a reason")
    cause, evidence = "", ""
    if out.cause == ERRATUM_CAUSE:
        if status not in ("miss", "erratum"):
            raise ValueError(f"{raw['id']} is reported as an error of the paper ({ERRATUM_CAUSE}) but is a {status}")
        if not out.evidence:
            raise ValueError(f"the error of the paper in {raw['id']} needs its evidence (the stored results)")
        return Item(**base, ours=_plain(out.ours), status="erratum", reason=reason, cause="", evidence=out.evidence)
    if status == "miss":
        cause = out.cause or "open"
        if cause not in CAUSES:
            raise ValueError(f"cause of {raw['id']} must be one of {sorted(CAUSES)}, got {cause!r}")
        evidence = out.evidence if cause != "open" else ""
        if cause != "open" and not evidence:
            raise ValueError(f"the cause {cause!r} of {raw['id']} needs its evidence (the stored results)")
        return _with_strength(Item(**base, ours=_plain(out.ours), status=status, reason=reason, cause=cause,
                                   evidence=evidence), out.readings)
    return Item(**base, ours=_plain(out.ours), status=status, reason=reason, cause=cause, evidence=evidence)


def _with_strength(item: Item, readings: Readings | None) -> Item:
    """A miss with the strength of its cause (:func:`fedrepro.report.strength.strength_of`); a
    ``reproduced`` item's evidence gains the reading's results."""
    found = strength_of(item.cause, item.paper_value, item.tolerance, readings, ours=item.ours)
    evidence = item.evidence
    if found.strength == "reproduced" and readings is not None:
        names = [n.strip() for n in evidence.split(",") if n.strip()]
        evidence = ", ".join(names + [n.strip() for n in readings.source(found.reading).split(",")
                                      if n.strip() not in names])
    return dataclasses.replace(
        item, evidence=evidence, strength=found.strength, reading=found.reading,
        range=None if found.range is None else [_plain_float(x) for x in found.range],
        signed_distance=None if found.signed_distance is None else _plain_float(found.signed_distance))


def _plain_float(x: float) -> float:
    """``x`` rounded to 6 significant digits: the scorecard stores no round-off."""
    return float(f"{float(x):.6g}")


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        return value.item()
    return value


def _call(spec: str, compute: bool, missing: list[tuple[str, str]] | None) -> Mapping[str, Any] | None:
    """The mapping a ``module:function`` provider returns, or None when its results are
    missing or stale (then ``(spec, why)`` is appended to ``missing``)."""
    module_name, _, func = spec.partition(":")
    provider = getattr(importlib.import_module(module_name), func)
    try:
        with contextlib.nullcontext() if compute else read_only():
            return provider()
    except MissingResult as exc:
        if missing is not None:
            missing.append((spec, str(exc)))
        return None


def collect_outcomes(providers: Iterable[str] = PROVIDERS, *, compute: bool = False,
                     missing: list[tuple[str, str]] | None = None,
                     reading_providers: Iterable[str] | None = None) -> dict[str, Outcome]:
    """Call every provider and merge their outcomes (an id given twice is an error).

    Providers read the results store. Unless ``compute`` is true they run under
    :func:`fedrepro.core.cache.read_only`: a provider whose results are missing or stale is
    skipped (its items stay ``not-run``) and ``(provider, why)`` is appended to ``missing``
    when a list is given. Then every reading provider (default: :data:`READING_PROVIDERS`
    when ``providers`` is :data:`PROVIDERS`, none otherwise) adds to the outcomes it knows
    the readings that decide the strength of a miss (:mod:`fedrepro.report.strength`).
    """
    import_tqdm_quietly()  # before any provider's dataset loader (the report page compares stderr)
    merged: dict[str, Outcome] = {}
    for spec in providers:
        outcomes = _call(spec, compute, missing)
        for key, out in (outcomes or {}).items():
            if key in merged:
                raise ValueError(f"scorecard item {key} reported by two providers")
            merged[key] = out
    if reading_providers is None:
        reading_providers = READING_PROVIDERS if tuple(providers) == PROVIDERS else ()
    given: set[str] = set()
    for spec in reading_providers if merged else ():  # no outcome: no miss to read for
        for key, readings in (_call(spec, compute, missing) or {}).items():
            if key in given:
                raise ValueError(f"the readings of scorecard item {key} are reported by two reading providers")
            given.add(key)
            if key in merged:
                merged[key] = dataclasses.replace(merged[key], readings=readings)
    return merged


def scorecard_path() -> Path:
    """``<results root>/scorecard.json``."""
    return results_root() / "scorecard.json"


def _payload(items: list[Item]) -> dict[str, Any]:
    return {
        "statuses": list(STATUSES),
        "counts": counts(items),
        "items": [it.to_dict() for it in items],
    }


def render(items: list[Item]) -> str:
    """The JSON text of the scorecard (deterministic: stable order, sorted keys)."""
    return json.dumps(_payload(items), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write(items: list[Item] | None = None, path: Path | None = None) -> Path:
    """Build (if ``items`` is None) and write the scorecard atomically; return its path.

    Where the store is read-only (the test suite, the page check) nothing is written: a
    scorecard that differs from the stored one is then an error (``run `make book```)."""
    if items is None:
        items = build(collect_outcomes())
    path = Path(path or scorecard_path())
    text = render(items)
    if store_is_read_only(path.parent):
        stored = path.read_text(encoding="utf-8") if path.is_file() else None
        if stored != text:
            raise MissingResult(f"{path.name} is {'missing' if stored is None else 'stale'} (its results "
                                "changed since it was written): this context only reads the results "
                                "store; run `make book` to rewrite it")
        return path
    atomic_write_text(path, text)
    return path


def load(path: Path | None = None) -> list[Item]:
    """Read a written scorecard back."""
    data = json.loads(Path(path or scorecard_path()).read_text(encoding="utf-8"))
    return [Item(**d) for d in data["items"]]


def counts(items: Iterable[Item]) -> dict[str, dict[str, int]]:
    """``{paper: {status: n}}`` plus a ``"total"`` row."""
    table: dict[str, dict[str, int]] = {}
    for it in items:
        for key in (it.paper, "total"):
            row = table.setdefault(key, {s: 0 for s in STATUSES})
            row[it.status] += 1
    order = [p for p in paper_data.PAPERS if p in table] + (["total"] if "total" in table else [])
    return {k: table[k] for k in order}


def to_frame(items: Iterable[Item]) -> pd.DataFrame:
    """The items as a pandas DataFrame (one row per item)."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(it) for it in items])


def summary_frame(items: Iterable[Item]) -> pd.DataFrame:
    """Counts per paper (rows, display names) and status (columns), with a total row."""
    import pandas as pd

    table = counts(items)
    names = {**paper_data.PAPERS, "total": "total"}
    frame = pd.DataFrame.from_dict(table, orient="index")[list(STATUSES)]
    frame.index = [names[k] for k in frame.index]
    frame["items"] = frame.sum(axis=1)
    return frame


def causes_legend_frame() -> pd.DataFrame:
    """The causes of a miss (:data:`CAUSES`) and what each means, for the report page."""
    import pandas as pd

    return pd.DataFrame({"meaning": list(CAUSES.values())}, index=pd.Index(list(CAUSES), name="cause"))


def causes_frame(items: Iterable[Item]) -> pd.DataFrame:
    """Misses per paper (rows, display names) and cause (columns, :data:`CAUSES` order), with
    a total row."""
    import pandas as pd

    names = {**paper_data.PAPERS, "total": "total"}
    rows: dict[str, dict[str, int]] = {}
    for it in items:
        if it.status != "miss":
            continue
        for key in (it.paper, "total"):
            rows.setdefault(key, {c: 0 for c in CAUSES})[it.cause or "open"] += 1
    order = [p for p in paper_data.PAPERS if p in rows] + (["total"] if rows else [])
    frame = pd.DataFrame.from_dict({names[k]: rows[k] for k in order}, orient="index", columns=list(CAUSES))
    frame["misses"] = frame.sum(axis=1)
    return frame


def _repository() -> Path:
    """The repository's root (``lib/fedrepro`` lies two levels below it)."""
    return Path(__file__).resolve().parents[3]


def _heading_slugs(text: str) -> set[str]:
    """The anchors (MyST slugs) of the Markdown headings of a page's text, with any explicit
    ``(label)=`` targets."""
    import re

    slugs = set(re.findall(r"^\(([A-Za-z0-9_-]+)\)=", text, flags=re.MULTILINE))
    for title in re.findall(r"^#+\s+(.+?)\s*$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\s-]", "", title.lower()).strip()
        slugs.add(re.sub(r"[\s]+", "-", slug))
    return slugs


def reference_problem(name: str, root: Path, repository: Path | None = None) -> str | None:
    """Why one evidence reference does not resolve (None when it does): a stored result
    (``<part>/<name>.json`` under ``root``), a test (``tests/<file>.py::<test>``: the file
    defines the test) or a page section (``book/<page>#<anchor>``: the page has a heading
    or label with that anchor)."""
    repository = repository or _repository()
    if name.startswith("tests/"):
        path, _, test = name.partition("::")
        file = repository / path
        if not file.is_file():
            return f"test file {path} does not exist"
        if test and f"def {test}(" not in file.read_text(encoding="utf-8"):
            return f"{path} defines no test {test}"
        return None
    if name.startswith("book/"):
        path, _, anchor = name.partition("#")
        file = repository / path
        if not file.is_file():
            return f"page {path} does not exist"
        if anchor:
            text = file.read_text(encoding="utf-8")
            if file.suffix == ".ipynb":
                cells = json.loads(text)["cells"]
                text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
            if anchor not in _heading_slugs(text):
                return f"page {path} has no section {anchor}"
        return None
    return None if (root / name).is_file() else "is not in the store"


def evidence_problems(items: Iterable[Item], root: Path | None = None) -> list[str]:
    """Each miss whose cause lacks evidence, or whose evidence (or an erratum's) names a
    result that is not in the store at ``root`` (default: the results root), a test that does
    not exist or a page section that does not (:func:`reference_problem`); and each miss
    whose strength is not one of :data:`~fedrepro.report.strength.STRENGTHS`."""
    root = Path(root) if root else results_root()
    problems = []
    for it in items:
        if it.status == "erratum":
            for n in (m.strip() for m in it.evidence.split(",")):
                why = reference_problem(n, root) if n else None
                if why:
                    problems.append(f"{it.id}: evidence {n} {why}")
        if it.status != "miss":
            continue
        if it.cause not in CAUSES:
            problems.append(f"{it.id}: no cause")
            continue
        if it.strength not in STRENGTHS:
            problems.append(f"{it.id}: strength {it.strength!r} is not one of {sorted(STRENGTHS)}")
        if it.cause == "open":
            continue
        names = [n.strip() for n in it.evidence.split(",") if n.strip()]
        if not names:
            problems.append(f"{it.id}: cause {it.cause} without evidence")
        for n in names:
            why = reference_problem(n, root)
            if why:
                problems.append(f"{it.id}: evidence {n} {why}")
    return problems


def strength_counts(items: Iterable[Item], by: str = "paper") -> dict[str, dict[str, int]]:
    """Misses per ``by`` (``"paper"`` or ``"cause"``) and strength
    (:data:`~fedrepro.report.strength.STRENGTHS`), with a ``"total"`` row."""
    if by not in ("paper", "cause"):
        raise ValueError(f"by must be 'paper' or 'cause', got {by!r}")
    table: dict[str, dict[str, int]] = {}
    for it in items:
        if it.status != "miss":
            continue
        for key in (getattr(it, by) or "open", "total"):
            table.setdefault(key, {s: 0 for s in STRENGTHS})[it.strength or "open"] += 1
    order = list(paper_data.PAPERS) if by == "paper" else list(CAUSES)
    return {k: table[k] for k in [*order, "total"] if k in table}


def strength_frame(items: Iterable[Item], by: str = "paper") -> pd.DataFrame:
    """Misses per paper (display names) or per cause (rows) and strength (columns), with a
    total row and the misses of each row (:func:`strength_counts`)."""
    import pandas as pd

    table = strength_counts(items, by)
    names = {**paper_data.PAPERS, "total": "total"} if by == "paper" else {}
    frame = pd.DataFrame.from_dict(table, orient="index", columns=list(STRENGTHS))
    frame.index = pd.Index([names.get(k, k) for k in frame.index], name=by)
    frame["misses"] = frame.sum(axis=1)
    return frame


def strength_legend_frame() -> pd.DataFrame:
    """The strengths of a miss's cause and what each means, for the report page."""
    import pandas as pd

    return pd.DataFrame({"meaning": list(STRENGTHS.values())}, index=pd.Index(list(STRENGTHS), name="strength"))


def by_ref_frame(items: Iterable[Item], paper: str | None = None) -> pd.DataFrame:
    """Counts per table/figure/claim group: one row per ``(paper, kind, ref)``."""
    import pandas as pd

    rows: dict[tuple[str, str, str], dict[str, int]] = {}
    order = list(paper_data.PAPERS)
    for it in sorted(items, key=lambda i: (order.index(i.paper), KINDS.index(i.kind))):
        if paper is not None and it.paper != paper:
            continue
        ref = it.ref if it.kind in ("table-cell", "figure") else f"{it.kind}s"
        key = (paper_data.PAPERS[it.paper], it.kind, ref)
        row = rows.setdefault(key, {s: 0 for s in STATUSES})
        row[it.status] += 1
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index = pd.MultiIndex.from_tuples(frame.index, names=["paper", "kind", "ref"])
    return frame
