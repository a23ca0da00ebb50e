"""Task T2 of the head-to-head part (the ALI-DPFL CNN on Fashion-MNIST) from an empty results
store, on the CPU or a CUDA GPU: wall time, CPU time, and how far the computed test
accuracies are from the committed ones.

``--what`` picks the result: ``t2`` (``headtohead/t2``: the tuning, then every cell on the
seeds), ``t2-fair`` (the fair-axes grid, its tuning first) or ``t2-baselines`` (the
trusted-server baselines and the non-private ceilings). The loader runs in a child process
whose results store is ``--store`` (default: a new temporary folder), with ``--workers``
worker processes and ``$FEDREPRO_TORCH_DEVICE`` = ``--device`` in the child and its workers:
the CNN's records, model and arithmetic on that device, the draws on the CPU (numpy), so a
GPU run makes the CPU run's draws and differs from it by float32 round-off
(:mod:`fedrepro.headtohead.cnn`). The report gives ``wall_s``, ``cpu_s``, the records
computed, and, at the paper profile, against the committed result of the same name, the largest and mean
difference of the records' test accuracies (points) and how many are equal.

    .venv/bin/python benchmarks/headtohead_t2_device.py --what t2 --profile quick       # about a minute
    python benchmarks/headtohead_t2_device.py --what t2 --device cuda --workers 12      # with a CUDA GPU
    python benchmarks/headtohead_t2_device.py --what t2-baselines --device cuda --workers 12 --store data/results

A run into a store that already holds some of the work resumes it (the time is then not
"from an empty store").
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

from alidpfl_tables import _cpu_model  # the CPU's name, as the other device benchmark reports it

REPO = Path(__file__).resolve().parents[1]

#: ``--what`` → (the stored result's name, the call that computes it in the child).
LOADERS = {
    "t2": ("headtohead/t2", "from fedrepro.experiments.headtohead.t2 import load_t2 as f; f(P)"),
    "t2-fair": ("headtohead/t2-fair", "from fedrepro.experiments.headtohead.t2_fair_grid import compute_fair as f; f(P)"),
    "t2-baselines": ("headtohead/t2-baselines",
                     "from fedrepro.experiments.headtohead.t2_baselines import load_t2_baselines as f; f(P)"),
}


def _accuracies(path: Path) -> dict[str, float]:
    """Test accuracy of every record of the stored result at ``path``, keyed by algorithm,
    target ε, uplink budget and seed."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    return {f"{r['algorithm']}|{r['epsilon_target']}|{r['uplink_budget_bits']}|{r['seed']}": float(r["test_accuracy"])
            for r in payload["result"]["records"]}


def _compare(mine: Path, theirs: Path) -> dict[str, Any]:
    if not (mine.exists() and theirs.exists()) or mine.resolve() == theirs.resolve():
        return {"records_compared": 0}
    a, b = _accuracies(mine), _accuracies(theirs)
    diffs = [abs(a[k] - b[k]) * 100 for k in a if k in b]
    if not diffs:
        return {"records_compared": 0}
    return {"records_compared": len(diffs), "records_equal": sum(d == 0.0 for d in diffs),
            "max_accuracy_diff_points": round(max(diffs), 3), "mean_accuracy_diff_points": round(sum(diffs) / len(diffs), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--what", default="t2", choices=sorted(LOADERS))
    parser.add_argument("--profile", default="paper", choices=("paper", "quick"))
    parser.add_argument("--store", type=Path, help="results store to compute into (default: a new temporary folder)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--device", default=None,
                        help="torch device of the CNN (e.g. cuda; default: $FEDREPRO_TORCH_DEVICE, else the CPU)")
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers must be >= 1")
    name, call = LOADERS[args.what]
    with tempfile.TemporaryDirectory(prefix="t2-device-") as tmp:
        store = (args.store or Path(tmp) / "store").resolve()
        store.mkdir(parents=True, exist_ok=True)
        resumed = (store / name).parent.is_dir() and any((store / name).parent.iterdir())
        env = {**os.environ, "FEDREPRO_RESULTS_DIR": str(store), "FEDREPRO_WORKERS": str(args.workers),
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        if args.device is not None:
            env["FEDREPRO_TORCH_DEVICE"] = args.device
        for var in ("FEDREPRO_FORCE", "FEDREPRO_FORCE_SINCE", "FEDREPRO_DASK_SCHEDULER",
                    "FEDREPRO_READ_ONLY_STORE", "FEDREPRO_NO_PAPER_COMPUTE"):
            env.pop(var, None)
        child = f"import torch; torch.set_num_threads(1); P = {args.profile!r}; {call}"
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", child], cwd=REPO, env=env, check=True)
        wall = time.perf_counter() - t0
        usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
        device = env.get("FEDREPRO_TORCH_DEVICE", "cpu")
        gpu = None
        if device.startswith("cuda"):
            import torch

            gpu = f"{torch.cuda.get_device_name()}, torch {torch.__version__}"
        report = {"what": args.what, "result": name, "profile": args.profile, "workers": args.workers,
                  "device": device, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                  "resumed": bool(resumed),
                  **(_compare(store / f"{name}.json", REPO / "data" / "results" / f"{name}.json")
                     if args.profile == "paper" else {"records_compared": 0}),
                  "machine": {"nproc": os.cpu_count(), "cpu": _cpu_model(), "gpu": gpu,
                              "python": platform.python_version()}}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
