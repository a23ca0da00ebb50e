"""The vectorised private FedPAQ round (Alg. 2) against straightforward references.

* local steps: a per-device, per-step, per-sample float64 loop forming every gradient
  ã_j(p_j − e_j)ᵀ and clipping it (or the batch mean), written here independently;
* noise: float32 standard normals of the noise stream, scaled per device;
* quantizer: the law of eq. (20) on many draws (two levels per coordinate, upper-level
  frequency p_i, mean v, variance (‖v‖²/s²)Σp_i(1 − p_i)) and the bit count β(s).
"""

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq import algorithms as alg
from fedrepro.dpfedpaq import local as loc
from fedrepro.dpfedpaq import noise as nz
from fedrepro.dpfedpaq import quantizer as qz
from fedrepro.problems.softmax import SoftmaxProblem

REL = 1e-5  # float32 data and products against a float64 reference


def small_problem(n_devices=5, per=40, mu=1e-2, seed=0):
    rng = np.random.default_rng(seed)
    sizes = per + rng.integers(0, 8, n_devices)
    n = int(sizes.sum())
    feats = np.ones((n, 785), dtype=np.float32)
    feats[:, :-1] = rng.random((n, 784)) * (rng.random((n, 784)) < 0.2)
    labels = rng.integers(0, 10, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return SoftmaxProblem(feats, labels, offsets, mu)


def reference_local(problem, x, sched, lr, clip=None, clip_mode="sample", correction=None):
    """Straightforward loop; returns the local models (M, 785, 10) and how many per-sample
    (or batch) gradients were clipped and left alone."""
    steps, m, bmax = sched.rows.shape
    clipped = kept = 0
    out = []
    for i in range(m):
        y = np.array(x, dtype=np.float64)
        for t in range(steps):
            if not sched.active[t, i]:
                continue
            g = np.zeros_like(y)
            for j in range(bmax):
                w = float(sched.weights[t, i, j])
                if w == 0.0:
                    continue
                row = sched.rows[t, i, j]
                a = problem.features[row].astype(np.float64)
                z = a @ y
                prob = np.exp(z - z.max())
                prob /= prob.sum()
                prob[problem.labels[row]] -= 1.0
                gj = np.outer(a, prob)
                if clip is not None and clip_mode == "sample":
                    norm = np.linalg.norm(gj)
                    clipped, kept = clipped + (norm > clip), kept + (norm <= clip)
                    gj = gj * min(1.0, clip / norm)
                g += w * gj
            if clip is not None and clip_mode == "batch":
                norm = np.linalg.norm(g)
                clipped, kept = clipped + (norm > clip), kept + (norm <= clip)
                g = g * min(1.0, clip / norm)
            g = g + problem.mu * y
            if correction is not None:
                g = g + correction[i]
            y = y - lr * g
        out.append(y)
    return np.stack(out), clipped, kept


def rel_err(got, want, base):
    return float(np.linalg.norm(got - want) / np.linalg.norm(want - base))


@pytest.fixture(scope="module")
def setup():
    p = small_problem()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((785, 10)) * 0.2
    devices = np.array([0, 2, 3, 4])
    b = np.array([4, 6, 5, 3])  # unequal batches: padding with weight 0
    sched = loc.subsample_batches(p, devices, 5, b, rng)
    return p, x, sched


@pytest.mark.parametrize("clip, clip_mode", [(None, "sample"), (6.0, "sample"), (0.05, "batch")])
def test_local_updates_equal_reference_loop(setup, clip, clip_mode):
    p, x, sched = setup
    ref, clipped, kept = reference_local(p, x, sched, 0.4, clip, clip_mode)
    if clip is not None:  # the clip level is chosen so that the factor is sometimes < 1
        assert clipped > 0 and (kept > 0 or clip_mode == "batch")
    u = loc.local_updates(p, x, sched, 0.4, clip=clip, clip_mode=clip_mode)
    assert u.dtype == np.float32 and u.shape == (4, 785, 10)
    assert rel_err(x + u.astype(np.float64), ref, x) < REL
    assert rel_err(loc.local_sgd(p, x, sched, 0.4, clip=clip, clip_mode=clip_mode), ref, x) < REL


def test_local_updates_with_correction_and_idle_steps():
    p = small_problem(per=30)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((785, 10)) * 0.1
    devices = np.array([1, 3])
    sched = loc.epoch_batches(p, devices, 2, np.array([25, 9]), rng, batch_size=10)
    assert not sched.active.all()  # device 3 idles on its missing batches
    corr = rng.standard_normal((2, 785, 10)) * 0.01
    ref, _, _ = reference_local(p, x, sched, 0.3, 0.2, "batch", correction=corr)
    got = loc.local_sgd(p, x, sched, 0.3, clip=0.2, clip_mode="batch", correction=corr)
    assert rel_err(got, ref, x) < REL
    full = loc.full_batches(p, devices, 3)  # the same batch every step (gathered once)
    ref, _, _ = reference_local(p, x, full, 0.3)
    assert rel_err(loc.local_sgd(p, x, full, 0.3), ref, x) < REL


def test_private_round_noise_free_unquantized_is_the_reference_average(setup):
    p, x, sched = setup
    ref, _, _ = reference_local(p, x, sched, 0.4, 0.6)
    out = alg.private_round(p, x, sched, 0.4, clip=0.6, q_levels=None, noise_std=None,
                            rng_noise=np.random.default_rng(0), rng_quantizer=np.random.default_rng(0))
    want = ref.mean(axis=0)
    assert out.x.dtype == np.float64 and rel_err(out.x, want, x) < REL
    u_ref = (ref - x).reshape(4, -1)
    assert out.update_norm == pytest.approx(np.mean(np.linalg.norm(u_ref, axis=1)), rel=REL)
    assert out.noise_norm == 0.0


def test_private_round_noise_is_float32_normals_of_the_noise_stream(setup):
    p, x, sched = setup
    ref, _, _ = reference_local(p, x, sched, 0.4, 0.6)
    std = np.array([0.01, 0.02, 0.0, 0.03])
    out = alg.private_round(p, x, sched, 0.4, clip=0.6, q_levels=None, noise_std=std,
                            rng_noise=np.random.default_rng(7), rng_quantizer=np.random.default_rng(0))
    z = np.random.default_rng(7).standard_normal((4, 7850), dtype=np.float32).astype(np.float64)
    z *= std[:, None]
    want = x + ((ref - x).reshape(4, -1) + z).mean(axis=0).reshape(785, 10)
    assert rel_err(out.x, want, x) < REL
    assert out.noise_norm == pytest.approx(np.mean(np.linalg.norm(z, axis=1)), rel=1e-5)


def test_private_round_deterministic_and_streams_separate(setup):
    p, x, sched = setup
    kw = dict(clip=0.6, q_levels=4, noise_std=np.full(4, 0.01))

    def run(sn, sq):
        return alg.private_round(p, x, sched, 0.4, rng_noise=np.random.default_rng(sn),
                                 rng_quantizer=np.random.default_rng(sq), **kw)

    a, b = run(1, 2), run(1, 2)
    assert np.array_equal(a.x, b.x) and a.noise_norm == b.noise_norm
    assert not np.array_equal(a.x, run(1, 3).x)
    c = run(4, 2)
    assert not np.array_equal(a.x, c.x) and a.update_norm == c.update_norm


def _law_check(v, s, draws, dtype):
    """Eq. (20) on ``draws`` quantizations of the row v: levels, frequencies, mean, variance."""
    rows = np.broadcast_to(np.asarray(v, dtype=dtype), (draws, v.size))
    norms, h = qz.encode(rows, s, np.random.default_rng(11))
    norm = float(np.linalg.norm(np.asarray(v, dtype=dtype).astype(np.float64)))
    assert np.allclose(norms, norm, rtol=1e-6) and h.dtype == np.int32
    r = np.abs(v) / norm * s
    low = np.floor(r)
    p = r - low
    mag = np.abs(h)
    # only the two levels l_i and l_i + 1, with the sign of v_i (0 where v_i = 0)
    assert np.all((mag == low) | (mag == low + 1))
    assert np.all((h == 0) | (np.sign(h) == np.sign(v)))
    freq = (mag == low + 1).mean(axis=0)
    se = np.sqrt(p * (1 - p) / draws)
    assert np.all(np.abs(freq - p) <= 5 * se + 1e-4)
    q = qz.decode(norms, h, s)
    assert np.all(np.abs(q.mean(axis=0) - v) <= 5 * norm / s * se + 1e-5 * norm)
    var_closed = norm**2 / s**2 * np.sum(p * (1 - p))
    var_mc = np.mean(np.sum((q - v) ** 2, axis=1))
    assert var_mc == pytest.approx(var_closed, rel=0.04)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("s", [1, 3, 10])
def test_quantizer_law_of_eq20(dtype, s):
    rng = np.random.default_rng(s)
    v = rng.standard_normal(40) * rng.random(40) ** 2
    v[3] = 0.0
    v[7] = -abs(v[7]) - 0.5  # negative entries take the same law as positive ones
    v = v.astype(dtype).astype(np.float64)
    _law_check(v, s, 20000, dtype)


def test_quantizer_one_hot_and_zero_rows_exact():
    v = np.zeros((2, 9), dtype=np.float32)
    v[1, 4] = -3.0
    for s in (1, 7):
        out = qz.quantize(v, s, np.random.default_rng(0))
        assert np.array_equal(out, v.astype(np.float64))
        assert np.array_equal(qz.quantized_mean(v, s, np.random.default_rng(0)), v.mean(axis=0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantized_mean_is_the_mean_of_the_messages(dtype):
    v = np.random.default_rng(2).standard_normal((6, 300)).astype(dtype)
    got = qz.quantized_mean(v, 5, np.random.default_rng(3))
    norms, h = qz.encode(v, 5, np.random.default_rng(3))  # the same draws
    want = (norms.astype(np.float64)[:, None] * h / 5).mean(axis=0)
    assert np.allclose(got, want, rtol=1e-12, atol=0)
    assert np.allclose(qz.quantized_mean(v, None, np.random.default_rng(0)), v.astype(float).mean(0))


@pytest.mark.parametrize("s", [1, 4, None])
def test_run_bits_are_rounds_times_devices_times_beta(s):
    p = small_problem()
    h = alg.private_fedpaq(p, rounds=3, local_steps=2, m_per_round=2, sample_ratio=0.5,
                           epsilon=None, q_levels=s, eval_rounds=[0, 1, 3])
    beta = 32 * 7850 if s is None else 7850 * math.log(2 * s + 1) / math.log(2) + 32
    assert np.allclose(h.bits, [0, 2 * beta, 6 * beta], rtol=1e-12)
