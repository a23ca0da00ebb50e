"""Softmax problem and the FedPAQ family: closed forms, invariants, determinism, bad input."""

import numpy as np
import pytest

from fedrepro.dpfedpaq import algorithms as alg
from fedrepro.dpfedpaq import local as loc
from fedrepro.dpfedpaq.amplification import paper_noise_std
from fedrepro.dpfedpaq.noise import noise_multipliers, sensitivity
from fedrepro.problems.softmax import (
    SoftmaxProblem,
    gradient_constants,
    smoothness_constants,
    solve_optimum,
)
from tests._dpfedpaq_problems import small_problem


def _ref_loss(p, x):
    z = p.features.astype(float) @ x
    z -= z.max(1, keepdims=True)
    lp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return -lp[np.arange(len(p.labels)), p.labels].mean()


def test_loss_and_gradient_against_finite_differences():
    p = small_problem()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((785, 10)) * 0.05
    assert p.loss(x) == pytest.approx(_ref_loss(p, x), rel=1e-5)
    f, g = p.loss_and_gradient(x)
    assert f == pytest.approx(_ref_loss(p, x) + 0.5 * p.mu * np.sum(x * x), rel=1e-9)
    d = rng.standard_normal((785, 10))
    h = 1e-5
    fd = (p.loss_and_gradient(x + h * d)[0] - p.loss_and_gradient(x - h * d)[0]) / (2 * h)
    assert np.sum(g * d) == pytest.approx(fd, rel=1e-5)
    # device gradients weighted by n_i/n give the full gradient
    dg = p.device_gradients(x)
    w = p.sizes / p.sizes.sum()
    assert np.allclose(np.tensordot(w, dg, 1), g, atol=1e-5)


def test_per_sample_norms_equal_materialised():
    p = small_problem()
    x = np.random.default_rng(2).standard_normal((785, 10)) * 0.1
    rows = np.arange(0, 60, 3)
    full = p.per_sample_gradients(x, rows)
    brute = np.sqrt(np.einsum("mij,mij->m", full, full))
    assert np.allclose(p.per_sample_grad_norms(x, rows), brute, rtol=1e-5)
    # mean of per-sample gradients over a device + mu x = device gradient
    sl = p.device_rows(0)
    allrows = np.arange(sl.start, sl.stop)
    mean = p.per_sample_gradients(x, allrows).mean(0) + p.mu * x
    assert np.allclose(mean, p.device_gradients(x)[0], atol=1e-5)


def test_clipped_step_matches_materialised_clipping():
    p = small_problem()
    x = np.random.default_rng(3).standard_normal((785, 10)) * 0.1
    devices = np.array([1, 4])
    sched = loc.subsample_batches(p, devices, 1, np.array([5, 7]), np.random.default_rng(0))
    y = loc.local_sgd(p, x, sched, 0.5, clip=0.3)
    for m, dev in enumerate(devices):
        b = [5, 7][m]
        rows = sched.rows[0, m, :b]
        assert np.all((rows >= p.offsets[dev]) & (rows < p.offsets[dev + 1]))
        gs = p.per_sample_gradients(x, rows)
        nrm = np.sqrt(np.einsum("mij,mij->m", gs, gs))
        clipped = gs * np.minimum(1, 0.3 / nrm)[:, None, None]
        expect = x - 0.5 * (clipped.mean(0) + p.mu * x)
        assert np.allclose(y[m], expect, atol=1e-5)


def test_fedavg_one_step_full_participation_is_gradient_descent():
    p = small_problem()
    h = alg.fedavg(p, rounds=3, local_steps=1, m_per_round=p.n_devices, batch_size=None,
                   lr0=0.5, decay_iters=1e9, eval_rounds=[3])
    x = np.zeros((785, 10))
    for _ in range(3):  # GD on the equal-weight objective (1/N) Σ f_i
        x = x - 0.5 * p.device_gradients(x).mean(0)
    assert np.allclose(h.x, x, atol=1e-5)


