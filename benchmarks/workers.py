"""The Fed-PLT chapters at the paper profile from an empty results store, with 1 and with N
local worker processes (``FEDREPRO_WORKERS``), measured in one run.

Each setting executes the five Fed-PLT notebooks (papermill) into a temporary folder with
its own empty store, so everything is computed. The stored results of the two settings must
agree within the tolerance each config declares for ``make verify``, else the script fails;
it reports how many are byte-identical (a unit that runs with another number of BLAS threads
may differ in its last bits).

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


def verify_against(path: Path, other: bytes):
    """Compare the stored result at ``path`` with another stored file's bytes, within the
    tolerance its config declares (as ``make verify`` does)."""
    from fedrepro.core import cache, verify

    mine, _ = cache.read_stored(path)
    theirs = cache.decode(json.loads(other)["result"])
    cls = type(cache.config_from_dict(mine.class_path, mine.config))
    return verify.compare(theirs, mine.result, cls.verify_rtol, cls.verify_atol, rules=cls.verify_rules)


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
        if a.keys() != b.keys():
            raise SystemExit(f"1 and {args.workers} workers stored different results")
        differ = sorted(k for k in a if a[k] != b[k])
        for key in differ:  # a BLAS thread count changes round-off: allowed within make verify's tolerance
            verdict = verify_against(one / "store" / key, b[key])
            if not verdict.ok:
                raise SystemExit(f"{key} differs between 1 and {args.workers} workers beyond its tolerance: "
                                 f"{verdict.mismatches[:3]}")
        if args.keep:
            shutil.copytree(many / "store", args.keep, dirs_exist_ok=True)
    out = {"results": len(a), "byte_identical": len(a) - len(differ), "seconds_1": round(t_one, 1), f"seconds_{args.workers}": round(t_many, 1),
           "ratio": round(t_one / t_many, 2), "cpu": platform.processor() or platform.machine(),
           "nproc": os.cpu_count()}
    print(json.dumps(out) if args.json else
          f"{len(a)} results, {len(a) - len(differ)} byte-identical, the rest within tolerance; 1 worker {t_one:.1f} s, {args.workers} workers {t_many:.1f} s: "
          f"{t_one / t_many:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
