"""Decoders for the two on-disk formats, written from the format descriptions.

* **IDX** (MNIST, Fashion-MNIST; described on the MNIST home page): a 4-byte magic number
  ``0x00 0x00 <type> <ndim>``, then ``ndim`` big-endian uint32 dimensions, then the values
  in C order, big-endian. Type codes: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
  0x0D float32, 0x0E float64.
* **CIFAR-10 binary** (described on the CIFAR page): each batch file is a sequence of
  3073-byte records, ``<label byte><1024 red><1024 green><1024 blue>``, each colour plane a
  32x32 image in row-major order. The archive ``cifar-10-binary.tar.gz`` holds five training
  batches and one test batch of 10,000 records each. Members are read in memory with
  :mod:`tarfile`; nothing is extracted to disk and nothing is unpickled.

Every length is checked before any reshape, so a truncated or padded file fails with a
:class:`~fedrepro.data.errors.DataFormatError` that says what was expected.
"""

from __future__ import annotations

import gzip
import tarfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fedrepro.core.validate import ParameterTypeError
from fedrepro.data.errors import DataFormatError

__all__ = [
    "IDX_TYPES",
    "CIFAR10_RECORD_BYTES",
    "parse_idx",
    "read_idx_gz",
    "parse_cifar10_records",
    "read_cifar10_archive",
]

IDX_TYPES: dict[int, np.dtype] = {
    0x08: np.dtype("u1"), 0x09: np.dtype("i1"), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8"),
}

CIFAR10_SIDE = 32
CIFAR10_PIXELS = 3 * CIFAR10_SIDE * CIFAR10_SIDE
CIFAR10_RECORD_BYTES = 1 + CIFAR10_PIXELS


def _check_bytes(data: object, source: str) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ParameterTypeError(f"{source}: data must be bytes, got {type(data).__name__}")


def parse_idx(data: bytes, *, source: str = "IDX data") -> np.ndarray:
    """Decode uncompressed IDX bytes into an array (native byte order).

    Raises :class:`DataFormatError` (a ``ValueError``) naming ``source`` when the magic
    number is not ``0x0000TTNN`` with a known type ``TT`` and ``NN >= 1``, when a dimension is
    zero, or when the payload is shorter or longer than the dimensions require.
    """
    _check_bytes(data, source)
    buf = memoryview(data).cast("B")
    if len(buf) < 4:
        raise DataFormatError(f"{source}: {len(buf)} bytes, too short for an IDX magic number")
    zero, type_code, ndim = int.from_bytes(buf[0:2], "big"), buf[2], buf[3]
    if zero != 0 or type_code not in IDX_TYPES or ndim < 1:
        raise DataFormatError(
            f"{source}: bad IDX magic number 0x{int.from_bytes(buf[0:4], 'big'):08x} "
            f"(expected 0x0000TTNN with type TT in "
            f"{{{', '.join(f'0x{t:02x}' for t in IDX_TYPES)}}} and NN >= 1 dimensions)")
    header = 4 + 4 * ndim
    if len(buf) < header:
        raise DataFormatError(f"{source}: truncated IDX header ({len(buf)} bytes, "
                              f"{ndim} dimensions need {header})")
    dims = tuple(int(d) for d in np.frombuffer(buf, dtype=">u4", count=ndim, offset=4))
    if min(dims) == 0:
        raise DataFormatError(f"{source}: IDX dimensions {dims} contain a zero")
    dtype = IDX_TYPES[type_code]
    expected = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    payload = len(buf) - header
    if payload != expected:
        what = "truncated" if payload < expected else "has trailing bytes"
        raise DataFormatError(f"{source}: IDX payload {what}: dimensions {dims} of "
                              f"{dtype.itemsize}-byte values need {expected} bytes, "
                              f"found {payload}")
    arr = np.frombuffer(buf, dtype=dtype, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def read_idx_gz(path: str | Path) -> np.ndarray:
    """Decompress a gzip IDX file and decode it with :func:`parse_idx`."""
    path = Path(path)
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError, zlib.error) as exc:  # bad header, truncated stream, bad CRC
        raise DataFormatError(f"{path.name}: not a complete gzip file ({exc})") from exc
    return parse_idx(data, source=path.name)


def parse_cifar10_records(data: bytes, *, source: str = "CIFAR-10 data",
                          n_classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Decode CIFAR-10 binary records into ``(images, labels)``.

    ``images`` is uint8 of shape ``(n, 32, 32, 3)`` (height, width, channel: the planes are
    moved last), ``labels`` is uint8 of shape ``(n,)``. Raises :class:`DataFormatError` when
    the length is not a positive multiple of 3073 bytes or a label is ``>= n_classes``.
    """
    _check_bytes(data, source)
    size = len(data)
    if size == 0 or size % CIFAR10_RECORD_BYTES:
        raise DataFormatError(f"{source}: {size} bytes is not a positive multiple of the "
                              f"{CIFAR10_RECORD_BYTES}-byte CIFAR-10 record (truncated?)")
    rec = np.frombuffer(data, dtype=np.uint8).reshape(-1, CIFAR10_RECORD_BYTES)
    labels = rec[:, 0].copy()
    if labels.size and int(labels.max()) >= n_classes:
        raise DataFormatError(f"{source}: label {int(labels.max())} outside 0..{n_classes - 1}")
    planes = rec[:, 1:].reshape(-1, 3, CIFAR10_SIDE, CIFAR10_SIDE)
    images = np.ascontiguousarray(planes.transpose(0, 2, 3, 1))
    return images, labels


def read_cifar10_archive(path: str | Path, members: Sequence[str], *,
                         n_records: int | None = None,
                         n_classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Read the named members of a CIFAR-10 binary tar.gz and concatenate their records.

    ``n_records``, when given, is the number of records each member must hold. Only regular
    members with exactly these names are read (into memory); nothing is extracted.
    """
    path = Path(path)
    chunks: list[tuple[np.ndarray, np.ndarray]] = []
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for name in members:
                try:
                    info = tar.getmember(name)
                except KeyError:
                    raise DataFormatError(f"{path.name}: archive has no member {name!r}") from None
                if not info.isfile():
                    raise DataFormatError(f"{path.name}: member {name!r} is not a regular file")
                fh = tar.extractfile(info)
                assert fh is not None  # regular file
                data = fh.read()
                if len(data) != info.size:
                    raise DataFormatError(f"{path.name}: member {name!r} truncated "
                                          f"({len(data)} of {info.size} bytes)")
                if n_records is not None and len(data) != n_records * CIFAR10_RECORD_BYTES:
                    raise DataFormatError(
                        f"{path.name}: member {name!r} has {len(data)} bytes, expected "
                        f"{n_records} records of {CIFAR10_RECORD_BYTES} bytes "
                        f"({n_records * CIFAR10_RECORD_BYTES} bytes)")
                chunks.append(parse_cifar10_records(data, source=f"{path.name}:{name}",
                                                    n_classes=n_classes))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"{path.name}: not a complete tar.gz archive ({exc})") from exc
    images = np.concatenate([c[0] for c in chunks])
    labels = np.concatenate([c[1] for c in chunks])
    return images, labels

