"""The PLD composition of the subsampled Gaussian mechanism (``fedrepro.privacy.subsampled``):
grid sizing and its limit, the sparse/dense composition, the argument handling of
``composed_epsilon``, and the add-direction hockey-stick divergence.

Expected values come from dp-accounting used directly (the accountant ``composed_epsilon`` wraps),
from 40-digit mpmath integrals and roots, or from closed forms; never from the module's output.
"""

from __future__ import annotations

import math
import sys
import warnings

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting.pld import pld_pmf, privacy_loss_distribution

from fedrepro.privacy import subsampled


def _pld(sigma: float, p: float, width: float, sens: float = 1.0):
    """dp-accounting's add-or-remove PLD of the p-subsampled Gaussian, built directly."""
    return privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sensitivity=sens, sampling_prob=p, value_discretization_interval=width,
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)


def _eps_direct(delta: float, sigma: float, p: float, width: float, rounds: int, sens: float = 1.0) -> float:
    pld = _pld(sigma, p, width, sens)
    if rounds > 1:
        pld = pld.self_compose(rounds)
    return float(pld.get_epsilon_for_delta(delta))


# --- _pld_points: the estimate of the single-round grid ------------------------------------------------

@pytest.mark.parametrize("sigma", [0.3, 0.8, 2.0, 7.0])
@pytest.mark.parametrize("p", [1.0, 0.5, 0.01, 1e-5])
@pytest.mark.parametrize("width", [1e-2, 3e-3])
def test_pld_points_is_the_size_of_the_grid_dp_accounting_builds(sigma, p, width):
    # The estimate (loss range / width + 2) of the number of points of the single-round PMFs (both
    # directions) that dp-accounting builds: within one point of the true size (the end points of
    # the range fall anywhere inside their grid cells).
    pld = _pld(sigma, p, width)
    size = max(pld._pmf_remove.size, pld._pmf_add.size)
    assert abs(subsampled._pld_points(sigma, p, width) - size) < 1


@pytest.mark.parametrize("sigma", [0.0, -1.0])
def test_pld_points_where_dp_accounting_cannot_build_the_bounds_is_unbounded(sigma):
    # dp-accounting rejects σ ≤ 0 with a ValueError (checked here): the estimate is then +inf (a grid
    # no limit admits), not an error of its own
    from dp_accounting.pld import privacy_loss_mechanism as plm

    with pytest.raises(ValueError):
        plm.GaussianPrivacyLoss(sigma, sensitivity=1.0, sampling_prob=0.5)
    assert subsampled._pld_points(sigma, 0.5, 1e-4) == math.inf


@pytest.mark.parametrize("sigma,sens,p,width", [(2.0, 2.5, 0.5, 1e-2), (0.3, 1.0, 0.01, 1e-2)])
def test_composed_epsilon_grid_limit_at_the_true_grid_size(monkeypatch, sigma, sens, p, width):
    # A single-round grid of n points (dp-accounting's own PMF) passes with the limit at n + 1 and
    # gives dp-accounting's ε; with the limit at n − 1 it is refused before dp-accounting runs.
    pld = _pld(sigma / sens, p, width)
    n = max(pld._pmf_remove.size, pld._pmf_add.size)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n + 1)
    assert subsampled.composed_epsilon(1e-5, p, sens, sigma, 1, width) == _eps_direct(1e-5, sigma, p, width, 1, sens)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n - 1)
    with pytest.raises(ValueError, match=r"^sigma="):
        subsampled.composed_epsilon(1e-5, p, sens, sigma, 1, width)


def test_composed_epsilon_grid_limit_is_inclusive(monkeypatch):
    # "At most MAX_PLD_POINTS points": a limit equal to the estimate itself is not exceeded.
    est = subsampled._pld_points(0.8, 0.5, 1e-2)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", est)
    assert subsampled.composed_epsilon(1e-5, 0.5, 1.0, 0.8, 1, 1e-2) == _eps_direct(1e-5, 0.8, 0.5, 1e-2, 1)


@pytest.mark.parametrize("sigma,sens", [(1e-100, 1e55), (1e-150, 1e50)])
def test_composed_epsilon_tiny_noise_is_refused_without_floating_point_warnings(sigma, sens):
    # σ/Δ = 1e-155 (dp-accounting's bounds overflow) and 1e-200 (divide by zero): the grid would be
    # unbounded; refused with the ValueError, the numerical warnings of the estimate silenced.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^sigma="):
            subsampled.composed_epsilon(1e-5, 0.5, sens, sigma, 2, 1e-2)


