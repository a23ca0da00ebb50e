"""Benchmark: vectorised Fed-PLT against the straightforward agent-by-agent loop, in one run.

Setup of Fed-PLT v2 Table II: logistic regression (``logistic_v2(convex=True, seed=0)``:
N = 100 agents, n = 5, q_i = 250 points each), GD local training with N_e = 5 local steps
and the default step size, ρ = 1, full participation, K outer iterations (default 50). Both
implementations record the same per-iteration metrics (``x_err`` and ``grad_sq``):

* vectorised: ``fedrepro.fedplt.run_fedplt`` (arrays over agents, a loop over k and N_e only);
* straightforward: ``fedrepro.fedplt.reference.run_fedplt_loop`` (a Python loop over agents,
  each agent's gradient from its own data).

Each is timed with ``time.perf_counter`` (best of several repeats, after one warm-up call
that also caches x*), the two trajectories are checked equal to 1e-12, and the ratio
straightforward / vectorised is printed. ``--profile`` adds where the vectorised run spends
its time: a cProfile summary, the cost of each step of the logistic gradient oracle, and the
run time with a candidate fused oracle swapped in on one problem instance (library code is
not changed).

Run from the repository root: ``.venv/bin/python benchmarks/fedplt_vectorised.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedrepro.fedplt import run_fedplt
from fedrepro.fedplt.reference import run_fedplt_loop
from fedrepro.problems import logistic_v2

RHO, NE = 1.0, 5
ATOL = 1e-12  # same formulas, different summation order: round-off only (see the tests)


def best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall-clock time of ``repeats`` calls (``time.perf_counter``) and the last result."""
    best, out = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _vectorised(problem, K):
    return run_fedplt(problem, rho=RHO, Ne=NE, K=K, record=("x_err", "grad_sq"))


def _loop(problem, K):
    return run_fedplt_loop(problem, rho=RHO, Ne=NE, K=K)


def check_agreement(vec, loop) -> float:
    """Largest absolute difference between the two trajectories (final x, z, x_err and
    sqrt(grad_sq)); raises if it exceeds 1e-12."""
    diffs = [np.max(np.abs(loop["x"] - vec.x)), np.max(np.abs(loop["z"] - vec.z)),
             np.max(np.abs(loop["x_err"] - vec.x_err)),
             np.max(np.abs(np.sqrt(loop["grad_sq"]) - np.sqrt(vec.grad_sq)))]
    worst = float(max(diffs))
    if not worst <= ATOL:
        raise AssertionError(f"trajectories differ by {worst:.3g} > {ATOL}")
    return worst


def profile_vectorised(problem, K: int, top: int = 10) -> str:
    """cProfile summary (internal time) of one vectorised run."""
    prof = cProfile.Profile()
    prof.enable()
    _vectorised(problem, K)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def _per_call(fn: Callable[[], Any], calls: int = 200) -> float:
    def many():
        for _ in range(calls):
            fn()
    return best_time(many, 5)[0] / calls


def oracle_breakdown(problem) -> dict[str, float]:
    """Milliseconds per call of the steps the library's logistic gradient takes over all
    agents (batched matmul for the margins, ``scipy.special.expit``, batched matmul for the
    weighted feature sum), and of a candidate fused oracle (features pre-multiplied by
    their labels and stored transposed, sigmoid through ``numpy.exp``)."""
    from scipy.special import expit

    A, b, q = problem.features, problem.labels, problem.q
    X = np.random.default_rng(0).standard_normal((problem.N, problem.n))
    margins = b * np.matmul(A, X[:, :, None])[:, :, 0]
    coef = -b * expit(-margins) / q
    fused = _fused_oracle(problem)
    return {
        "library_grad": 1e3 * _per_call(lambda: problem.grad(X)),
        "margins_matmul": 1e3 * _per_call(lambda: np.matmul(A, X[:, :, None])),
        "expit": 1e3 * _per_call(lambda: expit(-margins)),
        "weighted_sum_matmul": 1e3 * _per_call(lambda: np.matmul(coef[:, None, :], A)),
        "candidate_fused_grad": 1e3 * _per_call(lambda: fused(X, None)),
    }


def _fused_oracle(problem):
    """Candidate gradient oracle (same values up to round-off): ``S_i = (b_h a_h)_h`` stored as
    ``(N, n, q)`` once, then ``m = x_i S_i``, ``sigma(-m) = 1 / (1 + e^m)`` and
    ``grad = -(1/q) S_i sigma(-m) + w grad r``. Used only to estimate what the fix buys."""
    S = np.ascontiguousarray((problem.labels[:, :, None] * problem.features).transpose(0, 2, 1))
    q, w = problem.q, problem.reg_weight

    def grad(X, agents):
        Sa = S if agents is None else S[agents]
        with np.errstate(over="ignore"):
            s = 1.0 / (1.0 + np.exp(np.matmul(X[:, None, :], Sa)[:, 0, :]))
        return -np.matmul(Sa, s[:, :, None])[:, :, 0] / q + w * problem._reg_grad(X)
    return grad


