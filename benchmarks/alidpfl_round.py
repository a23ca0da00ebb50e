"""One round of DPFL (ALI-DPFL's Alg. 1) at the paper's size: the clients computed together
(``method="stacked"``, :mod:`fedrepro.alidpfl.stacked`) against one model per client (the
per-client loop over :func:`fedrepro.alidpfl.dpsgd.dpsgd_step`, ``"fast"``), and against the
same per-client loop with Opacus's ghost clipping (``"opacus"``), in one run.

10 clients of 6,000 records (1×28×28, synthetic, as the Fashion-MNIST shards), q = 0.015
(≈ 90 records a step), C = 0.1, σ = 1.1, η = 0.5, τ local steps per round; every method is
given the same plan and data, so the same batches and noise. Reports the best and median
seconds per round over ``--repeats`` measurements of ``--rounds`` rounds (after a warm-up), the ratios,
and the largest difference between the methods' global models relative to the distance
travelled (float32 rounding).

    .venv/bin/python benchmarks/alidpfl_round.py                 # tau = 1 and 3, 2 intra-op threads
    .venv/bin/python benchmarks/alidpfl_round.py --threads 1 --tau 1
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import numpy as np
import torch

from fedrepro.alidpfl import budget, models, setting, training


def _data(clients: int, per_client: int, seed: int = 0) -> setting.FederatedData:
    rng = np.random.default_rng(seed)
    cs = tuple(setting.ClientData(rng.uniform(-1, 1, (per_client, 1, 28, 28)).astype(np.float32),
                                  rng.integers(0, 10, per_client).astype(np.int64)) for _ in range(clients))
    return setting.FederatedData(cs, rng.uniform(-1, 1, (10, 1, 28, 28)).astype(np.float32),
                                 rng.integers(0, 10, 10).astype(np.int64))


def _train(method: str, tau: int, rounds: int, data: setting.FederatedData) -> tuple[float, dict]:
    plan = training.RunPlan(budget.Budgets(1.0, rounds, rounds * tau), tau=tau, eval_rounds=(),
                            curve_every=10 ** 6, curve_size=5, method=method)
    t = time.perf_counter()
    out = training.train(plan, data, return_model=True)
    return time.perf_counter() - t, out


def _round_seconds(method: str, tau: int, data: setting.FederatedData, repeats: int,
                   rounds: int) -> tuple[list[float], np.ndarray]:
    """Seconds per round: (time of 1 + ``rounds`` rounds − time of 1 round) / ``rounds``, so
    that the setup and the final evaluation cancel; ``repeats`` times, after a warm-up."""
    _train(method, tau, 1, data)
    per_round, model = [], None
    for _ in range(repeats):
        short, out = _train(method, tau, 1, data)
        model = out["model"]
        long, _ = _train(method, tau, 1 + rounds, data)
        per_round.append((long - short) / rounds)
    return per_round, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tau", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=4, help="timed rounds per repeat")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--methods", nargs="+", default=["fast", "stacked", "opacus"])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = _data(10, 6000)
    w0 = torch.nn.utils.parameters_to_vector(
        models.make_cnn((1, 28, 28), seed=0).parameters()).detach().numpy()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine()) if platform.system() == "Linux" else platform.machine()
    report = {"cpu": cpu, "threads": args.threads,
              "torch": torch.__version__, "rounds": {}}
    for tau in args.tau:
        row, finals = {}, {}
        for method in args.methods:
            secs, finals[method] = _round_seconds(method, tau, data, args.repeats, args.rounds)
            row[method] = {"best_s": min(secs), "median_s": statistics.median(secs)}
        base = row["fast"]["best_s"]
        for method in args.methods:
            row[method]["fast_over_this"] = base / row[method]["best_s"]
            row[method]["model_diff"] = float(np.linalg.norm(finals[method] - finals["fast"])
                                              / np.linalg.norm(finals["fast"] - w0))
        report["rounds"][f"tau={tau}"] = row
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
