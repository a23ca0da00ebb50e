"""Locating a dataset file: offline mirror first, then the download cache, then the network.

For a :class:`~fedrepro.data.registry.RemoteFile` ``f`` the lookup order is

1. ``$FEDREPRO_DATA_MIRROR/<f.folder>/<f.name>`` when the variable is set and the file exists;
2. ``<cache>/downloads/<f.folder>/<f.name>`` (a previous download);
3. a download with :func:`pooch.retrieve` from each of ``f.urls`` in turn, into (2), unless
   ``FEDREPRO_OFFLINE`` is set to ``1``/``true``/``yes``/``on``.

``<cache>`` is ``$FEDREPRO_DATA_CACHE`` when set, else ``pooch.os_cache("fedrepro")`` (the
user cache folder, e.g. ``~/.cache/fedrepro``); nothing is ever written into the repository.
Every file is checked against its SHA-256 before use. A file with another hash raises
:class:`~fedrepro.data.errors.HashMismatchError`; a file that cannot be found or fetched
raises :class:`~fedrepro.data.errors.MissingDataError`. Both messages name the file, its
expected SHA-256 and how to supply it.
"""

from __future__ import annotations

import ftplib
import hashlib
import os
from pathlib import Path
from urllib.parse import urlsplit

import pooch
import requests

from fedrepro.data.errors import HashMismatchError, MissingDataError
from fedrepro.data.registry import RemoteFile

__all__ = [
    "MIRROR_ENV",
    "CACHE_ENV",
    "OFFLINE_ENV",
    "mirror_root",
    "cache_root",
    "is_offline",
    "file_sha256",
    "fetch_file",
]

MIRROR_ENV = "FEDREPRO_DATA_MIRROR"
CACHE_ENV = "FEDREPRO_DATA_CACHE"
OFFLINE_ENV = "FEDREPRO_OFFLINE"
_TRUE = {"1", "true", "yes", "on"}
_TIMEOUT_S = 60
_SCHEMES = frozenset({"http", "https", "ftp"})


def mirror_root() -> Path | None:
    """The offline mirror folder (``$FEDREPRO_DATA_MIRROR``), or ``None`` when unset."""
    value = os.environ.get(MIRROR_ENV, "").strip()
    return Path(value).expanduser() if value else None


def cache_root() -> Path:
    """The data cache folder: ``$FEDREPRO_DATA_CACHE`` or ``pooch.os_cache("fedrepro")``."""
    value = os.environ.get(CACHE_ENV, "").strip()
    return Path(value).expanduser() if value else Path(pooch.os_cache("fedrepro"))


def is_offline() -> bool:
    """Whether downloads are disabled (``$FEDREPRO_OFFLINE`` is 1/true/yes/on)."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in _TRUE


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, as 64 lower-case hex digits (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _how_to_supply(f: RemoteFile) -> str:
    urls = " or ".join(f.urls) if f.urls else "its distributor"
    return (f"To supply it, download it from {urls}, check its SHA-256, and put it at "
            f"${MIRROR_ENV}/{f.folder}/{f.name}; or allow network access "
            f"(unset {OFFLINE_ENV}) so that it is downloaded into the cache.")


def _check_hash(f: RemoteFile, path: Path, where: str) -> Path:
    actual = file_sha256(path)
    if actual != f.sha256:
        raise HashMismatchError(
            f"{f.folder}/{f.name} in the {where} ({path}) has SHA-256 {actual}, expected "
            f"{f.sha256}: the file is corrupt, truncated or a different release. Delete or "
            f"replace it. {_how_to_supply(f)}")
    return path


def _downloader(url: str):
    if urlsplit(url).scheme == "ftp":
        return pooch.FTPDownloader(timeout=_TIMEOUT_S, progressbar=False)
    return pooch.HTTPDownloader(progressbar=False, timeout=_TIMEOUT_S)


def fetch_file(f: RemoteFile) -> Path:
    """The local path of ``f``, verified against its SHA-256 (see the module docstring)."""
    mirror = mirror_root()
    if mirror is not None:
        candidate = mirror / f.folder / f.name
        if candidate.is_file():
            return _check_hash(f, candidate, "offline mirror")
    download_dir = cache_root() / "downloads" / f.folder
    cached = download_dir / f.name
    if is_offline():
        if cached.is_file():
            return _check_hash(f, cached, "download cache")
        looked = f"{mirror / f.folder}" if mirror is not None else f"(${MIRROR_ENV} is not set)"
        raise MissingDataError(
            f"{f.folder}/{f.name} (SHA-256 {f.sha256}) is not available: it is neither in the "
            f"offline mirror {looked} nor in the download cache {download_dir}, and downloads "
            f"are disabled ({OFFLINE_ENV}=1). {_how_to_supply(f)}")
    failures: list[str] = []
    mismatch = False
    for url in f.urls:
        if urlsplit(url).scheme not in _SCHEMES:
            failures.append(f"{url}: unsupported URL scheme (use one of {sorted(_SCHEMES)})")
            continue
        try:
            path = pooch.retrieve(
                url, known_hash=f"sha256:{f.sha256}", fname=f.name, path=download_dir,
                downloader=_downloader(url))
        except ValueError as exc:  # pooch: the downloaded file has another hash (deleted)
            mismatch = True
            failures.append(f"{url}: {exc}")
            continue
        except (requests.exceptions.RequestException, *ftplib.all_errors) as exc:
            failures.append(f"{url}: {type(exc).__name__}: {exc}")
            continue
        return _check_hash(f, Path(path), "download cache")
    detail = "; ".join(failures) or "no URL registered"
    if mismatch:
        raise HashMismatchError(
            f"{f.folder}/{f.name}: no download had the expected SHA-256 {f.sha256} ({detail}). "
            f"{_how_to_supply(f)}")
    raise MissingDataError(
        f"{f.folder}/{f.name} (SHA-256 {f.sha256}) is not available: it is not in the offline "
        f"mirror and could not be downloaded ({detail}). {_how_to_supply(f)}")
