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
from tests._dpfedpaq_problems import small_problem as _shared_problem

REL = 1e-5  # float32 data and products against a float64 reference


def small_problem(n_devices=5, per=40, mu=1e-2, seed=0):
    return _shared_problem(n_devices, per, mu, seed, test_size=0)


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


def test_private_round_noise_is_the_normals_of_the_noise_stream_in_model_order(setup):
    """The noise of device i is std_i times the stream's float64 normals in the row-major
    order of the (785, 10) model (whatever layout the round computes in), rounded to float32."""
    p, x, sched = setup
    ref, _, _ = reference_local(p, x, sched, 0.4, 0.6)
    std = np.array([0.01, 0.02, 0.0, 0.03])
    out = alg.private_round(p, x, sched, 0.4, clip=0.6, q_levels=None, noise_std=std,
                            rng_noise=np.random.default_rng(7), rng_quantizer=np.random.default_rng(0))
    z = (np.random.default_rng(7).standard_normal((4, 7850)) * std[:, None])
    z = z.astype(np.float32).astype(np.float64)
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


def test_fedpaq_round_is_unbiased_around_fedavg():
    """Deterministic local GD on every device (M = N, full batches): FedPAQ's first model over
    many seeds averages to FedAvg's (Q_s unbiased), with the spread eq. (20) predicts."""
    p = small_problem()
    kw = dict(rounds=1, local_steps=2, m_per_round=p.n_devices, batch_size=None, lr0=0.5,
              eval_rounds=[1])
    ref = alg.fedavg(p, **kw).x
    draws = np.stack([alg.fedpaq(p, q_levels=2, seed=k, **kw).x for k in range(300)])
    u = (loc.local_sgd(p, np.zeros((785, 10)), loc.full_batches(p, np.arange(p.n_devices), 2), 0.5)
         ).reshape(p.n_devices, -1)
    var = qz.exact_variance(u, 2)  # E‖Q(u_i) − u_i‖² per device
    err = draws.reshape(300, -1).mean(axis=0) - ref.ravel()
    # E‖mean of 300 draws − x_FedAvg‖² = Σ_i var_i / (N² · 300)
    expected = var.sum() / (p.n_devices**2 * 300)
    assert float(err @ err) == pytest.approx(expected, rel=0.25)
    assert not np.allclose(draws[0], ref, atol=1e-3)  # single draws are quantized

# ---------------------------------------------------------------- bad input
_P = small_problem()
_RNG = np.random.default_rng
_DEV = np.array([0, 1])
_X = np.zeros((785, 10))
_SCHED = loc.subsample_batches(_P, _DEV, 2, np.array([3, 3]), _RNG(0))


def _sched(**kw):
    return loc.Schedule(**{"rows": _SCHED.rows, "weights": _SCHED.weights, "active": _SCHED.active, **kw})


def _round(**kw):
    base = dict(clip=1.0, q_levels=2, noise_std=np.ones(2), rng_noise=_RNG(0), rng_quantizer=_RNG(0))
    x = kw.pop("x", _X)
    sched = kw.pop("schedule", _SCHED)
    lr = kw.pop("lr", 0.1)
    return alg.private_round(_P, x, sched, lr, **{**base, **kw})