# --- _self_compose: sparse/dense as dp-accounting decides, and the composed-grid limit -----------------

def _sparse(size: int) -> pld_pmf.SparsePLDPmf:
    probs = np.arange(1.0, size + 1.0)
    probs /= probs.sum() * (1 + 1e-3)
    return pld_pmf.SparsePLDPmf({3 * i - 2: float(q) for i, q in enumerate(probs)}, 1e-2, 1e-3 / (1 + 1e-3), True)


def _same_pmf(a, b, rtol=0.0):
    assert type(a) is type(b)
    da, db = a.to_dense_pmf(), b.to_dense_pmf()
    assert da._lower_loss == db._lower_loss
    np.testing.assert_allclose(da._probs, db._probs, rtol=rtol, atol=0)
    assert da._infinity_mass == pytest.approx(db._infinity_mass, rel=rtol, abs=0)


@pytest.mark.parametrize("size,rounds", [(2, 9), (2, 10), (10, 3), (10, 4), (3, 6), (3, 7), (1, 2), (1, 1000)])
def test_self_compose_is_dp_accountings_own(size, rounds):
    # Sparse while size^rounds ≤ 1000 (pairwise), dense beyond (FFT): the same type and the same
    # numbers as dp-accounting's SparsePLDPmf.self_compose, at both sides of each switch.
    pmf = _sparse(size)
    _same_pmf(subsampled._self_compose(pmf, rounds), pmf.self_compose(rounds, 1e-15))


def test_self_compose_of_a_one_point_pmf_is_dense_beyond_1000_rounds():
    # Documented difference: a one-point PMF is densified beyond 1000 rounds (dp-accounting keeps
    # it sparse and composes it pairwise); the numbers are dp-accounting's to round-off.
    pmf = _sparse(1)
    out = subsampled._self_compose(pmf, 1001)
    assert isinstance(out, pld_pmf.DensePLDPmf)
    _same_pmf(out, pmf.self_compose(1001, 1e-15).to_dense_pmf(), rtol=1e-12)


def test_self_compose_sparse_tail_truncation():
    # The last pairwise step truncates at most 1e-15 of tail mass: a point of mass 1e-17 is dropped
    # into the infinity mass (pessimistic), a point of mass 1e-3 is kept (dp-accounting with 1e-15).
    pmf = pld_pmf.SparsePLDPmf({-5: 0.5 - 1e-17, 0: 1e-17, 4: 0.5}, 1e-2, 0.0, True)
    out = subsampled._self_compose(pmf, 2)
    assert isinstance(out, pld_pmf.SparsePLDPmf)
    assert out._loss_probs == pmf.self_compose(2, 1e-15)._loss_probs
    assert sum(out._loss_probs.values()) > 1 - 1e-12


def _dense_bell() -> pld_pmf.DensePLDPmf:
    i = np.arange(41)
    probs = np.exp(-0.5 * ((i - 20) / 2.0) ** 2)
    return pld_pmf.DensePLDPmf(1e-2, -7, probs / probs.sum(), 0.0, True)


def test_self_compose_grid_limit_at_the_true_composed_size(monkeypatch):
    # The composed grid's true size n is the length of dp-accounting's own result; the limit at n
    # passes (and gives that result), at n − 1 raises, the message giving n.
    pmf = _dense_bell()
    expected = pmf.self_compose(6, 1e-15)
    n = len(expected._probs)
    assert 6 * 40 + 1 > n > 100 and expected._lower_loss > 6 * pmf._lower_loss  # both tails truncated
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n)
    _same_pmf(subsampled._self_compose(pmf, 6), expected)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n - 1)
    with pytest.raises(ValueError, match=rf"^rounds=6 too many for this PLD: the composed privacy-loss grid would need "
                                         rf"{n} points \(at most {n - 1}\)"):
        subsampled._self_compose(pmf, 6)


def test_self_compose_grid_limit_applies_to_two_point_sparse_pmfs(monkeypatch):
    # size 2, 10 rounds: 2^10 > 1000, densified (by dp-accounting too), so the limit applies.
    pmf = _sparse(2)
    n = len(pmf.self_compose(10, 1e-15)._probs)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n - 1)
    with pytest.raises(ValueError, match=r"^rounds=10 too many"):
        subsampled._self_compose(pmf, 10)


