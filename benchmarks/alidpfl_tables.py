"""ALI-DPFL Tables II–IV (Fashion-MNIST, one seed) from an empty results store: wall time,
CPU time and per-sample gradient throughput, against the 40-minute target on 2 cores.

The 14 training runs of ``fedrepro.experiments.alidpfl.tables.load_tables`` are computed
in a child process whose results store is a new empty folder (``--store``, or a temporary
one), with ``FEDREPRO_WORKERS`` workers (default 2). The script then reports:

* ``wall_s`` and the CPU time of the child and its workers (``cpu_s``; ``cores`` = cpu / wall);
* the work: per-sample gradients of the accounted DP-SGD steps (``sampled_records``, summed
  over runs) and of ALI-DPFL's unaccounted estimates (``unaccounted_gradients``), and both
  per second of wall time;
* when the committed store holds the same result (same config and code), the largest
  difference of the table's accuracies (``max_table_diff``; the runs are deterministic, so 0
  on the same machine, within ``make verify``'s tolerance across machines), their mean
  (``mean_table_diff``), the number of cells compared and of cells equal to the committed
  ones, and the largest difference of each run's final test accuracy (``max_final_diff``);
* with ``--device cuda``, the runs train on the GPU (``$FEDREPRO_TORCH_DEVICE`` in the child
  and its workers; the draws stay on the CPU generators), and the report names the GPU.

    .venv/bin/python benchmarks/alidpfl_tables.py                  # paper profile, seed 0, spec reading
    .venv/bin/python benchmarks/alidpfl_tables.py --seed 1 --store data/results   # compute seed 1 into the store
    .venv/bin/python benchmarks/alidpfl_tables.py --profile quick  # the test-sized profile (about a minute)
    python benchmarks/alidpfl_tables.py --device cuda --workers 12    # on a machine with a CUDA GPU

A run into a store that already holds some units resumes them: the time is then not "from an
empty store", and the script says so (``resumed_units``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 2400.0  # 40 minutes on 2 cores (DESIGN.md "Performance": one ALI-DPFL seed)

_CHILD = """
import json, sys
from fedrepro.experiments.alidpfl.tables import load_tables
r = load_tables(sys.argv[1], int(sys.argv[2]), sys.argv[3])
runs = r["runs"]
print(json.dumps({"sampled_records": sum(int(v["sampled_records"]) for v in runs.values()),
                  "unaccounted_gradients": sum(int(v["unaccounted_gradients"]) for v in runs.values()),
                  "runs": len(runs)}))
