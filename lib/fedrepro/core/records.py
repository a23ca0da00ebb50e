"""What a stored result is made of: experiment configs and the canonical form of their values.

:class:`ExperimentConfig` (a frozen dataclass per experiment), its canonical JSON and hash,
and the encoding of result values for JSON. These decide seeds (:mod:`fedrepro.core.rng`
derives them from the canonical config) and the values a chapter gets back, so every
result's code hash covers this module. The results store that moves records to and from
disk (:mod:`fedrepro.core.cache`) is not part of any result's code: it only stores values,
and its tests pin that it returns exactly what was computed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

__all__ = ["RUN_PACKAGES", "ExperimentConfig", "config_class", "config_from_dict", "config_hash", "config_to_dict",
           "decode", "discover_configs", "encode", "identity", "registered_configs"]


@dataclasses.dataclass(frozen=True)
class ExperimentConfig:
    """Base class of every experiment config (a frozen dataclass).

    Subclasses set the class variables

    * ``part``: the book part (``"fedplt"``, ``"dpfedpaq"``, ``"alidpfl"``, ``"privacy"``),
    * ``experiment``: the experiment name (file stem of the stored result),

    and may set how ``make verify`` compares a recomputed result with the stored one:

    * ``verify_rtol`` / ``verify_atol``: the tolerance (``|a - b| <= atol + rtol |b|``,
      default ``1e-9`` relative and ``1e-12`` absolute: every quantity of the book is far
      above ``1e-12`` unless it is a round-off residual, whose digits differ between CPUs),
      with ``verify_note`` saying why when it is looser (results sensitive to the BLAS
      kernel);
    * ``verify_rules``: ``(pattern, rtol, atol)`` for the values whose dotted path
      (``result.units.*.rate``, ``fnmatch`` syntax) matches, with ``rtol = None`` for values
      that are not compared at all because they depend on the search path (e.g. *which*
      instance attains a bound that every instance attains), with ``verify_note`` saying why;
    * ``verify_units``: for results too long to recompute in CI, the number of units of a
      :func:`run_units` experiment that are recomputed and compared (a spot check); the
      stored result then keeps its units.

    Parameters are dataclass fields (JSON-able values only: numbers, strings, booleans,
    None, tuples of these).

    A config's identity is what it declares, ``(part, experiment)`` and its fields
    (:func:`config_hash`), never where its class lives: its random streams are named from the
    same declared identity (:mod:`fedrepro.core.streams`), and a stored result finds its
    config class again by that identity (:func:`config_class`) after the class has moved.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a class that declares its own experiment is the config of that experiment
        if cls.__dict__.get("experiment") and cls.part:
            _REGISTRY.setdefault((cls.part, cls.experiment), {})[_class_path(cls)] = cls

    part: ClassVar[str] = ""
    experiment: ClassVar[str] = ""
    verify_rtol: ClassVar[float] = 1e-9
    verify_atol: ClassVar[float] = 1e-12
    verify_note: ClassVar[str] = ""
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = ()
    verify_units: ClassVar[int | None] = None

    def result_name(self) -> str:
        """File stem under ``<results_root>/<part>/``.

        ``experiment``, suffixed with the profile when the config has a ``profile`` field
        other than ``"paper"``, so quick runs never overwrite the paper's results.
        Override to store several configs of one experiment side by side.
        """
        profile = getattr(self, "profile", "paper")
        return self.experiment if profile == "paper" else f"{self.experiment}-{profile}"


#: ``(part, experiment) -> {class path: class}`` of every config class imported so far.
_REGISTRY: dict[tuple[str, str], dict[str, type]] = {}
#: The packages whose modules define the experiments' config classes (the runs layer).
RUN_PACKAGES: tuple[str, ...] = ("fedrepro.experiments",)


def identity(config: ExperimentConfig | type) -> dict[str, str]:
    """The declared identity of a config (or config class): ``{"part", "experiment"}``."""
    cls = config if isinstance(config, type) else type(config)
    return {"part": getattr(cls, "part", ""), "experiment": getattr(cls, "experiment", "")}


def discover_configs() -> None:
    """Import every module of :data:`RUN_PACKAGES`, so that every config class is registered."""
    import pkgutil

    for package_name in RUN_PACKAGES:
        try:
            package = importlib.import_module(package_name)
        except ImportError:
            continue
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), package_name + "."):
            importlib.import_module(info.name)


def config_class(part: str, experiment: str) -> type:
    """The config class that declares ``(part, experiment)`` (the runs layer is imported
    first). ``LookupError`` when no class, or more than one, declares it."""
    found = _REGISTRY.get((part, experiment), {})
    if len(found) != 1:
        discover_configs()
        found = _REGISTRY.get((part, experiment), {})
    if not found:
        raise LookupError(f"no experiment config declares part={part!r}, experiment={experiment!r}")
    if len(found) > 1:
        raise LookupError(f"several config classes declare part={part!r}, experiment={experiment!r}: "
                          f"{sorted(found)}")
    return next(iter(found.values()))


def registered_configs() -> dict[tuple[str, str], list[str]]:
    """``(part, experiment) -> class paths`` of every config class imported so far."""
    return {key: sorted(classes) for key, classes in _REGISTRY.items()}


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


def config_from_dict(class_path: str, data: Mapping[str, Any],
                     declared: Mapping[str, str] | None = None) -> ExperimentConfig:
    """Rebuild a config from its stored fields and its class: the class at ``class_path``
    (``module:QualName``) when it is still there and declares the identity ``declared``
    (``{"part", "experiment"}``), else the class that declares ``declared``, wherever it lives
    now (:func:`config_class`)."""
    obj: Any
    try:
        module_name, _, qualname = class_path.partition(":")
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        if declared is not None and identity(obj) != dict(declared):
            raise LookupError(class_path)
    except (ImportError, AttributeError, LookupError):
        if declared is None:
            raise
        obj = config_class(declared["part"], declared["experiment"])
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
    """SHA-256 of the canonical JSON of the config's declared identity (part, experiment)
    and its fields: not of its class path, so a config class may move freely."""
    payload = {**identity(config), "fields": config_to_dict(config)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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
