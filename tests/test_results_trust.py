"""Results anyone can trust: tamper evidence, read-only contexts, computed code dependencies,
forcing once per run, concurrent processes on one store, executors, make verify."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fedrepro.core import cache, codehash, executors, verify
from tests import _cache_subjects as subj
from tests._cache_subjects import ToyConfig, UnitsConfig, run_toy

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "data" / "results"


def _edit_number(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


# --------------------------------------------------------------------------- tamper evidence


def test_hand_edited_number_is_corrupt(results_dir, monkeypatch):
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    _edit_number(path, '"sum": 6.0', '"sum": 5.5')
    fresh, why = cache.is_fresh(path)
    assert not fresh and why.startswith("corrupt")
    assert cache.load(ToyConfig()) is None
    assert [p for p, _ in cache.stale_results(results_dir)] == [path]
    monkeypatch.setenv("FEDREPRO_READ_ONLY_STORE", str(results_dir))
    with pytest.raises(cache.CorruptResult, match=r"toy/square.json is corrupt.*make book"):
        cache.load_or_run(ToyConfig(), run_toy)
    monkeypatch.delenv("FEDREPRO_READ_ONLY_STORE")
    with pytest.warns(UserWarning, match="corrupt"):  # `make book` recomputes it
        assert cache.load_or_run(ToyConfig(), run_toy)["sum"] == 6.0


@pytest.mark.stored
def test_hand_edited_committed_result_is_caught(tmp_path, monkeypatch):
    """Finding 6: gamma of problems.json edited from 0.171 to 123.0 is reported as corrupt,
    and the chapter's loader refuses it in a read-only store."""
    store = tmp_path / "store"
    shutil.copytree(COMMITTED, store)
    path = store / "fedplt" / "problems.json"
    payload = json.loads(path.read_text())
    gamma = payload["result"]["traces"]["v1"]["gamma"]
    path.write_text(path.read_text().replace(json.dumps(gamma), "123.0", 1))
    assert dict((p.name, w) for p, w in cache.stale_results(store))["problems.json"].startswith("corrupt")
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(store))
    monkeypatch.setenv("FEDREPRO_READ_ONLY_STORE", str(store))
    from fedrepro.chapters.fedplt import problems as problems_report

    with pytest.raises(cache.CorruptResult, match="fedplt/problems.json"):
        problems_report.load("paper")


def test_files_are_0644(results_dir):
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_relative_results_dir_resolves_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", "rel-store")
    assert cache.results_root() == tmp_path / "rel-store"
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    assert path == tmp_path / "rel-store" / "toy" / "square.json"


# --------------------------------------------------------------------------- read-only contexts


def test_read_only_store_never_computes_or_writes(results_dir, monkeypatch):
    monkeypatch.setenv("FEDREPRO_READ_ONLY_STORE", str(results_dir))
    with pytest.raises(cache.MissingResult, match=r"toy/square.json is not computed.*make book"):
        cache.load_or_run(ToyConfig(), run_toy)
    with pytest.raises(cache.MissingResult):
        cache.run_units(UnitsConfig(n=2), ["u00", "u01"], subj.run_random_unit, progress=False)
    assert not results_dir.exists()


def test_stale_result_in_read_only_store_is_an_error_naming_it(results_dir, monkeypatch):
    cache.store(ToyConfig(), run_toy(ToyConfig()))
    monkeypatch.setenv("FEDREPRO_READ_ONLY_STORE", str(results_dir))
    with pytest.raises(cache.MissingResult, match=r"toy/square.json is stale: stored for another config"):
        cache.load_or_run(ToyConfig(n=4), run_toy)


def test_tests_never_compute_a_paper_profile_result(results_dir):
    assert os.environ.get("FEDREPRO_NO_PAPER_COMPUTE") == "1"  # set by conftest for the session
    with pytest.raises(RuntimeError, match="paper-profile result toy/paper-profile.json"):
        cache.load_or_run(subj.PaperProfileConfig(), lambda c: {"v": 1})
    assert cache.load_or_run(subj.PaperProfileConfig(profile="quick"), lambda c: {"v": 1}) == {"v": 1}


def test_committed_store_is_read_only_in_tests():
    assert Path(os.environ["FEDREPRO_READ_ONLY_STORE"]) == COMMITTED


# --------------------------------------------------------------------------- computed dependencies


