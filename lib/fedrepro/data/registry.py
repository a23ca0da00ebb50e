"""Where the datasets come from: canonical URLs, SHA-256 hashes and expected shapes.

Every file is identified by its SHA-256. The values below are

* MNIST: the four gzip-compressed IDX files of the MNIST database (LeCun, Cortes, Burges),
  whose home is ``http://yann.lecun.com/exdb/mnist/``. That page no longer serves the files
  reliably, so the download URL is the stable mirror that torchvision uses
  (``https://ossci-datasets.s3.amazonaws.com/mnist/``); the home page is kept as a second URL.
  The files are byte-identical to the originals (same MD5 as published with the dataset).
* Fashion-MNIST: the four files of the official release (Xiao, Rasul, Vollgraf 2017) on
  Zalando Research's S3 bucket.
* CIFAR-10: the *binary* version ``cifar-10-binary.tar.gz`` (Krizhevsky 2009) from the
  author's page, 170,052,171 bytes, MD5 ``c32a1d4ab5d03f1284b67883e8d87530`` (published on
  the CIFAR page). The SHA-256 is not published by the author; the value used here is the
  one independently pinned by JuliaML's ``MLDatasets.jl`` (``src/datasets/vision/cifar10.jl``)
  and by ``ankane/torchvision-ruby`` (``lib/torchvision/datasets/cifar10.rb``). The Python
  (pickle) version is never used: downloaded data are never unpickled.

The table is a plain dictionary, :data:`REGISTRY`, so that tests (and users with a private
copy of another dataset in the same format) can register a :class:`DatasetSpec` of their
own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fedrepro.core.validate import ParameterTypeError

__all__ = [
    "RemoteFile",
    "DatasetSpec",
    "REGISTRY",
    "SPLITS",
    "canonical_name",
    "dataset_spec",
    "dataset_files",
]

SPLITS = ("train", "test")

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class RemoteFile:
    """One distribution file: its name, SHA-256, the URLs it can be downloaded from.

    ``folder`` is the sub-folder of the offline mirror (``$FEDREPRO_DATA_MIRROR/<folder>/<name>``)
    and of the download cache that holds it. ``size`` (bytes) is informative only.
    """

    folder: str
    name: str
    sha256: str
    urls: tuple[str, ...]
    size: int | None = None

    def __post_init__(self) -> None:
        if not _SHA256.match(self.sha256):
            raise ValueError(f"sha256 of {self.name!r} must be 64 lower-case hex digits, "
                             f"got {self.sha256!r}")
        if not self.name or "/" in self.name or "\\" in self.name or self.name in (".", ".."):
            raise ValueError(f"name must be a plain file name, got {self.name!r}")
        if not self.folder or "/" in self.folder or "\\" in self.folder:
            raise ValueError(f"folder must be a plain folder name, got {self.folder!r}")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: its files, how to decode them, and what the decoded arrays must look like.

    * ``format``: ``"idx"`` (one gzip IDX file of images and one of labels per split) or
      ``"cifar10-binary"`` (one tar.gz archive whose members are files of fixed-size records
      ``<1 label byte><3072 pixel bytes>``).
    * ``sources[split]``: the names (in ``files``) used by that split, images first for IDX.
    * ``members[split]``: for archives, the member paths holding that split, in order.
    * ``image_shape``: the shape of one decoded image; ``n_samples[split]``: the number of
      samples each split must have; ``n_classes``: labels must lie in ``0..n_classes-1``.
    """

    name: str
    format: Literal["idx", "cifar10-binary"]
    files: tuple[RemoteFile, ...]
    sources: Mapping[str, tuple[str, ...]]
    image_shape: tuple[int, ...]
    n_samples: Mapping[str, int]
    n_classes: int
    members: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    home: str = ""

    def __post_init__(self) -> None:
        if self.format not in ("idx", "cifar10-binary"):
            raise ValueError(f"format must be 'idx' or 'cifar10-binary', got {self.format!r}")
        names = {f.name for f in self.files}
        for split in SPLITS:
            if split not in self.sources or split not in self.n_samples:
                raise ValueError(f"sources and n_samples must cover the splits {SPLITS}")
            unknown = set(self.sources[split]) - names
            if unknown:
                raise ValueError(f"sources[{split!r}] names unknown files {sorted(unknown)}")
            if self.n_samples[split] < 1:
                raise ValueError(f"n_samples[{split!r}] must be >= 1, got {self.n_samples[split]}")
            if self.format == "idx" and len(self.sources[split]) != 2:
                raise ValueError("an IDX split needs exactly two files: (images, labels)")
            if self.format == "cifar10-binary":
                if len(self.sources[split]) != 1 or not self.members.get(split):
                    raise ValueError("a cifar10-binary split needs one archive and its members")
        if self.n_classes < 1:
            raise ValueError(f"n_classes must be >= 1, got {self.n_classes}")

    def file(self, name: str) -> RemoteFile:
        """The :class:`RemoteFile` called ``name``."""
        for f in self.files:
            if f.name == name:
                return f
        raise KeyError(name)

    def split_files(self, split: str) -> tuple[RemoteFile, ...]:
        """The files a split is decoded from (images then labels for IDX)."""
        return tuple(self.file(n) for n in self.sources[split])


