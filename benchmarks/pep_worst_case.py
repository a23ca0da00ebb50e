"""Benchmark: the exact worst-case rate of Fed-PLT rounds (performance estimation), as the
chapter computes it against the straightforward set-up, in one run.

Workload: the one-round worst case (local GD, default step) at 5 values of rho in
[0.1, 10] for N_e in {1, 5}, moduli lam = 0.5, lam_bar = 7.5 (those of the v2 logistic
problem, rounded).

* chapter: ``N = 1`` agent (the chapter shows ``N = 1, 2, 3`` give the same value) and the
  interior-point solver Clarabel;
* straightforward: ``N = 3`` agents and SCS, the first-order solver cvxpy picks for SDPs
  when no commercial solver is installed;
* the same ``N = 1`` with SCS, and ``N = 3`` with Clarabel, to separate the two choices.

The rates of every variant are compared with the chapter's (relative gap printed), then the
ratios straightforward / chapter. Run from the repository root:
``.venv/bin/python benchmarks/pep_worst_case.py``.
"""

from __future__ import annotations

import time

import numpy as np

from fedrepro.fedplt.checks import pep

RHOS = (0.1, 0.316, 1.0, 3.16, 10.0)
NES = (1, 5)


def run(N: int, solver: str) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    rates = [pep.worst_case_rate(pep.PEPInstance(0.5, 7.5, rho, Ne, "gd", N=N), sdp_solver=solver).rate
             for Ne in NES for rho in RHOS]
    return time.perf_counter() - t0, np.array(rates)


def main() -> None:
    run(1, "CLARABEL")  # imports and first compilation outside the timings
    variants = {"chapter (N=1, Clarabel)": (1, "CLARABEL"), "N=1, SCS": (1, "SCS"),
                "N=3, Clarabel": (3, "CLARABEL"), "straightforward (N=3, SCS)": (3, "SCS")}
    times, rates = {}, {}
    for name, (N, solver) in variants.items():
        times[name], rates[name] = min((run(N, solver) for _ in range(2)), key=lambda r: r[0])
    base = "chapter (N=1, Clarabel)"
    for name in variants:
        gap = float(np.max(np.abs(rates[name] - rates[base]) / rates[base]))
        print(f"{name:30s} {times[name]:8.2f} s   x{times[name] / times[base]:5.1f}   max rel. rate gap {gap:.1e}")


if __name__ == "__main__":
    main()
