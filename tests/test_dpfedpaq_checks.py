"""DP-FedPAQ proofs as checks (spec §8): each statement's check holds where the paper is
right and fails, with a pinned counterexample, where it is not (book/errata.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.dpfedpaq import theorem1 as t
from fedrepro.dpfedpaq.checks import inequalities as iq
from fedrepro.dpfedpaq.checks import privacy as pc
from fedrepro.dpfedpaq.checks import quantizer as qc
from fedrepro.dpfedpaq.checks import sampling as sc


@pytest.fixture
def rng():
    return np.random.default_rng(20260611)


# ---------------------------------------------------------------- quantizer (item 1, 12)

@pytest.mark.parametrize("s", [1, 10])
def test_quantizer_unbiased_and_variance(rng, s):
    for name, v in qc.test_vectors(400, rng).items():
        assert qc.check_unbiased(v, s, 3000, rng).holds, name
        assert qc.check_variance(v, s, 3000, rng).holds, name
        assert qc.check_variance_bound(v, s).holds and qc.check_variance_bound(v, s, "tight").holds


def test_quantizer_check_catches_a_biased_quantizer(rng, monkeypatch):
    from fedrepro.dpfedpaq import quantizer as qz
    honest = qz.quantize
    monkeypatch.setattr(qz, "quantize", lambda v, s, r: 1.01 * honest(v, s, r))
    v = rng.standard_normal(400)
    assert not qc.check_unbiased(v, 10, 3000, rng).holds
    assert not qc.check_variance(v, 10, 3000, rng).holds


def test_quantizer_edge_cases(rng):
    zero = np.zeros(50)
    assert qc.check_unbiased(zero, 1, 10, rng).observed == 0.0
    onehot = np.zeros(50)
    onehot[3] = 4.0
    res = qc.check_unbiased(onehot, 1, 10, rng)
    assert res.holds and res.details["deterministic_exact"]


def test_q_exceeds_assumption4_range():
    """Spec §4 issue: q = min(d/s², √d/s) is 8.86 at s = 10, d = 7850, outside [0, 1]."""
    res = qc.check_q_range(7850, 10)
    assert not res.holds and res.observed == pytest.approx(math.sqrt(7850) / 10, rel=1e-15)
    assert qc.check_q_range(7850, 88).observed > 1 and qc.check_q_range(7850, 89).holds  # √7850 = 88.6


@pytest.mark.parametrize("s", [1, 10, 100])
def test_bits_counted(rng, s):
    res = qc.check_bits(7850, s, rng)
    assert res.holds and res.details["roundtrip"]
    assert res.observed == math.ceil(7850 * math.log2(2 * s + 1)) + 32


def test_budget_identity(rng):
    assert qc.check_budget_identity(30, 3, 4, 5, rng).holds


# ---------------------------------------------------------------- device sampling (item 2)

def test_inclusion_probabilities(rng):
    assert sc.check_inclusion(12, 4, 20000, rng).holds


def test_identity39_exact_and_detects_with_replacement_formula(rng):
    deltas = rng.standard_normal((9, 4))
    res = sc.check_identity39(deltas, 4)
    assert res.holds
    # the with-replacement value (1/M)(1/N)Σ‖Δ_i − Δ̄‖² is not what (39) states
    mean = deltas.mean(axis=0)
    with_repl = np.mean(np.sum((deltas - mean) ** 2, axis=1)) / 4
    assert abs(res.observed - with_repl) > 0.1 * with_repl


# ---------------------------------------------------------------- amplification (item 3)

@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0, 1.25])
def test_chain_holds_below_threshold(eps0):
    for link in (1, 2, 3):
        assert pc.check_chain_link(link, eps0, 10, 12, 600).holds


@pytest.mark.parametrize("eps0", [1.26, 2.5, 5.0])
def test_chain_last_link_fails_above_threshold(eps0):
    """Erratum (15): γ(e^{ε0} − 1) ≤ 2γε0 fails for ε0 > 1.2564 (ε > 2.513γ)."""
    assert pc.check_chain_link(1, eps0, 10, 12, 600).holds
    assert pc.check_chain_link(2, eps0, 10, 12, 600).holds
    assert not pc.check_chain_link(3, eps0, 10, 12, 600).holds


def test_chain_threshold_value():
    # e^x − 1 = 2x: x = 1.25643... (independent: Newton from 1.3)
    x = 1.3
    for _ in range(50):
        x -= (math.expm1(x) - 2 * x) / (math.exp(x) - 2)
    assert not pc.check_chain_link(3, x * (1 + 1e-9), 1, 1, 10).holds
    assert pc.check_chain_link(3, x * (1 - 1e-9), 1, 1, 10).holds


# ---------------------------------------------------------------- Gaussian profile (item 4)

@pytest.mark.parametrize("eps0", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("delta0", [1e-5, 1e-4, 1e-3])
def test_classical_calibration_below_one(eps0, delta0):
    res = pc.check_gaussian_profile(eps0, delta0)
    assert res.holds and res.details["profiles_agree"]


def test_profile_independent_value():
    # ε = 1, Δ = σ = 1: Φ(0.5 − 1) − e Φ(−1.5) = 0.3085375387 − e·0.0668072013 = 0.12693...
    assert pc.gaussian_profile(1.0, 1.0, 1.0) == pytest.approx(0.3085375387259869 - math.e * 0.06680720126885807,
                                                               rel=1e-12)


@pytest.mark.parametrize("eps, gamma, holds", [(0.5, 0.2, True), (1.0, 0.2, True), (1.5, 0.2, False),
                                               (2.0, 0.2, False), (2.0, 0.8, True)])
def test_per_round_epsilon(eps, gamma, holds):
    """Erratum (16): at γ = 0.2 the noise of eq. (16) gives ε > target for target ε ≥ 1.5."""
    res = pc.check_per_round_epsilon(eps, gamma)
    assert res.holds is holds


def test_training_epsilon_exceeds_per_round():
    out = pc.training_epsilon(1.0, 0.2, 10, 100, 100)
    assert out["rounds_scheduled"] == 10.0
    assert out["basic_scheduled"] > 5 * out["per_round_realized"]
    assert out["rdp_scheduled"] > out["per_round_realized"]
    # amplification by device sampling (rate M/N) lowers the composed ε
    assert out["rdp"] < out["rdp_scheduled"]


# ---------------------------------------------------------------- inequalities, recursion (7, 8)

@pytest.mark.parametrize("x", [0.0, 1e-3, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("E", [1, 5, 100])
def test_eq28(x, E):
    assert iq.check_eq28a(x / E, E).holds
    assert iq.check_eq28b(x).holds
    assert iq.check_eq30(x).holds


def test_eq30_fails_beyond_its_condition():
    assert not iq.check_eq30(1.5).holds


def test_lr_conditions_paper_vs_printed():
    """Errata item 2: γ0 = 4E violates the proof's step-size conditions when κ is large."""
    c = t.Theorem1Constants(L=25.0, mu=1e-3, sigma2=1.0, G2=1.0, lam2=1.0, q=0.0, d=10, b=1, n=100,
                            N=10, M=5, E=10)
    assert iq.check_lr_conditions(c, "paper").holds
    res = iq.check_lr_conditions(c, "printed")
    assert not res.holds and res.observed > 1e8


