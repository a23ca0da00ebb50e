"""Results store: computed results keyed by their experiment config and library code.

A result flows as ``config -> run(config) -> result -> data/results/<part>/<name>.json``.
Each stored file records

* the config (as plain JSON) and the dotted path of its class,
* ``config_hash``: SHA-256 of the canonical JSON of the config,
* ``code_hash``: SHA-256 of the source files of the library modules the config declares
  it depends on (``ExperimentConfig.code_modules``),
* the result itself (a plain dict of floats, ints, strings, lists and numpy arrays).

A stored result is *fresh* when both hashes equal the ones recomputed now; otherwise it is
*stale* and is never returned by :func:`load_or_run` (it is recomputed). Writes are atomic
(temporary file in the same folder, ``fsync``, then :func:`os.replace`), so a writer killed
half-way leaves either the previous file or none, never a half file; a file that cannot be
parsed is treated as missing.

Long runs made of independent units (Monte Carlo trials, grid points) go through
:func:`run_units`, which stores every finished unit at once: an interrupted run loses at
most the unit in progress and resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import numpy as np

__all__ = [
    "MissingResult",
    "atomic_write",
    "read_only",
    "ExperimentConfig",
    "StoredResult",
    "atomic_write_text",
    "code_hash",
    "config_hash",
    "config_to_dict",
    "config_from_dict",
    "decode",
    "encode",
    "is_fresh",
    "load",
    "load_or_run",
    "result_path",
    "results_root",
    "run_units",
    "stale_results",
    "store",
]

FORMAT_VERSION = 1
_LIB_ROOT = Path(__file__).resolve().parents[1]  # .../lib/fedrepro
_REPO_ROOT = _LIB_ROOT.parents[1]


def results_root() -> Path:
    """Folder holding the results store.

    ``$FEDREPRO_RESULTS_DIR`` when set (tests and quick runs use a temporary folder),
    otherwise ``data/results`` of the repository.
    """
    env = os.environ.get("FEDREPRO_RESULTS_DIR")
    return Path(env) if env else _REPO_ROOT / "data" / "results"


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """Base class of every experiment config (a frozen dataclass).

    Subclasses set the class variables

    * ``part``: the book part (``"fedplt"``, ``"dpfedpaq"``, ``"alidpfl"``, ``"privacy"``),
    * ``experiment``: the experiment name (file stem of the stored result),
    * ``code_modules``: dotted names of the library modules or packages whose source the
      result depends on; a change in any of them makes the stored result stale.

    and declare their parameters as dataclass fields (JSON-able values only: numbers,
    strings, booleans, None, tuples of these).
    """

    part: ClassVar[str] = ""
    experiment: ClassVar[str] = ""
    code_modules: ClassVar[tuple[str, ...]] = ()

    def result_name(self) -> str:
        """File stem under ``<results_root>/<part>/``.

        ``experiment``, suffixed with the profile when the config has a ``profile`` field
        other than ``"paper"``, so quick runs never overwrite the paper's results.
        Override to store several configs of one experiment side by side.
        """
        profile = getattr(self, "profile", "paper")
        return self.experiment if profile == "paper" else f"{self.experiment}-{profile}"


# --------------------------------------------------------------------------- hashing


def _canonical(obj: Any) -> Any:
    """Turn ``obj`` into canonical JSON-able data (tuples become lists, keys sorted later)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return repr(obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"config value {obj!r} of type {type(obj).__name__} is not JSON-able")


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def config_to_dict(config: ExperimentConfig) -> dict[str, Any]:
    """The config's fields as canonical JSON-able data."""
    if not (dataclasses.is_dataclass(config) and not isinstance(config, type)):
        raise TypeError(f"config must be a dataclass instance, got {type(config).__name__}")
    return _canonical(config)


def config_from_dict(class_path: str, data: Mapping[str, Any]) -> ExperimentConfig:
    """Rebuild a config from its class path (``module:QualName``) and stored fields."""
    module_name, _, qualname = class_path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    kwargs = {}
    for field in dataclasses.fields(obj):
        if field.name in data:
            value = data[field.name]
            kwargs[field.name] = _retuple(value)
    return obj(**kwargs)


def _retuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_retuple(v) for v in value)
    return value


