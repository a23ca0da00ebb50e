"""``python -m fedrepro.headtohead run module:NAME``: a reader's algorithm through task T1's
protocol, in its own store, beside the book's algorithms.

The protocol is T1's, not a copy: T1's own DP-FedSGD grid named as a reader's grid gives
exactly T1's DP-FedSGD records (selection, noise, accuracies: equal, no tolerance). The
example algorithm runs at the quick profile through the real entry point (a subprocess) in a
temporary store; nothing tracked changes; a rerun loads from the store (the protocol function
is replaced by one that fails, and the stored file is untouched); an interrupted run resumes
at the cell it stopped in. Bad import paths, classes that do not implement the interface and
bad arguments are refused with a message naming the problem, before anything is computed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedrepro.chapters.headtohead import your_algorithm as view
from fedrepro.chapters.headtohead import your_algorithm_cli as cli
from fedrepro.experiments.headtohead import t1
from fedrepro.experiments.headtohead import your_algorithm as yours
from fedrepro.headtohead import bring_your_own as byo
from fedrepro.headtohead.example_algorithm import NormalisedDPFedSGD

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = "fedrepro.headtohead.example_algorithm:NormalisedDPFedSGD"


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """The example through the entry point at the quick profile, in a temporary store."""
    store = tmp_path_factory.mktemp("your-algorithm-store")
    before = _git_status()
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    proc = subprocess.run([sys.executable, "-m", "fedrepro.headtohead", "run", EXAMPLE, "--task", "t1",
                           "--profile", "quick", "--store", str(store), "--no-progress"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    return {"store": store, "proc": proc, "git_before": before, "git_after": _git_status()}


@pytest.mark.slow
def test_the_example_runs_through_the_entry_point_beside_the_book(example_run):
    proc = example_run["proc"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "DP-FedSGD, normalised gradients (yours)" in out  # the reader's row
    assert "DP-FedSGD (τ = 1)" in out and "FedAvg (non-private ceiling)" in out  # the book's rows beside it
    assert "ε = 4" in out and "computed in" in out
    assert example_run["git_after"] == example_run["git_before"]  # no tracked (or untracked) file changed
    stored = list((example_run["store"] / "headtohead").glob("your-algorithm-*-quick-*.json"))
    assert len(stored) == 1 and "dp-fedsgd-normalised-gradients" in stored[0].name


@pytest.mark.slow
def test_a_rerun_loads_from_the_store_and_the_view_returns_the_row(example_run, monkeypatch, capsys):
    assert example_run["proc"].returncode == 0, example_run["proc"].stderr[-3000:]
    store = example_run["store"]
    path = next((store / "headtohead").glob("your-algorithm-*.json"))
    stamp = path.stat().st_mtime_ns

    def no_compute(*args, **kwargs):
        raise AssertionError("the protocol ran again instead of loading the stored result")

    monkeypatch.setattr(t1, "tune_and_run", no_compute)
    assert cli.main(["run", EXAMPLE, "--profile", "quick", "--store", str(store), "--no-progress"]) == 0
    assert "loaded from the store" in capsys.readouterr().out
    frame = view.your_algorithm_frame(EXAMPLE, profile="quick", store=store, progress=False)
    assert path.stat().st_mtime_ns == stamp
    row = frame[frame["algorithm"] == "DP-FedSGD, normalised gradients (yours)"]
    assert len(row) == 1 and row.index[0][0] == "2e+07"
    assert " ± " in row["ε = 4"].iloc[0]  # accuracy mean ± sd over the seeds
    book = set(frame["algorithm"])
    assert {"DP-FedSGD (τ = 1)", "DPFL (fixed τ)", "Fed-PLT (private)"} <= book  # the same cell of T1


@pytest.mark.slow
def test_the_command_is_t1s_protocol(example_run):
    """T1's own grid named as a reader's grid reproduces T1's records of that algorithm."""
    assert example_run["proc"].returncode == 0, example_run["proc"].stderr[-3000:]
    store = example_run["store"]
    comparison = view.compare("tests._byo_subjects:DP_FEDSGD", profile="quick", store=store, progress=False)
    reference, _ = yours.load_t1_reference("quick", store, progress=False)  # computed by the subprocess
    theirs = [r for r in reference["records"] if r["algorithm"] == "dp-fedsgd"
              and r["epsilon_target"] == 4.0 and r["uplink_budget_bits"] == 2e7]
    mine = comparison.result["records"]
    assert len(mine) == len(theirs) == 1
    for key in ("config", "noise_multiplier", "epsilon_spent", "rounds", "test_accuracy", "sampled_records"):
        assert mine[0][key] == theirs[0][key], key  # equal: the same computation, no tolerance
    # the loss is a float32 sum whose order follows the BLAS threads of the process that ran it (the
    # command ran in another process than this test): the same computation agrees to 1e-9 relative
    assert mine[0]["train_loss"] == pytest.approx(theirs[0]["train_loss"], rel=1e-9)


