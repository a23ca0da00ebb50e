"""Dataset loaders: format decoders, mirror/cache/download logic, errors, real files.

Synthetic files are written in the real formats (gzip IDX, CIFAR-10 binary records in a
tar.gz) into a temporary mirror and registered with their true SHA-256. Every test points
``FEDREPRO_DATA_CACHE`` at a temporary folder, so the user's cache is never touched; tests
that must stay offline set ``FEDREPRO_OFFLINE=1`` and make ``pooch.retrieve`` fail loudly.
The only downloads are from a local HTTP server on 127.0.0.1. The real MNIST and
Fashion-MNIST files are checked where the shared mirror exists (skipped otherwise).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import io
import os
import tarfile
import threading
from pathlib import Path

import numpy as np
import pooch
import pytest

from fedrepro.data import (
    DataFormatError,
    HashMismatchError,
    MissingDataError,
    arraycache,
    dataset_files,
    datasets,
    fetch,
    load_cifar10,
    load_dataset,
    load_fashion_mnist,
    load_mnist,
    parse_cifar10_records,
    parse_idx,
    registry,
    to_unit_float,
)

# --------------------------------------------------------------------------- helpers


def idx_bytes(arr: np.ndarray, type_code: int = 0x08) -> bytes:
    """IDX encoding of ``arr`` (written here from the format description)."""
    dtype = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    head = bytes([0, 0, type_code, arr.ndim]) + np.asarray(arr.shape, dtype=">u4").tobytes()
    return head + np.ascontiguousarray(arr, dtype=dtype[type_code]).tobytes()


def gz(data: bytes) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as fh:
        fh.write(data)
    return out.getvalue()


def cifar_bytes(images: np.ndarray, labels: np.ndarray) -> bytes:
    """CIFAR-10 binary records: label byte, then the R, G, B planes (row-major)."""
    planes = images.transpose(0, 3, 1, 2).reshape(len(labels), -1)
    return np.concatenate([labels[:, None].astype(np.uint8), planes], axis=1).tobytes()


def tar_gz(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def synthetic_images(rng, n: int, shape=(28, 28)) -> np.ndarray:
    return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)


def register(monkeypatch, name: str, blobs: dict[str, bytes], n: dict[str, int],
             urls: dict[str, tuple[str, ...]] | None = None, sha_override=None):
    """Replace REGISTRY[name] by the same spec with synthetic files of the given bytes."""
    base = registry.REGISTRY[name]
    sha_override = sha_override or {}
    files = tuple(
        dataclasses.replace(f, sha256=sha_override.get(f.name, sha(blobs[f.name])),
                            size=len(blobs[f.name]),
                            urls=(urls or {}).get(f.name, f.urls))  # default: real URLs
        for f in base.files)
    spec = dataclasses.replace(base, files=files, n_samples=n)
    monkeypatch.setitem(registry.REGISTRY, name, spec)
    return spec


def write_mirror(mirror: Path, folder: str, blobs: dict[str, bytes]) -> None:
    (mirror / folder).mkdir(parents=True, exist_ok=True)
    for name, data in blobs.items():
        (mirror / folder / name).write_bytes(data)


def mnist_blobs(rng, n_train=12, n_test=5, shape=(28, 28)):
    arrays = {}
    blobs = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        x = synthetic_images(rng, n, shape)
        y = rng.integers(0, 10, size=n, dtype=np.uint8)
        arrays[prefix] = (x, y)
        blobs[f"{prefix}-images-idx3-ubyte.gz"] = gz(idx_bytes(x))
        blobs[f"{prefix}-labels-idx1-ubyte.gz"] = gz(idx_bytes(y))
    return arrays, blobs


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Private cache and mirror, downloads disabled, any download attempt is an error."""
    cache, mirror = tmp_path / "cache", tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(cache))
    monkeypatch.setenv("FEDREPRO_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")

    def no_network(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(pooch, "retrieve", no_network)
    return {"cache": cache, "mirror": mirror}


@pytest.fixture
def synthetic_mnist(env, monkeypatch):
    arrays, blobs = mnist_blobs(np.random.default_rng(0))
    write_mirror(env["mirror"], "mnist", blobs)
    register(monkeypatch, "mnist", blobs, {"train": 12, "test": 5})
    return arrays, blobs


# --------------------------------------------------------------------------- decoders


def test_parse_idx_round_trips_every_type():
    rng = np.random.default_rng(1)
    cases = [(0x08, rng.integers(0, 256, (3, 4, 5)).astype(np.uint8)),
             (0x09, rng.integers(-128, 128, (7,)).astype(np.int8)),
             (0x0B, rng.integers(-300, 300, (2, 3)).astype(np.int16)),
             (0x0C, rng.integers(-10**6, 10**6, (4,)).astype(np.int32)),
             (0x0D, rng.standard_normal((2, 2)).astype(np.float32)),
             (0x0E, rng.standard_normal((3,)))]
    for code, arr in cases:
        out = parse_idx(idx_bytes(arr, code))
        assert out.dtype == arr.dtype.newbyteorder("=") and out.dtype.isnative
        np.testing.assert_array_equal(out, arr)  # exact: a lossless decoder


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b"\x00\x01" + b[2:], "magic"),           # first two bytes must be zero
    (lambda b: b[:2] + b"\x07" + b[3:], "magic"),       # unknown type code
    (lambda b: b[:3] + b"\x00" + b[4:], "magic"),       # zero dimensions
    (lambda b: b[:2], "too short"),
    (lambda b: b[:10], "truncated IDX header"),         # 3 dims need a 16-byte header
    (lambda b: b[:-1], "truncated"),                    # one payload byte missing
    (lambda b: b + b"\x00", "trailing"),
])
def test_parse_idx_rejects_malformed_bytes(mutate, message):
    good = idx_bytes(np.zeros((2, 3, 4), np.uint8))
    with pytest.raises(DataFormatError, match=message) as err:
        parse_idx(mutate(good))
    assert isinstance(err.value, ValueError)  # documented: DataFormatError is a ValueError