"""


def _table_diff(store: Path, profile: str, seed: int, reading: str) -> dict[str, Any] | None:
    """|ours − committed| over the table's accuracies (points): the largest, the mean, the
    cells compared and equal, and the largest difference of a run's final test accuracy
    (``final_accuracy``, in the table's unit); None
    when the committed store holds no result of the same config and code."""
    from fedrepro.core import cache
    from fedrepro.experiments.alidpfl.tables import TablesConfig

    cfg = TablesConfig(profile=profile, seed=seed, reading=reading)
    mine_path = cache.result_path(cfg, store)
    theirs_path = cache.result_path(cfg, REPO / "data" / "results")
    if mine_path == theirs_path or not (mine_path.exists() and theirs_path.exists()):
        return None
    mine, theirs = cache.read_stored(mine_path)[0], cache.read_stored(theirs_path)[0]
    if mine is None or theirs is None or mine.code_hash != theirs.code_hash:
        return None
    diffs = [abs(float(value) - float(theirs.result["table"][cell][method]))
             for cell, row in mine.result["table"].items() for method, value in row.items()
             if value is not None and theirs.result["table"][cell].get(method) is not None]
    if not diffs:
        return None
    finals = [abs(float(run["final_accuracy"]) - float(theirs.result["runs"][name]["final_accuracy"]))
              for name, run in mine.result["runs"].items() if name in theirs.result["runs"]]
    return {"max_table_diff": max(diffs), "mean_table_diff": sum(diffs) / len(diffs),
            "cells_compared": len(diffs), "cells_equal": sum(d == 0.0 for d in diffs),
            "max_final_diff": max(finals) if finals else None}


def _existing_work(store: Path, profile: str, seed: int, reading: str) -> list[str]:
    """This config's result, finished units and checkpoints already in ``store`` (paths relative
    to it): what a run there would resume instead of computing. Units and checkpoints of
    another config or of other code are not resumed (their folders carry both hashes), so
    they are not listed."""
    from fedrepro.core import cache
    from fedrepro.experiments.alidpfl import tables as experiments

    cfg = experiments.TablesConfig(profile=profile, seed=seed, reading=reading)
    result = cache.result_path(cfg, store)
    found = [result] if result.exists() else []
    key = f"{cfg.result_name()}-{cache.config_hash(cfg)[:16]}-{cache.code_hash([experiments.__name__])[:16]}"
    for kind in (".units", ".checkpoints"):
        folder = store / cfg.part / kind / key
        if folder.is_dir():
            found += [p for p in folder.rglob("*") if p.is_file()]
    return sorted(str(p.relative_to(store)) for p in found)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu_model(env: dict[str, str]) -> str | None:
    """The name of the CUDA device the runs used, or None for a CPU run."""
    if not env.get("FEDREPRO_TORCH_DEVICE", "cpu").startswith("cuda"):
        return None
    import torch

    return f"{torch.cuda.get_device_name()}, torch {torch.__version__}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="paper", choices=("paper", "quick"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reading", default="spec")
    parser.add_argument("--store", type=Path, help="results store to compute into (default: a new temporary folder)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--device", default=None,
                        help="torch device of the training (e.g. cuda; default: $FEDREPRO_TORCH_DEVICE, else the CPU)")
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers must be >= 1")

    with tempfile.TemporaryDirectory(prefix="alidpfl-tables-") as tmp:
        store = (args.store or Path(tmp) / "store").resolve()
        store.mkdir(parents=True, exist_ok=True)
        before = _existing_work(store, args.profile, args.seed, args.reading)
        env = {**os.environ, "FEDREPRO_RESULTS_DIR": str(store), "FEDREPRO_WORKERS": str(args.workers)}
        if args.device is not None:
            env["FEDREPRO_TORCH_DEVICE"] = args.device
        for var in ("FEDREPRO_FORCE", "FEDREPRO_FORCE_SINCE", "FEDREPRO_DASK_SCHEDULER",
                    "FEDREPRO_READ_ONLY_STORE", "FEDREPRO_NO_PAPER_COMPUTE"):
            env.pop(var, None)
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _CHILD, args.profile, str(args.seed), args.reading],
                             cwd=REPO, env=env, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        work = json.loads(out.stdout.strip().splitlines()[-1])
        cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
        grads = work["sampled_records"] + work["unaccounted_gradients"]
        report = {
            "profile": args.profile, "seed": args.seed, "reading": args.reading, "workers": args.workers,
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "cores": round(cpu / wall, 2),
            "runs": work["runs"], "dpsgd_per_sample_gradients": work["sampled_records"],
            "unaccounted_gradients": work["unaccounted_gradients"],
            "gradients_per_wall_s": round(grads / wall), "gradients_per_cpu_s": round(grads / cpu) if cpu else None,
            "resumed_units": before,
            "device": env.get("FEDREPRO_TORCH_DEVICE", "cpu"),
            **(_table_diff(store, args.profile, args.seed, args.reading) or {"max_table_diff": None}),
            "machine": {"nproc": os.cpu_count(), "cpu": _cpu_model(), "gpu": _gpu_model(env),
                        "python": platform.python_version()},
        }
        if args.profile == "paper":
            report["within_target"] = wall <= TARGET_S and not report["resumed_units"]
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
