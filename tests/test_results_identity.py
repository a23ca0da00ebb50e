"""A stored result is what it computes: its identity is the declared experiment, its fields
and the code of its run, never where that code lives, which view shows it, or which device
or executor computed it (issue 49).

The scratch-copy test edits a copy of the library and asks a fresh process whether any
committed result went stale: editing every view module, moving a run module (its importers
updated) and changing the default device must leave all of them fresh and every seed as
it was, while the test in ``test_results_trust.py`` pins that a change to what is computed
(the seeding) makes its dependents stale.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fedrepro.core import cache, codehash, records, streams

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "data" / "results"
LIB = REPO / "lib" / "fedrepro"
VIEWS = ("fedrepro.chapters", "fedrepro.report")


def _stored():
    out = []
    for path in cache.stored_files(COMMITTED):
        stored, why = cache.read_stored(path)
        assert stored is not None, f"{path.name}: {why}"
        out.append((path, stored))
    return out


@pytest.mark.stored
def test_no_stored_result_depends_on_a_view():
    """Runs never import views: no module of ``fedrepro.chapters`` or ``fedrepro.report`` is in
    the code closure of any stored result, so no caption, table format, scorecard or facts
    edit can make a result stale."""
    leaks = {}
    for path, stored in _stored():
        config = cache.config_from_dict(stored.class_path, stored.config, stored.identity)
        roots = cache._code_roots(config, cache.current_runner(config, stored.runner))
        views = [m for m in codehash.module_closure(roots) if m.startswith(VIEWS)]
        if views:
            leaks[path.stem] = views
    assert leaks == {}


@pytest.mark.stored
def test_every_stored_result_is_computed_by_a_run_module():
    """The config class and the run functions of every stored result live in the runs layer
    (:mod:`fedrepro.experiments`), and each declared identity has one class."""
    records.discover_configs()
    registered = records.registered_configs()
    assert {k: v for k, v in registered.items() if len(v) > 1} == {}
    for path, stored in _stored():
        config = cache.config_from_dict(stored.class_path, stored.config, stored.identity)
        assert type(config).__module__.startswith("fedrepro.experiments."), path.stem
        runner = cache.current_runner(config, stored.runner)
        for key in ("run", "unit", "combine"):
            if runner.get(key):
                assert runner[key].startswith("fedrepro.experiments."), (path.stem, runner[key])


def test_no_seed_is_named_from_where_code_lives():
    """No config class pins a seed name; streams are named by declared identity, and the
    historical labels are a frozen table keyed by it (entries may go, none may come)."""
    pins = [str(p.relative_to(REPO)) for p in LIB.rglob("*.py")
            if re.search(r"^\s*seed_name\s*[:=]", p.read_text(), flags=re.M)]
    assert pins == []
    records.discover_configs()
    declared = set(records.registered_configs())
    assert set(streams.HISTORICAL_STREAMS) <= declared  # no label for an experiment that does not exist
    assert len(streams.HISTORICAL_STREAMS) <= 63  # the table as frozen (issue 49): it only shrinks
    assert streams.stream_name("newpart", "new-experiment") == "newpart/new-experiment"
    for label in streams.HISTORICAL_STREAMS.values():
        assert not label.startswith("fedrepro.")  # a name, not a reference the code hash would follow


def test_a_config_hash_names_no_class():
    """Two classes declaring the same identity and fields hash alike (a class that moved);
    a class path is only a hint for rebuilding the config."""
    from tests._cache_subjects import ToyConfig

    @dataclasses.dataclass(frozen=True)
    class Moved(ToyConfig):
        pass

    assert cache.config_hash(Moved(n=2)) == cache.config_hash(ToyConfig(n=2))
    assert cache.config_hash(ToyConfig(n=3)) != cache.config_hash(ToyConfig(n=2))
    rebuilt = cache.config_from_dict("tests.nowhere:ToyConfig", {"n": 2}, {"part": "toy", "experiment": "square"})
    assert type(rebuilt) is ToyConfig


def _probe(lib: Path, store: Path) -> dict:
    """In a fresh process on the library copy ``lib``: the stale results of ``store``, and the
    seed entropy and config hash of every stored result's config."""
    code = (
        "import json, sys\n"
        "from fedrepro.core import cache, rng\n"
        "out = {'stale': sorted(f'{p.parent.name}/{p.name}: {w}' for p, w in cache.stale_results(sys.argv[1])),\n"
        "       'seeds': {}}\n"
        "for path in cache.stored_files(sys.argv[1]):\n"
        "    s, _ = cache.read_stored(path)\n"
        "    c = cache.config_from_dict(s.class_path, s.config, s.identity)\n"
        "    out['seeds'][path.stem] = [str(rng.entropy_of(c)), cache.config_hash(c), type(c).__module__]\n"
        "print(json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": str(lib)}
    out = subprocess.run([sys.executable, "-c", code, str(store)], env=env, capture_output=True, text=True,
                         timeout=600, cwd=lib)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _edit_every_view(lib: Path) -> int:
    """Add a string-returning function to every view module (as a caption edit would change
    it: any change to a module's syntax tree changes its hash)."""
    count = 0
    for package in ("chapters", "report"):
        for path in (lib / "fedrepro" / package).rglob("*.py"):
            path.write_text(path.read_text() + '\n\ndef _edited_caption():\n    return "an edited caption"\n')
            count += 1
    return count


