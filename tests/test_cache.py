"""Results store: keys, freshness, atomic writes, resumable units."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fedrepro.core import cache
from tests._cache_subjects import ToyConfig, run_toy

REPO = Path(__file__).resolve().parents[1]


def test_roundtrip_keeps_arrays_and_special_floats(results_dir):
    res = cache.load_or_run(ToyConfig(), run_toy)
    assert isinstance(res["x"], np.ndarray) and res["x"].dtype == np.float64
    np.testing.assert_array_equal(res["x"], [0.0, 2.0, 4.0])
    assert np.isnan(res["nan"]) and res["label"] == "ok" and res["n"] == 3
    stored = cache.load(ToyConfig())
    assert stored is not None
    np.testing.assert_array_equal(stored.result["x"], res["x"])
    assert stored.path == results_dir / "toy" / "square.json"


def test_cached_result_is_not_recomputed(results_dir):
    calls = []

    def run(cfg):
        calls.append(cfg)
        return run_toy(cfg)

    cache.load_or_run(ToyConfig(), run)
    cache.load_or_run(ToyConfig(), run)
    assert len(calls) == 1
    cache.load_or_run(ToyConfig(), run, force=True)
    assert len(calls) == 2


def test_force_from_environment(results_dir, monkeypatch):
    calls = []
    cache.load_or_run(ToyConfig(), lambda c: calls.append(1) or run_toy(c))
    monkeypatch.setenv("FEDREPRO_FORCE", "1")
    cache.load_or_run(ToyConfig(), lambda c: calls.append(1) or run_toy(c))
    assert len(calls) == 2


def test_changed_config_is_detected_and_recomputed(results_dir):
    cache.load_or_run(ToyConfig(n=3), run_toy)
    assert cache.load(ToyConfig(n=4)) is None  # same file, other config: stale
    res = cache.load_or_run(ToyConfig(n=4), run_toy)
    assert res["n"] == 4
    assert cache.load(ToyConfig(n=4)) is not None


def test_config_hash_depends_on_every_field_and_class():
    base = cache.config_hash(ToyConfig())
    assert cache.config_hash(ToyConfig()) == base
    assert cache.config_hash(ToyConfig(scale=2.0000001)) != base
    assert cache.config_hash(ToyConfig(tags=("a",))) != base


def test_changed_code_is_detected(results_dir, monkeypatch):
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    assert cache.is_fresh(path) == (True, "fresh")
    real = cache.code_hash
    monkeypatch.setattr(cache, "code_hash", lambda roots: real(roots) + "-edited")
    fresh, why = cache.is_fresh(path)
    assert not fresh and "code hash" in why
    assert cache.load(ToyConfig()) is None
    assert [p for p, _ in cache.stale_results(results_dir)] == [path]


def test_code_hash_follows_code_not_comments(tmp_path, monkeypatch):
    """Roots outside the library count by their normalised source: comments, blank lines and
    docstrings do not change the hash, any change to the code does."""
    from fedrepro.core import codehash

    mod = tmp_path / "hashsubject.py"
    mod.write_text('"""Doc."""\nimport fedrepro.core.rng\n\ny = 2\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    h1 = cache.code_hash(["hashsubject"])
    mod.write_text('"""Another doc."""\n# a comment\nimport fedrepro.core.rng\n\n\ny = 2  # same code\n')
    codehash.clear_cache()
    assert cache.code_hash(["hashsubject"]) == h1
    mod.write_text('"""Doc."""\nimport fedrepro.core.rng\n\ny = 3\n')
    codehash.clear_cache()
    assert cache.code_hash(["hashsubject"]) != h1
    with pytest.raises(ValueError, match="cannot be found"):
        cache.code_hash(["no_such_module_here"])
    with pytest.raises(ValueError, match="not a module of the fedrepro library"):
        cache.code_hash(["fedrepro.no_such_module"])


def test_tampered_config_is_corrupt_or_stale(results_dir):
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    payload = json.loads(path.read_text())
    payload["config"]["n"] = 99  # result no longer belongs to the recorded hash
    path.write_text(json.dumps(payload))
    fresh, why = cache.is_fresh(path)
    assert not fresh and why.startswith("corrupt")
    payload["digest"] = cache.payload_digest(payload)  # a careful forger fixes the digest too
    path.write_text(json.dumps(payload))
    fresh, why = cache.is_fresh(path)
    assert not fresh and "config hash" in why


def test_corrupt_file_is_never_returned(results_dir):
    path = cache.store(ToyConfig(), run_toy(ToyConfig()))
    text = path.read_text()
    path.write_text(text[: len(text) // 2])  # truncated by something outside our control
    assert cache.load(ToyConfig()) is None
    with pytest.warns(UserWarning, match="unreadable"):
        res = cache.load_or_run(ToyConfig(), run_toy)
    assert res["sum"] == 6.0 and cache.load(ToyConfig()) is not None


def test_killed_writer_leaves_no_half_file(results_dir):
    """A writer killed mid-write leaves the previous file (or none), never a partial one."""
    code = ("import sys; sys.path.insert(0, %r); from tests._cache_subjects import write_slowly_forever;"
            " write_slowly_forever(%r)") % (str(REPO), str(results_dir))
    proc = subprocess.Popen([sys.executable, "-c", code])
    target = results_dir / "toy" / "square.json"
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the temp file has received some data
        temps = list((results_dir / "toy").glob(".square.json.*.tmp")) if (results_dir / "toy").exists() else []
        if temps and temps[0].stat().st_size > 5000:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the writer never started writing")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not target.exists(), "a half-written result reached the final path"
    assert cache.load(ToyConfig(n=5)) is None
    assert cache.stale_results(results_dir) == []  # temp files are not results
    res = cache.load_or_run(ToyConfig(n=5), run_toy)  # and the next run computes it anew
    assert res["n"] == 5


def test_atomic_write_replaces_previous_version(tmp_path):
    path = tmp_path / "a" / "f.json"
    cache.atomic_write_text(path, "one")
    cache.atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]


def test_bad_inputs(results_dir):
    with pytest.raises(TypeError, match="mapping"):
        cache.load_or_run(ToyConfig(), lambda c: [1, 2])
    with pytest.raises(TypeError, match="cannot be stored"):
        cache.store(ToyConfig(), {"x": object()})
    with pytest.raises(TypeError, match="dataclass"):
        cache.config_hash({"n": 1})

    class NoPart(cache.ExperimentConfig):
        pass

    with pytest.raises(ValueError, match="part"):
        cache.result_path(NoPart())


def test_run_units_resumes_after_interruption(results_dir):
    done = []

    def unit(cfg, name):
        if name == "u3" and len(done) == 3 and not getattr(unit, "resumed", False):
            raise KeyboardInterrupt  # the user stops the run during the fourth unit
        done.append(name)
        return {"value": int(name[1:]) * cfg.n}

    units = [f"u{i}" for i in range(6)]
    with pytest.raises(KeyboardInterrupt):
        cache.run_units(ToyConfig(), units, unit, progress=False)
    assert done == ["u0", "u1", "u2"]
    unit.resumed = True
    res = cache.run_units(ToyConfig(), units, unit, progress=False)
    assert done == ["u0", "u1", "u2", "u3", "u4", "u5"]  # u0-u2 were not recomputed
    assert [res["units"][u]["value"] for u in units] == [0, 3, 6, 9, 12, 15]
    assert not (results_dir / "toy" / ".units").exists()  # unit files cleaned up
    assert cache.load(ToyConfig()) is not None


def test_run_units_combine_and_validation(results_dir):
    res = cache.run_units(ToyConfig(), ["a", "b"], lambda c, u: {"v": len(u)},
                          combine=lambda cfg, d: {"total": sum(r["v"] for r in d.values())},
                          progress=False)
    assert res == {"total": 2}
    with pytest.raises(ValueError, match="distinct"):
        cache.run_units(ToyConfig(), ["a", "a"], lambda c, u: {})
    with pytest.raises(ValueError, match="file-name-safe"):
        cache.run_units(ToyConfig(), ["a/b"], lambda c, u: {})


def test_config_roundtrip_from_stored_dict():
    cfg = ToyConfig(n=7, tags=("x", "y"))
    again = cache.config_from_dict("tests._cache_subjects:ToyConfig", cache.config_to_dict(cfg))
    assert again == cfg and cache.config_hash(again) == cache.config_hash(cfg)


def test_committed_results_are_fresh():
    """`make test` fails if any committed result under data/results/ is stale."""
    stale = cache.stale_results(REPO / "data" / "results")
    assert stale == [], "stale committed results (rerun `make book`): " + "; ".join(
        f"{p.relative_to(REPO)}: {why}" for p, why in stale)


def test_quick_profile_results_are_stored_apart(results_dir):
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Profiled(cache.ExperimentConfig):
        part = "toy"
        experiment = "profiled"
        profile: str = "paper"

    assert cache.result_path(Profiled()).name == "profiled.json"
    assert cache.result_path(Profiled(profile="quick")).name == "profiled-quick.json"


def test_forced_run_units_ignores_units_of_an_interrupted_run(results_dir, monkeypatch):
    calls = []
    state = {"interrupt": True}

    def unit(cfg, name):
        if name == "b" and state["interrupt"]:
            raise RuntimeError("run stopped")
        calls.append(name)
        return {"v": 1}

    with pytest.raises(RuntimeError):
        cache.run_units(ToyConfig(), ["a", "b"], unit, progress=False)
    assert calls == ["a"]
    state["interrupt"] = False
    monkeypatch.setenv("FEDREPRO_FORCE", "1")  # what `make reproduce` sets
    cache.run_units(ToyConfig(), ["a", "b"], unit, progress=False)
    assert calls == ["a", "a", "b"]  # "a" recomputed, not taken from the interrupted run


def test_read_only_never_computes(results_dir):
    calls = []

    def run(cfg):
        calls.append(cfg)
        return {"value": 1.0}

    cfg = ToyConfig(n=7)
    with cache.read_only():
        with pytest.raises(cache.MissingResult, match="toy"):
            cache.load_or_run(cfg, run)
        with pytest.raises(cache.MissingResult):
            cache.run_units(cfg, ["a", "b"], lambda c, u: {"u": u}, progress=False)
    assert calls == []
    cache.load_or_run(cfg, run)  # outside the block it computes
    with cache.read_only():
        assert cache.load_or_run(cfg, run) == {"value": 1.0}
    assert len(calls) == 1


def test_fresh_result_has_the_key_order_of_a_stored_one(results_dir):
    # a chapter that prints a dict must show the same text whether it computed or loaded it
    def run(cfg):
        return {"zeta": 1, "alpha": {"y": 2, "b": 3}}

    fresh = cache.load_or_run(ToyConfig(n=11), run)
    stored = cache.load_or_run(ToyConfig(n=11), run)
    assert repr(fresh) == repr(stored)
    assert list(fresh) == ["alpha", "zeta"]


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -np.inf, np.float64("nan")])
def test_a_non_finite_config_value_is_refused_before_computing(tmp_path, scale):
    """A NaN or infinite config field used to be stored as the string 'nan' (float NaN and
    'nan' sharing one key), or to fail only after the computation, losing it."""
    calls = []

    def run(cfg):
        calls.append(cfg)
        return run_toy(cfg)

    with pytest.raises(ValueError, match="config field scale must be a finite number"):
        cache.load_or_run(ToyConfig(scale=scale), run, root=tmp_path)
    assert calls == [] and not any(tmp_path.rglob("*.json"))


def test_a_non_finite_value_inside_a_tuple_field_is_named():
    with pytest.raises(ValueError, match=r"config field tags\[1\]"):
        cache.check_config_values(ToyConfig(tags=("a", float("nan"))))
    cache.check_config_values(ToyConfig(scale=1e308))
