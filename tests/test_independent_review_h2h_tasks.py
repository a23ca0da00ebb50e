"""The problems behind the head-to-head tables and DP-FedPAQ's MNIST runs, rebuilt by plain loops
from their stated recipes on the same data and draws:

* HET_MNIST(2) over 100 devices (the project's cyclic resolution of DP-FedPAQ Sec. IV: device i
  owns digits i mod 10 and i+1 mod 10; each digit's records, in file order, cut into near-equal
  consecutive chunks for its owners in increasing id);
* T1: that partition, minus a random ⌈10 %⌉ of each device's records put aside for tuning;
* T2: Fashion-MNIST in 400 label-sorted shards, 40 per client, a seeded subset per client and
  the same validation split, images scaled to [−1, 1];
* the number of whole rounds an uplink budget pays for.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from fedrepro.data import load_mnist
from fedrepro.data.datasets import load_dataset
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead.t2_task import t2_problems
from fedrepro.headtohead.tasks import t1_problems


def _cyclic_parts(labels, n_digits=2, n_devices=100):
    owned = {i: [] for i in range(n_devices)}
    for c in range(10):
        owners = [i for i in range(n_devices) if (c - i) % 10 < n_digits]
        idx = [k for k, y in enumerate(labels.tolist()) if y == c]
        base, extra = divmod(len(idx), len(owners))
        start = 0
        for r, i in enumerate(owners):  # the first `extra` chunks are one longer
            size = base + (1 if r < extra else 0)
            owned[i].extend(idx[start:start + size])
            start += size
        assert start == len(idx)
    return [sorted(owned[i]) for i in range(n_devices)]


def _split(parts, fraction, rng):
    kept, held = [], []
    for p in parts:
        k = min(max(1, math.ceil(fraction * len(p))), len(p) - 1)
        out = set(rng.permutation(len(p))[:k].tolist())
        kept.append([p[j] for j in range(len(p)) if j not in out])
        held.extend(p[j] for j in out)
    return kept, sorted(held)


@pytest.fixture(scope="module")
def mnist():
    return load_mnist("train")


def _device_labels(problem, i):
    return problem.labels[problem.offsets[i]:problem.offsets[i + 1]].tolist()


def test_het_mnist_problem_by_a_plain_loop(mnist):
    images, labels = mnist
    parts = _cyclic_parts(labels)
    p = het_mnist_problem(2, 100, with_test=False)
    assert p.sizes.tolist() == [len(q) for q in parts]  # exact
    for i in (0, 7, 55, 99):
        assert _device_labels(p, i) == [int(labels[k]) for k in parts[i]]
        rows = p.features[p.offsets[i]:p.offsets[i] + 3]
        want = [[float(v) / 255 for v in images[k].reshape(-1)] + [1.0] for k in parts[i][:3]]
        np.testing.assert_allclose(rows, want, rtol=0, atol=6e-8)  # float32 pixels/255, bias column
        assert set(_device_labels(p, i)) == {i % 10, (i + 1) % 10}  # two digits per device


def test_t1_problems_by_a_plain_loop(mnist):
    images, labels = mnist
    per_device = 40
    parts = [q[:per_device] for q in _cyclic_parts(labels)]
    kept, held = _split(parts, 0.1, np.random.default_rng(0))
    tuning, final = t1_problems(per_device=per_device)
    assert tuning.sizes.tolist() == [len(q) for q in kept] and final.sizes.tolist() == [per_device] * 100
    for i in (0, 31, 99):
        assert _device_labels(tuning, i) == [int(labels[k]) for k in kept[i]]  # exact
        assert _device_labels(final, i) == [int(labels[k]) for k in parts[i]]
    assert tuning.test_labels.tolist() == [int(labels[k]) for k in held]
    np.testing.assert_allclose(tuning.test_features[:, :-1], images[held].reshape(len(held), -1) / 255.0,
                               rtol=0, atol=6e-8)  # float32 pixels/255
    test_images, test_labels = load_mnist("test")
    assert final.test_labels.tolist() == test_labels.tolist()


def test_t2_problems_by_a_plain_loop():
    images, labels = load_dataset("fashion_mnist", "train")
    labels = np.asarray(labels, dtype=np.int64)
    per_client, test_records = 30, 50
    rng = np.random.default_rng(0)  # the split seed
    order = sorted(range(len(labels)), key=lambda k: int(labels[k]))  # stable sort by label
    size = len(labels) // 400
    shards = [order[j * size:(j + 1) * size] for j in range(400)]
    drawn = rng.permutation(400)
    parts = [sorted(k for j in drawn[i * 40:(i + 1) * 40] for k in shards[int(j)]) for i in range(10)]
    parts = [sorted(np.asarray(p)[rng.permutation(len(p))[:per_client]].tolist()) for p in parts]
    kept, held = _split(parts, 0.1, rng)
    tuning, final = t2_problems(per_client=per_client, test_records=test_records)

    def arr(t):
        return t.numpy() if hasattr(t, "numpy") else np.asarray(t)
    for i in range(10):
        assert arr(final.ys[i]).tolist() == [int(labels[k]) for k in parts[i]]  # exact
        assert arr(tuning.ys[i]).tolist() == [int(labels[k]) for k in kept[i]]
        want = np.array([[2.0 * images[k].astype(np.float64) / 255 - 1.0] for k in kept[i]])
        np.testing.assert_allclose(arr(tuning.xs[i]), want, rtol=0, atol=1.2e-7)  # float32 scaling
    assert arr(tuning.eval_y).tolist() == [int(labels[k]) for k in held]
    test_images, test_labels = load_dataset("fashion_mnist", "test")
    assert arr(final.eval_y).tolist() == np.asarray(test_labels[:test_records]).tolist()


@pytest.mark.parametrize("budget, m, bits", [(1000.0, 3, 10.0), (999.999, 3, 10.0), (12_474.0 * 20, 20, 12_474.0),
                                             (5e9, 7, 34_512.3)])
def test_rounds_within_is_the_floor_of_the_budget_over_a_round(budget, m, bits):
    want = math.floor(Fraction(budget) / (m * Fraction(bits)))  # exact rational arithmetic
    assert alg.rounds_within(budget, m, bits) == want
