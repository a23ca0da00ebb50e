"""The property-based contract (``tests/_contract.py``) on the public API of ``fedrepro.dpfedpaq``
that takes numbers and arrays: the noise (sensitivities, multipliers, the in-place noise), the
quantizer's encode/decode/variances, the step sizes and batch sizes of Alg. 2, the privacy
arguments, Theorem 1's constants and budgets, the MLP's shapes. Every call either returns values
of the documented shape and range or raises ValueError/TypeError naming the offending parameter.

The training loops have their own contracts (``tests/test_dpfedpaq_algorithms_contract.py``,
``tests/test_dpfedpaq_mlp_contract.py``); the quantizer's bit counts are in
``tests/test_library_api_contract.py`` and the amplification lemmas in
``tests/test_privacy_api_contract.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from fedrepro.dpfedpaq import algorithms, mlp, noise, quantizer, theorem1
from tests._contract import Kind, Spec, check_contract
from tests.test_privacy_api_contract import DELTA, NON_FINITE, NONNEG, _kind

P = dict


def _strict(low: int, high: int) -> Kind:
    """An integer parameter checked strictly (any float, even 2.0, is a wrong type)."""
    return _kind([st.integers(low, high), st.sampled_from([low, high, np.int64(low)])], [low - 1, low - 7],
                 st.sampled_from(["5", True, None, [5], b"5", 2.0, 2.5, math.nan]))


def _choice(options: tuple[str, ...]) -> Kind:
    return _kind([st.sampled_from(options)], ["", "other", options[0].upper() + "x"],
                 st.sampled_from([None, 1, True, b"x", [options[0]]]))


def _finite(x) -> bool:
    return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


SMALL_POS = _kind([st.floats(1e-3, 1e3), st.sampled_from([1e-6, 1.0, np.float64(0.5), 2])], [0.0, -1.0] + NON_FINITE)
EPS = _kind([st.floats(0.05, 20.0), st.sampled_from([0.1, 1.0, 10.0])], [0.0, -1.0] + NON_FINITE)
GAMMA = _kind([st.floats(0.01, 1.0), st.sampled_from([1.0, 0.2, [0.2, 0.5], np.array([0.1, 1.0])])],
              [0.0, -0.1, 1.5, [0.2, 0.0], [math.nan]] + NON_FINITE,
              st.sampled_from(["0.2", True, None, ["0.2"], np.array(["0.2"]), [True]]))
COUNTS = _kind([st.lists(st.integers(1, 1000), min_size=1, max_size=5).map(np.array), st.integers(1, 1000)],
               [np.array([0, 5]), np.array([-1]), np.array([1.5])],
               st.sampled_from(["5", None, [True], np.array(["3"])]))
LR = _kind([st.floats(1e-4, 10.0), st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=3)],
           [0.0, -0.1, [0.1, math.nan]] + NON_FINITE, st.sampled_from(["0.1", None, [True], np.array(["1"])]))
ROWS = Kind(st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**16), st.sampled_from([1e-3, 1.0, 1e3]))
            .map(lambda a: (np.random.default_rng(a[2]).standard_normal((a[0], a[1])) * a[3]).astype(np.float64)),
            st.sampled_from([np.array([[1.0, math.nan]]), np.array([[math.inf, 0.0]])]),
            st.sampled_from([None, "v", [["1"]], np.array([["a"]])]))
LEVELS = _kind([st.integers(1, 64), st.just(np.int64(10))], [0, -1, 2**24 + 1], st.sampled_from(["5", True, 2.5, None]))
LEVELS_OR_NONE = Kind(st.one_of(LEVELS.valid, st.none()), LEVELS.bad_range, st.sampled_from(["5", True, 2.5]))
RNG = Kind(st.integers(0, 2**16).map(np.random.default_rng), None, st.sampled_from([None, 0, "rng", np.random.RandomState(0)]))
# quantize / quantized_mean: with s = None the rng is unused and may be None (documented)
RNG_OR_NONE = Kind(st.one_of(RNG.valid, st.none()), None, st.sampled_from([0, "rng", np.random.RandomState(0)]))


def out_sensitivity(res, args):
    assert isinstance(res, np.ndarray) and res.dtype == np.float64 and _finite(res) and np.all(res > 0), res


def out_multipliers(res, args):
    assert isinstance(res, np.ndarray) and res.shape == np.atleast_1d(args["gamma"]).shape, res
    assert _finite(res) and np.all(res > 0), res


def out_noise_norms(res, args):
    assert res.shape == (args["u"].shape[0],) and _finite(res) and np.all(res >= 0), res


def out_lr(res, args):
    arr = np.asarray(res)
    assert arr.shape == np.shape(args["k"]) and _finite(arr) and np.all(arr > 0), res


def out_batches(res, args):
    assert res.dtype == np.int64 and res.shape == np.shape(args["sizes"]) and np.all(res >= 1), res


def out_privacy(res, args):
    clip, epsilon, delta = res
    assert (clip is None) == (args["clip"] is None) and (epsilon is None) == (args["epsilon"] is None), res
    assert 0 < delta < 1, res


def out_quantized(res, args):
    v = np.asarray(args["v"])
    assert res.shape == v.shape and _finite(res), res


def out_message(res, args):
    norms, h = res
    s = args["s"]
    assert norms.shape == (np.asarray(args["v"]).shape[0],) and _finite(norms) and np.all(norms >= 0), res
    assert h.dtype.kind in "iu" and np.all(np.abs(h) <= s), res
    assert np.allclose(quantizer.decode(norms, h, s).shape, np.asarray(args["v"]).shape), res


def out_row_values(res, args):
    arr = np.asarray(res)
    assert arr.shape == (np.asarray(args["v"]).shape[0],) and _finite(arr) and np.all(arr >= 0), res


def out_bounds(res, args):
    assert set(res) == {"paper", "tight"} and all(_finite(v) and np.all(v >= 0) for v in res.values()), res


def out_mean(res, args):
    v = np.asarray(args["v"])
    assert res.shape == v.shape[1:] and _finite(res), res


def out_constants(res, args):
    assert isinstance(res, theorem1.Theorem1Constants) and 0 < res.gamma and res.kappa >= 1, res


def out_pos_float(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res > 0, res


def out_nonneg_float(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res >= 0, res


def out_feasible_E(res, args):
    assert res is None or (isinstance(res, int) and 1 <= res <= args["T"]), res


def out_schedules(res, args):
    assert isinstance(res, list) and all(1 <= s["M"] <= args["N"] for s in res), res


def out_dimension(res, args):
    assert isinstance(res, int) and res == 784 * args["hidden"] + args["hidden"] + 10 * args["hidden"] + 10, res


def out_params(res, args):
    flat = mlp.flatten(res)
    assert flat.shape == (mlp.dimension(args["hidden"]),) and _finite(flat), res


CONSTANTS = Kind(st.builds(theorem1.Theorem1Constants, L=st.just(1.0), mu=st.floats(0.01, 1.0), sigma2=st.floats(0, 10),
                           G2=st.floats(0, 10), lam2=st.floats(0, 10), q=st.floats(0, 10), d=st.integers(1, 10**4),
                           b=st.integers(1, 10), n=st.just(600), N=st.integers(1, 100), M=st.just(1),
                           E=st.integers(1, 20), epsilon=st.one_of(st.none(), st.floats(0.1, 10)), delta=st.just(1e-4)),
                 None, st.sampled_from([None, {"L": 1.0}, "c", 1.0]))


def _mu(args: dict) -> Kind:
    L = args["L"]
    hi = float(L) if isinstance(L, (int, float, np.floating)) and not isinstance(L, bool) and 0 < L < math.inf else 1.0
    return _kind([st.floats(1e-6, 1.0).map(lambda f: f * hi), st.just(hi)], [0.0, -1.0, 2 * hi] + NON_FINITE)


def _batch(args: dict) -> Kind:
    return _kind([st.integers(1, 5)], [0, -1, 10**6], st.sampled_from(["2", True, None, 2.0]))


def _at_most(name: str, default: int) -> object:
    def kind(args: dict) -> Kind:
        hi = args[name] if isinstance(args[name], int) and not isinstance(args[name], bool) and args[name] >= 1 else default
        return _kind([st.integers(1, hi)], [0, -1, hi + 1], st.sampled_from(["2", True, None, 2.0]))
    return kind


SPECS: dict[str, tuple] = {
    # --------------------------------------------------------------------------- noise
    "noise.sensitivity": (noise.sensitivity, Spec(P(mode=_choice(noise.SENSITIVITIES), lr=LR,
                                                    local_steps=_strict(1, 100), clip=SMALL_POS,
                                                    batch_size=COUNTS, n_samples=COUNTS), out_sensitivity,
                                                  reported_as={"local_steps": "local_steps (E)",
                                                               "clip": "clip (C)"})),
    "noise.noise_multipliers": (noise.noise_multipliers, Spec(
        P(calibration=_choice(noise.CALIBRATIONS), epsilon=EPS, delta=_kind([st.sampled_from([1e-4, 1e-5, 1e-6])],
                                                                            [0.0, 1.0, -0.5] + NON_FINITE),
          gamma=GAMMA), out_multipliers, examples=40)),
    "noise.add_noise": (noise.add_noise, Spec(
        P(u=Kind(st.tuples(st.integers(1, 4), st.integers(1, 5)).map(lambda s: np.zeros(s, np.float32)),
                 st.sampled_from([np.zeros((2, 3), np.int64), np.zeros(3, np.float32)]),
                 st.sampled_from([None, "u", [[0.0]]])),
          std=lambda a: _kind([st.floats(0.0, 10.0)] + ([st.just(np.full(a["u"].shape[0], 0.5))]
                                                        if isinstance(a["u"], np.ndarray) and a["u"].ndim == 2 else []),
                              [-1.0, math.nan, math.inf], st.sampled_from(["1", None, [True], np.array(["1"])])),
          rng=RNG), out_noise_norms)),
    # --------------------------------------------------------------------------- Alg. 2 helpers
    "algorithms.learning_rate": (algorithms.learning_rate, Spec(
        P(k=_kind([st.integers(0, 10**6), st.lists(st.integers(0, 1000), max_size=4).map(np.array)],
                  [-1, np.array([0, -2]), 1.5, np.array([0.5])], st.sampled_from(["3", None, [True]])),
          local_steps=_strict(1, 100), lr0=SMALL_POS, decay_iters=SMALL_POS), out_lr,
        reported_as={"k": "k (round)", "local_steps": "local_steps (E)", "lr0": "lr0 (initial learning rate)",
                     "decay_iters": "decay_iters (learning-rate decay scale tau)"})),
    "algorithms.private_batch_sizes": (algorithms.private_batch_sizes, Spec(
        P(sizes=_kind([st.lists(st.integers(600, 6000), min_size=1, max_size=5).map(np.array)],
                      [np.array([0, 600]), np.array([600.5]), np.array([]), np.array([[600]])],
                      st.sampled_from(["600", None, [True], np.array(["600"])])),
          sample_ratio=_kind([st.floats(0.1, 1.0), st.just(1.0)], [0.0, -0.1, 1.5] + NON_FINITE),
          local_steps=_strict(1, 50)), out_batches,
        reported_as={"sizes": "sizes (n_i)", "sample_ratio": "sample_ratio (gamma)", "local_steps": "local_steps (E)"})),
    "algorithms.check_privacy_args": (algorithms.check_privacy_args, Spec(
        P(sensitivity_mode=_choice(noise.SENSITIVITIES), calibration=_choice(noise.CALIBRATIONS),
          # C = None (no clipping) is valid only without noise: drawn valid, the clip is a number
          clip=Kind(st.floats(1e-3, 1e3), st.sampled_from([0.0, -1.0, 1e-20] + NON_FINITE),
                    st.sampled_from(["1", True, [1.0]])),
          epsilon=Kind(st.one_of(st.none(), st.floats(0.05, 20.0)), st.sampled_from([0.0, -1.0] + NON_FINITE),
                       st.sampled_from(["1", True, [1.0]])),
          delta=DELTA), out_privacy, reported_as={"clip": "clip (C)"})),
    # --------------------------------------------------------------------------- quantizer
    "quantizer.quantize": (quantizer.quantize, Spec(P(v=ROWS, s=LEVELS_OR_NONE, rng=lambda a: RNG_OR_NONE if a["s"] is None
                                                      else RNG), out_quantized)),
    "quantizer.encode": (quantizer.encode, Spec(P(v=ROWS, s=LEVELS, rng=RNG), out_message)),
    # a row with a nan or inf entry has a nan or inf norm (documented): not a bad input here
    "quantizer.row_norms": (quantizer.row_norms, Spec(P(v=Kind(ROWS.valid, None, ROWS.bad_type)), out_row_values)),
    "quantizer.exact_variance": (quantizer.exact_variance, Spec(P(v=ROWS, s=LEVELS), out_row_values)),
    "quantizer.variance_bound": (quantizer.variance_bound, Spec(P(v=ROWS, s=LEVELS), out_bounds)),
    "quantizer.quantized_mean": (quantizer.quantized_mean, Spec(P(v=ROWS, s=LEVELS_OR_NONE,
                                                                  rng=lambda a: RNG_OR_NONE if a["s"] is None else RNG),
                                                                out_mean)),
    # --------------------------------------------------------------------------- Theorem 1
    "theorem1.Theorem1Constants": (theorem1.Theorem1Constants, Spec(
        P(L=SMALL_POS, mu=_mu, sigma2=NONNEG, G2=NONNEG, lam2=NONNEG, q=NONNEG, d=_strict(1, 10**6),
          n=_kind([st.integers(100, 10**4)], [0, -1], st.sampled_from(["600", True, None, 600.0])), E=_strict(1, 10), b=_batch, N=_strict(1, 100), M=_at_most("N", 1),
          epsilon=Kind(st.one_of(st.none(), st.floats(0.1, 10.0)), st.sampled_from([0.0, -1.0] + NON_FINITE),
                       st.sampled_from(["1", True, [1.0]])),
          delta=_kind([st.sampled_from([1e-4, 1e-5])], [0.0, -1.0, 1.0] + NON_FINITE)),
        out_constants, reported_as={"b": "b", "M": "M"})),
    "theorem1.noise_variance": (theorem1.noise_variance, Spec(P(c=CONSTANTS, eta=SMALL_POS), out_nonneg_float)),
    "theorem1.lr_offset": (theorem1.lr_offset, Spec(P(c=CONSTANTS, rule=_choice(theorem1.LR_OFFSETS)), out_pos_float)),
    "theorem1.smallest_feasible_E": (theorem1.smallest_feasible_E, Spec(
        P(budget_bits=SMALL_POS, T=_strict(1, 10**4), M=_strict(1, 100), beta=SMALL_POS), out_feasible_E)),
    "theorem1.budget_schedules": (theorem1.budget_schedules, Spec(
        P(budget_bits=_kind([st.floats(1e3, 1e7)], [0.0, -1.0] + NON_FINITE), T=_strict(1, 200),
          beta=SMALL_POS, N=_strict(1, 50)), out_schedules)),
    # --------------------------------------------------------------------------- MLP
    "mlp.dimension": (mlp.dimension, Spec(P(hidden=_strict(1, 4096)), out_dimension)),
    "mlp.init_params": (mlp.init_params, Spec(P(hidden=_strict(1, 64), rng=RNG), out_params)),
}


@pytest.mark.parametrize("qualname", sorted(SPECS))
def test_dpfedpaq_api_contract(qualname):
    fn, spec = SPECS[qualname]
    check_contract(fn, spec)