def test_closure_follows_imports_inside_functions_and_parent_packages():
    closure = codehash.module_closure(["fedrepro.chapters.fedplt.theory.jacobian"])
    # theory_jacobian imports checks.jacobian, which imports fedplt.algorithm inside a function
    assert "fedrepro.fedplt.algorithm" in closure
    assert "fedrepro.core.rng" in closure or "fedrepro.core.cache" in closure
    assert {"fedrepro", "fedrepro.fedplt", "fedrepro.fedplt.checks"} <= set(closure)
    assert "fedrepro.data.datasets" not in closure  # not imported: not a dependency


def _stale_in_copy(lib: Path, store: Path) -> list[str]:
    code = ("import json, sys; from fedrepro.core import cache; "
            "print(json.dumps(sorted(f'{p.parent.name}/{p.name}' for p, _ in cache.stale_results(sys.argv[1]))))")
    env = {**os.environ, "PYTHONPATH": str(lib)}
    out = subprocess.run([sys.executable, "-c", code, str(store)], env=env, capture_output=True, text=True,
                         timeout=300, cwd=lib)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.stored
@pytest.mark.slow
def test_comment_edits_make_nothing_stale_and_an_rng_change_makes_its_dependents_stale(tmp_path):
    """Finding 7, on a copy of the library and of the committed store."""
    lib = tmp_path / "lib"
    shutil.copytree(REPO / "lib" / "fedrepro", lib / "fedrepro",
                    ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "store"
    shutil.copytree(COMMITTED, store)
    assert _stale_in_copy(lib, store) == []
    for path in (lib / "fedrepro").rglob("*.py"):  # a comment and a blank line in every module
        path.write_text("# an edited comment\n\n" + path.read_text())
    rng = lib / "fedrepro" / "core" / "rng.py"
    rng.write_text(rng.read_text().replace('"""', '"""An edited docstring. ', 1))
    store_code = lib / "fedrepro" / "core" / "cache.py"  # the store moves values, computes none
    assert "_FILE_MODE = 0o644" in store_code.read_text()
    store_code.write_text(store_code.read_text().replace("_FILE_MODE = 0o644", "_FILE_MODE = 0o664"))
    assert _stale_in_copy(lib, store) == []
    text = rng.read_text()
    assert "spawn_key=_spawn_key(path)" in text
    rng.write_text(text.replace("spawn_key=_spawn_key(path)", "spawn_key=_spawn_key(path) + (7,)"))
    stale = _stale_in_copy(lib, store)
    dependents = []
    for path in cache.stored_files(COMMITTED):
        stored, _ = cache.read_stored(path)
        if "fedrepro.core.rng" in codehash.module_closure(stored.code_roots):
            dependents.append(f"{path.parent.name}/{path.name}")
    assert dependents and stale == sorted(dependents)
    records = lib / "fedrepro" / "core" / "records.py"  # configs' canonical form: every result
    assert "return repr(obj)" in records.read_text()
    records.write_text(records.read_text().replace("return repr(obj)", "return str(obj)"))
    assert len(_stale_in_copy(lib, store)) == len(cache.stored_files(COMMITTED))


# --------------------------------------------------------------------------- forcing once per run


def test_force_recomputes_each_result_once_per_run(results_dir, monkeypatch):
    subj.CALLS.clear()
    cache.load_or_run(subj.OuterConfig(k=1), subj.run_outer)
    assert subj.CALLS == ["outer-1", "inner"]
    monkeypatch.setenv("FEDREPRO_FORCE", "1")
    subj.CALLS.clear()
    cache.load_or_run(subj.OuterConfig(k=1), subj.run_outer)
    cache.load_or_run(subj.OuterConfig(k=2), subj.run_outer)
    cache.load_or_run(subj.OuterConfig(k=1), subj.run_outer)
    assert subj.CALLS == ["outer-1", "inner", "outer-2"]  # inner once, outer-1 once


def test_force_since_counts_results_written_by_other_processes_of_the_run(results_dir, monkeypatch):
    monkeypatch.setenv("FEDREPRO_FORCE", "1")
    monkeypatch.setenv("FEDREPRO_FORCE_SINCE", repr(time.time() - 1))
    cache.store(ToyConfig(), run_toy(ToyConfig()))  # written by "another chapter" of this run
    calls = []
    cache.load_or_run(ToyConfig(), lambda c: calls.append(1) or run_toy(c))
    assert calls == []
    monkeypatch.setenv("FEDREPRO_FORCE_SINCE", repr(time.time() + 60))  # a run started later
    cache.load_or_run(ToyConfig(), lambda c: calls.append(1) or run_toy(c))
    assert calls == [1]


# --------------------------------------------------------------------------- concurrency


def _run_in_processes(jobs: list[tuple[str, str]], root: Path, extra_env: dict | None = None) -> None:
    procs = []
    for name, log in jobs:
        code = ("import sys; sys.path.insert(0, %r); from tests._cache_subjects import run_units_experiment; "
                "run_units_experiment(%r, %r, 40, %r)") % (str(REPO), str(root), name, log)
        procs.append(subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **(extra_env or {})},
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]


