"""Fed-PLT's statement search (``fedplt.checks.search``) and Lemma 7's condition survey against
plain loops on the same draws: the search box of Lemma 5 mapped by hand, each instance's check
evaluated in mpmath (Balle & Wang's exact δ at Lemma 5's ε), the search's best at least the
best of its own random samples; the stability of S = [[a, c(1+a)], [2a, ζ + 2ca]] from the
roots of its characteristic polynomial, one instance at a time.
"""

from __future__ import annotations

import cmath
import math

import mpmath
import numpy as np
import pytest

from fedrepro.fedplt.checks import proposition1, search

mpmath.mp.dps = 50


def _log_box(u, lo, hi):
    return math.exp(math.log(lo) + min(max(u, 0.0), 1.0) * (math.log(hi) - math.log(lo)))


def _lemma5_ratio(alpha, sigma, delta):
    """Exact δ of the Gaussian mechanism (Δ = 1) at Lemma 5's ε, over δ."""
    eps = mpmath.mpf(alpha) / (2 * mpmath.mpf(sigma) ** 2) + mpmath.log(1 / mpmath.mpf(delta)) / (alpha - 1)
    mu = 1 / mpmath.mpf(sigma)
    exact = mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)
    return float(exact / delta)


def test_random_instances_and_evaluate_for_lemma5():
    got = search.random_instances("lemma5", 5, np.random.default_rng(3))
    rng = np.random.default_rng(3)  # the same draws: the box coordinates, then the data seeds
    U = rng.random((5, 3))
    for inst, u in zip(got, U, strict=True):
        want = (_log_box(u[0], 1.01, 100.0), _log_box(u[1], 0.1, 100.0), _log_box(u[2], 1e-10, 0.5))
        # 1e-14 relative: exp/log of the box map
        assert (inst.alpha, inst.sigma, inst.delta) == pytest.approx(want, rel=1e-14)
        assert inst.sensitivity == 1.0
        r = search.evaluate("lemma5", inst)
        # 1e-8 relative on δ_exact/δ (log-space δ in float64)
        assert r.ratio == pytest.approx(_lemma5_ratio(inst.alpha, inst.sigma, inst.delta), rel=1e-8)
        assert r.holds


def test_adversarial_search_keeps_the_best_instance_it_evaluates(monkeypatch):
    """Every instance the search evaluates is recorded (the call is passed on unchanged) and
    scored here in mpmath: the search returns the best of them, and the best of its random
    samples is among them."""
    seen = []
    original = search.evaluate

    def recording(name, instance, variant=None):
        seen.append(_lemma5_ratio(instance.alpha, instance.sigma, instance.delta))
        return original(name, instance, variant)
    monkeypatch.setattr(search, "evaluate", recording)
    res = search.adversarial_search("lemma5", np.random.default_rng(8), restarts=1, samples=6, maxiter=5)
    rng = np.random.default_rng(8)
    U = rng.random((6, 3))
    samples = [_lemma5_ratio(_log_box(u[0], 1.01, 100.0), _log_box(u[1], 0.1, 100.0), _log_box(u[2], 1e-10, 0.5))
               for u in U]
    inst = res.instance
    best = _lemma5_ratio(inst.alpha, inst.sigma, inst.delta)
    assert res.result.ratio == pytest.approx(best, rel=1e-8)  # its reported ratio is the instance's
    assert seen[:6] == pytest.approx(samples, rel=1e-12)  # the random samples come first
    assert res.evaluations == len(seen) > 6  # the Nelder–Mead steps evaluated further instances
    assert best == pytest.approx(max(seen), rel=1e-12)  # the best of everything it evaluated
    assert max(seen) > max(samples) * (1 + 1e-6)  # the local search improved on the samples here
    assert best <= 1.0  # Lemma 5 holds: no instance is found above its bound


def test_lemma7_condition_agreement_by_the_characteristic_polynomial():
    count = 400
    got = proposition1.lemma7_condition_agreement(count, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    zeta, a = rng.random(count), rng.random(count)
    c = 10 ** rng.uniform(-3, 2, count)
    stable = complex_ = mis_c = mis_p = 0
    for z, ai, ci in zip(zeta, a, c, strict=True):
        t = ai + z + 2 * ci * ai  # trace of S
        det = ai * (z + 2 * ci * ai) - 2 * ai * ci * (1 + ai)
        disc = t * t - 4 * det
        r1, r2 = (t + cmath.sqrt(disc)) / 2, (t - cmath.sqrt(disc)) / 2
        s = max(abs(r1), abs(r2)) < 1
        stable += s
        complex_ += disc < 0
        mis_c += ((1 - z) * (1 - ai) > 4 * ci * ai) != s  # the closed-form condition
        mis_p += ((1 - z) * (1 - ai) < 4 * ci * ai) != s  # Appendix B-B as printed
    # exact counts (no instance lies within round-off of |λ| = 1 on these draws)
    assert got == {"count": count, "stable": stable, "complex_eigenvalues": complex_,
                   "mismatch_corrected": mis_c, "mismatch_printed": mis_p}
    assert mis_c == 0 and mis_p == count
