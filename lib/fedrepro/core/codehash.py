"""Code dependencies of a result, computed from the import graph, hashed on normalised code.

A stored result is fresh only while the library code that computed it is unchanged. Which
code that is is *computed*, never declared: starting from the modules that define the
experiment's config and its run function, :func:`module_closure` follows every import of a
``fedrepro`` module (top-level or inside a function, as :mod:`grimp` reads them from the
source) and every package ``__init__`` that importing a submodule runs, until nothing new is
reached. :func:`code_hash` hashes the closure on *normalised* code: the abstract syntax tree
without docstrings, so comments, blank lines, formatting and docstrings do not count, while any
change to what the code does (a constant, an operator, a default) does.

Where code lives is not hashed either. Each module is hashed with its references to library
modules written by the content of the module referred to (:func:`linked_hash`), and the
closure's hash is taken over the set of these hashes without module names: moving or
renaming a run module (its importers updated) leaves every result fresh, while importing a
name from a different module, or any edit to a module of the closure, does not.

The results store itself (:data:`STORE_MODULES`: the store, its executors, the device choice,
this module, ``make verify`` and the store's migration) is followed but not hashed: it moves
values and computes none (what a record is made of -- configs, seeds' canonical form, value
encoding -- lives in :mod:`fedrepro.core.records`, which is hashed), and its tests pin that a
stored result is exactly what was computed, whichever executor or device ran it (within the
tolerance its config declares). Editing the store, or the default device, therefore makes no
result stale.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PACKAGE", "STORE_MODULES", "code_hash", "clear_cache", "linked_hash", "local_hash", "module_closure",
           "module_path", "normalised_hash"]

PACKAGE = "fedrepro"
#: Followed for their imports, not hashed (see the module docstring).
STORE_MODULES = frozenset({"fedrepro.core.cache", "fedrepro.core.executors", "fedrepro.core.codehash",
                           "fedrepro.core.verify", "fedrepro.core.device", "fedrepro.core.migrate"})
_LIB_ROOT = Path(__file__).resolve().parents[1]  # .../lib/fedrepro

_lock = threading.Lock()
_graph_cache: dict[tuple, object] = {}
_hash_cache: dict[tuple[str, int, int], str] = {}
_refs_cache: dict[tuple[str, int, int], set[str]] = {}
_local_cache: dict[tuple[str, int, int], tuple[str, tuple[str, ...]]] = {}
#: A string naming an attribute of a library module, ``"fedrepro.a.b:Name"``.
_REFERENCE = re.compile(rf"{PACKAGE}(\.[A-Za-z_]\w*)+:[A-Za-z_]\w*")


def module_path(name: str) -> Path:
    """Source file of the library module ``name`` (a package's ``__init__.py``)."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        raise ValueError(f"module {name!r} is not part of the {PACKAGE} library")
    rel = Path(*name.split(".")[1:])
    pkg = _LIB_ROOT / rel / "__init__.py"
    if pkg.is_file():
        return pkg
    mod = _LIB_ROOT / rel.with_suffix(".py") if name != PACKAGE else pkg
    if mod.is_file():
        return mod
    raise ValueError(f"module {name!r} has no source file under the library")


def _source_files() -> list[Path]:
    return sorted(p for p in _LIB_ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _tree_signature() -> tuple:
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in _source_files())


def _graph():
    """The library's import graph (rebuilt when any source file changed)."""
    import grimp

    key = _tree_signature()
    with _lock:
        graph = _graph_cache.get(key)
        if graph is None:
            # cache_dir=None: grimp would otherwise write a cache folder into the working dir
            graph = grimp.build_graph(PACKAGE, cache_dir=None)
            _graph_cache.clear()
            _graph_cache[key] = graph
    return graph


def clear_cache() -> None:
    """Forget the import graph and the per-file hashes (they are also refreshed on any edit)."""
    with _lock:
        _graph_cache.clear()
        _hash_cache.clear()
        _refs_cache.clear()
        _local_cache.clear()


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def module_closure(roots: Iterable[str]) -> list[str]:
    """Every library module that importing ``roots`` and running their code can execute.

    Transitive over imports (grimp reads function-level imports too), over parent
    packages, whose ``__init__`` runs on import, and over modules named in a
    ``"fedrepro.<module>:<attribute>"`` string (:func:`_named_references`: registries that
    import by name). Sorted names."""
    graph = _graph()
    known = set(graph.modules)
    todo = []
    for root in roots:
        if root not in known:
            raise ValueError(f"module {root!r} is not a module of the {PACKAGE} library")
        todo.append(root)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(a for a in _ancestors(name) if a in known)
        todo.extend(graph.find_modules_directly_imported_by(name))
        todo.extend(m for m in _named_references(name) if m in known)
    return sorted(seen)


def _named_references(name: str) -> set[str]:
    """Library modules that ``name`` names in a string ``"fedrepro.<module>:<attribute>"`` in
    its code (docstrings aside): a registry that imports them by name when called (e.g.
    :data:`fedrepro.fedplt.baselines.ALGORITHMS` through ``importlib.import_module``), which
    the import graph cannot see."""
    path = module_path(name)
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    with _lock:
        cached = _refs_cache.get(key)
    if cached is not None:
        return cached
    tree = _strip_docstrings(ast.parse(path.read_bytes(), filename=path.name))
    refs = {node.value.partition(":")[0] for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _REFERENCE.fullmatch(node.value)}
    with _lock:
        _refs_cache[key] = refs
    return refs


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _canonical_dump(tree: ast.AST) -> str:
    """``ast.dump`` of ``tree`` as Python 3.11 writes it, on every Python from 3.11 on.

    Python 3.12 added the field ``type_params`` to functions and classes (always empty in
    code without PEP 695 generics), and 3.13 leaves empty lists and ``None`` out of the dump
    unless ``show_empty`` is set; either would change the hash of every module, and so make
    every stored result stale on a machine with another Python. Dropping the empty new field
    and asking for empty fields gives the same text on 3.11, 3.12 and 3.13 (checked on every
    library module; ``tests/test_codehash.py``)."""
    if sys.version_info >= (3, 12):
        for node in ast.walk(tree):
            if getattr(node, "type_params", None) == []:
                del node.type_params
    options = {"show_empty": True} if sys.version_info >= (3, 13) else {}
    return ast.dump(tree, annotate_fields=True, include_attributes=False, **options)


def normalised_hash(path: Path) -> str:
    """SHA-256 of the file's syntax tree without docstrings (comments and layout drop out)."""
    path = Path(path)
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    cached = _hash_cache.get(key)
    if cached is not None:
        return cached
    tree = _strip_docstrings(ast.parse(path.read_bytes(), filename=path.name))
    digest = hashlib.sha256(_canonical_dump(tree).encode()).hexdigest()
    with _lock:
        _hash_cache[key] = digest
    return digest


def _library_target(name: str) -> str | None:
    """The library module ``name`` denotes (``None`` outside the library or not a module)."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    try:
        module_path(name)
    except ValueError:
        return None
    return name


_PLACEHOLDER = "@module"


def _unname_library_references(tree: ast.AST) -> list[str]:
    """Replace every reference to a library module in ``tree`` (``import``, ``from ...
    import`` and the ``"fedrepro.<module>:<name>"`` strings of registries) by one
    placeholder; return the modules referred to, in the order of the tree's walk."""
    targets: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            base = _library_target(node.module)
            if base is None:
                continue
            targets.append(base)
            node.module = _PLACEHOLDER
            for alias in node.names:
                sub = _library_target(f"{base}.{alias.name}")
                if sub is not None:  # ``from package import module``: the binding keeps its name
                    targets.append(sub)
                    alias.asname = alias.asname or alias.name
                    alias.name = _PLACEHOLDER
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = _library_target(alias.name)
                if target is not None:
                    targets.append(target)
                    if not alias.asname:  # ``import fedrepro.a.b``: the code names the path
                        alias.asname = alias.name
                    alias.name = _PLACEHOLDER
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _REFERENCE.fullmatch(node.value):
            module, _, attribute = node.value.partition(":")
            if _library_target(module) is not None:
                targets.append(module)
                node.value = f"{_PLACEHOLDER}:{attribute}"
    return targets


def _local(name: str) -> tuple[str, tuple[str, ...]]:
    """``(local hash, modules referred to)`` of the library module ``name`` (cached per file)."""
    path = module_path(name)
    st = path.stat()
    key = ("local:" + str(path), st.st_mtime_ns, st.st_size)
    with _lock:
        cached = _local_cache.get(key)
    if cached is not None:
        return cached
    tree = _strip_docstrings(ast.parse(path.read_bytes(), filename=path.name))
    targets = tuple(_unname_library_references(tree))
    out = (hashlib.sha256(_canonical_dump(tree).encode()).hexdigest(), targets)
    with _lock:
        _local_cache[key] = out
    return out


def local_hash(name: str) -> str:
    """SHA-256 of the library module ``name``'s normalised form (:func:`normalised_hash`)
    with every reference to a library module replaced by one placeholder: what the module
    itself says, wherever it lives and wherever what it imports lives."""
    return _local(name)[0]


def linked_hash(name: str) -> str:
    """SHA-256 of :func:`local_hash` of the module ``name`` and the local hashes of the
    modules it refers to, in order: what the module says and which code each of its
    references denotes, but not where any of it lives. Importing a name from another
    module (or another version of a module) changes it; moving or renaming a module, with
    the imports that name it updated, does not."""
    own, targets = _local(name)
    # the store's modules are not hashed (see the module docstring): a reference to one
    # counts by its name, so editing the store changes no importer's hash
    text = own + "|" + ",".join(f"store:{t}" if t in STORE_MODULES else local_hash(t) for t in targets)
    return hashlib.sha256(text.encode()).hexdigest()


def code_hash(roots: Iterable[str]) -> str:
    """SHA-256 over the sorted, distinct :func:`linked_hash` of every module in
    :func:`module_closure` except the results store's own (:data:`STORE_MODULES`).

    Module names are not hashed: moving or renaming a module of the closure (its importers
    updated) leaves the hash as it was, while any change to what a module of the closure
    does, or to which code it imports, changes it."""
    digests = sorted({linked_hash(name) for name in module_closure(roots) if name not in STORE_MODULES})
    h = hashlib.sha256()
    for digest in digests:
        h.update(digest.encode() + b"\0")
    return h.hexdigest()
