"""The local SGD of DP-FedPAQ (``fedrepro.dpfedpaq.local``): the batch schedules against the
draws they document (written out here with the same generator), the local steps against the
float64 loop of ``test_dpfedpaq_round.reference_local`` in the regimes the vectorised code
treats specially (large logits, weight decay close to 1/lr, control variates, idle devices,
batch clipping that does not bind), and every validation message in full."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.dpfedpaq import local as loc
from fedrepro.problems.softmax import SoftmaxProblem
from tests._dpfedpaq_problems import small_problem as _shared_problem
from tests.test_dpfedpaq_round import REL, reference_local, rel_err

RNG = np.random.default_rng


@pytest.fixture(scope="module")
def problem():
    # 5 devices of 46, 45, 44, 42, 42 records (offsets 0, 46, 91, 135, 177, 219)
    p = _shared_problem(5, 40, 1e-2, 0, test_size=0)
    assert list(p.sizes) == [46, 45, 44, 42, 42]
    return p


def _positions(problem, devices, rows):
    """Local record positions of schedule rows (S, M, B), checking they stay in each device."""
    local = rows - problem.offsets[devices][None, :, None]
    assert np.all(local >= 0) and np.all(local < problem.sizes[devices][None, :, None])
    return local


# ---- batch schedules against the documented draws --------------------------------------


def test_fresh_batches_are_the_b_smallest_keys_of_each_step(problem):
    # Documented draw: each step and device, one uniform key per record (padding beyond n_i
    # never chosen); the batch is the b records with the smallest keys.
    devices = np.array([0, 3, 4])
    sched = loc.fresh_batches(problem, devices, 4, 7, RNG(11))
    keys = RNG(11).random((4, 3, 46))
    local = _positions(problem, devices, sched.rows)
    for t in range(4):
        for i, d in enumerate(devices):
            n = problem.sizes[d]
            want = set(np.argsort(keys[t, i, :n])[:7].tolist())
            assert set(local[t, i].tolist()) == want
    assert sched.weights.dtype == np.float32 and np.all(sched.weights == np.float32(1 / 7))
    assert sched.active.all()


def test_fresh_batches_of_a_whole_device_and_of_one_record(problem):
    # b = min n_i: the smallest device (42 records) uses every record each step, never a padding slot
    devices = np.array([0, 4])
    sched = loc.fresh_batches(problem, devices, 3, 42, RNG(2))
    local = _positions(problem, devices, sched.rows)
    assert all(sorted(local[t, 1].tolist()) == list(range(42)) for t in range(3))
    one = loc.fresh_batches(problem, devices, 2, 1, RNG(2))  # b = 1 is allowed
    assert one.rows.shape == (2, 2, 1) and np.all(one.weights == 1.0)
    single = loc.fresh_batches(problem, np.array([2]), 1, 3, RNG(0))  # one device is allowed
    assert single.rows.shape == (1, 1, 3)


def test_subsample_batches_split_one_permutation(problem):
    # Alg. 2: one uniform key per record; the records in key order, cut into E batches of b_i.
    devices = np.array([1, 2, 4])
    b = np.array([4, 3, 5])
    sched = loc.subsample_batches(problem, devices, 6, b, RNG(7))
    keys = RNG(7).random((1, 3, 45))  # padded to the largest device (45 records)
    local = _positions(problem, devices, sched.rows)
    for i, d in enumerate(devices):
        order = np.argsort(keys[0, i, :problem.sizes[d]])
        for t in range(6):
            assert local[t, i, :b[i]].tolist() == order[t * b[i]:(t + 1) * b[i]].tolist()
            assert np.all(sched.weights[t, i, :b[i]] == np.float32(1 / b[i]))
            assert np.all(sched.weights[t, i, b[i]:] == 0)
    assert sched.weights.dtype == np.float32 and sched.active.all()


def test_subsample_batch_sizes_scalar_and_boundaries(problem):
    devices = np.array([0, 3])
    as_int = loc.subsample_batches(problem, devices, 3, 4, RNG(5))
    as_np = loc.subsample_batches(problem, devices, 3, np.int64(4), RNG(5))
    as_array = loc.subsample_batches(problem, devices, 3, np.array([4, 4]), RNG(5))
    for s in (as_int, as_np):
        assert np.array_equal(s.rows, as_array.rows) and np.array_equal(s.weights, as_array.weights)
    # b_i = 1, and E·b_i = n_i exactly (every record used once), are both allowed
    assert loc.subsample_batches(problem, devices, 3, 1, RNG(5)).rows.shape == (3, 2, 1)
    whole = loc.subsample_batches(problem, devices, 1, problem.sizes[devices], RNG(5))
    local = _positions(problem, devices, whole.rows)
    assert sorted(local[0, 1, :42].tolist()) == list(range(42))


def test_epoch_batches_are_epochs_over_one_subset(problem):
    # The authors' code: a subset of m_i records (uniform keys), then each epoch a fresh
    # uniform order of the subset, cut into batches of 64 (last one partial).
    devices = np.array([0, 2])
    m = np.array([40, 9])
    sched = loc.epoch_batches(problem, devices, 3, m, RNG(4), batch_size=16)
    gen = RNG(4)
    subset_keys = gen.random((1, 2, 46))
    perm_keys = gen.random((3, 2, 40))
    local = _positions(problem, devices, sched.rows)
    nb = 3  # ceil(40 / 16) batches per epoch for device 0, 1 for device 2
    assert sched.rows.shape == (3 * nb, 2, 16)
    for i, d in enumerate(devices):
        subset = np.argsort(subset_keys[0, i, :problem.sizes[d]])[:m[i]]
        for e in range(3):
            order = subset[np.argsort(perm_keys[e, i, :m[i]])]
            for t in range(nb):
                chunk = order[t * 16:(t + 1) * 16]
                step = e * nb + t
                k = chunk.size
                assert sched.active[step, i] == (k > 0)
                assert local[step, i, :k].tolist() == chunk.tolist()
                if k:
                    assert np.all(sched.weights[step, i, :k] == np.float32(1 / k))
                assert np.all(sched.weights[step, i, k:] == 0)
    assert sched.weights.dtype == np.float32


def test_epoch_batches_last_batch_of_one_record_and_default_size(problem):
    # 65 records in batches of 64: the second batch holds one record, with weight 1, and the
    # device is active; a device with 64 records idles on that step.
    p = _shared_problem(3, 70, 1e-2, 1, test_size=0)
    devices = np.array([0, 1])
    sched = loc.epoch_batches(p, devices, 2, np.array([65, 64]), RNG(3))
    assert sched.rows.shape == (4, 2, 64)
    assert sched.active[:, 0].all() and sched.active[:, 1].tolist() == [True, False, True, False]
    assert np.count_nonzero(sched.weights[1, 0]) == 1 and sched.weights[1, 0].max() == 1.0
    explicit = loc.epoch_batches(p, devices, 2, np.array([65, 64]), RNG(3), batch_size=64)
    assert np.array_equal(sched.rows, explicit.rows) and np.array_equal(sched.weights, explicit.weights)


def test_full_batches_weights(problem):
    devices = np.array([0, 4])
    sched = loc.full_batches(problem, devices, 2)
    assert sched.weights.dtype == np.float32
    assert np.all(sched.weights[:, 0, :] == np.float32(1 / 46))
    assert np.all(sched.weights[:, 1, :42] == np.float32(1 / 42)) and np.all(sched.weights[:, 1, 42:] == 0)
    assert loc.full_batches(problem, devices, 1).rows.shape == (1, 2, 46)


# ---- local steps against the float64 loop -----------------------------------------------


def _subsample(problem, seed=3):
    return loc.subsample_batches(problem, np.array([0, 2, 4]), 4, np.array([5, 3, 4]), RNG(seed))


def test_local_updates_with_large_logits(problem):
    # logits of several hundred: the softmax must be shifted by each sample's own maximum
    x = RNG(1).standard_normal((785, 10)) * 30
    sched = _subsample(problem)
    ref, _, _ = reference_local(problem, x, sched, 0.05, 2.0, "sample")
    got = loc.local_sgd(problem, x, sched, 0.05, clip=2.0)
    # float32 iterates: each entry is exact to about 6e-8·|x| (documented), here 2e-6 against
    # model changes of about 0.02, so the bound is per entry (a few float32 roundings per step
    # over 4 steps) rather than relative to the change
    assert np.all(np.isfinite(got))
    assert np.max(np.abs(got - ref)) <= 16 * 2.0**-24 * np.max(np.abs(x)) + REL * np.max(np.abs(ref - x))


def test_local_updates_with_weight_decay_close_to_one_over_lr():
    # lr·mu = 0.999: (1 − lr·mu)^E is 1e-60 after E = 20 steps, far outside float32 if the
    # iterate were rescaled by it; the result must still be the loop's.
    p = _shared_problem(3, 40, 1.0, 2, test_size=0)
    sched = loc.subsample_batches(p, np.array([0, 1]), 20, 2, RNG(6))
    x = RNG(8).standard_normal((785, 10)) * 0.1
    ref, _, _ = reference_local(p, x, sched, 0.999, 1.0, "sample")
    got = loc.local_sgd(p, x, sched, 0.999, clip=1.0)
    assert np.all(np.isfinite(got)) and rel_err(got, ref, x) < REL


def test_local_updates_with_correction_and_per_sample_clipping(problem):
    # SCAFFOLD's correction on a schedule where every device is active
    sched = _subsample(problem)
    x = RNG(2).standard_normal((785, 10)) * 0.1
    corr = RNG(9).standard_normal((3, 785, 10)) * 0.01
    ref, _, _ = reference_local(problem, x, sched, 0.3, 0.5, "sample", correction=corr)
    got = loc.local_sgd(problem, x, sched, 0.3, clip=0.5, correction=corr)
    assert rel_err(got, ref, x) < REL


def test_local_updates_with_idle_devices_and_no_correction(problem):
    devices = np.array([1, 3])
    sched = loc.epoch_batches(problem, devices, 2, np.array([25, 9]), RNG(5), batch_size=10)
    assert not sched.active.all()
    x = RNG(4).standard_normal((785, 10)) * 0.1
    for clip, mode in ((None, "sample"), (0.5, "sample"), (0.2, "batch")):
        ref, _, _ = reference_local(problem, x, sched, 0.3, clip, mode)
        assert rel_err(loc.local_sgd(problem, x, sched, 0.3, clip=clip, clip_mode=mode), ref, x) < REL


def test_batch_clipping_that_does_not_bind_and_batch_mode_without_clip(problem):
    sched = _subsample(problem)
    x = RNG(3).standard_normal((785, 10)) * 0.1
    ref, clipped, _ = reference_local(problem, x, sched, 0.3, 1e3, "batch")
    assert clipped == 0  # C = 1000 never binds: the factor must be exactly 1
    assert rel_err(loc.local_sgd(problem, x, sched, 0.3, clip=1e3, clip_mode="batch"), ref, x) < REL
    plain = loc.local_updates(problem, x, sched, 0.3)
    assert np.array_equal(loc.local_updates(problem, x, sched, 0.3, clip_mode="batch"), plain)


def test_flat_and_integer_models(problem):
    sched = _subsample(problem)
    x = RNG(5).standard_normal((785, 10))
    base = loc.local_updates(problem, x, sched, 0.2, clip=1.0)
    assert np.array_equal(loc.local_updates(problem, x.reshape(-1), sched, 0.2, clip=1.0), base)
    xi = RNG(5).integers(-2, 3, (785, 10))
    assert np.array_equal(loc.local_updates(problem, xi, sched, 0.2), loc.local_updates(problem, xi.astype(float), sched, 0.2))
    assert loc.local_sgd(problem, x, sched, 0.2).dtype == np.float64


# ---- messages in full -------------------------------------------------------------------


def _bad_cases(p):
    dev = np.array([0, 1])
    sched = loc.subsample_batches(p, dev, 2, 3, RNG(0))
    x = np.zeros((785, 10))
    rows, w, act = sched.rows, sched.weights, sched.active
    return {
        "devices 2-d": (lambda: loc.fresh_batches(p, np.array([[0, 1]]), 2, 3, RNG(0)),
                        r"^devices must be a non-empty 1-d integer array of device indices in \[0, N-1\] = \[0, 4\], "
                        r"got shape \(1, 2\) dtype int64$"),
        "devices empty": (lambda: loc.full_batches(p, np.array([], dtype=int), 2),
                          r"^devices must be a non-empty 1-d integer array of device indices in \[0, N-1\] = \[0, 4\], "
                          r"got shape \(0,\) dtype int64$"),
        "devices out of range": (lambda: loc.full_batches(p, np.array([0, 5]), 2),
                                 r"^devices must lie in \[0, N-1\] = \[0, 4\], got 0\.\.5$"),
        "problem": (lambda: loc.full_batches("mnist", dev, 2), r"^problem must be a SoftmaxProblem, got str$"),
        "rng": (lambda: loc.subsample_batches(p, dev, 2, 3, 0), r"^rng must be a numpy\.random\.Generator, got int$"),
        "schedule": (lambda: loc.local_updates(p, x, "s", 0.1), r"^schedule must be a Schedule, got str$"),
        "full steps 0": (lambda: loc.full_batches(p, dev, 0), r"^steps \(local steps E\) must be an integer >= 1, got 0$"),
        "subsample steps 0": (lambda: loc.subsample_batches(p, dev, 0, 3, RNG(0)),
                              r"^steps \(local steps E\) must be an integer >= 1, got 0$"),
        "subsample b float": (lambda: loc.subsample_batches(p, dev, 2, 3.0, RNG(0)),
                              r"^batch_sizes \(b_i\) must be 2 integers \(one per scheduled device\), got shape \(\) dtype float64$"),
        "subsample b too large": (lambda: loc.subsample_batches(p, dev, 2, 23, RNG(0)),
                                  r"^batch_sizes \(b_i\) must lie in \[1, n_i/E \(gamma\*n_i/E >= 1\)\] for every device$"),
        "fresh b 0": (lambda: loc.fresh_batches(p, dev, 2, 0, RNG(0)),
                      r"^batch_size \(at most min n_i = 45\) must be an integer in \[1, 45\], got 0$"),
        "x shape": (lambda: loc.local_updates(p, np.zeros((784, 10)), sched, 0.1),
                    r"^x must be a real array of shape \(785, 10\) or \(7850,\), got \(784, 10\)$"),
        "x complex": (lambda: loc.local_updates(p, x + 0j, sched, 0.1),
                      r"^x must be a real array of shape \(785, 10\) or \(7850,\), got \(785, 10\)$"),
        "x inf": (lambda: loc.local_updates(p, x + np.inf, sched, 0.1), r"^x must be finite \(no nan or inf entries\)$"),
        "rows one past the data": (lambda: loc.local_updates(p, x, loc.Schedule(np.full_like(rows, 219), w, act), 0.1),
                                   r"^schedule rows must lie in \[0, n-1\] = \[0, 218\]$"),
        "schedule empty": (lambda: loc.Schedule(rows[:0], w[:0], act[:0]),
                           r"^rows must be a non-empty \(S, M, B\) integer array, got shape \(0, 2, 3\) dtype int64$"),
        "schedule active shape": (lambda: loc.Schedule(rows, w, act[:, :1]),
                                  r"^active must be a bool array of shape \(S, M\) = \(2, 2\), got \(2, 1\) bool$"),
        "schedule negative row": (lambda: loc.Schedule(rows - 100, w, act), r"^rows must be >= 0 and weights in \[0, inf\)$"),
    }


@pytest.mark.parametrize("case", sorted(_bad_cases(_shared_problem(5, 40, 1e-2, 0, test_size=0))))
def test_messages_in_full(problem, case):
    fn, match = _bad_cases(problem)[case]
    with pytest.raises(ValueError, match=match):
        fn()


def test_padding_rows_stay_in_their_device():
    # The last device holds one record: padding slots (weight 0) must still name a record of
    # the device, or the schedule would point past the data (local_updates rejects that).
    gen = RNG(0)
    feats = np.ones((6, 785), dtype=np.float32)
    feats[:, :-1] = gen.random((6, 784))
    p = SoftmaxProblem(feats, gen.integers(0, 10, 6), np.array([0, 5, 6]), 1e-2)
    devices = np.array([0, 1])
    x = np.zeros((785, 10))
    for sched in (loc.full_batches(p, devices, 2),
                  loc.subsample_batches(p, devices, 1, np.array([3, 1]), RNG(1)),
                  loc.epoch_batches(p, devices, 2, np.array([5, 1]), RNG(1), batch_size=2)):
        assert np.all(sched.rows[:, 1, :] == 5)
        _positions(p, devices, sched.rows)
        assert np.all(np.isfinite(loc.local_updates(p, x, sched, 0.1, clip=1.0)))


def test_local_updates_on_a_schedule_gathered_step_by_step(monkeypatch):
    # 5 devices × 10 steps × 120 records: 18.8 MB of float32 features, more than the library
    # gathers at once (16 MiB), so each step gathers its own batch: the same numbers, bit for
    # bit, as gathering them all at once (limit raised), and the loop's up to float32 round-off
    # (batches of 120 here: 1e-4 rather than REL, which is for batches of at most 6).
    p = _shared_problem(5, 1200, 1e-2, 3, test_size=0)
    sched = loc.subsample_batches(p, np.arange(5), 10, 120, RNG(2))
    assert sched.rows.size * 785 * 4 > loc._GATHER_ALL_BYTES
    x = RNG(6).standard_normal((785, 10)) * 0.1
    step_by_step = loc.local_sgd(p, x, sched, 0.2, clip=1.0)
    ref, _, _ = reference_local(p, x, sched, 0.2, 1.0, "sample")
    assert rel_err(step_by_step, ref, x) < 1e-4
    monkeypatch.setattr(loc, "_GATHER_ALL_BYTES", 2**40)
    assert np.array_equal(loc.local_sgd(p, x, sched, 0.2, clip=1.0), step_by_step)


# ---- round-off and range: where the float32 stack must still give the documented values -------


def test_fresh_batches_of_large_devices_are_the_b_smallest_keys():
    # two devices of 1,000 records, b = 500, 20 steps: at these sizes a selection that only
    # partitions around another rank than b − 1 does not leave the b smallest keys first
    n, b = 1000, 500
    p = SoftmaxProblem(np.zeros((2 * n, 785), dtype=np.float32), np.zeros(2 * n, dtype=np.int64),
                       np.array([0, n, 2 * n]), 0.0)
    sched = loc.fresh_batches(p, np.array([0, 1]), 20, b, RNG(25))
    keys = RNG(25).random((20, 2, n))
    want = np.sort(np.argsort(keys, axis=-1)[..., :b], axis=-1)
    assert np.array_equal(np.sort(_positions(p, np.array([0, 1]), sched.rows), axis=-1), want)


def test_a_device_idle_at_every_step_has_a_zero_update(problem):
    # "Devices inactive at a step keep their iterate": never active, its update is exactly 0,
    # also for a float64 model whose entries are not float32 numbers (with or without correction)
    sched = loc.fresh_batches(problem, np.array([0, 1]), 3, 5, RNG(1))
    active = sched.active.copy()
    active[:, 1] = False
    sched = loc.Schedule(sched.rows, sched.weights, active)
    x = RNG(2).standard_normal((785, 10)) * 0.1
    assert np.any(x.astype(np.float32) != x)
    corr = RNG(9).standard_normal((2, 785, 10)) * 0.01
    for correction in (None, corr):
        u = loc.local_updates(problem, x, sched, 0.3, correction=correction)
        assert np.all(u[1] == 0.0) and np.any(u[0] != 0.0)


def test_weight_decay_over_many_steps_is_applied_at_once():
    # zero batch weights (no gradient), η·μ = 2^-12 (1 − ημ is a float32 number), 800 steps,
    # every device active and no correction: u = ((1 − ημ)^800 − 1)·x exactly in float64; the
    # rescaled iterate applies (1 − ημ)^800 once (a float32 power, a product, the final
    # difference: at most 3 roundings of 2^-24·|x|) instead of rounding 800 products
    p = _shared_problem(3, 40, 2.0**-11, 3, test_size=0)
    sched = loc.fresh_batches(p, np.array([0, 1]), 800, 4, RNG(7))
    sched = loc.Schedule(sched.rows, np.zeros_like(sched.weights), sched.active)
    x = RNG(5).standard_normal((785, 10)).astype(np.float32).astype(np.float64)
    u = loc.local_updates(p, x, sched, 0.5)
    want = ((1 - 2.0**-12) ** 800 - 1) * x
    assert np.all(np.abs(u - want) <= 3 * 2.0**-24 * np.abs(x))


def test_batch_clipping_of_a_gradient_whose_square_exceeds_float32():
    # η = 1e20, C = 1e-20: the raw batch gradient (entries ~1e19) has a squared norm beyond the
    # float32 range, the clipped step η·C has norm 1; μ = 1e-22 keeps 1 − ημ = 0.99
    p = _shared_problem(3, 40, 1e-22, 2, test_size=0)
    sched = loc.subsample_batches(p, np.array([0, 1]), 3, 5, RNG(6))
    x = RNG(8).standard_normal((785, 10)) * 0.1
    ref, clipped, _ = reference_local(p, x, sched, 1e20, 1e-20, "batch")
    assert clipped == 6
    got = loc.local_sgd(p, x, sched, 1e20, clip=1e-20, clip_mode="batch")
    assert rel_err(got, ref, x) < REL


def test_batch_clipping_whose_factor_is_below_the_float32_range():
    # C = 1e-46 with η = 1e37: the factor C·η/‖ĝ‖ is below float32's smallest subnormal while
    # the clipped step (norm ~1e-9) is representable; a float32 factor used to make the update 0.
    # Reference: the float64 batch-of-one loop (μ = 0, x = 0)
    p = _shared_problem(3, 40, 0.0, 2, test_size=0)
    sched = loc.subsample_batches(p, np.array([0, 1]), 3, 5, RNG(6))
    x = np.zeros((785, 10))
    ref, clipped, _ = reference_local(p, x, sched, 1e37, 1e-46, "batch")
    assert clipped == 6
    got = loc.local_updates(p, x, sched, 1e37, clip=1e-46, clip_mode="batch")
    assert np.all(np.linalg.norm(ref.reshape(2, -1), axis=1) > 1e-10)
    assert rel_err(got, ref - x, x) < REL
