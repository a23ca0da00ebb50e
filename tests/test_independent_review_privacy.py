"""Independent checks of privacy mechanisms and accounting rows of the coverage table
(``tests/independent/README.md``) that had none: each library value is compared with the same
quantity computed here from the papers' formulas with mpmath (high precision), scipy or plain
Python, without calling the function under test or its helpers.

* the analytic Gaussian mechanism's log δ(ε) (Balle & Wang 2018, Thm 8), in mpmath;
* the classical calibration (DP-FedPAQ eq. 13) and the amplified calibration (eq. 16);
* the amplification of eq. (15), its exact inversion and the ε realised by a given noise;
* the noise multipliers per device and the in-place Gaussian noise of Alg. 2, line 9;
* Fed-PLT's Proposition 4 ceiling and its best-order ADP conversion (scipy's scalar minimiser);
* the fixed-threshold audit's Clopper–Pearson bounds (an mpmath root of the binomial CDF).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from fedrepro.dpfedpaq import amplification as amp
from fedrepro.dpfedpaq import noise
from fedrepro.fedplt import privacy_bounds as pb
from fedrepro.privacy import audit, gaussian

mpmath.mp.dps = 80


def _mp_delta(eps, sens, sigma):
    """Balle & Wang Thm 8 in mpmath: Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)."""
    eps, mu = mpmath.mpf(eps), mpmath.mpf(sens) / mpmath.mpf(sigma)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def _bisect(f, lo, hi, steps=200):
    """A root of f in [lo, hi] (f(lo), f(hi) of opposite signs) by plain bisection in mpmath."""
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


def _mp_sigma(eps, delta, sens):
    """The σ with δ(ε; σ) = δ, by bisection on log σ in mpmath."""
    target = mpmath.log(mpmath.mpf(delta))
    f = lambda ls: mpmath.log(_mp_delta(eps, sens, mpmath.exp(ls))) - target  # noqa: E731
    lo, hi = mpmath.log(sens) - 6, mpmath.log(sens) + 6
    return mpmath.exp(_bisect(f, lo, hi))


def _mp_epsilon(delta, sens, sigma):
    """The ε with δ(ε; σ) = δ (δ(0) > δ on the instances used)."""
    target = mpmath.log(mpmath.mpf(delta))
    f = lambda e: mpmath.log(_mp_delta(e, sens, sigma)) - target  # noqa: E731
    return _bisect(f, 0, 60)


@pytest.mark.parametrize("eps, sens, sigma", [(0.5, 1.0, 2.0), (1.0, 1.0, 0.7), (3.0, 2.0, 1.0),
                                              (10.0, 1.0, 0.5), (0.2, 1.0, 0.1), (0.0, 1.0, 1.0)])
def test_analytic_gaussian_log_delta_against_mpmath(eps, sens, sigma):
    got = gaussian.analytic_gaussian_log_delta(eps, sens, sigma)
    want = float(mpmath.log(_mp_delta(eps, sens, sigma)))
    # 1e-10 relative on log δ (the library works in log-CDFs in float64; some instances have δ < 1e-100)
    assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("eps, delta, sens", [(0.3, 1e-5, 1.0), (0.9, 1e-8, 2.5), (4.0, 1e-3, 0.1)])
def test_classical_sigma_is_eq13(eps, delta, sens):
    want = mpmath.mpf(sens) * mpmath.sqrt(2 * mpmath.log(mpmath.mpf(1.25) / mpmath.mpf(delta))) / mpmath.mpf(eps)
    # 1e-14 relative: one square root and a log in float64
    assert gaussian.classical_gaussian_sigma(eps, delta, sens) == pytest.approx(float(want), rel=1e-14)


@pytest.mark.parametrize("eps, delta, sens, gamma", [(0.5, 1e-5, 1.0, 0.1), (2.0, 1e-6, 0.3, 0.5),
                                                     (8.0, 1e-5, 1.0, 1.0)])
def test_paper_noise_std_is_eq16(eps, delta, sens, gamma):
    g = mpmath.mpf(gamma)
    want = mpmath.sqrt(8 * g**2 * mpmath.mpf(sens) ** 2 * mpmath.log(mpmath.mpf(1.25) * g / mpmath.mpf(delta)))
    want /= mpmath.mpf(eps)
    # 1e-14 relative: the same closed form in float64
    assert amp.paper_noise_std(eps, delta, sens, gamma) == pytest.approx(float(want), rel=1e-14)


@pytest.mark.parametrize("eps0, p", [(0.7, 0.01), (0.7, 1.0), (5.0, 0.3), (1e-6, 0.5), (40.0, 1e-4)])
def test_amplified_epsilon_is_eq15(eps0, p):
    want = mpmath.log(1 + mpmath.mpf(p) * mpmath.expm1(mpmath.mpf(eps0)))
    # 1e-14 relative (log1p/expm1 forms keep small ε₀ accurate)
    assert amp.amplified_epsilon(eps0, p) == pytest.approx(float(want), rel=1e-14)


@pytest.mark.parametrize("eps, delta, sens, gamma", [(0.5, 1e-5, 1.0, 0.1), (2.0, 1e-6, 0.3, 0.5),
                                                     (8.0, 1e-5, 1.0, 0.05)])
def test_exact_noise_std_inverts_eq15_and_theorem8(eps, delta, sens, gamma):
    """σ with δ_BW(ε₀; σ) = δ/γ at ε₀ = log(1 + (e^ε − 1)/γ), solved in mpmath."""
    eps0 = mpmath.log(1 + mpmath.expm1(mpmath.mpf(eps)) / mpmath.mpf(gamma))
    want = float(_mp_sigma(eps0, mpmath.mpf(delta) / mpmath.mpf(gamma), sens))
    # 1e-10 relative: the library's Brent root has relative accuracy about 1e-12
    assert amp.exact_noise_std(eps, delta, sens, gamma) == pytest.approx(want, rel=1e-10)
    # the multipliers per device are the same calibration at unit sensitivity (and eq. 13/16)
    if sens == 1.0:
        g = np.array([gamma, 1.0, gamma])
        out = noise.noise_multipliers("exact", epsilon=eps, delta=delta, gamma=g)
        want1 = float(_mp_sigma(mpmath.log(mpmath.e ** mpmath.mpf(eps)), mpmath.mpf(delta), 1.0))
        # 1e-10 relative, as above; γ = 1 means no amplification
        np.testing.assert_allclose(out, [want, want1, want], rtol=1e-10)
        paper = noise.noise_multipliers("paper", epsilon=eps, delta=delta, gamma=g)
        np.testing.assert_allclose(paper, [math.sqrt(8 * x * x * math.log(1.25 * x / delta)) / eps for x in g],
                                   rtol=1e-13)  # 1e-13 relative: eq. (16) in float64
        plain = noise.noise_multipliers("unamplified", epsilon=eps, delta=delta, gamma=g)
        np.testing.assert_allclose(plain, math.sqrt(2 * math.log(1.25 / delta)) / eps, rtol=1e-14)


@pytest.mark.parametrize("sigma, delta, sens, gamma", [(1.0, 1e-5, 1.0, 0.1), (3.0, 1e-6, 1.0, 0.5),
                                                       (0.5, 1e-5, 0.2, 0.02)])
def test_realized_epsilon_against_mpmath(sigma, delta, sens, gamma):
    eps0 = _mp_epsilon(mpmath.mpf(delta) / mpmath.mpf(gamma), sens, sigma)
    want = float(mpmath.log(1 + mpmath.mpf(gamma) * mpmath.expm1(eps0)))
    # 1e-10 relative (Brent root in the library, relative accuracy about 1e-12)
    assert amp.realized_epsilon(sigma, delta, sens, gamma) == pytest.approx(want, rel=1e-10)


def test_sensitivities_per_mode_against_the_expressions():
    """Δ of the released update for each mode on per-device step sizes and batches:
    2ηEC (coupled runs), 4ηEC (the paper's theory), 2ηC/b (one step), C/n (the authors' code)."""
    lr, E, C = np.array([0.1, 0.05, 0.2]), 4, 1.5
    b, n = np.array([8, 16, 4]), np.array([100, 300, 50])
    kw = dict(lr=lr, local_steps=E, clip=C, batch_size=b, n_samples=n)
    want = {"rigorous": [2 * lr[i] * E * C for i in range(3)], "theory": [4 * lr[i] * E * C for i in range(3)],
            "per_step": [2 * lr[i] * C / b[i] for i in range(3)], "authors_code": [C / n[i] for i in range(3)]}
    for mode, w in want.items():
        # 1e-15 relative: products of three numbers
        np.testing.assert_allclose(noise.sensitivity(mode, **kw), w, rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_noise_is_row_scaled_normals_by_a_plain_loop(dtype):
    rng_values = np.random.default_rng(11)
    u = rng_values.normal(size=(4, 3, 5)).astype(dtype)
    std = np.array([0.3, 0.0, 2.0, 1e-3])
    want = u.astype(np.float64).copy()
    z = np.random.default_rng(12).standard_normal(u.shape)  # row-major order of the index
    norms_want = []
    for i in range(u.shape[0]):
        sq = 0.0
        for j in range(u.shape[1]):
            for k in range(u.shape[2]):
                zi = float(dtype(std[i] * z[i, j, k]))  # the noise rounded once to u's precision
                want[i, j, k] = float(dtype(dtype(u[i, j, k]) + dtype(zi)))
                sq += zi * zi
        norms_want.append(math.sqrt(sq))
    got_norms = noise.add_noise(u, std, np.random.default_rng(12))
    np.testing.assert_array_equal(u, want.astype(dtype))  # exact: the same normals, one rounding each
    # 1e-12 relative: the norms are float64 sums of the same rounded values
    np.testing.assert_allclose(got_norms, norms_want, rtol=1e-12)


def test_proposition4_limit_and_best_order_against_scipy():
    L, lam, tau, q, gamma, K, Ne, delta = 1.3, 0.4, 0.2, 40, 0.1, 25, 3, 1e-5
    c_over_alpha = L**2 / (lam * tau**2 * q**2)
    for alpha in (1.5, 2.0, 32.0):
        # 1e-14 relative: the ceiling αL²/(λτ²q²)
        assert pb.proposition4_limit(alpha, L, lam, tau, q) == pytest.approx(alpha * c_over_alpha, rel=1e-14)
    c = c_over_alpha * (1 - math.exp(-lam * gamma * K * Ne / 2))

    def adp(a):  # Lemma 5 applied to Proposition 4 at order a
        return a * c + math.log(1 / delta) / (a - 1)

    res = minimize_scalar(adp, bounds=(1 + 1e-9, 1e6), method="bounded", options={"xatol": 1e-10})
    eps, alpha_star = pb.proposition4_adp_epsilon(L, lam, tau, q, gamma, K, Ne, delta)
    # ε 1e-9 relative (a flat minimum: the value is found far more accurately than the order);
    # order 1e-4 relative
    assert eps == pytest.approx(res.fun, rel=1e-9)
    assert alpha_star == pytest.approx(res.x, rel=1e-4)
    assert eps <= res.fun * (1 + 1e-12)  # the closed form is the minimum


def _mp_cp_upper(k, n, alpha):
    """Clopper–Pearson upper bound: the p with P(Bin(n, p) ≤ k) = alpha (1 for k = n), by bisection."""
    if k == n:
        return mpmath.mpf(1)

    def cdf(p):
        return mpmath.fsum(mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)) - alpha
    return _bisect(cdf, 0, 1, steps=120)


@pytest.mark.parametrize("fp, fn, n, delta, conf", [(3, 5, 200, 1e-5, 0.95), (0, 0, 500, 1e-5, 0.95),
                                                    (20, 1, 300, 1e-3, 0.9), (0, 40, 100, 0.0, 0.99)])
def test_fixed_threshold_audit_against_mpmath_clopper_pearson(fp, fn, n, delta, conf):
    alpha = mpmath.mpf(1 - conf) / 2  # union bound over the two rates
    a, b = _mp_cp_upper(fp, n, alpha), _mp_cp_upper(fn, n, alpha)
    one = mpmath.log((1 - delta - a) / b) if 1 - delta - a > 0 else -mpmath.inf
    two = mpmath.log((1 - delta - b) / a) if 1 - delta - b > 0 else -mpmath.inf
    want = max(float(max(one, two)), 0.0)
    # 1e-9 relative: scipy's beta quantile against an mpmath root of the binomial CDF
    assert audit.audit_counts(fp, fn, n, delta=delta, confidence=conf) == pytest.approx(want, rel=1e-9, abs=1e-12)
    mu = max(float(mpmath.sqrt(2) * (mpmath.erfinv(1 - 2 * a) - mpmath.erfinv(2 * b - 1))), 0.0)
    # Φ⁻¹(1 − a) − Φ⁻¹(b) via erfinv; 1e-9 relative
    assert audit.audit_counts_mu(fp, fn, n, confidence=conf) == pytest.approx(mu, rel=1e-9, abs=1e-12)
    assert want > 0.5  # instances where the bound is far from its floor at 0


@pytest.mark.parametrize("conf, routes", [(0.95, 1), (0.95, 2), (0.99, 3)])
def test_route_confidence_is_bonferroni(conf, routes):
    # 1e-15 absolute: 1 − (1 − c)/r
    assert audit.route_confidence(conf, routes) == pytest.approx(1 - (1 - conf) / routes, abs=1e-15)


def test_exact_fields_tightness_is_the_ratio():
    # 1e-15 relative: lower / exact
    f = audit.exact_fields(0.8, 2.5, "round")
    assert f["tightness"] == pytest.approx(0.32, rel=1e-15) and f["exact_epsilon"] == 2.5
    f = audit.exact_fields(0.8, math.inf, "training")
    assert f["tightness"] is None and f["exact_reason"] == "infinite"


@pytest.mark.parametrize("gaussian_curve", [False, True])
def test_joint_audit_of_separated_scores_reaches_the_closed_form_ceiling(gaussian_curve):
    """Perfectly separated scores (60 per world, 30 evaluated): zero errors on the evaluated
    half, so each rate's Clopper–Pearson bound is u = 1 − α^{1/30} with α = (1 − c_route)/2,
    c_route = 1 − 0.05/routes; the rates route gives log((1 − δ − u)/u), the μ route
    μ = 2Φ⁻¹(1 − u) and its ε at δ (Balle & Wang, mpmath); the report is their maximum."""
    delta, conf, n = 1e-5, 0.95, 30
    routes = 2 if gaussian_curve else 1
    alpha = mpmath.mpf(0.05) / routes / 2
    u = 1 - alpha ** (mpmath.mpf(1) / n)
    eps_rates = mpmath.log((1 - delta - u) / u)
    want = eps_rates
    if gaussian_curve:
        mu = 2 * mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * u)
        want = max(eps_rates, _mp_epsilon(delta, mu, 1.0))
    out = audit.joint_audit(np.linspace(0.0, 1.0, 60), np.linspace(2.0, 3.0, 60), delta=delta,
                            gaussian=gaussian_curve, confidence=conf, seed=4)
    assert out["evaluated"] == n
    # 1e-9 relative: scipy's beta quantile and Brent roots against mpmath
    assert out["epsilon_ceiling"] == pytest.approx(float(want), rel=1e-9)
    assert out["empirical_epsilon_lower"] == pytest.approx(float(want), rel=1e-9)
    assert out["epsilon_lower_rates"] == pytest.approx(float(eps_rates), rel=1e-9)
