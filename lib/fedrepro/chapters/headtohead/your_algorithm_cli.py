"""The command ``python -m fedrepro.headtohead run module:NAME``: a reader's algorithm through
the protocol of task T1 or T2, printed beside the book's algorithms at the same cells (page
"Run your own algorithm"; :mod:`fedrepro.chapters.headtohead.your_algorithm` does the work)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

from fedrepro.core.device import DEVICE_VARIABLE
from fedrepro.core.profiles import PROFILES
from fedrepro.headtohead.bring_your_own import MAX_GRID, STORE_VARIABLE

__all__ = ["build_parser", "main"]

_DESCRIPTION = f"""\
Run your own federated algorithm through a head-to-head task's protocol, at the same (ε, δ) and
uplink-bit budget as the book's algorithms, and print it beside them.

ALGORITHM is "module:NAME", where NAME is a class with a grid() classmethod (its
configurations, at most {MAX_GRID}, are tuned), a class without one (built with its defaults,
run as is), an instance (run as is) or a tuple of instances. Each configuration is a frozen
dataclass of its hyper-parameters implementing fedrepro.headtohead.interface.HeadToHeadAlgorithm.
"""

_EPILOG = f"""\
Results go to their own store, never into the book's: --store, else ${STORE_VARIABLE}, else
~/.cache/fedrepro/your-algorithm (under $XDG_CACHE_HOME when set). A run is stored cell by cell:
an interrupted run resumes, and a finished one is loaded, not recomputed.

T1 tunes the grid at every cell; T2 tunes it once, at its reference cell, and runs the
selected configuration at every cell. T2 trains a CNN: at the paper profile it costs from tens
of minutes to hours on a CPU (more cells, seeds or local steps cost more) and minutes on a GPU
(--device cuda); the quick profile takes a few minutes on a CPU, the first time with T2's own
quick run of the book's algorithms.

examples:
  python -m fedrepro.headtohead run fedrepro.headtohead.example_algorithm:NormalisedDPFedSGD \\
      --task t1 --epsilons 1,4 --profile quick
  python -m fedrepro.headtohead run fedrepro.headtohead.example_cnn_algorithm:DPFedAvgMomentum \\
      --task t2 --profile quick
