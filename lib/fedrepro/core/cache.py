"""Results store: computed results keyed by their experiment config and library code.

A result flows as ``config -> run(config) -> result -> data/results/<part>/<name>.json``.
Each stored file records

* the config (as plain JSON), its declared ``identity`` (``part``, ``experiment``), the
  dotted path of its class (where it lived when the result was stored: a hint, not part of
  the identity) and ``config_hash`` (SHA-256 of the identity and the fields);
* ``code_roots`` (the modules defining the config and its run function) and ``code_hash``:
  a hash of the normalised code of every library module those roots import, transitively
  (:mod:`fedrepro.core.codehash`: computed from the import graph, never declared; module
  names are not hashed, so code may move without making a result stale);
* ``runner``: how to recompute it (the run function, or the unit function, the units and the
  combine function), which ``make verify`` uses;
* the result itself (a plain dict of floats, ints, strings, lists and numpy arrays);
* ``meta``: how it was computed -- wall time, machine, device, executor and workers, or the
  migration that carried it over -- which is part of no identity (a result is the same
  result whichever device or executor computed it) and which ``make verify`` uses to plan;
* ``digest``: SHA-256 of the canonical JSON of everything above. A file whose digest does not
  match its contents is *corrupt* (edited by hand, or damaged) and never feeds the book.

A stored result is *fresh* when its digest, config hash and code hash all match; otherwise it
is stale or corrupt. The code hash is taken from where the config class and its run
functions live *now* (found by the declared identity), so moving them leaves it fresh. What happens then depends on the context:

* ``make book`` (the default): it is recomputed and stored;
* a read-only context -- :func:`read_only`, used by the scorecard, or a store named by
  ``$FEDREPRO_READ_ONLY_STORE``, which the test suite sets to the committed store: it is an
  error (:class:`MissingResult`, :class:`CorruptResult`) that names the result and says to run
  ``make book``; nothing is computed, nothing written;
* ``$FEDREPRO_NO_PAPER_COMPUTE=1`` (the test suite): computing a ``profile="paper"``
  result anywhere is an error, so a test can never start a paper-profile computation.

Writes are atomic (temporary file in the same folder, ``fsync``, :func:`os.replace`; files
are 0644) and locked per result (:mod:`filelock`), so any number of processes may share one
store: the second process to need a result waits for the first and then loads it.
``$FEDREPRO_FORCE=1`` (``make reproduce``) recomputes every result once per run: a result
written since ``$FEDREPRO_FORCE_SINCE`` (set at the start of the run and inherited by the
chapters' kernels) counts as recomputed.

Long runs made of independent units (Monte Carlo trials, grid points) go through
:func:`run_units`, which stores every finished unit at once: an interrupted run loses at
most the units in progress and resumes where it stopped. The units run through the executor
chosen by the environment (:mod:`fedrepro.core.executors`: serial, local processes, or a Dask
cluster), with identical results whichever is used.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import math
import numbers
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from fedrepro.core.records import (
    ExperimentConfig,
    _class_path,
    config_from_dict,
    config_hash,
    config_to_dict,
    decode,
    encode,
    identity,
)

__all__ = [
    "CorruptResult",
    "ExperimentConfig",
    "MissingResult",
    "StoredResult",
    "atomic_write",
    "atomic_write_text",
    "check_config_values",
    "finished_units",
    "load_if_computed",
    "store_is_read_only",
    "code_hash",
    "config_from_dict",
    "config_hash",
    "config_to_dict",
    "decode",
    "encode",
    "is_fresh",
    "load",
    "load_or_run",
    "payload_digest",
    "read_only",
    "read_stored",
    "result_path",
    "results_root",
    "run_units",
    "stale_results",
    "store",
]

FORMAT_VERSION = 3
_LIB_ROOT = Path(__file__).resolve().parents[1]  # .../lib/fedrepro
_REPO_ROOT = _LIB_ROOT.parents[1]
_FILE_MODE = 0o644


def results_root() -> Path:
    """Folder holding the results store (absolute).

    ``$FEDREPRO_RESULTS_DIR`` when set, resolved from the folder the command was started in
    (the chapter runner and the test suite pass it on as an absolute path), otherwise
    ``data/results`` of the repository.
    """
    env = os.environ.get("FEDREPRO_RESULTS_DIR")
    return Path(env).resolve() if env else _REPO_ROOT / "data" / "results"


def code_hash(roots: Sequence[str]) -> str:
    """Hash of the normalised code of every library module the ``roots`` import, transitively.

    Roots outside the library (a test's helper module) count by their own normalised source
    and by the library modules they import."""
    from fedrepro.core import codehash

    lib_roots: set[str] = set()
    extra = hashlib.sha256()
    for name in sorted(set(roots)):
        if name == codehash.PACKAGE or name.startswith(codehash.PACKAGE + "."):
            lib_roots.add(name)
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            raise ValueError(f"code module {name!r} cannot be found")
        path = Path(spec.origin)
        extra.update(name.encode() + b"\0" + codehash.normalised_hash(path).encode() + b"\0")
        lib_roots.update(_library_imports(path, codehash.PACKAGE))
    return hashlib.sha256((codehash.code_hash(sorted(lib_roots)) + extra.hexdigest()).encode()).hexdigest()


def _library_imports(path: Path, package: str) -> set[str]:
    import ast

    from fedrepro.core import codehash

    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name.split(".")[0] == package:
                with contextlib.suppress(ValueError):
                    codehash.module_path(name)
                    out.add(name)
    return out


def _function_path(fn: Callable[..., Any] | None) -> str | None:
    """``module:qualname`` of a module-level function (``None`` for closures and lambdas)."""
    if fn is None:
        return None
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def resolve_function(path: str) -> Callable[..., Any]:
    """The function named by ``module:qualname``."""
    module_name, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _code_roots(config: ExperimentConfig, runner: Mapping[str, Any] | None) -> list[str]:
    roots = {type(config).__module__}
    for key in ("run", "unit", "combine"):
        path = (runner or {}).get(key)
        if path:
            roots.add(path.partition(":")[0])
    return sorted(roots)


def current_runner(config: ExperimentConfig, runner: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``runner`` with each function named where it is defined now: a stored
    ``module:qualname`` is resolved (a module that re-exports the function leads to the module
    that defines it), and one that no longer resolves is looked up, by its name, in the module
    of the config's class (where an experiment's run functions live with its config)."""
    if runner is None:
        return None
    out = dict(runner)
    for key in ("run", "unit", "combine"):
        path = out.get(key)
        if not path:
            continue
        for candidate in (path, f"{type(config).__module__}:{path.partition(':')[2]}"):
            try:
                fn = resolve_function(candidate)
            except (ImportError, AttributeError):
                continue
            out[key] = _function_path(fn) or candidate
            break
    return out


def machine_meta(wall_s: float | None = None) -> dict[str, Any]:
    """What a result's metadata says about how it was computed (no identity, no local path):
    the wall time, the CPU, the torch device, the executor and its workers, Python's version."""
    import platform

    from fedrepro.core.device import DEFAULT_DEVICE, DEVICE_VARIABLE
    from fedrepro.core.executors import executor_name, worker_count

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    meta: dict[str, Any] = {
        "cpu": cpu, "cores": os.cpu_count() or 1,
        "device": os.environ.get(DEVICE_VARIABLE) or DEFAULT_DEVICE,
        "executor": executor_name(), "workers": worker_count(),
        "python": platform.python_version(),
    }
    if wall_s is not None:
        meta["wall_s"] = round(float(wall_s), 1)
    return meta


def _dumps(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, indent=1, allow_nan=False) + "\n"


def payload_digest(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a stored payload without its ``digest`` entry."""
    body = {k: v for k, v in payload.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------- storage


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` atomically: ``write(fh)`` fills a temp file (binary) in the same folder,
    which is fsynced, given mode 0644 and renamed over ``path``; on any error nothing is left
    behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def result_path(config: ExperimentConfig, root: Path | None = None) -> Path:
    """Where the result of ``config`` is stored."""
    cls = type(config)
    if not cls.part or not config.result_name():
        raise ValueError(f"{cls.__name__} must set the class variables 'part' and 'experiment'")
    return (Path(root).resolve() if root else results_root()) / cls.part / f"{config.result_name()}.json"


def _display(path: Path) -> str:
    """``<part>/<name>.json``: how errors name a result (no local paths)."""
    return f"{path.parent.name}/{path.name}"


@dataclasses.dataclass(frozen=True)
class StoredResult:
    """A result read back from the store, with what it was computed from."""

    path: Path
    class_path: str
    config: dict[str, Any]
    config_hash: str
    code_hash: str
    code_roots: tuple[str, ...]
    runner: dict[str, Any] | None
    result: dict[str, Any]
    units: dict[str, Any] | None = None
    #: The declared identity ``{"part", "experiment"}`` of its config.
    identity: dict[str, str] | None = None
    #: How it was computed (:func:`machine_meta`) or carried over; part of no identity.
    meta: dict[str, Any] | None = None


class MissingResult(LookupError):
    """No fresh stored result where one may not be computed (read-only contexts)."""


class CorruptResult(MissingResult):
    """A stored file whose digest does not match its contents (edited or damaged)."""


def store(config: ExperimentConfig, result: Mapping[str, Any], root: Path | None = None, *,
          runner: Mapping[str, Any] | None = None,
          units: Mapping[str, Any] | None = None, code_hash_: str | None = None,
          meta: Mapping[str, Any] | None = None) -> Path:
    """Store ``result`` for ``config`` atomically and return its path.

    ``runner`` says how to recompute it (``{"run": "module:function"}`` or
    ``{"unit": ..., "units": [...], "combine": ...}``); ``units`` keeps the unit results for a
    spot check (``verify_units``); ``code_hash_`` is the code hash taken when the computation
    started (default: now); ``meta`` says how it was computed (:func:`machine_meta`)."""
    cls = type(config)
    roots = _code_roots(config, runner)
    payload: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "identity": identity(config),
        "class": _class_path(cls),
        "config": config_to_dict(config),
        "config_hash": config_hash(config),
        "code_roots": roots,
        "code_hash": code_hash_ or code_hash(roots),
        "runner": dict(runner) if runner else None,
        "result": encode(dict(result)),
        "meta": encode(dict(meta)) if meta is not None else None,
    }
    if units is not None:
        payload["units"] = encode(dict(units))
    payload["digest"] = payload_digest(payload)
    path = result_path(config, root)
    atomic_write_text(path, _dumps(payload))
    return path


def read_stored(path: Path) -> tuple[StoredResult | None, str]:
    """Read a stored file: ``(result, "ok")``, or ``(None, reason)`` when it is missing,
    unreadable, written by an older format, or corrupt (digest mismatch)."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError) as exc:
        return None, f"unreadable ({exc})"
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION:
        return None, "stale: written by an older version of the results store"
    if payload.get("digest") != payload_digest(payload):
        return None, "corrupt: its contents do not match their digest (edited by hand or damaged)"
    try:
        stored = StoredResult(
            path=path, class_path=payload["class"], config=payload["config"],
            config_hash=payload["config_hash"], code_hash=payload["code_hash"],
            code_roots=tuple(payload["code_roots"]), runner=payload.get("runner"),
            result=decode(payload["result"]),
            units=decode(payload["units"]) if "units" in payload else None,
            identity=payload["identity"], meta=decode(payload.get("meta")))
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"unreadable ({exc})"
    return stored, "ok"


def _check(config: ExperimentConfig, path: Path) -> tuple[StoredResult | None, str]:
    """The stored result of ``config`` at ``path`` if fresh, else ``(None, why)``."""
    stored, why = read_stored(path)
    if stored is None:
        return None, why
    if stored.config_hash != config_hash(config):
        return None, "stale: stored for another config"
    try:
        current = code_hash(_code_roots(config, current_runner(config, stored.runner)))
    except ValueError:
        return None, "stale: its run code cannot be found"
    if stored.code_hash != current:
        return None, "stale: library code changed since it was computed"
    return stored, "fresh"


def load(config: ExperimentConfig, root: Path | None = None) -> StoredResult | None:
    """The stored result of ``config`` if present, intact and fresh; else ``None``."""
    return _check(config, result_path(config, root))[0]


def load_if_computed(config: ExperimentConfig, root: Path | None = None) -> StoredResult | None:
    """The stored result of ``config`` if fresh; ``None`` when it is not computed yet or stale
    (pending a recomputation). A corrupt or unreadable file is an error naming it, never taken
    for "not computed" (a page that lists the computed seeds must not silently drop one)."""
    path = result_path(config, root)
    stored, why = _check(config, path)
    if stored is None and why.startswith(("corrupt", "unreadable")):
        raise _refuse(path, why)
    return stored


def is_fresh(path: Path) -> tuple[bool, str]:
    """Whether a stored result still matches its config class and code; with the reason."""
    stored, why = read_stored(path)
    if stored is None:
        return False, why
    try:
        config = config_from_dict(stored.class_path, stored.config, stored.identity)
    except (ImportError, AttributeError, TypeError, LookupError) as exc:
        return False, f"stale: config class of {stored.identity} cannot be rebuilt ({exc})"
    if config_hash(config) != stored.config_hash:
        return False, "stale: config hash differs (config class changed)"
    try:
        current = code_hash(_code_roots(config, current_runner(config, stored.runner)))
    except ValueError as exc:
        return False, f"stale: {exc}"
    if current != stored.code_hash:
        return False, "stale: code hash differs (library code changed since it was computed)"
    return True, "fresh"


def stored_files(root: Path | None = None) -> list[Path]:
    """Every stored experiment result under ``root`` (files with a ``"class"`` entry; the
    in-progress unit folders and other JSON files, e.g. the scorecard, are skipped)."""
    root = Path(root).resolve() if root else results_root()
    out = []
    for path in sorted(root.rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            out.append(path)  # unreadable: reported by stale_results
            continue
        if isinstance(head, dict) and "class" in head:
            out.append(path)
    return out


def stale_results(root: Path | None = None) -> list[tuple[Path, str]]:
    """Every stored experiment result under ``root`` that is not fresh, with the reason."""
    out = []
    for path in stored_files(root):
        fresh, why = is_fresh(path)
        if not fresh:
            out.append((path, why))
    return out


# --------------------------------------------------------------------------- policies


_READ_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("fedrepro_read_only", default=False)


@contextlib.contextmanager
def read_only() -> Iterator[None]:
    """Within this block :func:`load_or_run` (and :func:`run_units`) only read the store:
    a missing, stale or corrupt result raises :class:`MissingResult` instead of being computed.

    The scorecard uses it, so that it reports what the chapters have computed and never
    starts a long computation itself.
    """
    token = _READ_ONLY.set(True)
    try:
        yield
    finally:
        _READ_ONLY.reset(token)


def _protected(root: Path) -> bool:
    """Whether ``root`` is the store named by ``$FEDREPRO_READ_ONLY_STORE``."""
    env = os.environ.get("FEDREPRO_READ_ONLY_STORE")
    return bool(env) and Path(env).resolve() == Path(root).resolve()


def store_is_read_only(root: Path) -> bool:
    """Whether this context may only read the store at ``root`` (inside :func:`read_only`, or
    ``root`` is ``$FEDREPRO_READ_ONLY_STORE``): what writes beside results (the scorecard)
    must then leave the store as it is."""
    return _READ_ONLY.get() or _protected(root)


def _refuse(path: Path, why: str) -> MissingResult:
    cls = CorruptResult if why.startswith("corrupt") else MissingResult
    return cls(f"result {_display(path)} is {why if why != 'missing' else 'not computed'}: "
               f"this context only reads the results store; run `make book` to (re)compute it")


def _guard_paper_profile(config: ExperimentConfig, path: Path) -> None:
    if os.environ.get("FEDREPRO_NO_PAPER_COMPUTE") == "1" and getattr(config, "profile", None) == "paper":
        raise RuntimeError(
            f"computing the paper-profile result {_display(path)} is not allowed here "
            "($FEDREPRO_NO_PAPER_COMPUTE=1, set by the test suite): use profile='quick', or read "
            "the committed store (run `make book` if it is stale)")


if os.environ.get("FEDREPRO_FORCE") == "1" and not os.environ.get("FEDREPRO_FORCE_SINCE"):
    # the start of this forced run; processes started from here (chapter kernels, workers)
    # inherit it, so each result is recomputed once per run
    os.environ["FEDREPRO_FORCE_SINCE"] = repr(time.time())
_FORCED_HERE: set[Path] = set()


def _force_applies(force: bool | None, path: Path) -> bool:
    """Explicit ``force=True`` always recomputes; ``$FEDREPRO_FORCE=1`` recomputes a result
    that this run has not recomputed yet."""
    if force is not None:
        return force
    if os.environ.get("FEDREPRO_FORCE", "") != "1":
        return False
    if path in _FORCED_HERE:
        return False
    since = os.environ.get("FEDREPRO_FORCE_SINCE")
    if since:
        with contextlib.suppress(OSError, ValueError):
            if path.stat().st_mtime >= float(since):
                return False
    return True


_locks: dict[Path, Any] = {}
_locks_guard = threading.Lock()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Exclusive lock on one result across processes (a file under ``<store>/.locks``)."""
    from filelock import FileLock, Timeout

    lock_file = path.parent.parent / ".locks" / path.parent.name / f"{path.name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with _locks_guard:
        lock = _locks.setdefault(lock_file, FileLock(str(lock_file)))
    try:
        lock.acquire(timeout=0.5)
    except Timeout:
        import sys

        print(f"waiting for another process computing {_display(path)} ...", file=sys.stderr, flush=True)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _check_finite(name: str, value: Any) -> None:
    if isinstance(value, (bool, int, str)) or value is None:
        return
    if isinstance(value, numbers.Real):
        if not math.isfinite(float(value)):
            raise ValueError(f"config field {name} must be a finite number, got {value!r}: a NaN or "
                             "infinite value cannot key a stored result")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_finite(f"{name}[{i}]", item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_finite(f"{name}[{key!r}]", item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _check_finite(f"{name}.{f.name}", getattr(value, f.name))


def check_config_values(config: ExperimentConfig) -> None:
    """Refuse, before anything is computed, a config holding a NaN or infinite number (in a
    field, or inside a tuple, mapping or dataclass field): it would be stored as a string and
    could not be recomputed by ``make verify``. The error names the field."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        for f in dataclasses.fields(config):
            _check_finite(f.name, getattr(config, f.name))


def _compute_and_store(config: ExperimentConfig, compute: Callable[[ExperimentConfig], Any],
                       runner: Mapping[str, Any], force: bool | None, root: Path | None,
                       ) -> dict[str, Any]:
    check_config_values(config)
    path = result_path(config, root)
    if store_is_read_only(path.parent.parent):
        stored, why = _check(config, path)
        if stored is None:
            raise _refuse(path, why)
        return stored.result
    if not _force_applies(force, path):
        stored, why = _check(config, path)
        if stored is not None:
            return stored.result
        if why.startswith(("corrupt", "unreadable")):
            warnings.warn(f"recomputing {_display(path)}: {why}", stacklevel=3)
    _guard_paper_profile(config, path)
    with _locked(path):
        if not _force_applies(force, path):  # another process may have computed it meanwhile
            stored, _ = _check(config, path)
            if stored is not None:
                return stored.result
        # the code the computation starts from: an edit while it runs leaves the result stale
        started_with = code_hash(_code_roots(config, runner))
        t0 = time.perf_counter()
        out = compute(config)
        wall_s = time.perf_counter() - t0
        result, units = out if isinstance(out, tuple) else (out, None)
        if not isinstance(result, Mapping):
            raise TypeError(f"run() must return a mapping, got {type(result).__name__}")
        store(config, result, root, runner=runner, units=units, code_hash_=started_with,
              meta=machine_meta(wall_s))
        if os.environ.get("FEDREPRO_FORCE", "") == "1":
            _FORCED_HERE.add(path)
    # Return what a later load returns (same values, same key order), so fresh and cached
    # runs look the same.
    return decode(json.loads(_dumps(encode(dict(result)))))


def load_or_run(
    config: ExperimentConfig,
    run: Callable[[ExperimentConfig], Mapping[str, Any]],
    *,
    force: bool | None = None,
    root: Path | None = None,
) -> dict[str, Any]:
    """Return the fresh stored result of ``config``, computing and storing it if needed.

    ``run`` should be a module-level function (``make verify`` recomputes the result by
    calling it again). ``force=True`` ignores the store and recomputes;
    ``$FEDREPRO_FORCE=1`` (``make reproduce``) recomputes each result once per run. In a
    read-only context a missing, stale or corrupt result raises :class:`MissingResult`.
    """
    return _compute_and_store(config, run, {"run": _function_path(run)}, force, root)


def _units_dir(config: ExperimentConfig, root: Path | None, runner: Mapping[str, Any]) -> Path:
    path = result_path(config, root)
    roots = _code_roots(config, runner)
    return path.parent / ".units" / f"{path.stem}-{config_hash(config)[:16]}-{code_hash(roots)[:16]}"


def _check_units(units: Sequence[str]) -> list[str]:
    units = list(units)
    if len(set(units)) != len(units):
        raise ValueError("units must be distinct")
    for unit in units:
        if not isinstance(unit, str) or not unit or "/" in unit or unit.startswith("."):
            raise ValueError(f"unit name {unit!r} must be a non-empty file-name-safe string")
    return units


def run_units(
    config: ExperimentConfig,
    units: Sequence[str],
    run_unit: Callable[[ExperimentConfig, str], Mapping[str, Any]],
    *,
    combine: Callable[[ExperimentConfig, dict[str, dict[str, Any]]], Mapping[str, Any]] | None = None,
    force: bool | None = None,
    root: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Resumable :func:`load_or_run` for an experiment made of independent units.

    ``run_unit(config, unit)`` must be a pure, module-level function of its arguments: the
    units run through the executor the environment selects (serial; ``$FEDREPRO_WORKERS``
    local processes; a Dask cluster at ``$FEDREPRO_DASK_SCHEDULER``), with identical results
    whichever is used (up to the last bits where a unit's BLAS thread count matters). Each
    finished unit is stored at once (atomically) in a hidden folder next to the result; a
    re-run after an interruption skips the units already done. When all units are done,
    ``combine(config, {unit: result})`` (default: the dict itself, under ``"units"``) is stored
    as the experiment's result and the unit files are removed. A progress bar (tqdm) counts
    the finished units.
    """
    units = _check_units(units)
    root_path = Path(root).resolve() if root else None
    path = result_path(config, root_path)
    runner = {"unit": _function_path(run_unit), "units": units, "combine": _function_path(combine)}

    def compute(cfg: ExperimentConfig) -> tuple[dict[str, Any], dict[str, Any] | None]:
        from fedrepro.core.executors import map_units

        folder = _units_dir(cfg, root_path, runner)
        reuse = not _force_applies(force, path)  # a forced run ignores units of an interrupted run
        done: dict[str, dict[str, Any]] = {}
        todo = []
        for unit in units:
            stored = _read_unit(folder / f"{unit}.json") if reuse else None
            if stored is None:
                todo.append(unit)
            else:
                done[unit] = stored
        for unit, res in map_units(run_unit, cfg, todo, desc=f"{type(cfg).part}/{cfg.result_name()}",
                                   progress=progress, initial=len(done), total=len(units)):
            text = _dumps(encode(dict(res)))
            atomic_write_text(folder / f"{unit}.json", text)
            done[unit] = decode(json.loads(text))
        ordered = {u: done[u] for u in units}
        combined = dict(combine(cfg, ordered)) if combine else {"units": ordered}
        return combined, (ordered if type(cfg).verify_units is not None else None)

    result = _compute_and_store(config, compute, runner, force, root_path)
    _remove_units(_units_dir(config, root_path, runner), units)
    return result


def finished_units(config: ExperimentConfig, units: Sequence[str],
                   run_unit: Callable[[ExperimentConfig, str], Mapping[str, Any]], *,
                   combine: Callable[[ExperimentConfig, dict[str, dict[str, Any]]], Mapping[str, Any]] | None = None,
                   root: Path | None = None) -> list[str]:
    """The units of ``units`` that an interrupted or running :func:`run_units` (same
    arguments) has already stored; computes nothing (a page that reports progress)."""
    units = _check_units(units)
    runner = {"unit": _function_path(run_unit), "units": units, "combine": _function_path(combine)}
    folder = _units_dir(config, Path(root).resolve() if root else None, runner)
    return [u for u in units if (folder / f"{u}.json").is_file()]


def run_unit_spot_check(config: ExperimentConfig, run_unit: Callable[[ExperimentConfig, str], Mapping[str, Any]],
                        units: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Recompute some units of a :func:`run_units` experiment (no store involved): what
    ``make verify`` compares with the units a result keeps when ``verify_units`` is set."""
    check_config_values(config)
    out = {}
    for unit in _check_units(units):
        out[unit] = decode(json.loads(_dumps(encode(dict(run_unit(config, unit))))))
    return out


def _remove_units(folder: Path, units: Sequence[str]) -> None:
    """Remove this experiment's unit files (only those: other processes' temp files stay)."""
    if not folder.exists():
        return
    for unit in units:
        (folder / f"{unit}.json").unlink(missing_ok=True)
    for d in (folder, folder.parent):
        try:
            d.rmdir()
        except OSError:
            break  # not empty (another run's files) or already gone


def _read_unit(path: Path) -> dict[str, Any] | None:
    try:
        return decode(json.loads(path.read_text(encoding="utf-8")))
    except (FileNotFoundError, ValueError):
        return None