def _move_module(lib: Path, name: str) -> str:
    """Move the library module ``name`` to ``<name>_moved`` and update every import of it."""
    parts = name.split(".")
    src = lib.joinpath(*parts).with_suffix(".py")
    new = name + "_moved"
    src.rename(src.with_name(parts[-1] + "_moved.py"))
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    parent, leaf = name.rsplit(".", 1)
    # ``from package import module [as alias]``: the binding keeps its name
    from_package = re.compile(rf"\bfrom {re.escape(parent)} import {leaf}\b( as \w+)?")
    for path in (lib / "fedrepro").rglob("*.py"):
        text = path.read_text()
        edited = from_package.sub(lambda m: f"from {parent} import {leaf}_moved{m.group(1) or ' as ' + leaf}",
                                  pattern.sub(new, text))
        if edited != text:
            path.write_text(edited)
    return new


@pytest.mark.stored
@pytest.mark.slow
def test_view_edits_module_moves_and_the_device_leave_every_result_fresh(tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(LIB, lib / "fedrepro", ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "store"
    shutil.copytree(COMMITTED, store)
    before = _probe(lib, store)
    assert before["stale"] == []

    assert _edit_every_view(lib) > 50
    assert _probe(lib, store)["stale"] == []

    # move the run modules of one result of each part (imports updated everywhere)
    moved = {}
    for stem in ("problems", "tables-seed0", "experiments-fig3", "t1", "audit-fedplt"):
        module = before["seeds"][stem][2]
        if module not in moved.values():
            moved[stem] = module
            _move_module(lib, module)
    after = _probe(lib, store)
    assert after["stale"] == []
    for stem, module in moved.items():
        assert after["seeds"][stem][2] == module + "_moved"  # the class was found where it went
    assert {k: v[:2] for k, v in after["seeds"].items()} == {k: v[:2] for k, v in before["seeds"].items()}

    device = lib / "fedrepro" / "core" / "device.py"
    text = device.read_text()
    assert 'DEFAULT_DEVICE = "cpu"' in text
    device.write_text(text.replace('DEFAULT_DEVICE = "cpu"', 'DEFAULT_DEVICE = "cuda"'))
    assert _probe(lib, store)["stale"] == []


def test_a_reference_to_other_code_is_hashed_by_that_code():
    """Moving a module changes no hash, but importing a name from a different module does:
    a reference is hashed by the content of the module it names."""
    tree = ast.parse("from fedrepro.core.linalg import x\nfrom fedrepro.core.prox import x\n")
    targets = codehash._unname_library_references(tree)
    assert targets == ["fedrepro.core.linalg", "fedrepro.core.prox"]
    assert "fedrepro.core" not in ast.dump(tree)
    assert codehash.local_hash("fedrepro.core.linalg") != codehash.local_hash("fedrepro.core.prox")


def test_rotating_spot_checks_cover_every_unit_within_their_period():
    from fedrepro.core import verify

    units = [f"u{i:02d}" for i in range(10)]
    assert verify.spot_units(units, 3) in (["u00", "u04", "u09"], ["u00", "u05", "u09"])  # fixed: unchanged
    period = verify.rotation_period(len(units), 3)
    assert period == 4
    seen = [u for r in range(period) for u in verify.spot_units(units, 3, rotation=r)]
    assert sorted(seen) == units  # each unit exactly once over one period
    assert all(len(verify.spot_units(units, 3, rotation=r)) <= 3 for r in range(9))
    assert verify.spot_units(units, 3, rotation=7) == verify.spot_units(units, 3, rotation=3)
    assert verify.rotation_key("12") == 12 and verify.rotation_key("00ff00ff00") == 0x00FF00FF
    with pytest.raises(ValueError, match="FEDREPRO_VERIFY_ROTATE"):
        verify.rotation_key("not-a-key")
    verdicts = [verify.Verdict("a/full", 1.0, 0.0, 1e-9, True, "full"),
                verify.Verdict("a/spot", 1.0, 0.0, 1e-9, True, "spot 3/10", units_total=10, units_checked=3)]
    text = verify.coverage(verdicts, rotation=5)
    assert "1 of 2 results recomputed in full" in text and "3 of 10 units" in text and "rotation 1 of 4" in text
    assert "fixed spot checks" in verify.coverage(verdicts, rotation=None)


def test_the_library_has_no_import_circle():
    """No module of the library reaches itself through its imports (function-level ones
    included, as grimp reads them): the circles between scorecards and effects modules are gone."""
    import grimp

    graph = grimp.build_graph("fedrepro", cache_dir=None)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    # Kahn's algorithm: what cannot be ordered lies on, or behind, a circle
    indegree = {m: 0 for m in imports}
    for targets in imports.values():
        for t in targets:
            indegree[t] += 1
    ready = [m for m, d in indegree.items() if d == 0]
    ordered = 0
    while ready:
        m = ready.pop()
        ordered += 1
        for t in imports[m]:
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    assert ordered == len(imports), sorted(m for m, d in indegree.items() if d > 0)[:10]


def test_a_budgeted_verify_checks_the_cheap_results_always_and_rotates_the_long_ones():
    from fedrepro.core import verify

    times = {"a/cheap1": 10.0, "a/cheap2": 20.0, "b/long1": 400.0, "b/long2": 300.0, "b/long3": 250.0}
    names = [*times, "c/new"]  # a result without a recorded time is always checked
    assert verify.plan(names, times, None, 2, 5).checked == tuple(names)
    # 300 s on 2 workers: 600 s of one worker; the cheapest fill half of it (10 + 20 + 250),
    # the others are packed in groups of what is left (320 s): 400 s and 300 s go one per group
    plans = [verify.plan(names, times, 300.0, 2, r) for r in range(6)]
    assert {p.groups for p in plans} == {2} and plans[0].always == 4
    for p in plans:
        assert {"a/cheap1", "a/cheap2", "b/long3", "c/new"} <= set(p.checked)
        assert set(p.checked) | set(p.deferred) == set(names) and not set(p.checked) & set(p.deferred)
        assert len(p.deferred) == 1  # one long result waits for the next rotation
    assert set().union(*(set(p.checked) for p in plans[:2])) == set(names)  # every result within 2 runs
    assert plans[0].checked == plans[2].checked != plans[1].checked
    with pytest.raises(ValueError, match="budget"):
        verify.plan(names, times, 0.0, 2, 0)
    assert verify.recorded_times(Path("/nonexistent/verify-times.json")) == {}
