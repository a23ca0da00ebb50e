"""The kernel families of ``make verify-kernels`` (:mod:`fedrepro.core.kernels`)."""

from __future__ import annotations

import pytest

from fedrepro.core import kernels

AVX2_CPU = {"SSE42": True, "AVX": True, "AVX2": True, "FMA3": True, "AVX512F": False, "AVX512BW": False,
            "AVX512DQ": False, "AVX512VL": False, "AVX512_SKX": False, "X86_V4": False}
AVX512_CPU = {**AVX2_CPU, "AVX512F": True, "AVX512BW": True, "AVX512DQ": True, "AVX512VL": True,
              "AVX512CD": True, "AVX512_SKX": True, "X86_V4": True, "AVX512FP16": False}


def test_families_a_cpu_can_run():
    assert kernels.runnable_families(AVX2_CPU) == ["avx2"]
    assert kernels.runnable_families(AVX512_CPU) == ["avx2", "avx512"]
    assert kernels.runnable_families({"SSE42": True}) == []


def test_avx2_family_on_an_avx512_cpu_turns_off_exactly_the_avx512_loops_it_has():
    env = kernels.family_environment("avx2", AVX512_CPU, base={"PATH": "/bin", "NPY_DISABLE_CPU_FEATURES": "AVX2"})
    assert env["OPENBLAS_CORETYPE"] == "Haswell" and env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert set(env["NPY_DISABLE_CPU_FEATURES"].split()) == {"AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL",
                                                           "AVX512CD", "AVX512_SKX", "X86_V4"}
    assert env["PATH"] == "/bin"


def test_avx2_family_on_an_avx2_cpu_disables_nothing_and_avx512_clears_an_inherited_setting():
    assert "NPY_DISABLE_CPU_FEATURES" not in kernels.family_environment("avx2", AVX2_CPU, base={})
    env = kernels.family_environment("avx512", AVX512_CPU, base={"NPY_DISABLE_CPU_FEATURES": "AVX512F"})
    assert "NPY_DISABLE_CPU_FEATURES" not in env and env["OPENBLAS_CORETYPE"] == "SkylakeX"


def test_family_errors():
    with pytest.raises(ValueError, match="family must be one of"):
        kernels.family_environment("neon", AVX512_CPU, base={})
    with pytest.raises(ValueError, match="cannot run the 'avx512' kernels"):
        kernels.family_environment("avx512", AVX2_CPU, base={})


def test_verify_summary_file_carries_each_verdict(tmp_path, monkeypatch):
    """What ``make verify-kernels`` tabulates comes from verify's ``--summary`` file."""
    import json
    import os

    from fedrepro.core import verify

    # verify.main points the process at its scratch store and lifts the tests' guards in os.environ:
    # give it a copy, so that nothing leaks into the rest of the session
    monkeypatch.setattr(os, "environ", dict(os.environ))
    monkeypatch.setattr(verify, "verify_file", lambda path, scratch: verify.Verdict(
        f"{path.parent.name}/{path.stem}", 1.0, 2.8e-5, 5e-4, path.stem != "b", "full", "", 0.28 if path.stem != "b" else 1.8))
    store = tmp_path / "store" / "fedplt"
    store.mkdir(parents=True)
    monkeypatch.setattr(verify.cache, "stored_files", lambda root: [store / "a.json", store / "b.json"])
    out = tmp_path / "summary.json"
    assert verify.main(["--store", str(tmp_path / "store"), "--summary", str(out)]) == 1
    rows = json.loads(out.read_text())
    assert [(r["name"], r["ok"], r["used"]) for r in rows] == [("fedplt/a", True, 0.28), ("fedplt/b", False, 1.8)]
