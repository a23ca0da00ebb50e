"""Fed-PLT's Proposition 4 (RDP bound) and Lemma 5 (RDP → ADP)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.fedplt import privacy_bounds as fedplt
from fedrepro.privacy import gaussian

ARGS = dict(L=1.0, lam=0.5, tau=0.1, q=250, gamma=0.1)


def test_proposition4_is_the_papers_expression():
    alpha, L, lam, tau, q, gamma, K, Ne = 3.0, 2.0, 0.4, 0.5, 100, 0.2, 30, 5
    expected = alpha * L**2 / (lam * tau**2 * q**2) * (1 - math.exp(-lam * gamma * K * Ne / 2))
    # 1e-13 relative: same expression, expm1 form.
    assert fedplt.proposition4_rdp_bound(alpha, L, lam, tau, q, gamma, K, Ne) == pytest.approx(expected, rel=1e-13, abs=0)


def test_proposition4_grows_with_rounds_and_saturates():
    vals = [fedplt.proposition4_rdp_bound(2.0, **ARGS, K=k, Ne=5) for k in range(0, 400, 10)]
    # strictly increasing while e^{-λγKNe/2} is resolvable in double precision, then flat
    assert vals[0] == 0.0 and np.all(np.diff(vals[:10]) > 0) and np.all(np.diff(vals) >= 0)
    limit = fedplt.proposition4_limit(2.0, ARGS["L"], ARGS["lam"], ARGS["tau"], ARGS["q"])
    assert vals[9] < limit and vals[-1] <= limit
    # 1e-12 relative: e^{-0.025·K·Ne} is below 1e-40 at K·Ne = 5000.
    assert fedplt.proposition4_rdp_bound(2.0, **ARGS, K=1000, Ne=5) == pytest.approx(limit, rel=1e-12)


def test_proposition4_depends_on_rounds_times_local_steps():
    # 1e-14 relative: K·Ne enters only through the product.
    assert fedplt.proposition4_rdp_bound(2.0, **ARGS, K=20, Ne=5) == pytest.approx(
        fedplt.proposition4_rdp_bound(2.0, **ARGS, K=10, Ne=10), rel=1e-14)


def test_lemma5_formula():
    # 1e-15 relative: ε + log(1/δ)/(α − 1).
    assert fedplt.lemma5_rdp_to_dp(0.3, 5.0, 1e-5) == pytest.approx(0.3 + math.log(1e5) / 4, rel=1e-15)


def test_lemma5_holds_for_the_gaussian_mechanism():
    """δ_exact(ε_Lemma5) ≤ δ on random draws: the conversion is a valid (ε, δ) guarantee."""
    gen = np.random.default_rng(5)
    n = 2000
    alpha = 1 + np.exp(gen.uniform(np.log(0.05), np.log(255), n))
    sigma = np.exp(gen.uniform(np.log(0.1), np.log(30), n))
    delta = 10 ** gen.uniform(-12, -1, n)
    worst = -np.inf
    for a, s, d in zip(alpha, sigma, delta, strict=False):
        eps = fedplt.lemma5_rdp_to_dp(gaussian.gaussian_rdp(a, 1.0, s), a, d)
        worst = max(worst, gaussian.analytic_gaussian_log_delta(eps, 1.0, s) - math.log(d))
    assert worst <= 0.0


def test_adp_epsilon_uses_the_best_order():
    eps, alpha_star = fedplt.proposition4_adp_epsilon(**ARGS, K=50, Ne=5, delta=1e-5)
    grid = np.linspace(1.001, 400, 200_001)
    by_grid = min(fedplt.lemma5_rdp_to_dp(fedplt.proposition4_rdp_bound(a, **ARGS, K=50, Ne=5), a, 1e-5)
                  for a in grid[::100])
    assert eps <= by_grid
    # 1e-12 relative: the closed-form minimiser evaluated through the public functions.
    assert eps == pytest.approx(fedplt.lemma5_rdp_to_dp(
        fedplt.proposition4_rdp_bound(alpha_star, **ARGS, K=50, Ne=5), alpha_star, 1e-5), rel=1e-12)
    assert fedplt.proposition4_adp_epsilon(**ARGS, K=0, Ne=5, delta=1e-5) == (0.0, math.inf)


@pytest.mark.parametrize("kwargs,name", [
    (dict(alpha=1.0), "alpha"), (dict(L=0.0), "L"), (dict(lam=-1.0), "lam"), (dict(tau=0.0), "tau"),
    (dict(q=0), "q"), (dict(gamma=0.0), "gamma"), (dict(K=-1), "K"), (dict(K=1.5), "K"), (dict(Ne=0), "Ne"),
])
def test_proposition4_bad_inputs(kwargs, name):
    args = dict(alpha=2.0, **ARGS, K=10, Ne=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        fedplt.proposition4_rdp_bound(**args)


def test_lemma5_bad_inputs():
    with pytest.raises(ValueError, match="delta"):
        fedplt.lemma5_rdp_to_dp(0.1, 2.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        fedplt.lemma5_rdp_to_dp(0.1, 0.5, 1e-5)
    with pytest.raises(ValueError, match="rdp_epsilon"):
        fedplt.lemma5_rdp_to_dp(-0.1, 2.0, 1e-5)
