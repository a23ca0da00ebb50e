"""The tasks of the head-to-head part, each as a pair of problems: one to tune on (the
validation split carved from the training data) and one to report on (all the training
data, the official test set).

T1 — MNIST multinomial logistic regression over 100 clients, HET_MNIST(2) (DP-FedPAQ's task,
:mod:`fedrepro.dpfedpaq.mnist`). The validation split: every client puts aside a fixed,
seeded random ``validation_fraction`` of its records (at least one, never all); the tuning
problem trains on the rest and is scored on the pooled records put aside. The test set is
never seen while tuning.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fedrepro.core.validate import check_int, check_interval
from fedrepro.problems.softmax import SoftmaxProblem, softmax_problem

__all__ = ["validation_split", "t1_problems"]


def validation_split(parts: list[np.ndarray], fraction: float,
                     rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    """Each part loses a random ⌈fraction·n_i⌉ of its indices (at least 1, at most n_i − 1,
    drawn by ``rng`` part by part); returns (the kept parts, in their original order; the
    pooled indices put aside, sorted)."""
    fraction = check_interval("fraction", fraction, 0.0, 1.0, closed_low=False, closed_high=False)
    kept, held = [], []
    for p in parts:
        p = np.asarray(p)
        if p.size < 2:
            raise ValueError("every part needs at least two records to put one aside")
        k = min(max(1, int(np.ceil(fraction * p.size))), p.size - 1)
        out = np.zeros(p.size, dtype=bool)
        out[rng.permutation(p.size)[:k]] = True
        kept.append(p[~out])
        held.append(p[out])
    return kept, np.sort(np.concatenate(held))


@lru_cache(maxsize=2)
def t1_problems(per_device: int | None = None, validation_fraction: float = 0.1,
                split_seed: int = 0) -> tuple[SoftmaxProblem, SoftmaxProblem]:
    """(tuning problem, final problem) of task T1 (module docstring); ``per_device`` keeps the
    first records of each client only (quick profile). Treat both as read-only (shared)."""
    from fedrepro.data import het_mnist, load_mnist

    if per_device is not None:
        per_device = check_int("per_device", per_device, 2)
    split_seed = check_int("split_seed", split_seed, 0)
    images, labels = load_mnist("train")
    parts = het_mnist(labels, 2, 100)
    if per_device is not None:
        parts = [np.asarray(p)[:per_device] for p in parts]
    kept, held = validation_split(parts, validation_fraction, np.random.default_rng(split_seed))
    tuning = softmax_problem(images, labels, kept, mu=1e-3, test_images=images[held], test_labels=labels[held])
    test_images, test_labels = load_mnist("test")
    final = softmax_problem(images, labels, parts, mu=1e-3, test_images=test_images, test_labels=test_labels)
    return tuning, final
