"""DP-FedPAQ's proofs-as-checks and Theorem 1 against a direct evaluation of the same
statements on one instance each, written here from the paper (Mohammadi et al., eqs. 13, 15,
16, 18, 28–34 and Appendix A): both sides of each inequality in mpmath (50 digits) or by a plain
loop, and the RDP accountant of ``training_epsilon`` against dp-accounting. No library helper
computes an expected value.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from fedrepro.dpfedpaq import quantizer as qz
from fedrepro.dpfedpaq import theorem1 as t1
from fedrepro.dpfedpaq.checks import inequalities as ineq
from fedrepro.dpfedpaq.checks import privacy as pchecks
from fedrepro.dpfedpaq.checks import quantizer as qchecks

mpmath.mp.dps = 50


def _bisect(f, lo, hi, steps=200):
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    flo = f(lo)
    assert flo * f(hi) < 0
    for _ in range(steps):
        mid = (lo + hi) / 2
        fm = f(mid)
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return (lo + hi) / 2


def _bw_delta(eps, sens, sigma):
    """Balle & Wang's exact δ(ε) of the Gaussian mechanism, mpmath."""
    mu = mpmath.mpf(sens) / mpmath.mpf(sigma)
    eps = mpmath.mpf(eps)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _paper_sigma(eps, delta, gamma):
    """Eq. (16) at unit sensitivity: sqrt(8γ² ln(1.25γ/δ))/ε."""
    g = mpmath.mpf(gamma)
    return mpmath.sqrt(8 * g**2 * mpmath.log(mpmath.mpf(1.25) * g / delta)) / eps


def _realized(sigma, delta, gamma):
    """log(1 + γ(e^{ε₀} − 1)), ε₀ the exact ε at δ/γ of noise σ (unit sensitivity)."""
    target = mpmath.log(mpmath.mpf(delta) / gamma)
    eps0 = _bisect(lambda e: mpmath.log(_bw_delta(e, 1, sigma)) - target, 0, 80)
    return mpmath.log(1 + gamma * mpmath.expm1(eps0))


@pytest.mark.parametrize("x, E", [(0.3, 5), (0.01, 100), (1.0, 2)])
def test_eq28a_both_sides(x, E):
    r = ineq.check_eq28a(x, E)
    lhs, rhs = (1 - mpmath.mpf(x)) ** E, mpmath.exp(-mpmath.mpf(x) * E)
    # 1e-14 relative: float64 pow and exp
    assert r.observed == pytest.approx(float(lhs), rel=1e-14, abs=1e-300)
    assert r.bound == pytest.approx(float(rhs), rel=1e-14)
    assert r.holds == bool(lhs <= rhs)


@pytest.mark.parametrize("x", [0.0, 0.5, 1.0, 3.0])
def test_eq28b_and_eq30_both_sides(x):
    xm = mpmath.mpf(x)
    r = ineq.check_eq28b(x)
    assert r.observed == pytest.approx(float(mpmath.exp(-xm)), rel=1e-15)  # 1e-15 relative
    assert r.bound == pytest.approx(float(1 - xm + xm**2 / 2), rel=1e-15)
    assert r.holds
    r = ineq.check_eq30(x)
    assert r.observed == pytest.approx(float(1 - xm + xm**2 / 2), rel=1e-15)
    assert r.bound == pytest.approx(float(1 - xm / 2), rel=1e-15, abs=1e-16)
    assert r.holds == (x <= 1)  # (30) needs μEη ≤ 1


def _constants(**kw):
    base = dict(L=4.0, mu=0.5, sigma2=2.0, G2=3.0, lam2=0.7, q=0.4, d=50, b=4, n=200, N=20, M=5, E=6,
                epsilon=1.5, delta=1e-4)
    base.update(kw)
    return t1.Theorem1Constants(**base)


