"""The planted bugs of the mutation-testing issue, each caught by the fast test selection.

Each bug below is a small, plausible mistake in the numerical core. For each one, this script
copies ``lib/fedrepro`` to a temporary folder, plants the bug there (the original text must
occur exactly once), and runs the listed test files with the marker selection the issue names
(``-m "not notebooks and not book and not stored"``) against the planted copy. A bug is
*caught* when pytest reports a failure (exit status 1); any other outcome is a finding. A
control run first checks that the same test files pass on the unchanged copy.

    python tests/planted_bugs.py            # every bug; exit status 1 if one survives
    python tests/planted_bugs.py --list

The selection of test files only keeps the run short: a bug caught by them is caught by the
whole selection, which contains them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKERS = "not notebooks and not book and not stored"


@dataclass(frozen=True)
class PlantedBug:
    name: str
    module: str  # path under lib/fedrepro
    original: str
    planted: str
    tests: tuple[str, ...]


BUGS = (
    PlantedBug("Fed-PLT z-update factor 2 -> 1 (PRS becomes Douglas-Rachford)", "fedplt/algorithm.py",
               "z_new[idx] = z[idx] + 2.0 * (W - y)", "z_new[idx] = z[idx] + 1.0 * (W - y)",
               ("test_fedplt_algorithm.py",)),
    PlantedBug("RDP at q = 1, fractional order: alpha/(2 sigma^2) -> alpha/sigma^2", "privacy/rdp.py",
               "        two_var = 2 * square(sigma)\n        return alpha / two_var",
               "        two_var = 1 * square(sigma)\n        return alpha / two_var",
               ("test_privacy_rdp.py",)),
    PlantedBug("improved conversion: clipping condition delta^2 -> delta", "privacy/conversion.py",
               "np.where(delta**2 + np.expm1(-rdp_arr) > 0, 0.0, eps)",
               "np.where(delta + np.expm1(-rdp_arr) > 0, 0.0, eps)",
               ("test_privacy_rdp.py", "test_privacy_budget.py")),
    PlantedBug("budget search: return low -> return high", "privacy/budget.py",
               "            high = mid\n    return low", "            high = mid\n    return high",
               ("test_privacy_budget.py",)),
    PlantedBug("Fed-PLT noisy GD: noise std sqrt(2 gamma) tau -> sqrt(gamma) tau", "fedplt/baselines/fedplt.py",
               'std = np.sqrt(2.0 * gamma) * self.param("tau")', 'std = np.sqrt(gamma) * self.param("tau")',
               ("test_fedplt_stochastic_paths.py",)),
    PlantedBug("operator S: entry 2ca -> ca", "core/operators.py",
               "S[..., 1, 1] = zeta + 2 * c * a", "S[..., 1, 1] = zeta + c * a",
               ("test_operators.py", "test_operators_grid.py")),
)


def plant(bug: PlantedBug, lib: Path) -> None:
    """Write ``bug`` into the copy of the library at ``lib`` (the ``fedrepro`` folder)."""
    path = lib / bug.module
    text = path.read_text()
    count = text.count(bug.original)
    if count != 1:
        raise ValueError(f"{bug.module}: the original text of {bug.name!r} occurs {count} times, expected once")
    path.write_text(text.replace(bug.original, bug.planted))


def run_bug(bug: PlantedBug | None, tests: tuple[str, ...] = ()) -> tuple[int, float]:
    """pytest's exit status on the planted copy (``bug=None``: the unchanged copy, on ``tests``),
    and the seconds it took."""
    with tempfile.TemporaryDirectory(prefix="planted-") as tmp:
        lib = Path(tmp) / "fedrepro"
        shutil.copytree(ROOT / "lib" / "fedrepro", lib, ignore=shutil.ignore_patterns("__pycache__"))
        if bug is not None:
            plant(bug, lib)
            tests = bug.tests
        env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg")
        where = subprocess.run([sys.executable, "-c", "import fedrepro; print(fedrepro.__file__)"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not where.startswith(str(lib)):
            raise RuntimeError(f"the planted copy is not the one imported ({where})")
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", MARKERS,
                               *[f"tests/{t}" for t in tests]], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return proc.returncode, time.time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the planted bugs and exit")
    args = ap.parse_args(argv)
    if args.list:
        for b in BUGS:
            print(f"{b.module}: {b.name}  [{', '.join(b.tests)}]")
        return 0
    # control: the same test files pass on the unchanged copy, so a failure below is the bug's
    every = tuple(dict.fromkeys(t for b in BUGS for t in b.tests))
    status, seconds = run_bug(None, every)
    print(f"control: the test files on the unchanged library: pytest exit status {status} ({seconds:.0f} s)", flush=True)
    if status != 0:
        return 2
    survived = 0
    for b in BUGS:
        status, seconds = run_bug(b)
        verdict = "caught" if status == 1 else f"NOT CAUGHT (pytest exit status {status})"
        survived += status != 1
        print(f"{verdict:<10} {b.module}: {b.name} ({seconds:.0f} s)", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
