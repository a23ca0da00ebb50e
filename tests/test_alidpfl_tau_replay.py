"""ALI-DPFL's τ* across a whole run, replayed by an independent implementation of the rule.

The library's run (``fedrepro.alidpfl.training.train`` with ``tau=None``, and the head-to-head
adapter ``fedrepro.headtohead.alidpfl.ALIDPFL``, which has its own round loop) is executed
with thin wrappers around ``tau_rule.estimate_constants``, ``lambda_omega`` and
``choose_tau`` that only *record their inputs* (the clients' reports, the weighted loss and the
distance from the start) and pass the call on unchanged. The test then replays every round
with :mod:`tests.independent.tau_star_reference` (ρ, β, ξ, λ, ω, N, h, G and the argmin written
from the paper's equations, no library function), keeping its own budget counter and its own
τ sequence, and asserts:

* the same τ in every round and the same number of rounds (exact: integers);
* the run's recorded constants ρ, β, ξ, λ, ω (relative 1e-9: the same float64 quantities
  summed in another order, norms of vectors of up to 6·10⁵ entries, rounding ≲ 1e-13);
* the same number of feasible τ per round (exact);
* the horizon, τ_prev and noise term the library passed to ``choose_tau`` (exact integers;
  N relative 1e-12).

λ is replayed as both runs compute it: the clients' weighted loss F_i(ŵ) at the model ŵ
broadcast at the start of the round (the reports' ``loss_global``). The rule's description
in ``tau_rule.LAMBDA_OMEGA_RULES`` ("at the new global model"), and the head-to-head adapter's
docstring, which says the library's training evaluates it at the new model, do not match
what ``training.train`` does; this test pins the behaviour as run.

Mutation check (done by hand, not committed): swapping λ and ω (training or head-to-head
loop), dropping the noise term, weighting ξ by 1/N instead of |D_i|/|D|, an off-by-one in the
head-to-head horizon, or a changed h(τ) makes these tests fail. Dropping the constant √3/3
from G does not: it moves no argmin, and a run records no G.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, setting, tau_rule, training
from fedrepro.alidpfl.models import make_cnn
from tests.independent import tau_star_reference as ref

REL = 1e-9


def _record(monkeypatch) -> list[dict]:
    """Wrap the rule's three entry points: record their inputs, call the original."""
    rounds: list[dict] = []
    est, lo, ct = tau_rule.estimate_constants, tau_rule.lambda_omega, tau_rule.choose_tau

    def estimate_constants(reports, weights):
        rounds.append({"reports": [{"loss_local": float(r.loss_local), "loss_global": float(r.loss_global),
                                    "grad_local": np.array(r.grad_local, dtype=np.float64),
                                    "grad_global": np.array(r.grad_global, dtype=np.float64),
                                    "distance": float(r.distance)} for r in reports],
                       "weights": np.array(weights, dtype=np.float64)})
        return est(reports, weights)

    def lambda_omega(rule, loss, distance_from_start):
        rounds[-1].update(rule=rule, loss=float(loss), dist=float(distance_from_start))
        return lo(rule, loss, distance_from_start)

    def choose_tau(constants, **kw):
        out = ct(constants, **kw)
        rounds[-1].update(kw=dict(kw), tau=int(out[0]), constants={k: float(getattr(constants, k)) for k in
                                                                   ("rho", "beta", "xi", "lam", "omega")})
        return out

    monkeypatch.setattr(tau_rule, "estimate_constants", estimate_constants)
    monkeypatch.setattr(tau_rule, "lambda_omega", lambda_omega)
    monkeypatch.setattr(tau_rule, "choose_tau", choose_tau)
    return rounds


def _replay_round(rec: dict, weights: np.ndarray, *, eta: float, noise: float, tau_prev: int, done: int,
                  rounds_left: int, iterations_left: int) -> dict:
    """One round of the independent rule from the recorded reports and distance."""
    rho, beta, xi = ref.estimates(rec["reports"], [float(w) for w in weights])
    loss = sum(float(w) * r["loss_global"] for w, r in zip(weights, rec["reports"], strict=True))
    lam, omega = ref.lambda_omega_loss(loss, rec["dist"])
    tau, feasible = ref.choose(tau_prev, rho=rho, beta=max(beta, 1e-300), xi=xi, lam=lam, omega=omega, eta=eta,
                               noise_term=noise, done=done, rounds_left=rounds_left,
                               iterations_left=iterations_left)
    return {"rho": rho, "beta": beta, "xi": xi, "lam": lam, "omega": omega, "loss": loss, "tau": tau,
            "feasible": feasible}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    tr_y = np.repeat(np.arange(10), 40)
    tr_x = rng.integers(0, 256, (400, 28, 28), dtype=np.uint8)
    te_y = rng.integers(0, 10, 60)
    te_x = rng.integers(0, 256, (60, 28, 28), dtype=np.uint8)
    s = setting.FederatedSetting(n_clients=4, n_shards=40, shards_per_client=10)
    return setting.build_clients(s, np.random.default_rng(1), arrays=(tr_x, tr_y, te_x, te_y))


