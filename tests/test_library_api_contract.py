"""The property-based contract (``tests/_contract.py``) beyond the privacy API, so far for
the quantizer's bit counts (``fedrepro.dpfedpaq.quantizer``) and the τ rule's horizon and
evaluation counts (``fedrepro.alidpfl.tau_rule``): every call either returns values of the
documented range and type or raises ValueError/TypeError naming the parameter. (The other
public functions of these packages are not under contract yet.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from fedrepro.alidpfl import tau_rule
from fedrepro.dpfedpaq import quantizer
from tests._contract import Kind, Spec, check_contract
from tests.test_privacy_api_contract import _kind

P = dict
LEVELS = _kind([st.integers(1, 64), st.sampled_from([1, 2**24, np.int64(10)])], [0, -1, 2**24 + 1, 2**40],
               st.sampled_from(["5", True, 2.5, [5], b"5"]))
LEVELS_OR_NONE = Kind(st.one_of(LEVELS.valid, st.none()), LEVELS.bad_range, LEVELS.bad_type)


def _strict(low: int, high: int) -> Kind:
    """An integer parameter checked strictly: a float (even 2.0) is a wrong type."""
    return _kind([st.integers(low, high), st.sampled_from([low, high, np.int64(low + 1)])], [low - 1, low - 5],
                 st.sampled_from(["5", True, None, [5], b"5", 2.0, 2.5, math.nan]))


DIM = _strict(1, 10**9)
STEPS = _strict(1, 10**4)
SMALL_POS = _kind([st.floats(1e-3, 1e3), st.sampled_from([1e-6, 1.0, 1e6])], [0.0, -1.0, math.inf, math.nan])


def _finite_nonneg(value) -> bool:
    arr = np.asarray(value, dtype=float)
    return bool(np.all(np.isfinite(arr)) and np.all(arr >= 0))


def out_bits(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res > 0, res


def out_ceil_bits(res, args):
    assert isinstance(res, int) and not isinstance(res, bool) and res >= 1, res


def out_nonneg_float(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res >= 0, res


def out_nonneg_ints(res, args):
    arr = np.asarray(res)
    assert arr.dtype.kind in "iu" and np.all(arr >= 0), res


def out_counts(res, args):
    assert isinstance(res, dict) and res and all(_finite_nonneg(v) for v in res.values()), res


SPECS: dict[str, tuple] = {
    "quantizer.bits": (quantizer.bits, Spec(P(d=DIM, s=LEVELS_OR_NONE), out_bits)),
    "quantizer.ceil_bits": (quantizer.ceil_bits, Spec(P(d=DIM, s=LEVELS_OR_NONE), out_ceil_bits)),
    "quantizer.variance_parameter": (quantizer.variance_parameter, Spec(P(d=DIM, s=LEVELS_OR_NONE), out_nonneg_float)),
    "tau_rule.horizon": (tau_rule.horizon, Spec(P(tau=STEPS, iterations_done=_strict(0, 10**6),
                                                  rounds_left=_strict(0, 10**6), iterations_left=_strict(0, 10**6)),
                                                out_nonneg_ints)),
    "tau_rule.unaccounted_evaluations": (tau_rule.unaccounted_evaluations, Spec(
        P(estimate_samples=_strict(1, 10**6), tau=STEPS, expected_batch=SMALL_POS), out_counts)),
}


@pytest.mark.parametrize("qualname", sorted(SPECS))
def test_library_api_contract(qualname):
    fn, spec = SPECS[qualname]
    check_contract(fn, spec)

