"""Cache of decoded arrays (``.npz``) in the user's data cache, keyed by the source hashes.

A decoded split is stored as ``<cache>/arrays/<dataset>-<split>-<key>.npz`` where ``key`` is
derived from the SHA-256 of every source file, the expected shapes, the archive members and
:data:`DECODER_VERSION`. A changed source hash (or decoder) therefore gives another file
name, and the stale file is removed when the new one is written. Each file also records the
source hashes it was decoded from and a SHA-256 digest of the decoded arrays themselves;
both are compared on load, so a cached file whose arrays were altered (e.g. zeroed labels)
is never used: it is decoded again from the checked source files. Writes are atomic
(temporary file in the same folder, ``fsync``, :func:`os.replace`); a file that cannot be
read is treated as missing. Arrays are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from fedrepro.core.cache import atomic_write
from fedrepro.data.fetch import cache_root
from fedrepro.data.registry import DatasetSpec

__all__ = ["DECODER_VERSION", "arrays_digest", "cache_key", "cache_path", "load_cached", "store_cached"]

DECODER_VERSION = 1


def arrays_digest(images: np.ndarray, labels: np.ndarray) -> str:
    """SHA-256 of the decoded arrays (dtype, shape and bytes of both)."""
    h = hashlib.sha256()
    for arr in (images, labels):
        arr = np.ascontiguousarray(arr)
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def _sources(spec: DatasetSpec, split: str) -> list[str]:
    return [f.sha256 for f in spec.split_files(split)]


def cache_key(spec: DatasetSpec, split: str) -> str:
    """16 hex digits identifying the decoded arrays of ``spec``/``split``."""
    text = json.dumps({
        "decoder": DECODER_VERSION, "name": spec.name, "format": spec.format, "split": split,
        "sources": _sources(spec, split), "members": list(spec.members.get(split, ())),
        "image_shape": list(spec.image_shape), "n": spec.n_samples[split],
        "n_classes": spec.n_classes,
    }, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_path(spec: DatasetSpec, split: str) -> Path:
    """Where the decoded arrays of ``spec``/``split`` are (or would be) cached."""
    return cache_root() / "arrays" / f"{spec.name}-{split}-{cache_key(spec, split)}.npz"


def load_cached(spec: DatasetSpec, split: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The cached ``(images, labels)``, or ``None`` when absent, unreadable or stale."""
    path = cache_path(spec, split)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            images, labels, sources = z["images"], z["labels"], z["sources"]
            digest = str(z["digest"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    n = spec.n_samples[split]
    if (sources.tolist() != _sources(spec, split) or images.dtype != np.uint8
            or labels.dtype != np.uint8 or images.shape != (n, *spec.image_shape)
            or labels.shape != (n,) or digest != arrays_digest(images, labels)):
        return None
    return images, labels


def store_cached(spec: DatasetSpec, split: str, images: np.ndarray, labels: np.ndarray) -> Path:
    """Write the decoded arrays atomically and remove stale files of the same split."""
    path = cache_path(spec, split)
    atomic_write(path, lambda fh: np.savez(fh, images=images, labels=labels,
                                           sources=np.array(_sources(spec, split)),
                                           digest=np.array(arrays_digest(images, labels))))
    stale = re.compile(re.escape(f"{spec.name}-{split}-") + r"[0-9a-f]{16}\.npz")
    for other in path.parent.iterdir():
        if other != path and stale.fullmatch(other.name):
            other.unlink(missing_ok=True)
    return path
