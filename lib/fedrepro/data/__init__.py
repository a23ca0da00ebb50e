"""Datasets and federated partitions.

* :mod:`~fedrepro.data.datasets`: MNIST, Fashion-MNIST (gzip IDX) and CIFAR-10 (binary
  version) as uint8 arrays, fetched with pooch from their canonical URLs or an offline
  mirror (``$FEDREPRO_DATA_MIRROR``), checked by SHA-256 and cached decoded
  (``$FEDREPRO_DATA_CACHE``); downloads are disabled by ``FEDREPRO_OFFLINE=1``.
* :mod:`~fedrepro.data.registry`: URLs, hashes and shapes (:data:`REGISTRY`).
* :mod:`~fedrepro.data.formats`: IDX and CIFAR-10 record decoders.
* :mod:`~fedrepro.data.partition`: label shards (ALI-DPFL), HET_MNIST (DP-FedPAQ),
  Dirichlet label skew, per-client label counts.
* :mod:`~fedrepro.data.errors`: :class:`MissingDataError`, :class:`HashMismatchError`
  (``RuntimeError``), :class:`DataFormatError` (``RuntimeError`` and ``ValueError``).
"""

from fedrepro.data.datasets import (
    load_cifar10,
    load_dataset,
    load_fashion_mnist,
    load_mnist,
    to_unit_float,
)
from fedrepro.data.errors import (
    DataFormatError,
    DatasetError,
    HashMismatchError,
    MissingDataError,
)
from fedrepro.data.formats import parse_cifar10_records, parse_idx
from fedrepro.data.partition import (
    client_label_counts,
    dirichlet_label_skew,
    het_mnist,
    label_shards,
)
from fedrepro.data.registry import REGISTRY, DatasetSpec, RemoteFile, dataset_files

__all__ = [
    "load_dataset", "load_mnist", "load_fashion_mnist", "load_cifar10", "to_unit_float",
    "dataset_files", "parse_idx", "parse_cifar10_records",
    "REGISTRY", "DatasetSpec", "RemoteFile",
    "DatasetError", "MissingDataError", "HashMismatchError", "DataFormatError",
    "label_shards", "het_mnist", "dirichlet_label_skew", "client_label_counts",
]
