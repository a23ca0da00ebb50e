"""The MNIST problem of the paper's figures: HET_MNIST(n_digits) softmax regression (Sec. IV).

MNIST (60,000 training / 10,000 test images) split over N = 100 devices by the deterministic
cyclic HET_MNIST partition (:func:`fedrepro.data.het_mnist`, spec §6.1), each device holding
``n_digits`` digits; the model is :class:`fedrepro.problems.softmax.SoftmaxProblem` with
μ = 10⁻³ (spec §6.2). Problems are memoised per process (the design matrix is 188 MB).
"""

from __future__ import annotations

from functools import lru_cache

from fedrepro.data import het_mnist, load_mnist
from fedrepro.problems.softmax import SoftmaxProblem, softmax_problem

__all__ = ["het_mnist_problem"]


@lru_cache(maxsize=2)
def het_mnist_problem(n_digits: int = 2, n_devices: int = 100, mu: float = 1e-3,
                      per_device: int | None = None, with_test: bool = True) -> SoftmaxProblem:
    """HET_MNIST(``n_digits``) softmax regression over ``n_devices`` devices; ``per_device``
    keeps the first samples of each device only (quick profile). Treat the result as
    read-only (it is shared by later calls with the same arguments)."""
    images, labels = load_mnist("train")
    parts = het_mnist(labels, n_digits, n_devices)
    test_images = test_labels = None
    if with_test:
        test_images, test_labels = load_mnist("test")
    return softmax_problem(images, labels, parts, mu=mu, per_device=per_device,
                           test_images=test_images, test_labels=test_labels)
