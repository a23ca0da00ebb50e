"""ALI-DPFL with the public code's closed-form τ* (:mod:`fedrepro.alidpfl.closed_form_tau`).

A reading of ALI-DPFL that changes only the τ rule of :func:`fedrepro.alidpfl.training.train`:
the rounds are the same (every client starts from its own copy of ŵ and runs τ DP-SGD steps,
the server takes the |D_i|-weighted mean; the same generators and the same draws in the same
order, computed by the stacked engine of :mod:`fedrepro.alidpfl.stacked`), the same stopping
rule (:class:`fedrepro.alidpfl.budget.BudgetCounter`) and the same evaluations; after each
round the server sets the next τ from each client's last local step (μ, Γ) instead of the
paper's G(τ) search over ρ, β, ξ. The first round runs τ = 1 (Alg. 2, line 1), so a
closed-form run and a run of :func:`~fedrepro.alidpfl.training.train` agree on round 1.

The statistics of the last step (loss and gradient at the client's model before and after
the step, on that step's batch) are computed without noise on private data, as the public
code does; they are outside the privacy accounting, like the paper's estimates
(``unaccounted_gradients`` counts them: two per record of each last batch).

Resumable like :func:`~fedrepro.alidpfl.training.train` (its checkpoint format; the
fingerprint adds this module's code).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import torch

from fedrepro.alidpfl import closed_form_tau, stacked
from fedrepro.alidpfl import training as base
from fedrepro.alidpfl.budget import BudgetCounter
from fedrepro.alidpfl.models import make_cnn, num_parameters
from fedrepro.alidpfl.run_state import TrainingResult
from fedrepro.alidpfl.setting import FederatedData
from fedrepro.core.cache import code_hash
from fedrepro.core.validate import ParameterTypeError, check_int

__all__ = ["train_closed_form", "expected_batch"]


def expected_batch(q: float, sizes: np.ndarray) -> int:
    """B̂ = ⌊q·min_i |D_i|⌋ (at least 1), the batch of the public code's noise term."""
    return max(1, int(math.floor(float(q) * int(np.min(sizes)))))


def _batch_statistics(params: list[torch.Tensor], xs, ys, idx) -> tuple[np.ndarray, np.ndarray]:
    """Each client's mean loss on its batch ``idx[m]`` at its parameters, and the gradient
    (flat, float64); a client with an empty batch gets loss 0 and gradient 0."""
    n = params[0].shape[0]
    d = sum(int(p[0].numel()) for p in params)
    loss, grad = np.zeros(n), np.zeros((n, d))
    keep = [m for m in range(n) if int(idx[m].numel()) > 0]
    if keep:
        sel = torch.tensor(keep)
        f, g = stacked.mean_loss_gradients([p[sel] for p in params], [xs[m][idx[m]] for m in keep],
                                           [ys[m][idx[m]] for m in keep])
        loss[keep] = f.double().numpy()
        grad[keep] = stacked.unstack_flat(g).double().numpy()
    return loss, grad