def test_scaffold_invariant_and_gd_equivalence():
    p = small_problem()
    h = alg.scaffold(p, rounds=4, local_steps=3, m_per_round=2, batch_size=8, eval_rounds=[4])
    assert np.allclose(h.info["c"], h.info["c_devices_mean"], atol=1e-10)
    assert np.abs(h.info["c"]).max() > 0
    g = alg.scaffold(p, rounds=2, local_steps=1, m_per_round=p.n_devices, batch_size=None,
                     lr0=0.5, decay_iters=1e9, eval_rounds=[2])
    x = np.zeros((785, 10))
    for _ in range(2):
        x = x - 0.5 * p.device_gradients(x).mean(0)
    assert np.allclose(g.x, x, atol=1e-5)
    assert g.bits[-1] == 2 * 2 * p.n_devices * 32 * 7850


def test_bits_and_determinism_and_streams():
    p = small_problem()
    kw = dict(rounds=3, local_steps=2, m_per_round=3, sample_ratio=0.5, epsilon=1.0,
              sensitivity_mode="authors_code", eval_rounds=[0, 3])
    a = alg.private_fedpaq(p, seed=5, **kw)
    b = alg.private_fedpaq(p, seed=5, **kw)
    c = alg.private_fedpaq(p, seed=6, **kw)
    assert np.array_equal(a.x, b.x) and not np.array_equal(a.x, c.x)
    assert a.bits[-1] == pytest.approx(3 * 3 * (7850 * np.log2(21) + 32))
    # the noise stream is separate: changing epsilon leaves the device schedule alone,
    # and the noise-free run equals the run with epsilon -> no noise
    nn = alg.private_fedpaq(p, seed=5, **{**kw, "epsilon": None})
    assert np.all(nn.noise_norm == 0) and np.all(a.noise_norm > 0)


def test_private_noise_std_matches_calibration():
    p = small_problem(per=200)
    h = alg.private_fedpaq(p, rounds=1, local_steps=2, m_per_round=p.n_devices, sample_ratio=0.2,
                           epsilon=1.0, sensitivity_mode="rigorous", q_levels=None, eval_rounds=[1])
    b = np.floor(0.2 * p.sizes / 2).astype(int)
    gam = 2 * b / p.sizes
    expected = np.mean([paper_noise_std(1.0, 1e-4, 2 * 0.1 * 2 * 1.0, g) for g in gam])
    assert h.info["noise_std_round0"] == pytest.approx(expected, rel=1e-12)
    # empirical noise norm ≈ σ sqrt(d) (d = 7850)
    assert h.noise_norm[0] == pytest.approx(expected * np.sqrt(7850), rel=0.03)


def test_sensitivity_formulas():
    kw = dict(lr=0.1, local_steps=10, clip=1.0, batch_size=np.array([12]), n_samples=np.array([600]))
    assert sensitivity("rigorous", **kw)[0] == pytest.approx(2.0)
    assert sensitivity("theory", **kw)[0] == pytest.approx(4.0)
    assert sensitivity("per_step", **kw)[0] == pytest.approx(2 * 0.1 / 12)
    assert sensitivity("authors_code", **kw)[0] == pytest.approx(1 / 600)
    m = noise_multipliers("unamplified", epsilon=0.5, delta=1e-4, gamma=[0.2])
    assert m[0] == pytest.approx(np.sqrt(2 * np.log(1.25e4)) / 0.5)


def test_subsample_batches_are_disjoint_and_epoch_schedule():
    p = small_problem()
    devs = np.array([0, 2, 5])
    s = loc.subsample_batches(p, devs, 4, np.array([3, 5, 2]), np.random.default_rng(0))
    for m, b in enumerate([3, 5, 2]):
        used = s.rows[:, m, :b].ravel()
        assert len(np.unique(used)) == 4 * b
        assert np.all(s.weights[:, m, b:] == 0)
    e = loc.epoch_batches(p, devs, 2, np.array([30, 12, 25]), np.random.default_rng(0), batch_size=10)
    assert e.steps == 2 * 3
    assert e.active[:, 1].tolist() == [True, True, False, True, True, False]
    for m, size in enumerate([30, 12, 25]):  # every epoch visits the subset exactly once
        ep0 = e.rows[:3, m][e.weights[:3, m] > 0]
        ep1 = e.rows[3:, m][e.weights[3:, m] > 0]
        assert len(ep0) == size and len(np.unique(ep0)) == size
        assert set(ep0.tolist()) == set(ep1.tolist())
    assert np.allclose(e.weights.sum(-1)[e.active], 1.0)


