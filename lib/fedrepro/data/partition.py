"""Splitting a labelled training set among clients (non-i.i.d. federated partitions).

Every partition returns a list with one index array per client: ``int64``, sorted, pairwise
disjoint. Random partitions take a seeded ``numpy.random.Generator`` (or an int seed), so
the same seed gives the same partition. :func:`client_label_counts` gives the
``(n_clients, n_classes)`` matrix of per-client label counts.

* :func:`label_shards` -- ALI-DPFL (Ling et al., Sec. VI-A, after McMahan et al.): sort by
  label, cut into equal shards, give each client ``shards_per_client`` random shards.
* :func:`het_mnist` -- HET_MNIST(n_digits) of privacy-augmented FedPAQ (Mohammadi et al.,
  Sec. IV): each device sees ``n_digits`` of the 10 classes.
* :func:`dirichlet_label_skew` -- per-class Dirichlet(alpha) proportions (label skew), the
  partition used by the ALI-DPFL authors' public code.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int

__all__ = [
    "as_generator",
    "label_shards",
    "het_mnist",
    "dirichlet_label_skew",
    "client_label_counts",
]


def as_generator(rng: np.random.Generator | int) -> np.random.Generator:
    """``rng`` itself, or ``numpy.random.default_rng(rng)`` for a non-negative int seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng))
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        raise ValueError(f"rng must be a numpy.random.Generator or an int seed >= 0, got {rng!r}")
    raise ParameterTypeError(f"rng must be a numpy.random.Generator or an int seed >= 0, got {rng!r}")


def _check_labels(labels: np.ndarray, n_classes: int | None = None) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iuf":
        raise ParameterTypeError(f"labels must be a non-empty 1-D integer array, got {labels!r}")
    if labels.ndim != 1 or labels.size == 0 or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be a non-empty 1-D integer array, got dtype "
                         f"{labels.dtype} and shape {labels.shape}")
    if labels.min() < 0:
        raise ValueError(f"labels must be >= 0, got {int(labels.min())}")
    if n_classes is not None and labels.max() >= n_classes:
        raise ValueError(f"labels must lie in 0..{n_classes - 1} (n_classes={n_classes}), "
                         f"got {int(labels.max())}")
    return labels.astype(np.int64, copy=False)


def _groups(owner: np.ndarray, n_clients: int) -> list[np.ndarray]:
    """Indices grouped by owner (``-1`` = unassigned), each group sorted ascending."""
    order = np.argsort(owner, kind="stable")  # stable: indices stay ascending within a group
    counts = np.bincount(owner[owner >= 0], minlength=n_clients)
    start = int(np.count_nonzero(owner < 0))
    return [g.astype(np.int64) for g in np.split(order[start:], np.cumsum(counts)[:-1])]