@pytest.mark.slow
def test_processes_sharing_a_store_neither_crash_nor_duplicate_work(tmp_path):
    """Finding 5: four processes run the same two experiments on one store at once."""
    shared, serial = tmp_path / "shared", tmp_path / "serial"
    logs = [str(tmp_path / f"log{i}") for i in range(4)]
    _run_in_processes([("a", logs[0]), ("b", logs[1]), ("a", logs[2]), ("b", logs[3])], shared)
    calls = sum(len(list(Path(log).iterdir())) for log in logs if Path(log).exists())
    assert calls == 80  # each unit of each experiment computed exactly once
    for name in ("a", "b"):
        subj.run_units_experiment(str(serial), name, 40, str(tmp_path / "serial-log"))
        assert _computed_bytes(shared / "toy" / f"units-{name}.json") == \
            _computed_bytes(serial / "toy" / f"units-{name}.json")
    assert not list((shared / "toy").glob(".units/*/*.json"))  # unit files cleaned up


# --------------------------------------------------------------------------- executors


def _computed_bytes(path: Path) -> bytes:
    """A stored file without its metadata (wall time, executor, workers: how it was computed,
    which differs between runs) and the digest that covers it: what was computed, byte for byte."""
    payload = json.loads(path.read_text())
    assert payload["meta"]["wall_s"] >= 0 and payload["meta"]["executor"] in ("serial", "processes", "dask")
    return json.dumps({k: v for k, v in payload.items() if k not in ("meta", "digest")}, sort_keys=True).encode()


def _stored_bytes(root: Path, cfg: UnitsConfig, unit_fn=subj.run_random_unit) -> bytes:
    cache.run_units(cfg, cfg.units(), unit_fn, combine=subj.combine_norms, root=root, progress=False)
    return _computed_bytes(cache.result_path(cfg, root))


def test_executor_choice_from_the_environment(monkeypatch):
    assert executors.executor_name() == "serial"
    monkeypatch.setenv("FEDREPRO_WORKERS", "3")
    assert executors.executor_name() == "processes" and executors.worker_count() == 3
    monkeypatch.setenv("FEDREPRO_DASK_SCHEDULER", "tcp://127.0.0.1:1")
    assert executors.executor_name() == "dask"
    monkeypatch.delenv("FEDREPRO_DASK_SCHEDULER")
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("FEDREPRO_WORKERS", bad)
        with pytest.raises(ValueError, match="FEDREPRO_WORKERS"):
            executors.worker_count()


@pytest.mark.slow
def test_serial_processes_and_dask_give_identical_stored_results(tmp_path, monkeypatch):
    cfg = UnitsConfig(n=12)
    serial = _stored_bytes(tmp_path / "serial", cfg)
    monkeypatch.setenv("FEDREPRO_WORKERS", "2")
    processes = _stored_bytes(tmp_path / "processes", cfg)
    monkeypatch.delenv("FEDREPRO_WORKERS")
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        monkeypatch.setenv("FEDREPRO_DASK_SCHEDULER", cluster.scheduler_address)
        dask = _stored_bytes(tmp_path / "dask", cfg)
    assert serial == processes == dask


def _log_units(log: Path) -> list[str]:
    return sorted(p.name.split("-")[0] for p in log.iterdir()) if log.exists() else []


