"""What a round of DPFL / ALI-DPFL is (Ling et al., Alg. 1 line 14, Alg. 2, §IV-B), pinned.

Every client starts the round from ŵ, the server takes the |D_i|-weighted mean of the
clients' models, the clients' order does not matter, and the estimates of §IV-B are the
quantities at ŵ_i and ŵ. The expected values here are computed without :func:`train`: one
fresh model per client (``make_cnn`` + :func:`dpsgd_step` with the run's generators).
These tests failed on the training loop that aliased ŵ into the clients' parameters (a round
was a chain of the clients' steps)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from fedrepro.alidpfl import budget, dpsgd, models, setting, training

SHAPE = (1, 28, 28)


def _data(sizes=(30, 50, 40), seed=0) -> setting.FederatedData:
    rng = np.random.default_rng(seed)
    clients = tuple(setting.ClientData(rng.uniform(-1, 1, (n,) + SHAPE).astype(np.float32),
                                       rng.integers(0, 10, n).astype(np.int64)) for n in sizes)
    return setting.FederatedData(clients, rng.uniform(-1, 1, (20,) + SHAPE).astype(np.float32),
                                 rng.integers(0, 10, 20).astype(np.int64))


def _plan(rounds=1, tau=2, **kw) -> training.RunPlan:
    base = dict(budgets=budget.Budgets(1.0, rounds, rounds * (tau or 1)), tau=tau, q=0.3, eta=0.5,
                eval_rounds=(), curve_every=10 ** 6, curve_size=5, estimate_samples=25, seed=3)
    base.update(kw)
    return training.RunPlan(**base)


def _client_models(data, plan, w):
    """One round by hand: client i starts from its own copy of ``w``, tau steps with its generator."""
    gens = training.client_generators(plan.seed, len(data.clients))
    out = []
    for c, g in zip(data.clients, gens, strict=True):
        m = models.make_cnn(SHAPE, seed=plan.seed)
        vector_to_parameters(w.clone(), m.parameters())
        for _ in range(plan.tau):
            dpsgd.dpsgd_step(m, torch.from_numpy(c.x), torch.from_numpy(c.y), plan.dpsgd_settings(), g)
        out.append(parameters_to_vector(m.parameters()).detach().double())
    return torch.stack(out)


@pytest.mark.parametrize("noise", [True, False])
def test_a_round_is_the_weighted_mean_of_clients_started_from_the_global_model(noise):
    torch.set_num_threads(1)
    data, plan = _data(), _plan(noise=noise)
    w0 = parameters_to_vector(models.make_cnn(SHAPE, seed=plan.seed).parameters()).detach()
    expected = torch.from_numpy(data.weights) @ _client_models(data, plan, w0)
    got = torch.from_numpy(training.train(plan, data, return_model=True)["model"]).double()
    # the same float32 client steps, a float64 mean rounded to float32: one float32 ulp of
    # the largest entry (the chained round is off by the whole step, ~1e-5 per entry here)
    ulp = 2.0 ** -23 * float(expected.abs().max())
    assert float((got - expected).abs().max()) <= ulp
    assert float((expected - w0.double()).abs().mean()) > 100 * ulp


def test_the_order_of_the_clients_does_not_matter():
    torch.set_num_threads(1)
    data = _data()
    perm = (2, 0, 1)
    permuted = setting.FederatedData(tuple(data.clients[i] for i in perm), data.test_x, data.test_y)
    # deterministic steps (every record sampled, no noise): the draws cannot depend on the order
    plan = _plan(rounds=2, q=1.0, noise=False)
    a = training.train(plan, data, return_model=True)["model"]
    b = training.train(plan, permuted, return_model=True)["model"]
    w0 = parameters_to_vector(models.make_cnn(SHAPE, seed=plan.seed).parameters()).detach().numpy()
    ulp = 2.0 ** -23 * np.abs(a).max()
    assert np.abs(a - w0).mean() > 100 * ulp
    # the same client models summed in another order: float64 sums rounded to float32, so at
    # most one float32 ulp of the largest entry per round
    assert np.abs(a - b).max() <= 2 * ulp


def test_a_client_never_changes_the_global_model():
    """With one client whose every step is a no-op update... the global model is the client's:
    and with two clients, the second client's result is as if the first had not trained."""
    torch.set_num_threads(1)
    data = _data(sizes=(40, 40))
    plan = _plan(q=1.0, noise=False, tau=1)
    both = training.train(plan, data, return_model=True)["model"]
    alone = [training.train(plan, setting.FederatedData((c,), data.test_x, data.test_y),
                            return_model=True)["model"] for c in data.clients]
    # each single-client run uses generator 0; with q = 1 and no noise it draws nothing that matters
    np.testing.assert_allclose(both, 0.5 * alone[0] + 0.5 * alone[1], rtol=0, atol=1e-6)


