"""Federated partitions: disjointness, coverage, label structure, determinism, bad inputs."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from fedrepro.data import client_label_counts, dirichlet_label_skew, het_mnist, label_shards
from fedrepro.data.partition import as_generator


def balanced_labels(n_per_class: int, n_classes: int = 10, seed: int = 0) -> np.ndarray:
    """Every class ``n_per_class`` times, in a shuffled (file-like) order."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.repeat(np.arange(n_classes), n_per_class)).astype(np.uint8)


def unbalanced_labels(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(80, 130, size=10)
    return rng.permutation(np.repeat(np.arange(10), sizes))


def check_partition(parts, n, full=True):
    """Sorted int64 arrays, pairwise disjoint; with ``full`` they cover 0..n-1."""
    for p in parts:
        assert p.dtype == np.int64 and p.ndim == 1
        assert np.all(np.diff(p) > 0)  # sorted, no repeats
    flat = np.concatenate(parts)
    assert np.unique(flat).size == flat.size  # disjoint
    assert flat.min() >= 0 and flat.max() < n
    if full:
        assert flat.size == n


def same(parts_a, parts_b) -> bool:
    return len(parts_a) == len(parts_b) and all(np.array_equal(a, b)
                                                for a, b in zip(parts_a, parts_b, strict=False))


# --------------------------------------------------------------------------- label shards


def test_label_shards_structure():
    labels = balanced_labels(400)  # 4000 samples, shards of 100: one label per shard
    parts = label_shards(labels, n_clients=10, shards_per_client=4, rng=0, n_shards=40)
    check_partition(parts, labels.size)
    counts = client_label_counts(labels, parts)
    assert counts.shape == (10, 10)
    assert all(len(p) == 400 for p in parts)
    assert ((counts > 0).sum(axis=1) <= 4).all()  # at most k labels per client
    assert (counts % 100 == 0).all()  # whole shards only
    assert counts.sum(axis=0).tolist() == [400] * 10


def test_label_shards_partial_use_and_determinism():
    labels = balanced_labels(300)
    a = label_shards(labels, 5, 2, np.random.default_rng(7), n_shards=30)
    b = label_shards(labels, 5, 2, 7, n_shards=30)  # int seed == default_rng(seed)
    c = label_shards(labels, 5, 2, 8, n_shards=30)
    check_partition(a, labels.size, full=False)
    assert sum(len(p) for p in a) == 5 * 2 * 100
    assert same(a, b) and not same(a, c)


def test_label_shards_paper_setting_label_count():
    """ALI-DPFL (Sec. VI-A): 60,000 labels, 400 shards, 40 per client.

    With 40 shards per label, a client misses a label with probability
    C(360, 40) / C(400, 40), so its expected number of labels is
    10 (1 - C(360, 40) / C(400, 40)) ~ 9.88 -- not the "three or four" the paper states.
    """
    labels = balanced_labels(6000)
    expected = 10 * (1 - math.comb(360, 40) / math.comb(400, 40))
    n_labels = []
    for seed in range(60):
        parts = label_shards(labels, 10, 40, seed)
        if seed == 0:
            check_partition(parts, labels.size)
            assert all(len(p) == 6000 for p in parts)
        n_labels.append((client_label_counts(labels, parts) > 0).sum(axis=1))
    mean = np.mean(n_labels)
    # 600 client draws, per-client sd ~ 0.34: standard error ~ 0.014; 0.07 is 5 SE.
    assert abs(mean - expected) < 0.07, (mean, expected)


def test_label_shards_bad_inputs():
    labels = balanced_labels(100)
    with pytest.raises(ValueError, match="n_shards must divide"):
        label_shards(labels, 2, 2, 0, n_shards=300)
    with pytest.raises(ValueError, match="n_shards must be an integer in"):
        label_shards(labels, 2, 2, 0, n_shards=0)
    with pytest.raises(ValueError, match=r"shards_per_client must be an integer in \[1, 20\]"):
        label_shards(labels, 5, 21, 0, n_shards=100)
    with pytest.raises(ValueError, match="n_clients"):
        label_shards(labels, 0, 1, 0, n_shards=100)
    with pytest.raises(ValueError, match="rng"):
        label_shards(labels, 2, 2, -1, n_shards=100)
    with pytest.raises(ValueError, match="labels"):
        label_shards(np.zeros((10, 2), int), 2, 2, 0, n_shards=10)
    with pytest.raises(ValueError, match="labels"):
        label_shards(np.linspace(0, 1, 10), 2, 2, 0, n_shards=10)


# --------------------------------------------------------------------------- HET_MNIST


@pytest.mark.parametrize("n_digits", [1, 2, 3, 5, 10])
def test_het_mnist_cyclic(n_digits):
    labels = unbalanced_labels()
    n_clients = 20
    parts = het_mnist(labels, n_digits, n_clients)
    check_partition(parts, labels.size)  # all samples used
    counts = client_label_counts(labels, parts, n_classes=10)
    for i in range(n_clients):
        owned = sorted((i + j) % 10 for j in range(n_digits))
        assert np.flatnonzero(counts[i]).tolist() == owned  # exactly n_digits classes
    # each class is split into near-equal chunks among its owners (array_split: sizes
    # differ by at most one)
    for c in range(10):
        chunk = counts[:, c][counts[:, c] > 0]
        assert chunk.size == n_clients * n_digits // 10
        assert chunk.max() - chunk.min() <= 1
    assert same(parts, het_mnist(labels, n_digits, n_clients))


def test_het_mnist_cyclic_balanced_is_equal_sized():
    labels = balanced_labels(60)
    for n_digits in (1, 2, 4, 10):
        sizes = {len(p) for p in het_mnist(labels, n_digits, 10)}
        assert sizes == {60}  # exactly equal on a class-balanced set


def test_het_mnist_chunks_follow_file_order():
    labels = unbalanced_labels(3)
    parts = het_mnist(labels, 2, 10)
    idx0 = np.flatnonzero(labels == 0)
    owners = [i for i in range(10) if (0 - i) % 10 < 2]  # devices 0 and 9
    first, second = np.array_split(idx0, 2)
    assert np.array_equal(parts[owners[0]][labels[parts[owners[0]]] == 0], first)
    assert np.array_equal(parts[owners[1]][labels[parts[owners[1]]] == 0], second)


def test_het_mnist_authors_random():
    labels = unbalanced_labels(1)
    a = het_mnist(labels, 2, 20, scheme="authors_random", rng=3)
    b = het_mnist(labels, 2, 20, scheme="authors_random", rng=np.random.default_rng(3))
    c = het_mnist(labels, 2, 20, scheme="authors_random", rng=4)
    assert same(a, b) and not same(a, c)
    check_partition(a, labels.size, full=False)
    counts = client_label_counts(labels, a, n_classes=10)
    assert ((counts > 0).sum(axis=1) <= 2).all()
    for c_ in range(10):  # every non-empty share is one of the class's 4 array_split chunks
        sizes = {len(x) for x in np.array_split(np.flatnonzero(labels == c_), 4)}
        assert set(counts[:, c_][counts[:, c_] > 0]) <= sizes


def test_het_mnist_bad_inputs():
    labels = unbalanced_labels()
    with pytest.raises(ValueError, match=r"n_digits must be an integer in \[1, 10\]"):
        het_mnist(labels, 0)
    with pytest.raises(ValueError, match=r"n_digits must be an integer in \[1, 10\]"):
        het_mnist(labels, 11)
    with pytest.raises(ValueError, match="n_clients must be a positive multiple"):
        het_mnist(labels, 2, 25)
    with pytest.raises(ValueError, match="fewer than its"):
        het_mnist(labels, 10, 1000)
    with pytest.raises(ValueError, match=r"labels must lie in 0..9"):
        het_mnist(np.arange(20), 2, 10)
    with pytest.raises(ValueError, match="scheme must be"):
        het_mnist(labels, 2, 10, scheme="random")
    with pytest.raises(ValueError, match="rng must be given"):
        het_mnist(labels, 2, 10, scheme="authors_random")


# --------------------------------------------------------------------------- Dirichlet


def test_dirichlet_partition_and_determinism():
    labels = unbalanced_labels(2)
    a = dirichlet_label_skew(labels, 8, 0.5, 11)
    b = dirichlet_label_skew(labels, 8, 0.5, np.random.default_rng(11))
    c = dirichlet_label_skew(labels, 8, 0.5, 12)
    check_partition(a, labels.size)
    assert same(a, b) and not same(a, c)
    assert len(a) == 8


def _herfindahl_moments(alpha: float, n: int) -> tuple[float, float]:
    """Mean and variance of S = sum_j p_j^2 for p ~ Dirichlet(alpha * 1_n) (from the
    Dirichlet moments E[prod p_j^k_j] = prod (alpha)_(k_j) / (n alpha)_(sum k_j))."""
    a, big = alpha, n * alpha
    rising = lambda x, k: math.prod(x + i for i in range(k))  # noqa: E731
    mean = n * rising(a, 2) / rising(big, 2)
    second = (n * rising(a, 4) + n * (n - 1) * rising(a, 2) ** 2) / rising(big, 4)
    return mean, second - mean**2


@pytest.mark.parametrize("alpha", [1e-3, 0.5, 1e4])
def test_dirichlet_alpha_controls_skew(alpha):
    """Per class, the clients' shares follow Dirichlet(alpha * 1): their Herfindahl index
    S = sum_j share_j^2 has mean (alpha + 1) / (N alpha + 1) (1/N near i.i.d., 1 when each
    class sits on one client)."""
    n_clients, per_class = 10, 1000
    labels = balanced_labels(per_class)
    s_values = []
    for seed in range(20):
        counts = client_label_counts(labels, dirichlet_label_skew(labels, n_clients, alpha, seed))
        s_values.append(((counts / per_class) ** 2).sum(axis=0))
    mean, var = _herfindahl_moments(alpha, n_clients)
    se = math.sqrt(var / 200)  # 20 draws x 10 classes, independent
    # 5 standard errors (seeds are fixed, so the check is deterministic), plus the effect of
    # flooring the cut points to whole samples: each share moves by |d_j| < 1/1000, so S
    # moves by at most 2 max_j |d_j| sum_j p_j + sum_j d_j^2 < 0.00201
    assert abs(np.mean(s_values) - mean) < 5 * se + 0.00201, (np.mean(s_values), mean, se)
    if alpha == 1e4:
        near_iid = client_label_counts(labels, dirichlet_label_skew(labels, 10, alpha, 0))
        # each share has sd sqrt(0.1 * 0.9 / (1e5 + 1)) ~ 0.001, i.e. ~1 sample of 1000,
        # plus 1 from flooring the cut points; 10 samples is over 5 sd.
        assert np.abs(near_iid - 100).max() <= 10


def test_dirichlet_min_size_and_cap():
    labels = balanced_labels(200)
    parts = dirichlet_label_skew(labels, 10, 0.3, 5, min_size=50)
    assert min(len(p) for p in parts) >= 50
    check_partition(parts, labels.size)
    capped = dirichlet_label_skew(labels, 10, 0.3, 5, cap_share=True)
    check_partition(capped, labels.size)
    # a client stops receiving once it holds n / n_clients = 200 samples, so it ends below
    # 200 + one class (200)
    assert max(len(p) for p in capped) < 400
    with pytest.raises(ValueError, match="min_size=200 was not reached in max_tries=3"):
        dirichlet_label_skew(labels, 10, 0.01, 0, min_size=200, max_tries=3)


def test_dirichlet_bad_inputs():
    labels = balanced_labels(10)
    for alpha in (0, -1.0, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
            dirichlet_label_skew(labels, 5, alpha, 0)
    with pytest.raises(ValueError, match=r"n_clients must be an integer in \[1, 100\]"):
        dirichlet_label_skew(labels, 101, 1.0, 0)
    with pytest.raises(ValueError, match=r"min_size must be an integer in \[0, 20\]"):
        dirichlet_label_skew(labels, 5, 1.0, 0, min_size=21)
    with pytest.raises(ValueError, match="max_tries"):
        dirichlet_label_skew(labels, 5, 1.0, 0, max_tries=0)
    with pytest.raises(ValueError, match="rng"):
        dirichlet_label_skew(labels, 5, 1.0, 1.5)


# --------------------------------------------------------------------------- counts, rng


def test_client_label_counts():
    labels = np.array([0, 1, 1, 2, 2, 2])
    parts = [np.array([0, 3], np.int64), np.array([], np.int64), np.array([1, 2, 4, 5])]
    counts = client_label_counts(labels, parts)
    assert counts.dtype == np.int64
    assert counts.tolist() == [[1, 0, 1], [0, 0, 0], [0, 2, 2]]
    assert client_label_counts(labels, parts, n_classes=5).shape == (3, 5)
    with pytest.raises(ValueError, match=r"parts\[1\]"):
        client_label_counts(labels, [np.array([0]), np.array([6])])
    with pytest.raises(ValueError, match="labels must lie in"):
        client_label_counts(labels, parts, n_classes=2)


def test_as_generator():
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    assert as_generator(5).integers(10**9) == np.random.default_rng(5).integers(10**9)
    for bad in (-1, 1.0, True, None, "3"):
        with pytest.raises(ValueError, match="rng must be"):
            as_generator(bad)


# --------------------------------------------------------------------------- real MNIST


def _real_mirror() -> Path | None:
    for c in (os.environ.get("FEDREPRO_DATA_MIRROR", ""),
              str(Path(__file__).resolve().parents[1].parent / "shared" / "datasets")):
        if c and (Path(c) / "mnist" / "train-labels-idx1-ubyte.gz").is_file():
            return Path(c)
    return None


@pytest.mark.skipif(_real_mirror() is None, reason="offline dataset mirror absent")
def test_het_mnist_on_real_mnist(tmp_path, monkeypatch):
    """Client sizes of the cyclic HET_MNIST(n) on MNIST, N = 100 (spec Sec. 6.1 lists
    HET(1) 542-675, HET(2) 563-636, HET(5) 583-616, HET(10) 596-606)."""
    from fedrepro.data import load_dataset

    monkeypatch.setenv("FEDREPRO_DATA_MIRROR", str(_real_mirror()))
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(tmp_path))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    _, labels = load_dataset("mnist", "train", use_cache=False)
    expected = {1: (542, 675), 2: (563, 636), 5: (583, 616), 10: (596, 606)}
    for n_digits, (lo, hi) in expected.items():
        parts = het_mnist(labels, n_digits)
        check_partition(parts, labels.size)
        sizes = [len(p) for p in parts]
        assert (min(sizes), max(sizes)) == (lo, hi)  # exact: the partition is deterministic
        counts = client_label_counts(labels, parts, n_classes=10)
        assert ((counts > 0).sum(axis=1) == n_digits).all()
