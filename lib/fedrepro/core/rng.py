"""Seeding: every experiment and trial draws from its own reproducible stream.

The root entropy of an experiment is derived from its declared stream name (looked up by
its ``(part, experiment)``, :mod:`fedrepro.core.streams`: never from where its code lives)
and its config fields (canonical JSON), optionally restricted to some fields so that, e.g., a
sweep over a step size reuses the same data (common random numbers). Each
trial or unit gets an independent child stream by ``SeedSequence(entropy, spawn_key=...)``.
Two runs with the same config therefore draw the same numbers, on any machine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.core.records import ExperimentConfig, config_to_dict
from fedrepro.core.streams import stream_name

if TYPE_CHECKING:
    import torch

__all__ = ["entropy_of", "seed_sequence", "generator", "torch_generator"]


def entropy_of(config: ExperimentConfig | Any, fields: Iterable[str] | None = None) -> int:
    """A 128-bit integer derived from the config (or from the named fields only).

    ``config`` may also be any JSON-able value (a string, a tuple...).
    """
    try:
        data = config_to_dict(config)
        name = stream_name(getattr(type(config), "part", ""), getattr(type(config), "experiment", ""))
    except TypeError:
        data, name = config, "value"
    if fields is not None:
        if not isinstance(data, dict):
            raise ValueError("fields can only be given for a dataclass config")
        missing = [f for f in fields if f not in data]
        if missing:
            raise ValueError(f"fields {missing} are not fields of {name}")
        data = {f: data[f] for f in fields}
    text = json.dumps({"class": name, "fields": data}, sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "little")


def _spawn_key(path: tuple[Any, ...]) -> tuple[int, ...]:
    key = []
    for p in path:
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)):
            # strings and other labels: hash to a 32-bit word
            p = int.from_bytes(hashlib.sha256(repr(p).encode()).digest()[:4], "little")
        if p < 0:
            raise ValueError(f"spawn key entries must be non-negative, got {p}")
        key.append(int(p))
    return tuple(key)


def seed_sequence(config: ExperimentConfig | Any, *path: Any,
                  fields: Iterable[str] | None = None) -> np.random.SeedSequence:
    """The ``SeedSequence`` of ``config`` for the unit named by ``path`` (e.g. trial index)."""
    return np.random.SeedSequence(entropy_of(config, fields), spawn_key=_spawn_key(path))


def generator(config: ExperimentConfig | Any, *path: Any,
              fields: Iterable[str] | None = None) -> np.random.Generator:
    """A numpy ``Generator`` (PCG64) for ``config`` and the unit named by ``path``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(config, *path, fields=fields)))


def torch_generator(config: ExperimentConfig | Any, *path: Any,
                    fields: Iterable[str] | None = None, device: str = "cpu") -> torch.Generator:
    """A ``torch.Generator`` seeded from the same ``SeedSequence`` as :func:`generator`."""
    import torch

    seed = int(seed_sequence(config, *path, fields=fields).generate_state(1, np.uint64)[0])
    gen = torch.Generator(device=device)
    gen.manual_seed(seed & 0x7FFF_FFFF_FFFF_FFFF)
    return gen
