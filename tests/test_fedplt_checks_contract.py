"""The property-based contract (``tests/_contract.py``) on the public API of
``fedrepro.fedplt.checks`` that takes plain numbers, strings and small arrays and runs fast:
the result builder, the step sizes, the closed forms of the stochastic and privacy checks,
the statement registry, the AGD worst case, the eq. (11) and Lemma 7 checks, and the
constructors that validate their fields (``PEPInstance``, ``JacobianInstance``,
``StateSampling``). Every call either returns values of the documented type and range (a
:class:`CheckResult` never holds a NaN unless it is marked not applicable) or raises
ValueError/TypeError naming the offending parameter.

The other ``*Instance`` dataclasses (``Lemma2Instance``, ``Lemma4Instance``,
``Lemma5Instance``, ...) validate their fields when built; their contract is in
``tests/test_input_validation_contract.py``, and their checks (Monte Carlo, federated problems)
are covered by ``tests/test_fedplt_checks.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import strategies as st

from fedrepro.fedplt.checks import (
    accelerated,
    contraction,
    instances,
    jacobian,
    pep,
    privacy,
    proposition1,
    result,
    search,
    stochastic,
)
from tests._contract import Kind, Spec, check_contract
from tests.test_privacy_api_contract import FLOAT_MAX, NON_FINITE, NONNEG, POS, PROB, _kind

P = dict
TYPES = st.sampled_from(["0.5", "1", True, np.bool_(False), None, [0.5], b"1", 1j])


def _strict(low: int, high: int) -> Kind:
    """An integer parameter checked strictly: any float (even 2.0) is a wrong type."""
    return _kind([st.integers(low, high), st.sampled_from([low, high, np.int64(low)])], [low - 1, low - 7],
                 st.sampled_from(["5", True, None, [5], b"5", 2.0, 2.5, math.nan]))


def _open(low: float, high: float) -> Kind:
    """A real number in the open interval (low, high), extremes' neighbours included."""
    return _kind([st.floats(low, high, exclude_min=True, exclude_max=True),
                  st.sampled_from([math.nextafter(low, high), math.nextafter(high, low), (low + high) / 2])],
                 [low, high, low - 1.0, high + 0.5] + NON_FINITE, TYPES)


