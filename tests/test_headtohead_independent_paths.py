"""Two client computations of the head-to-head task T1 against plain loops written from the
equations (:mod:`tests.independent.h2h_t1_reference`), on the same random draws:

* non-private FedAvg's local steps (``clip=None``, no noise: the ceiling of the T1 tables);
* quantized private FedPAQ's message (``levels`` set: the quantizer Q_s of DP-FedPAQ eq. (20)
  on the noisy clipped local update; the ``fedpaq-q`` rows of the T1 tables).

Both are compared message by message and over whole rounds (through the algorithms'
interface and through :func:`fedrepro.headtohead.algorithms.run`, which pins the run's seeding:
``SeedSequence(seed).spawn(2)`` gives the public schedule and the one generator that every
client of every round draws from, in schedule order). The round semantics are pinned too: a
client's message leaves the global model untouched, and the aggregate does not depend on the
order of the clients.

The library evaluates the logits in float32 (the model is cast to float32 against the float32
design matrix), the references in float64: the local updates agree to about 1e-7 relative
(measured: at most 1e-7 absolute on updates of size up to 1), whence the tolerances below. For a
quantized message the norm is sent as a float32 in both, so where both toss the same coins the
messages agree to a float32 rounding of the norm; a coin is only decided differently when its
uniform lies closer to the rounding threshold than the float32 noise of s·v_j/‖v‖ (measured:
at most 3e-9·s without noise, 1e-10 with it), which the comparison allows for and bounds.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fedrepro.headtohead import algorithms as alg
from fedrepro.headtohead import softmax as eng
from fedrepro.problems.softmax import softmax_problem
from tests.independent import h2h_t1_reference as ref

#: Local updates: float32 logits in the library against float64 here (unit roundoff 6e-8 on
#: updates of order 0.1–1 over at most 5 steps; measured differences <= 1e-7). Tight enough to
#: see the regulariser (η·μ·max|x| >= 4e-5 per step on these models) or a clipped record.
UPDATE_RTOL, UPDATE_ATOL = 1e-5, 1e-6
#: Quantized messages where the coins agree: the float32 norm may differ by one float32 ulp
#: between the float64 norms of the two updates (2^-23 relative, twice for safety).
NORM_RTOL = 2 * 2.0**-23
#: A coin is "undecidable" when its uniform is within COIN_MARGIN·s of its threshold: 30 times
#: the largest float32 discrepancy of s·v_j/‖v‖ measured (5e-8 at s = 16 without noise).
COIN_MARGIN = 1e-7


@pytest.fixture(scope="module")
def problem():
    """Three clients with 9, 14 and 17 records of sparse synthetic 28×28 images (about 20%
    of the pixels lit, as on MNIST), so that per-record gradients have norms of 5–10."""
    rng = np.random.default_rng(20)
    lit = rng.random((40, 28, 28)) < 0.2
    images = (rng.integers(0, 256, size=(40, 28, 28)) * lit).astype(np.uint8)
    labels = rng.integers(0, 10, size=40)
    return softmax_problem(images, labels, [np.arange(0, 9), np.arange(9, 23), np.arange(23, 40)], mu=1e-3,
                           test_images=images[:20], test_labels=labels[:20])


def _data(problem, client):
    rows = problem.device_rows(client)
    return problem.features[rows], problem.labels[rows]


def _x0(scale=0.1, seed=1):
    return np.random.default_rng(seed).normal(scale=scale, size=(785, 10))


def _reference_message(problem, algorithm, x, client, sigma, rng, trace):
    A, y = _data(problem, client)
    if isinstance(algorithm, alg.FedAvg):
        return ref.fedavg_message(A, y, x, steps=algorithm.local_steps, rate=algorithm.rate, lr=algorithm.lr,
                                  mu=problem.mu, rng=rng, trace=trace)
    return ref.private_fedpaq_message(A, y, x, steps=algorithm.local_steps, rate=algorithm.rate, lr=algorithm.lr,
                                      clip=algorithm.clip, mu=problem.mu, noise_multiplier=sigma,
                                      levels=algorithm.levels, rng=rng, trace=trace)


def _reference_rounds(problem, algorithm, schedule, sigma, rng, trace, x=None):
    """The rounds of ``schedule`` from ``x`` (0 by default): every client of a round starts
    from the same global model and draws from ``rng`` in schedule order; then the
    n_i-weighted average."""
    x = np.zeros((785, 10)) if x is None else x
    for clients in schedule:
        msgs = [_reference_message(problem, algorithm, x, int(c), sigma, rng, trace) for c in clients]
        x = ref.weighted_round(x, [int(problem.sizes[c]) for c in clients], msgs)
    return x


def _assert_same_quantized(got, want, trace, s):
    """``got`` (library) equals ``want`` (reference, whose coins are in ``trace``'s last
    entry): on the grid ‖v‖·h/s with integer |h| ≤ s, the same h wherever the coin was
    decidable (a one-level difference allowed only for coins within COIN_MARGIN·s of their
    threshold), and the same value to NORM_RTOL where the h agree."""
    margin = COIN_MARGIN * s
    norm, h_ref, margins = trace.sent_norms[-1], trace.levels[-1], trace.margins[-1]
    scaled = got.ravel() * s / norm
    h_got = np.round(scaled)
    # on the grid of eq. (20): an integer up to the float32 rounding of the norm (s·NORM_RTOL)
    np.testing.assert_allclose(scaled, h_got, rtol=0, atol=s * NORM_RTOL)
    assert np.abs(h_got).max() <= s
    differ = h_got != h_ref
    assert np.all(np.abs(h_got - h_ref)[differ] == 1), "a level differs by more than one step"
    assert np.all(margins[differ] <= margin), (
        f"{int(differ.sum())} coins decided differently although decidable (margins {margins[differ]})")
    assert differ.sum() <= 2  # expected undecidable coins per message: 7850·2·margin <= 0.4 (s <= 256)
    np.testing.assert_allclose(got.ravel()[~differ], want.ravel()[~differ], rtol=NORM_RTOL, atol=0)


# ------------------------------------------------------------------ FedAvg, clip=None
@pytest.mark.parametrize("lr, local_steps, rate", [(0.3, 1, 0.2), (0.3, 5, 0.2), (0.1, 5, 0.05), (1.0, 5, 0.05)])
def test_fedavg_local_steps_without_clipping_agree_with_a_plain_loop(problem, lr, local_steps, rate):
    """Points of T1's FedAvg grid (lr, local steps, rate), every client, from a nonzero x."""
    algorithm = alg.FedAvg(lr=lr, local_steps=local_steps, rate=rate)
    x0 = _x0()
    traces = []
    for client in range(problem.n_devices):
        state = {"x": x0.copy()}
        got, sampled = algorithm.client_message(problem, state, client, 0.0, np.random.default_rng(50 + client))
        trace = ref.Trace()
        want = ref.fedavg_message(*_data(problem, client), x0, steps=local_steps, rate=rate, lr=lr, mu=problem.mu,
                                  rng=np.random.default_rng(50 + client), trace=trace)
        np.testing.assert_allclose(got, want, rtol=UPDATE_RTOL, atol=UPDATE_ATOL)
        assert sampled == sum(trace.batch_sizes)  # the per-record gradients it reports computing
        traces.append(trace)
    # the draws exercise what the path must get right: records whose gradient a clip at T1's
    # C <= 1 would shrink (so a clipped "non-private" path would fail), and, at rate 0.05, an
    # empty batch (the mean is then 0 and only the regulariser moves the model)
    assert max(t.max_grad_norm for t in traces) > 3.0
    if rate == 0.05:
        assert any(0 in t.batch_sizes for t in traces)


