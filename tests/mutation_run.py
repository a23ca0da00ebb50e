"""Mutation testing of the numerical core with mutmut (``make mutation``; not part of CI).

For each module of ``TARGETS`` a scratch copy of ``lib/`` (as ``src/``), ``tests/`` and ``data/paper/`` is
made under ``_build/mutation/<name>/`` with a ``[tool.mutmut]`` section that mutates that
module only and runs the test files listed next to it, without the tests that read the
committed results store, notebooks or the book (``-m "not stored and not notebooks and not
book"``). mutmut runs, for each mutant, the tests that execute the mutated function. The
score of a module is ``killed / (killed + survived)``: timeouts count as killed (the mutant
changed the behaviour enough to hang), mutants no test reaches ("no tests") as survived.

Usage::

    python tests/mutation_run.py                 # every module
    python tests/mutation_run.py privacy/rdp     # some modules
    python tests/mutation_run.py --jobs 2 --list

Each run prints the per-module scores and the survivors; ``tests/MUTATION.md`` records them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "_build" / "mutation"
MARKERS = "not stored and not notebooks and not book"

_PRIVACY = ["test_privacy_rdp.py", "test_privacy_budget.py", "test_privacy_api_contract.py"]
_FEDPLT = ["test_fedplt_algorithm.py", "test_fedplt_batched.py", "test_fedplt_stochastic_paths.py"]
_BASELINES = ["test_baselines_fedpd_fedlin_led.py", "test_baselines_tamuna_fivegcs.py", "test_fedplt_batched.py",
              "test_fedplt_stochastic_paths.py", "test_fedplt_participation.py"]

#: module (path under lib/fedrepro, without .py) -> the test files run against its mutants
TARGETS: dict[str, list[str]] = {
    "privacy/rdp": _PRIVACY,
    "privacy/conversion": _PRIVACY,
    "privacy/budget": _PRIVACY + ["test_privacy_claims.py"],
    "privacy/gaussian": ["test_privacy_gaussian.py", "test_privacy_api_contract.py", "test_privacy_claims.py",
                         "test_privacy_fedplt.py"],
    "privacy/subsampled": ["test_privacy_claims.py", "test_privacy_api_contract.py", "test_privacy_gaussian.py",
                           "test_privacy_subsampled_pld.py"],
    "dpfedpaq/amplification": ["test_privacy_gaussian.py", "test_privacy_api_contract.py", "test_privacy_claims.py",
                               "test_dpfedpaq_noise.py", "test_dpfedpaq_amplification.py"],
    "core/prox": ["test_prox.py", "test_operators.py", "test_fedplt_algorithm.py"],
    # core/operators and fedplt/algorithm without test_fedplt_checks.py: its checks run the operators
    # and the iteration on thousands of instances (30-70 s per mutant); see MUTATION.md
    "core/operators": ["test_operators.py", "test_operators_grid.py", "test_fedplt_noise_floor.py"],
    "fedplt/algorithm": _FEDPLT + ["test_fedplt_participation.py"],
    "fedplt/batched": _BASELINES,
    "fedplt/baselines/fedplt": _BASELINES,
    "fedplt/baselines/fedlin": _BASELINES,
    "fedplt/baselines/fedpd": _BASELINES,
    "fedplt/baselines/led": _BASELINES,
    "fedplt/baselines/tamuna": _BASELINES,
    "fedplt/baselines/fivegcs": _BASELINES,
    # DP-FedPAQ and ALI-DPFL numerical modules (tests through their public functions only)
    "dpfedpaq/quantizer": ["test_dpfedpaq_quantizer.py", "test_dpfedpaq_round.py", "test_dpfedpaq_checks.py"],
    "dpfedpaq/noise": ["test_dpfedpaq_round.py", "test_dpfedpaq_algorithms.py", "test_dpfedpaq_noise.py"],
    "dpfedpaq/local": ["test_dpfedpaq_round.py", "test_dpfedpaq_algorithms.py", "test_dpfedpaq_local.py"],
    "alidpfl/budget": ["test_alidpfl_budget.py", "test_alidpfl_library.py", "test_alidpfl_training.py"],
    "alidpfl/tau_rule": ["test_alidpfl_tau_rule.py", "test_alidpfl_library.py", "test_alidpfl_tables.py"],
    "alidpfl/fastclip": ["test_alidpfl_dpsgd.py"],
    "alidpfl/dpsgd": ["test_alidpfl_dpsgd.py", "test_alidpfl_dpsgd_contract.py"],
    "dpfedpaq/mlp": ["test_dpfedpaq_mlp.py", "test_dpfedpaq_mlp_contract.py"],
    "dpfedpaq/algorithms": ["test_dpfedpaq_algorithms.py", "test_dpfedpaq_round.py",
                            "test_dpfedpaq_algorithms_contract.py"],
}

_STATUS = re.compile(r"^\s+(\S+): (.+)$")


def _pyproject(module: str, tests: list[str]) -> str:
    q = ", ".join
    return f"""[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-p no:cacheprovider -p no:nbval -q"
markers = [
    "slow: long-running test",
    "notebooks: executes or validates book chapters",
    "book: builds the Jupyter Book",
    "stored: reads the committed results store",
]

[tool.mutmut]
source_paths = ["src"]
only_mutate = ["src/fedrepro/{module}.py"]
also_copy = ["tests", "data"]
pytest_add_cli_args = ["-m", "{MARKERS}"]
pytest_add_cli_args_test_selection = [{q(f'"tests/{t}"' for t in tests)}]
"""


def _prepare(module: str, tests: list[str]) -> Path:
    work = WORK / module.replace("/", "-")
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    # mutmut 3 names mutants after their module path with a leading "src." stripped: the
    # copy of lib/ is called src/ so that the names match the imported modules
    shutil.copytree(ROOT / "lib" / "fedrepro", work / "src" / "fedrepro", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    if (ROOT / "data" / "paper").exists():
        shutil.copytree(ROOT / "data" / "paper", work / "data" / "paper")
    (work / "pyproject.toml").write_text(_pyproject(module, tests))
    return work


def run_module(module: str, jobs: int) -> dict:
    tests = TARGETS[module]
    work = _prepare(module, tests)
    # mutmut puts mutants/src first on sys.path itself; a PYTHONPATH entry for it would be
    # cached as missing (the folder does not exist yet at start-up) and let the original
    # package be imported instead
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for var in ("PYTHONPATH", "FEDREPRO_RESULTS_DIR"):
        env.pop(var, None)
    t0 = time.time()
    log = (work / "mutmut.log").open("w")
    proc = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)], cwd=work,
                          env=env, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.time() - t0
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=work, env=env,
                         capture_output=True, text=True).stdout
    statuses: dict[str, str] = {}
    for line in out.splitlines():
        m = _STATUS.match(line)
        if m:
            statuses[m.group(1)] = m.group(2).strip()
    killed = sum(s in ("killed", "timeout") for s in statuses.values())
    survivors = sorted(k for k, s in statuses.items() if s not in ("killed", "timeout"))
    total = len(statuses)
    score = killed / total if total else float("nan")
    return {"module": module, "returncode": proc.returncode, "mutants": total, "killed": killed,
            "survivors": {k: statuses[k] for k in survivors}, "score": score, "seconds": seconds,
            "tests": tests, "work": work}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="modules under lib/fedrepro (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested in parallel (default 1)")
    ap.add_argument("--list", action="store_true", help="list the modules and their test files, then exit")
    args = ap.parse_args(argv)
    if args.list:
        for m, t in TARGETS.items():
            print(f"{m}: {' '.join(t)}")
        return 0
    unknown = [m for m in args.modules if m not in TARGETS]
    if unknown:
        ap.error(f"unknown modules {unknown}; choose among {list(TARGETS)}")
    failed = False
    rows = []
    for module in args.modules or list(TARGETS):
        r = run_module(module, args.jobs)
        rows.append(r)
        print(f"{module}: {r['killed']}/{r['mutants']} killed ({100 * r['score']:.1f} %) in {r['seconds']:.0f} s"
              + ("" if r["returncode"] == 0 else f" [mutmut exit {r['returncode']}, see {r['work']}/mutmut.log]"),
              flush=True)
        for k, s in r["survivors"].items():
            if s != "not checked":
                print(f"    {s}: {k}  (mutmut show {k}, in {r['work']})")
        failed |= not (r["score"] >= 0.9) or r["returncode"] != 0
    print("\nmodule                         mutants  killed  score")
    for r in rows:
        print(f"{r['module']:<30} {r['mutants']:>7} {r['killed']:>7}  {100 * r['score']:.1f} %")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