"""


def _positive_list(kind: str):
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            values = ()
        if not values or any(not (0 < v < math.inf) for v in values):
            raise argparse.ArgumentTypeError(f"{kind} must be a comma-separated list of positive numbers "
                                             f"(e.g. 1,4), got {text!r}")
        if len(set(values)) != len(values):
            raise argparse.ArgumentTypeError(f"{kind} must be distinct, got {text!r}")
        return values
    return parse


def _seeds(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or any(v < 0 for v in values) or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"seeds must be a comma-separated list of distinct non-negative integers "
                                         f"(e.g. 0,1,2), got {text!r}")
    return values


def _task(text: str) -> str:
    from fedrepro.chapters.headtohead.your_algorithm import TASKS

    if text.lower() not in TASKS:
        raise argparse.ArgumentTypeError(f"task must be one of {', '.join(TASKS)}, got {text!r}")
    return text.lower()


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser."""
    parser = argparse.ArgumentParser(prog="python -m fedrepro.headtohead", description=_DESCRIPTION,
                                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run an algorithm through a task's protocol and compare it",
                              description=_DESCRIPTION, epilog=_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("algorithm", metavar="ALGORITHM", help='the import path "module:NAME" (see above)')
    run.add_argument("--task", type=_task, default="t1",
                     help="the task: t1 (MNIST softmax regression, 100 clients, 10 per round; the default) or "
                          "t2 (Fashion-MNIST CNN, 10 clients with label shards, all 10 per round; hours on a CPU "
                          "at the paper profile, minutes on a GPU)")
    run.add_argument("--epsilons", type=_positive_list("epsilons"), default=None, metavar="E1,E2,...",
                     help="the target ε of each cell, δ = 1e-5 (default: the task's ε sweep at this profile: "
                          "0.5,1,2,4,8 at paper, 4 at quick, for both tasks)")
    run.add_argument("--budget-bits", type=_positive_list("budget-bits"), default=None, metavar="B1,B2,...",
                     help="the uplink budgets in bits, all clients together (default: the task's main budget: "
                          "T1 4e8 at paper, 2e7 at quick; T2 5.6e9 at paper, 4e8 at quick); every ε runs at "
                          "every budget")
    run.add_argument("--profile", choices=PROFILES, default="paper",
                     help="paper: the book's task (full data); quick: a shrunk task, about a minute per cell "
                          "on 2 cores (default: paper)")
    run.add_argument("--seeds", type=_seeds, default=None, metavar="S1,S2,...",
                     help="the seeds of the final runs (default: the task's, 0,1,2 at paper and 0 at quick; other "
                          "seeds are not those of the book's rows)")
    run.add_argument("--store", default=None, metavar="DIR",
                     help=f"the results store (default: ${STORE_VARIABLE}, else ~/.cache/fedrepro/your-algorithm)")
    run.add_argument("--device", default=None, metavar="DEVICE",
                     help=f"the torch device of the run, e.g. cpu or cuda (T2's CNN; T1 computes in numpy): "
                          f"default ${DEVICE_VARIABLE}, else the CPU; not part of a result's identity")
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def _print_report(comparison, out) -> None:
    import pandas as pd

    from fedrepro.chapters.headtohead import your_algorithm as view

    config = comparison.config
    where = ("loaded from the store (computed before; nothing recomputed)" if comparison.loaded
             else f"computed in {comparison.wall_s:.1f} s")
    eps = ", ".join(f"{e:g}" for e in config.epsilons)
    budgets = ", ".join(f"{b:.3g}" for b in config.budgets)
    if comparison.task == "t2":
        from fedrepro.headtohead.t2_task import N_CLIENTS

        protocol = config.t2_config()
        tuned = min(len(config.grid), protocol.grid_size)
        print(f"Task T2 (Fashion-MNIST CNN, {N_CLIENTS} clients with label shards, all {N_CLIENTS} per round), "
              f"profile {config.profile}", file=out)
        how = (f"tuned once at the reference cell (ε = {protocol.tuning_epsilon:g}, "
               f"{protocol.budget_bits:.3g} bits) on the validation records")
    else:
        protocol = config.t1_config()
        tuned = min(len(config.grid), protocol.grid_size)
        print(f"Task T1 (MNIST softmax regression, 100 clients, {protocol.clients_per_round} per round), "
              f"profile {config.profile}", file=out)
        how = "tuned at every cell on the validation split"
    print(f"algorithm: {config.name} ({config.algorithm})", file=out)
    print(f"  grid: {len(config.grid)} configuration(s), {tuned} {how}", file=out)
    print(f"  cells: ε ∈ {{{eps}}} (δ = {protocol.delta:g}) × uplink budget ∈ {{{budgets}}} bits; "
          f"seeds {', '.join(map(str, config.seeds))}", file=out)
    print(f"  result: {comparison.store / config.part / (config.result_name() + '.json')}", file=out)
    if comparison.task == "t2":
        tuning = config.tuning()
        print(f"  tuning: {comparison.store / tuning.part / (tuning.result_name() + '.json')}", file=out)
    print(f"  {where}", file=out)
    print(f"the book's algorithms: {comparison.reference_source}", file=out)
    if comparison.reference is not None and config.seeds != type(protocol).for_profile(config.profile).seeds:
        print("  note: your seeds differ from those of the book's rows", file=out)
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 80):
        print("\nTest accuracy (%, mean ± sd over the seeds) at equal ε and uplink budget:", file=out)
        print(view.comparison_frame(comparison).to_string(float_format=lambda v: f"{v:.2f}"), file=out)
        print(f"\nConfiguration selected for {view.label(config)}:", file=out)
        print(view.selected_frame(comparison).to_string(float_format=lambda v: f"{v:.1f}"), file=out)
    checks = view.calibration_check(comparison)
    print(f"\ncalibration: largest |ε spent / target − 1| = {checks['epsilon_gap']:.1e}; uplink used: "
          f"{100 * checks['budget_share_min']:.1f}–{100 * checks['budget_share_max']:.1f} % of the budget", file=out)


def _use_device(device: str | None) -> str | None:
    """Check the device of the run (``device``, else ``$FEDREPRO_TORCH_DEVICE``, else the CPU)
    and name it in ``$FEDREPRO_TORCH_DEVICE`` for the run's problems (and its worker
    processes); returns the variable's previous value. ValueError naming the variable for a
    device torch cannot use."""
    from fedrepro.core.device import resolve_device
    from fedrepro.headtohead.t2_task import t2_problems

    previous = os.environ.get(DEVICE_VARIABLE)
    try:
        resolve_device(device)
    except ValueError as exc:
        given = f"--device {device!r}" if device is not None else f"${DEVICE_VARIABLE} = {previous!r}"
        raise ValueError(f"{given}: {exc}") from exc
    if device is not None and device != previous:
        os.environ[DEVICE_VARIABLE] = device
        t2_problems.cache_clear()  # problems built in this process on another device are not reused
    return previous


def _restore_device(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(DEVICE_VARIABLE, None)
    else:
        os.environ[DEVICE_VARIABLE] = previous


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status (2 for a bad algorithm, store or device;
    argparse exits with 2 on a bad argument)."""
    from fedrepro.chapters.headtohead import your_algorithm as view

    args = build_parser().parse_args(argv)
    try:
        previous = _use_device(args.device)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        comparison = view.compare(args.algorithm, task=args.task, profile=args.profile, epsilons=args.epsilons,
                                  budget_bits=args.budget_bits, seeds=args.seeds, store=args.store,
                                  progress=not args.no_progress)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        _restore_device(previous)
    _print_report(comparison, sys.stdout)
    return 0
