"""Proximal and reflective operators (Fed-PLT v2 Definition 3) against closed forms and
against a numerical argmin of ``h(x) + ||x - v||^2 / (2 t)``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from fedrepro.core.prox import (
    Regularizer,
    prox_ball,
    prox_box,
    prox_l1,
    prox_sq_norm,
    prox_zero,
    reflect,
    reflective,
    regularizer,
)

RNG_SEED = 20240611


def _numerical_prox(h_value, v, t):
    """argmin_x h(x) + ||x - v||^2/(2t) by Powell's derivative-free method (it copes with the
    l1 kink; it stops around 1e-8 from the minimiser)."""
    obj = lambda x: h_value(x) + np.sum((x - v) ** 2) / (2 * t)  # noqa: E731
    res = minimize(obj, v.copy(), method="Powell", options={"xtol": 1e-12, "ftol": 1e-14, "maxiter": 100000})
    return res.x


def test_closed_forms_on_rows():
    rng = np.random.default_rng(RNG_SEED)
    V = rng.standard_normal((7, 4)) * 3
    t, w = 0.7, 1.3
    # exact identities: tolerance 1e-15 relative (one or two roundings per entry)
    np.testing.assert_allclose(prox_zero(V, t), V, rtol=0, atol=0)
    np.testing.assert_allclose(prox_sq_norm(V, t, w), V / (1 + t * w), rtol=1e-15)
    soft = np.where(np.abs(V) > t * w, V - np.sign(V) * t * w, 0.0)
    np.testing.assert_allclose(prox_l1(V, t, w), soft, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(prox_box(V, -1.0, 2.0), np.minimum(np.maximum(V, -1.0), 2.0))
    c = rng.standard_normal(4)
    P = prox_ball(V, 1.5, c)
    for v, p in zip(V, P, strict=False):  # row by row: inside stays, outside goes radially to the sphere
        d = np.linalg.norm(v - c)
        expected = v if d <= 1.5 else c + 1.5 * (v - c) / d
        np.testing.assert_allclose(p, expected, rtol=1e-14, atol=1e-14)
    # a 1-D vector is one row
    np.testing.assert_allclose(prox_ball(V[0], 1.5, c), P[0], rtol=0, atol=0)


@pytest.mark.parametrize("kind,params", [
    ("sq_norm", {"weight": 0.8}),
    ("l1", {"weight": 0.6}),
    ("box", {"lower": -0.5, "upper": 0.7}),
    ("ball", {"radius": 0.9, "center": 0.2}),
    ("zero", {}),
])
def test_prox_matches_numerical_argmin(kind, params):
    rng = np.random.default_rng(RNG_SEED + 1)
    h = regularizer(kind, **params)
    for _ in range(5):
        v = rng.standard_normal(3) * 2
        t = float(rng.uniform(0.2, 2.0))
        if kind in ("box", "ball"):
            # indicator: an inf-valued objective defeats derivative-free search, so minimise
            # the distance with scipy's bound- / constraint-aware solvers instead
            if kind == "box":
                res = minimize(lambda x, v=v: np.sum((x - v) ** 2), np.zeros(3), method="L-BFGS-B",
                               bounds=[(-0.5, 0.7)] * 3, options={"ftol": 1e-15, "gtol": 1e-12})
            else:
                cons = {"type": "ineq", "fun": lambda x: 0.9 ** 2 - np.sum((x - 0.2) ** 2)}
                res = minimize(lambda x, v=v: np.sum((x - v) ** 2), np.full(3, 0.2), method="SLSQP",
                               constraints=[cons], options={"ftol": 1e-15, "maxiter": 500})
            ref = res.x
        else:
            ref = _numerical_prox(h.value, v, t)
        # tolerance 1e-6: the derivative-free / SQP solvers stop around 1e-7..1e-8
        np.testing.assert_allclose(h.prox(v, t), ref, atol=1e-6)
        # the prox is a minimiser: its objective is not above the numerical one (1e-12 slack
        # for round-off in the objective)
        obj = lambda x, v=v, t=t: h.value(x) + np.sum((x - v) ** 2) / (2 * t)  # noqa: E731
        assert obj(h.prox(v, t)) <= obj(ref) + 1e-12


def test_reflective_operators():
    rng = np.random.default_rng(RNG_SEED + 2)
    V = rng.standard_normal((5, 3))
    t, w = 0.4, 2.0
    expected = 2 * prox_l1(V, t, w) - V
    np.testing.assert_array_equal(reflective(V, t, prox_l1, weight=w), expected)
    np.testing.assert_array_equal(reflect(prox_l1)(V, t, weight=w), expected)
    np.testing.assert_array_equal(regularizer("l1", weight=w).reflect(V, t), expected)
    # reflective operators of convex functions are nonexpansive (Lemma 3's building block)
    U = rng.standard_normal((5, 3))
    R = reflect(prox_sq_norm)
    assert np.linalg.norm(R(V, t, weight=w) - R(U, t, weight=w)) <= np.linalg.norm(V - U) * (1 + 1e-15)


def test_regularizer_values():
    x = np.array([[0.5, -1.0], [3.0, 0.0]])
    assert np.allclose(regularizer("sq_norm", weight=2.0).value(x), [1.25, 9.0], rtol=1e-15)
    assert np.allclose(regularizer("l1", weight=0.5).value(x), [0.75, 1.5], rtol=1e-15)
    assert list(regularizer("box", lower=-1, upper=1).value(x)) == [0.0, np.inf]
    assert list(regularizer("ball", radius=1.2).value(x)) == [0.0, np.inf]
    assert regularizer("zero").value(x[0]) == 0.0
    assert isinstance(regularizer("zero"), Regularizer) and regularizer("zero").is_zero
    assert regularizer("l1", weight=0.0).is_zero and not regularizer("l1", weight=1.0).is_zero


@pytest.mark.parametrize("call,param", [
    (lambda: prox_l1(np.ones(2), -1.0, 1.0), "t"),
    (lambda: prox_sq_norm(np.ones(2), 1.0, -2.0), "weight"),
    (lambda: prox_l1(np.ones(2), 1.0, np.nan), "weight"),
    (lambda: prox_box(np.ones(2), 1.0, 0.0), "lower"),
    (lambda: prox_ball(np.ones(2), -1.0), "radius"),
    (lambda: prox_zero(3.0, 1.0), "v"),
    (lambda: regularizer("elastic"), "kind"),
    (lambda: regularizer("l1", radius=1.0), "params"),
    (lambda: regularizer("ball"), "radius"),
    (lambda: regularizer("box", lower=0.0), "upper"),
])
def test_bad_inputs_raise(call, param):
    with pytest.raises(ValueError, match=param):
        call()


# ---------------------------------------------------------------------------------------
# written against mutants that survived `make mutation` (tests/MUTATION.md): messages that
# name the parameter, defaults, degenerate sets, the tolerance of the indicator values
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: prox_zero(np.ones(2), -1.0),
    lambda: prox_sq_norm(np.ones(2), -1.0),
    lambda: prox_l1(np.ones(2), -1.0),
    lambda: prox_box(np.ones(2), 0.0, 1.0, t=-1.0),
    lambda: prox_ball(np.ones(2), 1.0, t=-1.0),
])
def test_a_negative_penalty_is_named_in_full(call):
    with pytest.raises(ValueError, match=r"^t \(the prox penalty\) must"):
        call()


def test_messages_name_the_parameter():
    with pytest.raises(ValueError, match=r"^weight must"):
        prox_sq_norm(np.ones(2), 1.0, -1.0)
    with pytest.raises(ValueError, match=r"^weight must"):
        prox_l1(np.ones(2), 1.0, -1.0)
    with pytest.raises(ValueError, match=r"^lower and upper must not contain NaN$"):
        prox_box(np.ones(2), np.nan, 1.0)
    with pytest.raises(ValueError, match=r"^lower and upper must not contain NaN$"):
        prox_box(np.ones(2), 0.0, [1.0, np.nan])
    with pytest.raises(ValueError, match=r"^lower and upper must not contain NaN$"):
        prox_box(np.ones(2), None, 1.0)  # None reads as NaN
    with pytest.raises(ValueError, match=r"^lower and upper must not contain NaN$"):
        prox_box(np.ones(2), 0.0, None)
    with pytest.raises(ValueError, match=r"^radius must be a real number >= 0, got 'wide'$"):
        prox_ball(np.ones(2), "wide")
    with pytest.raises(ValueError, match=r"^x must be a vector"):
        regularizer("l1").value(2.0)


def test_defaults_of_the_operators():
    v = np.array([[3.0, -4.0], [0.5, 0.0]])
    np.testing.assert_array_equal(prox_zero(v), v)
    np.testing.assert_allclose(prox_sq_norm(v, 1.0), v / 2, rtol=1e-15)  # weight 1
    np.testing.assert_allclose(prox_ball(v, 1.0), [[0.6, -0.8], [0.5, 0.0]], rtol=1e-15)  # center 0
    # a Regularizer built directly, without regularizer(): weight 1
    np.testing.assert_allclose(Regularizer("sq_norm").value(v), [12.5, 0.125], rtol=1e-15)
    np.testing.assert_allclose(Regularizer("l1").value(v), [7.0, 0.5], rtol=1e-15)
    np.testing.assert_allclose(Regularizer("sq_norm").prox(v, 1.0), v / 2, rtol=1e-15)
    np.testing.assert_allclose(Regularizer("l1").prox(v, 1.0), [[2.0, -3.0], [0.0, 0.0]], rtol=1e-15)
    np.testing.assert_array_equal(Regularizer("zero").value(v), [0.0, 0.0])
    assert Regularizer("zero").value(v).shape == (2,)


def test_prox_zero_returns_a_float_copy():
    v = np.array([1.0, 2.0])
    out = prox_zero(v, 1.0)
    assert not np.shares_memory(out, v)
    out[0] = 5.0
    assert v[0] == 1.0
    assert prox_zero([1, 2]).dtype == float


def test_degenerate_box_and_ball():
    v = np.array([[3.0, -4.0], [0.1, 0.2]])
    np.testing.assert_array_equal(prox_box(v, 1.0, 1.0), np.ones_like(v))  # lower == upper
    np.testing.assert_array_equal(prox_ball(v, 0.0, center=[1.0, 2.0]), [[1.0, 2.0], [1.0, 2.0]])  # radius 0
    # points inside the ball stay; a point between radius and 1 is scaled by radius/norm
    np.testing.assert_array_equal(prox_ball(v[1:], 1.0), v[1:])
    np.testing.assert_allclose(prox_ball(np.array([0.6, 0.0]), 0.3), [0.3, 0.0], rtol=1e-15)
    # the centre itself: no division by a zero norm
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(prox_ball(np.zeros((2, 3)), 1.0), np.zeros((2, 3)))


def test_reflect_names_the_operator():
    import functools

    r = reflect(prox_l1)
    assert r.__name__ == "reflect_prox_l1"
    assert r.__doc__ == "Reflective operator 2 prox(v, t) - v of prox_l1."
    anonymous = reflect(functools.partial(prox_sq_norm, weight=1.0))
    assert anonymous.__name__ == "reflect_prox"
    assert anonymous.__doc__ == "Reflective operator 2 prox(v, t) - v of prox."


def test_indicator_values_have_the_stated_tolerance():
    """``1e-12`` relative (at least absolute) on the constraint, for finite and infinite bounds."""
    box = regularizer("box", lower=[0.0, 1e6], upper=[np.inf, 2e6])
    assert box.value([-0.5e-12, 1e6]) == 0.0 and box.value([-1.5e-12, 1e6]) == np.inf
    assert box.value([0.0, 1e6 - 0.5e-6]) == 0.0 and box.value([0.0, 1e6 - 2e-6]) == np.inf
    top = regularizer("box", lower=[-np.inf, -2e6], upper=[0.0, -1e6])
    assert top.value([0.5e-12, -1e6]) == 0.0 and top.value([1.5e-12, -1e6]) == np.inf
    assert top.value([0.0, -1e6 + 0.5e-6]) == 0.0 and top.value([0.0, -1e6 + 2e-6]) == np.inf
    ball = regularizer("ball", radius=1e6)
    assert ball.value([1e6 + 0.5e-6, 0.0]) == 0.0 and ball.value([1e6 + 2e-6, 0.0]) == np.inf
    dot = regularizer("ball", radius=0.0, center=[1.0, 0.0])
    assert dot.value([1.0 + 0.5e-12, 0.0]) == 0.0 and dot.value([1.0 + 3e-12, 0.0]) == np.inf


def test_indicator_values_on_the_boundary_and_the_default_centre():
    box = regularizer("box", lower=[0.0, -np.inf], upper=[np.inf, 0.0])
    assert box.value([-1e-12, 1e-12]) == 0.0  # exactly at bound -/+ tolerance: inside
    point = regularizer("ball", radius=0.0)
    assert point.value([1e-12, 0.0]) == 0.0  # exactly at radius + tolerance: inside
    unit = Regularizer("ball", {"radius": 1.0})  # no centre given: the origin
    np.testing.assert_array_equal(unit.value([[0.9, 0.0], [-0.9, 0.0], [0.0, -1.1]]), [0.0, 0.0, np.inf])
    v = unit.value([0.0, 0.5])
    assert isinstance(v, float) and not isinstance(v, np.ndarray)
    with pytest.raises(ValueError, match=r"^kind must be one of"):
        Regularizer("elastic").value([1.0])
    with pytest.raises(ValueError, match=r"^kind must be one of"):
        Regularizer("elastic").prox([1.0], 1.0)


def test_regularizer_prox_validates_the_penalty_and_uses_its_defaults():
    v = np.array([3.0, 4.0])
    for h in (Regularizer("zero"), regularizer("box", lower=0.0, upper=1.0), regularizer("ball", radius=1.0)):
        with pytest.raises(ValueError, match=r"^t \(the prox penalty\) must"):
            h.prox(v, -1.0)
    unit = Regularizer("ball", {"radius": 1.0})  # no centre given: the origin
    np.testing.assert_allclose(unit.prox(v, 1.0), [0.6, 0.8], rtol=1e-15)
    assert regularizer("l1").params["weight"] == 1.0 and regularizer("sq_norm").params["weight"] == 1.0


def test_regularizer_messages_and_vector_bounds():
    with pytest.raises(ValueError, match=r"^weight must"):
        regularizer("l1", weight=-1.0)
    with pytest.raises(ValueError, match=r"^kind 'box' needs both lower and upper$"):
        regularizer("box", upper=1.0)
    with pytest.raises(ValueError, match=r"^kind 'ball' needs radius \(>= 0\)$"):
        regularizer("ball", center=[0.0, 0.0])
    box = regularizer("box", lower=[0.0, 0.0, 0.0], upper=[1.0, 2.0, 3.0])  # bounds of any length
    np.testing.assert_array_equal(box.prox(np.array([5.0, 5.0, -1.0]), 1.0), [1.0, 2.0, 0.0])
    with pytest.raises(ValueError, match=r"^v must be a vector"):
        prox_zero(3.0)


def test_boolean_input_is_read_as_numbers():
    np.testing.assert_array_equal(prox_l1([True, False], 0.5), [0.5, 0.0])