def test_an_interrupted_run_resumes_at_the_cell_it_stopped_in(tmp_path, monkeypatch):
    calls = []
    real = t1.tune_and_run

    def stop_at_second_cell(config, grid, epsilon, budget):
        calls.append(budget)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(config, grid, epsilon, budget)

    monkeypatch.setattr(t1, "tune_and_run", stop_at_second_cell)
    args = {"profile": "quick", "epsilons": (4.0,), "budgets": (1e7, 5e6)}
    config = yours.config_for("tests._byo_subjects:ONE_DPFL", **args)
    with pytest.raises(KeyboardInterrupt):
        yours.load_your_algorithm(config, tmp_path, progress=False)
    assert not yours.is_stored(config, tmp_path)
    calls.clear()
    monkeypatch.setattr(t1, "tune_and_run", lambda *a: calls.append(a[3]) or real(*a))
    result = yours.load_your_algorithm(config, tmp_path, progress=False)
    assert calls == [5e6]  # only the cell that was interrupted
    assert yours.is_stored(config, tmp_path)
    assert sorted(r["uplink_budget_bits"] for r in result["records"]) == [5e6, 1e7]


@pytest.mark.parametrize(("spec", "message"), [
    ("tests._nowhere:Algorithm", r"cannot import module 'tests._nowhere'"),
    ("tests._byo_subjects", r"must read 'module:NAME'"),
    ("tests._byo_subjects:Nothing", r"has no attribute 'Nothing'"),
    ("tests._byo_subjects:Incomplete",
     r"Incomplete\) does not implement the head-to-head interface .*lacks name, privacy_plan, client_message"),
    ("tests._byo_subjects:DELEGATING", r"must be a dataclass instance"),
    ("tests._byo_subjects:TOO_MANY", r"13 configurations, at most 12"),
    ("tests._byo_subjects:MIXED", r"instances of one class"),
    ("fedrepro.headtohead.algorithms:FedAvg", r"not a PrivacyPlan"),
])
def test_a_bad_algorithm_is_refused_with_a_clear_error(tmp_path, capsys, spec, message):
    import re

    before = set(tmp_path.iterdir())
    assert cli.main(["run", spec, "--profile", "quick", "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and re.search(message, err), err
    assert set(tmp_path.iterdir()) == before  # refused before anything is computed or stored


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "t3"], "task must be one of t1"),
    (["--epsilons", "1,-2"], "epsilons must be a comma-separated list of positive numbers"),
    (["--epsilons", "one"], "epsilons must be a comma-separated list of positive numbers"),
    (["--epsilons", "1,1"], "epsilons must be distinct"),
    (["--budget-bits", "0"], "budget-bits must be a comma-separated list of positive numbers"),
    (["--seeds", "0,-1"], "seeds must be a comma-separated list of distinct non-negative integers"),
    (["--profile", "huge"], "invalid choice: 'huge'"),
])
def test_bad_arguments_are_refused_by_name(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", EXAMPLE, "--store", str(tmp_path), *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_the_store_is_never_the_books(tmp_path, monkeypatch, capsys):
    assert cli.main(["run", EXAMPLE, "--profile", "quick", "--store", str(REPO / "data" / "results")]) == 2
    assert "inside the repository's data/ folder" in capsys.readouterr().err
    monkeypatch.delenv(byo.STORE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert byo.store_root() == (tmp_path / "cache" / "fedrepro" / "your-algorithm").resolve()
    monkeypatch.setenv(byo.STORE_VARIABLE, str(tmp_path / "env-store"))
    assert byo.store_root() == (tmp_path / "env-store").resolve()
    assert byo.store_root(tmp_path / "given") == (tmp_path / "given").resolve()  # --store wins


def test_the_identity_holds_the_import_path_the_hyper_parameters_and_the_code():
    base = yours.config_for(EXAMPLE, profile="quick")
    assert base.algorithm == EXAMPLE and base.name == NormalisedDPFedSGD.name
    assert base.grid == tuple(byo.hyper_parameters(c) for c in NormalisedDPFedSGD.grid())
    assert base.epsilons == (4.0,) and base.budgets == (2e7,) and base.seeds == (0,)  # T1's quick cells
    one = yours.config_for("tests._byo_subjects:ONE_DPFL", profile="quick")
    assert one.grid == (byo.hyper_parameters(byo.resolve("tests._byo_subjects:ONE_DPFL")),)
    assert one.result_name() != base.result_name()
    other_code = yours.YourAlgorithmConfig(**{**base.__dict__, "algorithm_code": "0" * 64})
    assert other_code.result_name() != base.result_name()  # an edited algorithm is another result
    assert base.result_name().startswith("your-algorithm-dp-fedsgd-normalised-gradients-quick-")


def test_the_grid_convention():
    cls = byo.resolve(EXAMPLE)
    assert byo.configurations(cls, EXAMPLE) == NormalisedDPFedSGD.grid()  # a class with grid()
    assert len(NormalisedDPFedSGD.grid()) == 12 == len(set(NormalisedDPFedSGD.grid()))
    dpfl = byo.configurations(byo.resolve("fedrepro.headtohead.algorithms:DPFL"))  # a class without one
    assert dpfl == (byo.resolve("fedrepro.headtohead.algorithms:DPFL")(),)
    inst = byo.resolve("tests._byo_subjects:ONE_DPFL")
    assert byo.configurations(inst) == (inst,)  # an instance runs as is
    assert byo.configurations(t1.GRIDS["dpfl"]) == t1.GRIDS["dpfl"]  # a tuple is the grid


def test_a_config_made_before_the_algorithm_changed_computes_nothing(tmp_path):
    config = yours.config_for("tests._byo_subjects:ONE_DPFL", profile="quick")
    edited = yours.YourAlgorithmConfig(**{**config.__dict__, "algorithm_code": "0" * 64})
    with pytest.raises(RuntimeError, match="changed since this config was made"):
        yours.load_your_algorithm(edited, tmp_path, progress=False)
    assert not yours.is_stored(edited, tmp_path)
