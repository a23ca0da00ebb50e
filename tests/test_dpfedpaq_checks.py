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