BAD = {
    # local.py
    "fresh devices out of range": (lambda: loc.fresh_batches(_P, np.array([0, 5]), 2, 3, _RNG(0)), r"devices must lie in \[0, N-1\]"),
    "fresh devices not integers": (lambda: loc.fresh_batches(_P, np.array([0.5]), 2, 3, _RNG(0)), "devices must be"),
    "fresh steps 0": (lambda: loc.fresh_batches(_P, _DEV, 0, 3, _RNG(0)), r"steps \(local steps E\) must be an integer >= 1"),
    "fresh batch too large": (lambda: loc.fresh_batches(_P, _DEV, 2, 10_000, _RNG(0)), r"batch_size \(at most min n_i"),
    "fresh rng": (lambda: loc.fresh_batches(_P, _DEV, 2, 3, 0), "rng must be a numpy.random.Generator"),
    "full problem": (lambda: loc.full_batches("mnist", _DEV, 2), "problem must be a SoftmaxProblem"),
    "subsample gamma n/E < 1": (lambda: loc.subsample_batches(_P, _DEV, 20, np.array([3, 3]), _RNG(0)), r"batch_sizes \(b_i\) must lie in \[1, n_i/E"),
    "subsample b = 0": (lambda: loc.subsample_batches(_P, _DEV, 2, np.array([0, 3]), _RNG(0)), r"batch_sizes \(b_i\) must lie in \[1"),
    "subsample b shape": (lambda: loc.subsample_batches(_P, _DEV, 2, np.array([3, 3, 3]), _RNG(0)), r"batch_sizes \(b_i\) must be 2 integers"),
    "epoch subset > n_i": (lambda: loc.epoch_batches(_P, _DEV, 2, np.array([3, 999]), _RNG(0)), r"subset_sizes must lie in \[1, n_i\]"),
    "epoch epochs 0": (lambda: loc.epoch_batches(_P, _DEV, 0, np.array([3, 3]), _RNG(0)), r"epochs \(E\) must be an integer >= 1"),
    "epoch batch 0": (lambda: loc.epoch_batches(_P, _DEV, 1, np.array([3, 3]), _RNG(0), batch_size=0), "batch_size must be an integer >= 1"),
    "schedule rows shape": (lambda: _sched(rows=_SCHED.rows[0]), r"rows must be a non-empty \(S, M, B\)"),
    "schedule weights shape": (lambda: _sched(weights=_SCHED.weights[:1]), "weights must be a float array of the shape"),
    "schedule active dtype": (lambda: _sched(active=_SCHED.active.astype(int)), r"active must be a bool array of shape \(S, M\)"),
    "schedule negative weight": (lambda: _sched(weights=-_SCHED.weights), r"weights in \[0, inf\)"),
    "local lr 0": (lambda: loc.local_updates(_P, _X, _SCHED, 0.0), r"lr \(learning rate\) must be in \(0, inf\)"),
    "local clip 0": (lambda: loc.local_updates(_P, _X, _SCHED, 0.1, clip=0.0), r"clip \(C\) must be in \(0, inf\)"),
    "local clip_mode": (lambda: loc.local_sgd(_P, _X, _SCHED, 0.1, clip_mode="x"), "clip_mode must be 'sample' or 'batch'"),
    "local x shape": (lambda: loc.local_updates(_P, np.zeros((784, 10)), _SCHED, 0.1), r"x must be a real array of shape \(785, 10\)"),
    "local x nan": (lambda: loc.local_updates(_P, _X + np.nan, _SCHED, 0.1), "x must be finite"),
    "local correction shape": (lambda: loc.local_updates(_P, _X, _SCHED, 0.1, correction=np.zeros((3, 785, 10))), r"correction must be a float array of shape \(2, 785, 10\)"),
    "local rows beyond data": (lambda: loc.local_updates(_P, _X, _sched(rows=_SCHED.rows + 10_000), 0.1), r"schedule rows must lie in \[0, n-1\]"),
    "local schedule type": (lambda: loc.local_updates(_P, _X, "s", 0.1), "schedule must be a Schedule"),
    # quantizer.py
    "encode s 0": (lambda: qz.encode(np.ones(3), 0, _RNG(0)), r"s \(quantization levels\) must be an integer in \[1, 16777216\]"),
    "encode rng": (lambda: qz.encode(np.ones(3), 2, None), "rng must be a numpy.random.Generator"),
    "encode complex": (lambda: qz.encode(np.ones(3) * 1j, 2, _RNG(0)), "v must be a real array"),
    "decode negative norm": (lambda: qz.decode(-np.ones(1), np.ones((1, 2), int), 2), r"norms must be finite reals in \[0, inf\)"),
    "decode float h": (lambda: qz.decode(np.ones(1), np.ones((1, 2)), 2), r"h must be an integer array with entries in \[-s, s\]"),
    "decode h shape": (lambda: qz.decode(np.ones(2), np.ones((1, 2), int), 2), r"h must have shape \(m, d\)"),
    "quantized_mean s -1": (lambda: qz.quantized_mean(np.ones((2, 3)), -1, _RNG(0)), r"s \(quantization levels\) must be an integer in \[1, 16777216\]"),
    "quantized_mean inf": (lambda: qz.quantized_mean(np.array([[np.inf, 1.0]]), 2, _RNG(0)), "v must be finite"),
    "quantized_mean rng": (lambda: qz.quantized_mean(np.ones((2, 3)), 2, "r"), "rng must be a numpy.random.Generator"),
    "row_norms 3-d": (lambda: qz.row_norms(np.ones((2, 2, 2))), r"v must have shape \(m, d\) or \(d,\)"),
    "exact_variance s 0": (lambda: qz.exact_variance(np.ones(3), 0), r"s \(quantization levels\)"),
    "variance_bound nan": (lambda: qz.variance_bound(np.array([np.nan]), 2), "v must be finite"),
    "ceil_bits d 0": (lambda: qz.ceil_bits(0, 2), r"d \(dimension\) must be an integer >= 1"),
    "variance_parameter s 0": (lambda: qz.variance_parameter(10, 0), r"s \(quantization levels\)"),
    # noise.py
    "sensitivity mode": (lambda: nz.sensitivity("x", lr=0.1, local_steps=1, clip=1.0, batch_size=1, n_samples=1), "mode must be one of"),
    "sensitivity lr 0": (lambda: nz.sensitivity("rigorous", lr=0.0, local_steps=1, clip=1.0, batch_size=1, n_samples=1), r"lr must be in \(0, inf\)"),
    "sensitivity C 0": (lambda: nz.sensitivity("rigorous", lr=0.1, local_steps=1, clip=0.0, batch_size=1, n_samples=1), r"clip \(C\) must be in \(0, inf\)"),
    "sensitivity E 0": (lambda: nz.sensitivity("rigorous", lr=0.1, local_steps=0, clip=1.0, batch_size=1, n_samples=1), r"local_steps \(E\) must be an integer >= 1"),
    "sensitivity b 0": (lambda: nz.sensitivity("per_step", lr=0.1, local_steps=1, clip=1.0, batch_size=0, n_samples=1), "batch_size must be integers >= 1"),
    "sensitivity n 0": (lambda: nz.sensitivity("authors_code", lr=0.1, local_steps=1, clip=1.0, batch_size=1, n_samples=0), "n_samples must be integers >= 1"),
    "multipliers eps 0": (lambda: nz.noise_multipliers("paper", epsilon=0.0, delta=1e-4, gamma=0.2), r"epsilon must be in \(0, inf\)"),
    "multipliers delta 1": (lambda: nz.noise_multipliers("paper", epsilon=1.0, delta=1.0, gamma=0.2), r"delta must be in \(0, 1\)"),
    "multipliers delta 0": (lambda: nz.noise_multipliers("exact", epsilon=1.0, delta=0.0, gamma=0.2), r"delta must be in \(0, 1\)"),
    "multipliers gamma > 1": (lambda: nz.noise_multipliers("paper", epsilon=1.0, delta=1e-4, gamma=1.5), r"gamma .* must lie in \(0, 1\]"),
    "multipliers calibration": (lambda: nz.noise_multipliers("x", epsilon=1.0, delta=1e-4, gamma=0.2), "calibration must be one of"),
    "add_noise negative std": (lambda: nz.add_noise(np.zeros((2, 3)), np.array([1.0, -1.0]), _RNG(0)), r"std .* must lie in \[0, inf\)"),
    "add_noise std shape": (lambda: nz.add_noise(np.zeros((2, 3)), np.ones(3), _RNG(0)), r"std must be a scalar or have shape \(m,\)"),
    "add_noise u int": (lambda: nz.add_noise(np.zeros((2, 3), int), 1.0, _RNG(0)), r"u must be a float32 or float64 array of shape \(m, d\)"),
    "add_noise rng": (lambda: nz.add_noise(np.zeros((2, 3)), 1.0, 1), "rng must be a numpy.random.Generator"),
    # algorithms.py
    "learning_rate lr0 0": (lambda: alg.learning_rate(1, 10, lr0=0.0), r"lr0 \(initial learning rate\) must be in \(0, inf\)"),
    "learning_rate tau < 0": (lambda: alg.learning_rate(1, 10, decay_iters=-1.0), r"decay_iters .* must be in \(0, inf\)"),
    "learning_rate k < 0": (lambda: alg.learning_rate(-1, 10), r"k \(round\) must be an integer or integer array in \[0, inf\)"),
    "learning_rate E 0": (lambda: alg.learning_rate(1, 0), r"local_steps \(E\) must be an integer >= 1"),
    "batch sizes gamma n/E < 1": (lambda: alg.private_batch_sizes(np.array([40, 50]), 0.1, 10), r"sample_ratio·n_i/local_steps must be >= 1"),
    "batch sizes gamma 0": (lambda: alg.private_batch_sizes(np.array([40]), 0.0, 1), r"sample_ratio \(gamma\) must be in \(0, inf\)"),
    "batch sizes n_i 0": (lambda: alg.private_batch_sizes(np.array([0, 5]), 0.5, 1), r"sizes \(n_i\) must be .* integers >= 1"),
    "fedpaq M > N": (lambda: alg.fedpaq(_P, rounds=1, local_steps=1, m_per_round=6), r"m_per_round \(M, at most N=5\) must be an integer in \[1, 5\]"),
    "fedpaq s 0": (lambda: alg.fedpaq(_P, rounds=1, local_steps=1, m_per_round=2, q_levels=0), r"q_levels \(s\) must be an integer >= 1"),
    "fedpaq x0 shape": (lambda: alg.fedpaq(_P, rounds=1, local_steps=1, m_per_round=2, batch_size=3, x0=np.zeros(5)), r"x0 must be a finite real array of shape \(785, 10\)"),
    "fedavg q_levels": (lambda: alg.fedavg(_P, rounds=1, local_steps=1, m_per_round=2, q_levels=2), "fedavg takes no q_levels"),
    "distributed_sgd lr0": (lambda: alg.distributed_sgd(_P, rounds=1, lr0=-1.0), r"lr0 .* must be in \(0, inf\)"),
    "scaffold batch 0": (lambda: alg.scaffold(_P, rounds=1, local_steps=1, m_per_round=2, batch_size=0), r"batch_size \(at most min n_i = \d+\) must be an integer in \[1, \d+\]"),
    "scaffold E 0": (lambda: alg.scaffold(_P, rounds=1, local_steps=0, m_per_round=2), r"local_steps \(E\) must be an integer >= 1"),
    "private eps 0": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5, epsilon=0.0), r"epsilon must be in \(0, inf\)"),
    "private delta 0": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5, delta=0.0), r"delta must be in \(0, 1\)"),
    "private C < 0": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5, clip=-1.0), r"clip \(C\) must be in \(0, inf\)"),
    "private gamma n/E < 1": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=40, m_per_round=2, sample_ratio=0.5), r"sample_ratio·n_i/local_steps must be >= 1"),
    "private M > N": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=9, sample_ratio=0.5), r"m_per_round \(M, at most N=5\)"),
    "private s 0": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5, q_levels=0), r"q_levels \(s\) must be an integer >= 1"),
    "private tau 0": (lambda: alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5, decay_iters=0.0), r"decay_iters .* must be in \(0, inf\)"),
    "round x shape": (lambda: _round(x=np.zeros(7850)), r"x must be a float array of shape \(785, 10\)"),
    "round lr 0": (lambda: _round(lr=0.0), r"lr \(learning rate\) must be in \(0, inf\)"),
    "round C 0": (lambda: _round(clip=0.0), r"clip \(C\) must be in \(0, inf\)"),
    "round s 0": (lambda: _round(q_levels=0), r"s \(quantization levels\) must be an integer in \[1, 16777216\]"),
    "round std shape": (lambda: _round(noise_std=np.ones(3)), r"std must be a scalar or have shape \(m,\) = \(2,\)"),
    "round noise rng": (lambda: _round(rng_noise=3), "rng must be a numpy.random.Generator"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_names_the_parameter_and_range(case):
    fn, match = BAD[case]
    with pytest.raises(ValueError, match=match):
        fn()


def test_bad_input_cases_are_valid_with_good_values():
    """The fixtures of the bad-input table are themselves valid (so each case fails only
    because of its one bad parameter)."""
    loc.fresh_batches(_P, _DEV, 2, 3, _RNG(0))
    loc.epoch_batches(_P, _DEV, 1, np.array([3, 3]), _RNG(0))
    assert _round().x.shape == (785, 10)
    alg.private_fedpaq(_P, rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5)
    alg.scaffold(_P, rounds=1, local_steps=1, m_per_round=2, batch_size=3)
    assert alg.learning_rate(np.arange(3), 10).shape == (3,)
