"""One DP-SGD step of a head-to-head T1 client (MNIST softmax regression, d = 7,850; a client of
HET_MNIST(2) with about 600 records, Poisson rate q, clipping C, noise σ), three ways on the
same Poisson sample:

* ``engine``: :func:`fedrepro.headtohead.softmax.dpsgd_steps` (per-record norms in closed form,
  ‖ã_j‖·‖p_j − e_j‖, and one product for the clipped sum: no per-record gradient is formed);
* ``loop``: the straightforward implementation, one outer product per record (NumPy, float64);
* ``opacus``: what a practitioner would write, a ``torch.nn.Linear`` wrapped by Opacus's
  ``GradSampleModule`` (per-sample gradients by hooks) with its ``DPOptimizer`` (clip, noise);

and, for the physical limit, the non-private step of the engine on the same sample (no
clipping, no noise). The noise-off updates of the three are compared (largest difference
relative to the update's norm).

    .venv/bin/python benchmarks/headtohead_t1.py [--rate 0.05] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np


def _cpu() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=0.2)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    import torch
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    from fedrepro.headtohead import softmax as eng
    from fedrepro.headtohead.tasks import t1_problems

    torch.set_num_threads(1)
    _, problem = t1_problems()
    client, lr = 0, 0.5
    rows_of = problem.device_rows(client)
    n = rows_of.stop - rows_of.start
    x0 = np.random.default_rng(0).normal(scale=0.01, size=(785, 10))
    take = np.flatnonzero(np.random.default_rng(1).random(n) < args.rate)
    rows = rows_of.start + take

    def engine(sigma: float) -> np.ndarray:
        # one step on the fixed sample: the engine's own functions, as dpsgd_steps composes them
        g = eng.clipped_sum(problem, x0, rows, args.clip)
        g = (g + sigma * args.clip * np.random.default_rng(2).standard_normal(g.shape)) / (args.rate * n)
        return x0 - lr * (g + problem.mu * x0)

    def nonprivate() -> np.ndarray:
        g = eng.clipped_sum(problem, x0, rows, None) / max(rows.size, 1)
        return x0 - lr * (g + problem.mu * x0)

    A = problem.features[rows].astype(np.float64)
    y = problem.labels[rows]

    def loop() -> np.ndarray:
        total = np.zeros_like(x0)
        for j in range(A.shape[0]):
            logits = A[j] @ x0
            p = np.exp(logits - logits.max())
            p /= p.sum()
            p[y[j]] -= 1.0
            gj = np.outer(A[j], p)
            total += gj * min(1.0, args.clip / np.linalg.norm(gj))
        return x0 - lr * (total / (args.rate * n) + problem.mu * x0)

    lin = torch.nn.Linear(785, 10, bias=False, dtype=torch.float64)
    gsm = GradSampleModule(lin)
    opt = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=lr), noise_multiplier=0.0, max_grad_norm=args.clip,
                      expected_batch_size=args.rate * n)
    X, Y = torch.from_numpy(A), torch.from_numpy(y)

    def opacus() -> np.ndarray:
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(x0.T))
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(gsm(X), Y)  # mean: Opacus rescales the per-sample gradients
        loss.backward()
        opt.step()
        w = lin.weight.detach().numpy().T.copy()
        return w - lr * problem.mu * x0  # the regulariser is data-independent: added as the engine does

    ref = loop()
    move = np.linalg.norm(ref - x0)
    agree = {"engine": float(np.linalg.norm(engine(0.0) - ref) / move),
             "opacus": float(np.linalg.norm(opacus() - ref) / move)}
    times = {"loop": _best(loop, max(3, args.repeats // 2)), "engine": _best(lambda: engine(args.sigma), args.repeats),
             "opacus": _best(opacus, args.repeats), "nonprivate": _best(nonprivate, args.repeats)}
    print(json.dumps({"cpu": _cpu(), "batch": int(rows.size),
                      "records": int(n), "seconds": times,
                      "engine_vs_loop": times["loop"] / times["engine"],
                      "engine_vs_opacus": times["opacus"] / times["engine"],
                      "engine_vs_nonprivate": times["nonprivate"] / times["engine"],
                      "agreement_relative": agree}, indent=1))


if __name__ == "__main__":
    main()
