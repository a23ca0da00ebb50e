"""DP-FedPAQ's Monte Carlo checks of Lemmas 1–3, the decomposition (22) and Theorem 1, against
closed forms on the isotropic instance (every record's loss (μ/2)‖x‖², so x* = 0 and the only
randomness is the Gaussian noise): one round maps x to (1 − ημ)^E x plus the mean of the
devices' noises, whence, for M of N devices and per-coordinate noise variance ς²,

    A = dς²(1/M − 1/N),  B = dς²/N,  C = (1 − ημ)^{2E}‖x‖²,  E‖x_{k+1}‖² = C + dς²/M,

and over K rounds E‖x_K‖² follows D_{k+1} = (1 − η_kμ)^{2E} D_k + dς_k²/M exactly. Also the
lemmas' right-hand sides (eqs. 23–25) and the synthetic ridge problem's data and minimiser
(the same draws; scipy's least squares). Monte Carlo tolerances: 5 standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from fedrepro.dpfedpaq.checks import lemmas, synthetic, theorem
from fedrepro.dpfedpaq.theorem1 import Theorem1Constants


def test_lemma_bounds_are_eqs_23_to_25():
    c = Theorem1Constants(L=4.0, mu=0.5, sigma2=2.0, G2=3.0, lam2=0.7, q=0.4, d=50, b=4, n=200, N=20, M=5, E=6,
                          epsilon=1.5, delta=1e-4)
    eta, dist2, noise_var = 0.01, 2.0, 1e-3
    N, M, E, q, G2, s2, lam2, b, d, n, eps, delta, L, mu = 20, 5, 6, 0.4, 3.0, 2.0, 0.7, 4, 50, 200, 1.5, 1e-4, 4.0, 0.5
    e = math.e
    log = math.log(1.25 * E * b / (n * delta))
    a = (2 * q * G2 * (N - M) / (M * N) * E**2 * eta**2 + 4 * e * s2 * (N - M) / (b * M * N) * E * eta**2
         + 8 * e * lam2 * (N - M) / (M * N) * E * (E - 1) * eta**2
         + 256 * d * G2 * b**2 * (1 + q) * (N - M) * log / (M * (N - 1) * n**2 * eps**2) * E**4 * eta**2)
    b24 = q * G2 / N * E**2 * eta**2
    c25 = (1 - mu * eta) ** E * dist2 + (3 * L * lam2 / mu + s2 / (b * N)) * E * eta**2 + 8 * G2 * E * (E - 1) ** 2 * eta**2
    out = lemmas.lemma_bounds(c, eta, dist2, noise_var)
    # 1e-13 relative: the paper's expressions transcribed
    assert out["lemma1"] == pytest.approx(a, rel=1e-13)
    assert out["lemma2"] == pytest.approx(b24, rel=1e-13)
    assert out["lemma2-corrected"] == pytest.approx(b24 + (1 + q) * d * noise_var / N, rel=1e-13)
    assert out["lemma3"] == pytest.approx(c25, rel=1e-13)


def _iso(N=6, n=10, d=4, mu=0.5):
    return synthetic.isotropic_problem(N, n, d, mu)


def test_isotropic_problem_and_its_constants_in_closed_form():
    mu, R, d, s = 0.5, 3.0, 4, 2
    p = _iso(d=d, mu=mu)
    assert np.all(p.A == 0) and np.all(p.Y == 0) and np.all(p.x_star == 0)
    c, k = theorem.theorem_constants(p, R, E=2, M=3, b=2, s=s, epsilon=1.0)
    # exact: L = μ, μ, σ² = 0, λ² = 0, G = μR on B(0, R); q = min(d/s², √d/s)
    assert (k["L"], k["mu"], k["sigma2"], k["lam2"]) == (mu, mu, 0.0, 0.0)
    assert k["G"] == pytest.approx(mu * R, rel=1e-15) and c.G2 == pytest.approx((mu * R) ** 2, rel=1e-15)
    assert c.q == pytest.approx(min(d / s**2, math.sqrt(d) / s), rel=1e-15)


def test_one_round_terms_and_checks_against_closed_forms():
    N, M, n, d, mu, E, b, eta, std, trials = 6, 2, 10, 4, 0.5, 2, 2, 0.3, 0.2, 6000
    p = _iso(N, n, d, mu)
    c = Theorem1Constants(L=mu, mu=mu, sigma2=0.0, G2=1.0, lam2=0.0, q=0.0, d=d, b=b, n=n, N=N, M=M, E=E)
    x = np.array([1.0, -0.5, 0.25, 2.0])
    mc = lemmas.one_round(p, c, x, eta, clip=100.0, s=None, noise_std=std, trials=trials,
                          rng=np.random.default_rng(5))
    shrink = (1 - eta * mu) ** (2 * E)
    want = {"A": d * std**2 * (1 / M - 1 / N), "B": d * std**2 / N, "C": shrink * float(x @ x),
            "total": shrink * float(x @ x) + d * std**2 / M}
    for key, w in want.items():
        # 5 Monte Carlo standard errors (C is deterministic here: round-off only)
        assert abs(mc[key] - w) <= 5 * mc[f"{key}_se"] + 1e-12 * w, key
    assert mc["A"] > 0.01 and mc["B"] > 0.001  # the noise terms are visible
    r = lemmas.check_decomposition(mc)
    assert r.observed == abs(mc["cross"]) and r.bound == 4 * mc["cross_se"]  # exact
    bounds = {"lemma1": 1.0, "lemma2": want["B"] * 0.5, "lemma2-corrected": 1.0, "lemma3": want["C"]}
    r = lemmas.check_lemma("lemma2", mc, bounds)  # B against half its true value: must fail
    assert r.observed == mc["B"] and not r.holds
    r = lemmas.check_lemma("lemma3", mc, bounds)
    assert r.holds == (mc["C"] <= want["C"] + 4 * mc["C_se"])


def test_check_theorem1_against_the_exact_recursion():
    N, M, n, d, mu, E, b, R, eps, K, trials = 5, 2, 10, 3, 0.5, 2, 2, 20.0, 100.0, 6, 4000
    p = _iso(N, n, d, mu)
    c, k = theorem.theorem_constants(p, R, E=E, M=M, b=b, s=None, epsilon=eps, delta=1e-4)
    x0 = np.array([1.0, 2.0, -1.0])
    r = theorem.check_theorem1(p, c, R, k["G"], T=K * E, trials=trials, s=None, reading=("as_printed", "printed"),
                               rng=np.random.default_rng(2), x0=x0)
    gamma = E * b / n
    g0 = 4 * E  # the printed step size η_k = 4/(μ(kE + 4E))
    D = float(x0 @ x0)
    for kk in range(K):
        eta = 4 / (mu * (kk * E + g0))
        sens = 4 * eta * E * (mu * R)  # Δ = 4ηEG, G = μR
        var = 8 * gamma**2 * sens**2 * math.log(1.25 * gamma / 1e-4) / eps**2  # eq. (16)
        D = (1 - eta * mu) ** (2 * E) * D + d * var / M
    # 5 Monte Carlo standard errors
    assert abs(r.observed - D) <= 5 * r.details["se"], (r.observed, D)
    assert r.details["applicable"]  # no iterate left B(0, R): no clipping happened
    noiseless = float(x0 @ x0) * math.prod((1 - 4 / (kk * E + g0)) ** (2 * E) for kk in range(K))
    assert D > 1.5 * noiseless  # the noise matters on this instance
    T, G2 = K * E, (mu * R) ** 2  # eq. (18) with L = μ, σ² = λ² = q = 0
    bound = (16 * E**2 / T**2 * float(x0 @ x0) + 128 * G2 / mu**2 * (E - 1) ** 2 / T
             + 4096 * d * G2 * b**2 * math.log(1.25 * gamma / 1e-4) / (M * n**2 * eps**2) * E**3 / T)
    assert r.bound == pytest.approx(bound, rel=1e-12)  # 1e-12 relative


def test_make_problem_data_and_minimiser_by_scipy():
    N, n, d, mu_reg, het = 4, 30, 5, 0.5, 1.0
    p = synthetic.make_problem(np.random.default_rng(3), N=N, n=n, d=d, mu_reg=mu_reg, heterogeneity=het)
    rng = np.random.default_rng(3)  # the same draws, in the documented order
    means = het * rng.standard_normal((N, 1, d))
    A = (means + 0.5 * rng.standard_normal((N, n, d))) / math.sqrt(d)
    w = rng.standard_normal(d) + het * rng.standard_normal((N, d))
    Y = np.array([[float(A[i, j] @ w[i]) for j in range(n)] for i in range(N)]) + 0.1 * rng.standard_normal((N, n))
    np.testing.assert_allclose(p.A, A, rtol=1e-15)
    np.testing.assert_allclose(p.Y, Y, rtol=1e-12, atol=1e-14)
    # x* = argmin (1/(Nn)) Σ ½(aᵀx − y)² + (μ/2)‖x‖²: a least-squares problem with √μ·I rows
    stacked = np.vstack([A.reshape(-1, d) / math.sqrt(N * n), math.sqrt(mu_reg) * np.eye(d)])
    rhs = np.concatenate([Y.reshape(-1) / math.sqrt(N * n), np.zeros(d)])
    x_ref = scipy.linalg.lstsq(stacked, rhs)[0]
    np.testing.assert_allclose(p.x_star, x_ref, rtol=1e-10)  # 1e-10 relative (condition number < 10)
