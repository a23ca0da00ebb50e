"""The federated setting of ALI-DPFL's experiments (Ling et al., §VI-A; spec decisions 2–4).

:class:`FederatedSetting` holds the fixed hyper-parameters (10 clients, all in every round;
400 label-sorted shards, ``shards_per_client`` of them per client; Poisson sampling rate
q = 0.015; clipping norm C = 0.1; noise multiplier σ = 1.1; step size η = 0.5; δ = 1e-5)
and :func:`build_clients` turns a dataset into the clients' arrays:

* ``partition="shards"`` (the paper): the training set sorted by label, cut into
  ``n_shards`` equal shards, ``shards_per_client`` random shards per client
  (:func:`fedrepro.data.partition.label_shards`); the standard test set is the test set.
  With 40 shards per client every sample is used (|D_i| = 6,000 Fashion-MNIST, 5,000
  CIFAR-10) but a client holds ≈ 9.9 labels, not the paper's "three or four"
  (:func:`expected_labels_per_client`); 4 shards per client give the stated label counts.
* ``partition="dirichlet"`` (the authors' public code): train and test merged, each class
  split over the clients by Dirichlet(α) proportions (clients that already hold ≥ n/N
  samples get no more), then every client's data split 75 % / 25 % into its training and
  test part; the test set is the pooled client test parts.

Images are scaled to [−1, 1] (ToTensor then Normalize(0.5, 0.5) in the public code) and
returned channel-first ``float32``; labels ``int64``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_interval, check_positive
from fedrepro.data.datasets import load_dataset
from fedrepro.data.partition import dirichlet_label_skew, label_shards

__all__ = ["PAPER", "FederatedSetting", "ClientData", "FederatedData", "build_clients",
           "expected_labels_per_client", "scale_images"]

DATASETS = ("fashion_mnist", "cifar10")


@dataclasses.dataclass(frozen=True)
class FederatedSetting:
    """The fixed setting of the paper's experiments (values of §VI-A and the spec).

    ``q`` is the Poisson sampling rate of every client (the rate that reproduces the
    paper's ε → iteration list); the noisy sum of clipped gradients is divided by the
    expected batch size ``q·|D_i|`` unless ``divisor`` is set (the public code divides by
    its batch-size flag, 64 by default).
    """

    dataset: str = "fashion_mnist"
    n_clients: int = 10
    n_shards: int = 400
    shards_per_client: int = 40
    partition: Literal["shards", "dirichlet"] = "shards"
    dirichlet_alpha: float = 1.0
    client_test_fraction: float = 0.25
    q: float = 0.015
    clip: float = 0.1
    sigma: float = 1.1
    eta: float = 0.5
    delta: float = 1e-5
    divisor: float | None = None

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        check_int("n_clients", self.n_clients, 1)
        check_int("n_shards", self.n_shards, 1)
        check_int("shards_per_client", self.shards_per_client, 1)
        if self.n_shards % self.shards_per_client:
            raise ValueError(
                f"shards_per_client must divide n_shards = {self.n_shards} "
                f"(a divisor in 1..{self.n_shards // self.n_clients}), got "
                f"shards_per_client={self.shards_per_client}")
        if self.n_clients * self.shards_per_client > self.n_shards:
            raise ValueError(
                f"shards_per_client must be at most n_shards / n_clients = "
                f"{self.n_shards // self.n_clients}, got {self.shards_per_client}")
        if self.partition not in ("shards", "dirichlet"):
            raise ValueError(f"partition must be 'shards' or 'dirichlet', got {self.partition!r}")
        check_positive("dirichlet_alpha", self.dirichlet_alpha)
        check_interval("client_test_fraction", self.client_test_fraction, 0.0, 1.0,
                       closed_low=False, closed_high=False)
        check_interval("q", self.q, 0.0, 1.0, closed_low=False)
        check_positive("clip", self.clip)
        check_positive("sigma", self.sigma)
        check_positive("eta", self.eta)
        check_interval("delta", self.delta, 0.0, 1.0, closed_low=False, closed_high=False)
        if self.divisor is not None:
            check_positive("divisor", self.divisor)


#: The setting of the paper's experiments (§VI-A): the one place ALI-DPFL's constants live
#: (q = 0.015, C = 0.1, σ = 1.1, η = 0.5, δ = 1e-5); code that means the paper's value reads it here.
PAPER: FederatedSetting = FederatedSetting()


@dataclasses.dataclass(frozen=True)
class ClientData:
    """One client's training data: images (n, c, h, w) float32 in [−1, 1], labels int64.

    Checked when built (:func:`check_client_arrays`): NumPy arrays, images ``x`` float32 with
    four dimensions and finite pixels, labels ``y`` integers, one per image. What training
    adds (a common image shape, at least one record, labels in ``0..classes-1``) it checks
    itself (:func:`fedrepro.alidpfl.training.check_data`)."""

    x: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        check_client_arrays("ClientData", self.x, self.y)

    def __len__(self) -> int:
        return int(self.y.shape[0])


@dataclasses.dataclass(frozen=True)
class FederatedData:
    """The clients' training data and the test set the accuracy is measured on."""

    clients: tuple[ClientData, ...]
    test_x: np.ndarray
    test_y: np.ndarray

    def __post_init__(self) -> None:
        if not self.clients:
            raise ValueError("clients must hold at least one client")
        _check_nonempty([c.y for c in self.clients])
        if len(self.test_y) == 0:
            raise ValueError("test_y must hold at least one test sample")

    @property
    def sizes(self) -> np.ndarray:
        """|D_i| of every client (int64)."""
        return np.array([len(c) for c in self.clients], dtype=np.int64)

    @property
    def weights(self) -> np.ndarray:
        """|D_i| / |D| (eq. 1), float64."""
        s = self.sizes.astype(np.float64)
        return s / s.sum()

    def label_counts(self, n_classes: int = 10) -> np.ndarray:
        """(n_clients, n_classes) matrix of label counts."""
        return np.stack([np.bincount(c.y, minlength=n_classes) for c in self.clients])


def scale_images(images: np.ndarray) -> np.ndarray:
    """uint8 images (n, h, w) or (n, h, w, c) → float32 channel-first in [−1, 1]."""
    x = np.asarray(images)
    if x.dtype.kind not in "iuf":
        raise ParameterTypeError(f"images must be a uint8 array, got {type(images).__name__} of dtype {x.dtype}")
    if x.dtype != np.uint8:
        raise ValueError(f"images must be uint8, got {x.dtype}")
    if x.ndim not in (3, 4):
        raise ValueError(f"images must have shape (n, h, w) or (n, h, w, c), got {x.shape}")
    x = x[:, None] if x.ndim == 3 else x.transpose(0, 3, 1, 2)
    return (x.astype(np.float32) / np.float32(127.5)) - np.float32(1.0)


def expected_labels_per_client(n_shards: int = 400, shards_per_client: int = 40,
                               n_classes: int = 10) -> float:
    """Expected number of distinct labels of a client holding ``shards_per_client`` random
    shards out of ``n_shards`` label-sorted single-label shards (n_shards / n_classes per
    label): ``n_classes·(1 − C(n_shards − m, k) / C(n_shards, k))`` with m shards per label."""
    check_int("n_shards", n_shards, 1)
    k = check_int("shards_per_client", shards_per_client, 1, n_shards)
    m = n_shards // check_int("n_classes", n_classes, 1, n_shards)
    miss = math.comb(n_shards - m, k) / math.comb(n_shards, k)
    return n_classes * (1.0 - miss)


def check_client_arrays(name: str, x: np.ndarray, y: np.ndarray, shape: tuple[int, ...] | None = None) -> None:
    """Raise unless ``x`` (images) and ``y`` (labels) are NumPy arrays (ParameterTypeError),
    ``x`` float32 of shape ``(n, c, h, w)`` (``(n, *shape)`` when ``shape`` is given), ``y``
    integers of shape ``(n,)`` and every pixel finite (ValueError naming ``name``, the array
    and, for a pixel, the first bad image)."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise ParameterTypeError(f"{name}: images x and labels y must be NumPy arrays, got "
                                 f"{type(x).__name__} and {type(y).__name__}")
    if x.ndim != 4 or (shape is not None and tuple(x.shape[1:]) != shape) or x.dtype != np.float32:
        want = "c, h, w" if shape is None else ", ".join(map(str, shape))
        raise ValueError(f"{name}: images x must be float32 of shape (n, {want}), got {x.dtype} {tuple(x.shape)}")
    if y.shape != (x.shape[0],) or y.dtype.kind not in "iu":
        raise ValueError(f"{name}: labels y must be integers of shape ({x.shape[0]},) (one per image), "
                         f"got {y.dtype} {y.shape}")
    bad = ~np.isfinite(x).all(axis=(1, 2, 3))
    if bad.any():
        raise ValueError(f"{name}: image {int(np.argmax(bad))} holds a non-finite value "
                         f"({int(bad.sum())} such images in x)")


def _check_nonempty(parts: list[np.ndarray]) -> None:
    for i, p in enumerate(parts):
        if len(p) == 0:
            raise ValueError(f"client {i} has no data (empty client): change the partition "
                             f"parameters (shards_per_client, dirichlet_alpha)")


def build_clients(setting: FederatedSetting, rng: np.random.Generator, *,
                  subset: int | None = None,
                  arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
                  ) -> FederatedData:
    """The clients' data of ``setting``, partitioned with ``rng``.

    ``arrays`` = (train images, train labels, test images, test labels) as uint8/int
    arrays replaces loading the dataset (tests, synthetic data). ``subset`` keeps the first
    ``subset`` samples of every client (quick profiles), and of the test set at most
    ``max(subset·n_clients // 4, 100)`` samples.

    A dataset missing from the offline mirror raises :class:`fedrepro.data.errors.MissingDataError`,
    which names the file and how to supply it.
    """
    if arrays is None:
        tr_x, tr_y = load_dataset(setting.dataset, "train")
        te_x, te_y = load_dataset(setting.dataset, "test")
    else:
        tr_x, tr_y, te_x, te_y = arrays
    tr_y = np.asarray(tr_y, dtype=np.int64)
    te_y = np.asarray(te_y, dtype=np.int64)
    if setting.partition == "shards":
        if len(tr_y) % setting.n_shards:
            raise ValueError(f"n_shards must divide the {len(tr_y)} training samples, got "
                             f"n_shards={setting.n_shards}")
        parts = label_shards(tr_y, setting.n_clients, setting.shards_per_client, rng,
                             n_shards=setting.n_shards)
        _check_nonempty(parts)
        clients = [(tr_x[p], tr_y[p]) for p in parts]
        test_x, test_y = te_x, te_y
    else:
        all_x = np.concatenate([tr_x, te_x])
        all_y = np.concatenate([tr_y, te_y])
        parts = dirichlet_label_skew(all_y, setting.n_clients, setting.dirichlet_alpha, rng,
                                     min_size=10, cap_share=True)
        _check_nonempty(parts)
        clients, tests = [], []
        for p in parts:
            p = rng.permutation(p)
            n_test = int(math.ceil(setting.client_test_fraction * len(p)))
            tests.append(p[:n_test])
            clients.append((all_x[p[n_test:]], all_y[p[n_test:]]))
        pooled = np.concatenate(tests)
        test_x, test_y = all_x[pooled], all_y[pooled]
    if subset is not None:
        subset = check_int("subset", subset, 1)
        clients = [_random_subset(x, y, subset, rng) for x, y in clients]
        n_test = max(subset * setting.n_clients // 4, 100)
        keep = np.sort(rng.permutation(len(test_y))[:n_test])
        test_x, test_y = test_x[keep], test_y[keep]
    out = tuple(ClientData(scale_images(x), np.asarray(y, dtype=np.int64)) for x, y in clients)
    _check_nonempty([c.y for c in out])
    return FederatedData(out, scale_images(test_x), np.asarray(test_y, dtype=np.int64))


def _random_subset(x: np.ndarray, y: np.ndarray, k: int,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random subset of ``k`` samples of one client (all when it has fewer), in order."""
    keep = np.sort(rng.permutation(len(y))[: min(k, len(y))])
    return x[keep], y[keep]