def config_hash(config: ExperimentConfig) -> str:
    """SHA-256 of the canonical JSON of the config and its class path."""
    payload = {"class": _class_path(type(config)), "fields": config_to_dict(config)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _module_files(name: str) -> list[Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ValueError(f"code module {name!r} cannot be found")
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package: every .py file below it
        root = origin.parent
        return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return [origin]


def code_hash(modules: Iterable[str]) -> str:
    """SHA-256 over the source files of the given modules/packages (path + bytes)."""
    h = hashlib.sha256()
    files: dict[str, Path] = {}
    for name in modules:
        for path in _module_files(name):
            try:
                rel = path.resolve().relative_to(_LIB_ROOT.parent).as_posix()
            except ValueError:
                rel = path.name
            files[rel] = path
    for rel in sorted(files):
        h.update(rel.encode() + b"\0")
        h.update(files[rel].read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return h.hexdigest()


def _config_code_hash(config: ExperimentConfig) -> str:
    return code_hash(type(config).code_modules)


# --------------------------------------------------------------------------- encoding


def encode(obj: Any) -> Any:
    """Encode a result for JSON: numpy arrays keep dtype and shape; non-finite floats survive."""
    if isinstance(obj, np.ndarray):
        return {
            "__ndarray__": encode(obj.tolist()),
            "dtype": str(obj.dtype),
            "shape": list(obj.shape),
        }
    if isinstance(obj, np.generic):
        return encode(obj.item())
    if isinstance(obj, float):
        if np.isnan(obj):
            return {"__float__": "nan"}
        if np.isinf(obj):
            return {"__float__": "inf" if obj > 0 else "-inf"}
        return obj
    if isinstance(obj, Mapping):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    raise TypeError(f"result value of type {type(obj).__name__} cannot be stored")


def decode(obj: Any) -> Any:
    """Inverse of :func:`encode`."""
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            data = decode(obj["__ndarray__"])
            return np.asarray(data, dtype=obj["dtype"]).reshape(obj["shape"])
        if "__float__" in obj and len(obj) == 1:
            return float(obj["__float__"])
        return {k: decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    return obj


def _dumps(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, indent=1, allow_nan=False) + "\n"


# --------------------------------------------------------------------------- storage


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write ``path`` atomically: ``write(fh)`` fills a temp file (binary) in the same folder,
    which is fsynced and renamed over ``path``; on any error nothing is left behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
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
    return (root or results_root()) / cls.part / f"{config.result_name()}.json"


@dataclasses.dataclass(frozen=True)
class StoredResult:
    """A result read back from the store, with what it was computed from."""

    path: Path
    class_path: str
    config: dict[str, Any]
    config_hash: str
    code_hash: str
    code_modules: tuple[str, ...]
    result: dict[str, Any]


def store(config: ExperimentConfig, result: Mapping[str, Any], root: Path | None = None) -> Path:
    """Store ``result`` for ``config`` atomically and return its path."""
    cls = type(config)
    payload = {
        "format": FORMAT_VERSION,
        "class": _class_path(cls),
        "config": config_to_dict(config),
        "config_hash": config_hash(config),
        "code_modules": list(cls.code_modules),
        "code_hash": _config_code_hash(config),
        "result": encode(dict(result)),
    }
    path = result_path(config, root)
    atomic_write_text(path, _dumps(payload))
    return path


def _read(path: Path) -> StoredResult | None:
    """Read a stored file; ``None`` (with a warning) if it is missing or unreadable."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        return StoredResult(
            path=Path(path),
            class_path=payload["class"],
            config=payload["config"],
            config_hash=payload["config_hash"],
            code_hash=payload["code_hash"],
            code_modules=tuple(payload["code_modules"]),
            result=decode(payload["result"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        warnings.warn(f"ignoring unreadable result file {Path(path).name}: {exc}", stacklevel=3)
        return None


def load(config: ExperimentConfig, root: Path | None = None) -> StoredResult | None:
    """The stored result of ``config`` if present, readable and fresh; else ``None``."""
    stored = _read(result_path(config, root))
    if stored is None:
        return None
    if stored.config_hash != config_hash(config) or stored.code_hash != _config_code_hash(config):
        return None
    return stored


def is_fresh(path: Path) -> tuple[bool, str]:
    """Whether a stored result still matches its config class and code; with the reason."""
    stored = _read(path)
    if stored is None:
        return False, "missing or unreadable"
    try:
        config = config_from_dict(stored.class_path, stored.config)
    except (ImportError, AttributeError, TypeError) as exc:
        return False, f"config class {stored.class_path} cannot be rebuilt: {exc}"
    if config_hash(config) != stored.config_hash:
        return False, "config hash differs (config class changed)"
    if tuple(type(config).code_modules) != stored.code_modules:
        return False, "declared code modules changed"
    if _config_code_hash(config) != stored.code_hash:
        return False, "code hash differs (library code changed since it was computed)"
    return True, "fresh"


def stale_results(root: Path | None = None) -> list[tuple[Path, str]]:
    """Every stored experiment result under ``root`` that is not fresh, with the reason.

    Files that are not experiment results (no ``"class"`` key, e.g. the scorecard) and
    the in-progress unit folders are skipped.
    """
    root = root or results_root()
    out = []
    for path in sorted(Path(root).rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            head = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            out.append((path, "unreadable JSON"))
            continue
        if not isinstance(head, dict) or "class" not in head:
            continue
        fresh, why = is_fresh(path)
        if not fresh:
            out.append((path, why))
    return out


def _resolve_force(force: bool | None) -> bool:
    """``force`` as given, or ``$FEDREPRO_FORCE == "1"`` when it is None."""
    return os.environ.get("FEDREPRO_FORCE", "") == "1" if force is None else force


class MissingResult(LookupError):
    """Raised by :func:`load_or_run` under :func:`read_only` when no fresh result is stored."""


_READ_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("fedrepro_read_only", default=False)


@contextlib.contextmanager
def read_only() -> Iterator[None]:
    """Within this block :func:`load_or_run` (and :func:`run_units`) only read the store:
    a missing or stale result raises :class:`MissingResult` instead of being computed.

    The scorecard uses it, so that it reports what the chapters have computed and never
    starts a long computation itself.
    """
    token = _READ_ONLY.set(True)
    try:
        yield
    finally:
        _READ_ONLY.reset(token)


def load_or_run(
    config: ExperimentConfig,
    run: Callable[[ExperimentConfig], Mapping[str, Any]],
    *,
    force: bool | None = None,
    root: Path | None = None,
) -> dict[str, Any]:
    """Return the fresh stored result of ``config``, computing and storing it if needed.

    ``force=True`` (or ``$FEDREPRO_FORCE=1``, which ``make reproduce`` sets) ignores the
    store and recomputes.
    """
    if _READ_ONLY.get():
        stored = load(config, root)
        if stored is None:
            raise MissingResult(
                f"no fresh stored result for {type(config).part}/{config.result_name()} "
                f"({type(config).__name__}); run the chapter that computes it")
        return stored.result
    force = _resolve_force(force)
    if not force:
        stored = load(config, root)
        if stored is not None:
            return stored.result
    result = run(config)
    if not isinstance(result, Mapping):
        raise TypeError(f"run() must return a mapping, got {type(result).__name__}")
    store(config, result, root)
    # Return what a later load returns (same values, same key order), so fresh and cached
    # runs look the same.
    return decode(json.loads(_dumps(encode(dict(result)))))


def _units_dir(config: ExperimentConfig, root: Path | None) -> Path:
    path = result_path(config, root)
    return path.parent / ".units" / f"{path.stem}-{config_hash(config)[:16]}-{_config_code_hash(config)[:16]}"


def run_units(
    config: ExperimentConfig,
    units: Sequence[str],
    run_unit: Callable[[ExperimentConfig, str], Mapping[str, Any]],
    *,
    combine: Callable[[dict[str, dict[str, Any]]], Mapping[str, Any]] | None = None,
    force: bool | None = None,
    root: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Resumable :func:`load_or_run` for an experiment made of independent units.

    Each finished unit is stored at once (atomically) in a hidden folder next to the
    result; a re-run after an interruption skips the units already done, so at most the
    unit in progress is lost. When all units are done, ``combine({unit: result})`` (default:
    the dict itself, under ``"units"``) is stored as the experiment's result and the unit
    files are removed. A progress bar (tqdm) shows the units.
    """
    force = _resolve_force(force)  # a forced run also ignores units of an interrupted run
    if len(set(units)) != len(units):
        raise ValueError("units must be distinct")
    for unit in units:
        if not unit or "/" in unit or unit.startswith("."):
            raise ValueError(f"unit name {unit!r} must be a non-empty file-name-safe string")

    def _run_all(cfg: ExperimentConfig) -> Mapping[str, Any]:
        folder = _units_dir(cfg, root)
        done: dict[str, dict[str, Any]] = {}
        todo = []
        for unit in units:
            stored = None if force else _read_unit(folder / f"{unit}.json")
            if stored is None:
                todo.append(unit)
            else:
                done[unit] = stored
        if todo:
            from tqdm import tqdm  # plain text bar: no widget needed in a notebook

            bar = tqdm(todo, desc=f"{type(cfg).part}/{cfg.result_name()}", disable=not progress,
                       initial=len(done), total=len(units), leave=False)
            for unit in bar:
                res = dict(run_unit(cfg, unit))
                text = _dumps(encode(res))
                atomic_write_text(folder / f"{unit}.json", text)
                done[unit] = decode(json.loads(text))
        ordered = {u: done[u] for u in units}
        combined = dict(combine(ordered)) if combine else {"units": ordered}
        return combined

    result = load_or_run(config, _run_all, force=force, root=root)
    folder = _units_dir(config, root)
    if folder.exists():
        for f in folder.glob("*"):
            f.unlink()
        folder.rmdir()
        try:
            folder.parent.rmdir()
        except OSError:
            pass
    return result


def _read_unit(path: Path) -> dict[str, Any] | None:
    try:
        return decode(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except ValueError:
        return None
