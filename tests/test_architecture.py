"""The library's layers (import-linter contracts in pyproject.toml) and its lint (ruff)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _lint_imports(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_layer_contracts_are_kept():
    proc = _lint_imports(REPO, REPO / "lib")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "broken" in proc.stdout and " 0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "bad_import"), [
    ("fedplt/tuning.py", "import fedrepro.report.book"),  # science importing the book helpers
    ("privacy/budget.py", "import fedrepro.fedplt.algorithm"),  # shared layer knowing a paper
    ("fedplt/local_solvers.py", "import fedrepro.dpfedpaq.amplification"),  # papers are independent
    ("report/figures.py", "import fedrepro.fedplt.algorithm"),  # report knows no paper
])
def test_a_wrong_import_breaks_a_contract(tmp_path, module, bad_import):
    shutil.copytree(REPO / "lib" / "fedrepro", tmp_path / "lib" / "fedrepro",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / "lib" / "fedrepro" / module
    path.write_text(path.read_text() + f"\n{bad_import}  # planted\n")
    proc = _lint_imports(tmp_path, tmp_path / "lib")
    assert proc.returncode != 0 and "BROKEN" in proc.stdout, proc.stdout[-2000:]


def test_ruff_finds_nothing():
    proc = subprocess.run([str(BIN / "ruff"), "check", "--no-cache", "lib", "tests", "benchmarks"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
