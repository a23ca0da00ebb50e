"""Theorem 1 of DP-FedPAQ (eq. 18 / closed form 36) and the budget of eq. (11): hand-computed
constants, the printed-vs-corrected differences (errata items 1, 2, 4, 5, 6, 7), bad input."""

from __future__ import annotations

import math

import pytest

from fedrepro.dpfedpaq import theorem1 as t


def _small(**kw):
    base = dict(L=2.0, mu=1.0, sigma2=1.0, G2=1.0, lam2=1.0, q=0.0, d=1, b=1, n=10, N=2, M=1, E=1)
    base.update(kw)
    return t.Theorem1Constants(**base)


def test_recursion_constants_by_hand():
    D = t.recursion_constants(_small())
    assert D["D1"] == 0.0
    assert D["D2"] == pytest.approx(2 * math.e + 6.5, rel=1e-15)
    assert D["D3"] == pytest.approx(4 * math.e, rel=1e-15)
    assert D["D4"] == 8.0 and D["D5"] == 0.0
    D = t.recursion_constants(_small(q=2.0, N=4, M=2))
    # 2·q·G²·(N−M)/(MN) + qG²/N = 2·2·2/8 + 2/4
    assert D["D1"] == pytest.approx(1.5, rel=1e-15)


def test_closed_form_by_hand():
    c = _small(E=2, lam2=0.0, sigma2=0.0)  # D2 = D3 = 0, D4 = 8: only init and drift
    out = t.closed_form_bound(c, K=3, x0_dist2=5.0, gamma0=10.0)
    assert out.terms["init"] == pytest.approx((10 / 16) ** 2 * 5, rel=1e-15)
    assert out.terms["drift"] == pytest.approx(16 * 8 * 1 / 16, rel=1e-15)
    assert out.total == pytest.approx(sum(out.terms.values()), rel=1e-15)


def test_closed_form_equals_alpha_over_k_plus_gamma():
    c = _small(E=5, q=0.5, N=10, M=3, epsilon=1.0, b=2, n=100, d=3)
    g0 = t.lr_offset(c, "paper")
    K = 7
    out = t.closed_form_bound(c, K, 0.0, g0, "as_printed")
    alpha = t.alpha_constant(c, "as_printed")
    assert out.total == pytest.approx(alpha / (K + g0 / c.E), rel=1e-12)  # (34) -> (36): item 3


def test_printed_privacy_term_lacks_mu_squared():
    """Errata item 1: at M = 1 the proof's 16·D5·E³/(μ²T) equals the printed term / μ²."""
    c = _small(mu=0.01, L=1.0, M=1, N=50, epsilon=1.0, b=2, n=100, d=7, E=4, q=0.3)
    T = 400
    printed = t.theorem1_bound(c, T, 1.0, variant="as_printed").terms["privacy"]
    proof = 16 / c.mu**2 * t.recursion_constants(c, "as_printed")["D5"] * c.E**3 / T
    assert proof / printed == pytest.approx(1 / c.mu**2, rel=1e-12)


def test_corrected_keeps_noise_under_full_participation():
    """Errata item 4: with M = N the printed D5 vanishes although noise is added."""
    c = _small(N=5, M=5, epsilon=1.0, b=1, n=50, E=2, d=4)
    assert t.recursion_constants(c, "as_printed")["D5"] == 0.0
    assert t.recursion_constants(c, "corrected")["D5"] > 0.0


def test_lr_offsets():
    c = _small(L=100.0, mu=1.0, E=10)
    assert t.lr_offset(c, "printed") == 40.0
    assert t.lr_offset(c, "paper") == 4 * 100.0**2
    assert t.lr_offset(c, "relaxed") == pytest.approx(4 * math.sqrt(2) * 100 * 9, rel=1e-15)


def test_drift_term_does_not_need_heterogeneity():
    """Errata item 5 (Remark 6): the (E−1)² term is 128G²(E−1)²/(μ²T) > 0 at λ = 0."""
    c = _small(lam2=0.0, E=5)
    term = t.theorem1_bound(c, 100, 0.0).terms["drift"]
    assert term == pytest.approx(128 * 1.0 * 16 / 100, rel=1e-15)


def test_heterogeneity_term_increases_with_E_under_budget_coupling():
    """Errata item 6: with M = αE the λ-term of (18) grows with E."""
    alpha = 1.0
    values = [t.theorem1_bound(_small(N=200, M=int(alpha * E), E=E, n=1000), 1000, 0.0)
              .terms["heterogeneity"] for E in (2, 5, 10, 50)]
    assert all(b > a for a, b in zip(values, values[1:], strict=False))


def test_experimental_schedule_not_of_theorem_form():
    """Errata item 7: 0.1/(1 + kE/100) = 4/(μ(kE + γ0)) forces μ = 0.4, γ0 = 100."""
    c = _small(mu=0.4, L=1.0, E=10)
    for k in (0, 3, 17):
        assert t.learning_rate(k, c, 100.0) == pytest.approx(0.1 / (1 + k * 10 / 100), rel=1e-14)
    c = _small(mu=1e-3, L=1.0, E=10)
    assert t.learning_rate(0, c, 100.0) != pytest.approx(0.1, rel=1e-3)


def test_budget_schedules_and_smallest_E():
    rows = t.budget_schedules(1000.0, 100, 10.0, 5, (1, 2, 5, 10))
    assert rows == [{"E": 1, "K": 100, "M": 1, "bits": 1000.0}, {"E": 2, "K": 50, "M": 2, "bits": 1000.0},
                    {"E": 5, "K": 20, "M": 5, "bits": 1000.0}, {"E": 10, "K": 10, "M": 5, "bits": 500.0}]
    assert t.smallest_feasible_E(1000.0, 100, 3, 10.0) == 3  # floor(100/3)·3·10 = 990 <= 1000 < 1500
    assert t.smallest_feasible_E(1.0, 10, 1, 10.0) is None


@pytest.mark.parametrize("kw, name", [
    (dict(mu=3.0), "mu"), (dict(M=3), "M"), (dict(b=11), "b"), (dict(b=6, epsilon=1.0, E=2), "b"), (dict(q=-1.0), "q"),
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.0, delta=0.5), "delta"), (dict(E=0), "E"),
])
def test_bad_constants(kw, name):
    with pytest.raises(ValueError, match=name):
        _small(**kw)


def test_bad_arguments():
    c = _small()
    with pytest.raises(ValueError, match="variant"):
        t.theorem1_bound(c, 10, 1.0, variant="x")
    with pytest.raises(ValueError, match="^rule must be one of"):
        t.lr_offset(c, "x")
    with pytest.raises(ValueError, match="T"):
        t.theorem1_bound(c, 0, 1.0)
    with pytest.raises(ValueError, match="x0_dist2"):
        t.theorem1_bound(c, 10, -1.0)
    with pytest.raises(ValueError, match="budget_bits"):
        t.budget_schedules(0.0, 10, 1.0, 2)
    with pytest.raises(ValueError, match="E"):
        t.budget_schedules(10.0, 10, 1.0, 2, (11,))