def test_self_compose_grid_limit_applies_to_densified_sparse_pmfs(monkeypatch):
    pmf = _sparse(4)  # 4^5 > 1000: densified
    expected = pmf.self_compose(5, 1e-15)
    n = len(expected._probs)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n)
    _same_pmf(subsampled._self_compose(pmf, 5), expected)
    monkeypatch.setattr(subsampled, "MAX_PLD_POINTS", n - 1)
    with pytest.raises(ValueError, match=r"^rounds=5 too many"):
        subsampled._self_compose(pmf, 5)


# --- composed_epsilon: dp-accounting's ε, argument handling -------------------------------------------

@pytest.mark.parametrize("sigma,p,width,rounds", [(1.0, 0.3, 1e-3, 1), (0.5, 0.9, 2e-3, 1), (1.0, 0.3, 2e-3, 2),
                                                  (2.0, 1.0, 5e-3, 2), (0.8, 0.05, 1e-2, 7)])
def test_composed_epsilon_is_dp_accountings_epsilon(sigma, p, width, rounds):
    # Bit for bit: the same PLD, composed as PrivacyLossDistribution.self_compose does (one round:
    # the single-round PLD itself, not an FFT self-composition of it).
    assert subsampled.composed_epsilon(1e-6, p, 1.0, sigma, rounds, width) == _eps_direct(1e-6, sigma, p, width, rounds)


@pytest.mark.parametrize("sigma,sens", [(3.0, 0.7), (3e-150, 1e-150), (1e150, 1e150 / 3)])
def test_composed_epsilon_passes_sigma_and_sensitivity_as_given_inside_the_range(sigma, sens):
    # σ, Δ ∈ [1e-150, 1e150] (end points included): dp-accounting gets them as they are (its ε
    # differs in the last digits from the one built with σ/Δ and sensitivity 1).
    assert subsampled.composed_epsilon(1e-5, 0.5, sens, sigma, 2, 1e-2) == _eps_direct(1e-5, sigma, 0.5, 1e-2, 2, sens)


@pytest.mark.parametrize("sigma,sens", [(1e-159, 1e-160), (1e-155, 1e-156), (1e159, 1e160), (1.0, 1e-200),
                                        (1e300, 1e-10)])
def test_composed_epsilon_outside_the_range_uses_the_ratio(sigma, sens):
    # σ or Δ outside [1e-150, 1e150]: the PLD of noise min(σ/Δ, 1e150) and sensitivity 1.
    ratio = min(sigma / sens, 1e150)
    assert subsampled.composed_epsilon(1e-5, 0.5, sens, sigma, 2, 1e-2) == subsampled.composed_epsilon(
        1e-5, 0.5, 1.0, ratio, 2, 1e-2)
    assert subsampled.composed_epsilon(1e-5, 0.5, 1.0, ratio, 2, 1e-2) == _eps_direct(1e-5, ratio, 0.5, 1e-2, 2)


@pytest.mark.parametrize("sigma,sens", [(1e100, 1e-60), (1e150, 1e-150)])
def test_composed_epsilon_of_a_huge_noise_ratio_is_zero(sigma, sens):
    # σ/Δ = 1e160, 1e300: each round is (0, p·TV)-DP with TV = 2Φ(Δ/(2σ)) − 1 < 1e-160, so three
    # rounds are (0, 3p·TV)-DP and ε = 0 at δ = 1e-5 (as at σ/Δ = 1e150, where the call returns 0).
    assert 3 * 0.5 * _tv_mp(sens / sigma) < 1e-5
    assert subsampled.composed_epsilon(1e-5, 0.5, sens, sigma, 3) == 0.0


@pytest.mark.parametrize("width", [0.0, -1e-3, 1.5, 2.0])
def test_composed_epsilon_discretization_range(width):
    with pytest.raises(ValueError, match=r"^discretization must lie in \(0, 1\]"):
        subsampled.composed_epsilon(1e-5, 0.5, 1.0, 1.0, 2, width)


def test_composed_epsilon_discretization_one_is_accepted():
    assert subsampled.composed_epsilon(1e-5, 0.5, 1.0, 1.0, 2, 1.0) == _eps_direct(1e-5, 1.0, 0.5, 1.0, 2)


