"""``make verify-kernels``: verify the committed results under another CPU family's kernels.

The last digits of a result follow the arithmetic kernels the machine picks at run time:
OpenBLAS chooses its matrix kernels by CPU (``Haswell`` on AVX2 machines, AMD Zen 2/3 included;
``SkylakeX`` on AVX-512 machines, Intel Xeon since Skylake and AMD Zen 4), NumPy dispatches its
vectorised loops (``exp``, ``log``, sums of float32 arrays) on the CPU's features, and PyTorch
its ATen kernels and MKL likewise. CI runs on whichever of these families it gets, so every
result's tolerance (:class:`~fedrepro.core.records.ExperimentConfig`, ``verify_rtol``,
``verify_rules``) must cover the spread *between* families, not only between two runs on one
machine.

One machine can run the kernels of an older family: an AVX-512 CPU runs the AVX2 family's by
environment variables (:data:`FAMILIES`), which is how the tolerances are measured. What it
cannot imitate is a vendor's own dispatch (MKL inside PyTorch picks other code on Intel than on
AMD), so the tolerances keep a margin over the measured spread.
``python -m fedrepro.core.kernels [NAME ...]`` runs ``python -m fedrepro.core.verify`` once
per family this CPU can run, in a fresh process each (the kernels are chosen when the
libraries load), prints the share of its tolerance each result uses under each family, and
exits non-zero when any result fails under any of them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["FAMILIES", "family_environment", "main", "runnable_families"]

#: The kernel families, as the environment that makes a capable CPU use them:
#: ``avx2`` (OpenBLAS's Haswell kernels, NumPy without its AVX-512 loops, ATen and MKL at AVX2) and
#: ``avx512`` (OpenBLAS's SkylakeX kernels and NumPy's, ATen's and MKL's AVX-512 code).
FAMILIES: Mapping[str, Mapping[str, str]] = {
    "avx2": {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "avx512": {"OPENBLAS_CORETYPE": "SkylakeX", "ATEN_CPU_CAPABILITY": "avx512",
               "MKL_ENABLE_INSTRUCTIONS": "AVX512"},
}


def _cpu_features() -> dict[str, bool]:
    from numpy._core._multiarray_umath import __cpu_features__  # NumPy's runtime CPU detection

    return dict(__cpu_features__)


def _avx512_features(features: Mapping[str, bool]) -> list[str]:
    """The AVX-512 features NumPy detected (what ``NPY_DISABLE_CPU_FEATURES`` must list to fall
    back to its AVX2 loops; naming one the CPU lacks is an error)."""
    return [name for name, present in features.items()
            if present and (name.startswith("AVX512") or name == "X86_V4")]


def runnable_families(features: Mapping[str, bool] | None = None) -> list[str]:
    """The families this CPU can run: ``avx2`` needs AVX2 and FMA3, ``avx512`` AVX-512 (F, BW,
    DQ, VL)."""
    features = _cpu_features() if features is None else features
    out = []
    if features.get("AVX2") and features.get("FMA3"):
        out.append("avx2")
    if all(features.get(f) for f in ("AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL")):
        out.append("avx512")
    return out


def family_environment(family: str, features: Mapping[str, bool] | None = None,
                       base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a process that computes with ``family``'s kernels (from ``base``,
    default this process's environment)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family!r}")
    features = _cpu_features() if features is None else features
    if family not in runnable_families(features):
        raise ValueError(f"this CPU cannot run the {family!r} kernels (it runs {runnable_families(features)})")
    env = dict(os.environ if base is None else base)
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    env.update(FAMILIES[family])
    if family == "avx2":
        disabled = _avx512_features(features)
        if disabled:
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disabled)
    return env


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; returns the exit status (1 when a result fails under some family)."""
    parser = argparse.ArgumentParser(prog="python -m fedrepro.core.kernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="only results whose <part>/<name> contains one of these")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES),
                        help="only these families (default: every family this CPU can run)")
    args = parser.parse_args(argv)
    families = args.family or runnable_families()
    if not families:
        print("this CPU runs none of the kernel families", file=sys.stderr)
        return 2
    used: dict[str, dict[str, str]] = {}
    status = 0
    with tempfile.TemporaryDirectory(prefix="fedrepro-kernels-") as tmp:
        for family in families:
            print(f"== {family} kernels", flush=True)
            summary = Path(tmp) / f"{family}.json"
            proc = subprocess.run([sys.executable, "-m", "fedrepro.core.verify", "--details", "--summary",
                                   str(summary), *args.names], env=family_environment(family), check=False)
            status = max(status, 1 if proc.returncode else 0)
            for v in json.loads(summary.read_text()) if summary.exists() else []:
                used.setdefault(v["name"], {})[family] = f"{v['used']:.2f} {'ok' if v['ok'] else 'FAIL'}"
    print("\nshare of the tolerance used (above 1: fails)")
    print(f"{'result':<48} " + " ".join(f"{f:>12}" for f in families))
    for name in sorted(used):
        print(f"{name:<48} " + " ".join(f"{used[name].get(f, '-'):>12}" for f in families))
    return status


if __name__ == "__main__":
    sys.exit(main())
