"""The library's DPFL / ALI-DPFL training against an independent implementation.

``tests/independent/dpfl_reference.py`` is written from the paper (Ling et al., Alg. 1 and
§IV-B) without the library: its own CNN, one model copy per client, Opacus's ``DPOptimizer``
for clipping, noise and the division by B, a plain FedAvg loop, and the estimates ρ_i, β_i,
ξ_i in float64. Both are given the same initial weights, the same client data and generators
in the same state (the randomness protocol of :mod:`fedrepro.alidpfl.training`), so they
sample the same batches and draw the same noise.

Tolerance: the final global models agree to 1e-4 of the distance they travelled. The two
differ by float32 rounding (Opacus's per-sample gradients from hooks against our
book-keeping; Opacus's clip factor C/(‖g‖ + 1e-6) against min(1, C/‖g‖), a relative 1e-6/‖g‖;
noise std·z rounded once or twice), measured at about 1e-6 of the distance; a round computed
as a chain of the clients (each starting where the previous one stopped) is off by the whole
distance. The estimates agree to 1e-3 relative (float32 gradients in the library against
float64 in the reference, divided by ‖ŵ_i − ŵ‖)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, models, setting, training
from tests.independent.dpfl_reference import reference_dpfl, reference_estimates

SHAPE = (1, 28, 28)
SEED = 5


@pytest.fixture(scope="module")
def data() -> setting.FederatedData:
    rng = np.random.default_rng(11)
    # unequal |D_i| so that the weighting matters; images in [-1, 1] like the datasets
    clients = tuple(setting.ClientData(rng.uniform(-1, 1, (n,) + SHAPE).astype(np.float32),
                                       rng.integers(0, 10, n).astype(np.int64)) for n in (30, 60, 45))
    return setting.FederatedData(clients, rng.uniform(-1, 1, (10,) + SHAPE).astype(np.float32),
                                 rng.integers(0, 10, 10).astype(np.int64))


def _init_state() -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in models.make_cnn(SHAPE, seed=SEED).state_dict().items()}


def _flat(state: dict[str, torch.Tensor]) -> np.ndarray:
    return torch.cat([state[k].reshape(-1) for k in _init_state()]).double().numpy()


def _reference(data, **kw):
    return reference_dpfl(_init_state(), [(c.x, c.y) for c in data.clients],
                          training.client_generators(SEED, len(data.clients)), **kw)


CASES = {  # name: (RunPlan overrides, reference overrides)
    "tau1-dp": (dict(tau=1), dict(tau=1)),
    "tau3-dp": (dict(tau=3), dict(tau=3)),
    "tau3-no-noise": (dict(tau=3, noise=False), dict(tau=3, noise_on=False)),
    "tau1-non-private": (dict(tau=1, noise=False, clip=False), dict(tau=1, noise_on=False, clip_on=False)),
    "tau3-divisor-unweighted": (dict(tau=3, divisor=7.0, aggregation="unweighted"),
                                dict(tau=3, divisor=7.0, weighted=False)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("method", ["fast", "stacked"])
def test_training_agrees_with_an_independent_opacus_implementation(data, case, method):
    torch.set_num_threads(1)
    ours, theirs = CASES[case]
    rounds, q, clip, sigma, eta = 3, 0.3, 0.1, 1.1, 0.5
    tau = ours["tau"]
    plan = training.RunPlan(budget.Budgets(1.0, rounds, rounds * tau), q=q, clip_norm=clip, sigma=sigma,
                            eta=eta, eval_rounds=(), curve_every=10 ** 6, curve_size=5, seed=SEED,
                            method=method, **ours)
    lib = training.train(plan, data, return_model=True)
    ref = _reference(data, rounds=rounds, q=q, clip=clip, sigma=sigma, eta=eta, **theirs)
    w0, w_ref = _flat(_init_state()), _flat(ref["state"])
    travelled = np.linalg.norm(w_ref - w0)
    assert travelled > 0
    assert lib["sampled_records"] == ref["batch_sizes"]  # the same Poisson batches
    assert np.linalg.norm(lib["model"] - w_ref) <= 1e-4 * travelled


@pytest.mark.parametrize("method", ["fast", "stacked"])
def test_ali_estimates_agree_with_the_independent_implementation(data, method):
    """One ALI-DPFL round (τ*_0 = 1): ρ, β, ξ of the library against the reference's, the
    clients' models taken from the reference's own round and every record evaluated."""
    torch.set_num_threads(1)
    plan = training.RunPlan(budget.Budgets(1.0, 1, 4), tau=None, q=0.3, eval_rounds=(), curve_every=10 ** 6,
                            curve_size=5, seed=SEED, estimate_samples=10 ** 6, method=method)
    lib = training.train(plan, data, return_model=True)
    ref_round = _reference(data, rounds=1, tau=1, q=0.3, clip=0.1, sigma=1.1, eta=0.5)
    est = reference_estimates(_init_state(), ref_round["client_states"], [(c.x, c.y) for c in data.clients],
                              list(data.weights))
    assert est["rho"] > 0 and est["beta"] > 0
    for key in ("rho", "beta", "xi"):
        assert lib["constants"][key][0] == pytest.approx(est[key], rel=1e-3), key
    assert lib["constants"]["lam"][0] == pytest.approx(est["loss_global"], rel=1e-4)
