"""Contract of :mod:`fedrepro.dpfedpaq.algorithms` pinned from outside the module.

* the learning-rate schedule against its closed form η_k = η₀/(1 + kE/τ) (Sec. IV);
* whole error messages (a ValueError naming the parameter and its range);
* each algorithm against a reference loop written here from the documented recipe: one
  ``SeedSequence`` spawning five PCG64 streams in the order scheduling, batches, subsampling,
  quantizer, noise; S_k = sorted M-of-N draw without replacement; the mini-batch schedules,
  local steps and the quantizer of the (separately tested) modules ``local`` and
  ``quantizer``; the server average; float32 Gaussian noise drawn in row-major order with
  the std of eq. (16) computed here in closed form. Same draws, so the comparison is exact up
  to float64 round-off of the server sums (tolerance 1e-12 relative);
* SCAFFOLD's control variates against the paper's update (eqs. 7–9, option II) written in
  float64 on a deterministic full-batch case (tolerance 1e-5: float32 local models);
* the recorded metrics (loss at the requested rounds, accuracy, cumulative bits β(s)·M per
  round, mean update norms) and the ``info`` dictionaries.
"""

import math
import re

import numpy as np
import pytest

from fedrepro.dpfedpaq import algorithms as alg
from fedrepro.dpfedpaq import local as loc
from fedrepro.dpfedpaq import quantizer as qz
from tests._dpfedpaq_problems import problem_of_sizes, small_problem

D = 7850
STREAM_ORDER = ("scheduling", "batches", "subsampling", "quantizer", "noise")


def make_problem(sizes, *, seed=0, mu=1e-2, test=True):
    """Devices with the given sizes n_i (sparse random images plus a bias column, random labels)."""
    return problem_of_sizes(sizes, np.random.default_rng(seed), mu=mu, test_size=30 if test else 0)


def streams(seed):
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return {name: np.random.Generator(np.random.PCG64(child))
            for name, child in zip(STREAM_ORDER, ss.spawn(5), strict=True)}


def lr_at(k, E, lr0, tau):
    return lr0 / (1.0 + k * E / tau)


def beta(s):
    return 32.0 * D if s is None else D * math.log2(2 * s + 1) + 32


def norms64(u):
    return np.linalg.norm(np.asarray(u, dtype=np.float64).reshape(u.shape[0], -1), axis=1)


def ref_fedpaq(p, *, rounds, E, M, batch, s, lr0=0.1, tau=100.0, seed=0, x0=None):
    """Alg. 1 with Δx_i = Q_s(y_E − x_k); returns the iterates x_0..x_K and the mean ‖u_i‖."""
    r = streams(seed)
    x = np.zeros((785, 10)) if x0 is None else np.array(x0, dtype=float).reshape(785, 10)
    xs, un = [x], []
    for k in range(rounds):
        lr = lr_at(k, E, lr0, tau)
        dev = np.sort(r["scheduling"].choice(p.n_devices, M, replace=False))
        sched = (loc.full_batches(p, dev, E) if batch is None
                 else loc.fresh_batches(p, dev, E, batch, r["batches"]))
        u = loc.local_updates(p, x, sched, lr).reshape(M, -1)
        un.append(norms64(u).mean())
        dx = u.astype(np.float64).mean(0) if s is None else qz.quantized_mean(u, s, r["quantizer"])
        x = x + dx.reshape(785, 10)
        xs.append(x)
    return xs, np.array(un)


def ref_scaffold(p, *, rounds, E, M, batch, s, lr0=0.1, tau=100.0, seed=0):
    """SCAFFOLD option II: direction g_i − c_i + c; c_i⁺ − c_i = −c − Δx_i/(Eη); both uploads
    quantized by Q_s; x += mean Δx_i, c += (1/N) Σ Δc_i."""
    r = streams(seed)
    N = p.n_devices
    x, c = np.zeros((785, 10)), np.zeros((785, 10))
    cdev = np.zeros((N, 785, 10))
    xs, un = [x], []
    for k in range(rounds):
        lr = lr_at(k, E, lr0, tau)
        dev = np.sort(r["scheduling"].choice(N, M, replace=False))
        sched = (loc.full_batches(p, dev, E) if batch is None
                 else loc.fresh_batches(p, dev, E, batch, r["batches"]))
        u = loc.local_updates(p, x, sched, lr, correction=c[None] - cdev[dev]).astype(np.float64)
        un.append(norms64(u).mean())
        dc = -c[None] - u / (E * lr)
        msgs = np.concatenate([u, dc]).reshape(2 * M, -1)
        if s is not None:
            msgs = qz.quantize(msgs, s, r["quantizer"])
        msgs = msgs.reshape(2 * M, 785, 10)
        x = x + msgs[:M].mean(0)
        cdev[dev] += msgs[M:]
        c = c + msgs[M:].sum(0) / N
        xs.append(x)
    return xs, np.array(un), c, cdev