def label_shards(labels: np.ndarray, n_clients: int, shards_per_client: int,
                 rng: np.random.Generator | int, *, n_shards: int = 400) -> list[np.ndarray]:
    """Label-sorted shards (ALI-DPFL, Sec. VI-A: "sorted the training data based on
    numerical labels and divided it equally into 400 fragments", each client "assigned 40
    random data fragments").

    The indices are sorted by label (stable, so file order within a label), cut into
    ``n_shards`` consecutive shards of ``len(labels) / n_shards`` samples, and
    ``n_clients * shards_per_client`` distinct shards are drawn uniformly without
    replacement; client ``i`` gets draws ``i*k .. (i+1)*k - 1``. With
    ``n_clients * shards_per_client == n_shards`` every sample is used. A shard holds one
    label when every class size is a multiple of the shard size (Fashion-MNIST: 150 per
    shard, CIFAR-10: 125), so a client then has at most ``shards_per_client`` labels.

    With the paper's 40 of 400 shards per client and 40 shards per label, a client misses a
    given label with probability ``C(360, 40) / C(400, 40)``, so it holds
    ``10 (1 - C(360, 40) / C(400, 40)) = 9.88`` labels on average, not the "three or four"
    the paper reports (those match 4 shards per client). The recommended setting is still
    40 shards per client: it uses all the data and gives the |D_i| (6,000 Fashion-MNIST,
    5,000 CIFAR-10) that the paper's privacy numbers need.

    Raises ``ValueError`` when ``n_shards`` does not divide ``len(labels)`` or
    ``n_clients * shards_per_client > n_shards``.
    """
    labels = _check_labels(labels)
    n = labels.size
    n_shards = check_int("n_shards", n_shards, 1, n)
    if n % n_shards:
        raise ValueError(f"n_shards must divide len(labels) = {n} into equal shards, "
                         f"got n_shards={n_shards}")
    n_clients = check_int("n_clients", n_clients, 1, n_shards)
    k = check_int("shards_per_client", shards_per_client, 1, n_shards // n_clients)
    rng = as_generator(rng)
    shards = np.argsort(labels, kind="stable").reshape(n_shards, n // n_shards)
    drawn = rng.permutation(n_shards)[: n_clients * k].reshape(n_clients, k)
    parts = np.sort(shards[drawn].reshape(n_clients, -1), axis=1).astype(np.int64)
    return list(parts)


def _array_split_ids(m: int, n_chunks: int) -> np.ndarray:
    """Chunk id of each of ``m`` consecutive items split like ``numpy.array_split``."""
    base, extra = divmod(m, n_chunks)
    sizes = np.full(n_chunks, base, dtype=np.int64)
    sizes[:extra] += 1
    return np.repeat(np.arange(n_chunks), sizes)


def het_mnist(labels: np.ndarray, n_digits: int, n_clients: int = 100, *,
              n_classes: int = 10, scheme: Literal["cyclic", "authors_random"] = "cyclic",
              rng: np.random.Generator | int | None = None) -> list[np.ndarray]:
    """HET_MNIST(n_digits) (privacy-augmented FedPAQ, Sec. IV): each of ``n_clients``
    devices holds samples of ``n_digits`` of the ``n_classes`` digits.

    The paper only says the data are "equally distributed" and each device sees
    ``n_digits`` classes. ``scheme="cyclic"`` (default) is the project's deterministic
    resolution of that choice (spec Sec. 6.1):

    * device ``i`` owns the digits ``{(i + j) mod n_classes : j = 0..n_digits-1}``, so digit
      ``c`` is owned by the ``n_clients * n_digits / n_classes`` devices with
      ``(c - i) mod n_classes < n_digits``;
    * the indices of digit ``c``, in file order, are split like ``numpy.array_split`` into
      that many consecutive near-equal chunks, given to its owners in increasing device id;
    * hence every device has exactly ``n_digits`` digits, all samples are used, and sizes
      are near-equal (exactly equal on a class-balanced set; exact equality with exactly
      ``n_digits`` digits is impossible on MNIST, whose digit 5 has 5,421 < 6,000 samples).
      ``n_digits = n_classes`` gives every device ``1/n_clients`` of every digit. No ``rng``
      is used.

    ``scheme="authors_random"`` emulates the authors' public code, for comparison only:
    each digit is split into ``n_clients * n_digits / n_classes`` chunks, and device
    ``i = 0, 1, ...`` in turn draws (with ``rng``) ``n_digits`` distinct digits among those
    with chunks left and takes the next chunk of each; late devices may get fewer digits and
    chunks may be left unused.

    ``n_clients`` must be a multiple of ``n_classes`` (so every digit has the same number of
    owners), every digit must have at least as many samples as owners, and labels must lie
    in ``0..n_classes-1``.
    """
    if not isinstance(scheme, str):
        raise ParameterTypeError(f"scheme must be 'cyclic' or 'authors_random', got {scheme!r}")
    if scheme not in ("cyclic", "authors_random"):
        raise ValueError(f"scheme must be 'cyclic' or 'authors_random', got {scheme!r}")
    if rng is not None:  # checked whether or not the scheme draws from it
        rng = as_generator(rng)
    n_classes = check_int("n_classes", n_classes, 1)
    labels = _check_labels(labels, n_classes)
    n_digits = check_int("n_digits", n_digits, 1, n_classes)
    n_clients = check_int("n_clients", n_clients, n_classes)
    if n_clients % n_classes:
        raise ValueError(f"n_clients must be a positive multiple of n_classes={n_classes}, "
                         f"got {n_clients}")
    owners_per_class = n_clients * n_digits // n_classes
    class_sizes = np.bincount(labels, minlength=n_classes)
    if class_sizes.min() < owners_per_class:
        c = int(class_sizes.argmin())
        raise ValueError(f"labels: class {c} has {int(class_sizes[c])} samples, fewer than its "
                         f"{owners_per_class} owners (n_clients * n_digits / n_classes); lower "
                         f"n_clients or n_digits")
    owner = np.full(labels.size, -1, dtype=np.int64)
    if scheme == "cyclic":
        devices = np.arange(n_clients)
        for c in range(n_classes):
            owners = devices[(c - devices) % n_classes < n_digits]
            idx = np.flatnonzero(labels == c)
            owner[idx] = owners[_array_split_ids(idx.size, owners_per_class)]
    else:  # "authors_random"
        if rng is None:
            raise ValueError("rng must be given (a Generator or an int seed) for "
                             "scheme='authors_random'")
        gen = as_generator(rng)
        chunk_of = [np.flatnonzero(labels == c) for c in range(n_classes)]
        chunk_ids = [_array_split_ids(idx.size, owners_per_class) for idx in chunk_of]
        taken = np.zeros(n_classes, dtype=np.int64)
        for i in range(n_clients):  # sequential by construction: devices pick in turn
            available = np.flatnonzero(taken < owners_per_class)
            if available.size == 0:
                break
            picks = gen.choice(available, size=min(n_digits, available.size), replace=False)
            for c in picks:
                owner[chunk_of[c][chunk_ids[c] == taken[c]]] = i
                taken[c] += 1
    return _groups(owner, n_clients)


def dirichlet_label_skew(labels: np.ndarray, n_clients: int, alpha: float,
                         rng: np.random.Generator | int, *, min_size: int = 0,
                         cap_share: bool = False, max_tries: int = 1000) -> list[np.ndarray]:
    """Dirichlet(alpha) label skew: for every class ``c`` (in increasing order) the class's
    indices are shuffled and cut in proportions ``p ~ Dirichlet(alpha * 1_{n_clients})``
    (cut points ``floor(cumsum(p) * n_c)``).

    Small ``alpha`` gives few classes per client, large ``alpha`` approaches an i.i.d.
    split with client sizes near ``n / n_clients``. With ``cap_share=True`` a client that
    already holds ``>= n / n_clients`` samples gets no share of the later classes (its
    proportion is set to zero and the rest renormalised), as in the ALI-DPFL authors' code.
    The whole draw is repeated until every client has at least ``min_size`` samples; after
    ``max_tries`` failed draws a ``ValueError`` is raised.
    """
    labels = _check_labels(labels)
    n = labels.size
    n_clients = check_int("n_clients", n_clients, 1, n)
    if not isinstance(alpha, (int, float, np.floating, np.integer)) or isinstance(alpha, (bool, np.bool_)):
        raise ParameterTypeError(f"alpha must be a finite number > 0, got {alpha!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    min_size = check_int("min_size", min_size, 0, n // n_clients)
    max_tries = check_int("max_tries", max_tries, 1)
    rng = as_generator(rng)
    classes = np.unique(labels)
    class_idx = [np.flatnonzero(labels == c) for c in classes]
    clients = np.arange(n_clients)
    for _ in range(max_tries):
        owner = np.empty(n, dtype=np.int64)
        sizes = np.zeros(n_clients, dtype=np.int64)
        for idx in class_idx:  # classes are few; clients are vectorised
            idx = rng.permutation(idx)
            p = rng.dirichlet(np.full(n_clients, float(alpha)))
            if cap_share:
                p = np.where(sizes < n / n_clients, p, 0.0)
                p = p / p.sum()
            cuts = (np.cumsum(p)[:-1] * idx.size).astype(np.int64)
            counts = np.diff(np.concatenate(([0], cuts, [idx.size])))
            owner[idx] = np.repeat(clients, counts)
            sizes += counts
        if sizes.min() >= min_size:
            return _groups(owner, n_clients)
    raise ValueError(f"min_size={min_size} was not reached in max_tries={max_tries} draws "
                     f"(alpha={alpha}, n_clients={n_clients}); lower min_size or raise alpha")


def client_label_counts(labels: np.ndarray, parts: list[np.ndarray],
                        n_classes: int | None = None) -> np.ndarray:
    """The ``(len(parts), n_classes)`` int64 matrix of label counts per client.

    ``n_classes`` defaults to ``max(labels) + 1``.
    """
    labels = _check_labels(labels, n_classes)
    n_classes = int(labels.max()) + 1 if n_classes is None else int(n_classes)
    if isinstance(parts, (str, bytes, np.ndarray)) or not isinstance(parts, (list, tuple)):
        raise ParameterTypeError(f"parts must be a list of index arrays, got {type(parts).__name__}")
    parts = [np.asarray(p) for p in parts]
    for i, p in enumerate(parts):
        if p.dtype.kind not in "iuf":
            raise ParameterTypeError(f"parts[{i}] must be a 1-D integer array of indices, got dtype {p.dtype}")
        if p.ndim != 1 or (p.size and (not np.issubdtype(p.dtype, np.integer)
                                       or p.min() < 0 or p.max() >= labels.size)):
            raise ValueError(f"parts[{i}] must be a 1-D integer array of indices in "
                             f"0..{labels.size - 1}")
    sizes = np.array([p.size for p in parts], dtype=np.int64)
    client = np.repeat(np.arange(len(parts)), sizes)
    flat = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    counts = np.bincount(client * n_classes + labels[flat], minlength=len(parts) * n_classes)
    return counts.reshape(len(parts), n_classes)