@pytest.mark.slow
def test_killed_worker_loses_at_most_the_units_in_progress(tmp_path, monkeypatch):
    """A worker killed once: the pool restarts and the run completes; only units that were in
    progress are computed again."""
    root, log, kill = tmp_path / "store", tmp_path / "log", tmp_path / "kill"
    kill.write_text("1")
    monkeypatch.setenv("FEDREPRO_TEST_KILL", str(kill))
    monkeypatch.setenv("FEDREPRO_TEST_UNIT_LOG", str(log))
    monkeypatch.setenv("FEDREPRO_WORKERS", "2")
    cfg = UnitsConfig(n=12)
    cache.run_units(cfg, cfg.units(), subj.dying_unit, combine=subj.combine_norms, root=root, progress=False)
    calls = _log_units(log)
    assert set(calls) == set(cfg.units())
    assert len(calls) - len(cfg.units()) <= 2  # the other worker's unit and one queued one
    monkeypatch.delenv("FEDREPRO_WORKERS")
    assert _computed_bytes(cache.result_path(cfg, root)) == _stored_bytes(tmp_path / "serial", cfg, subj.dying_unit)


@pytest.mark.slow
def test_a_unit_that_keeps_killing_workers_stops_the_run_and_the_rest_resumes(tmp_path, monkeypatch):
    root, log, kill = tmp_path / "store", tmp_path / "log", tmp_path / "kill"
    kill.write_text(str(executors.MAX_POOL_RESTARTS + 1))
    monkeypatch.setenv("FEDREPRO_TEST_KILL", str(kill))
    monkeypatch.setenv("FEDREPRO_TEST_UNIT_LOG", str(log))
    monkeypatch.setenv("FEDREPRO_WORKERS", "2")
    cfg = UnitsConfig(n=12)
    with pytest.raises(RuntimeError, match="worker process died 4 times.*u05"):
        cache.run_units(cfg, cfg.units(), subj.dying_unit, combine=subj.combine_norms, root=root, progress=False)
    stored_units = {p.stem for p in (root / "toy" / ".units").glob("*/*.json")}
    assert "u05" not in stored_units and stored_units <= set(_log_units(log))
    shutil.rmtree(log)
    cache.run_units(cfg, cfg.units(), subj.dying_unit, combine=subj.combine_norms, root=root, progress=False)
    assert set(_log_units(log)) == set(cfg.units()) - stored_units  # stored units not recomputed


# --------------------------------------------------------------------------- make verify


def test_verify_recomputes_and_compares(results_dir):
    cfg = UnitsConfig(n=6)
    cache.run_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms, progress=False)
    cache.load_or_run(subj.OuterConfig(k=3), subj.run_outer)
    for path in cache.stored_files(results_dir):
        v = verify.verify_file(path, results_dir.parent / "scratch")
        assert v.ok and v.mode == "full" and v.max_rel == 0.0, v.line()
    # a forged result (digest recomputed so that it is not "corrupt") fails verification
    path = cache.result_path(subj.OuterConfig(k=3))
    payload = json.loads(path.read_text())
    payload["result"]["v"] = 4.5 * (1 + 1e-6)
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    v = verify.verify_file(path, results_dir.parent / "scratch2")
    assert not v.ok and "result.v" in v.detail and v.max_rel == pytest.approx(1e-6, rel=1e-3)


def test_verify_spot_checks_long_runs(results_dir, monkeypatch):
    monkeypatch.setattr(UnitsConfig, "verify_units", 3)
    cfg = UnitsConfig(n=10)
    cache.run_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms, progress=False)
    path = cache.result_path(cfg)
    v = verify.verify_file(path, results_dir.parent / "scratch")
    assert v.ok and v.mode == "spot 3/10"
    assert verify.spot_units(cfg.units(), 3) == ["u00", "u04", "u09"] or \
        verify.spot_units(cfg.units(), 3) == ["u00", "u05", "u09"]
    payload = json.loads(path.read_text())
    payload["units"]["u09"]["norm"] *= 1.01
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    assert not verify.verify_file(path, results_dir.parent / "scratch3").ok