def test_fedavg_rounds_agree_with_a_plain_loop(problem):
    """Four rounds through the interface (one generator, clients in order) against the
    reference's rounds on the same generator."""
    algorithm = alg.FedAvg(lr=0.3, local_steps=5, rate=0.2)
    schedule = [[0, 1], [1, 2], [0, 2], [0, 1, 2]]
    rng = np.random.default_rng(9)
    state = algorithm.start(problem)
    for clients in schedule:
        msgs = [algorithm.client_message(problem, state, c, 0.0, rng)[0] for c in clients]
        algorithm.aggregate(problem, state, np.array(clients), np.stack(msgs))
    want = _reference_rounds(problem, algorithm, schedule, 0.0, np.random.default_rng(9), ref.Trace())
    assert np.abs(want).max() > 0.1  # the model has moved well beyond the tolerance
    np.testing.assert_allclose(algorithm.model(state), want, rtol=UPDATE_RTOL, atol=UPDATE_ATOL)


def test_fedavg_run_agrees_with_a_plain_loop(problem):
    """``run`` (non-private: ε = None) on 5 rounds of 2 of the 3 clients: the schedule from the
    first spawned seed, the clients' draws from one generator on the second."""
    algorithm = alg.FedAvg(lr=0.3, local_steps=5, rate=0.2)
    rounds = 5
    budget = (rounds + 0.5) * 2 * algorithm.message_bits(problem.dim)
    r = alg.run(problem, algorithm, epsilon=None, delta=1e-5, uplink_budget_bits=budget, clients_per_round=2,
                seed=3, eval_rounds=rounds)
    schedule_ss, run_ss = np.random.SeedSequence(3).spawn(2)
    schedule = eng.participation_schedule(problem.n_devices, 2, rounds, np.random.default_rng(schedule_ss))
    assert r["rounds"] == rounds and list(r["eval_rounds"]) == list(range(1, rounds + 1))
    rng = np.random.default_rng(run_ss)
    trace = ref.Trace()
    x = np.zeros((785, 10))
    for k in range(rounds):  # the model after every round, evaluated as the run evaluates it
        x = _reference_rounds(problem, algorithm, schedule[k:k + 1], 0.0, rng, trace, x)
        # the loss is a smooth function of the model: the update tolerance carries over (1e-5 relative)
        assert r["train_loss"][k] == pytest.approx(problem.loss(x), rel=1e-5)
        assert r["test_accuracy"][k] == problem.accuracy(x)
    assert r["sampled_records"] == sum(trace.batch_sizes)