def train_closed_form(plan: base.RunPlan, data: FederatedData, *, checkpoint_dir: Path | None = None,
                      stop_after_rounds: int | None = None, return_model: bool = False) -> TrainingResult | None:
    """Run ALI-DPFL's ``plan`` (``tau=None``, the stacked engine on the CPU) with the
    closed-form τ* of the public code; returns the history of
    :func:`fedrepro.alidpfl.training.train` (a :class:`TrainingResult`; its full-test evaluation
    only at the end) with ``mu`` and ``gamma`` per round; ``return_model`` adds the final global
    model; ``None`` when ``stop_after_rounds`` ended the call early."""
    if not isinstance(plan, base.RunPlan):
        raise ParameterTypeError(f"plan must be a RunPlan, got {type(plan).__name__}")
    if plan.tau is not None:
        raise ValueError(f"the closed-form rule chooses tau: the plan must have tau=None, got tau={plan.tau}")
    if plan.method != "stacked":
        raise ValueError(f"train_closed_form computes a round with the stacked engine: the plan must have "
                         f"method='stacked', got {plan.method!r}")
    base.check_data(data)
    if stop_after_rounds is not None:
        check_int("stop_after_rounds", stop_after_rounds, 1)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    shape = tuple(int(s) for s in data.clients[0].x.shape[1:])
    model = make_cnn(shape, seed=plan.seed)
    d = num_parameters(model)
    shapes = [p.shape for p in model.parameters()]
    settings = plan.dpsgd_settings()
    ckpt = Path(checkpoint_dir) / base.CHECKPOINT_NAME if checkpoint_dir is not None else None
    fingerprint = ""
    state = None
    if ckpt is not None:
        fingerprint = hashlib.sha256((base._fingerprint(plan, data) + code_hash([__name__])).encode()).hexdigest()
        base._remove_orphans(ckpt)
        state = base._load(ckpt, fingerprint)
    if state is None:
        state = base._fresh_state(plan, data, model)
    counter = BudgetCounter(plan.budgets, state.rounds_done, state.iterations_done)
    gens = []
    for st in state.generators:
        g = torch.Generator(device="cpu")
        g.set_state(st)
        gens.append(g)
    sizes = data.sizes.astype(np.float64)
    weights = sizes / sizes.sum() if plan.aggregation == "weighted" else np.full(len(sizes), 1 / len(sizes))
    xs = [base._tensor(c.x) for c in data.clients]
    ys = [base._tensor(c.y) for c in data.clients]
    batch = expected_batch(plan.q, data.sizes)
    sigma = plan.sigma if plan.noise else 0.0
    calls = 0
    while True:
        tau = int(state.tau_next)
        if not counter.allows(tau):
            break
        params = stacked.stack(state.w, shapes, len(xs))
        if tau > 1:
            base.stacked_steps(params, xs, ys, gens, tau - 1, settings, state)
        before = [p.clone() for p in params]
        idx = base.stacked_steps(params, xs, ys, gens, 1, settings, state)
        loss_before, grad_before = _batch_statistics(before, xs, ys, idx)
        loss_after, grad_after = _batch_statistics(params, xs, ys, idx)
        state.unaccounted_gradients += 2 * sum(int(i.numel()) for i in idx)
        local = stacked.unstack_flat(params)
        new_w = torch.from_numpy(weights) @ local.double()
        drift = torch.linalg.vector_norm(local.double() - new_w, dim=1).numpy()
        mu, gamma = closed_form_tau.round_statistics(loss_before, loss_after,
                                                     np.linalg.norm(grad_after - grad_before, axis=1), drift, weights)
        counter.spend(tau)
        state.w = new_w.float()
        state.taus.append(tau)
        state.mu.append(mu)
        state.gamma.append(gamma)
        state.round += 1
        state.rounds_done, state.iterations_done = counter.rounds_done, counter.iterations_done
        state.tau_next = closed_form_tau.closed_form_tau(
            mu, gamma, tau=tau, rounds=plan.budgets.rounds, iterations=plan.budgets.iterations,
            sigma=sigma, clip=plan.clip_norm, d=d, batch=batch)
        r = state.round
        base._load_copy(model, state.w)
        if r % plan.curve_every == 0:
            cidx = state.curve_idx
            state.curve[r] = base.evaluate(model, data.test_x[cidx], data.test_y[cidx])["accuracy"]
        state.generators = [g.get_state() for g in gens]
        calls += 1
        if ckpt is not None and r % plan.checkpoint_every == 0:
            base._save(state, ckpt, fingerprint)
        if stop_after_rounds is not None and calls >= stop_after_rounds:
            return None
    base._load_copy(model, state.w)
    final = base.evaluate(model, data.test_x, data.test_y)
    return TrainingResult.from_state(state, final, d, evaluations=False, closed_form=True,
                                     return_model=return_model)