def test_verify_on_worker_processes_gives_the_serial_verdicts(results_dir, monkeypatch, capsys):
    """``make verify`` runs the results on ``$FEDREPRO_WORKERS`` processes: the same verdicts
    (and a failure still fails) as one after the other."""
    cfg = UnitsConfig(n=4)
    cache.run_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms, progress=False)
    cache.load_or_run(subj.OuterConfig(k=3), subj.run_outer)
    monkeypatch.setenv("FEDREPRO_WORKERS", "1")
    assert verify.main(["--store", str(results_dir)]) == 0
    serial = capsys.readouterr().out
    monkeypatch.setenv("FEDREPRO_WORKERS", "2")
    assert verify.main(["--store", str(results_dir)]) == 0
    parallel = capsys.readouterr().out

    def verdicts(text):
        return sorted(line.split()[0] + " " + line.split()[-1] for line in text.splitlines()
                      if line.endswith((" ok", "FAIL")) or " ok  " in line)

    assert verdicts(serial) == verdicts(parallel) and len(verdicts(parallel)) == 3  # outer loads inner
    path = cache.result_path(subj.OuterConfig(k=3))
    payload = json.loads(path.read_text())
    payload["result"]["v"] = 4.5 * (1 + 1e-6)
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    assert verify.main(["--store", str(results_dir)]) == 1


def test_verify_spot_checks_the_units_spot_units_names(results_dir, monkeypatch):
    monkeypatch.setattr(UnitsConfig, "verify_units", 1)
    cfg = UnitsConfig(n=6)
    cache.run_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms, progress=False)
    path = cache.result_path(cfg)
    name = f"{path.parent.name}/{path.stem}"
    monkeypatch.setitem(verify.SPOT_UNITS, name, ("u03",))
    payload = json.loads(path.read_text())
    payload["units"]["u00"]["norm"] *= 1.01  # the even spread would see this one; the override does not
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    assert verify.verify_file(path, results_dir.parent / "scratch").ok
    payload["units"]["u03"]["norm"] *= 1.01
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    v = verify.verify_file(path, results_dir.parent / "scratch2")
    assert not v.ok and v.mode == "spot 1/6"
    monkeypatch.setitem(verify.SPOT_UNITS, name, ("nope",))
    assert "SPOT_UNITS" in verify.verify_file(path, results_dir.parent / "scratch3").detail


def test_spot_units_overrides_name_stored_units():
    """Every override names a result in the store and units it keeps."""
    for name, units in verify.SPOT_UNITS.items():
        stored, why = cache.read_stored(cache.results_root() / f"{name}.json")
        assert stored is not None, why
        assert set(units) <= set(stored.runner["units"]), name


def test_compare_rules():
    ok = verify.compare({"a": [1.0, 2.0], "s": "x", "n": np.array([1.0, np.nan])},
                        {"a": [1.0, 2.0 * (1 + 1e-12)], "s": "x", "n": np.array([1.0, np.nan])})
    assert ok.ok and 0 < ok.max_rel < 1e-11
    assert not verify.compare({"a": 1.0}, {"a": 1.1}).ok
    assert not verify.compare({"a": 1.0}, {"b": 1.0}).ok
    assert not verify.compare({"s": "x"}, {"s": "y"}).ok
    assert not verify.compare([float("inf")], [1.0]).ok
    assert not verify.compare(np.zeros(2), np.zeros(3)).ok
    assert verify.compare({"a": 1.0}, {"a": 1.05}, rtol=0.1).ok


def test_compare_reports_the_share_of_the_tolerance_used():
    """The margin of a passing result: |a - b| / (atol + rtol |b|) of its closest value, the
    rule's tolerance where a rule applies; above 1 exactly when the comparison fails."""
    half = verify.compare({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 1e-6]}, rtol=1e-6)
    assert half.ok and half.max_used == pytest.approx(0.5, rel=1e-4)
    over = verify.compare({"a": 1.0}, {"a": 1.0 + 3e-6}, rtol=1e-6)
    assert not over.ok and over.max_used == pytest.approx(3.0, rel=1e-4)
    ruled = verify.compare({"r": 0.0143, "x": 1.0}, {"r": 0.0143 + 2e-7, "x": 1.0}, rtol=1e-9,
                           rules=(("result.r", 1e-9, 1e-6),))
    assert ruled.ok and ruled.max_used == pytest.approx(0.2, rel=1e-4)
    assert verify.compare({"a": 1.0}, {"a": 1.0}).max_used == 0.0