def test_a_whole_alidpfl_run_chooses_the_taus_of_the_paper_rule(data, monkeypatch):
    torch.set_num_threads(1)
    R_s, R_c, q, sigma, clip, eta, seed = 6, 30, 0.1, 1.1, 0.1, 0.5, 0
    plan = training.RunPlan(budget.Budgets(2.0, R_s, R_c), tau=None, q=q, sigma=sigma, clip_norm=clip, eta=eta,
                            eval_rounds=(), curve_every=10 ** 6, curve_size=5, estimate_samples=32, seed=seed)
    rounds = _record(monkeypatch)
    out = training.train(plan, data, return_model=True)
    assert len(rounds) == out["rounds"]

    sizes = np.array([len(c.y) for c in data.clients], dtype=np.float64)
    weights = sizes / sizes.sum()
    model = make_cnn(tuple(data.clients[0].x.shape[1:]), seed=seed)
    d = sum(p.numel() for p in model.parameters())
    assert out["d"] == d
    noise = ref.noise(d, sigma, clip, q * sizes.mean())
    w0 = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double().numpy()
    # the one recorded input the reports do not give, D = ‖ŵ − ŵ_0‖, checked at the last round
    assert rounds[-1]["dist"] == pytest.approx(float(np.linalg.norm(out["model"].astype(np.float64) - w0)),
                                               rel=1e-6)  # float32 model, float64 norm

    taus, done = [1], 0
    for k, rec in enumerate(rounds):
        tau = taus[-1]
        assert R_s - k >= 1 and R_c - done >= tau  # the replay's budget allows round k
        done += tau
        mine = _replay_round(rec, weights, eta=eta, noise=noise, tau_prev=tau, done=done,
                             rounds_left=R_s - k - 1, iterations_left=R_c - done)
        assert rec["kw"]["tau_prev"] == tau
        assert (rec["kw"]["iterations_done"], rec["kw"]["rounds_left"], rec["kw"]["iterations_left"]) == (
            done, R_s - k - 1, R_c - done)
        assert rec["kw"]["noise"] == pytest.approx(noise, rel=1e-12)
        assert rec["loss"] == pytest.approx(mine["loss"], rel=REL)
        for key in ("rho", "beta", "xi", "lam", "omega"):
            assert out["constants"][key][k] == pytest.approx(mine[key], rel=REL), (k, key)
            # and the constants the rule was given (not only those the run records)
            assert rec["constants"][key] == pytest.approx(mine[key], rel=REL), (k, key, "given to choose_tau")
        assert out["constants"]["feasible"][k] == mine["feasible"], k
        assert rec["tau"] == mine["tau"], k
        taus.append(mine["tau"])
    # the replay's own stopping rule: the next round does not fit
    assert not (R_s - len(rounds) >= 1 and R_c - done >= taus[-1])
    assert out["taus"].tolist() == taus[:-1]
    assert len(set(taus)) >= 3, taus  # the run exercises the rule (τ moves), not only τ = 1


def test_the_head_to_head_alidpfl_loop_chooses_the_taus_of_the_paper_rule(monkeypatch):
    from fedrepro.headtohead import algorithms as alg
    from fedrepro.headtohead import softmax as eng
    from fedrepro.headtohead.alidpfl import ALIDPFL
    from fedrepro.problems.softmax import softmax_problem

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(90, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=90)
    parts = [np.arange(0, 30), np.arange(30, 55), np.arange(55, 90)]  # unequal clients: the weights matter
    problem = softmax_problem(images, labels, parts, mu=1e-3, test_images=images[:10], test_labels=labels[:10])
    a = ALIDPFL(lr=0.05, mean_steps=8, rate=0.5, clip=1.0)
    n_rounds, per_round, seed = 8, 2, 3
    rounds = _record(monkeypatch)
    r = alg.run(problem, a, epsilon=3.0, delta=1e-5,
                uplink_budget_bits=(n_rounds + 0.5) * per_round * a.message_bits(problem.dim),
                clients_per_round=per_round, seed=seed)
    assert r["rounds"] == n_rounds == len(rounds)
    # the public schedule (an input of the run, drawn as alg.run draws it)
    schedule = eng.participation_schedule(3, per_round, n_rounds,
                                          np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0]))
    counts = np.bincount(schedule.ravel(), minlength=3)
    step_budget, watched = 8 * int(counts.max()), int(np.argmax(counts))
    steps, left = [0, 0, 0], [int(c) for c in counts]
    sizes = np.array([len(p) for p in parts], dtype=np.float64)
    noise = ref.noise(785 * 10, max(r["noise_multiplier"], 1e-300), 1.0, 0.5 * sizes.mean())
    tau = 1
    seen = []
    for k, rec in enumerate(rounds):
        for c in schedule[k]:
            steps[c] += min(tau, step_budget - steps[c])
            left[c] -= 1
        w = sizes[schedule[k]] / sizes[schedule[k]].sum()
        np.testing.assert_allclose(rec["weights"], w, rtol=1e-15)
        done = steps[watched]
        mine = _replay_round(rec, w, eta=0.05, noise=noise, tau_prev=tau, done=done, rounds_left=left[watched],
                             iterations_left=step_budget - done)
        assert rec["kw"]["tau_prev"] == tau
        assert (rec["kw"]["iterations_done"], rec["kw"]["rounds_left"], rec["kw"]["iterations_left"]) == (
            done, left[watched], step_budget - done)
        assert rec["kw"]["noise"] == pytest.approx(noise, rel=1e-12)
        assert rec["loss"] == pytest.approx(mine["loss"], rel=REL)
        for key in ("rho", "beta", "xi", "lam", "omega"):
            assert rec["constants"][key] == pytest.approx(mine[key], rel=REL), (k, key)
        assert rec["tau"] == mine["tau"], k
        tau = mine["tau"]
        seen.append(tau)
    assert len(set(seen)) >= 3, seen  # τ moves
    assert math.isfinite(noise)