def test_ali_estimates_are_taken_at_the_clients_models_and_at_the_global_model():
    torch.set_num_threads(1)
    data = _data()
    plan = _plan(tau=None, budgets=budget.Budgets(1.0, 1, 4), estimate_samples=1000)
    out = training.train(plan, data, return_model=True)
    w0 = parameters_to_vector(models.make_cnn(SHAPE, seed=plan.seed).parameters()).detach()
    local = _client_models(data, training.RunPlan(**{**plan.__dict__, "tau": 1}), w0).float()
    from fedrepro.alidpfl import tau_rule

    reports = []
    for i, c in enumerate(data.clients):
        m = models.make_cnn(SHAPE, seed=plan.seed)
        vals = []
        for w in (local[i], w0):
            vector_to_parameters(w.clone(), m.parameters())
            m.zero_grad()
            loss = torch.nn.functional.cross_entropy(m(torch.from_numpy(c.x)), torch.from_numpy(c.y))
            loss.backward()
            vals.append((float(loss.detach()), torch.cat([p.grad.reshape(-1) for p in m.parameters()]).double().numpy()))
        dist = float(torch.linalg.vector_norm((local[i] - w0).double()))
        reports.append(tau_rule.ClientReport(vals[0][0], vals[1][0], vals[0][1], vals[1][1], dist))
        assert dist > 0
    rho, beta, xi = tau_rule.estimate_constants(reports, data.weights)
    assert rho > 0 and beta > 0  # the aliased loop measured ‖ŵ_i − ŵ‖ = 0, so ρ = β = 0
    # float32 gradients of the same models: agreement to float32 rounding, amplified by 1/‖ŵ_i − ŵ‖
    assert out["constants"]["rho"][0] == pytest.approx(rho, rel=1e-3)
    assert out["constants"]["beta"][0] == pytest.approx(beta, rel=1e-3)
    assert out["constants"]["xi"][0] == pytest.approx(xi, rel=1e-4)


@pytest.mark.parametrize("tau", [None, 3])
def test_stacked_clients_equal_the_per_client_computation(tau):
    """The batched round (all clients at once) against one model per client: same draws,
    float32 rounding only (tolerance: 1e-5 of the distance travelled)."""
    torch.set_num_threads(1)
    data = _data()
    kw = dict(rounds=2, tau=tau) if tau else dict(tau=None, budgets=budget.Budgets(1.0, 3, 8))
    a = training.train(_plan(**kw), data, return_model=True)
    b = training.train(_plan(**kw, method="stacked"), data, return_model=True)
    w0 = parameters_to_vector(models.make_cnn(SHAPE, seed=3).parameters()).detach().numpy()
    assert np.array_equal(a["taus"], b["taus"])
    assert a["sampled_records"] == b["sampled_records"]
    assert np.linalg.norm(a["model"] - b["model"]) <= 1e-5 * np.linalg.norm(a["model"] - w0)
    for k in ("rho", "beta", "xi"):
        np.testing.assert_allclose(a["constants"][k], b["constants"][k], rtol=1e-3)