@pytest.mark.parametrize("rule", ["paper", "printed"])
def test_lr_conditions_at_round_zero(rule):
    c = _constants()
    kappa, E = 4.0 / 0.5, 6
    g0 = max(4 * E, 4 * kappa**2, 4 * math.sqrt(2) * kappa * (E - 1)) if rule == "paper" else 4 * E
    assert t1.lr_offset(c, rule) == pytest.approx(g0, rel=1e-15)  # Appendix A / Theorem 1
    eta = 4 / (0.5 * g0)  # η_0 = 4/(μγ0)
    terms = [0.5 * eta, eta * 16 / 0.5, 2 * 16 * (E - 1) ** 2 * eta**2, 0.5 * E * eta]
    r = ineq.check_lr_conditions(c, rule, 0)
    assert r.observed == pytest.approx(max(terms), rel=1e-14)  # 1e-14 relative
    assert r.holds == (max(terms) <= 1.0)
    assert r.holds == (rule == "paper")  # the proof's γ0 meets all four; the printed 4E does not here


@pytest.mark.parametrize("alpha, gamma, delta0, rounds", [(3.0, 2.5, 4.0, 200), (0.5, 10.0, 100.0, 50),
                                                          (1.0, 2.0, 0.0, 30)])
def test_recursion_by_a_plain_loop(alpha, gamma, delta0, rounds):
    d, worst = mpmath.mpf(delta0), mpmath.mpf(0)
    for k in range(rounds + 1):
        closed = (mpmath.mpf(gamma) ** 2 / (k + gamma) ** 2) * delta0 + mpmath.mpf(alpha) / (k + gamma)
        worst = max(worst, d / closed)
        d = (1 - mpmath.mpf(2) / (k + gamma)) * d + mpmath.mpf(alpha) / (k + gamma) ** 2  # (32) with equality
    r = ineq.check_recursion(alpha, gamma, delta0, rounds)
    assert r.observed == pytest.approx(float(worst), rel=1e-12)  # 1e-12 relative: float64 recursion
    assert r.holds == bool(worst <= 1 + mpmath.mpf(10) ** -12)


@pytest.mark.parametrize("eps0, E, b, n", [(0.5, 4, 10, 1000), (2.0, 10, 30, 600)])
def test_chain_links_in_mpmath(eps0, E, b, n):
    e0 = mpmath.mpf(eps0)
    p = 1 - (1 - mpmath.mpf(b) / n) ** E
    g = mpmath.mpf(E * b) / n
    chain = [mpmath.log(1 + p * mpmath.expm1(e0)), mpmath.log(1 + g * mpmath.expm1(e0)), g * mpmath.expm1(e0),
             2 * g * e0]
    for link in (1, 2, 3):
        r = pchecks.check_chain_link(link, eps0, E, b, n)
        # 1e-13 relative: log1p/expm1 in float64
        assert r.observed == pytest.approx(float(chain[link - 1]), rel=1e-13)
        assert r.bound == pytest.approx(float(chain[link]), rel=1e-13)
        assert r.holds == bool(chain[link - 1] <= chain[link] * (1 + mpmath.mpf(10) ** -12))
    assert pchecks.check_chain_link(3, eps0, E, b, n).holds == (eps0 <= 1.2564)  # e^x − 1 ≤ 2x


@pytest.mark.parametrize("eps0, delta0", [(0.5, 1e-5), (3.0, 1e-5), (8.0, 1e-3)])
def test_gaussian_profile_at_the_classical_sigma(eps0, delta0):
    sigma = mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / delta0)) / eps0  # eq. (13), Δ = 1
    want = _bw_delta(eps0, 1, sigma)
    r = pchecks.check_gaussian_profile(eps0, delta0)
    # 1e-7 relative: scipy's norm.cdf difference of two nearly equal terms in float64
    assert r.observed == pytest.approx(float(want), rel=1e-7)
    assert r.holds == bool(want <= delta0)


@pytest.mark.parametrize("eps, gamma", [(0.5, 0.1), (4.0, 0.1), (10.0, 0.5)])
def test_per_round_epsilon_in_mpmath(eps, gamma):
    delta = mpmath.mpf(1e-4)
    want = _realized(_paper_sigma(eps, delta, gamma), delta, gamma)
    r = pchecks.check_per_round_epsilon(eps, gamma, 1e-4)
    assert r.observed == pytest.approx(float(want), rel=1e-9)  # 1e-9 relative: Brent root in the library
    assert r.bound == eps
    assert r.holds == bool(want <= eps * (1 + 1e-9))


