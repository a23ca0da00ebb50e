"""ALI-DPFL's proofs-as-checks (``fedrepro.alidpfl.checks``) against a direct evaluation of the
same statements, written here from the paper's equations on one instance each: the observed
side by a plain loop on the same random draws (or by its exact expectation), the bound side by
the paper's formula (eq. 11 as printed, eq. 24, Lemma 3's 2√dσC/B, eq. 17 with mpmath).
No helper of the library is called for the expected values.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from fedrepro.alidpfl.checks import lemma3, statements, theorem1, theorem2

mpmath.mp.dps = 40


def _h(x, xi, beta, eta, noise):
    """h(x) of eq. (24): (ξ+N)/β·((ηβ+1)^x − 1) − η(ξ+N)x."""
    a = xi + noise
    return a / beta * ((eta * beta + 1) ** x - 1) - eta * a * x


def _chi_mean(d):
    """E‖𝒩(0, I_d)‖ = √2 Γ((d+1)/2)/Γ(d/2), in mpmath."""
    return mpmath.sqrt(2) * mpmath.gamma(mpmath.mpf(d + 1) / 2) / mpmath.gamma(mpmath.mpf(d) / 2)


def test_lemma3_error_by_a_plain_loop_on_the_same_draws():
    """Sampled and clipped case on a small client: each trial's Poisson batch, clipped sum and
    noise, one record at a time, from the same generator as the check."""
    n, d, q, sigma, clip, trials, seed = 60, 3, 0.2, 1.1, 0.1, 200, 4
    observed, bound = lemma3.lemma3_error("sampled and clipped", n=n, d=d, q=q, sigma=sigma, clip=clip,
                                          trials=trials, seed=seed)
    # the per-sample gradients: norm 5C around the direction e_1 (the check's instance)
    g_rng = np.random.default_rng(seed)
    raw = g_rng.standard_normal((n, d))
    grads = []
    for j in range(n):
        v = [(1.0 if k == 0 else 0.0) + 0.8 * raw[j, k] / math.sqrt(d) for k in range(d)]
        nv = math.sqrt(sum(c * c for c in v))
        grads.append([5 * clip * c / nv for c in v])
    full = [sum(grads[j][k] for j in range(n)) / n for k in range(d)]
    clipped = []
    for gj in grads:
        nj = math.sqrt(sum(c * c for c in gj))
        clipped.append([c * min(1.0, clip / nj) for c in gj])
    rng = np.random.default_rng(seed + 1)
    masks = np.concatenate([rng.random((100, n)) for _ in range(0, trials, 100)])[:trials]
    z = rng.standard_normal((trials, d))
    B = q * n
    total = 0.0
    for t in range(trials):
        s = [sum(clipped[j][k] for j in range(n) if masks[t, j] < q) for k in range(d)]
        e = [(s[k] + sigma * clip * z[t, k]) / B - full[k] for k in range(d)]
        total += math.sqrt(sum(c * c for c in e))
    # 1e-10 relative: the same draws, sums in another order
    assert observed == pytest.approx(total / trials, rel=1e-10)
    assert bound == pytest.approx(2 * math.sqrt(d) * sigma * clip / B, rel=1e-15)  # Lemma 3, eq. (19)
    assert observed > bound  # the statement fails on this instance (sampling and clipping ignored)


def test_lemma3_noise_only_case_against_its_exact_expectation():
    """Full batch, no clipping: the error is the noise alone, E = σC·E‖𝒩(0, I_d)‖/n."""
    n, d, sigma, clip, trials = 400, 2, 1.1, 0.1, 2000
    observed, bound = lemma3.lemma3_error("full batch, no clipping", n=n, d=d, sigma=sigma, clip=clip,
                                          trials=trials)
    exact = float(sigma * clip * _chi_mean(d) / n)
    # Monte Carlo: the norm's relative std is about 0.52 at d = 2, so 2000 trials give a standard
    # error of 1.2 %; allow 5 % (four standard errors)
    assert observed == pytest.approx(exact, rel=0.05)
    assert bound == pytest.approx(2 * math.sqrt(d) * sigma * clip / n, rel=1e-15)
    assert observed <= bound


def test_definition3_direction_against_mpmath():
    alpha, q, sigma = 6, 0.05, 1.3
    out = statements.definition3_direction(alpha, q, sigma)

    def integrand(z):
        mu0 = mpmath.npdf(z, 0, sigma)
        mu = (1 - q) * mu0 + q * mpmath.npdf(z, 1, sigma)
        return mu**alpha * mu0 ** (1 - alpha)
    a_quad = mpmath.quad(integrand, [-mpmath.inf, 0, 1, mpmath.inf])
    log_a = mpmath.log(mpmath.fsum(mpmath.binomial(alpha, k) * (1 - q) ** (alpha - k) * mpmath.mpf(q) ** k
                                   * mpmath.exp(mpmath.mpf(k * k - k) / (2 * sigma**2)) for k in range(alpha + 1)))
    # 1e-8 relative (the check's quadrature tolerance); the formula 1e-12 relative
    assert out["divergence"] == pytest.approx(float(mpmath.log(a_quad) / (alpha - 1)), rel=1e-8)
    assert out["formula"] == pytest.approx(float(log_a / (alpha - 1)), rel=1e-12)
    assert out["printed_allowed_R"] < float(mpmath.log(a_quad) / (alpha - 1))  # R ≤ formula is no RDP level


def test_clipping_as_printed_leaves_the_gradient_unchanged():
    g = np.array([3.0, 4.0])
    # exact: g / max(1, ‖g‖/‖g‖) = g, so its norm 5 exceeds C = 1
    assert statements.clipping_printed(g, 1.0) == (5.0, 1.0)


def test_eq7_residual_by_hand():
    """Printed residual = η²‖w − Σp_i b_i‖ for two steps of GD from a common w on
    F_i = ½‖w − b_i‖² (worked out by hand); corrected residual 0."""
    d, m, eta, seed = 4, 3, 0.5, 7
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((m, d))
    p = rng.dirichlet(np.ones(m))
    w = rng.standard_normal(d)
    pb = [sum(p[i] * b[i, k] for i in range(m)) for k in range(d)]
    want = eta**2 * math.sqrt(sum((w[k] - pb[k]) ** 2 for k in range(d)))
    out = statements.eq7_residual(d, m, eta, seed)
    assert out["printed"] == pytest.approx(want, rel=1e-12)  # 1e-12 relative: round-off
    assert out["corrected"] <= 1e-14  # absolute, round-off


def test_eq8_noise_and_eq11_as_printed_against_the_formulas():
    d, sigma, clip, B, xi, beta, eta = 1000, 1.1, 0.1, 90.0, 0.1, 1.0, 0.5
    got_noise, got_bound = statements.eq8_auxiliary_noise(d, sigma, clip, B)
    assert got_noise == pytest.approx(float(sigma * clip * _chi_mean(d)), rel=1e-12)  # lgamma vs mpmath
    assert got_bound == pytest.approx(2 * math.sqrt(d) * sigma * clip / B, rel=1e-15)
    h = statements.eq11_h_at_one(xi, beta, eta, d, sigma, clip, B)
    s = 2 * math.sqrt(d) * sigma * clip
    printed = (xi + s / B) / beta * ((eta * beta + 1) - 1) - eta * (xi + s) / B  # eq. (11) at x = 1
    assert h["printed"] == pytest.approx(printed, rel=1e-12)
    assert h["printed"] == pytest.approx(eta * xi * (1 - 1 / B), rel=1e-12)  # ηξ(1 − 1/B)
    assert abs(h["corrected"]) <= 1e-15  # eq. (24): h(1) = 0 up to round-off


def test_theorem1_gap_by_a_plain_loop_on_the_same_draws():
    tau, sigma, clip, B, eta, d, m, trials, seed = 4, 2.0, 1.0, 10.0, 0.5, 3, 3, 50, 2
    gaps, bound = theorem1.theorem1_gap(tau, sigma=sigma, clip=clip, batch=B, eta=eta, d=d, n_clients=m,
                                        trials=trials, seed=seed)
    inst_rng = np.random.default_rng(seed)
    base = np.linspace(0.25, 1.0, d)
    diag = [inst_rng.permutation(base) for _ in range(m)]
    b = inst_rng.standard_normal((m, d))
    p = [1.0 / m] * m
    rng = np.random.default_rng(seed + 1)
    w0 = rng.standard_normal(d)
    s = sigma * clip / B
    w = [[list(w0) for _ in range(m)] for _ in range(trials)]
    v = [list(w0) for _ in range(trials)]
    want, xi = [0.0], 0.0
    for _ in range(tau):
        for t in range(trials):  # ξ: Σ_i p_i ‖∇F_i(v) − ∇F(v)‖ at the centralised points
            gi = [[diag[i][k] * (v[t][k] - b[i, k]) for k in range(d)] for i in range(m)]
            g = [sum(p[i] * gi[i][k] for i in range(m)) for k in range(d)]
            xi = max(xi, sum(p[i] * math.sqrt(sum((gi[i][k] - g[k]) ** 2 for k in range(d))) for i in range(m)))
        zw = rng.standard_normal((trials, m, d))
        zv = rng.standard_normal((trials, d))
        total = 0.0
        for t in range(trials):
            gv = [sum(p[i] * diag[i][k] * (v[t][k] - b[i, k]) for i in range(m)) for k in range(d)]
            for i in range(m):
                w[t][i] = [w[t][i][k] - eta * (diag[i][k] * (w[t][i][k] - b[i, k]) + s * zw[t, i, k])
                           for k in range(d)]
            v[t] = [v[t][k] - eta * (gv[k] + s * zv[t, k]) for k in range(d)]
            avg = [sum(p[i] * w[t][i][k] for i in range(m)) for k in range(d)]
            total += math.sqrt(sum((avg[k] - v[t][k]) ** 2 for k in range(d)))
        want.append(total / trials)
    noise = 2 * math.sqrt(d) * sigma * clip / B
    # 1e-10 relative: the same draws, float64 sums in another order
    np.testing.assert_allclose(gaps, want, rtol=1e-10, atol=0)
    np.testing.assert_allclose(bound, [_h(x, xi, 1.0, eta, noise) for x in range(tau + 1)], rtol=1e-10, atol=1e-15)
    assert gaps[1] > bound[1] + 1e-3  # with noise, Theorem 1 fails at t = 1 (h(1) = 0)


def test_expected_gap_at_one_against_a_monte_carlo_plain_loop():
    sigma, clip, B, eta, d, m = 2.0, 1.0, 10.0, 0.5, 4, 5
    got = theorem1.expected_gap_at_one(sigma, clip, B, eta, d, m)
    rng = np.random.default_rng(3)
    trials = 20_000
    zi, zv = rng.standard_normal((trials, m, d)), rng.standard_normal((trials, d))
    diff = -eta * (zi.mean(axis=1) - zv) * sigma * clip / B  # ŵ(1) − v̂(1): the noises only
    norms = np.linalg.norm(diff, axis=1)
    se = norms.std() / math.sqrt(trials)
    # four Monte Carlo standard errors (about 0.4 % here)
    assert abs(got - norms.mean()) <= 4 * se
    # and the closed form in mpmath: η σC/B √(1 + 1/N) E‖𝒩(0, I_d)‖, 1e-12 relative
    assert got == pytest.approx(float(eta * sigma * clip / B * mpmath.sqrt(1 + mpmath.mpf(1) / m) * _chi_mean(d)),
                                rel=1e-12)


def test_theorem2_steps_by_hand():
    # Jensen step on X ∈ {0.1, 0.9} with probability ½ each: 1/E[X³] and E[1/X³]
    inv_mean, mean_inv = theorem2.jensen_step((0.1, 0.9), (0.5, 0.5))
    assert inv_mean == pytest.approx(1 / (0.5 * 0.001 + 0.5 * 0.729), rel=1e-14)
    assert mean_inv == pytest.approx(0.5 * 1000 + 0.5 / 0.729, rel=1e-14)
    assert mean_inv > inv_mean  # Jensen: the proof's direction is wrong
    # final step on X ∈ {1e-4, 0.999} with probabilities 0.01, 0.99
    ex, claim = theorem2.final_step((1e-4, 0.999), (0.01, 0.99))
    assert ex == pytest.approx(0.01 * 1e-4 + 0.99 * 0.999, rel=1e-14)
    assert claim == pytest.approx(1 / (0.01 / 1e-4 + 0.99 / 0.999) + math.sqrt(3) / 3, rel=1e-14)
    assert ex > claim
    # max of x − x³ on (0, 1): 2√3/9 at x = √3/3 (calculus), against the paper's √3/3
    got, paper = theorem2.x_minus_x3_max()
    assert got == pytest.approx(2 * math.sqrt(3) / 9, abs=1e-10)  # grid of 200,001 points
    assert paper == pytest.approx(math.sqrt(3) / 3, rel=1e-15)
    # Lemma 6 at the minimiser of βw²/2 with g̃ = 0.3: F rises by β(ηg̃)²/2, the lemma says it falls
    rise, lemma = theorem2.lemma6_noisy_step(2.0, 0.25, 0.3)
    assert rise == pytest.approx(0.5 * 2.0 * (0.25 * 0.3) ** 2, rel=1e-14)
    assert lemma == pytest.approx(0.25 * (2.0 * 0.25 / 2 - 1) * 0.09, rel=1e-14)
    assert rise > 0 > lemma