@pytest.mark.parametrize("gamma", [2.0, 4.0, 40.0])
def test_recursion_closed_form_dominates(gamma):
    assert iq.check_recursion(3.0, gamma, 10.0, 2000).holds
    assert iq.check_recursion(0.0, gamma, 1.0, 500).holds


def test_recursion_check_catches_a_wrong_closed_form():
    # α/(k+γ)² instead of α/(k+γ) decays too fast to dominate
    res = iq.check_recursion(3.0, 4.0, 0.0, 200)
    alpha, gamma = 3.0, 4.0
    seq, bad = 0.0, 0.0
    for k in range(200):
        seq = (1 - 2 / (k + gamma)) * seq + alpha / (k + gamma) ** 2
        bad = max(bad, seq / (alpha / (k + 1 + gamma) ** 2))
    assert res.holds and bad > 1


def test_bad_inputs():
    with pytest.raises(ValueError, match="link"):
        pc.check_chain_link(4, 1.0, 1, 1, 10)
    with pytest.raises(ValueError, match="mu\\*eta"):
        iq.check_eq28a(1.5, 2)
    with pytest.raises(ValueError, match="M"):
        sc.sample_devices(3, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="v must"):
        qc.check_unbiased(np.ones((2, 2)), 1, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="gamma"):
        iq.check_recursion(1.0, 1.0, 1.0, 10)


# ---------------------------------------------------------------- Monte Carlo checks (9-11)

from fedrepro.dpfedpaq.checks import lemmas as lm  # noqa: E402
from fedrepro.dpfedpaq.checks import synthetic as sy  # noqa: E402
from fedrepro.dpfedpaq.checks import theorem as th  # noqa: E402


@pytest.fixture(scope="module")
def ridge():
    p = sy.make_problem(np.random.default_rng(7), N=20, n=200, d=10, mu_reg=0.5)
    return p, 1.5 * float(np.linalg.norm(p.x_star))


def test_synthetic_constants_bound_sampled_points(ridge):
    """The closed-form suprema dominate the quantities at random points of the ball."""
    p, R = ridge
    k = sy.constants(p, R)
    rng = np.random.default_rng(1)
    for _ in range(20):
        h = rng.standard_normal(p.d)
        x = p.x_star + R * rng.random() * h / np.linalg.norm(h)
        g = p.local_gradients(x)
        assert np.mean(np.sum((g - g.mean(axis=0)) ** 2, axis=1)) <= k["lam2"]
        per = p.A * (p.A @ x - p.Y)[..., None] + p.mu_reg * x
        assert np.linalg.norm(per, axis=2).max() <= k["G"]
        dev = per - per.mean(axis=1, keepdims=True)
        assert np.mean(np.sum(dev**2, axis=2), axis=1).max() <= k["sigma2"]
    H = p.local_hessians()
    assert k["mu"] == pytest.approx(np.linalg.eigvalsh(H)[:, 0].min(), rel=1e-12)
    assert np.allclose(p.local_gradients(p.x_star).mean(axis=0), 0, atol=1e-12)