def test_training_epsilon_against_dp_accounting_and_mpmath():
    eps, gamma, M, N, K, delta, total_delta = 0.5, 0.1, 5, 50, 40, 1e-4, 1e-4
    out = pchecks.training_epsilon(eps, gamma, M, N, K, delta, total_delta)
    z = _paper_sigma(eps, mpmath.mpf(delta), gamma)
    realized = _realized(z, mpmath.mpf(delta), gamma)
    assert out["noise_multiplier"] == pytest.approx(float(z), rel=1e-14)  # eq. (16)
    assert out["per_round_realized"] == pytest.approx(float(realized), rel=1e-9)
    basic = K * mpmath.log(1 + mpmath.mpf(M) / N * mpmath.expm1(realized))  # composition of (15) over K rounds
    assert out["basic"] == pytest.approx(float(basic), rel=1e-9)
    scheduled = math.ceil(K * M / N)
    assert out["basic_scheduled"] == pytest.approx(float(scheduled * realized), rel=1e-9)
    orders = list(pchecks.RDP_ORDERS)
    for rate, count, key in ((gamma * M / N, K, "rdp"), (gamma, scheduled, "rdp_scheduled")):
        acc = rdp.RdpAccountant(orders)
        acc.compose(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(float(z))), count)
        # 1e-6 relative: the same orders (noise 1.5, where dp-accounting evaluates every order),
        # two implementations of the sampled Gaussian's RDP and
        # of the improved conversion
        assert out[key] == pytest.approx(acc.get_epsilon(total_delta), rel=1e-6)


def test_noise_variance_is_eq16_with_the_theory_sensitivity():
    c = _constants()
    eta = 0.01
    gamma = 6 * 4 / 200
    sens = 4 * eta * 6 * math.sqrt(3.0)  # Δ = 4ηEG
    want = 8 * gamma**2 * sens**2 * math.log(1.25 * gamma / 1e-4) / 1.5**2
    assert t1.noise_variance(c, eta) == pytest.approx(want, rel=1e-14)  # 1e-14 relative
    assert t1.noise_variance(c.with_(epsilon=None), eta) == 0.0


def test_theorem1_as_printed_is_eq18_of_the_paper():
    """Eq. (18) transcribed from the paper, term by term, at T = 600 iterations."""
    c = _constants()
    T, x0 = 600, 2.5
    E, M, N, mu, L, q, G2, s2, lam2, b, d, n, eps, delta = 6, 5, 20, 0.5, 4.0, 0.4, 3.0, 2.0, 0.7, 4, 50, 200, 1.5, 1e-4
    e = math.e
    want = (16 * E**2 / T**2 * x0
            + 16 / mu**2 * (2 * q * G2 / M + q * G2 / N) * E / T
            + 16 / mu**2 * (4 * e * s2 / (b * M) + 3 * L * lam2 / mu + s2 / (b * N)) / T
            + 128 * e * lam2 / (mu**2 * M) * (E - 1) / T
            + 128 * G2 / mu**2 * (E - 1) ** 2 / T
            + 4096 * d * G2 * b**2 * (1 + q) * math.log(1.25 * E * b / (n * delta)) / (M * n**2 * eps**2) * E**3 / T)
    out = t1.theorem1_bound(c, T, x0, variant="as_printed")
    assert out.total == pytest.approx(want, rel=1e-13)  # 1e-13 relative: six terms summed
    assert out.K == T // E


# ------------------------------------------------------------------ quantizer checks (eq. 20)
def _v(d=40, seed=3):
    v = np.random.default_rng(seed).standard_normal(d)
    v[5] = 0.0
    return v


def _p_loop(v, s):
    """p_i = s|v_i|/‖v‖ − ⌊s|v_i|/‖v‖⌋ and ‖v‖, one coordinate at a time."""
    norm = math.sqrt(sum(float(x) ** 2 for x in v))
    return [s * abs(float(x)) / norm - math.floor(s * abs(float(x)) / norm) for x in v], norm