@pytest.mark.stored
@pytest.mark.slow
@pytest.mark.notebooks
def test_stale_result_stops_a_chapter_in_a_test_context_and_writes_nothing(tmp_path, monkeypatch):
    """Finding 4: with a stale result, executing its chapter in a read-only context fails
    with an error naming it and leaves the stored file untouched (no recompute in place)."""
    import papermill

    from fedrepro.report import chapters

    store = tmp_path / "store"
    shutil.copytree(COMMITTED, store)
    path = store / "fedplt" / "problems.json"
    payload = json.loads(path.read_text())
    payload["code_hash"] = "0" * 64  # as if the library changed since it was computed
    payload["digest"] = cache.payload_digest(payload)
    path.write_text(json.dumps(payload))
    before = path.read_bytes()
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(store))
    monkeypatch.setenv("FEDREPRO_READ_ONLY_STORE", str(store))
    with pytest.raises(papermill.PapermillExecutionError, match=r"problems.json is stale.*make book"):
        chapters.run_chapter(REPO / "book" / "fedplt" / "problems.ipynb", tmp_path / "out.ipynb")
    assert path.read_bytes() == before


@pytest.mark.stored
def test_every_looser_verify_tolerance_says_why():
    """A config that loosens make verify's default tolerance, or exempts values from it,
    explains why next to it (verify_note)."""
    seen = 0
    for path in cache.stored_files(COMMITTED):
        stored, why = cache.read_stored(path)
        assert stored is not None, f"{path.name}: {why}"
        cls = type(cache.config_from_dict(stored.class_path, stored.config))
        assert stored.runner, f"{path.name} records no runner: make verify could not recompute it"
        loose = (cls.verify_rtol > cache.ExperimentConfig.verify_rtol or cls.verify_rules
                 or cls.verify_atol > cache.ExperimentConfig.verify_atol)
        if loose:
            seen += 1
            assert len(cls.verify_note) > 40, f"{cls.__name__} loosens verify without saying why"
    assert seen >= 1


def test_code_edited_while_a_result_computes_leaves_it_stale(tmp_path, results_dir, monkeypatch):
    """The stored code hash is the one the computation started from."""
    import importlib

    from fedrepro.core import codehash

    mod = tmp_path / "editedsubject.py"
    mod.write_text(
        "import dataclasses\nfrom fedrepro.core.cache import ExperimentConfig\n\n"
        "@dataclasses.dataclass(frozen=True)\nclass C(ExperimentConfig):\n"
        "    part = 'toy'\n    experiment = 'edited'\n\n"
        "def run(cfg):\n    import pathlib\n    p = pathlib.Path(__file__)\n"
        "    p.write_text(p.read_text() + '\\nEDITED = 1\\n')\n    return {'v': 1.0}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    subject = importlib.import_module("editedsubject")
    cache.load_or_run(subject.C(), subject.run)
    codehash.clear_cache()
    fresh, why = cache.is_fresh(cache.result_path(subject.C()))
    assert not fresh and "code hash" in why


@pytest.mark.slow
def test_workers_do_not_oversubscribe_the_cores(monkeypatch):
    """N workers get cores // N BLAS threads each, and run nested experiments serially."""
    monkeypatch.setenv("FEDREPRO_WORKERS", "2")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    seen = dict(executors.map_units(subj.thread_settings, None, ["a", "b", "c"], progress=False))
    expected = str(max(1, (os.cpu_count() or 1) // 2))
    assert all(s == {"blas": expected, "workers": "1"} for s in seen.values()), seen
    assert "OPENBLAS_NUM_THREADS" not in os.environ  # the parent's environment is restored


def test_finished_units_lists_what_an_interrupted_run_stored(results_dir, monkeypatch):
    """``finished_units`` reads the folder ``run_units`` keeps finished units in, computes
    nothing, and sees them disappear once the result is stored."""
    cfg = UnitsConfig(n=4)
    assert cache.finished_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms) == []
    calls = []

    def stop_after_two(config, unit):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(unit)
        return subj.run_random_unit(config, unit)

    monkeypatch.setattr(subj, "run_random_unit_stop", stop_after_two, raising=False)
    with pytest.raises(KeyboardInterrupt):
        cache.run_units(cfg, cfg.units(), subj.run_random_unit_stop, combine=subj.combine_norms, progress=False)
    assert cache.finished_units(cfg, cfg.units(), subj.run_random_unit_stop, combine=subj.combine_norms) == calls
    cache.run_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms, progress=False)
    assert cache.finished_units(cfg, cfg.units(), subj.run_random_unit, combine=subj.combine_norms) == []