def _tv_mp(mu: float) -> float:
    # total variation of N(0, 1) and N(μ, 1): 2Φ(μ/2) − 1 = erf(μ/(2√2)) (40 digits; the erf form
    # keeps them for μ far below 1e-40)
    mpmath.mp.dps = 40
    return float(mpmath.erf(mpmath.mpf(mu) / (2 * mpmath.sqrt(2))))


def test_composed_epsilon_at_a_subnormal_rate():
    # p = 1e-310 (subnormal), 1000 rounds, Δ/σ = 2/2: each round is (0, p·TV)-DP, so ε = 0 once
    # 1000·p·TV ≤ δ; just below that δ the answer is an upper estimate > 0 (dp-accounting at the
    # smallest normal rate).
    p, rounds = 1e-310, 1000
    threshold = rounds * p * _tv_mp(1.0)
    assert subsampled.composed_epsilon(threshold * 1.01, p, 2.0, 2.0, rounds, 1e-2) == 0.0
    below = subsampled.composed_epsilon(threshold * 0.99, p, 2.0, 2.0, rounds, 1e-2)
    assert below > 0
    assert below == _eps_direct(threshold * 0.99, 2.0, sys.float_info.min, 1e-2, rounds, 2.0)


def test_composed_epsilon_at_a_subnormal_rate_exactly_at_the_threshold():
    # Δ/σ = 20: TV = erf(20/(2√2)) = 1 − 1.5e-23, 1.0 in floats; p = 2^-1030, 1024 rounds, δ =
    # 1024·p = 2^-1020 exactly: rounds·p·TV ≤ δ holds with equality, so ε = 0 (the guarantee
    # (0, rounds·p·TV) meets δ); one ulp below that δ it does not (dp-accounting's estimate: inf).
    mpmath.mp.dps = 40
    assert 1 - mpmath.erf(mpmath.mpf(20) / (2 * mpmath.sqrt(2))) < mpmath.mpf(2) ** -60
    p, rounds, delta = 2.0**-1030, 1024, 2.0**-1020
    assert subsampled.composed_epsilon(delta, p, 1.0, 0.05, rounds, 1.0) == 0.0
    assert subsampled.composed_epsilon(delta * (1 - 2.0**-52), p, 1.0, 0.05, rounds, 1.0) > 0


def test_composed_epsilon_near_rate_one_falls_back_to_rate_one():
    # dp-accounting fails for p = 1 − 1e-13 at σ = 0.3 ("a must be greater than b"); the release
    # at that rate is post-processing of the one at rate 1: ε at rate 1 (dp-accounting directly).
    p = 1 - 1e-13
    with pytest.raises(ValueError, match="a must be greater than b"):
        _pld(0.3, p, 1e-3)
    assert subsampled.composed_epsilon(1e-5, p, 1.0, 0.3, 2, 1e-3) == _eps_direct(1e-5, 0.3, 1.0, 1e-3, 2)


# --- _log_delta_add: H_{e^ε}(Q‖P) against a 40-digit hockey-stick integral ----------------------------

def _hockey_add_mp(eps: float, p: float, mu: float) -> float:
    """∫ max(0, q − e^ε p) for q = N(0, 1), p = (1 − p)N(0, 1) + pN(μ, 1) (40 digits); the crossing
    point of the densities found by a root search, not by its closed form."""
    mpmath.mp.dps = 40
    e, pp, m = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(p), mpmath.mpf(mu)

    def diff(x):
        return mpmath.npdf(x) - e * ((1 - pp) * mpmath.npdf(x) + pp * mpmath.npdf(x, m))

    def ratio(x):  # q/p − e^ε in log form, monotone decreasing in x
        return -mpmath.log((1 - pp) + pp * mpmath.exp(m * x - m * m / 2)) - mpmath.mpf(eps)

    lo, hi = mpmath.mpf(-1e4), mpmath.mpf(1e4)
    if ratio(hi) >= 0 or ratio(lo) <= 0:
        raise AssertionError("no crossing in range")
    for _ in range(400):  # bisection to 40 digits
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio(mid) > 0 else (lo, mid)
    x0 = (lo + hi) / 2
    return float(mpmath.quad(diff, [-mpmath.inf, x0 - 10, x0]))


@pytest.mark.parametrize("eps,p,mu", [(0.1, 0.5, 1.0), (0.02, 0.9, 0.1), (0.05, 0.3, 5.0), (0.5, 1.0, 2.0),
                                      (1e-5, 0.2, 1e-3), (1.0, 0.95, 8.0)])
