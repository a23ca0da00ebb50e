"""Shared test fixtures (the guards on the repository live in the root ``conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    """A private results store for the test (``$FEDREPRO_RESULTS_DIR``)."""
    root = tmp_path / "results"
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(root))
    monkeypatch.delenv("FEDREPRO_FORCE", raising=False)
    monkeypatch.delenv("FEDREPRO_FORCE_SINCE", raising=False)
    return root


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
