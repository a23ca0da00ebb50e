"""A reader's algorithm, named by its import path, as the grid of configurations the
head-to-head protocol tunes (``python -m fedrepro.headtohead run module:NAME``), and where
its results go.

The convention (the page "Run your own algorithm"): ``module:NAME`` names

* a **class** with a ``grid()`` classmethod: the configurations it returns are tuned;
* a **class** without one: it is instantiated with its defaults and runs as is;
* an **instance**: it runs as is;
* a **tuple or list** of instances of one class: they are tuned (as the T1 page's
  ``extra_algorithm`` parameter takes them).

At most :data:`MAX_GRID` configurations: every algorithm of the book is tuned on 12, so
a larger grid would buy an advantage (a profile may tune fewer: the first ones are taken, as
for the book's algorithms). Every configuration must implement
:class:`~fedrepro.headtohead.interface.HeadToHeadAlgorithm`, be a dataclass instance whose
fields (its hyper-parameters) are numbers, strings, booleans, ``None`` or tuples of these
(they enter the identity of the stored result), of a class that can be imported again by
name (not defined in ``__main__`` or inside a function), and be private: its
``privacy_plan`` is a :class:`~fedrepro.headtohead.accounting.PrivacyPlan` (the command
compares private algorithms at equal ε).

Results go to their own store (:func:`store_root`), never to the book's committed store.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from fedrepro.core.validate import ParameterTypeError
from fedrepro.headtohead.accounting import PrivacyPlan
from fedrepro.headtohead.interface import missing_methods

__all__ = ["MAX_GRID", "STORE_VARIABLE", "resolve", "configurations", "hyper_parameters", "class_path",
           "rebuild", "algorithm_code", "store_root"]

#: The most configurations an algorithm may be tuned on (the book's tuning budget).
MAX_GRID = 12
#: The environment variable naming the store of readers' results (``--store`` wins over it).
STORE_VARIABLE = "FEDREPRO_YOUR_ALGORITHM_STORE"
_REPOSITORY = Path(__file__).resolve().parents[3]


def resolve(spec: str) -> Any:
    """The object named by ``spec`` (``"module:NAME"``, NAME possibly dotted)."""
    if not isinstance(spec, str):
        raise ParameterTypeError(f"algorithm must be a string 'module:NAME', got {type(spec).__name__}")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"algorithm must read 'module:NAME' (e.g. mypkg.mod:MyAlg), got {spec!r}")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"algorithm {spec!r}: cannot import module {module_name!r} ({exc}); run from the "
                         "folder that holds it or put that folder on PYTHONPATH") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"algorithm {spec!r}: {getattr(obj, '__name__', module_name)!r} has no attribute "
                             f"{part!r}")
        obj = getattr(obj, part)
    return obj


def _json_value(owner: str, field: str, value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple | list):
        return tuple(_json_value(owner, field, v) for v in value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{owner}: hyper-parameter {field} must be finite, got {value!r}")
        return value
    raise ValueError(f"{owner}: hyper-parameter {field} = {value!r} ({type(value).__name__}) is not a number, "
                     "string, boolean, None or tuple of these: it cannot enter the identity of a stored result")


def hyper_parameters(algorithm: Any) -> tuple[tuple[str, Any], ...]:
    """The ``(name, value)`` pairs of the init fields of the dataclass ``algorithm``."""
    owner = type(algorithm).__name__
    if not dataclasses.is_dataclass(algorithm) or isinstance(algorithm, type):
        raise ParameterTypeError(f"{owner} must be a dataclass instance (its fields are its hyper-parameters; "
                                 "@dataclasses.dataclass(frozen=True) on the class)")
    return tuple((f.name, _json_value(owner, f.name, getattr(algorithm, f.name)))
                 for f in dataclasses.fields(algorithm) if f.init)


def class_path(cls: type) -> str:
    """``module:QualName`` of ``cls``; ValueError when it cannot be imported again by name."""
    module, qualname = cls.__module__, cls.__qualname__
    if module == "__main__" or "<" in qualname:
        raise ValueError(f"{qualname} must be defined at the top level of an importable module (not in "
                         "__main__, not inside a function): the stored result rebuilds it by name")
    return f"{module}:{qualname}"


def rebuild(path: str, params: tuple[tuple[str, Any], ...]) -> Any:
    """The configuration of class ``path`` with hyper-parameters ``params``."""
    return resolve(path)(**dict(params))


def _check(config: Any, spec: str) -> None:
    missing = missing_methods(config)
    if missing:
        raise ParameterTypeError(f"algorithm {spec!r} ({type(config).__name__}) does not implement the head-to-head "
                                 f"interface (fedrepro.headtohead.interface.HeadToHeadAlgorithm): it lacks "
                                 f"{', '.join(missing)}")
    hyper_parameters(config)
    class_path(type(config))
    plan = config.privacy_plan(1)
    if not isinstance(plan, PrivacyPlan):
        raise ValueError(f"algorithm {spec!r}: privacy_plan(1) returned {plan!r}, not a PrivacyPlan: the command "
                         "compares private algorithms at equal ε (a non-private one has no ε to calibrate)")


def configurations(obj: Any, spec: str = "the algorithm") -> tuple[Any, ...]:
    """The configurations to tune for the object ``spec`` names (module docstring), checked."""
    if isinstance(obj, type):
        missing = missing_methods(obj)
        if missing:  # before instantiating: name what the class lacks
            raise ParameterTypeError(f"algorithm {spec!r} ({obj.__name__}) does not implement the head-to-head "
                                     f"interface (fedrepro.headtohead.interface.HeadToHeadAlgorithm): it lacks "
                                     f"{', '.join(missing)}")
        if callable(getattr(obj, "grid", None)):
            grid = obj.grid()
            if not isinstance(grid, tuple | list):
                raise ValueError(f"algorithm {spec!r}: {obj.__name__}.grid() must return a tuple or list of "
                                 f"configurations, got {type(grid).__name__}")
            grid = tuple(grid)
        else:
            try:
                grid = (obj(),)
            except TypeError as exc:
                raise ValueError(f"algorithm {spec!r}: {obj.__name__}() cannot be built with its defaults ({exc}); "
                                 "give every field a default, or name an instance, a tuple of instances, or a "
                                 "class with a grid() classmethod") from exc
    elif isinstance(obj, tuple | list):
        grid = tuple(obj)
    else:
        grid = (obj,)
    if not grid:
        raise ValueError(f"algorithm {spec!r}: the grid is empty")
    if len(grid) > MAX_GRID:
        raise ValueError(f"algorithm {spec!r}: {len(grid)} configurations, at most {MAX_GRID} (every algorithm of "
                         "the book is tuned on 12: a larger grid would buy an advantage)")
    if len({type(c) for c in grid}) != 1:
        raise ValueError(f"algorithm {spec!r}: the configurations must be instances of one class, got "
                         f"{sorted({type(c).__name__ for c in grid})}")
    for config in grid:
        _check(config, spec)
    return grid


def algorithm_code(cls: type) -> str:
    """The hash of the normalised code of the module defining ``cls`` and of the library
    modules it imports (:func:`fedrepro.core.cache.code_hash`): an edit to the algorithm gives
    its results a new identity."""
    from fedrepro.core.cache import code_hash

    return code_hash([cls.__module__])


def _default_store() -> Path:
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "fedrepro" / "your-algorithm"


def store_root(store: str | os.PathLike[str] | None = None) -> Path:
    """Where a reader's results go (absolute): ``store`` when given, else
    ``$FEDREPRO_YOUR_ALGORITHM_STORE``, else ``$XDG_CACHE_HOME/fedrepro/your-algorithm``
    (``~/.cache`` when unset). Never the book's committed store: a folder inside the
    repository's ``data/`` is refused."""
    chosen = store if store is not None else os.environ.get(STORE_VARIABLE) or None
    root = Path(chosen).expanduser().resolve() if chosen else _default_store().resolve()
    data = (_REPOSITORY / "data").resolve()
    if root == data or data in root.parents:
        raise ValueError(f"store {str(chosen or root)!r} lies inside the repository's data/ folder, which holds the "
                         "book's committed results: choose another folder (--store or "
                         f"${STORE_VARIABLE})")
    return root
