"""``python -m fedrepro.headtohead run module:NAME --task t2``: a reader's algorithm through
task T2's protocol (the CNN), in its own store, beside the book's T2 algorithms.

The example CNN algorithm runs at the quick profile (one ε, one seed) through the real entry
point (a subprocess) in a temporary store: its row appears beside the book's T2 rows, the ε
spent is the target and the uplink stays within the budget, nothing tracked changes, and a
rerun loads from the store. The protocol is T2's, not a copy: T2's own DP-FedSGD grid named as
a reader's grid gives T2's DP-FedSGD selection and records. Bad tasks and devices are refused
by name, before anything is computed.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.headtohead import your_algorithm as view
from fedrepro.chapters.headtohead import your_algorithm_cli as cli
from fedrepro.core.device import DEVICE_VARIABLE
from fedrepro.experiments.headtohead import t2
from fedrepro.experiments.headtohead import your_algorithm as yours_t1
from fedrepro.experiments.headtohead import your_algorithm_t2 as yours
from fedrepro.headtohead import bring_your_own as byo
from fedrepro.headtohead.example_cnn_algorithm import DPFedAvgMomentum

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = "fedrepro.headtohead.example_cnn_algorithm:DPFedAvgMomentum"
LABEL = "DP-FedAvg, server momentum (yours)"


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The example through the entry point on T2 at the quick profile, in a temporary store."""
    store = tmp_path_factory.mktemp("your-algorithm-t2-store")
    before = _git_status()
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    env.pop(DEVICE_VARIABLE, None)
    proc = subprocess.run([sys.executable, "-m", "fedrepro.headtohead", "run", EXAMPLE, "--task", "t2",
                           "--profile", "quick", "--store", str(store), "--no-progress"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    return {"store": store, "proc": proc, "git_before": before, "git_after": _git_status()}


@pytest.mark.slow
def test_the_example_runs_through_t2_beside_the_book(example_run):
    proc = example_run["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert out.startswith("Task T2 (Fashion-MNIST CNN, 10 clients"), out[:200]  # the header names the task run
    assert LABEL in out  # the reader's row
    assert "DP-FedSGD (τ = 1)" in out and "FedAvg (non-private ceiling)" in out  # T2's labels, beside it
    assert "Fed-PLT (private, subsampled)" in out
    assert "ε = 4" in out and "computed in" in out and "tuned once at the reference cell" in out
    assert example_run["git_after"] == example_run["git_before"]  # no tracked (or untracked) file changed
    stored = sorted(p.name for p in (example_run["store"] / "headtohead").glob("your-algorithm-t2*-quick-*.json"))
    assert len(stored) == 2, stored  # the tuning and the cells
    assert all("dp-fedavg-server-momentum" in name for name in stored)
    printed = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith(("  result: ", "  tuning: "))]
    assert sorted(Path(p).name for p in printed) == stored  # the header names the files it stored


@pytest.mark.slow
def test_the_row_is_calibrated_within_budget_and_a_rerun_loads(example_run, monkeypatch, capsys):
    assert example_run["proc"].returncode == 0, example_run["proc"].stderr[-3000:]
    store = example_run["store"]
    paths = sorted((store / "headtohead").glob("your-algorithm-t2*.json"))
    stamps = [p.stat().st_mtime_ns for p in paths]

    def no_compute(*args, **kwargs):
        raise AssertionError("the protocol ran again instead of loading the stored result")

    monkeypatch.setattr(yours, "_run_unit", no_compute)
    monkeypatch.setattr(yours, "_run_tuning_unit", no_compute)
    monkeypatch.setattr(t2, "_run_unit", no_compute)  # the book's quick T2, stored in the same store
    monkeypatch.setattr(t2, "_run_tuning_unit", no_compute)
    assert cli.main(["run", EXAMPLE, "--task", "t2", "--profile", "quick", "--store", str(store),
                     "--no-progress"]) == 0
    assert "loaded from the store" in capsys.readouterr().out
    comparison = view.compare(EXAMPLE, task="t2", profile="quick", store=store, progress=False)
    assert comparison.loaded and comparison.task == "t2"
    assert comparison.config.selected == comparison.result["tuning"][0]["selected"] >= 0
    assert [p.stat().st_mtime_ns for p in paths] == stamps  # read, not rewritten

    records = comparison.result["records"]
    assert len(records) == 1  # one ε, one budget, one seed at the quick profile
    r = records[0]
    assert set(r) == set(comparison.reference["records"][0])  # exactly the fields of T2's records
    assert abs(r["epsilon_spent"] / r["epsilon_target"] - 1) <= 1e-6  # calibrated to the target, 1e-6 relative
    assert 0 < r["uplink_bits"] <= r["uplink_budget_bits"]  # within the uplink budget
    protocol = t2.T2Config.for_profile("quick")
    selected = DPFedAvgMomentum.grid()[comparison.result["tuning"][0]["selected"]]
    assert r["uplink_bits"] <= t2.capped_budget(r["uplink_budget_bits"], selected, 582_026, protocol.max_rounds)
    assert r["rounds"] <= protocol.max_rounds  # T2's round cap

    frame = view.comparison_frame(comparison)
    row = frame[frame["algorithm"] == LABEL]
    assert len(row) == 1 and row.index[0][0] == "4e+08"
    assert " ± " in row["ε = 4"].iloc[0]
    assert {"DP-FedSGD (τ = 1)", "DPFL (fixed τ)", "Fed-PLT (private, subsampled)"} <= set(frame["algorithm"])
    chosen = view.selected_frame(comparison)
    assert list(chosen.index) == [("4e+08", "4")]  # tuned once, at T2's reference cell


@pytest.mark.slow
def test_the_command_is_t2s_protocol(example_run):
    """T2's own DP-FedSGD grid named as a reader's grid gives T2's selection and records."""
    assert example_run["proc"].returncode == 0, example_run["proc"].stderr[-3000:]
    store = example_run["store"]
    comparison = view.compare("tests._byo_subjects:T2_DP_FEDSGD", task="t2", profile="quick", store=store,
                              progress=False)
    reference, _ = yours.load_t2_reference("quick", store, progress=False)  # computed by the subprocess
    tuning = yours.load_tuning(comparison.config.tuning(), store, progress=False)["tuning"][0]
    assert tuning["selected"] == t2.selected(_reference_tuning(store), "dp-fedsgd")
    theirs = [r for r in reference["records"] if r["algorithm"] == "dp-fedsgd"
              and r["epsilon_target"] == 4.0 and r["uplink_budget_bits"] == 4e8]  # the reader's one cell
    mine = comparison.result["records"]
    assert len(mine) == len(theirs) == 1
    for key in ("config", "noise_multiplier", "epsilon_spent", "rounds", "uplink_bits", "sampled_records",
                "test_accuracy"):
        assert mine[0][key] == theirs[0][key], key  # equal: the same computation, no tolerance
    assert np.array_equal(mine[0]["accuracy_curve"], theirs[0]["accuracy_curve"])  # equal, no tolerance
    # the test loss is a float32 sum (the command ran in another process): the same computation
    # agrees to 1e-6 relative
    assert mine[0]["test_loss"] == pytest.approx(theirs[0]["test_loss"], rel=1e-6)


def _reference_tuning(store: Path):
    from fedrepro.core import cache

    stored = cache.load(t2.T2TuningConfig.for_profile("quick"), store)
    assert stored is not None, "the book's quick T2 tuning is not in the reader's store"
    return stored.result


def test_the_selection_never_takes_a_diverged_or_non_finite_run():
    cands = [{"validation_accuracy": 0.9, "diverged": True}, {"validation_accuracy": math.nan, "diverged": False},
             {"validation_accuracy": 0.3, "diverged": False}, {"validation_accuracy": 0.5, "diverged": False},
             {"validation_accuracy": 0.5, "diverged": False}]
    assert yours.select(cands) == 3  # the best finite, non-diverged; the first on a tie


def test_the_t2_identity_holds_t2s_cells_and_the_algorithm(tmp_path):
    base = yours.config_for(EXAMPLE, profile="quick")
    assert base.algorithm == EXAMPLE and base.name == DPFedAvgMomentum.name
    assert base.grid == tuple(byo.hyper_parameters(c) for c in DPFedAvgMomentum.grid())
    assert base.epsilons == (4.0,) and base.budgets == (4e8,) and base.seeds == (0,)  # T2's quick cells
    assert base.selected == -1  # selected by the tuning, not by the reader
    assert yours.tuning_units(base.tuning()) == ["yours_cfg-00", "yours_cfg-01"]  # T2's quick grid_size
    assert base.result_name().startswith("your-algorithm-t2-dp-fedavg-server-momentum-quick-")
    assert base.tuning().result_name().startswith("your-algorithm-t2-tuning-dp-fedavg-server-momentum-quick-")
    assert base.tuning().result_name() != base.result_name()
    t1_name = yours_t1.config_for("fedrepro.headtohead.example_algorithm:NormalisedDPFedSGD",
                                  profile="quick").result_name()
    assert not t1_name.startswith("your-algorithm-t2")
    paper = yours.config_for(EXAMPLE)
    assert paper.epsilons == (0.5, 1.0, 2.0, 4.0, 8.0) and paper.budgets == (5.6e9,) and paper.seeds == (0, 1, 2)
    with pytest.raises(ValueError, match="selected must be -1 or an index of grid"):
        yours.YourAlgorithmT2Config(**{**base.__dict__, "selected": 12})
    with pytest.raises(RuntimeError, match="changed since this config was made"):
        yours.load_tuning(yours.YourAlgorithmT2TuningConfig(**{**base.tuning().__dict__, "algorithm_code": "0" * 64}),
                          tmp_path, progress=False)


def test_the_example_is_a_private_interface_algorithm():
    grid = byo.configurations(byo.resolve(EXAMPLE), EXAMPLE)
    assert grid == DPFedAvgMomentum.grid() and len(set(grid)) == 12
    plan = grid[0].privacy_plan(3)
    assert plan.sampling_rate == 0.015 and plan.compositions == 3  # DP-FedSGD's plan: one release per step
    with pytest.raises(ValueError, match="momentum must lie in"):
        DPFedAvgMomentum(momentum=1.0)


def test_task_t3_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", EXAMPLE, "--task", "t3", "--store", str(tmp_path)])
    assert exc.value.code == 2
    assert "task must be one of t1, t2, got 't3'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="task must be one of"):
        view.compare(EXAMPLE, task="t3", store=tmp_path)


@pytest.mark.parametrize("how", ["flag", "variable"])
def test_a_bad_device_is_refused_naming_the_variable(tmp_path, monkeypatch, capsys, how):
    if how == "flag":
        monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
        args = ["--device", "no-such-device"]
    else:
        monkeypatch.setenv(DEVICE_VARIABLE, "no-such-device")
        args = []
    code = cli.main(["run", EXAMPLE, "--task", "t2", "--profile", "quick", "--store", str(tmp_path), *args])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and DEVICE_VARIABLE in err and "no-such-device" in err, err
    assert not any(tmp_path.iterdir())  # refused before anything is computed or stored
    assert os.environ.get(DEVICE_VARIABLE) == (None if how == "flag" else "no-such-device")  # left as it was
