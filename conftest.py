"""The test suite's two guarantees about the repository, for every pytest invocation.

This file sits at the repository root so that pytest loads it however it is invoked: the
whole suite (``make test``), one test file, or one chapter alone
(``pytest book/alidpfl/experiments.ipynb``), whose kernels inherit the guards below.

1. The committed results store is read-only for the whole session, including the kernels
   that nbval starts (they inherit the environment): a stale, missing or corrupt result there
   is an error naming it (``run `make book```), never a silent recompute into
   ``data/results/``. Computing a paper-profile result anywhere is refused too: tests use the
   quick profile in a temporary store (fixture ``results_dir``) or read the committed store.
2. ``make test`` never writes a tracked file: the session fails if ``git status`` differs
   at the end from what it was at the start.

Plots made in the test process itself never need a display.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parent
COMMITTED_STORE = REPO / "data" / "results"

os.environ["FEDREPRO_READ_ONLY_STORE"] = str(COMMITTED_STORE)
os.environ["FEDREPRO_NO_PAPER_COMPUTE"] = "1"
for _var in ("FEDREPRO_FORCE", "FEDREPRO_FORCE_SINCE", "FEDREPRO_WORKERS", "FEDREPRO_DASK_SCHEDULER"):
    os.environ.pop(_var, None)  # tests choose executors and forcing themselves
if os.environ.get("FEDREPRO_RESULTS_DIR"):
    os.environ["FEDREPRO_RESULTS_DIR"] = str(Path(os.environ["FEDREPRO_RESULTS_DIR"]).resolve())


def _git_status() -> str | None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    proc = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def pytest_sessionstart(session):
    session.config._fedrepro_git_status = _git_status()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_fedrepro_git_status", None)
    if before is None or hasattr(session.config, "workerinput"):
        return
    after = _git_status()
    if after != before:
        changed = sorted(set((after or "").splitlines()) ^ set(before.splitlines()))
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = ("the test session changed the repository (tests must never write a tracked "
                   "or untracked file):\n  " + "\n  ".join(changed))
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


