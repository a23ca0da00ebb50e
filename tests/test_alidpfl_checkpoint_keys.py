"""ALI-DPFL long runs resume only from checkpoints written by the same config and code."""

from __future__ import annotations

import pytest

from fedrepro.experiments.alidpfl import settings
from fedrepro.experiments.alidpfl import tables as experiments


@pytest.mark.parametrize("module, folder_of", [
    (experiments, lambda: experiments.checkpoint_dir(experiments.TablesConfig(profile="quick"), "tau-1")),
    (settings, lambda: settings.checkpoint_dir(settings.ReadingConfig(reading="spec", profile="quick"))),
], ids=["tables", "settings"])
def test_checkpoint_folder_changes_with_the_code(module, folder_of, monkeypatch):
    first = folder_of()
    monkeypatch.setattr(module, "code_hash", lambda roots: "f" * 64)  # any other code
    assert folder_of() != first
    monkeypatch.undo()
    assert folder_of() == first  # the same config and code: the same folder, so a run resumes


def test_checkpoint_folder_changes_with_the_config():
    a = settings.checkpoint_dir(settings.ReadingConfig(reading="spec", profile="quick"))
    b = settings.checkpoint_dir(settings.ReadingConfig(reading="no-noise", profile="quick"))
    c = experiments.checkpoint_dir(experiments.TablesConfig(profile="quick", seed=0), "tau-1")
    d = experiments.checkpoint_dir(experiments.TablesConfig(profile="quick", seed=1), "tau-1")
    assert a != b and c != d