def test_log_delta_add_against_the_hockey_stick_integral(eps, p, mu):
    # 1e-9 relative: log-CDF closed form against a 40-digit quadrature.
    expected = _hockey_add_mp(eps, p, mu)
    assert expected > 0
    assert math.exp(subsampled._log_delta_add(eps, p, mu)) == pytest.approx(expected, rel=1e-9, abs=0)


def test_log_delta_add_limits():
    # μ = inf: P = (1 − p)Q + p·(mass at infinity), H = 1 − e^ε(1 − p); at p = 1, H = 1.
    assert math.exp(subsampled._log_delta_add(0.1, 0.5, math.inf)) == pytest.approx(1 - math.exp(0.1) * 0.5, rel=1e-14)
    assert subsampled._log_delta_add(0.3, 1.0, math.inf) == 0.0
    # e^{−ε} ≤ 1 − p: Q/P ≤ 1/(1 − p) ≤ e^ε everywhere, H = 0; μ = 0: P = Q.
    assert subsampled._log_delta_add(math.log(2), 0.5, 3.0) == -math.inf
    assert subsampled._log_delta_add(1.0, 0.3, 3.0) == -math.inf
    assert subsampled._log_delta_add(0.1, 0.5, 0.0) == -math.inf
    # just inside the cut: e^{−ε} slightly above 1 − p, H > 0 and tiny
    expected = _hockey_add_mp(0.69, 0.5, 3.0)
    assert math.exp(subsampled._log_delta_add(0.69, 0.5, 3.0)) == pytest.approx(expected, rel=1e-8, abs=0)


# --- subsampled_gaussian_epsilon near ε = 0 -----------------------------------------------------------

def _delta_mp(eps, p, mu):
    """max(H(P‖Q), H(Q‖P)) at e^ε from the two 40-digit closed forms in the normal CDF."""
    mpmath.mp.dps = 40
    e, pp, m = mpmath.mpf(eps), mpmath.mpf(p), mpmath.mpf(mu)
    e1 = mpmath.log(1 + (mpmath.exp(e) - 1) / pp)
    rem = pp * (mpmath.ncdf(m / 2 - e1 / m) - mpmath.exp(e1) * mpmath.ncdf(-m / 2 - e1 / m))
    inner = 1 - mpmath.exp(-e)
    add = mpmath.mpf(0)
    if pp > inner:
        z = mpmath.log((pp - inner) / pp) / m + m / 2
        add = mpmath.ncdf(z) - mpmath.exp(e) * ((1 - pp) * mpmath.ncdf(z) + pp * mpmath.ncdf(z - m))
    return max(rem, add)


@pytest.mark.parametrize("p,mu,frac", [(0.3, 1.0, 0.5), (0.05, 2.0, 0.9), (0.8, 0.5, 0.999), (0.5, 1.0, 0.99999)])
def test_subsampled_epsilon_just_below_the_zero_epsilon_delta(p, mu, frac):
    # δ a fraction of δ(0) = p·TV (between δ(0)/e and δ(0)): ε is small and positive; the 40-digit
    # root of δ(ε) = target (bisection), 1e-10 relative, and 2e-14 absolute (the root search's
    # absolute tolerance 1e-14 plus round-off; ε = 6.2e-6 in the last case).
    delta0 = p * _tv_mp(mu)
    assert float(_delta_mp(0.0, p, mu)) == pytest.approx(delta0, rel=1e-14)
    target = mpmath.mpf(delta0 * frac)
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _delta_mp(mid, p, mu) > target else (lo, mid)
    expected = float((lo + hi) / 2)
    assert expected > 0
    got = subsampled.subsampled_gaussian_epsilon(delta0 * frac, p, 1.0, 1.0 / mu)
    assert got == pytest.approx(expected, rel=1e-10, abs=0)
    assert abs(got - expected) <= 2e-14


def test_subsampled_epsilon_is_zero_at_or_above_the_zero_epsilon_delta():
    delta0 = 0.3 * _tv_mp(1.0)
    assert subsampled.subsampled_gaussian_epsilon(delta0 * 1.001, 0.3, 1.0, 1.0) == 0.0
    assert subsampled.subsampled_gaussian_epsilon(0.5, 0.3, 1.0, 1.0) == 0.0