# ------------------------------------------------------------------ private FedPAQ, levels set
@pytest.mark.parametrize("levels", [2, 16, 256])
@pytest.mark.parametrize("local_steps, sigma", [(1, 0.8), (5, 0.8), (5, 0.0), (3, 0.05)])
def test_quantized_private_fedpaq_message_agrees_with_a_plain_loop(problem, levels, local_steps, sigma):
    """Every client's message, from a nonzero x. With noise on, the quantizer mostly sees the
    noise; the noiseless and small-noise cases make the local steps visible through Q_s. T1's
    grid has s in {2, 16}: at d = 7850 nearly every |v_j|/‖v‖ is below 1/s there, so ξ_j is 0
    or 1/s; s = 256 also exercises the levels l_j >= 1 of eq. (20)."""
    algorithm = alg.PrivateFedPAQ(lr=0.3, local_steps=local_steps, rate=0.3, clip=1.0, levels=levels)
    x0 = _x0()
    for client in range(problem.n_devices):
        state = {"x": x0.copy()}
        got, sampled = algorithm.client_message(problem, state, client, sigma, np.random.default_rng(70 + client))
        trace = ref.Trace()
        want = ref.private_fedpaq_message(*_data(problem, client), x0, steps=local_steps, rate=0.3, lr=0.3,
                                          clip=1.0, mu=problem.mu, noise_multiplier=sigma, levels=levels,
                                          rng=np.random.default_rng(70 + client), trace=trace)
        _assert_same_quantized(got, want, trace, levels)
        assert sampled == sum(trace.batch_sizes)
        assert trace.max_grad_norm > 1.0  # clipping at C = 1 is active on these records
        # the message is quantized: at most 2s + 1 distinct values, far fewer than coordinates
        assert np.unique(got).size <= 2 * levels + 1
        if levels == 256:
            assert np.abs(trace.levels[-1]).max() >= 3


