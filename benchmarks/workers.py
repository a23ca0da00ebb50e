"""The Fed-PLT chapters at the paper profile from an empty results store, with 1 and with N
local worker processes (``FEDREPRO_WORKERS``), measured in one run.

Each setting executes the five Fed-PLT notebooks (papermill) into a temporary folder with
its own empty store, so everything is computed; the stored results of the two settings
must be byte-identical (the executor never changes a value), else the script fails.

    .venv/bin/python benchmarks/workers.py            # 1 vs 2 workers
    .venv/bin/python benchmarks/workers.py --workers 4 --keep DIR   # keep the N-worker store
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(workers: int, folder: Path) -> float:
    env = {**os.environ, "FEDREPRO_WORKERS": str(workers), "FEDREPRO_RESULTS_DIR": str(folder / "store")}
    for var in ("FEDREPRO_FORCE", "FEDREPRO_FORCE_SINCE", "FEDREPRO_DASK_SCHEDULER", "FEDREPRO_READ_ONLY_STORE",
                "FEDREPRO_NO_PAPER_COMPUTE"):
        env.pop(var, None)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fedrepro.report.chapters", "run", "--profile", "paper",
                    "--output-dir", str(folder / "notebooks"), "fedplt/"], cwd=REPO, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def stored(folder: Path) -> dict[str, bytes]:
    root = folder / "store"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.json"))
            if not any(part.startswith(".") for part in p.relative_to(root).parts)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="copy the N-worker store here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fedrepro-workers-") as tmp:
        one, many = Path(tmp) / "one", Path(tmp) / "many"
        t_one = run(1, one)
        t_many = run(args.workers, many)
        a, b = stored(one), stored(many)
        if a.keys() != b.keys() or any(a[k] != b[k] for k in a):
            differ = sorted(k for k in a if a.get(k) != b.get(k))
            raise SystemExit(f"stored results differ between 1 and {args.workers} workers: {differ}")
        if args.keep:
            shutil.copytree(many / "store", args.keep, dirs_exist_ok=True)
    out = {"results": len(a), "seconds_1": round(t_one, 1), f"seconds_{args.workers}": round(t_many, 1),
           "ratio": round(t_one / t_many, 2), "cpu": platform.processor() or platform.machine(),
           "nproc": os.cpu_count()}
    print(json.dumps(out) if args.json else
          f"{len(a)} results, identical bytes; 1 worker {t_one:.1f} s, {args.workers} workers {t_many:.1f} s: "
          f"{t_one / t_many:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
