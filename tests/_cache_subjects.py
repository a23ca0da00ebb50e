"""Experiment configs used by the results-store tests (importable by subprocesses)."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import numpy as np

from fedrepro.core import cache
from fedrepro.core.cache import ExperimentConfig


@dataclasses.dataclass(frozen=True)
class ToyConfig(ExperimentConfig):
    part = "toy"
    experiment = "square"
    code_modules = ("fedrepro.core.rng",)

    n: int = 3
    scale: float = 2.0
    tags: tuple[str, ...] = ("a", "b")


def run_toy(cfg: ToyConfig) -> dict:
    x = np.arange(cfg.n, dtype=float) * cfg.scale
    return {"x": x, "sum": float(x.sum()), "n": cfg.n, "nan": float("nan"), "label": "ok"}


def write_slowly_forever(root: str) -> None:
    """Store a large result while the file is written 1000 characters at a time, slowly.

    A test kills this process half-way through the write.
    """
    real_fdopen = os.fdopen

    class SlowFile:
        def __init__(self, fh):
            self.fh = fh

        def write(self, text):
            for i in range(0, len(text), 1000):
                self.fh.write(text[i:i + 1000])
                self.fh.flush()
                time.sleep(0.01)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

    cache.os.fdopen = lambda fd, *a, **k: SlowFile(real_fdopen(fd, *a, **k))
    cache.store(ToyConfig(n=5), {"x": [float(i) for i in range(200_000)]}, root=Path(root))
