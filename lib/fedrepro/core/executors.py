"""Where the units of an experiment run: serially, on local worker processes, or on Dask.

:func:`~fedrepro.core.cache.run_units` hands the units that still have to be computed to
:func:`map_units`, which yields ``(unit, result)`` as each one finishes; the store writes
each at once, so an interrupted run (or a lost worker) loses at most the units in progress.
Units are pure functions of ``(config, unit)``, so the results are identical whichever
executor runs them. The environment picks the executor:

* default: serial, in this process;
* ``FEDREPRO_WORKERS=N`` (N > 1): N local worker processes (``spawn``), each limited to
  ``cores // N`` BLAS / OpenMP / torch threads so that the workers do not oversubscribe the
  cores (``make book`` and ``make reproduce`` set it to the number of cores);
* ``FEDREPRO_DASK_SCHEDULER=tcp://host:port``: the units are submitted to an existing
  ``dask.distributed`` cluster (e.g. one started by dask-jobqueue on a Slurm machine); the
  workers must have this library installed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["THREAD_VARIABLES", "executor_name", "map_units", "worker_count"]

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

UnitFunction = Callable[[Any, str], Mapping[str, Any]]


def worker_count() -> int:
    """``$FEDREPRO_WORKERS`` as a positive integer (1 when unset)."""
    raw = os.environ.get("FEDREPRO_WORKERS", "").strip()
    if not raw:
        return 1
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"FEDREPRO_WORKERS must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"FEDREPRO_WORKERS must be a positive integer, got {raw!r}")
    return n


def executor_name() -> str:
    """``"dask"``, ``"processes"`` or ``"serial"``: what :func:`map_units` will use."""
    if os.environ.get("FEDREPRO_DASK_SCHEDULER", "").strip():
        return "dask"
    return "processes" if worker_count() > 1 else "serial"


def _bar(desc: str, progress: bool, initial: int, total: int):
    from tqdm import tqdm  # plain text bar: no widget needed in a notebook

    return tqdm(desc=desc, disable=not progress, initial=initial, total=total, leave=False)


def map_units(fn: UnitFunction, config: Any, units: Sequence[str], *, desc: str = "units",
              progress: bool = True, initial: int = 0, total: int | None = None,
              ) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Run ``fn(config, unit)`` for every unit; yield ``(unit, result)`` as each finishes.

    ``initial``/``total`` only set the progress bar (units already done count as done)."""
    units = list(units)
    if not units:
        return
    total = initial + len(units) if total is None else total
    kind = executor_name()
    runner = {"serial": _serial, "processes": _processes, "dask": _dask}[kind]
    with _bar(desc, progress, initial, total) as bar:
        for unit, result in runner(fn, config, units):
            bar.update(1)
            yield unit, result


def _serial(fn: UnitFunction, config: Any, units: list[str]):
    for unit in units:
        yield unit, fn(config, unit)


@contextlib.contextmanager
def _thread_limits(threads: int) -> Iterator[None]:
    """Set the thread-count variables for processes started inside the block."""
    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    os.environ.update({k: str(threads) for k in THREAD_VARIABLES})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _init_worker(threads: int) -> None:
    """Worker initializer: units that a unit runs in turn (a nested experiment) run serially
    inside the worker; torch reads OMP_NUM_THREADS at import, but be explicit if loaded."""
    import sys

    os.environ["FEDREPRO_WORKERS"] = "1"
    os.environ.pop("FEDREPRO_DASK_SCHEDULER", None)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


#: How often a run restarts its worker pool after a worker process died, before giving up.
MAX_POOL_RESTARTS = 3


def _processes(fn: UnitFunction, config: Any, units: list[str]):
    """Units on a pool of spawned worker processes. A worker that dies (killed, out of
    memory) breaks the pool: the finished units are kept, the pool is restarted and the
    unfinished units are submitted again, up to :data:`MAX_POOL_RESTARTS` times."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    n = min(worker_count(), len(units))
    threads = max(1, (os.cpu_count() or 1) // n)
    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding BLAS/torch threads
    remaining = list(units)
    restarts = 0
    while remaining:
        broken = False
        # workers are spawned on submit (and again if one dies): the thread limits must be in
        # the environment then, before a worker imports numpy; oversubscribed OpenBLAS threads
        # busy-wait and can make a run several times slower
        limits = _thread_limits(threads)
        limits.__enter__()
        pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init_worker,
                                   initargs=(threads,))
        try:
            pending = {pool.submit(fn, config, unit): unit for unit in remaining}
            while pending and not broken:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    unit = pending.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    remaining.remove(unit)
                    yield unit, result
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            limits.__exit__(None, None, None)
        if broken:
            restarts += 1
            if restarts > MAX_POOL_RESTARTS:
                raise RuntimeError(
                    f"a worker process died {restarts} times while running the units "
                    f"{remaining[:8]}{' ...' if len(remaining) > 8 else ''}; the finished units "
                    "are stored: run again to resume")


def _dask(fn: UnitFunction, config: Any, units: list[str]):
    from distributed import Client, as_completed

    address = os.environ["FEDREPRO_DASK_SCHEDULER"].strip()
    with Client(address) as client:
        futures = {client.submit(fn, config, unit, pure=False): unit for unit in units}
        try:
            for future in as_completed(list(futures)):
                yield futures[future], future.result()
        finally:
            client.cancel([f for f in futures if not f.done()])