def test_optimum_and_constants():
    p = small_problem(n_devices=3, mu=1.0)
    x, info = solve_optimum(p, gtol=1e-6)
    assert info["converged"]
    # optimality: the gradient at x* vanishes (independent float64 finite check)
    assert np.linalg.norm(p.loss_and_gradient(x)[1]) <= 1e-6
    sc = smoothness_constants(p)
    # λ_max of an average of Gram matrices <= the largest one's <= max ‖ã‖²
    assert sc["L_sample"] >= sc["L_max"] >= sc["L_global"] - 1e-9
    assert sc["kappa"] == pytest.approx(sc["L_max"] / 1.0)
    a = p.features[p.device_rows(0)].astype(float)
    assert sc["L_devices"][0] == pytest.approx(0.5 * np.linalg.eigvalsh(a.T @ a / len(a))[-1] + 1.0,
                                               rel=1e-9)
    gc = gradient_constants(p, [np.zeros((785, 10)), x], batch_size=4)
    assert gc["lambda2"] > 0 and gc["sigma2"] > 0 and gc["G2"] >= gc["sigma2"] / 4


@pytest.mark.parametrize("kwargs, match", [
    (dict(m_per_round=99), "m_per_round"),
    (dict(sample_ratio=0.01), "sample_ratio·n_i/local_steps"),
    (dict(sample_ratio=1.5), "sample_ratio"),
    (dict(q_levels=0), "q_levels"),
    (dict(clip=0.0), "clip"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(delta=1.0), "delta"),
    (dict(lr0=0.0), "lr0"),
    (dict(rounds=0), "rounds"),
    (dict(sensitivity_mode="valid"), "sensitivity_mode"),
    (dict(calibration="x"), "calibration"),
    (dict(profile="x"), "profile"),
    (dict(profile="authors_code"), "sensitivity_mode='authors_code'"),
])
def test_private_bad_inputs(kwargs, match):
    p = small_problem()
    base = dict(rounds=1, local_steps=2, m_per_round=2, sample_ratio=0.5)
    with pytest.raises(ValueError, match=match):
        alg.private_fedpaq(p, **{**base, **kwargs})


def test_fedpaq_bad_inputs():
    p = small_problem()
    with pytest.raises(ValueError, match="batch_size"):
        alg.fedpaq(p, rounds=1, local_steps=1, m_per_round=1, batch_size=1000)
    with pytest.raises(ValueError, match="eval_rounds"):
        alg.fedpaq(p, rounds=2, local_steps=1, m_per_round=1, batch_size=4, eval_rounds=[3])
    with pytest.raises(ValueError, match="problem"):
        alg.fedpaq("mnist", rounds=2, local_steps=1, m_per_round=1)
    with pytest.raises(ValueError, match="features"):
        SoftmaxProblem(np.ones((3, 4), np.float32), np.zeros(3, int), np.array([0, 3]), 0.1)


def _mnist_or_skip():
    from fedrepro.data import MissingDataError
    from fedrepro.dpfedpaq.mnist import het_mnist_problem
    try:
        return het_mnist_problem(2, with_test=False)
    except MissingDataError as err:  # no mirror and no download here
        pytest.skip(f"MNIST unavailable: {err}")


def test_het_mnist_problem_shape_and_initial_loss():
    p = _mnist_or_skip()
    assert p.features.shape == (60000, 785) and p.features.dtype == np.float32
    assert p.features.flags.c_contiguous and np.all(p.features[:, -1] == 1)
    assert p.features.max() <= 1 and p.features.min() >= 0
    assert (p.sizes.min(), p.sizes.max()) == (563, 636)  # spec §6.1, HET(2)
    assert p.loss(np.zeros((785, 10))) == pytest.approx(np.log(10), rel=1e-6)  # uniform p
    # every device holds exactly 2 digits
    digits = [len(np.unique(p.labels[p.device_rows(i)])) for i in range(p.n_devices)]
    assert set(digits) == {2}
