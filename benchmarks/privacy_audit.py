"""The privacy audits at the paper profile from an empty results store: wall time of each
audit and of the whole table, against the 30-minute target on 2 cores (DESIGN.md "Performance").

Each audit (``fedrepro.chapters.privacy_audit``: DP-FedPAQ's round, ALI-DPFL's DP-SGD, ALI-DPFL's
τ* estimate reports, Fed-PLT's noisy local training) is
computed in a child process whose results store is a new empty folder, so nothing is reused;
the script reports the seconds of each, the trials they ran, and whether the values equal the
committed result (the audits are deterministic: equal on one machine, within ``make verify``'s
tolerance across machines).

    .venv/bin/python benchmarks/privacy_audit.py
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 1800.0  # the whole audit table within 30 minutes on 2 cores

_CHILD = """
import sys
from fedrepro.chapters.privacy_audit import alidpfl, dpfedpaq, estimates, fedplt
{"dpfedpaq": dpfedpaq.load_fedpaq_audit, "alidpfl": alidpfl.load_dpsgd_audit,
 "estimates": estimates.load_estimates_audit, "fedplt": fedplt.load_fedplt_audit}[sys.argv[1]]("paper")
"""


def _same_as_committed(store: Path, name: str) -> bool | None:
    mine, theirs = store / "privacy" / f"{name}.json", REPO / "data" / "results" / "privacy" / f"{name}.json"
    if not theirs.exists():
        return None
    return json.loads(mine.read_text())["result"] == json.loads(theirs.read_text())["result"]


def main() -> int:
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FEDREPRO_RESULTS_DIR": tmp}
        for var in ("FEDREPRO_FORCE", "FEDREPRO_READ_ONLY_STORE", "FEDREPRO_NO_PAPER_COMPUTE"):
            env.pop(var, None)
        for audit, stem in (("dpfedpaq", "audit-dpfedpaq"), ("alidpfl", "audit-alidpfl-dpsgd"),
                            ("estimates", "audit-alidpfl-estimates"), ("fedplt", "audit-fedplt")):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", _CHILD, audit], cwd=REPO, env=env, check=True)
            rows[audit] = {"wall_s": round(time.perf_counter() - t0, 1),
                           "same_as_committed": _same_as_committed(Path(tmp), stem)}
    total = sum(r["wall_s"] for r in rows.values())
    print(json.dumps({"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                      "audits": rows, "total_s": round(total, 1), "target_s": TARGET_S,
                      "within_target": total <= TARGET_S}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
