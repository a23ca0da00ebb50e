"""The property-based contract (``tests/_contract.py``) on the entry points that validate their
inputs before computing: the local solvers of Fed-PLT, the ``*Instance`` records of
``fedrepro.fedplt.checks`` (validated when built), ALI-DPFL's ``ClientData``, the federated
problems' constructors, the head-to-head algorithm dataclasses and ``run``, and the public
functions of ``fedrepro.privacy.audit``.

For each parameter, values out of range (NaN, inf, negative, zero where excluded, empty or
mismatched arrays) must raise ValueError and values of a wrong type TypeError, the message
naming the parameter; valid values must not raise. The instance records are only built here
(their checks run in ``tests/test_fedplt_checks.py``); valid ranges are kept modest so that
every file runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from fedrepro.alidpfl.setting import ClientData
from fedrepro.fedplt import checks
from fedrepro.fedplt import local_solvers as ls
from fedrepro.headtohead import algorithms as h2h
from fedrepro.headtohead.alidpfl import ALIDPFL
from fedrepro.privacy import audit
from fedrepro.problems import logistic, quadratic
from fedrepro.problems.softmax import N_FEATURES, SoftmaxProblem
from tests._contract import Kind, Spec, check_contract

NON_FINITE = [math.inf, -math.inf, math.nan]
GARBAGE = st.sampled_from(["0.5", "1", "abc", None, True, np.bool_(False), [0.5], b"1", 1j])
INT_GARBAGE = st.sampled_from(["3", None, True, [3], 2.0, 2.5, b"3"])


def _kind(valid, bad_range, bad_type=GARBAGE) -> Kind:
    return Kind(st.one_of(*valid) if isinstance(valid, list) else valid,
                st.sampled_from(bad_range) if bad_range else None, bad_type)


def pos(lo: float = 0.01, hi: float = 100.0) -> Kind:
    """A finite real number > 0."""
    return _kind([st.floats(lo, hi), st.sampled_from([lo, hi, 1, np.float64(0.5)])], [0.0, -0.0, -1.0] + NON_FINITE)


def nonneg(hi: float = 10.0) -> Kind:
    return _kind([st.floats(0.0, hi), st.sampled_from([0.0, 0, hi])], [-1.0, -1e-9] + NON_FINITE)


def interval(lo: float, hi: float, *, closed_low: bool, closed_high: bool) -> Kind:
    ends = [e for e, c in ((lo, closed_low), (hi, closed_high)) if c]
    out = [e for e, c in ((lo, closed_low), (hi, closed_high)) if not c]
    return _kind([st.floats(lo, hi, exclude_min=not closed_low, exclude_max=not closed_high),
                  st.sampled_from(ends + [(lo + hi) / 2])], out + [lo - 1.0, hi + 1.0] + NON_FINITE)


def integer(low: int, high: int) -> Kind:
    return _kind([st.integers(low, high), st.sampled_from([low, np.int64(low)])], [low - 1, low - 5], INT_GARBAGE)


def choice(*options: str) -> Kind:
    return _kind([st.sampled_from(list(options))], ["", "other"], st.sampled_from([None, 1, True, [options[0]]]))


BOOL = Kind(st.sampled_from([True, False, np.bool_(True)]), None, st.sampled_from([1, 0, "yes", None]))
SEED = integer(0, 2**31)


def _lam_bar(args: dict) -> Kind:
    """``lam_bar`` in ``[lam, inf)`` (finite) where ``lam`` is valid."""
    lam = args.get("lam")
    lam = float(lam) if isinstance(lam, (int, float, np.floating)) and not isinstance(lam, bool) and \
        math.isfinite(float(lam)) and float(lam) > 0 else 1.0
    return _kind([st.just(lam), st.floats(1.0, 50.0).map(lambda f: lam * f)], [lam / 2, -1.0] + NON_FINITE)


def _p_max(args: dict) -> Kind:
    p = args.get("p_min")
    p = float(p) if isinstance(p, (int, float)) and not isinstance(p, bool) and 0 < p <= 1 else 0.5
    return _kind([st.floats(p, 1.0), st.just(1.0)], [0.0, 1.5, -0.1] + NON_FINITE)


def out_is(cls):
    def out(res, args):
        assert isinstance(res, cls), res
    return out


# --------------------------------------------------------------------------- local solvers

def _grad(W):
    return 2.0 * W


def _w0() -> Kind:
    good = st.integers(1, 4).flatmap(lambda b: st.integers(1, 3).flatmap(
        lambda n: st.lists(st.floats(-5, 5), min_size=b * n, max_size=b * n).map(
            lambda v: np.array(v).reshape(b, n))))
    bad = st.sampled_from([np.array([[np.nan, 1.0]]), np.array([[np.inf]]), np.zeros((0, 2)), np.zeros((2, 2, 2))])
    return Kind(good, bad, st.sampled_from([None, "W0", np.array([["a"]]), np.array([[True]])]))


def _rows_gamma(args: dict) -> Kind:
    """gamma as a scalar or a per-agent array with one entry per row of a valid W0."""
    W0 = args.get("W0")
    rows = W0.shape[0] if isinstance(W0, np.ndarray) and W0.ndim == 2 and W0.size else 1
    return _kind([st.floats(1e-3, 0.4), st.lists(st.floats(1e-3, 0.4), min_size=rows, max_size=rows).map(np.array)],
                 [0.0, -0.1, np.array([0.1] * (rows + 1)), np.full(rows, -0.1)] + NON_FINITE)


def out_solver(res, args):
    W0 = np.asarray(args["W0"], dtype=float)
    assert isinstance(res, np.ndarray) and res.shape == W0.shape and np.all(np.isfinite(res)), res


SOLVERS = {
    "gradient_descent": (ls.gradient_descent, Spec(
        {"W0": _w0(), "gamma": _rows_gamma, "Ne": integer(0, 5),
         "grad_d": Kind(st.just(_grad), None, st.sampled_from([None, 1.0, "grad"]))}, out_solver)),
    "noisy_gradient_descent": (ls.noisy_gradient_descent, Spec(
        {"W0": _w0(), "gamma": _rows_gamma, "Ne": integer(0, 5), "tau": nonneg(),
         "rng": Kind(st.integers(0, 100).map(np.random.default_rng), None,
                     st.sampled_from([None, 0, "rng", np.random.RandomState(0)])),
         "grad_d": Kind(st.just(_grad), None, st.sampled_from([None, 1.0]))}, out_solver)),
    "accelerated_gradient_descent": (ls.accelerated_gradient_descent, Spec(
        {"W0": _w0(), "mu": pos(0.1, 1.0), "L": lambda a: _kind([st.floats(1.0, 4.0)], [0.0, -1.0] + NON_FINITE),
         "Ne": integer(0, 5), "output": choice("w", "u"),
         "grad_d": Kind(st.just(_grad), None, st.sampled_from([None, 2]))}, out_solver)),
    "nesterov_momentum": (ls.nesterov_momentum, Spec(
        {"mu": pos(0.1, 1.0), "L": lambda a: _kind([st.floats(1.0, 50.0), st.just(1.0)], [0.0, -2.0, 0.01] + NON_FINITE)},
        lambda res, args: None if 0 <= float(res) < 1 else pytest.fail(f"momentum {res}"))),
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_local_solver_contract(name):
    fn, spec = SOLVERS[name]
    check_contract(fn, spec)


# --------------------------------------------------------------------------- checks' instances

N_ = integer(1, 6)
QUAD = {"N": N_, "n": N_, "lam": pos(0.1, 10.0), "lam_bar": _lam_bar, "rho": pos()}

INSTANCES = {
    "Lemma2Instance": (checks.Lemma2Instance, {"kind": choice("quadratic", "logistic"), "n": N_, "lam": pos(0.1, 10.0),
                                               "lam_bar": _lam_bar,
                                               "step_factor": interval(0, 1, closed_low=False, closed_high=False),
                                               "pairs": integer(1, 500), "seed": SEED}),
    "Eq11Instance": (checks.Eq11Instance, {"rho": pos(), "lam": pos(0.1, 10.0), "lam_bar": _lam_bar,
                                           "theta": interval(0, 1, closed_low=False, closed_high=False),
                                           "n": N_, "seed": SEED}),
    "Lemma3Instance": (checks.Lemma3Instance, {**QUAD, "seed": SEED}),
    "Lemma6Instance": (checks.Lemma6Instance, {"kind": choice("zero", "l1", "box"), "N": N_, "n": N_, "rho": pos(),
                                               "weight": nonneg(), "seed": SEED}),
    "Lemma4Instance": (checks.Lemma4Instance, {"N": N_, "m": N_, "zeta": interval(0, 1, closed_low=True, closed_high=False),
                                               "p_min": interval(0, 1, closed_low=False, closed_high=True), "p_max": _p_max,
                                               "noise": nonneg(), "K": integer(1, 50), "trials": integer(2, 100),
                                               "seed": SEED}),
    "Proposition1Instance": (checks.Proposition1Instance, {**QUAD, "Ne": integer(1, 9),
                                                           "theta": interval(0, 2, closed_low=False, closed_high=False),
                                                           "seed": SEED}),
    "Proposition2Instance": (checks.Proposition2Instance, {**QUAD, "Ne": integer(1, 9),
                                                           "theta": interval(0, 2, closed_low=False, closed_high=False),
                                                           "p_min": interval(0, 1, closed_low=False, closed_high=True),
                                                           "p_max": _p_max, "tau": nonneg(), "K": integer(1, 50),
                                                           "trials": integer(2, 100), "start": choice("worst", "random"),
                                                           "start_scale": pos(), "seed": SEED}),
    "Corollary1Instance": (checks.Corollary1Instance, {**QUAD, "Ne": integer(1, 9),
                                                       "theta": interval(0, 2, closed_low=False, closed_high=False),
                                                       "tau": pos(), "K": integer(1, 50), "trials": integer(2, 100),
                                                       "seed": SEED}),
    "Proposition3Instance": (checks.Proposition3Instance, {**QUAD, "Ne": integer(1, 9), "seed": SEED}),
    "Lemma8Instance": (checks.Lemma8Instance, {"kappa": _kind([st.floats(1.0, 1e4), st.just(1.0)],
                                                              [0.5, 0.0, -1.0] + NON_FINITE),
                                               "ell": integer(0, 50), "sequence": choice("u", "w"),
                                               "grid": integer(2, 3000)}),
    "Lemma5Instance": (checks.Lemma5Instance, {"alpha": _kind([st.floats(1.01, 100.0)], [1.0, 0.5, -1.0] + NON_FINITE),
                                               "sensitivity": pos(), "sigma": pos(),
                                               "delta": interval(0, 1, closed_low=False, closed_high=False)}),
    "Proposition4Instance": (checks.Proposition4Instance, {"N": N_, "n": N_, "q": integer(1, 20), "r": nonneg(),
                                                           "rho": pos(), "Ne": integer(1, 9), "K": integer(1, 30),
                                                           "tau": pos(),
                                                           "theta": interval(0, 1, closed_low=False, closed_high=False),
                                                           "L": pos(), "alpha": _kind([st.floats(1.01, 50.0)],
                                                                                      [1.0, 0.0] + NON_FINITE),
                                                           "seed": SEED}),
    "Lemma7Instance": (checks.Lemma7Instance, {"lam": pos(0.1, 10.0), "lam_bar": _lam_bar, "n_rho": integer(1, 80),
                                               "Ne_max": integer(1, 300),
                                               "thetas": _kind([st.lists(st.floats(0.01, 1.99), min_size=1, max_size=4)
                                                                .map(tuple)], [(), (0.0,), (2.0,), (math.nan,)],
                                                               st.sampled_from([None, 0.5, "0.5"]))}),
}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_checks_instance_contract(name):
    cls, params = INSTANCES[name]
    check_contract(cls, Spec(params, out_is(cls), examples=60))


# --------------------------------------------------------------------------- ALI-DPFL's client data

def _images(args=None) -> Kind:
    good = st.integers(1, 4).map(lambda n: np.zeros((n, 1, 2, 2), np.float32))
    bad = st.sampled_from([np.zeros((3, 2, 2), np.float32), np.zeros((3, 1, 2, 2), np.float64),
                           np.full((2, 1, 2, 2), np.nan, np.float32), np.full((2, 1, 2, 2), np.inf, np.float32)])
    return Kind(good, bad, st.sampled_from([None, [[0.0]], "x"]))


def _labels(args: dict) -> Kind:
    x = args.get("x")
    n = x.shape[0] if isinstance(x, np.ndarray) and x.ndim >= 1 else 2
    return Kind(st.just(np.zeros(n, np.int64)), st.sampled_from([np.zeros(n + 1, np.int64), np.zeros(n, np.float32),
                                                                np.zeros((n, 1), np.int64)]),
                st.sampled_from([None, [0] * n, "y"]))


def test_client_data_contract():
    check_contract(ClientData, Spec({"x": _images(), "y": _labels}, out_is(ClientData),
                                    reported_as={"x": "x", "y": "y"}, examples=60))


# --------------------------------------------------------------------------- problems

def _spd(args=None) -> Kind:
    good = st.integers(1, 3).flatmap(lambda N: st.integers(1, 3).map(
        lambda n: np.broadcast_to(np.eye(n), (N, n, n)).copy()))
    bad = st.sampled_from([np.zeros((0, 2, 2)), np.ones((2, 2)), np.full((1, 2, 2), np.nan), -np.eye(2)[None]])
    return Kind(good, bad, st.sampled_from([None, "A", np.array([["a"]])]))


def _b(args: dict) -> Kind:
    A = args.get("A")
    shape = A.shape[:2] if isinstance(A, np.ndarray) and A.ndim == 3 else (1, 2)
    return Kind(st.just(np.zeros(shape)), st.sampled_from([np.zeros((shape[0] + 1, shape[1])), np.full(shape, np.inf)]),
                st.sampled_from([None, "b"]))


PROBLEMS = {
    "QuadraticProblem": (quadratic.QuadraticProblem, Spec({"A": _spd(), "b": _b}, out_is(quadratic.QuadraticProblem),
                                                          examples=40)),
    "random_quadratic": (quadratic.random_quadratic, Spec(
        {"N": integer(1, 4), "n": integer(1, 4), "lam": pos(0.1, 10.0), "lam_bar": _lam_bar, "rng": SEED,
         "include_extremes": BOOL}, out_is(quadratic.QuadraticProblem), examples=40)),
    "generate_logistic_data": (logistic.generate_logistic_data, Spec(
        {"intercept": BOOL, "N": integer(1, 3), "q": integer(1, 5),
         "n": lambda a: integer(2, 4) if a.get("intercept") is True else integer(1, 4),
         "rng": Kind(st.integers(0, 9).map(np.random.default_rng), None, st.sampled_from([None, 0, "rng"])),
         "feature_scale": nonneg(), "heterogeneity": nonneg()},
        lambda res, args: None, examples=40)),
    "logistic_v2": (logistic.logistic_v2, Spec(
        {"convex": BOOL, "seed": SEED, "N": integer(1, 3), "n": integer(1, 3), "q": integer(1, 5), "eps": pos(),
         "smoothness": choice("loose", "tight")}, out_is(logistic.LogisticProblem), examples=40)),
    "logistic_v1": (logistic.logistic_v1, Spec(
        {"seed": SEED, "N": integer(1, 3), "n": integer(2, 4), "m": integer(1, 5), "eps": pos(),
         "smoothness": choice("loose", "tight")}, out_is(logistic.LogisticProblem), examples=40)),
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_problem_constructor_contract(name):
    fn, spec = PROBLEMS[name]
    check_contract(fn, spec)


def _softmax_features(args=None) -> Kind:
    good = st.integers(2, 4).map(lambda n: np.zeros((n, N_FEATURES), np.float32))
    bad = st.sampled_from([np.zeros((3, 7), np.float32), np.full((2, N_FEATURES), np.nan, np.float32)])
    return Kind(good, bad, st.sampled_from([None, "features"]))


def _softmax_labels(args: dict) -> Kind:
    f = args.get("features")
    n = f.shape[0] if isinstance(f, np.ndarray) and f.ndim == 2 else 2
    return Kind(st.just(np.zeros(n, np.int64)), st.sampled_from([np.zeros(n + 1, np.int64), np.full(n, 10)]), None)


def test_softmax_problem_contract():
    def make(features, labels, mu):
        return SoftmaxProblem(features, labels, np.array([0, features.shape[0]]) if isinstance(features, np.ndarray)
                              and features.ndim == 2 else np.array([0, 1]), mu)
    check_contract(make, Spec({"features": _softmax_features(), "labels": _softmax_labels, "mu": nonneg()},
                              out_is(SoftmaxProblem), examples=40))


# --------------------------------------------------------------------------- head-to-head

RATE = interval(0, 1, closed_low=False, closed_high=True)
H2H = {
    "FedAvg": (h2h.FedAvg, {"lr": pos(), "local_steps": integer(1, 10), "rate": RATE}),
    "DPFL": (h2h.DPFL, {"lr": pos(), "local_steps": integer(1, 10), "rate": RATE, "clip": pos()}),
    "PrivateFedPAQ": (h2h.PrivateFedPAQ, {"lr": pos(), "local_steps": integer(1, 10), "rate": RATE, "clip": pos(),
                                          "levels": Kind(st.one_of(st.none(), st.integers(1, 100)),
                                                         st.sampled_from([0, -1]), INT_GARBAGE.filter(
                                                             lambda v: v is not None))}),
    "FedPLT": (h2h.FedPLT, {"lr": pos(), "rho": pos(), "local_steps": integer(1, 10), "clip": pos()}),
    "ALIDPFL": (ALIDPFL, {"lr": pos(), "mean_steps": integer(1, 10), "rate": RATE, "clip": pos(),
                          "lambda_omega_rule": _kind([st.just("loss")], ["", "other"],
                                                     st.sampled_from([None, 1, ["loss"]]))}),
}


@pytest.mark.parametrize("name", sorted(H2H))
def test_headtohead_algorithm_contract(name):
    cls, params = H2H[name]
    check_contract(cls, Spec(params, out_is(cls), examples=60))


@pytest.fixture(scope="module")
def tiny_softmax():
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((12, N_FEATURES)).astype(np.float32)
    feats[:, -1] = 1.0
    return SoftmaxProblem(feats, rng.integers(0, 10, 12), np.array([0, 3, 6, 9, 12]), 1e-3,
                          feats[:4].copy(), rng.integers(0, 10, 4))


def test_headtohead_run_contract(tiny_softmax):
    """``run`` of non-private FedAvg on a 4-client problem, one or two rounds (the budget pays
    for 1-2 rounds of up to 2 messages of 32*7850 bits)."""
    bits = 32 * N_FEATURES * 10

    def call(uplink_budget_bits, clients_per_round, seed, eval_rounds, delta, progress):
        return h2h.run(tiny_softmax, h2h.FedAvg(local_steps=1), epsilon=None, delta=delta,
                       uplink_budget_bits=uplink_budget_bits, clients_per_round=clients_per_round, seed=seed,
                       eval_rounds=eval_rounds, progress=progress)

    check_contract(call, Spec(
        {"uplink_budget_bits": _kind([st.sampled_from([4.0 * bits, 2.5 * bits * 2])], [0.0, -1.0] + NON_FINITE),
         "clients_per_round": _kind([st.integers(1, 2)], [0, 5, -1], INT_GARBAGE),
         "seed": SEED, "eval_rounds": integer(1, 3),
         "delta": interval(0, 1, closed_low=False, closed_high=False), "progress": BOOL},
        lambda res, args: None if res["rounds"] >= 1 else pytest.fail(str(res)), examples=25))


def test_headtohead_run_rejects_a_non_problem():
    with pytest.raises(TypeError, match="problem"):
        h2h.run("mnist", h2h.FedAvg(), epsilon=None, delta=1e-5, uplink_budget_bits=1e9, clients_per_round=1, seed=0)


# --------------------------------------------------------------------------- privacy audit

RATE_GARBAGE = st.sampled_from([None, "0.5", np.array(["a"]), True, np.array([True])])
RATES = _kind([st.floats(0.0, 1.0), st.lists(st.floats(0.0, 1.0), min_size=0, max_size=3).map(np.array)],
              [-0.1, 1.5, math.nan, np.array([0.5, 2.0])], st.sampled_from([None, "0.5", np.array(["a"]), True]))


def _scores_kind(args=None) -> Kind:
    return Kind(st.lists(st.floats(-5, 5), min_size=4, max_size=12).map(np.array),
                st.sampled_from([np.array([1.0, 2.0]), np.array([0.0, 1.0, np.nan, 2.0]), np.zeros(0)]),
                st.sampled_from([None, np.array(["a"] * 4), np.zeros((2, 2)) + 1j]))


AUDIT = {
    "clopper_pearson_upper": (audit.clopper_pearson_upper, Spec(
        {"n": integer(1, 100), "k": lambda a: _kind([st.integers(0, a["n"]) if isinstance(a.get("n"), int)
                                                     and not isinstance(a.get("n"), bool) and a["n"] >= 1
                                                     else st.just(0)], [-1], INT_GARBAGE),
         "alpha": interval(0, 1, closed_low=False, closed_high=False)},
        lambda res, args: None if 0 <= res <= 1 else pytest.fail(str(res)))),
    "epsilon_from_rates": (audit.epsilon_from_rates, Spec(
        {"fpr": RATES, "fnr": lambda a: _kind([st.floats(0.0, 1.0), st.just([0.5])], [-0.1, 1.5, math.nan], RATE_GARBAGE),
         "delta": interval(0, 1, closed_low=True, closed_high=False)},
        lambda res, args: None if np.all(np.asarray(res) >= 0) else pytest.fail(str(res)))),
    "gdp_mu_from_rates": (audit.gdp_mu_from_rates, Spec(
        {"fpr": RATES, "fnr": lambda a: _kind([st.floats(0.0, 1.0), st.just([0.5])], [-0.1, 1.5, math.nan], RATE_GARBAGE)},
        lambda res, args: None if np.all(np.asarray(res) >= 0) else pytest.fail(str(res)))),
    "epsilon_from_mu": (audit.epsilon_from_mu, Spec(
        {"mu": _kind([st.floats(0.0, 20.0), st.just(math.inf)], [-1.0, math.nan]),
         "delta": interval(0, 1, closed_low=False, closed_high=False)},
        lambda res, args: None if res >= 0 else pytest.fail(str(res)))),
    "audit": (audit.audit, Spec(
        {"scores_out": _scores_kind(), "scores_in": _scores_kind(),
         "delta": interval(0, 1, closed_low=True, closed_high=False),
         "confidence": interval(0, 1, closed_low=False, closed_high=False),
         "seed": SEED, "heldout": BOOL, "union": BOOL, "interval": BOOL},
        lambda res, args: None if res.epsilon_lower >= 0 else pytest.fail(str(res)), examples=50)),
}


@pytest.mark.parametrize("name", sorted(AUDIT))
def test_privacy_audit_contract(name):
    fn, spec = AUDIT[name]
    check_contract(fn, spec)
