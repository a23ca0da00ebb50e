"""Benchmark: samples per second of one full DP-SGD step of the ALI-DPFL CNNs, in one run.

One step (``fedrepro.alidpfl.dpsgd.dpsgd_step``) is Poisson sampling at rate q from a client's
data, per-sample gradients clipped to C, summed, Gaussian noise, division by the expected batch
B = q·|D_i| and the SGD update. Here |D_i| = 6,000 and q = 0.015, so B = 90 (ALI-DPFL's
Fashion-MNIST client), C = 0.1, σ = 1.1, η = 0.5; the inputs are standard normal pixels and
uniform labels (throughput does not depend on the values). Compared, on the same batches:

* ``loop``: the batch-of-one reference (the straightforward implementation);
* ``opacus``: Opacus's ghost clipping (the library a practitioner would pick);
* ``fast``: ours (one forward, one backward to the layer outputs, book-keeping);
* ``nonprivate``: the same batch's ordinary forward + backward + SGD update (no clipping,
  no noise): the floor that no DP-SGD step can beat.

Each round draws one seed; every method steps its own copy of the model with a generator
seeded by it, so all methods see the same Poisson batch (and the same noise). The methods run
one after the other inside each round (interleaved, so that drift in the machine's load hits
them alike). In each round the loop takes one step and every other method ``--inner`` steps
(each method's k-th step of a round on the same batch); the first ``--warmup`` rounds are not
timed; samples/s is the median over the timed steps of |batch|/time. ``--variants`` adds the four variants of the fast method
(conv norms materialised or by the Gram identity × clipped sum by book-keeping or by a
second backward). torch uses as many intra-op threads as the process has cores (``--threads``).

The process's allocator settings are read from the environment at start-up (glibc reads
``GLIBC_TUNABLES`` before Python runs), so they are the same for every method; the JSON says
which were in force; ``--compare-env`` reruns the benchmark in child processes under the
allocator and OpenMP settings of ``ENVIRONMENTS``. ``--quick`` (under a minute on a quiet
machine) prints one JSON line per model.

Run from the repository root, e.g.
``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295
.venv/bin/python benchmarks/dpsgd_throughput.py``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import torch
from torch.nn import functional as F

from fedrepro.alidpfl import dpsgd
from fedrepro.alidpfl.fastclip import FastOptions
from fedrepro.alidpfl.models import make_cnn

MODELS = {"fmnist": (1, 28, 28), "cifar10": (3, 32, 32)}
N_CLIENT, Q, CLIP, SIGMA, LR = 6000, 0.015, 0.1, 1.1, 0.5
EXACT_TOL = 1e-5  # noise-off agreement with the loop checked before timing (relative, float32)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _check_exact(shape: tuple[int, int, int], x: torch.Tensor, y: torch.Tensor) -> dict[str, float]:
    """Noise-off relative difference of one step's update to the loop's, per method."""
    settings = dpsgd.DPSGDSettings(q=Q, clip=CLIP, sigma=SIGMA, lr=LR)
    out, ref = {}, None
    for method in ("loop", "opacus", "fast"):
        grads, _ = dpsgd.noisy_clipped_gradient(make_cnn(shape, seed=0), x, y, settings,
                                                torch.Generator().manual_seed(1), method=method, noise=False)
        flat = dpsgd.flatten(grads)
        if ref is None:
            ref = flat
        else:
            out[method] = float(torch.linalg.vector_norm(flat - ref) / torch.linalg.vector_norm(ref))
    bad = {m: v for m, v in out.items() if not v <= EXACT_TOL}
    if bad:
        raise RuntimeError(f"methods disagree with the loop beyond {EXACT_TOL}: {bad}")
    return out


def _steppers(shape: tuple[int, int, int], x: torch.Tensor, y: torch.Tensor,
              variants: bool) -> dict[str, Callable[[int], int]]:
    settings = dpsgd.DPSGDSettings(q=Q, clip=CLIP, sigma=SIGMA, lr=LR)
    base = make_cnn(shape, seed=0)

    def dp(method: str, options: FastOptions | None = None) -> Callable[[int], int]:
        model = copy.deepcopy(base)

        def step(seed: int) -> int:
            return dpsgd.dpsgd_step(model, x, y, settings, torch.Generator().manual_seed(seed),
                                    method=method, fast_options=options)
        return step

    plain = copy.deepcopy(base)
    params = list(plain.parameters())

    def nonprivate(seed: int) -> int:
        idx = dpsgd.poisson_batch(x.shape[0], Q, torch.Generator().manual_seed(seed))
        loss = F.cross_entropy(plain(x[idx]), y[idx], reduction="sum")
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.add_(g, alpha=-LR / (Q * x.shape[0]))
        return int(idx.numel())

    out = {"loop": dp("loop"), "opacus": dp("opacus"), "fast": dp("fast"), "nonprivate": nonprivate}
    if variants:
        for conv in ("materialise", "gram"):
            for sum_by in ("bookkeeping", "reweight"):
                out[f"fast[{conv},{sum_by}]"] = dp("fast", FastOptions(conv_norm=conv, sum_by=sum_by))
    return out


def measure(name: str, *, warmup: int, rounds: int, variants: bool, inner: int = 1, seed: int = 0) -> dict:
    shape = MODELS[name]
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(N_CLIENT, *shape, generator=gen)
    y = torch.randint(0, 10, (N_CLIENT,), generator=gen)
    exact = _check_exact(shape, x, y)
    steppers = _steppers(shape, x, y, variants)
    rates: dict[str, list[float]] = {m: [] for m in steppers}
    sizes = []
    for r in range(warmup + rounds):
        for i in range(inner):
            step_seed = 1000 + r * inner + i
            for method, step in steppers.items():
                if method == "loop" and i > 0:
                    continue  # the slow reference runs once per round
                t0 = time.perf_counter()
                size = step(step_seed)
                dt = time.perf_counter() - t0
                if r >= warmup:
                    rates[method].append(size / dt)
            if r >= warmup:
                sizes.append(size)
    sps = {m: statistics.median(v) for m, v in rates.items()}
    ratios = {"fast/nonprivate": sps["fast"] / sps["nonprivate"], "fast/opacus": sps["fast"] / sps["opacus"],
              "fast/loop": sps["fast"] / sps["loop"], "opacus/loop": sps["opacus"] / sps["loop"],
              "nonprivate/loop": sps["nonprivate"] / sps["loop"]}
    return {"model": name, "input_shape": list(shape), "batch_mean": round(statistics.mean(sizes), 1),
            "samples_per_s": {m: round(v, 1) for m, v in sps.items()},
            "ratios": {k: round(v, 3) for k, v in ratios.items()},
            "targets_met": {"fast>=0.75*nonprivate": ratios["fast/nonprivate"] >= 0.75,
                            "fast>=1.5*opacus": ratios["fast/opacus"] >= 1.5},
            "noise_off_rel_diff_to_loop": {k: float(f"{v:.3g}") for k, v in exact.items()},
            "timed_rounds": rounds, "inner_steps": inner}


TUNED_GLIBC = "glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295"
#: Process environments compared by ``--compare-env`` (each must be set before the process starts).
ENVIRONMENTS = {
    "default": {},
    "glibc-tuned": {"GLIBC_TUNABLES": TUNED_GLIBC},
    "glibc-tuned+omp-passive": {"GLIBC_TUNABLES": TUNED_GLIBC, "OMP_WAIT_POLICY": "PASSIVE"},
}


def _compare_env(child_args: list[str]) -> None:
    for rep in range(2):
        for label, extra in ENVIRONMENTS.items():
            env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "OMP_WAIT_POLICY")}
            env.update(extra)
            proc = subprocess.run([sys.executable, __file__, *child_args], env=env, check=True,
                                  capture_output=True, text=True)
            for line in proc.stdout.splitlines():
                res = json.loads(line)
                print(json.dumps({"environment": label, "repeat": rep, "model": res["model"],
                                  "samples_per_s": res["samples_per_s"], "ratios": res["ratios"],
                                  "loadavg_1min": res["machine"]["loadavg_1min"]}), flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few rounds (< 60 s), one JSON line per model")
    ap.add_argument("--rounds", type=int, default=None, help="timed rounds (default 15; quick: 4)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed rounds (default 3; quick: 1)")
    ap.add_argument("--inner", type=int, default=None,
                    help="steps per round of every method but the loop (default 2; quick: 3)")
    ap.add_argument("--models", default="fmnist,cifar10")
    ap.add_argument("--variants", action="store_true", help="also time the four fast variants")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="torch intra-op threads (default: the cores given to this process)")
    ap.add_argument("--compare-env", action="store_true",
                    help="run this benchmark in child processes under each of ENVIRONMENTS (allocator, "
                         "OpenMP wait policy), alternately, twice each; print one JSON line per child and model")
    args = ap.parse_args(argv)
    if args.compare_env:
        _compare_env([a for a in (argv if argv is not None else sys.argv[1:]) if a != "--compare-env"])
        return
    rounds = args.rounds or (4 if args.quick else 15)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    inner = args.inner or (3 if args.quick else 2)
    torch.set_num_threads(args.threads)
    env = {"cpu": _cpu_model(), "threads": torch.get_num_threads(), "torch": torch.__version__,
           "GLIBC_TUNABLES": os.environ.get("GLIBC_TUNABLES", ""),
           "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "")}
    for name in args.models.split(","):
        load0 = os.getloadavg()[0]
        res = measure(name, warmup=warmup, rounds=rounds, variants=args.variants, inner=inner)
        res["machine"] = env | {"loadavg_1min": [round(load0, 2), round(os.getloadavg()[0], 2)]}
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
