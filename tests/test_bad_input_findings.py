"""The bad inputs of the results-integrity review that were accepted silently, each now
refused with an error naming the parameter (each of these calls returned a wrong value
or crashed deep inside before)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.core.validate import ParameterTypeError
from fedrepro.dpfedpaq import algorithms, noise, quantizer
from fedrepro.fedplt.checks import pep
from tests.test_dpfedpaq_algorithms_contract import make_problem


@pytest.mark.parametrize("fn", [quantizer.encode, quantizer.quantize])
@pytest.mark.parametrize("s", [2 ** 24 + 1, 2 ** 31 + 5, 2 ** 40])
def test_more_levels_than_float32_and_int32_hold_are_refused(fn, s):
    v = np.array([[0.3, -0.2, 0.9]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"s \(quantization levels\)"):
        fn(v, s, np.random.default_rng(0))


def test_the_largest_level_count_still_quantizes_exactly_to_integers():
    norms, h = quantizer.encode(np.array([[0.3, -0.2, 0.9]], dtype=np.float32), quantizer.MAX_LEVELS,
                                np.random.default_rng(0))
    assert h.dtype == np.int32 and np.all(np.abs(h) <= quantizer.MAX_LEVELS)


@pytest.mark.parametrize("call, name", [
    (lambda: noise.sensitivity("rigorous", lr="0.1", local_steps=2, clip=1.0, batch_size=4, n_samples=10), "lr"),
    (lambda: noise.noise_multipliers("paper", epsilon=1.0, delta=1e-4, gamma="0.5"), "gamma"),
    (lambda: noise.add_noise(np.zeros((2, 3)), "1.0", np.random.default_rng(0)), "std"),
    (lambda: noise.add_noise(np.zeros((2, 3)), np.array([True, False]), np.random.default_rng(0)), "std"),
])
def test_numbers_given_as_strings_or_booleans_are_refused(call, name):
    with pytest.raises(ParameterTypeError, match=rf"^{name} must (be a real number|contain real numbers)"):
        call()


@pytest.mark.parametrize("clip", [1e-308, 1e-160, 1e-20])
def test_a_clip_whose_inverse_square_underflows_is_refused_before_training(clip):
    p = make_problem([40, 40, 44])
    with pytest.raises(ValueError, match=r"clip \(C\) must be at least"):
        algorithms.private_fedpaq(p, rounds=1, local_steps=2, m_per_round=2, clip=clip)
    h = algorithms.private_fedpaq(p, rounds=1, local_steps=2, m_per_round=2, clip=algorithms.MIN_CLIP)
    assert np.all(np.isfinite(h.x))


@pytest.mark.parametrize("measured", [math.nan, -0.5, "0.3", None, math.inf])
def test_pep_check_refuses_a_measurement_that_is_no_contraction(measured):
    inst = pep.PEPInstance(lam=1.0, lam_bar=10.0, rho=1.0, Ne=2, solver="gd")
    with pytest.raises((ValueError, TypeError), match="measured"):
        pep.check_measured_below(inst, measured, pep_rate=0.9)


def test_pep_check_still_decides_a_valid_measurement():
    inst = pep.PEPInstance(lam=1.0, lam_bar=10.0, rho=1.0, Ne=2, solver="gd")
    assert pep.check_measured_below(inst, 0.5, pep_rate=0.9).holds
    assert not pep.check_measured_below(inst, 0.95, pep_rate=0.9).holds