def candidate_ratio(problem, K: int, repeats: int, t_loop: float, loop) -> dict[str, float]:
    """Vectorised run time with the candidate oracle swapped in on this problem instance
    (checked against the loop trajectory), and the ratio it would give."""
    patched = logistic_v2(convex=True, seed=problem.info["seed"])
    patched._x_star_cache, patched.x_star_info = problem.x_star(), problem.x_star_info
    patched._grad = _fused_oracle(patched)
    t, vec = best_time(lambda: _vectorised(patched, K), repeats)
    return {"vectorised_s": t, "ratio": t_loop / t, "max_abs_diff": check_agreement(vec, loop)}


def oracle_time(problem, repeats: int = 200) -> float:
    """Time of one vectorised gradient evaluation over all agents (seconds, best of 5)."""
    X = np.random.default_rng(0).standard_normal((problem.N, problem.n))

    def many():
        for _ in range(repeats):
            problem.grad(X)
    return best_time(many, 5)[0] / repeats


def run(K: int = 50, repeats: int = 7, loop_repeats: int = 3, seed: int = 0,
        profile: bool = False) -> dict[str, Any]:
    problem = logistic_v2(convex=True, seed=seed)
    problem.x_star()  # cached: neither side pays for the reference point
    _vectorised(problem, 1)
    _loop(problem, 1)  # warm-up
    t_vec, vec = best_time(lambda: _vectorised(problem, K), repeats)
    t_loop, loop = best_time(lambda: _loop(problem, K), loop_repeats)
    worst = check_agreement(vec, loop)
    out = {
        "setup": {"problem": "logistic_v2(convex=True)", "seed": seed, "N": problem.N, "n": problem.n,
                  "q": problem.q, "rho": RHO, "Ne": NE, "solver": "gd", "K": K,
                  "repeats": repeats, "loop_repeats": loop_repeats},
        "straightforward_s": t_loop, "vectorised_s": t_vec, "ratio": t_loop / t_vec,
        "max_abs_diff": worst,
        "per_iteration_ms": {"straightforward": 1e3 * t_loop / K, "vectorised": 1e3 * t_vec / K},
        "gradient_calls_per_run": K * (NE + 1) + 2,
        "vectorised_gradient_ms": 1e3 * oracle_time(problem),
    }
    if profile:
        out["profile"] = profile_vectorised(problem, K)
        out["oracle_breakdown_ms"] = oracle_breakdown(problem)
        out["candidate_fused_oracle"] = candidate_ratio(problem, K, repeats, t_loop, loop)
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--K", type=int, default=50, help="outer iterations")
    parser.add_argument("--repeats", type=int, default=7, help="timing repeats of the vectorised run")
    parser.add_argument("--loop-repeats", type=int, default=3, help="timing repeats of the loop run")
    parser.add_argument("--profile", action="store_true",
                        help="also profile the vectorised run, time the steps of its gradient oracle and "
                             "a candidate fused oracle")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.K < 1 or args.repeats < 1 or args.loop_repeats < 1:
        raise ValueError("--K, --repeats and --loop-repeats must be integers >= 1")
    res = run(args.K, args.repeats, args.loop_repeats, profile=args.profile)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(f"Fed-PLT, v2 Table II setup (N=100, n=5, q=250, GD, Ne={NE}, rho={RHO}), K={args.K}: "
              f"straightforward {res['straightforward_s'] * 1e3:.1f} ms, vectorised "
              f"{res['vectorised_s'] * 1e3:.1f} ms, ratio {res['ratio']:.1f}x "
              f"(max abs. diff {res['max_abs_diff']:.1e})")
        print(f"vectorised: {res['per_iteration_ms']['vectorised']:.2f} ms per iteration, "
              f"{res['gradient_calls_per_run']} gradient calls of "
              f"{res['vectorised_gradient_ms']:.3f} ms each")
        if args.profile:
            print(res["profile"])
            print("gradient oracle over all agents, ms per call:")
            for name, ms in res["oracle_breakdown_ms"].items():
                print(f"  {name:22s} {ms:.3f}")
            c = res["candidate_fused_oracle"]
            print(f"with the candidate fused oracle: vectorised {c['vectorised_s'] * 1e3:.1f} ms, "
                  f"ratio {c['ratio']:.1f}x (max abs. diff {c['max_abs_diff']:.1e})")
    return res


if __name__ == "__main__":
    main()
