"""Shared test fixtures. Plots made in the test process itself never need a display."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    """A private results store for the test (``$FEDREPRO_RESULTS_DIR``)."""
    root = tmp_path / "results"
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(root))
    monkeypatch.delenv("FEDREPRO_FORCE", raising=False)
    return root


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
