"""Benchmark: the library's RDP accountant against a straightforward one, in one run.

Two computations of ALI-DPFL's setting (§VI: sampling rate q = 0.015, noise multiplier
σ = 1.1, δ = 1e-5, integer orders α = 2..64, basic conversion ε = min_α [T R(α) + log(1/δ)/(α−1)]):

1. ``curve``: ε after every step count T = 1..2000 (one call of
   ``fedrepro.privacy.budget.epsilon_after_steps`` on the array of T);
2. ``budgets``: the largest T with ε(T) ≤ ε for each budget of ALI-DPFL §VI
   (``fedrepro.privacy.budget.max_steps_exact``, one call per budget).

The straightforward accountant is written here with the ``math`` module only: the per-step
RDP of the sampled Gaussian mechanism at integer order α is the textbook binomial sum
(ALI-DPFL eq. 17) A_α = Σ_{k=0}^{α} C(α,k)(1−q)^{α−k} q^k exp((k²−k)/(2σ²)), summed term by
term in log space (its terms overflow a float for α = 64, σ = 1.1), R(α) = log A_α/(α−1);
composition and conversion loop over step counts and orders. The budget search is the same
doubling-then-bisection on integer T as the library's, evaluated with these loops.

Both sides are timed with ``time.perf_counter`` (best of several repeats) and checked equal
(ε to relative 1e-9, step counts exactly) before the ratio is printed. ``--profile`` also
times the library's per-order RDP loop and candidate versions that evaluate every order at
once (library code is not changed).

Run from the repository root: ``.venv/bin/python benchmarks/rdp_vectorised.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedrepro.chapters.privacy_accounting.experiments import ALIDPFL_EPSILONS
from fedrepro.privacy.budget import epsilon_after_steps, max_steps_exact
from fedrepro.privacy.rdp import ALIDPFL_PAPER_ORDERS, rdp_sampled_gaussian

Q, SIGMA, DELTA = 0.015, 1.1, 1e-5
REL_TOL = 1e-9  # the two sums differ in order and form (A_α vs A_α − 1): round-off only


# --------------------------------------------------------------------------- straightforward
def rdp_loop(q: float, sigma: float, orders: Sequence[int]) -> list[float]:
    """Per-step RDP at each integer order: the binomial sum of ALI-DPFL eq. 17, term by term."""
    out = []
    for alpha in orders:
        logs = []
        for k in range(alpha + 1):
            logs.append(math.log(math.comb(alpha, k)) + (alpha - k) * math.log1p(-q)
                        + k * math.log(q) + (k * k - k) / (2 * sigma * sigma))
        top = max(logs)
        total = 0.0
        for t in logs:
            total += math.exp(t - top)
        out.append((top + math.log(total)) / (alpha - 1))
    return out


def epsilon_loop(steps: float, rdp: Sequence[float], orders: Sequence[int], delta: float) -> float:
    """Basic conversion (Mironov 2017, Prop. 3) of ``steps`` compositions, a loop over orders."""
    best = math.inf
    for r, alpha in zip(rdp, orders, strict=False):
        eps = steps * r + math.log(1 / delta) / (alpha - 1)
        if eps < best:
            best = eps
    return best


def curve_loop(T_max: int, q: float, sigma: float, delta: float, orders: Sequence[int]) -> list[float]:
    rdp = rdp_loop(q, sigma, orders)
    return [epsilon_loop(T, rdp, orders, delta) for T in range(1, T_max + 1)]


def max_steps_loop(target: float, q: float, sigma: float, delta: float, orders: Sequence[int]) -> int:
    """Largest integer T with ε(T) ≤ target: doubling, then bisection (as the library)."""
    rdp = rdp_loop(q, sigma, orders)
    low, high = 1, 2
    while epsilon_loop(high, rdp, orders, delta) <= target:
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        if epsilon_loop(mid, rdp, orders, delta) <= target:
            low = mid
        else:
            high = mid
    return low


# --------------------------------------------------------------------------- library
def curve_library(T_max: int, q: float, sigma: float, delta: float, orders: Sequence[int]) -> np.ndarray:
    eps, _ = epsilon_after_steps(np.arange(1, T_max + 1, dtype=float), q, sigma, delta, orders, "basic")
    return eps


def budgets_library(targets, q, sigma, delta, orders) -> list[int]:
    return [max_steps_exact(e, q, sigma, delta, orders, "basic") for e in targets]


def budgets_loop(targets, q, sigma, delta, orders) -> list[int]:
    return [max_steps_loop(e, q, sigma, delta, orders) for e in targets]


# --------------------------------------------------------------------------- candidate
def rdp_all_orders(q: float, sigma: float, orders: Sequence[int]) -> np.ndarray:
    """Candidate (``--profile``): the library's formula log(1 + Σ_{k≥2} ...) for every integer
    order at once, as an orders × terms array masked above each order and one ``logsumexp``."""
    from scipy.special import gammaln, logsumexp

    from fedrepro.privacy.rdp import _log_expm1

    a = np.asarray(orders, dtype=float)[:, None]
    k = np.arange(2, int(a.max()) + 1, dtype=float)[None, :]
    log_binom = gammaln(a + 1) - gammaln(k + 1) - gammaln(np.maximum(a - k, 0) + 1)
    terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + _log_expm1((k * k - k) / (2 * sigma**2))
    terms = np.where(k <= a, terms, -np.inf)
    return np.logaddexp(0.0, logsumexp(terms, axis=1)) / (a[:, 0] - 1)


def curve_candidate(T_max, q, sigma, delta, orders) -> np.ndarray:
    a = np.asarray(orders, dtype=float)
    steps = np.arange(1, T_max + 1, dtype=float)[:, None]
    return np.min(steps * rdp_all_orders(q, sigma, orders) + math.log(1 / delta) / (a - 1), axis=1)


def budgets_candidate(targets, q, sigma, delta, orders) -> list[int]:
    """ε(T) ≤ ε iff T R(α) + log(1/δ)/(α−1) ≤ ε for some α: the largest T is
    max_α floor((ε − log(1/δ)/(α−1)) / R(α)), for all budgets and orders at once (a real
    implementation would confirm ε at T and T + 1 against rounding at the boundary)."""
    a = np.asarray(orders, dtype=float)
    r = rdp_all_orders(q, sigma, orders)
    bound = (np.asarray(targets, dtype=float)[:, None] - math.log(1 / delta) / (a - 1)) / r
    return [int(t) for t in np.floor(bound).max(axis=1)]


# --------------------------------------------------------------------------- timing
def best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall-clock time of ``repeats`` calls (``time.perf_counter``) and the last result."""
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run(T_max: int = 2000, repeats: int = 7, profile: bool = False) -> dict[str, Any]:
    orders = list(ALIDPFL_PAPER_ORDERS)
    t_lib, eps_lib = best_time(lambda: curve_library(T_max, Q, SIGMA, DELTA, orders), repeats)
    t_loop, eps_loop = best_time(lambda: curve_loop(T_max, Q, SIGMA, DELTA, orders), repeats)
    rel = float(np.max(np.abs(np.asarray(eps_loop) - eps_lib) / eps_lib))
    if not rel <= REL_TOL:
        raise AssertionError(f"epsilon curves differ: max relative difference {rel:.3g} > {REL_TOL}")
    b_lib_t, counts_lib = best_time(lambda: budgets_library(ALIDPFL_EPSILONS, Q, SIGMA, DELTA, orders), repeats)
    b_loop_t, counts_loop = best_time(lambda: budgets_loop(ALIDPFL_EPSILONS, Q, SIGMA, DELTA, orders), repeats)
    if counts_lib != counts_loop:
        raise AssertionError(f"step counts differ: library {counts_lib}, loop {counts_loop}")
    out = {
        "setup": {"q": Q, "sigma": SIGMA, "delta": DELTA, "orders": f"{orders[0]}..{orders[-1]}",
                  "T_max": T_max, "repeats": repeats, "budgets": list(ALIDPFL_EPSILONS)},
        "curve": {"straightforward_s": t_loop, "vectorised_s": t_lib, "ratio": t_loop / t_lib,
                  "max_rel_diff": rel},
        "budgets": {"straightforward_s": b_loop_t, "vectorised_s": b_lib_t, "ratio": b_loop_t / b_lib_t,
                    "counts": counts_lib},
    }
    if profile:
        lib_rdp_t, _ = best_time(lambda: rdp_sampled_gaussian(Q, SIGMA, orders), repeats)
        cand_rdp_t, r_cand = best_time(lambda: rdp_all_orders(Q, SIGMA, orders), repeats)
        c_t, eps_cand = best_time(lambda: curve_candidate(T_max, Q, SIGMA, DELTA, orders), repeats)
        b_t, counts_cand = best_time(lambda: budgets_candidate(ALIDPFL_EPSILONS, Q, SIGMA, DELTA, orders), repeats)
        r_lib = rdp_sampled_gaussian(Q, SIGMA, orders)
        out["candidate"] = {
            "library_rdp_s": lib_rdp_t, "all_orders_rdp_s": cand_rdp_t,
            "rdp_max_rel_diff": float(np.max(np.abs(r_cand - r_lib) / r_lib)),
            "curve_s": c_t, "curve_ratio": t_loop / c_t,
            "curve_max_rel_diff": float(np.max(np.abs(eps_cand - eps_lib) / eps_lib)),
            "budgets_s": b_t, "budgets_ratio": b_loop_t / b_t, "budgets_equal": counts_cand == counts_lib,
        }
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T-max", type=int, default=2000, help="largest step count of the ε curve")
    parser.add_argument("--repeats", type=int, default=7, help="timing repeats (best is kept)")
    parser.add_argument("--profile", action="store_true",
                        help="also time the per-order RDP loop and candidate all-orders versions")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.T_max < 1 or args.repeats < 1:
        raise ValueError("--T-max and --repeats must be integers >= 1")
    res = run(args.T_max, args.repeats, args.profile)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        c, b = res["curve"], res["budgets"]
        print(f"ε curve, T = 1..{args.T_max}, {len(ALIDPFL_PAPER_ORDERS)} orders: "
              f"straightforward {c['straightforward_s'] * 1e3:.2f} ms, vectorised "
              f"{c['vectorised_s'] * 1e3:.2f} ms, ratio {c['ratio']:.1f}x "
              f"(max rel. diff {c['max_rel_diff']:.1e})")
        print(f"max_steps_exact, {len(ALIDPFL_EPSILONS)} budgets: straightforward "
              f"{b['straightforward_s'] * 1e3:.2f} ms, library {b['vectorised_s'] * 1e3:.2f} ms, "
              f"ratio {b['ratio']:.2f}x (counts {b['counts']})")
        if args.profile:
            c = res["candidate"]
            print(f"per-step RDP at all orders: library (loop over orders) {c['library_rdp_s'] * 1e3:.2f} ms, "
                  f"candidate all-orders {c['all_orders_rdp_s'] * 1e3:.2f} ms "
                  f"(max rel. diff {c['rdp_max_rel_diff']:.1e})")
            print(f"candidate curve {c['curve_s'] * 1e3:.2f} ms, ratio {c['curve_ratio']:.1f}x "
                  f"(max rel. diff {c['curve_max_rel_diff']:.1e}); candidate budgets "
                  f"{c['budgets_s'] * 1e3:.2f} ms, ratio {c['budgets_ratio']:.1f}x "
                  f"(same counts: {c['budgets_equal']})")
    return res


if __name__ == "__main__":
    main()