def test_parse_idx_rejects_zero_dimension():
    with pytest.raises(DataFormatError, match="zero"):
        parse_idx(bytes([0, 0, 8, 2]) + np.array([0, 5], ">u4").tobytes())


def test_parse_cifar10_records_layout():
    rng = np.random.default_rng(2)
    images = synthetic_images(rng, 3, (32, 32, 3))
    labels = np.array([0, 9, 4], np.uint8)
    raw = cifar_bytes(images, labels)
    rec = np.frombuffer(raw, np.uint8).reshape(3, 3073)
    # The format: byte 0 label, then plane ch (R, G, B) of 1024 bytes, row-major.
    assert rec[1, 0] == 9
    assert rec[2, 1 + 2 * 1024 + 5 * 32 + 7] == images[2, 5, 7, 2]
    out_images, out_labels = parse_cifar10_records(raw)
    assert out_images.shape == (3, 32, 32, 3) and out_images.dtype == np.uint8
    np.testing.assert_array_equal(out_images, images)
    np.testing.assert_array_equal(out_labels, labels)
    with pytest.raises(DataFormatError, match="multiple of the 3073"):
        parse_cifar10_records(raw[:-1])
    with pytest.raises(DataFormatError, match="multiple of the 3073"):
        parse_cifar10_records(b"")
    bad = bytearray(raw)
    bad[0] = 10
    with pytest.raises(DataFormatError, match="label 10"):
        parse_cifar10_records(bytes(bad))


# --------------------------------------------------------------------------- loading


def test_load_from_mirror_offline(synthetic_mnist, env):
    arrays, _ = synthetic_mnist
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images, labels = load_mnist(split)
        assert images.dtype == np.uint8 and labels.dtype == np.uint8
        np.testing.assert_array_equal(images, arrays[prefix][0])
        np.testing.assert_array_equal(labels, arrays[prefix][1])
    cached = sorted(p.name for p in (env["cache"] / "arrays").iterdir())
    assert len(cached) == 2 and all(p.endswith(".npz") for p in cached)
    assert not (env["cache"] / "downloads").exists()  # mirror files are used in place


def test_cache_reuse_reads_no_source(synthetic_mnist, env, monkeypatch):
    arrays, _ = synthetic_mnist
    load_mnist("train")
    for p in (env["mirror"] / "mnist").iterdir():
        p.unlink()  # a cache hit must not need the sources

    def fail(*a, **k):
        raise AssertionError("decoded again despite a cached copy")

    monkeypatch.setattr(datasets, "decode_split", fail)
    images, labels = load_mnist("train")
    np.testing.assert_array_equal(images, arrays["train"][0])
    np.testing.assert_array_equal(labels, arrays["train"][1])


