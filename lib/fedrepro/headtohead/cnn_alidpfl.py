"""ALI-DPFL on task T2 (the Fashion-MNIST CNN), **not private as run**: the T1 adapter
(:class:`fedrepro.headtohead.alidpfl.ALIDPFL`: the τ* rule of §IV-B driven by the clients'
reports, a per-client step budget P·τ̄, the noise calibrated for it, 96·d + 96 bits per
message) with the CNN's local steps (:func:`fedrepro.headtohead.cnn.dpsgd_steps`).

One change, for cost: a client's report evaluates F_i and ∇F_i on a fixed random subset of
``estimate_samples`` of its records (seeded once per problem, public, the same in every
round), as the library's ALI-DPFL training does, instead of all its 6,000 records (two
full-data gradients per client and round would cost about 130 DP-SGD steps of the CNN).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
import torch
from torch.nn import functional as F

from fedrepro.alidpfl import tau_rule
from fedrepro.core.validate import check_int
from fedrepro.headtohead import cnn as engine
from fedrepro.headtohead.alidpfl import ALIDPFL
from fedrepro.headtohead.cnn import CNNProblem

__all__ = ["ALIDPFLCNN", "client_loss_and_gradient", "ESTIMATE_SEED"]

#: Seed of the clients' estimate subsets (public; independent of the run's seed).
ESTIMATE_SEED = 2024


def client_loss_and_gradient(problem: CNNProblem, w: np.ndarray, client: int,
                             rows: np.ndarray) -> tuple[float, np.ndarray]:
    """F_i(w) = the mean cross-entropy over ``rows`` of ``client``'s records, and its gradient
    (float64, flat), at the model ``w`` (loaded into the problem's work model, a copy)."""
    engine.load_into(problem.net, w)
    idx = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(problem.device)
    params = list(problem.net.parameters())
    with torch.enable_grad():
        loss = F.cross_entropy(problem.net(problem.xs[client][idx]), problem.ys[client][idx])
        grads = torch.autograd.grad(loss, params)
    return float(loss.detach()), torch.cat([g.reshape(-1) for g in grads]).double().cpu().numpy()


@dataclasses.dataclass(frozen=True)
class ALIDPFLCNN(ALIDPFL):
    """ALI-DPFL on the CNN (module docstring); the defaults are ALI-DPFL's setting (q = 0.015,
    C = 0.1, η = 0.5)."""

    name: ClassVar[str] = "ALI-DPFL (not private as run)"
    lr: float = 0.5
    mean_steps: int = 5
    rate: float = 0.015
    clip: float = 0.1
    estimate_samples: int = 128

    def start(self, problem: CNNProblem) -> dict[str, Any]:
        state = super().start(problem)
        x = problem.initial_model()
        k = check_int("estimate_samples", self.estimate_samples, 1)
        rng = np.random.default_rng(ESTIMATE_SEED)
        state.update(x=x, x0=x.copy(),
                     estimate_rows=[np.sort(rng.permutation(int(n))[:min(k, int(n))]) for n in problem.sizes])
        return state

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        steps = min(int(state["tau"]), int(state["budget"] - state["steps"][client]))
        if steps > 0:
            w, sampled = engine.dpsgd_steps(problem, x, client, steps=steps, rate=self.rate, lr=self.lr,
                                            clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        else:
            w, sampled = np.array(x, dtype=np.float64, copy=True), 0
        state["steps"][client] += steps
        state["left"][client] -= 1
        rows = state["estimate_rows"][client]
        loss_local, grad_local = client_loss_and_gradient(problem, w, client, rows)
        loss_global, grad_global = client_loss_and_gradient(problem, x, client, rows)
        state["reports"][client] = tau_rule.ClientReport(loss_local=loss_local, loss_global=loss_global,
                                                         grad_local=grad_local, grad_global=grad_global,
                                                         distance=float(np.linalg.norm(w - x)))
        return w - x, sampled + 2 * len(rows)
