"""ALI-DPFL training on the CPU and on a CUDA GPU: time per round, how far the runs drift
apart, and whether two GPU runs are identical.

The first ``--rounds`` rounds of two runs of Tables II–IV (seed 0, the paper's clients of
Fashion-MNIST): DPFL with τ = 1 and ALI-DPFL (τ* per round, ``ESTIMATE_SAMPLES`` records per
estimate), each trained on the CPU (``--threads`` threads) and twice on the GPU
(:func:`fedrepro.alidpfl.training.train` with ``device="cuda"``; the same CPU generators, so
the same Poisson batches and noise). Prints one JSON object: seconds per round on each
device and their ratio, the largest difference of the test accuracies and losses at the
evaluation rounds, of the final global models (relative to the model's norm) and of the
ALI-DPFL estimates ρ, β, and whether the two GPU runs agree bit for bit. ``--concurrent K``
also runs K copies of the τ = 1 run at once in K processes sharing the GPU (how the results
store's workers use it) and reports the rounds per second of all of them together.

    python benchmarks/alidpfl_device.py --rounds 20 --out gpu.json   # on a machine with a GPU
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np
import torch

from fedrepro.alidpfl.budget import Budgets
from fedrepro.alidpfl.training import RunPlan, train
from fedrepro.chapters.alidpfl.experiments import ESTIMATE_SAMPLES, TablesConfig, _data


def _plans(rounds: int) -> dict[str, RunPlan]:
    evals = tuple(sorted({max(1, rounds // 2), rounds}))
    return {
        "dpfl-tau1": RunPlan(Budgets(1.0, rounds, rounds), tau=1, eval_rounds=evals, curve_every=5, seed=0),
        "ali-dpfl": RunPlan(Budgets(1.0, rounds, 5 * rounds), tau=None, eval_rounds=evals, curve_every=5,
                            seed=0, estimate_samples=ESTIMATE_SAMPLES),
    }


def _timed(plan: RunPlan, data, device: str) -> tuple[dict, float]:
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = train(plan, data, device=device, return_model=True)
    if device == "cuda":
        torch.cuda.synchronize()
    return out, time.perf_counter() - t0


def _rel_max(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def compare(rounds: int, threads: int) -> dict:
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark compares the CPU with a GPU")
    torch.set_num_threads(threads)
    data = _data(TablesConfig(profile="paper", seed=0))
    report: dict = {"rounds": rounds, "cpu_threads": threads, "gpu": torch.cuda.get_device_name(0),
                    "cpu": platform.processor() or platform.machine(), "torch": torch.__version__, "runs": {}}
    for name, plan in _plans(rounds).items():
        _timed(RunPlan(Budgets(1.0, 1, 5), tau=plan.tau, seed=0, estimate_samples=plan.estimate_samples),
               data, "cuda")  # warm-up: CUDA context, kernels
        gpu1, t_gpu = _timed(plan, data, "cuda")
        gpu2, _ = _timed(plan, data, "cuda")
        cpu, t_cpu = _timed(plan, data, "cpu")
        identical = all(np.array_equal(np.asarray(gpu1[k]), np.asarray(gpu2[k]))
                        for k in ("model", "eval_accuracy", "eval_loss", "taus", "curve_accuracy"))
        entry = {
            "rounds_run": int(cpu["rounds"]),
            "cpu_s_per_round": t_cpu / cpu["rounds"],
            "gpu_s_per_round": t_gpu / gpu1["rounds"],
            "speedup": t_cpu / t_gpu,
            "gpu_repeat_identical": bool(identical),
            "taus_equal": bool(np.array_equal(cpu["taus"], gpu1["taus"])),
            "max_accuracy_diff": float(np.max(np.abs(cpu["eval_accuracy"] - gpu1["eval_accuracy"]))),
            "max_loss_rel_diff": _rel_max(gpu1["eval_loss"], cpu["eval_loss"]),
            "model_rel_diff": float(np.linalg.norm(cpu["model"].astype(np.float64) - gpu1["model"])
                                    / np.linalg.norm(cpu["model"].astype(np.float64))),
            "cpu_final_accuracy": float(cpu["final_accuracy"]),
            "gpu_final_accuracy": float(gpu1["final_accuracy"]),
        }
        if plan.tau is None:
            entry["rho_rel_diff"] = _rel_max(gpu1["constants"]["rho"], cpu["constants"]["rho"])
            entry["beta_rel_diff"] = _rel_max(gpu1["constants"]["beta"], cpu["constants"]["beta"])
        report["runs"][name] = entry
        print(name, json.dumps(entry), file=sys.stderr, flush=True)
    return report


def _one_process(rounds: int, barrier, queue) -> None:
    torch.set_num_threads(1)
    data = _data(TablesConfig(profile="paper", seed=0))
    plan = _plans(rounds)["dpfl-tau1"]
    _timed(RunPlan(Budgets(1.0, 1, 1), tau=1, seed=0), data, "cuda")
    barrier.wait()
    _, seconds = _timed(plan, data, "cuda")
    queue.put(seconds)


def concurrent(k: int, rounds: int) -> dict:
    """K processes, each training the τ = 1 run on the GPU at the same time."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(k), ctx.Queue()
    procs = [ctx.Process(target=_one_process, args=(rounds, barrier, queue)) for _ in range(k)]
    for p in procs:
        p.start()
    times = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return {"processes": k, "rounds_each": rounds, "slowest_s": max(times),
            "rounds_per_s_total": k * rounds / max(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="rounds of each run (default 20)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of the CPU runs (default 1)")
    parser.add_argument("--concurrent", type=int, default=0, help="also K GPU processes at once (default: not)")
    parser.add_argument("--out", help="also write the JSON report to this file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.threads < 1:
        parser.error("--rounds and --threads must be positive")
    report = compare(args.rounds, args.threads)
    if args.concurrent > 0:
        report["concurrent"] = concurrent(args.concurrent, args.rounds)
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
