"""DPFL (Algorithm 1, fixed τ) and ALI-DPFL (Algorithm 2, τ* per round), resumable.

One call of :func:`train` is one training run of a :class:`RunPlan`: every round, each
client starts from the global model ŵ, runs τ DP-SGD steps (:func:`fedrepro.alidpfl.dpsgd.dpsgd_step`;
Poisson rate q, clipping C, noise σC on the sum, divided by q·|D_i|, step η), and the server
averages the clients' models weighted by |D_i| (eq. 1; ``aggregation="unweighted"`` is the
plain mean of one public implementation). A run stops *before* a round that would exceed R_s
rounds or R_c local iterations (:class:`fedrepro.alidpfl.budget.BudgetCounter`).

ALI-DPFL: after the round every client reports F_i and ∇F_i at its own model ŵ_i and at ŵ
(§IV-B), computed on ``estimate_samples`` of its records (a fixed random subset; the paper's
F_i is the full local loss, which would cost two passes over D_i per round); the server
forms ρ, β, ξ (:func:`fedrepro.alidpfl.tau_rule.estimate_constants`), λ and ω by the chosen
rule, and τ* for the next round (:func:`fedrepro.alidpfl.tau_rule.choose_tau`). These
evaluations touch private data outside the privacy accounting (reference §7 item 6): the
result counts them (``unaccounted_gradients``) beside the accounted DP-SGD ones.

Prefix sharing (reference §8): a fixed-τ run with one seed is the same trajectory for every
budget, so one run serves every table cell whose stopping round lies on it; the global
model is evaluated on the full test set at every round of ``eval_rounds`` (the cells'
stopping points) and on a fixed test subset every ``curve_every`` rounds.

Resumable: with ``checkpoint_dir`` the run state (model, every RNG state, round, budget
counters, history) is written atomically every ``checkpoint_every`` rounds; a run killed at
any point resumes from its last checkpoint and ends with the same results as an
uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import io
import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch.nn import functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from fedrepro.alidpfl import tau_rule
from fedrepro.alidpfl.budget import BudgetCounter, Budgets
from fedrepro.alidpfl.dpsgd import DPSGDSettings, dpsgd_step
from fedrepro.alidpfl.models import make_cnn, num_parameters
from fedrepro.alidpfl.setting import FederatedData
from fedrepro.core.cache import atomic_write
from fedrepro.core.validate import check_int

__all__ = ["RunPlan", "train", "evaluate", "CHECKPOINT_NAME"]

CHECKPOINT_NAME = "checkpoint.pt"


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """What one training run does.

    ``tau``: the fixed τ (DPFL) or ``None`` for ALI-DPFL; ``budgets``: R_s, R_c;
    ``eval_rounds``: rounds after which the global model is evaluated on the full test set;
    ``curve_every``/``curve_size``: a fixed test subset evaluated every few rounds;
    ``clip``/``noise``: ``False`` turns clipping (C → ∞) or the noise off (non-private
    comparisons); ``divisor``: the gradient divisor (``None``: q·|D_i|)."""

    budgets: Budgets
    tau: int | None = 1
    q: float = 0.015
    clip_norm: float = 0.1
    sigma: float = 1.1
    eta: float = 0.5
    divisor: float | None = None
    clip: bool = True
    noise: bool = True
    aggregation: Literal["weighted", "unweighted"] = "weighted"
    eval_rounds: tuple[int, ...] = ()
    curve_every: int = 10
    curve_size: int = 2000
    rule: str = "loss"
    estimate_samples: int = 512
    seed: int = 0
    checkpoint_every: int = 20
    method: str = "fast"

    def __post_init__(self) -> None:
        if self.tau is not None:
            check_int("tau", self.tau, 1)
        check_int("curve_every", self.curve_every, 1)
        check_int("curve_size", self.curve_size, 1)
        check_int("estimate_samples", self.estimate_samples, 1)
        check_int("checkpoint_every", self.checkpoint_every, 1)
        if self.aggregation not in ("weighted", "unweighted"):
            raise ValueError(f"aggregation must be 'weighted' or 'unweighted', got {self.aggregation!r}")
        if self.rule not in tau_rule.LAMBDA_OMEGA_RULES:
            raise ValueError(f"rule must be one of {sorted(tau_rule.LAMBDA_OMEGA_RULES)}, got {self.rule!r}")

    def dpsgd_settings(self) -> DPSGDSettings:
        return DPSGDSettings(q=self.q, clip=self.clip_norm if self.clip else 1e12,
                             sigma=self.sigma if self.noise else 0.0, lr=self.eta,
                             expected_batch=self.divisor)


def _tensor(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


@torch.no_grad()
def evaluate(model: torch.nn.Module, x: np.ndarray, y: np.ndarray, batch: int = 1000) -> dict[str, float]:
    """Accuracy and mean cross-entropy of ``model`` on (x, y)."""
    correct, loss = 0, 0.0
    for i in range(0, len(y), batch):
        xb, yb = _tensor(x[i:i + batch]), _tensor(y[i:i + batch])
        out = model(xb)
        loss += float(F.cross_entropy(out, yb, reduction="sum"))
        correct += int((out.argmax(1) == yb).sum())
    return {"accuracy": correct / len(y), "loss": loss / len(y)}


def _loss_and_grad(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, np.ndarray]:
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    model.zero_grad(set_to_none=True)
    return float(loss.detach()), grad.double().numpy()


def _fresh_state(plan: RunPlan, data: FederatedData, model: torch.nn.Module) -> dict[str, Any]:
    ss = np.random.SeedSequence([plan.seed, 0xA11D])
    c_seeds = ss.spawn(len(data.clients) + 2)
    gens = []
    for s in c_seeds[: len(data.clients)]:
        g = torch.Generator(device="cpu")
        g.manual_seed(int(s.generate_state(1, np.uint64)[0]) & 0x7FFF_FFFF_FFFF_FFFF)
        gens.append(g.get_state())
    est_rng = np.random.default_rng(c_seeds[-2])
    estimate_idx = [np.sort(est_rng.permutation(len(c))[: min(plan.estimate_samples, len(c))])
                    for c in data.clients]
    curve_rng = np.random.default_rng(c_seeds[-1])
    curve_idx = np.sort(curve_rng.permutation(len(data.test_y))[: min(plan.curve_size, len(data.test_y))])
    w = parameters_to_vector(model.parameters()).detach().clone()
    return {"round": 0, "rounds_done": 0, "iterations_done": 0, "tau_next": plan.tau or 1,
            "w": w, "w0": w.clone(), "generators": gens, "estimate_idx": estimate_idx,
            "curve_idx": curve_idx, "taus": [], "evals": {}, "curve": {}, "constants": [],
            "unaccounted_gradients": 0, "batch_sizes": 0}


def _save(state: dict[str, Any], path: Path) -> None:
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write(path, lambda fh: fh.write(buf.getvalue()))


def _load(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    return torch.load(path, weights_only=False)


def train(plan: RunPlan, data: FederatedData, *, checkpoint_dir: Path | None = None,
          stop_after_rounds: int | None = None) -> dict[str, Any]:
    """Run ``plan`` on ``data``; returns the run's history (see the module docstring).

    ``stop_after_rounds`` ends the call early (as a killed run would, after its last
    checkpoint), for the resumption test."""
    torch.set_num_threads(max(1, torch.get_num_threads()))
    shape = tuple(int(s) for s in data.clients[0].x.shape[1:])
    model = make_cnn(shape, seed=plan.seed)
    d = num_parameters(model)
    settings = plan.dpsgd_settings()
    ckpt = Path(checkpoint_dir) / CHECKPOINT_NAME if checkpoint_dir is not None else None
    state = _load(ckpt) if ckpt is not None else None
    if state is None:
        state = _fresh_state(plan, data, model)
    counter = BudgetCounter(plan.budgets, state["rounds_done"], state["iterations_done"])
    gens = []
    for st in state["generators"]:
        g = torch.Generator(device="cpu")
        g.set_state(st)
        gens.append(g)
    sizes = data.sizes.astype(np.float64)
    weights = sizes / sizes.sum() if plan.aggregation == "weighted" else np.full(len(sizes), 1 / len(sizes))
    xs = [_tensor(c.x) for c in data.clients]
    ys = [_tensor(c.y) for c in data.clients]
    noise = tau_rule.noise_term(d, plan.sigma, plan.clip_norm,
                                plan.divisor or plan.q * float(sizes.mean()))
    eval_rounds = set(plan.eval_rounds)
    calls = 0
    while True:
        tau = int(state["tau_next"])
        if not counter.allows(tau):
            break
        w = state["w"]
        new_w = torch.zeros_like(w, dtype=torch.float64)
        reports = []
        for i in range(len(data.clients)):
            vector_to_parameters(w, model.parameters())
            for _ in range(tau):
                state["batch_sizes"] += dpsgd_step(model, xs[i], ys[i], settings, gens[i], method=plan.method)
            wi = parameters_to_vector(model.parameters()).detach()
            new_w += float(weights[i]) * wi.double()
            if plan.tau is None:
                idx = _tensor(state["estimate_idx"][i])
                xe, ye = xs[i][idx], ys[i][idx]
                loss_local, grad_local = _loss_and_grad(model, xe, ye)
                vector_to_parameters(w, model.parameters())
                loss_global, grad_global = _loss_and_grad(model, xe, ye)
                reports.append(tau_rule.ClientReport(
                    loss_local, loss_global, grad_local, grad_global,
                    float(torch.linalg.vector_norm((wi - w).double()))))
                state["unaccounted_gradients"] += 2 * len(idx)
        counter.spend(tau)
        state["w"] = new_w.float()
        state["taus"].append(tau)
        state["round"] += 1
        state["rounds_done"], state["iterations_done"] = counter.rounds_done, counter.iterations_done
        r = state["round"]
        if plan.tau is None:
            rho, beta, xi = tau_rule.estimate_constants(reports, weights)
            loss = float(sum(wt * rep.loss_global for wt, rep in zip(weights, reports, strict=True)))
            dist = float(torch.linalg.vector_norm((state["w"] - state["w0"]).double()))
            lam, omega = tau_rule.lambda_omega(plan.rule, loss, dist)
            consts = tau_rule.Constants(rho, beta, xi, lam, omega)
            tau_star, g = tau_rule.choose_tau(
                consts, tau_prev=tau, eta=plan.eta, noise=noise,
                iterations_done=counter.iterations_done, rounds_left=counter.rounds_left,
                iterations_left=counter.iterations_left)
            state["constants"].append({"rho": rho, "beta": beta, "xi": xi, "lam": lam,
                                       "omega": omega, "feasible": int(np.isfinite(g).sum())})
            state["tau_next"] = tau_star
        vector_to_parameters(state["w"], model.parameters())
        if r in eval_rounds:
            state["evals"][r] = evaluate(model, data.test_x, data.test_y)
        if r % plan.curve_every == 0:
            idx = state["curve_idx"]
            state["curve"][r] = evaluate(model, data.test_x[idx], data.test_y[idx])["accuracy"]
        state["generators"] = [g.get_state() for g in gens]
        calls += 1
        if ckpt is not None and r % plan.checkpoint_every == 0:
            _save(state, ckpt)
        if stop_after_rounds is not None and calls >= stop_after_rounds:
            return {"interrupted": True}
    vector_to_parameters(state["w"], model.parameters())
    final = evaluate(model, data.test_x, data.test_y)
    curve_rounds = sorted(state["curve"])
    return {
        "rounds": int(state["round"]),
        "iterations": int(state["iterations_done"]),
        "taus": np.array(state["taus"], dtype=np.int64),
        "eval_rounds": np.array(sorted(state["evals"]), dtype=np.int64),
        "eval_accuracy": np.array([state["evals"][k]["accuracy"] for k in sorted(state["evals"])]),
        "eval_loss": np.array([state["evals"][k]["loss"] for k in sorted(state["evals"])]),
        "final_accuracy": final["accuracy"],
        "final_loss": final["loss"],
        "curve_rounds": np.array(curve_rounds, dtype=np.int64),
        "curve_accuracy": np.array([state["curve"][k] for k in curve_rounds]),
        "best_curve_accuracy": max(state["curve"].values()) if state["curve"] else math.nan,
        "constants": {k: np.array([c[k] for c in state["constants"]])
                      for k in ("rho", "beta", "xi", "lam", "omega", "feasible")},
        "unaccounted_gradients": int(state["unaccounted_gradients"]),
        "sampled_records": int(state["batch_sizes"]),
        "d": int(d),
    }