def _valid_float(value, default: float) -> float:
    """``value`` as a float where an earlier draw was a valid positive number, else ``default``."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        x = float(value)
        if math.isfinite(x) and x > 0:
            return x
    return default


def _lam_bar(args: dict) -> Kind:
    """``lam_bar`` in ``[lam, inf)`` (finite), ``lam`` itself included (``0 < lam <= lam_bar``)."""
    lam = _valid_float(args.get("lam"), 1.0)
    below = [b for b in (lam / 2, -lam) if b < lam]
    return _kind([st.just(lam), st.floats(1.0, 1e3).map(lambda f: min(lam * f, FLOAT_MAX))], below + NON_FINITE, TYPES)


def _lam_bar_strict(args: dict) -> Kind:
    """``lam_bar`` in ``(lam, inf)`` (the PEP's class needs ``lam < lam_bar``)."""
    lam = _valid_float(args.get("lam"), 1.0)
    return _kind([st.floats(1.01, 1e3).map(lambda f: lam * f), st.just(math.nextafter(lam, math.inf))],
                 [lam, lam / 2, -1.0] + NON_FINITE, TYPES)


# lam with room above it for a larger lam_bar (no float exceeds FLOAT_MAX)
LAM_PEP = _kind([st.floats(0.01, 100.0), st.sampled_from([5e-324, 1e-300, 1e300, 1, np.float64(0.7)])],
                [0.0, -1.0] + NON_FINITE, TYPES)
REAL_OR_INF = _kind([st.floats(allow_nan=False), st.sampled_from([math.inf, -math.inf, 0.0, -0.0, 3, np.float64(2.5)])],
                    [math.nan], TYPES)
FINITE = _kind([st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([-1e-12, 0, np.float64(1.0)])],
               NON_FINITE, TYPES)
BOOL = Kind(st.sampled_from([True, False, np.bool_(True)]), None, st.sampled_from([1, 0.0, "yes", None, [True]]))
VARIANT = _kind([st.sampled_from(["paper", "corrected"])], ["", "Paper", "printed"],
                st.sampled_from([None, 1, True, ["paper"], b"paper"]))
RNG = Kind(st.integers(0, 2**32).map(np.random.default_rng), None,
           st.sampled_from([None, 0, "rng", 1.5, np.random.RandomState(0)]))


def _finite(x) -> bool:
    return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


# --------------------------------------------------------------------------- output checks


def out_result(res, args):
    assert isinstance(res, result.CheckResult) and isinstance(res.holds, bool), res
    assert isinstance(res.observed, float) and isinstance(res.bound, float) and isinstance(res.ratio, float), res
    assert not math.isnan(res.observed) and not math.isnan(res.bound), res
    # the ratio is NaN exactly when the instance is marked not applicable
    assert math.isnan(res.ratio) == (res.details.get("applicable") is False), res


def out_make_result(res, args):
    out_result(res, args)
    assert res.observed == float(args["observed"]) and res.bound == float(args["bound"]), (res, args)
    assert res.details["rtol"] == args["rtol"] and res.details["atol"] == args["atol"], res


def out_step(res, args):
    # a positive step; 0 only where it underflows (2/(lam_bar + 1/rho) with 1/rho or lam_bar
    # near the float maximum)
    assert isinstance(res, float) and math.isfinite(res) and res >= 0, res


def out_nonneg_float(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res >= 0, res


def out_divergence(res, args):
    assert isinstance(res, float) and not math.isnan(res) and res >= 0, res  # +inf: mutually singular or overflow


def out_bound(res, args):
    arr = np.asarray(res)
    assert arr.shape == np.shape(np.asarray(args["k"])) and arr.dtype == np.float64, (arr, args)
    assert not np.any(np.isnan(arr)) and np.all(arr >= 0), (arr, args)  # +inf where sigma^k overflows


def out_statement(res, args):
    assert isinstance(res, search.Statement) and res.name == args["name"], res


def out_instances(res, args):
    assert isinstance(res, list) and len(res) == args["count"], res


def out_agd(res, args):
    u, w = res
    n = args["ell_max"] + 1
    assert u.shape == w.shape == (n,) and _finite(u) and _finite(w), res
    assert u[0] == w[0] == 1.0 and np.all(u >= 0) and np.all(w >= 0), res


def out_eq11(res, args):
    out_result(res, args)
    assert res.bound == 1.0 and math.isfinite(res.observed) and res.observed >= 0, res


def out_lemma7(res, args):
    out_result(res, args)
    assert 0 <= res.observed < 1 and 0 <= res.bound <= 1, res
    assert res.ratio >= 0, res  # +inf where the threshold is 0


def out_agreement(res, args):
    assert set(res) == {"count", "stable", "complex_eigenvalues", "mismatch_corrected", "mismatch_printed"}, res
    assert res["count"] == args["count"] and all(isinstance(v, int) and 0 <= v <= args["count"]
                                                  for v in res.values()), res


def out_pep_instance(res, args):
    assert isinstance(res, pep.PEPInstance), res
    try:
        step = res.step
    except ValueError as exc:  # the default step 2/(lam_bar + lam + 2/rho) beyond the float range
        assert "rho" in str(exc) and res.gamma is None, exc
        return
    assert isinstance(step, float) and math.isfinite(step) and step >= 0, res


def out_type(cls):
    def check(res, args):
        assert isinstance(res, cls), res
    return check


# --------------------------------------------------------------------------- array kinds

K_STEPS = Kind(st.one_of(st.lists(st.integers(0, 200), min_size=1, max_size=6),
                         st.integers(0, 50).map(lambda K: np.arange(K + 1)),
                         st.sampled_from([0, 3, 1e300, np.int64(7), [0.0, 2.5], np.arange(3, dtype=float)])),
               st.sampled_from([-1, [0, -1], [math.nan], [0, math.inf], -math.inf]),
               st.sampled_from(["3", ["3"], None, [True], np.array(["1"]), b"1", [[0, 1], [2]]]))


def _p_max(args: dict) -> Kind:
    """``p_max`` in ``[p_min, 1]``."""
    p_min = args.get("p_min")
    p_min = p_min if isinstance(p_min, float) and 0 < p_min <= 1 else 0.5
    below = [p_min / 2] if p_min / 2 < p_min else []
    return _kind([st.floats(0.0, 1.0).map(lambda u: min(1.0, p_min + u * (1 - p_min))), st.sampled_from([p_min, 1.0])],
                 below + [0.0, 1.5, -0.1] + NON_FINITE, TYPES)


def _dmu_sigma_seed():
    return st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(0, 2**16),
                     st.sampled_from([1e-100, 1e-6, 1.0, 1e6, 1e100]), st.booleans())


def _dmu(spec) -> np.ndarray:
    d, r, seed, scale, inside = spec
    rng = np.random.default_rng(seed)
    B = scale * rng.standard_normal((d, r))
    return B @ rng.standard_normal(r) if inside and r else rng.standard_normal(d)


DMU = Kind(st.one_of(_dmu_sigma_seed().map(_dmu),
                     st.sampled_from([[1.0], [0.0, 1.0], np.array([3]), [1e200]])),
           st.sampled_from([np.array([]), [math.nan], [1.0, math.inf], np.zeros((2, 2))]),
           st.sampled_from([None, "1", ["1"], [True], np.array(["1.0"]), b"1", [[1.0], [2.0, 3.0]]]))


def _sigma(args: dict) -> Kind:
    dmu = args.get("dmu")
    try:
        d = len(dmu) if np.asarray(dmu, dtype=float).ndim == 1 and len(dmu) else 1
    except (TypeError, ValueError):
        d = 1

    def covariance(spec):
        r, seed, scale = spec
        B = scale * np.random.default_rng(seed).standard_normal((d, r))
        return B @ B.T

    valid = st.one_of(st.tuples(st.integers(0, 5), st.integers(0, 2**16),
                                st.sampled_from([1e-100, 1e-6, 1.0, 1e6, 1e100])).map(covariance),
                      st.just(np.eye(d)), st.just(np.eye(d).tolist()), st.just(np.zeros((d, d))))
    bad = [np.full((d, d), math.nan), -np.eye(d), np.eye(d + 1), np.ones(d),
           np.where(np.eye(d) == 1, math.inf, 0.0)]
    return Kind(valid, st.sampled_from(bad),
                st.sampled_from([None, "I", [["1"]], np.array([["a"]]), np.eye(d, dtype=bool), b"1"]))


ALPHA = _kind([st.floats(1.01, 100.0), st.sampled_from([1 + 1e-9, 2, 64.5, 1e300])], [1.0, 0.5, 0, -2] + NON_FINITE,
              TYPES)
NAME = _kind([st.sampled_from(sorted(search.STATEMENTS))], ["", "Lemma2", "lemma9", "lemma 2"],
             st.sampled_from([None, 1, True, b"lemma2", ["lemma2"]]))
RADII = Kind(st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=4).map(tuple) | st.just((FLOAT_MAX, 5e-324)),
             st.sampled_from([(), (0.0,), (-1.0,), (math.nan,), (1.0, math.inf)]),
             st.sampled_from([None, "1", 1.0, ("1",), (None,), (True,), ([1.0],)]))


