"""The normalised code hash (:mod:`fedrepro.core.codehash`) is the same on every Python from
3.11 on: a stored result computed under one Python is fresh under another.

Python 3.12 added ``type_params`` to the syntax tree of functions and classes and 3.13 leaves
empty fields out of ``ast.dump``; hashed naively, every module's hash (and so every stored
result's code hash) changed with the interpreter. The pinned hash below is the one Python
3.11's plain ``ast.dump`` gives; the cross-version test runs the module under every other
Python it finds (3.12 and 3.13 where installed) and compares every library module's hash.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fedrepro.core import codehash

SNIPPET = '''
"""Module docstring (not hashed)."""
import math


class Point:
    """Docstring."""
    x: float = 0.0

    def norm(self, p: int = 2) -> float:
        return math.hypot(self.x, 0.0) ** (p / 2)


async def fetch(n):
    return [i * i for i in range(n) if i % 2]


def outer(*args, key=None, **kw):
    square = lambda v: v * v  # noqa: E731
    return sum(square(a) for a in args), key, kw
'''

#: sha256 of Python 3.11's ``ast.dump(tree, annotate_fields=True, include_attributes=False)``
#: of SNIPPET without its docstrings: the hash every stored result was computed with.
PINNED = "95b2402eec045acd4178bbdd0de356bf"


def test_hash_of_a_module_is_the_one_python_3_11_gives(tmp_path):
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    assert codehash.normalised_hash(path)[:32] == PINNED


_CHILD = """
import importlib.util, json, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("codehash_copy", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
print(json.dumps({p: mod.normalised_hash(Path(p)) for p in sys.argv[2:]}))
"""


def _other_pythons() -> list[str]:
    """Interpreters of another minor version than this one, 3.11 or newer, found on PATH or
    under pyenv's folder of versions."""
    found: dict[str, str] = {}
    candidates = [shutil.which(f"python3.{m}") for m in range(11, 16)]
    root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    for exe in filter(None, candidates):
        try:
            out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[1])"],
                                 capture_output=True, text=True, timeout=30, check=True)
        except (OSError, subprocess.SubprocessError):
            continue
        minor = int(out.stdout.strip())
        if minor >= 11 and minor != sys.version_info[1]:
            found.setdefault(str(minor), exe)
    return sorted(found.values())


def test_every_library_module_hashes_alike_under_every_python_found():
    others = _other_pythons()
    if not others:
        pytest.skip("no Python 3.11+ of another minor version on this machine")
    spec = importlib.util.find_spec("fedrepro.core.codehash")
    files = [str(p) for p in codehash._source_files()]
    here = {p: codehash.normalised_hash(Path(p)) for p in files}
    for exe in others:
        out = subprocess.run([exe, "-c", _CHILD, spec.origin, *files], capture_output=True, text=True,
                             timeout=300, check=True)
        there = json.loads(out.stdout)
        differ = [p for p in files if there[p] != here[p]]
        assert not differ, f"{exe}: {len(differ)} of {len(files)} modules hash differently, e.g. {differ[:3]}"


def test_modules_a_registry_names_are_code_of_the_results_that_use_it():
    """The comparison chapter builds its classes through ``fedrepro.fedplt.baselines.algorithm_class``,
    which imports ``"module:Class"`` strings by name: the import graph alone never reaches the
    baselines, so editing one left every comparison result fresh. The closure follows such
    strings (and only strings naming an existing module)."""
    from fedrepro.fedplt.baselines import ALGORITHMS

    closure = set(codehash.module_closure(["fedrepro.experiments.fedplt.comparison"]))
    named = {target.partition(":")[0] for target in ALGORITHMS.values()}
    assert named and named <= closure
    assert "fedrepro.fedplt.baselines.tamuna_readings" not in closure  # not named by the registry
    assert "fedrepro.fedplt.baselines.tamuna_readings" in codehash.module_closure(
        ["fedrepro.experiments.fedplt.readings.tamuna"])  # named by the readings' own table
    assert codehash._named_references("fedrepro.fedplt.baselines") == named
    # streams are named by declared identity: a run module names no module by a seed string
    assert codehash._named_references("fedrepro.experiments.dpfedpaq.mlp_width") == set()
