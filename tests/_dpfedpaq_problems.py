"""A small random softmax-regression problem shared by the DP-FedPAQ tests."""

from __future__ import annotations

import numpy as np

from fedrepro.problems.softmax import SoftmaxProblem


def small_problem(n_devices: int = 6, per: int = 40, mu: float = 1e-2, seed: int = 0,
                  test_size: int = 50) -> SoftmaxProblem:
    """``n_devices`` devices of ``per`` to ``per + 7`` sparse random images each (bias column
    appended), random labels; the first ``test_size`` records double as a test set (none if 0)."""
    rng = np.random.default_rng(seed)
    sizes = per + rng.integers(0, 8, n_devices)
    return problem_of_sizes(sizes, rng, mu=mu, test_size=test_size)


def problem_of_sizes(sizes, rng: np.random.Generator, *, mu: float = 1e-2, test_size: int = 50) -> SoftmaxProblem:
    """Devices of the given sizes n_i (sparse random images drawn from ``rng``, bias column
    appended, random labels); the first ``test_size`` records double as a test set (none if 0)."""
    sizes = np.asarray(sizes)
    n = int(sizes.sum())
    feats = np.ones((n, 785), dtype=np.float32)
    feats[:, :-1] = rng.random((n, 784)) * (rng.random((n, 784)) < 0.2)
    labels = rng.integers(0, 10, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    if test_size:
        return SoftmaxProblem(feats, labels, offsets, mu, feats[:test_size], labels[:test_size])
    return SoftmaxProblem(feats, labels, offsets, mu)