def test_cache_invalidated_when_source_hash_changes(synthetic_mnist, env, monkeypatch):
    _, blobs = synthetic_mnist
    load_mnist("train")
    old = sorted((env["cache"] / "arrays").glob("mnist-train-*.npz"))
    assert len(old) == 1
    new_images = np.full((12, 28, 28), 7, np.uint8)
    blobs = dict(blobs, **{"train-images-idx3-ubyte.gz": gz(idx_bytes(new_images))})
    write_mirror(env["mirror"], "mnist", blobs)
    register(monkeypatch, "mnist", blobs, {"train": 12, "test": 5})
    images, _ = load_mnist("train")
    np.testing.assert_array_equal(images, new_images)
    now = sorted((env["cache"] / "arrays").glob("mnist-train-*.npz"))
    assert len(now) == 1 and now != old  # the stale file is gone


def test_corrupt_cache_file_is_recomputed(synthetic_mnist, env):
    arrays, _ = synthetic_mnist
    load_mnist("test")
    (path,) = (env["cache"] / "arrays").glob("mnist-test-*.npz")
    path.write_bytes(b"not a zip file")
    images, _ = load_mnist("test")
    np.testing.assert_array_equal(images, arrays["t10k"][0])
    with np.load(path, allow_pickle=False) as z:  # rewritten with the source hashes
        assert z["sources"].tolist() == [f.sha256 for f in
                                         registry.REGISTRY["mnist"].split_files("test")]


def test_tampered_cache_arrays_are_never_used(synthetic_mnist, env):
    """A cached file whose arrays were altered (labels zeroed, sources kept) is decoded anew."""
    arrays, _ = synthetic_mnist
    load_mnist("train")
    (path,) = (env["cache"] / "arrays").glob("mnist-train-*.npz")
    with np.load(path, allow_pickle=False) as z:
        saved = {k: z[k] for k in z.files}
    assert np.any(saved["labels"] != 0)
    saved["labels"] = np.zeros_like(saved["labels"])
    np.savez(path, **saved)
    images, labels = load_mnist("train")
    np.testing.assert_array_equal(labels, arrays["train"][1])
    with np.load(path, allow_pickle=False) as z:  # and the cache was rewritten intact
        np.testing.assert_array_equal(z["labels"], arrays["train"][1])
        assert str(z["digest"]) == arraycache.arrays_digest(z["images"], z["labels"])


