"""The coverage table of the independent checks (``tests/independent/README.md``) stays true.

* every test id the table names exists (a top-level ``def test_...`` in that file);
* every row's reference kind is one of the table's vocabulary, and a row without an
  independent check says why;
* every public function of a science package that *produces book numbers* has a row.

"Produces book numbers", mechanically: a public (no leading underscore) top-level function of
``fedrepro.{fedplt, dpfedpaq, alidpfl, headtohead, privacy, problems}`` that a run module under
``lib/fedrepro/experiments/`` uses directly — imported by name (``from fedrepro.X import f``,
followed through re-exports to the module that defines it) or called as an attribute of an
imported science module (``import fedrepro.X as m`` / ``from fedrepro import X``, then ``m.f``).
The scan is static (the ``ast`` of the files; nothing is imported), so it takes well under a
second. Classes and methods are not enforced (their rows are listed by hand), nor are functions
reached only through another science function (the direct callee is the row that must name a
check strong enough to cover its callees). :data:`EXEMPT` lists the helpers that produce no
number: argument validation, and the plumbing that loads a reader's own algorithm.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib"
TABLE = ROOT / "tests" / "independent" / "README.md"
SCIENCE = ("fedplt", "dpfedpaq", "alidpfl", "headtohead", "privacy", "problems")
KINDS = ("outside library", "plain loop", "closed form", "none", "unreviewed")

#: Public science functions the runs call that produce no book number.
EXEMPT = {
    "privacy.validate:check_delta",  # argument validation: raises or returns its argument
    "privacy.validate:check_sampling_rate",  # argument validation: raises or returns its argument
    # a reader's own algorithm (the "run your own algorithm" page): naming, importing and
    # hashing the reader's class and listing its configurations; the numbers come from
    # headtohead.algorithms:run, which has its row
    "headtohead.bring_your_own:resolve",
    "headtohead.bring_your_own:hyper_parameters",
    "headtohead.bring_your_own:class_path",
    "headtohead.bring_your_own:rebuild",
    "headtohead.bring_your_own:configurations",
    "headtohead.bring_your_own:algorithm_code",
}

_ROW = re.compile(r"^\|\s*`?([a-z_][a-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.]*)`?\s*\|(.*)\|\s*$")
_TEST_ID = re.compile(r"`(tests/[A-Za-z0-9_/]+\.py)::([A-Za-z0-9_]+)(\[[^`\]]*\])?`")


def _table() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"component {m.group(1)} has two rows"
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def _module_file(module: str) -> Path | None:
    base = LIB.joinpath(*module.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _absolute(module: str | None, level: int, here: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    parts = here.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _resolve(module: str, name: str, depth: int = 0) -> str | None:
    """``module:name`` where ``name`` is defined as a top-level function, following
    re-exports; ``None`` for a class, a constant, or something outside the science packages."""
    path = _module_file(module)
    if path is None or depth > 5:
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return f"{module.removeprefix('fedrepro.')}:{name}"
        if isinstance(node, ast.ClassDef) and node.name == name:
            return None
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == name:
                    src = _absolute(node.module, node.level, module, path.name == "__init__.py")
                    return _resolve(src, a.name, depth + 1) if _is_science(src) else None
    return None


def _is_science(module: str) -> bool:
    parts = module.split(".")
    return len(parts) >= 2 and parts[0] == "fedrepro" and parts[1] in SCIENCE


@functools.lru_cache(maxsize=1)
def book_number_functions() -> frozenset[str]:
    """The science functions the run modules use directly (module docstring)."""
    found: set[str] = set()
    for f in sorted((LIB / "fedrepro" / "experiments").rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    if _is_science(full) and _module_file(full) is not None:
                        aliases[a.asname or a.name] = full  # a module imported by name
                    elif _is_science(node.module) and not a.name.startswith("_"):
                        hit = _resolve(node.module, a.name)
                        if hit:
                            found.add(hit)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if _is_science(a.name) and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and not node.attr.startswith("_")):
                hit = _resolve(aliases[node.value.id], node.attr)
                if hit:
                    found.add(hit)
    return frozenset(found)


def _defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        names |= {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


def test_the_table_is_not_empty_and_its_kinds_are_the_vocabulary():
    rows = _table()
    assert len(rows) >= 50
    for component, (check, kind, tolerance) in rows.items():
        assert kind.startswith(KINDS), (component, kind)
        ids = _TEST_ID.findall(check)
        if kind.startswith(("outside library", "plain loop", "closed form")):
            assert ids, f"{component}: an independent check needs a test id"
            assert tolerance, f"{component}: state the tolerance"
        else:
            assert check.strip("— "), f"{component}: say why there is no independent check"


def test_every_test_id_in_the_table_exists():
    cache: dict[str, set[str]] = {}
    missing = []
    for component, (check, _, _) in _table().items():
        for file, name, _ in _TEST_ID.findall(check):
            path = ROOT / file
            if file not in cache:
                cache[file] = _defined_tests(path) if path.is_file() else set()
            if name not in cache[file]:
                missing.append(f"{component}: {file}::{name}")
    assert not missing, "the table names tests that do not exist:\n" + "\n".join(missing)


def test_every_book_number_function_has_a_row():
    found = book_number_functions()
    assert len(found) >= 50 and "problems.softmax:solve_optimum" in found  # the scan sees the runs
    absent = sorted(found - set(_table()) - EXEMPT)
    assert not absent, ("science functions used by a run but absent from tests/independent/README.md:\n"
                        + "\n".join(absent))


def test_the_scan_follows_reexports_and_module_aliases():
    # ``from fedrepro.fedplt import run_fedplt`` is a re-export of fedplt.algorithm
    assert _resolve("fedrepro.fedplt", "run_fedplt") == "fedplt.algorithm:run_fedplt"
    assert _resolve("fedrepro.alidpfl.training", "RunPlan") is None  # a class: not enforced
    assert "alidpfl.training:train" in book_number_functions()
