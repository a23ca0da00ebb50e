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


# --------------------------------------------------------------------------- units and executors


@dataclasses.dataclass(frozen=True)
class UnitsConfig(ExperimentConfig):
    """A run_units experiment whose units draw random numbers and use BLAS."""

    part = "toy"
    experiment = "units"
    n: int = 40
    size: int = 30
    name: str = "a"

    def result_name(self) -> str:
        return f"units-{self.name}"

    def units(self) -> list[str]:
        return [f"u{i:02d}" for i in range(self.n)]


def run_random_unit(cfg: UnitsConfig, unit: str) -> dict:
    from fedrepro.core.rng import generator

    rng = generator(cfg, unit)
    A = rng.standard_normal((cfg.size, cfg.size))
    x = np.linalg.solve(A @ A.T + np.eye(cfg.size), rng.standard_normal(cfg.size))
    return {"x": x, "norm": float(np.linalg.norm(x)), "pid_free": True}


def combine_norms(cfg: UnitsConfig, done: dict) -> dict:
    return {"norms": [done[u]["norm"] for u in cfg.units()], "units": done}


def run_units_experiment(root: str, name: str = "a", n: int = 40, log: str | None = None) -> None:
    """What a concurrent process runs (tests of the shared store)."""
    cfg = UnitsConfig(n=n, name=name)
    unit_fn = logging_unit if log else run_random_unit
    if log:
        os.environ["FEDREPRO_TEST_UNIT_LOG"] = log
    cache.run_units(cfg, cfg.units(), unit_fn, combine=combine_norms, root=Path(root), progress=False)


def logging_unit(cfg: UnitsConfig, unit: str) -> dict:
    """:func:`run_random_unit` that records each call in ``$FEDREPRO_TEST_UNIT_LOG`` (a folder)."""
    log = Path(os.environ["FEDREPRO_TEST_UNIT_LOG"])
    log.mkdir(parents=True, exist_ok=True)
    (log / f"{unit}-{os.getpid()}-{time.monotonic_ns()}").touch()
    return run_random_unit(cfg, unit)


def dying_unit(cfg: UnitsConfig, unit: str) -> dict:
    """Kills its own worker process on unit u05 as many times as ``$FEDREPRO_TEST_KILL`` (a
    file holding a count) says."""
    kill = Path(os.environ["FEDREPRO_TEST_KILL"])
    if unit == "u05":
        left = int(kill.read_text() or 0)
        if left > 0:
            kill.write_text(str(left - 1))
            os._exit(17)
    return logging_unit(cfg, unit)


# --------------------------------------------------------------------------- nested results


@dataclasses.dataclass(frozen=True)
class InnerConfig(ExperimentConfig):
    part = "toy"
    experiment = "inner"
    profile: str = "quick"


@dataclasses.dataclass(frozen=True)
class OuterConfig(ExperimentConfig):
    part = "toy"
    experiment = "outer"
    profile: str = "quick"
    k: int = 1

    def result_name(self) -> str:
        return f"outer-{self.k}"


CALLS: list[str] = []


def run_inner(cfg: InnerConfig) -> dict:
    CALLS.append("inner")
    return {"v": 1.5}


def run_outer(cfg: OuterConfig) -> dict:
    CALLS.append(f"outer-{cfg.k}")
    inner = cache.load_or_run(InnerConfig(), run_inner)
    return {"v": inner["v"] * cfg.k}


@dataclasses.dataclass(frozen=True)
class PaperProfileConfig(ExperimentConfig):
    part = "toy"
    experiment = "paper-profile"
    profile: str = "paper"


def thread_settings(cfg, unit: str) -> dict:
    """What a worker process sees: its BLAS thread limit and its own executor setting."""
    import numpy  # noqa: F401 - imported after the limits are in the environment

    return {"blas": os.environ.get("OPENBLAS_NUM_THREADS"), "workers": os.environ.get("FEDREPRO_WORKERS")}
