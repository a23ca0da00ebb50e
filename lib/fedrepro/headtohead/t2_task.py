"""Task T2 of the head-to-head part: Fashion-MNIST, the ALI-DPFL CNN, 10 clients with ALI-DPFL's
label shards (the training set sorted by label, cut into 400 shards of 150 records, 40 random
shards per client: :func:`fedrepro.data.partition.label_shards`, Ling et al. §VI-A), as a
pair of problems: one to tune on, one to report on.

The validation split is T1's (:func:`fedrepro.headtohead.tasks.validation_split`): every
client puts aside a fixed, seeded ``validation_fraction`` of its records; the tuning problem
trains on the rest and is scored on the pooled records put aside; the final problem trains
on all the training records and is scored on the official test set, never seen while tuning.
Images are scaled to [−1, 1] as in ALI-DPFL's public code.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.headtohead.cnn import CNNProblem
from fedrepro.headtohead.tasks import validation_split

__all__ = ["N_CLIENTS", "t2_problems"]

#: Clients of T2 (ALI-DPFL's setting).
N_CLIENTS = 10


@lru_cache(maxsize=2)
def t2_problems(per_client: int | None = None, validation_fraction: float = 0.1, split_seed: int = 0,
                test_records: int | None = None) -> tuple[CNNProblem, CNNProblem]:
    """(tuning problem, final problem) of task T2 (module docstring). ``per_client`` keeps a
    seeded random subset of each client's records and ``test_records`` the first records of
    the test set (quick profile). The partition and the split are seeded by ``split_seed``.
    Treat both problems as read-only (shared)."""
    from fedrepro.alidpfl.setting import scale_images
    from fedrepro.data.datasets import load_dataset
    from fedrepro.data.partition import label_shards

    split_seed = check_int("split_seed", split_seed, 0)
    rng = np.random.default_rng(split_seed)
    images, labels = load_dataset("fashion_mnist", "train")
    labels = np.asarray(labels, dtype=np.int64)
    parts = label_shards(labels, N_CLIENTS, 40, rng, n_shards=400)
    if per_client is not None:
        per_client = check_int("per_client", per_client, 2)
        parts = [np.sort(rng.permutation(p)[:per_client]) for p in parts]
    kept, held = validation_split(parts, validation_fraction, rng)
    x = scale_images(images)
    tuning = CNNProblem([(x[p], labels[p]) for p in kept], x[held], labels[held])
    test_images, test_labels = load_dataset("fashion_mnist", "test")
    if test_records is not None:
        test_records = check_int("test_records", test_records, 1)
        test_images, test_labels = test_images[:test_records], test_labels[:test_records]
    final = CNNProblem([(x[p], labels[p]) for p in parts], scale_images(test_images),
                       np.asarray(test_labels, dtype=np.int64))
    return tuning, final
