"""DP-FedPAQ's record subsampling (Alg. 2) and the sensitivity checks built on it, against plain
loops written from the paper's Algorithm 2 and the softmax gradient ã_j(p_j − e_j)ᵀ, on the
same random draws: the subset of E·b_i records without replacement split into E batches, the
coupled local runs on substitution neighbours, the per-sample gradient norms and clipping.
Local steps run here in float64, one record at a time (the library's are float32).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq import local as loc
from fedrepro.dpfedpaq.checks import sensitivity as sens
from tests._dpfedpaq_problems import small_problem


@pytest.fixture(scope="module")
def problem():
    return small_problem(n_devices=4, per=30, mu=1e-2, seed=2, test_size=0)


def _order(keys, n):
    """A uniformly random order of 0..n−1 from uniform keys (the smallest key first)."""
    return sorted(range(n), key=lambda k: float(keys[k]))


def _subsample(problem, devices, E, b, keys):
    """Alg. 2 for each device: the first E·b_i positions of a random order, batch t = the
    t-th block of b_i; rows global."""
    out = []
    for i, dev in enumerate(devices):
        n, off = int(problem.sizes[dev]), int(problem.offsets[dev])
        pos = _order(keys[i], n)[:E * int(b[i])]
        out.append([[off + p for p in pos[t * int(b[i]):(t + 1) * int(b[i])]] for t in range(E)])
    return out


def test_subsample_batches_by_a_plain_loop(problem):
    devices, E, b = np.array([0, 2, 3, 2]), 3, np.array([4, 7, 2, 9])
    sched = loc.subsample_batches(problem, devices, E, b, np.random.default_rng(8))
    nmax = int(problem.sizes[devices].max())
    keys = np.random.default_rng(8).random((1, devices.size, nmax))[0]  # the same uniforms
    want = _subsample(problem, devices, E, b, keys)
    for i in range(devices.size):
        for t in range(E):
            got = [int(r) for r, w in zip(sched.rows[t, i], sched.weights[t, i], strict=True) if w > 0]
            assert got == want[i][t]  # exact rows, in order
            np.testing.assert_array_equal(sched.weights[t, i][sched.weights[t, i] > 0], np.float32(1 / b[i]))
        flat = [r for batch in want[i] for r in batch]
        assert len(set(flat)) == len(flat) == E * b[i]  # without replacement across the round


def _record_grad(problem, row, y):
    a = problem.features[row].astype(np.float64)
    z = a @ y
    p = np.exp(z - z.max())
    p /= p.sum()
    p[int(problem.labels[row])] -= 1.0
    return np.outer(a, p)


def _local_run(problem, x, batches, eta, clip):
    y = np.array(x, dtype=np.float64)
    for batch in batches:
        g = np.zeros_like(y)
        for row in batch:
            gj = _record_grad(problem, row, y)
            g += gj * min(1.0, clip / float(np.linalg.norm(gj))) / len(batch)
        y = y - eta * (g + problem.mu * y)
    return y


def test_coupled_differences_by_a_plain_loop(problem):
    x = np.random.default_rng(1).normal(scale=0.1, size=(785, 10))
    eta, E, gamma, clip, pairs, seed = 0.5, 2, 0.3, 0.5, 6, 4
    got = sens.coupled_differences(problem, x, eta, E, gamma, clip, pairs, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)  # the check's draws, in its order
    devices = rng.integers(0, problem.n_devices, size=pairs)
    sizes = problem.sizes[devices]
    b = np.array([math.floor(gamma * int(n) / E * (1 + 1e-12)) for n in sizes])
    keys = rng.random((1, pairs, int(sizes.max())))[0]
    batches = _subsample(problem, devices, E, b, keys)
    t = rng.integers(0, E, size=pairs)
    j = np.floor(rng.random(pairs) * b).astype(int)
    draw = rng.integers(0, problem.labels.size - sizes)
    np.testing.assert_array_equal(got["b"], b)
    for k in range(pairs):
        off = int(problem.offsets[devices[k]])
        repl = int(draw[k]) + int(sizes[k]) if draw[k] >= off else int(draw[k])  # a record of another device
        assert not off <= repl < off + int(sizes[k])
        other = [list(batch) for batch in batches[k]]
        other[int(t[k])][int(j[k])] = repl
        y1 = _local_run(problem, x, batches[k], eta, clip)
        y2 = _local_run(problem, x, other, eta, clip)
        want = float(np.linalg.norm(y1 - y2))
        # float32 local models in the library: 1e-5 relative to the distance travelled
        assert abs(got["diff"][k] - want) <= 1e-5 * float(np.linalg.norm(y1 - x))
        assert want <= 2 * eta * E * clip  # and the rigorous sensitivity holds on this pair
    assert np.all(got["diff"] > 0)


def test_check_sensitivity_picks_the_worst_ratio():
    diffs = {"diff": np.array([0.1, 0.3, 0.25]), "b": np.array([2, 10, 5]), "n": np.array([50, 200, 400])}
    eta, E, C = 0.2, 3, 1.0
    bounds = {"rigorous": [2 * eta * E * C] * 3, "per_step": [2 * eta * C / b for b in (2, 10, 5)],
              "authors_code": [C / n for n in (50, 200, 400)]}
    for mode, bd in bounds.items():
        ratios = [d / x for d, x in zip(diffs["diff"], bd, strict=True)]
        k = max(range(3), key=lambda i: ratios[i])
        r = sens.check_sensitivity(diffs, mode, eta, E, C)
        # 1e-15 relative: one division
        assert r.observed == diffs["diff"][k] and r.bound == pytest.approx(bd[k], rel=1e-15)
        assert r.holds == (ratios[k] <= 1 + 1e-5)
        assert r.details["fraction_exceeding"] == pytest.approx(sum(x > 1 + 1e-5 for x in ratios) / 3)


def test_check_clip_norms_by_a_plain_loop(problem):
    x = np.random.default_rng(2).normal(scale=0.3, size=(785, 10))
    rows = np.arange(0, 40, 3)
    norms = [float(np.linalg.norm(_record_grad(problem, int(r), x))) for r in rows]
    clip = 0.5 * (sorted(norms)[4] + sorted(norms)[5])  # between two norms: some records clipped
    out = sens.check_clip_norms(problem, x, rows, clip)
    # float32 logits in the library: 1e-5 relative
    assert out["clipped"].observed == pytest.approx(max(min(nm, clip) for nm in norms), rel=1e-5)
    assert out["clipped"].details["median_norm"] == pytest.approx(float(np.median(norms)), rel=1e-5)
    assert out["clipped"].details["fraction_clipped"] == sum(nm > clip for nm in norms) / len(norms)
    assert 0 < out["clipped"].details["fraction_clipped"] < 1  # the instance clips some records
    assert out["closed_form"].holds