def _solver_norm(args: dict) -> Kind:
    norms = ["xz", "z"] if args.get("solver") == "prox" else ["xz"]
    bad = ["", "x", "Z"] + ([] if args.get("solver") == "prox" else ["z"])
    return _kind([st.sampled_from(norms)], bad, st.sampled_from([None, 1, True, ["xz"], b"xz"]))


def _gamma(args: dict) -> Kind:
    if args.get("solver") != "gd":
        return Kind(st.none(), st.sampled_from([0.1, 1.0]), st.sampled_from(["0.1", True, [0.1]]))
    lam, lam_bar, rho = args.get("lam"), args.get("lam_bar"), args.get("rho")
    try:
        upper = 2.0 / (float(lam_bar) + 1.0 / float(rho))
        assert math.isfinite(upper) and upper > 0 and 0 < float(lam) < float(lam_bar)
    except Exception:  # noqa: BLE001 - a bad earlier parameter: any positive value will do
        upper = 0.1
    return Kind(st.one_of(st.none(), st.floats(0.01, 0.99).map(lambda u: u * upper)),
                st.sampled_from([0.0, -1.0, 2 * upper, math.nan, math.inf]), st.sampled_from(["0.1", True, [0.1]]))


SPECS: dict[str, tuple] = {
    # ------------------------------------------------------------------- result
    "result.make_result": (result.make_result, Spec(
        P(observed=REAL_OR_INF, bound=REAL_OR_INF, rtol=NONNEG, atol=FINITE, applicable=BOOL), out_make_result)),
    # ------------------------------------------------------------------- step sizes
    "instances.local_step_size": (instances.local_step_size, Spec(
        P(theta=_open(0.0, 2.0), rho=POS, lam=POS, lam_bar=_lam_bar), out_step)),
    "pep.default_step": (pep.default_step, Spec(P(rho=POS, lam=POS, lam_bar=_lam_bar), out_step)),
    # ------------------------------------------------------------------- stochastic
    "stochastic.expected_gaussian_norm": (stochastic.expected_gaussian_norm, Spec(
        P(dim=_kind([st.integers(1, 10**6), st.sampled_from([1, 2, 10**18, np.int64(3)])], [0, -1, -7],
                    st.sampled_from(["5", True, None, [5], b"5", 2.0, 2.5, math.nan])), std=NONNEG),
        out_nonneg_float)),
    "stochastic.proposition2_bound": (stochastic.proposition2_bound, Spec(
        P(k=K_STEPS, S_norm=NONNEG, p_min=PROB, p_max=_p_max, start=NONNEG, nu=NONNEG), out_bound)),
    # ------------------------------------------------------------------- privacy
    "privacy.gaussian_renyi_divergence": (privacy.gaussian_renyi_divergence, Spec(
        P(alpha=ALPHA, dmu=DMU, Sigma=_sigma), out_divergence)),
    # ------------------------------------------------------------------- search
    # the registry reports its parameter ``name`` as the statement ("statement must be one of ...")
    "search.statement": (search.statement, Spec(P(name=NAME), out_statement, reported_as={"name": "statement"})),
    "search.random_instances": (search.random_instances, Spec(
        P(name=NAME, count=_strict(0, 5), rng=RNG), out_instances, reported_as={"name": "statement"}, examples=40)),
    # ------------------------------------------------------------------- accelerated
    "accelerated.agd_worst_case": (accelerated.agd_worst_case, Spec(
        P(kappa=_kind([st.floats(1.0, 1e3), st.sampled_from([1, 1.0, 1e300, FLOAT_MAX, np.float64(4.0)])],
                      [0.5, 0.0, -1.0] + NON_FINITE, TYPES),
          ell_max=_strict(0, 30), grid=_strict(2, 200)), out_agd)),
    # ------------------------------------------------------------------- contraction / Lemma 7
    "contraction.check_eq11_step_range": (contraction.check_eq11_step_range, Spec(
        P(rho=POS, lam=POS, lam_bar=_lam_bar, theta=_open(0.0, 1.0), n=_strict(1, 5), seed=_strict(0, 2**32)),
        out_eq11)),
    "proposition1.check_lemma7_one_step": (proposition1.check_lemma7_one_step, Spec(
        P(rho=POS, lam=POS, lam_bar=_lam_bar, variant=VARIANT), out_lemma7)),
    "proposition1.lemma7_condition_agreement": (proposition1.lemma7_condition_agreement, Spec(
        P(count=_strict(1, 200), rng=RNG), out_agreement)),
    # ------------------------------------------------------------------- constructors that validate
    "pep.PEPInstance": (pep.PEPInstance, Spec(
        P(lam=LAM_PEP, lam_bar=_lam_bar_strict, rho=POS, Ne=_strict(1, 50),
          solver=_kind([st.sampled_from(pep.PEP_SOLVERS)], ["", "GD", "sgd"],
                       st.sampled_from([None, 1, True, ["gd"], b"gd"])),
          gamma=_gamma, N=_strict(1, 5), norm=_solver_norm, rounds=_strict(1, 10)), out_pep_instance)),
    "jacobian.JacobianInstance": (jacobian.JacobianInstance, Spec(
        P(setup=_kind([st.sampled_from(jacobian.LOGISTIC_SETUPS)], ["", "v3", "V2"],
                      st.sampled_from([None, 2, True, ["v2"], b"v2"])),
          N=_kind([st.integers(1, 10), st.sampled_from([1, 10, np.int64(3)])], [0, 11, -1],
                  st.sampled_from(["5", True, None, [5], 2.0, 2.5])),
          smoothness=_kind([st.sampled_from(jacobian.SMOOTHNESS)], ["", "exact"],
                           st.sampled_from([None, 1, True, ["tight"]])),
          rho=POS, Ne=_strict(1, 100)), out_type(jacobian.JacobianInstance))),
    "jacobian.StateSampling": (jacobian.StateSampling, Spec(
        P(radii=RADII, per_radius=_strict(0, 5), restarts=_strict(0, 5), steps=_strict(0, 5),
          directions=_strict(0, 5), lengths=RADII), out_type(jacobian.StateSampling))),
}


@pytest.mark.parametrize("qualname", sorted(SPECS))
def test_fedplt_checks_api_contract(qualname):
    fn, spec = SPECS[qualname]
    check_contract(fn, spec)
