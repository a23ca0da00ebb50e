"""Errors raised by :mod:`fedrepro.data`.

All of them derive from :class:`DatasetError`, a :class:`RuntimeError`:

* :class:`MissingDataError`: a file is neither in the offline mirror nor in the download
  cache, and it cannot be downloaded (``FEDREPRO_OFFLINE=1`` or every URL failed);
* :class:`HashMismatchError`: a file's SHA-256 differs from the registered one
  (corrupt, truncated or a different release);
* :class:`DataFormatError`: bytes that do not follow the IDX or CIFAR-10 binary layout
  (bad magic number, wrong dimensions, truncated payload). It is also a :class:`ValueError`,
  since the parsers raise it for bad input bytes.

The messages name the file, the expected SHA-256 and how to supply the file.
"""

from __future__ import annotations

__all__ = ["DatasetError", "MissingDataError", "HashMismatchError", "DataFormatError"]


class DatasetError(RuntimeError):
    """Base class of the data-loading errors."""


class MissingDataError(DatasetError):
    """A dataset file is not available offline and could not be downloaded."""


class HashMismatchError(DatasetError):
    """A dataset file does not have the registered SHA-256."""


class DataFormatError(DatasetError, ValueError):
    """Bytes that do not follow the expected file format."""