def test_quantized_private_fedpaq_rounds_agree_with_a_plain_loop(problem):
    """Four rounds through the interface (one generator, clients in order), levels 16."""
    algorithm = alg.PrivateFedPAQ(lr=0.3, local_steps=3, rate=0.3, clip=1.0, levels=16)
    schedule = [[0, 1], [1, 2], [0, 2], [0, 1, 2]]
    rng = np.random.default_rng(11)
    state = algorithm.start(problem)
    for clients in schedule:
        msgs = [algorithm.client_message(problem, state, c, 0.8, rng)[0] for c in clients]
        algorithm.aggregate(problem, state, np.array(clients), np.stack(msgs))
    trace = ref.Trace()
    want = _reference_rounds(problem, algorithm, schedule, 0.8, np.random.default_rng(11), trace)
    # a round feeds the next: no coin of any message may be undecidable (with noise the
    # float32 discrepancy of s·v_j/‖v‖ is ~1e-10; this guard is 100 times that)
    assert min(m.min() for m in trace.margins) > 1e-8, "a coin too close to call: choose another seed"
    # each round sums messages equal to NORM_RTOL; the sum of a few terms keeps that relative
    # accuracy up to cancellation, hence the absolute floor at NORM_RTOL times the model's scale
    np.testing.assert_allclose(algorithm.model(state), want, rtol=4 * NORM_RTOL,
                               atol=4 * NORM_RTOL * np.abs(want).max())


@pytest.mark.parametrize("levels", [2, 16])
def test_quantized_private_fedpaq_run_agrees_with_a_plain_loop(problem, levels):
    """``run`` at ε = 2 (the calibrated σ read from the run) on 4 rounds of 2 of the 3 clients."""
    algorithm = alg.PrivateFedPAQ(lr=0.3, local_steps=3, rate=0.3, clip=1.0, levels=levels)
    rounds = 4
    budget = (rounds + 0.5) * 2 * algorithm.message_bits(problem.dim)
    r = alg.run(problem, algorithm, epsilon=2.0, delta=1e-5, uplink_budget_bits=budget, clients_per_round=2,
                seed=5, eval_rounds=rounds)
    schedule_ss, run_ss = np.random.SeedSequence(5).spawn(2)
    schedule = eng.participation_schedule(problem.n_devices, 2, rounds, np.random.default_rng(schedule_ss))
    assert r["rounds"] == rounds and r["noise_multiplier"] > 0
    rng = np.random.default_rng(run_ss)
    trace = ref.Trace()
    x = np.zeros((785, 10))
    for k in range(rounds):
        x = _reference_rounds(problem, algorithm, schedule[k:k + 1], r["noise_multiplier"], rng, trace, x)
        # messages agree to a float32 rounding of their norm (see the module docstring)
        assert r["train_loss"][k] == pytest.approx(problem.loss(x), rel=1e-6)
        assert r["test_accuracy"][k] == problem.accuracy(x)
    assert min(m.min() for m in trace.margins) > 1e-8, "a coin too close to call: choose another seed"
    assert r["sampled_records"] == sum(trace.batch_sizes)


# ------------------------------------------------------------------ round semantics
@pytest.mark.parametrize("algorithm", [alg.FedAvg(lr=0.3, local_steps=5, rate=0.2),
                                       alg.PrivateFedPAQ(lr=0.3, local_steps=3, rate=0.3, levels=2),
                                       alg.PrivateFedPAQ(lr=1.0, local_steps=5, rate=0.3, levels=16)],
                         ids=["fedavg", "fedpaq-q2", "fedpaq-q16"])
def test_messages_leave_the_global_model_alone_and_the_aggregate_ignores_client_order(problem, algorithm):
    sigma = 0.0 if isinstance(algorithm, alg.FedAvg) else 0.8
    x0 = _x0()
    state = algorithm.start(problem)
    state["x"] = x0.copy()
    held = state["x"]
    msgs = []
    for client in range(problem.n_devices):
        m, _ = algorithm.client_message(problem, state, client, sigma, np.random.default_rng(30 + client))
        assert state["x"] is held and np.array_equal(state["x"], x0)  # not rebound, not written into
        msgs.append(m)
    # a client's message does not depend on which clients trained before it in the round
    alone, _ = algorithm.client_message(problem, {"x": x0.copy()}, 2, sigma, np.random.default_rng(32))
    np.testing.assert_array_equal(alone, msgs[2])
    sizes = [int(n) for n in problem.sizes]
    want = ref.weighted_round(x0, sizes, msgs)
    for order in itertools.permutations(range(problem.n_devices)):
        s = {"x": x0.copy()}
        algorithm.aggregate(problem, s, np.array(order), np.stack([msgs[i] for i in order]))
        # a reordered float sum of three terms: equal to a few ulps of the model's scale
        np.testing.assert_allclose(s["x"], want, rtol=1e-12, atol=1e-15)
