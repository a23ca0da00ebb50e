"""MNIST, Fashion-MNIST and CIFAR-10 (binary version) as numpy arrays.

``load_dataset(name, split)`` returns ``(images, labels)``, both ``uint8``:

* MNIST, Fashion-MNIST: images ``(n, 28, 28)``, ``n`` = 60,000 (train) or 10,000 (test);
* CIFAR-10: images ``(n, 32, 32, 3)`` (**height, width, channel**; use
  ``images.transpose(0, 3, 1, 2)`` for the channel-first layout of torch), ``n`` = 50,000
  (train: ``data_batch_1..5`` in order) or 10,000 (test);
* labels ``(n,)`` in ``0..9``, in the file order.

Files are found as described in :mod:`fedrepro.data.fetch` (offline mirror
``$FEDREPRO_DATA_MIRROR``, download cache, then pooch downloads from the canonical URLs of
:mod:`fedrepro.data.registry`), checked against their SHA-256, decoded by
:mod:`fedrepro.data.formats`, validated against the registered shapes, and cached as
``.npz`` by :mod:`fedrepro.data.arraycache` (so later calls read neither the archive nor
the gzip stream). Errors: :class:`~fedrepro.data.errors.MissingDataError`,
:class:`~fedrepro.data.errors.HashMismatchError` (both ``RuntimeError``) and
:class:`~fedrepro.data.errors.DataFormatError` (also a ``ValueError``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fedrepro.core.validate import ParameterTypeError
from fedrepro.data import arraycache
from fedrepro.data.errors import DataFormatError
from fedrepro.data.fetch import fetch_file
from fedrepro.data.formats import read_cifar10_archive, read_idx_gz
from fedrepro.data.registry import SPLITS, DatasetSpec, dataset_spec

__all__ = ["load_dataset", "load_mnist", "load_fashion_mnist", "load_cifar10",
           "decode_split", "to_unit_float"]


def _check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return split


def _check_idx(arr: np.ndarray, path: Path, ndim: int) -> np.ndarray:
    if arr.dtype != np.uint8 or arr.ndim != ndim:
        raise DataFormatError(
            f"{path.name}: expected IDX magic 0x0000080{ndim} (uint8, {ndim} dimensions), "
            f"found {arr.dtype} with {arr.ndim} dimensions")
    return arr


def decode_split(spec: DatasetSpec, split: str,
                 paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """Decode the (already verified) source files of a split and validate the arrays.

    Checks the IDX magic numbers (0x00000803 images, 0x00000801 labels), the image shape,
    the number of samples (``spec.n_samples[split]``, equal for images and labels) and the
    label range; raises :class:`DataFormatError` naming the file otherwise.
    """
    n = spec.n_samples[split]
    if spec.format == "idx":
        image_path, label_path = paths
        images = _check_idx(read_idx_gz(image_path), image_path, 1 + len(spec.image_shape))
        labels = _check_idx(read_idx_gz(label_path), label_path, 1)
        if images.shape[1:] != spec.image_shape:
            raise DataFormatError(f"{image_path.name}: images of shape {images.shape[1:]}, "
                                  f"expected {spec.image_shape}")
        for arr, path in ((images, image_path), (labels, label_path)):
            if arr.shape[0] != n:
                raise DataFormatError(f"{path.name}: {arr.shape[0]} items, expected {n}")
        if int(labels.max()) >= spec.n_classes:
            raise DataFormatError(f"{label_path.name}: label {int(labels.max())} outside "
                                  f"0..{spec.n_classes - 1}")
    else:
        (archive,) = paths
        members = spec.members[split]
        if n % len(members):
            raise DataFormatError(f"{spec.name}: n_samples[{split!r}] = {n} is not divisible "
                                  f"by the {len(members)} archive members")
        images, labels = read_cifar10_archive(archive, members, n_records=n // len(members),
                                              n_classes=spec.n_classes)
        if images.shape[1:] != spec.image_shape:
            raise DataFormatError(f"{archive.name}: images of shape {images.shape[1:]}, "
                                  f"expected {spec.image_shape}")
    return images, labels


def load_dataset(name: str, split: str = "train", *,
                 use_cache: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)`` of dataset ``name`` (``"mnist"``, ``"fashion-mnist"``,
    ``"cifar-10"``) and ``split`` (``"train"`` or ``"test"``); see the module docstring.

    With ``use_cache=False`` the decoded-array cache is neither read nor written.
    """
    spec = dataset_spec(name)
    _check_split(split)
    if use_cache:
        cached = arraycache.load_cached(spec, split)
        if cached is not None:
            return cached
    paths = [fetch_file(f) for f in spec.split_files(split)]
    images, labels = decode_split(spec, split, paths)
    if use_cache:
        arraycache.store_cached(spec, split, images, labels)
    return images, labels


def load_mnist(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """MNIST: images uint8 ``(n, 28, 28)``, labels uint8 ``(n,)``; n = 60,000 / 10,000."""
    return load_dataset("mnist", split)


def load_fashion_mnist(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST: images uint8 ``(n, 28, 28)``, labels uint8 ``(n,)``."""
    return load_dataset("fashion-mnist", split)


def load_cifar10(split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 (binary version): images uint8 ``(n, 32, 32, 3)`` channel-last, labels
    uint8 ``(n,)``; n = 50,000 / 10,000."""
    return load_dataset("cifar-10", split)


def to_unit_float(images: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """``images / 255`` as floats in [0, 1] (``dtype`` float32 or float64)."""
    images = np.asarray(images)
    if images.dtype.kind not in "iuf":
        raise ParameterTypeError(f"images must be a uint8 array (values 0..255), got dtype {images.dtype}")
    if images.dtype != np.uint8:
        raise ValueError(f"images must have dtype uint8 (values 0..255), got {images.dtype}")
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {np.dtype(dtype)}")
    return images.astype(dtype) / np.asarray(255, dtype=dtype)