def test_failed_cache_write_leaves_nothing(synthetic_mnist, env, monkeypatch):
    def broken_savez(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(arraycache.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        load_mnist("train")
    assert list((env["cache"] / "arrays").iterdir()) == []  # no half file, no temp file


def test_use_cache_false_writes_nothing(synthetic_mnist, env):
    load_dataset("mnist", "train", use_cache=False)
    assert not (env["cache"] / "arrays").exists()


def test_hash_mismatch_in_mirror(synthetic_mnist, env):
    path = env["mirror"] / "mnist" / "train-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    expected = registry.REGISTRY["mnist"].file("train-labels-idx1-ubyte.gz").sha256
    with pytest.raises(HashMismatchError) as err:
        load_mnist("train")
    msg = str(err.value)
    assert "train-labels-idx1-ubyte.gz" in msg and expected in msg
    assert "FEDREPRO_DATA_MIRROR" in msg and "mnist/" in msg
    assert isinstance(err.value, RuntimeError)


def test_missing_file_offline_names_file_hash_and_fix(synthetic_mnist, env):
    (env["mirror"] / "mnist" / "t10k-images-idx3-ubyte.gz").unlink()
    expected = registry.REGISTRY["mnist"].file("t10k-images-idx3-ubyte.gz").sha256
    with pytest.raises(MissingDataError) as err:  # the fixture makes any download an error
        load_mnist("test")
    msg = str(err.value)
    assert "t10k-images-idx3-ubyte.gz" in msg and expected in msg
    assert "FEDREPRO_DATA_MIRROR" in msg and "downloads are disabled (FEDREPRO_OFFLINE=1)" in msg


def test_missing_file_without_mirror_variable(synthetic_mnist, env, monkeypatch):
    monkeypatch.delenv("FEDREPRO_DATA_MIRROR")
    with pytest.raises(MissingDataError, match="is not set"):
        load_mnist("test")


@pytest.mark.parametrize("make_bad, message", [
    (lambda good: good[: len(good) // 2], "not a complete gzip"),  # cut gzip stream
    (lambda good: gz(gzip.decompress(good)[:-100]), "truncated"),  # short IDX payload
    (lambda good: gz(idx_bytes(np.zeros((12, 28), np.uint8))), "magic 0x00000803"),
    (lambda good: gz(idx_bytes(np.zeros((12, 28, 27), np.uint8))), "shape"),
    (lambda good: gz(idx_bytes(np.zeros((11, 28, 28), np.uint8))), "11 items, expected 12"),
])
def test_truncated_or_malformed_file_with_true_hash(synthetic_mnist, env, monkeypatch,
                                                    make_bad, message):
    _, blobs = synthetic_mnist
    name = "train-images-idx3-ubyte.gz"
    blobs = dict(blobs, **{name: make_bad(blobs[name])})
    write_mirror(env["mirror"], "mnist", blobs)
    register(monkeypatch, "mnist", blobs, {"train": 12, "test": 5})  # hash now matches
    with pytest.raises(DataFormatError, match=message) as err:
        load_mnist("train")
    assert name in str(err.value)
    assert not (env["cache"] / "arrays").exists()  # nothing cached from a bad file


def test_bad_label_values_are_rejected(synthetic_mnist, env, monkeypatch):
    _, blobs = synthetic_mnist
    name = "t10k-labels-idx1-ubyte.gz"
    blobs = dict(blobs, **{name: gz(idx_bytes(np.array([0, 1, 2, 3, 10], np.uint8)))})
    write_mirror(env["mirror"], "mnist", blobs)
    register(monkeypatch, "mnist", blobs, {"train": 12, "test": 5})
    with pytest.raises(DataFormatError, match="label 10 outside 0..9"):
        load_mnist("test")


def test_fashion_mnist_uses_its_own_folder(env, monkeypatch):
    arrays, blobs = mnist_blobs(np.random.default_rng(3), n_train=4, n_test=3)
    write_mirror(env["mirror"], "fashion-mnist", blobs)
    register(monkeypatch, "fashion-mnist", blobs, {"train": 4, "test": 3})
    images, labels = load_fashion_mnist("test")
    np.testing.assert_array_equal(images, arrays["t10k"][0])
    assert load_dataset("fashion_mnist", "train")[1].shape == (4,)  # alias
    with pytest.raises(MissingDataError):
        load_mnist("train")  # mnist/ is empty in this mirror


def cifar_archive(rng, n_per_batch: int, members=None, skip=()):
    members = members or registry.REGISTRY["cifar-10"].members
    content, arrays = {}, {}
    for split in ("train", "test"):
        xs, ys = [], []
        for name in members[split]:
            x = synthetic_images(rng, n_per_batch, (32, 32, 3))
            y = rng.integers(0, 10, n_per_batch, dtype=np.uint8)
            xs.append(x)
            ys.append(y)
            if name not in skip:
                content[name] = cifar_bytes(x, y)
        arrays[split] = (np.concatenate(xs), np.concatenate(ys))
    content["cifar-10-batches-bin/batches.meta.txt"] = b"airplane\nautomobile\n"
    return tar_gz(content), arrays


def register_cifar(env, monkeypatch, blob: bytes, n_per_batch: int):
    name = "cifar-10-binary.tar.gz"
    write_mirror(env["mirror"], "cifar-10", {name: blob})
    register(monkeypatch, "cifar-10", {name: blob},
             {"train": 5 * n_per_batch, "test": n_per_batch})


def test_cifar10_binary_archive(env, monkeypatch):
    blob, arrays = cifar_archive(np.random.default_rng(4), n_per_batch=3)
    register_cifar(env, monkeypatch, blob, 3)
    for split in ("train", "test"):
        images, labels = load_cifar10(split)
        assert images.shape == (len(arrays[split][1]), 32, 32, 3)  # channel-last
        np.testing.assert_array_equal(images, arrays[split][0])
        np.testing.assert_array_equal(labels, arrays[split][1])
    assert load_dataset("cifar10", "test")[0].shape == (3, 32, 32, 3)  # alias, cached


def test_cifar10_missing_member(env, monkeypatch):
    blob, _ = cifar_archive(np.random.default_rng(5), 2,
                            skip=("cifar-10-batches-bin/data_batch_3.bin",))
    register_cifar(env, monkeypatch, blob, 2)
    with pytest.raises(DataFormatError, match="data_batch_3.bin"):
        load_cifar10("train")
    assert load_cifar10("test")[0].shape == (2, 32, 32, 3)  # the test split is intact


def test_cifar10_wrong_record_count(env, monkeypatch):
    blob, _ = cifar_archive(np.random.default_rng(6), 2)
    register_cifar(env, monkeypatch, blob, 3)  # registry expects 3 records per member
    with pytest.raises(DataFormatError, match="expected 3 records"):
        load_cifar10("test")


def test_cifar10_truncated_archive_with_true_hash(env, monkeypatch):
    blob, _ = cifar_archive(np.random.default_rng(7), 2)
    register_cifar(env, monkeypatch, blob[: len(blob) * 2 // 3], 2)
    with pytest.raises(DataFormatError, match="cifar-10-binary.tar.gz"):
        load_cifar10("train")


def test_cifar10_hash_mismatch(env, monkeypatch):
    blob, _ = cifar_archive(np.random.default_rng(8), 2)
    register_cifar(env, monkeypatch, blob, 2)
    (env["mirror"] / "cifar-10" / "cifar-10-binary.tar.gz").write_bytes(blob[:-1])
    with pytest.raises(HashMismatchError, match=registry.REGISTRY["cifar-10"].files[0].sha256):
        load_cifar10("test")


def test_bad_arguments():
    with pytest.raises(ValueError, match="name must be one of"):
        load_dataset("svhn", "train")
    with pytest.raises(ValueError, match="split must be one of"):
        load_dataset("mnist", "validation")
    with pytest.raises(ValueError, match="uint8"):
        to_unit_float(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        to_unit_float(np.zeros(3, np.uint8), dtype=np.int64)
    with pytest.raises(ValueError, match="sha256"):
        registry.RemoteFile("mnist", "x.gz", "abc", ())


def test_to_unit_float():
    x = np.array([0, 51, 255], np.uint8)
    out = to_unit_float(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array([0, 0.2, 1], np.float32))  # exact in float32
    assert to_unit_float(x, np.float64)[1] == 0.2


def test_registry_urls_and_hashes():
    mnist = {f.name: f for f in dataset_files("mnist")}
    assert mnist["train-images-idx3-ubyte.gz"].urls[0] == (
        "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz")
    assert any("yann.lecun.com" in u for u in mnist["train-images-idx3-ubyte.gz"].urls)
    fashion = dataset_files("fashion-mnist")
    assert all(f.urls[0].startswith("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/")
               for f in fashion)
    (cifar,) = dataset_files("cifar-10")
    assert cifar.urls == ("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",)
    assert cifar.size == 170052171
    for spec in registry.REGISTRY.values():
        for split in ("train", "test"):
            assert spec.split_files(split)  # every split names registered files


# --------------------------------------------------------------------------- downloads


class _Server:
    """A local HTTP server serving fixed bytes and counting the requests."""

    def __init__(self, files: dict[str, bytes]):
        self.files, self.requests = files, []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                data = outer.files.get(self.path.lstrip("/"))
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server({})
    yield s
    s.close()


def test_download_into_cache_then_reuse(tmp_path, monkeypatch, server):
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDREPRO_DATA_MIRROR", raising=False)
    monkeypatch.delenv("FEDREPRO_OFFLINE", raising=False)
    arrays, blobs = mnist_blobs(np.random.default_rng(9), n_train=3, n_test=2)
    server.files.update(blobs)
    # first URL is dead (404), the second one serves the file
    urls = {n: (server.url + "missing/" + n, server.url + n) for n in blobs}
    register(monkeypatch, "mnist", blobs, {"train": 3, "test": 2}, urls=urls)
    images, _ = load_dataset("mnist", "test", use_cache=False)
    np.testing.assert_array_equal(images, arrays["t10k"][0])
    assert (tmp_path / "cache" / "downloads" / "mnist" / "t10k-images-idx3-ubyte.gz").is_file()
    n_requests = len(server.requests)
    load_dataset("mnist", "test", use_cache=False)  # files now come from the download cache
    monkeypatch.setenv("FEDREPRO_OFFLINE", "1")
    load_dataset("mnist", "test", use_cache=False)  # also offline
    assert len(server.requests) == n_requests


def test_download_with_wrong_hash(tmp_path, monkeypatch, server):
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDREPRO_DATA_MIRROR", raising=False)
    monkeypatch.delenv("FEDREPRO_OFFLINE", raising=False)
    _, blobs = mnist_blobs(np.random.default_rng(10), n_train=3, n_test=2)
    server.files.update(blobs)
    urls = {n: (server.url + n,) for n in blobs}
    bad = {"t10k-labels-idx1-ubyte.gz": "0" * 64}
    register(monkeypatch, "mnist", blobs, {"train": 3, "test": 2}, urls=urls, sha_override=bad)
    with pytest.raises(HashMismatchError, match="0" * 64):
        load_mnist("test")
    assert not (tmp_path / "cache" / "downloads" / "mnist" / "t10k-labels-idx1-ubyte.gz").exists()


def test_download_impossible(tmp_path, monkeypatch, server):
    monkeypatch.setenv("FEDREPRO_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDREPRO_DATA_MIRROR", raising=False)
    monkeypatch.delenv("FEDREPRO_OFFLINE", raising=False)
    _, blobs = mnist_blobs(np.random.default_rng(11), n_train=3, n_test=2)
    urls = {n: (server.url + n, "file:///nowhere/" + n) for n in blobs}  # 404, bad scheme
    register(monkeypatch, "mnist", blobs, {"train": 3, "test": 2}, urls=urls)
    with pytest.raises(MissingDataError, match="could not be downloaded") as err:
        load_mnist("test")
    assert "404" in str(err.value) and "unsupported URL scheme" in str(err.value)


# --------------------------------------------------------------------------- real files


def _real_mirror() -> Path | None:
    candidates = [os.environ.get("FEDREPRO_DATA_MIRROR", ""),
                  str(Path(__file__).resolve().parents[1].parent / "shared" / "datasets")]
    for c in candidates:
        if c and (Path(c) / "mnist").is_dir():
            return Path(c)
    return None


REAL_MIRROR = _real_mirror()
needs_mirror = pytest.mark.skipif(REAL_MIRROR is None, reason="offline dataset mirror absent")


@pytest.fixture(scope="module")
def real_env(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FEDREPRO_DATA_MIRROR", str(REAL_MIRROR))
        mp.setenv("FEDREPRO_DATA_CACHE", str(tmp_path_factory.mktemp("real-cache")))
        mp.setenv("FEDREPRO_OFFLINE", "1")
        yield


@needs_mirror
def test_real_mirror_hashes_match_registry():
    sums = {}
    sums_file = REAL_MIRROR / "SHA256SUMS"
    if sums_file.is_file():
        for line in sums_file.read_text().splitlines():
            digest, rel = line.split()
            sums[rel] = digest
    for name in ("mnist", "fashion-mnist"):
        for f in dataset_files(name):
            path = REAL_MIRROR / f.folder / f.name
            assert fetch.file_sha256(path) == f.sha256
            assert path.stat().st_size == f.size
            if sums:
                assert sums[f"{f.folder}/{f.name}"] == f.sha256


# Label counts of the MNIST training set (published with the dataset, e.g. 5923 zeros and
# 6742 ones) and of its test set; Fashion-MNIST is balanced (6000 / 1000 per class).
MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


@needs_mirror
def test_real_mnist(real_env):
    for split, counts in (("train", MNIST_TRAIN_COUNTS), ("test", MNIST_TEST_COUNTS)):
        images, labels = load_mnist(split)
        n = sum(counts)
        assert images.shape == (n, 28, 28) and images.dtype == np.uint8
        assert labels.shape == (n,) and labels.dtype == np.uint8
        assert np.bincount(labels, minlength=10).tolist() == counts  # exact counts
        assert images.min() == 0 and images.max() == 255
    cached = load_mnist("train")  # second call: from the decoded cache, same arrays
    np.testing.assert_array_equal(cached[1], load_dataset("mnist", "train", use_cache=False)[1])


@needs_mirror
def test_real_fashion_mnist(real_env):
    for split, n in (("train", 60000), ("test", 10000)):
        images, labels = load_fashion_mnist(split)
        assert images.shape == (n, 28, 28) and images.dtype == np.uint8
        assert np.bincount(labels, minlength=10).tolist() == [n // 10] * 10  # exact
