"""The optimum x* of the MNIST softmax problem and its constants (spec §7.5), stored once.

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.optimum`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.optimum import (  # noqa: F401
    OptimumConfig,
    load_optimum,
    run_optimum,
)

__all__ = ["OptimumConfig", "load_optimum", "run_optimum"]