def _replay(v, s, trials, seed, chunk=500):
    """The check's Q_s(v) draws (the same generator, in its chunks): per-coordinate sums and
    the summed squared errors, accumulated here coordinate by coordinate."""
    rng = np.random.default_rng(seed)
    total, sq, done = [0.0] * v.size, 0.0, 0
    while done < trials:
        m = min(chunk, trials - done)
        q = qz.quantize(np.broadcast_to(v, (m, v.size)), s, rng)
        for r in range(m):
            for i in range(v.size):
                total[i] += float(q[r, i])
                sq += (float(q[r, i]) - float(v[i])) ** 2
        done += m
    return [x / trials for x in total], sq / trials


@pytest.mark.parametrize("s", [2, 7])
def test_quantizer_variance_and_unbiasedness_statistics_by_a_plain_loop(s):
    v, trials = _v(), 1200
    p, norm = _p_loop(v, s)
    exact = (norm / s) ** 2 * sum(pi * (1 - pi) for pi in p)  # (‖v‖²/s²) Σ p_i(1 − p_i)
    mean, mc = _replay(v, s, trials, 9)
    se = math.sqrt((norm / s) ** 4 * sum(pi * (1 - pi) * (1 - 2 * pi) ** 2 for pi in p) / trials)
    r = qchecks.check_variance(v, s, trials, np.random.default_rng(9))
    assert r.details["exact"] == pytest.approx(exact, rel=1e-12)  # 1e-12 relative
    assert r.details["monte_carlo"] == pytest.approx(mc, rel=1e-10)  # same draws, other summation order
    assert r.observed == pytest.approx(abs(mc - exact) / se, rel=1e-6, abs=1e-9)
    rho = float(np.float32(norm)) / norm  # the float32 norm the message carries
    zs = [abs(mean[i] - rho * float(v[i])) / math.sqrt((norm / s) ** 2 * p[i] * (1 - p[i]) / trials)
          for i in range(v.size) if p[i] * (1 - p[i]) > 0 and trials * min(p[i], 1 - p[i]) >= 5]
    r = qchecks.check_unbiased(v, s, trials, np.random.default_rng(9))
    assert r.observed == pytest.approx(max(zs), rel=1e-6)  # the largest z-score; 1e-6 relative
    assert r.holds == (max(zs) <= 5.5)
    # the exact mean of Q_s(v)_i is ρ·sign(v_i)(‖v‖/s)(⌊s|v_i|/‖v‖⌋ + p_i) = ρ·v_i (eq. 20)
    for i in range(v.size):
        lvl = math.floor(s * abs(float(v[i])) / norm)
        assert math.copysign(norm / s * (lvl + p[i]), float(v[i])) == pytest.approx(float(v[i]), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("d, s", [(40, 2), (40, 20), (7850, 16)])
def test_quantizer_bounds_q_range_and_bits_by_hand(d, s):
    v = _v(d)
    p, norm = _p_loop(v, s)
    exact = (norm / s) ** 2 * sum(pi * (1 - pi) for pi in p)
    q = min(d / s**2, math.sqrt(d) / s)  # Assumption 4 for Q_s
    l1 = sum(abs(float(x)) for x in v)
    r = qchecks.check_variance_bound(v, s, "paper")
    assert r.observed == pytest.approx(exact, rel=1e-10) and r.bound == pytest.approx(q * norm**2, rel=1e-12)
    r = qchecks.check_variance_bound(v, s, "tight")
    assert r.bound == pytest.approx(min(d / (4 * s * s), l1 / (s * norm)) * norm**2, rel=1e-12)
    r = qchecks.check_q_range(d, s)
    assert r.observed == pytest.approx(q, rel=1e-15) and r.holds == (q <= 1)
    beta = d * mpmath.log(2 * s + 1, 2) + 32  # β(s) of eq. (11)
    packed = 32 + int(mpmath.ceil(d * mpmath.log(2 * s + 1, 2)))  # a base-(2s+1) integer plus the norm
    r = qchecks.check_bits(d, s, np.random.default_rng(1))
    assert r.observed == packed and r.bound == pytest.approx(float(beta) + 1, rel=1e-14)  # exact bits
    assert r.holds
    r = qchecks.check_budget_identity(d, s, 2, 3, np.random.default_rng(2))
    assert r.observed == r.bound == 2 * 3 * packed and r.holds  # exact: K·M fixed-length messages
