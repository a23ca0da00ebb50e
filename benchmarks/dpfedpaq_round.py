"""Benchmark: one round of privacy-augmented FedPAQ (Alg. 2), three implementations, one run.

The round of DP-FedPAQ's experiments on HET_MNIST(2) (softmax regression, d = 7850): M = 10
scheduled devices, E = 10 local steps, mini-batches b_i = ⌊γn_i/E⌋ (γ = 0.2, so 11–12), each
on a disjoint part of a subsample drawn without replacement, per-sample clipping at C = 1,
weight decay μ = 1e-3 after clipping, then Gaussian noise on the model change and the
quantizer Q_s (s = 10), and the server average.

1. ``vectorised``: the library's round (``fedrepro.dpfedpaq.algorithms.private_round``: the
   float32 class-major local steps of ``.local.class_major_updates``, ``.noise.add_noise``,
   ``.quantizer.quantized_mean``): all devices at once, per-sample clip factors from the
   closed-form norms ‖ã_j‖·‖p_j − e_j‖, the work between the BLAS products in the compiled
   loops of ``._compiled`` (numba);
2. ``loop``: the straightforward NumPy version: a Python loop over devices, steps and samples,
   each per-sample gradient formed as the outer product ã_j (p_j − e_j)ᵀ, clipped, summed;
   then noise and the quantizer per device;
3. ``opacus``: as a practitioner would write it with PyTorch and Opacus: one ``nn.Linear``
   per device wrapped in Opacus's ``GradSampleModule`` (per-sample gradients by Opacus' hooks)
   and its ``DPOptimizer`` for per-sample clipping (noise multiplier 0: Alg. 2 adds the
   noise once to the model change, not to every step), SGD with weight decay; then noise and
   the same quantizer written in torch.

The three rounds use the same mini-batches and are checked to agree on the noise-free,
unquantized model change (relative 1e-4: float32 products) before timing. Timing: each of
``--repeats`` repetitions runs the three rounds in turn (interleaved, so that a change of
the machine's load hits all three; the parts of the vectorised round, local steps, noise and
quantizer, are timed the same way). Within a repetition an implementation is called as many
times as fit in one call of the slowest (the same time budget for each), every call timed
on its own with ``time.perf_counter``: on a loaded machine a fast call is then as likely as
a slow one to find an undisturbed run. The best and the median of all calls are reported,
with the 1-minute load average before and after. One BLAS / torch thread.

Run from the repository root (MNIST from ``$FEDREPRO_DATA_MIRROR``):
``.venv/bin/python benchmarks/dpfedpaq_round.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from fedrepro.dpfedpaq import local  # noqa: E402
from fedrepro.dpfedpaq.algorithms import private_batch_sizes, private_round  # noqa: E402
from fedrepro.dpfedpaq.mnist import het_mnist_problem  # noqa: E402
from fedrepro.dpfedpaq.noise import add_noise  # noqa: E402
from fedrepro.dpfedpaq.quantizer import quantized_mean  # noqa: E402
from fedrepro.problems.softmax import SoftmaxProblem  # noqa: E402

M, E, GAMMA, CLIP, S, LR, SIGMA = 10, 10, 0.2, 1.0, 10, 0.1, 0.01
REL_TOL = 1e-4  # float32 products summed in different orders


def setup(problem: SoftmaxProblem, seed: int = 0) -> tuple[np.ndarray, local.Schedule, np.ndarray]:
    rng = np.random.default_rng(seed)
    devices = np.sort(rng.choice(problem.n_devices, M, replace=False))
    b = private_batch_sizes(problem.sizes, GAMMA, E)[devices]
    sched = local.subsample_batches(problem, devices, E, b, rng)
    x = rng.standard_normal((785, 10)) * 0.01
    return x, sched, b


def round_vectorised(problem: SoftmaxProblem, x: np.ndarray, sched: local.Schedule, b: np.ndarray,
                     rng: np.random.Generator, noise: bool = True, q: bool = True) -> np.ndarray:
    return private_round(problem, x, sched, LR, clip=CLIP, q_levels=S if q else None,
                         noise_std=np.full(M, SIGMA) if noise else None, rng_noise=rng,
                         rng_quantizer=rng).x


def round_loop(problem: SoftmaxProblem, x: np.ndarray, sched: local.Schedule, b: np.ndarray,
               rng: np.random.Generator, noise: bool = True, q: bool = True) -> np.ndarray:
    feats, labels = problem.features, problem.labels
    total = np.zeros_like(x)
    for m in range(M):
        y = x.copy()
        for t in range(E):
            g = np.zeros_like(x)
            for j in range(int(b[m])):
                row = sched.rows[t, m, j]
                a = feats[row].astype(np.float64)
                z = a @ y
                p = np.exp(z - z.max())
                p /= p.sum()
                p[labels[row]] -= 1.0
                gj = np.outer(a, p)
                norm = np.linalg.norm(gj)
                g += gj * min(1.0, CLIP / norm)
            y = y - LR * (g / b[m] + problem.mu * y)
        u = (y - x).ravel()
        if noise:
            u = u + SIGMA * rng.standard_normal(u.size)
        if q:
            nrm = np.linalg.norm(u)
            r = np.abs(u) / nrm * S
            low = np.floor(r)
            lev = low + (rng.random(u.size) < r - low)
            u = nrm * np.sign(u) * lev / S
        total += u.reshape(x.shape)
    return x + total / M


class OpacusRound:
    """Per device: nn.Linear(784, 10) in a GradSampleModule with a DPOptimizer (clipping only)."""

    def __init__(self, problem: SoftmaxProblem):
        import torch
        from opacus import GradSampleModule
        from opacus.optimizers import DPOptimizer

        torch.set_num_threads(1)
        self.torch = torch
        self.problem = problem
        self.models, self.opts = [], []
        for _ in range(M):
            model = GradSampleModule(torch.nn.Linear(784, 10))
            sgd = torch.optim.SGD(model.parameters(), lr=LR, weight_decay=problem.mu)
            opt = DPOptimizer(sgd, noise_multiplier=0.0, max_grad_norm=CLIP, expected_batch_size=12)
            self.models.append(model)
            self.opts.append(opt)
        self.X = torch.from_numpy(problem.features[:, :-1])
        self.y = torch.from_numpy(problem.labels)

    def __call__(self, x: np.ndarray, sched: local.Schedule, b: np.ndarray, gen, noise: bool = True,
                 q: bool = True) -> np.ndarray:
        torch = self.torch
        w0 = torch.from_numpy(np.ascontiguousarray(x[:-1].T)).float()
        b0 = torch.from_numpy(x[-1].copy()).float()
        total = torch.zeros(10, 785, dtype=torch.float64)
        loss_fn = torch.nn.CrossEntropyLoss()
        for m in range(M):
            model, opt = self.models[m], self.opts[m]
            lin = model._module
            with torch.no_grad():
                lin.weight.copy_(w0)
                lin.bias.copy_(b0)
            opt.expected_batch_size = int(b[m])
            for t in range(E):
                rows = torch.from_numpy(sched.rows[t, m, : int(b[m])])
                opt.zero_grad()
                loss = loss_fn(model(self.X[rows]), self.y[rows])
                loss.backward()
                opt.step()
            with torch.no_grad():
                u = torch.cat([lin.weight - w0, (lin.bias - b0)[:, None]], dim=1).double().reshape(-1)
                if noise:
                    u = u + SIGMA * torch.randn(u.numel(), generator=gen, dtype=torch.float64)
                if q:
                    nrm = torch.linalg.norm(u)
                    r = u.abs() / nrm * S
                    low = torch.floor(r)
                    lev = low + (torch.rand(u.numel(), generator=gen, dtype=torch.float64) < r - low)
                    u = nrm * torch.sign(u) * lev / S
                total += u.reshape(10, 785)
        out = (total / M).numpy().T  # (785, 10): weights then bias row
        return x + out


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    problem = het_mnist_problem(2, with_test=False)
    x, sched, b = setup(problem)
    rng = np.random.default_rng(1)
    gen = torch.Generator().manual_seed(1)
    opacus_round = OpacusRound(problem)
    ref = round_vectorised(problem, x, sched, b, rng, noise=False, q=False)
    for name, got in (("loop", round_loop(problem, x, sched, b, rng, noise=False, q=False)),
                      ("opacus", opacus_round(x, sched, b, gen, noise=False, q=False))):
        err = np.linalg.norm(got - ref) / np.linalg.norm(ref - x)
        if not err < REL_TOL:
            raise SystemExit(f"{name} disagrees with the vectorised round: relative error {err:.2e}")
    fns: dict[str, Callable[[], object]] = {
        "vectorised": lambda: round_vectorised(problem, x, sched, b, rng),
        "loop": lambda: round_loop(problem, x, sched, b, rng),
        "opacus": lambda: opacus_round(x, sched, b, gen),
    }
    # the parts of the vectorised round, timed separately (same inputs as in the round)
    u = local.class_major_updates(problem, x, sched, LR, clip=CLIP)
    view = u.transpose(0, 2, 1)  # as the round passes it: the model's (785, 10) index order
    std = np.full(M, SIGMA)
    fns.update({
        "part_local_steps": lambda: local.class_major_updates(problem, x, sched, LR, clip=CLIP),
        "part_noise": lambda: add_noise(u.copy().transpose(0, 2, 1), std, rng),
        "part_quantizer": lambda: quantized_mean(view, S, rng),
    })
    single = {}
    for name, fn in fns.items():  # warm-up, and the time of one call
        fn()
        t0 = time.perf_counter()
        fn()
        single[name] = time.perf_counter() - t0
    # every implementation gets about the same time per repetition (as many calls as fit in
    # one call of the slowest), each call timed on its own: on a loaded machine a fast call is
    # then as likely as a slow one to find an undisturbed run
    calls = {name: int(min(100, max(1, round(max(single.values()) / t)))) for name, t in single.items()}
    load_before = os.getloadavg()[0]
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.repeats):  # interleaved: a change of load hits all three
        for name, fn in fns.items():
            for _ in range(calls[name]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    load_after = os.getloadavg()[0]
    t_vec, t_loop, t_opa = (min(times[name]) for name in ("vectorised", "loop", "opacus"))
    med = {name: float(np.median(v)) for name, v in times.items() if not name.startswith("part")}
    parts = {name[5:]: round(1e3 * min(v), 3) for name, v in times.items() if name.startswith("part")}
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(json.dumps({"cpu": cpu, "M": M, "E": E, "batch": [int(b.min()), int(b.max())],
                      "vectorised_ms": round(1e3 * t_vec, 2), "loop_ms": round(1e3 * t_loop, 1),
                      "opacus_ms": round(1e3 * t_opa, 1), "ratio_loop": round(t_loop / t_vec, 1),
                      "ratio_opacus": round(t_opa / t_vec, 1), "repeats": args.repeats,
                      "calls_per_repeat": calls,
                      "median_ms": {k: round(1e3 * v, 2) for k, v in med.items()},
                      "median_ratio_loop": round(med["loop"] / med["vectorised"], 1),
                      "median_ratio_opacus": round(med["opacus"] / med["vectorised"], 1),
                      "parts_best_ms": parts,
                      "load_average": [round(load_before, 2), round(load_after, 2)]}, indent=1))


if __name__ == "__main__":
    main()