def _idx_files(folder: str, base_urls: tuple[str, ...],
               table: dict[str, tuple[str, int]]) -> tuple[RemoteFile, ...]:
    return tuple(RemoteFile(folder, name, sha, tuple(u + name for u in base_urls), size)
                 for name, (sha, size) in table.items())


_MNIST_URLS = ("https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/")
_FASHION_URLS = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
_IDX_SOURCES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
                "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}

MNIST = DatasetSpec(
    name="mnist",
    format="idx",
    files=_idx_files("mnist", _MNIST_URLS, {
        "train-images-idx3-ubyte.gz":
            ("440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", 9912422),
        "train-labels-idx1-ubyte.gz":
            ("3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c", 28881),
        "t10k-images-idx3-ubyte.gz":
            ("8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", 1648877),
        "t10k-labels-idx1-ubyte.gz":
            ("f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6", 4542),
    }),
    sources=_IDX_SOURCES,
    image_shape=(28, 28),
    n_samples={"train": 60000, "test": 10000},
    n_classes=10,
    home="http://yann.lecun.com/exdb/mnist/",
)

FASHION_MNIST = DatasetSpec(
    name="fashion-mnist",
    format="idx",
    files=_idx_files("fashion-mnist", _FASHION_URLS, {
        "train-images-idx3-ubyte.gz":
            ("3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84", 26421880),
        "train-labels-idx1-ubyte.gz":
            ("a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845", 29515),
        "t10k-images-idx3-ubyte.gz":
            ("346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073", 4422102),
        "t10k-labels-idx1-ubyte.gz":
            ("67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5", 5148),
    }),
    sources=_IDX_SOURCES,
    image_shape=(28, 28),
    n_samples={"train": 60000, "test": 10000},
    n_classes=10,
    home="https://github.com/zalandoresearch/fashion-mnist",
)

_CIFAR_ARCHIVE = "cifar-10-binary.tar.gz"
CIFAR10 = DatasetSpec(
    name="cifar-10",
    format="cifar10-binary",
    files=(RemoteFile("cifar-10", _CIFAR_ARCHIVE,
                      "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
                      ("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",),
                      170052171),),
    sources={"train": (_CIFAR_ARCHIVE,), "test": (_CIFAR_ARCHIVE,)},
    members={"train": tuple(f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)),
             "test": ("cifar-10-batches-bin/test_batch.bin",)},
    image_shape=(32, 32, 3),
    n_samples={"train": 50000, "test": 10000},
    n_classes=10,
    home="https://www.cs.toronto.edu/~kriz/cifar.html",
)

REGISTRY: dict[str, DatasetSpec] = {s.name: s for s in (MNIST, FASHION_MNIST, CIFAR10)}

_ALIASES = {"fashion_mnist": "fashion-mnist", "fashionmnist": "fashion-mnist",
            "fmnist": "fashion-mnist", "cifar10": "cifar-10", "cifar_10": "cifar-10"}


def canonical_name(name: str) -> str:
    """The registry key for ``name`` (case-insensitive; ``fashion_mnist``, ``fmnist``,
    ``cifar10`` are accepted as aliases)."""
    if not isinstance(name, str):
        raise ParameterTypeError(f"name must be a string, one of {sorted(REGISTRY)}, got {name!r}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in REGISTRY:
        raise ValueError(f"name must be one of {sorted(REGISTRY)}, got {name!r}")
    return key


def dataset_spec(name: str) -> DatasetSpec:
    """The registered :class:`DatasetSpec` of ``name``."""
    return REGISTRY[canonical_name(name)]


def dataset_files(name: str) -> tuple[RemoteFile, ...]:
    """The distribution files of dataset ``name`` with their SHA-256 and URLs."""
    return dataset_spec(name).files