def paper_multiplier(eps, delta, gamma):
    """σ/Δ of eq. (16): sqrt(8γ² ln(1.25γ/δ))/ε."""
    return math.sqrt(8 * gamma**2 * math.log(1.25 * gamma / delta)) / eps


def ref_private(p, *, rounds, E, M, ratio, C, eps, delta, s, lr0=0.1, tau=100.0, seed=0,
                profile="paper"):
    """Alg. 2 (``profile="paper"``: b_i = ⌊γn_i/E⌋, E disjoint batches of a subsample,
    per-sample clipping, Δ = 2ηEC, σ of eq. (16) at γ_i = Eb_i/n_i) or the authors' code
    (``"authors_code"``: E epochs of batches of 64 over ⌊γn_i⌋ records, batch clipping,
    Δ = C/n_i, nominal γ). Returns iterates, mean ‖u_i‖, mean ‖z_i‖, round-0 mean std."""
    r = streams(seed)
    n = p.sizes
    if profile == "paper":
        b = np.array([int(ratio * ni) // E for ni in n])  # sizes chosen so γn_i is an integer
        gam = E * b / n
    else:
        subset = np.array([int(math.floor(ratio * ni)) for ni in n])
        gam = np.full(n.shape, ratio)
    mult = np.array([paper_multiplier(eps, delta, g) for g in gam]) if eps is not None else None
    x = np.zeros((785, 10))
    xs, un, zn, std0 = [x], [], [], None
    for k in range(rounds):
        lr = lr_at(k, E, lr0, tau)
        dev = np.sort(r["scheduling"].choice(p.n_devices, M, replace=False))
        if profile == "paper":
            sched = loc.subsample_batches(p, dev, E, b[dev], r["subsampling"])
            u = loc.local_updates(p, x, sched, lr, clip=C, clip_mode="sample")
            sens = np.full(M, 2 * lr * E * C)
        else:
            sched = loc.epoch_batches(p, dev, E, subset[dev], r["subsampling"])
            u = loc.local_updates(p, x, sched, lr, clip=C, clip_mode="batch")
            sens = C / n[dev]
        u = u.reshape(M, -1)
        un.append(norms64(u).mean())
        if eps is not None:
            std = mult[dev] * sens
            if std0 is None:
                std0 = float(std.mean())
            # float64 normals in the model's index order, scaled, rounded once to float32
            z = (std[:, None] * r["noise"].standard_normal(u.shape)).astype(np.float32)
            u += z
            zn.append(norms64(z).mean())
        else:
            zn.append(0.0)
        dx = u.astype(np.float64).mean(0) if s is None else qz.quantized_mean(u, s, r["quantizer"])
        x = x + dx.reshape(785, 10)
        xs.append(x)
    return xs, np.array(un), np.array(zn), std0


def close(a, b, rel=1e-12):
    return np.allclose(a, b, rtol=rel, atol=rel * max(1.0, float(np.max(np.abs(b)))))


def message(fn, *args, **kwargs):
    with pytest.raises(ValueError) as err:
        fn(*args, **kwargs)
    return str(err.value)


# ---------------------------------------------------------------- learning rate


def test_learning_rate_closed_form_and_defaults():
    # η₀ = 0.1, τ = 100 by default (Sec. IV)
    assert alg.learning_rate(5, 2) == pytest.approx(0.1 / 1.1, rel=1e-15)
    assert alg.learning_rate(0, 7) == pytest.approx(0.1, rel=1e-15)
    k = np.array([0, 1, 3, 10])
    got = alg.learning_rate(k, 3, lr0=0.5, decay_iters=20.0)
    assert np.allclose(got, 0.5 / (1 + k * 3 / 20.0), rtol=1e-15)
    assert alg.learning_rate(np.uint8(4), 5, 0.2, 10.0) == pytest.approx(0.2 / 3, rel=1e-15)


def test_learning_rate_messages():
    assert message(alg.learning_rate, 0, 1, decay_iters=0) == (
        "decay_iters (learning-rate decay scale tau) must be in (0, inf), got 0")
    assert message(alg.learning_rate, 0, 0) == "local_steps (E) must be an integer >= 1, got 0"
    assert message(alg.learning_rate, -1, 1) == (
        "k (round) must be an integer or integer array in [0, inf), got -1")
    assert message(alg.learning_rate, 1.0, 1).startswith("k (round) must be an integer")


# ---------------------------------------------------------------- argument checks


def test_common_argument_messages():
    p = small_problem(n_devices=3)
    base = dict(rounds=1, local_steps=1, m_per_round=1, batch_size=4)
    assert message(alg.fedpaq, "mnist", **base) == "problem must be a SoftmaxProblem, got str"
    assert message(alg.fedpaq, p, **{**base, "rounds": 0}) == "rounds (K) must be an integer >= 1, got 0"
    assert message(alg.fedpaq, p, **{**base, "local_steps": 0}) == (
        "local_steps (E) must be an integer >= 1, got 0")
    assert message(alg.fedpaq, p, **{**base, "m_per_round": 4}) == (
        "m_per_round (M, at most N=3) must be an integer in [1, 3], got 4")
    assert message(alg.fedpaq, p, **{**base, "lr0": 0}) == "lr0 (initial learning rate) must be in (0, inf), got 0"
    assert message(alg.fedpaq, p, **{**base, "decay_iters": 0}) == (
        "decay_iters (learning-rate decay scale) must be in (0, inf), got 0")
    assert message(alg.fedpaq, p, **{**base, "q_levels": 0}) == "q_levels (s) must be an integer >= 1, got 0"
    assert message(alg.scaffold, p, **{**base, "q_levels": 0}) == "q_levels (s) must be an integer >= 1, got 0"
    assert message(alg.fedpaq, p, **{**base, "seed": -1}) == "seed must be an integer >= 0, got -1"
    assert message(alg.fedavg, p, q_levels=3, **base) == "fedavg takes no q_levels (no quantization); use fedpaq"


@pytest.mark.parametrize("ev", [[-1, 1], [0.5], [], [0, 2]])
def test_eval_rounds_outside_range_raise(ev):
    p = small_problem(n_devices=3)
    assert message(alg.fedpaq, p, rounds=1, local_steps=1, m_per_round=1, batch_size=4,
                   eval_rounds=ev) == "eval_rounds must be integers in [0, rounds=1]"


def test_x0_checks():
    p = small_problem(n_devices=3)
    base = dict(rounds=1, local_steps=1, m_per_round=1, batch_size=4)
    assert message(alg.fedpaq, p, x0=np.zeros(3), **base) == (
        "x0 must be a finite real array of shape (785, 10) or (7850,), got shape (3,)")
    bad = np.zeros((785, 10))
    bad[3, 4] = np.nan
    assert message(alg.fedpaq, p, x0=bad, **base) == (
        "x0 must be a finite real array of shape (785, 10) or (7850,), got shape (785, 10)")
    assert message(alg.fedpaq, p, x0=np.full((785, 10), "a"), **base).startswith("x0 must be a finite real")



@pytest.mark.parametrize("shape", [(10, 785), (1, 7850), (785, 10, 1), (7850, 1)])
def test_x0_of_another_shape_with_7850_entries_is_rejected(shape):
    # a start of another shape with the same number of entries used to be reshaped silently
    p = small_problem(n_devices=3)
    with pytest.raises(ValueError, match=re.escape(f"got shape {shape}")):
        alg.fedpaq(p, rounds=1, local_steps=1, m_per_round=1, batch_size=4, x0=np.zeros(shape))


def test_private_batch_sizes_formula_and_edges():
    # b_i = ⌊γ n_i / E⌋
    got = alg.private_batch_sizes(np.array([600, 599, 100]), 0.2, 10)
    assert got.tolist() == [12, 11, 2] and got.dtype == np.int64
    assert alg.private_batch_sizes(np.array([10, 20]), 1.0, 2).tolist() == [5, 10]  # γ = 1 allowed
    assert alg.private_batch_sizes(np.array([7]), 0.5, 3).tolist() == [1]  # one device, b = 1
    assert alg.private_batch_sizes(np.array([1, 10]), 1.0, 1).tolist() == [1, 10]  # n_i = 1 allowed
    assert alg.private_batch_sizes(np.array([5], dtype=np.uint16), 0.2, 1).tolist() == [1]


@pytest.mark.parametrize("sizes", [np.array([10.0, 20.0]), np.array([[10, 20]]), np.array([], dtype=int),
                                   np.array([0, 10])])
def test_private_batch_sizes_rejects_bad_sizes(sizes):
    assert message(alg.private_batch_sizes, sizes, 0.5, 1).startswith(
        "sizes (n_i) must be a non-empty 1-d array of integers >= 1, got ")


def test_private_batch_sizes_messages():
    assert message(alg.private_batch_sizes, np.array([10]), 0.5, 0) == (
        "local_steps (E) must be an integer >= 1, got 0")
    assert message(alg.private_batch_sizes, np.array([10]), 1.5, 1) == (
        "sample_ratio (gamma) must lie in (0, 1], got 1.5")
    assert message(alg.private_batch_sizes, np.array([10]), 0.0, 1) == (
        "sample_ratio (gamma) must be in (0, inf), got 0.0")
    assert message(alg.private_batch_sizes, np.array([30, 9]), 0.5, 5) == (
        "sample_ratio·n_i/local_steps must be >= 1 for every device (gamma=0.5, E=5, min n_i=9)")


def test_check_privacy_args():
    out = alg.check_privacy_args("rigorous", "paper", 1, 2, 1e-3)
    assert out == (1.0, 2.0, 1e-3) and all(type(v) is float for v in out)
    assert alg.check_privacy_args("theory", "exact", None, None, 0.5) == (None, None, 0.5)
    assert alg.check_privacy_args("per_step", "unamplified", 0.5, None, 0.5) == (0.5, None, 0.5)
    assert message(alg.check_privacy_args, "rigorous", "paper", 0.0, None, 1e-3) == (
        "clip (C) must be in (0, inf), got 0.0")
    assert message(alg.check_privacy_args, "rigorous", "paper", None, 1.0, 1e-3) == (
        "clip (C) must be given when noise is added (epsilon not None)")
    assert message(alg.check_privacy_args, "valid", "paper", 1.0, 1.0, 1e-3) == (
        "sensitivity_mode must be one of ('rigorous', 'theory', 'per_step', 'authors_code'), got 'valid'")
    assert message(alg.check_privacy_args, "rigorous", "x", 1.0, 1.0, 1e-3) == (
        "calibration must be one of ('paper', 'exact', 'unamplified'), got 'x'")
    assert message(alg.check_privacy_args, "rigorous", "paper", 1.0, 0.0, 1e-3) == (
        "epsilon must be in (0, inf), got 0.0")
    assert message(alg.check_privacy_args, "rigorous", "paper", 1.0, 1.0, 1.0) == (
        "delta must be in (0, 1), got 1.0")


def test_private_fedpaq_messages():
    p = make_problem([40, 40, 44])
    base = dict(rounds=1, local_steps=2, m_per_round=2)
    assert message(alg.private_fedpaq, p, profile="authors_code", **base) == (
        "profile='authors_code' needs sensitivity_mode='authors_code'")
    ac = dict(base, profile="authors_code", sensitivity_mode="authors_code")
    assert message(alg.private_fedpaq, p, sample_ratio=0, **ac) == "sample_ratio (gamma) must be in (0, inf), got 0"
    assert message(alg.private_fedpaq, p, sample_ratio=1.5, **ac) == (
        "sample_ratio (gamma) must lie in (0, 1], got 1.5")
    assert message(alg.private_fedpaq, p, sample_ratio=0.02, **ac) == (
        "sample_ratio·n_i must be >= 1 for every device")
    # γ_i = E·b_i/n_i = 2·10/40 = 0.5 for the first two devices: δ = 0.5 is not smaller
    assert message(alg.private_fedpaq, p, sample_ratio=0.5, delta=0.5, **base) == (
        "delta must be smaller than every gamma_i (min 0.5)")
    assert message(alg.private_fedpaq, p, sample_ratio=0.5, delta=0.6, **base) == (
        "delta must be smaller than every gamma_i (min 0.5)")
    # without noise δ is not compared with γ: the run goes through
    h = alg.private_fedpaq(p, sample_ratio=0.5, delta=0.6, epsilon=None, eval_rounds=[1], **base)
    assert np.all(np.isfinite(h.x)) and h.noise_norm[0] == 0


# ---------------------------------------------------------------- FedPAQ, FedAvg, distributed SGD


def test_fedpaq_defaults_against_reference():
    # n_i >= 65 so that the default batch size 64 is a proper subset draw
    p = make_problem([70, 66, 75, 68])
    h = alg.fedpaq(p, rounds=2, local_steps=2, m_per_round=3)
    xs, un = ref_fedpaq(p, rounds=2, E=2, M=3, batch=64, s=10)
    assert close(h.x, xs[-1])
    assert np.array_equal(h.rounds, [0, 1, 2]) and np.array_equal(h.iterations, [0, 2, 4])
    assert h.local_steps == 2
    assert np.allclose(h.loss, [p.loss(x) for x in xs], rtol=1e-12)
    assert h.loss[0] == pytest.approx(math.log(10), rel=1e-6)  # x_0 = 0: uniform softmax
    assert np.all(np.isnan(h.accuracy))  # accuracy=False by default although a test set exists
    assert np.allclose(h.bits, [0, 3 * beta(10), 6 * beta(10)], rtol=1e-15)
    assert h.info == {"bits_per_message": pytest.approx(beta(10), rel=1e-15)}
    assert np.allclose(h.update_norm, un, rtol=1e-6)
    assert h.loss.dtype == np.float64 and h.update_norm.dtype == np.float64
    assert np.array_equal(h.noise_norm, [0.0, 0.0])


def test_fedpaq_eval_rounds_accuracy_x0_and_seed_sequence():
    p = make_problem([40, 44, 41], seed=1)
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal(D) * 0.05  # flat (7850,) start
    kw = dict(rounds=3, local_steps=2, m_per_round=2, batch_size=5, q_levels=4, lr0=0.3, decay_iters=7.0)
    h = alg.fedpaq(p, seed=np.random.SeedSequence(11), eval_rounds=[3, 1], accuracy=True, x0=x0, **kw)
    xs, un = ref_fedpaq(p, rounds=3, E=2, M=2, batch=5, s=4, lr0=0.3, tau=7.0, seed=11, x0=x0)
    assert close(h.x, xs[-1])
    assert np.array_equal(h.rounds, [1, 3])
    assert np.allclose(h.loss, [p.loss(xs[1]), p.loss(xs[3])], rtol=1e-12)
    assert h.accuracy.tolist() == [p.accuracy(xs[1]), p.accuracy(xs[3])]
    assert np.allclose(h.bits, [2 * beta(4), 6 * beta(4)], rtol=1e-15)
    assert np.allclose(h.update_norm, un, rtol=1e-6)
    # an integer seed is the same as its SeedSequence; a (785, 10) float32 start the same as flat
    g = alg.fedpaq(p, seed=11, eval_rounds=[3], x0=x0.reshape(785, 10).astype(np.float32), **kw)
    xs32, _ = ref_fedpaq(p, rounds=3, E=2, M=2, batch=5, s=4, lr0=0.3, tau=7.0, seed=11,
                         x0=x0.astype(np.float32))
    assert close(g.x, xs32[-1])
    # integer x0
    xi = alg.fedpaq(p, seed=2, eval_rounds=[0], x0=np.ones(D, dtype=np.int64), **kw)
    assert xi.loss[0] == pytest.approx(p.loss(np.ones((785, 10))), rel=1e-12)
    # without a test set accuracy stays nan even when asked
    q = make_problem([40, 44, 41], seed=1, test=False)
    assert np.all(np.isnan(alg.fedpaq(q, accuracy=True, eval_rounds=[0, 3], **kw).accuracy))


def test_fedpaq_full_batch_and_fedavg():
    p = make_problem([30, 33, 31, 35], seed=2)
    h = alg.fedpaq(p, rounds=2, local_steps=3, m_per_round=2, batch_size=None, q_levels=None, seed=4)
    xs, un = ref_fedpaq(p, rounds=2, E=3, M=2, batch=None, s=None, seed=4)
    assert close(h.x, xs[-1]) and np.allclose(h.update_norm, un, rtol=1e-6)
    a = alg.fedavg(p, rounds=2, local_steps=3, m_per_round=2, batch_size=6, seed=4)
    xs, _ = ref_fedpaq(p, rounds=2, E=3, M=2, batch=6, s=None, seed=4)
    assert close(a.x, xs[-1])
    assert a.bits[-1] == 2 * 2 * 32 * D and a.info["bits_per_message"] == 32 * D


def test_distributed_sgd_defaults_and_arguments():
    p = make_problem([70, 66, 75], seed=3)
    h = alg.distributed_sgd(p, rounds=3)
    xs, un = ref_fedpaq(p, rounds=3, E=1, M=3, batch=64, s=None)
    assert close(h.x, xs[-1])
    assert h.local_steps == 1 and np.array_equal(h.rounds, [0, 1, 2, 3])
    assert np.all(np.isnan(h.accuracy)) and h.bits[-1] == 3 * 3 * 32 * D
    g = alg.distributed_sgd(p, rounds=3, batch_size=7, lr0=0.4, decay_iters=2.0, seed=9,
                            eval_rounds=[2, 3], accuracy=True)
    xs, un = ref_fedpaq(p, rounds=3, E=1, M=3, batch=7, s=None, lr0=0.4, tau=2.0, seed=9)
    assert close(g.x, xs[-1]) and np.allclose(g.update_norm, un, rtol=1e-6)
    assert np.array_equal(g.rounds, [2, 3])
    assert g.accuracy.tolist() == [p.accuracy(xs[2]), p.accuracy(xs[3])]


def test_history_to_dict():
    p = make_problem([40, 44, 41], seed=1)
    h = alg.fedpaq(p, rounds=2, local_steps=3, m_per_round=2, batch_size=5, eval_rounds=[0, 2])
    d = h.to_dict()
    assert set(d) == {"rounds", "iterations", "loss", "accuracy", "bits", "update_norm", "noise_norm",
                      "bits_per_message"}
    assert np.array_equal(d["rounds"], [0, 2]) and np.array_equal(d["iterations"], [0, 6])
    for key in ("loss", "accuracy", "bits", "update_norm", "noise_norm"):
        assert d[key] is getattr(h, key)
    assert d["bits_per_message"] == h.info["bits_per_message"]
    m = h.to_dict(with_model=True)
    assert set(m) == set(d) | {"x"} and m["x"] is h.x


# ---------------------------------------------------------------- SCAFFOLD


def test_scaffold_control_variates_against_paper_update():
    """Full batches, M = N: y ← y − η(∇f_i(y) − c_i + c) (∇f_i with its μy), E steps;
    c_i⁺ = c_i − c + (x − y_E)/(Eη); x ← mean y_E; c ← mean c_i⁺. Float64, written here."""
    p = make_problem([20, 24, 22], seed=4, test=False)
    E, lr0, tau, K = 2, 0.5, 3.0, 3
    h = alg.scaffold(p, rounds=K, local_steps=E, m_per_round=3, batch_size=None, lr0=lr0,
                     decay_iters=tau, eval_rounds=[K])
    x = np.zeros((785, 10))
    c = np.zeros_like(x)
    ci = np.zeros((3, 785, 10))
    for k in range(K):
        lr = lr0 / (1 + k * E / tau)
        ys = []
        for i in range(3):
            y = x.copy()
            for _ in range(E):
                y = y - lr * (p.device_gradients(y)[i] - ci[i] + c)
            ys.append(y)
        ys = np.array(ys)
        ci = ci - c[None] + (x[None] - ys) / (E * lr)
        x = ys.mean(0)
        c = ci.mean(0)
    scale = float(np.abs(c).max())
    assert scale > 1e-3
    assert np.allclose(h.info["c"], c, atol=1e-5 * scale)
    assert np.allclose(h.info["c_devices_mean"], c, atol=1e-5 * scale)
    assert np.allclose(h.x, x, atol=1e-5 * float(np.abs(x).max()))


def test_scaffold_defaults_against_reference():
    p = make_problem([70, 66, 75, 68], seed=5)
    h = alg.scaffold(p, rounds=3, local_steps=2, m_per_round=2)
    xs, un, c, cdev = ref_scaffold(p, rounds=3, E=2, M=2, batch=64, s=None)
    assert close(h.x, xs[-1]) and close(h.info["c"], c) and close(h.info["c_devices_mean"], cdev.mean(0))
    assert np.array_equal(h.rounds, [0, 1, 2, 3]) and np.array_equal(h.iterations, [0, 2, 4, 6])
    assert np.allclose(h.loss, [p.loss(x) for x in xs], rtol=1e-12)
    assert np.all(np.isnan(h.accuracy))
    assert np.allclose(h.update_norm, un, rtol=1e-6)
    assert np.allclose(h.bits, [0, 4, 8, 12] * np.array(32.0 * D), rtol=1e-15)
    assert h.info["bits_per_message"] == 32 * D


def test_scaffold_quantized_against_reference():
    p = make_problem([40, 44, 41, 43], seed=6)
    h = alg.scaffold(p, rounds=3, local_steps=2, m_per_round=2, batch_size=6, q_levels=3, lr0=0.3,
                     decay_iters=5.0, seed=8, eval_rounds=[1, 3], accuracy=True)
    xs, un, c, cdev = ref_scaffold(p, rounds=3, E=2, M=2, batch=6, s=3, lr0=0.3, tau=5.0, seed=8)
    assert close(h.x, xs[-1]) and close(h.info["c"], c) and close(h.info["c_devices_mean"], cdev.mean(0))
    assert np.array_equal(h.rounds, [1, 3])
    assert h.accuracy.tolist() == [p.accuracy(xs[1]), p.accuracy(xs[3])]
    assert np.allclose(h.bits, [4 * beta(3), 12 * beta(3)], rtol=1e-15)
    assert h.info["bits_per_message"] == pytest.approx(beta(3), rel=1e-15)
    assert np.allclose(h.update_norm, un, rtol=1e-6)


# ---------------------------------------------------------------- private FedPAQ (Alg. 2)


def test_private_fedpaq_defaults_against_reference():
    # γ = 0.2, E = 2: b_i = ⌊0.2·n_i/2⌋ with 0.2·n_i an integer (n_i multiples of 5)
    p = make_problem([60, 70, 65, 80], seed=7)
    h = alg.private_fedpaq(p, rounds=3, local_steps=2, m_per_round=3)
    xs, un, zn, std0 = ref_private(p, rounds=3, E=2, M=3, ratio=0.2, C=1.0, eps=1.0, delta=1e-4, s=10)
    assert close(h.x, xs[-1])
    assert np.array_equal(h.rounds, [0, 1, 2, 3]) and np.array_equal(h.iterations, [0, 2, 4, 6])
    assert np.allclose(h.loss, [p.loss(x) for x in xs], rtol=1e-12)
    assert np.all(np.isnan(h.accuracy))
    assert np.allclose(h.update_norm, un, rtol=1e-6) and np.allclose(h.noise_norm, zn, rtol=1e-6)
    assert np.allclose(h.bits, np.arange(4) * 3 * beta(10), rtol=1e-15)
    b = np.array([6, 7, 6, 8])
    gam = 2 * b / p.sizes
    mult = [paper_multiplier(1.0, 1e-4, g) for g in gam]
    assert h.info == {
        "bits_per_message": pytest.approx(beta(10), rel=1e-15),
        "gamma_mean": pytest.approx(float(np.mean(gam)), rel=1e-15),
        "batch_size_min": 6, "batch_size_max": 8,
        "noise_std_round0": pytest.approx(std0, rel=1e-12),
        "noise_multiplier_mean": pytest.approx(float(np.mean(mult)), rel=1e-12),
    }


def test_private_fedpaq_clipping_matters_and_options():
    # a small clip so that per-sample clipping is active; no quantizer; other calibration inputs
    p = make_problem([40, 50, 45], seed=8)
    kw = dict(rounds=2, local_steps=2, m_per_round=2, sample_ratio=0.4, clip=0.05, epsilon=3.0,
              delta=1e-3, q_levels=None, lr0=0.2, decay_iters=4.0, seed=3)
    h = alg.private_fedpaq(p, eval_rounds=[2], accuracy=True, **kw)
    xs, un, zn, std0 = ref_private(p, rounds=2, E=2, M=2, ratio=0.4, C=0.05, eps=3.0, delta=1e-3,
                                   s=None, lr0=0.2, tau=4.0, seed=3)
    assert close(h.x, xs[-1])
    assert h.accuracy.tolist() == [p.accuracy(xs[2])]
    assert np.allclose(h.update_norm, un, rtol=1e-6) and np.allclose(h.noise_norm, zn, rtol=1e-6)
    assert h.info["noise_std_round0"] == pytest.approx(std0, rel=1e-12)
    # clipping at C bounds round 0 (from x = 0): ‖u_i‖ ≤ Σ_t η(C + μ‖y_t‖) ≤ 2·0.2·(0.05 + 0.01·0.02)
    assert h.update_norm[0] <= 2 * 0.2 * (0.05 + 0.01 * 0.02)
    # no noise: noise norms 0, the round-0 std is nan, the multiplier mean 0
    nn = alg.private_fedpaq(p, **{**kw, "epsilon": None})
    xs, un, zn, _ = ref_private(p, rounds=2, E=2, M=2, ratio=0.4, C=0.05, eps=None, delta=1e-3,
                                s=None, lr0=0.2, tau=4.0, seed=3)
    assert close(nn.x, xs[-1]) and np.array_equal(nn.noise_norm, [0.0, 0.0])
    assert math.isnan(nn.info["noise_std_round0"]) and nn.info["noise_multiplier_mean"] == 0.0
    # no clipping either: equals FedAvg on the Alg. 2 subsample schedule
    nc = alg.private_fedpaq(p, **{**kw, "epsilon": None, "clip": None})
    assert not np.allclose(nc.x, nn.x)


def test_private_fedpaq_unamplified_noise_std_closed_form():
    p = make_problem([40, 50, 45], seed=9)
    h = alg.private_fedpaq(p, rounds=1, local_steps=2, m_per_round=3, sample_ratio=0.4, clip=0.5,
                           epsilon=2.0, delta=1e-3, calibration="unamplified", sensitivity_mode="theory",
                           q_levels=None, lr0=0.3, eval_rounds=[1])
    mult = math.sqrt(2 * math.log(1.25 / 1e-3)) / 2.0  # eq. (13)
    assert h.info["noise_multiplier_mean"] == pytest.approx(mult, rel=1e-12)
    assert h.info["noise_std_round0"] == pytest.approx(mult * 4 * 0.3 * 2 * 0.5, rel=1e-12)  # Δ = 4ηEC
    # ‖z_i‖ ≈ σ√d: mean of 3 chi norms, relative sd ≈ 1/sqrt(2·d·3) ≈ 0.0046; 6 sd ≈ 0.03
    assert h.noise_norm[0] == pytest.approx(mult * 4 * 0.3 * 2 * 0.5 * math.sqrt(D), rel=0.03)


def test_private_fedpaq_authors_code_profile_against_reference():
    # n_i ≥ 65 and γ = 1: subsets above 64 records, so batches of 64 plus a partial one
    p = make_problem([70, 66, 80], seed=10)
    kw = dict(rounds=2, local_steps=2, m_per_round=2, sample_ratio=1.0, clip=0.02, epsilon=2.0,
              delta=1e-3, sensitivity_mode="authors_code", profile="authors_code", q_levels=5,
              lr0=0.2, decay_iters=3.0, seed=6)
    h = alg.private_fedpaq(p, **kw)
    xs, un, zn, std0 = ref_private(p, rounds=2, E=2, M=2, ratio=1.0, C=0.02, eps=2.0, delta=1e-3, s=5,
                                   lr0=0.2, tau=3.0, seed=6, profile="authors_code")
    assert close(h.x, xs[-1])
    assert np.allclose(h.update_norm, un, rtol=1e-6) and np.allclose(h.noise_norm, zn, rtol=1e-6)
    assert h.info["noise_std_round0"] == pytest.approx(std0, rel=1e-12)
    assert h.info["gamma_mean"] == 1.0
    assert h.info["batch_size_min"] == 64 and h.info["batch_size_max"] == 64
    assert h.info["noise_multiplier_mean"] == pytest.approx(paper_multiplier(2.0, 1e-3, 1.0), rel=1e-12)
    # γ·n_i = 1 for the smallest device is allowed; b_i = min(⌊γn_i⌋, 64)
    q = make_problem([10, 30, 20], seed=11)
    s = alg.private_fedpaq(q, **{**kw, "sample_ratio": 0.1, "epsilon": None})
    assert s.info["batch_size_min"] == 1 and s.info["batch_size_max"] == 3
    assert s.info["gamma_mean"] == pytest.approx(0.1, rel=1e-15)
    xs, *_ = ref_private(q, rounds=2, E=2, M=2, ratio=0.1, C=0.02, eps=None, delta=1e-3, s=5,
                         lr0=0.2, tau=3.0, seed=6, profile="authors_code")
    assert close(s.x, xs[-1])
