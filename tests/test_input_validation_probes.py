"""The outside probes of bad input, replayed: each call below used to return NaN, run
silently wrong (gradient ascent, ``holds = True`` on an invalid instance), crash inside NumPy
(IndexError, ZeroDivisionError) or fail late; each must now raise a ValueError or TypeError
whose message names the offending parameter, before any computation."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from fedrepro.alidpfl.setting import ClientData
from fedrepro.fedplt import checks
from fedrepro.fedplt.local_solvers import gradient_descent


def _grad(W):
    return 2.0 * W


def _names(name: str, message: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def _raises_naming(call, name: str, exc=(ValueError, TypeError)):
    with pytest.raises(exc) as info:
        call()
    assert _names(name, str(info.value)), str(info.value)
    return info.value


# --------------------------------------------------------------------------- local solvers

def test_gradient_descent_rejects_nan_in_W0():
    W0 = np.array([[1.0, math.nan], [0.5, 0.5]])
    _raises_naming(lambda: gradient_descent(_grad, W0, 0.1, 3), "W0", ValueError)


@pytest.mark.parametrize("gamma", [math.nan, -0.1, 0.0, math.inf])
def test_gradient_descent_rejects_a_step_that_is_not_positive_and_finite(gamma):
    exc = _raises_naming(lambda: gradient_descent(_grad, np.ones((2, 2)), gamma, 3), "gamma", ValueError)
    assert "inf" in str(exc) or "real number" in str(exc)  # the allowed range (0, inf), or "a real number"


def test_gradient_descent_on_valid_input_is_unchanged():
    W0 = np.array([[1.0, -2.0], [0.5, 3.0]])
    # w <- w - 0.1 * 2 w = 0.8 w, three times: 0.512 W0 (exact up to round-off, rtol 1e-15)
    np.testing.assert_allclose(gradient_descent(_grad, W0, 0.1, 3), 0.512 * W0, rtol=1e-15)


# --------------------------------------------------------------------------- checks' instances

CRASHES = [
    (lambda: checks.Lemma2Instance(n=0), "n"),
    (lambda: checks.Lemma3Instance(N=0), "N"),
    (lambda: checks.Lemma3Instance(n=0), "n"),
    (lambda: checks.Proposition1Instance(N=0), "N"),
    (lambda: checks.Proposition1Instance(n=0), "n"),
    (lambda: checks.Proposition2Instance(N=0), "N"),
    (lambda: checks.Proposition2Instance(K=-1), "K"),
    (lambda: checks.Proposition3Instance(n=0), "n"),
    (lambda: checks.Corollary1Instance(K=-1), "K"),
    (lambda: checks.Corollary1Instance(N=0), "N"),
    (lambda: checks.Lemma4Instance(K=-1), "K"),
    (lambda: checks.Lemma4Instance(N=0), "N"),
    (lambda: checks.Lemma6Instance(rho=0.0), "rho"),
    (lambda: checks.Lemma6Instance(N=0), "N"),
    (lambda: checks.Lemma6Instance(n=0), "n"),
    (lambda: checks.Proposition4Instance(K=-1), "K"),
    (lambda: checks.Proposition4Instance(n=0), "n"),
    (lambda: checks.Eq11Instance(n=0), "n"),
]


@pytest.mark.parametrize(("build", "name"), CRASHES)
def test_instances_that_used_to_crash_are_rejected_when_built(build, name):
    exc = _raises_naming(build, name, ValueError)
    assert "integer" in str(exc) or "(0, inf)" in str(exc)  # the allowed range is stated


def test_check_lemma2_with_n_zero_raises_a_clear_error():
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):
        checks.check_lemma2(checks.Lemma2Instance(n=0))


def test_proposition2_with_negative_tau_is_rejected():
    """τ = −1 used to run and report ``holds = True``."""
    with pytest.raises(ValueError, match=r"tau must be in \[0, inf\), got -1"):
        checks.Proposition2Instance(tau=-1)


VAGUE = [  # numpy's own messages, or one naming an internal variable, before
    (lambda: checks.Lemma4Instance(zeta="0.8"), "zeta", TypeError),
    (lambda: checks.Lemma4Instance(trials=1), "trials", ValueError),
    (lambda: checks.Proposition2Instance(start="best"), "start", ValueError),
    (lambda: checks.Proposition2Instance(p_min=0.9, p_max=0.5), "p_min", ValueError),
    (lambda: checks.Lemma5Instance(alpha=1.0, sensitivity=1.0, sigma=1.0, delta=1e-5), "alpha", ValueError),
    (lambda: checks.Lemma5Instance(alpha=2.0, sensitivity=1.0, sigma=0.0, delta=1e-5), "sigma", ValueError),
    (lambda: checks.Proposition4Instance(tau=0.0), "tau", ValueError),
    (lambda: checks.Proposition1Instance(lam=2.0, lam_bar=1.0), "lam_bar", ValueError),
    (lambda: checks.Lemma8Instance(kappa=0.5), "kappa", ValueError),
    (lambda: checks.Lemma7Instance(thetas=()), "thetas", TypeError),
]


@pytest.mark.parametrize(("build", "name", "exc"), VAGUE)
def test_instances_with_bad_fields_name_the_field(build, name, exc):
    _raises_naming(build, name, exc)


def test_valid_instances_still_build_and_check():
    res = checks.check_lemma2(checks.Lemma2Instance())
    assert res.holds
    assert checks.check_lemma6(checks.Lemma6Instance()).holds


# --------------------------------------------------------------------------- ALI-DPFL's client data

def test_client_data_with_five_images_and_four_labels_is_rejected_when_built():
    x = np.zeros((5, 1, 28, 28), np.float32)
    y = np.zeros(4, np.int64)
    with pytest.raises(ValueError, match=r"labels y must be integers of shape \(5,\)"):
        ClientData(x, y)


@pytest.mark.parametrize(("x", "y", "name", "exc"), [
    (np.zeros((3, 1, 28, 28), np.float64), np.zeros(3, np.int64), "x", ValueError),
    (np.zeros((3, 28, 28), np.float32), np.zeros(3, np.int64), "x", ValueError),
    (np.full((3, 1, 28, 28), np.nan, np.float32), np.zeros(3, np.int64), "x", ValueError),
    (np.zeros((3, 1, 28, 28), np.float32), np.zeros(3, np.float32), "y", ValueError),
    ([[0.0]], np.zeros(1, np.int64), "x", TypeError),
])
def test_client_data_checks_shapes_dtypes_and_pixels(x, y, name, exc):
    _raises_naming(lambda: ClientData(x, y), name, exc)