def test_draw_batches_are_distinct(ridge):
    idx = sy.draw_batches(np.random.default_rng(0), (50, 7), 30, 12)
    assert idx.shape == (50, 7, 12)
    assert all(len(set(row)) == 12 for row in idx.reshape(-1, 12).tolist())


def _lemma_mc(ridge, s, eps, E=5, trials=300):
    p, R = ridge
    c, k = th.theorem_constants(p, R, E=E, M=10, b=1, s=s, epsilon=eps)
    eta = 4.0 / (c.mu * t.lr_offset(c, "paper"))
    nv = t.noise_variance(c, eta)
    x = p.x_star + R / 2 * np.ones(p.d) / math.sqrt(p.d)
    mc = lm.one_round(p, c, x, eta, k["G"], s, math.sqrt(nv), trials, np.random.default_rng(3))
    return mc, lm.lemma_bounds(c, eta, R * R / 4, nv), nv, c


def test_lemmas_hold_without_noise(ridge):
    mc, b, _, _ = _lemma_mc(ridge, 4, None)
    for name in ("lemma1", "lemma2", "lemma3"):
        assert lm.check_lemma(name, mc, b).holds, name
    assert lm.check_decomposition(mc).holds


def test_lemma2_misses_the_noise(ridge):
    """Errata item 4: with noise and no quantization, B = d ς²/N > 0 = Lemma 2's bound."""
    mc, b, nv, c = _lemma_mc(ridge, None, 1.0)
    assert b["lemma2"] == 0.0
    assert not lm.check_lemma("lemma2", mc, b).holds
    assert lm.check_lemma("lemma2-corrected", mc, b).holds
    assert mc["B"] == pytest.approx(c.d * nv / c.N, rel=0.15)  # exact value, Monte Carlo error


def test_isotropic_counterexample_to_printed_theorem():
    """Errata item 1: eq. (18) as printed falls below the measured error when μ is small."""
    p = sy.isotropic_problem(20, 1000, 10, 0.05)
    c, k = th.theorem_constants(p, 2.0, E=1, M=20, b=10, s=None, epsilon=1.0)
    x0 = np.ones(10) / math.sqrt(10)
    printed = th.check_theorem1(p, c, 2.0, k["G"], T=600, trials=30, s=None, reading=("as_printed", "printed"),
                                rng=np.random.default_rng(5), x0=x0)
    corrected = th.check_theorem1(p, c, 2.0, k["G"], T=600, trials=30, s=None, reading=("corrected", "paper"),
                                  rng=np.random.default_rng(5), x0=x0)
    assert printed.details["applicable"] and not printed.holds and printed.ratio > 2
    assert corrected.holds
    # κ = 1: the printed schedule is the proof's
    assert printed.details["gamma0"] == corrected.details["gamma0"] == 4.0


def test_theorem1_holds_on_ridge(ridge):
    p, R = ridge
    c, k = th.theorem_constants(p, R, E=5, M=10, b=1, s=4, epsilon=None)
    for reading in th.READINGS:
        res = th.check_theorem1(p, c, R, k["G"], T=300, trials=4, s=4, reading=reading,
                                rng=np.random.default_rng(2))
        assert res.holds and res.ratio < 1e-2


def test_check_theorem1_catches_a_too_small_bound(ridge, monkeypatch):
    p, R = ridge
    c, k = th.theorem_constants(p, R, E=1, M=10, b=1, s=None, epsilon=None)
    monkeypatch.setattr(th, "bound_curve", lambda *a, **kw: np.full(len(a[1]), 1e-12))
    res = th.check_theorem1(p, c, R, k["G"], T=20, trials=40, s=None, reading=("corrected", "paper"),
                            rng=np.random.default_rng(2))
    assert not res.holds


def test_sensitivity_on_a_small_softmax_problem():
    """Coupled neighbours: ‖u − u′‖ ≤ 2ηEC always, and above C/n (the authors' code)."""
    from fedrepro.dpfedpaq.checks import sensitivity as se
    from fedrepro.problems.softmax import softmax_problem

    rng = np.random.default_rng(11)
    images = rng.integers(0, 256, size=(400, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=400)
    parts = [np.arange(i * 100, (i + 1) * 100) for i in range(4)]
    P = softmax_problem(images, labels, parts, mu=1e-3)
    d = se.coupled_differences(P, np.zeros((785, 10)), 0.1, 5, 0.2, 1.0, 30, rng)
    assert se.check_sensitivity(d, "rigorous", 0.1, 5, 1.0).holds
    assert not se.check_sensitivity(d, "authors_code", 0.1, 5, 1.0).holds
    clip = se.check_clip_norms(P, 0.01 * rng.standard_normal((785, 10)), np.arange(50), 1.0)
    assert clip["closed_form"].holds and clip["clipped"].holds
