"""ALI-DPFL on task T1 (Ling et al., Algorithm 1 with the τ* rule of §IV-B), behind the
head-to-head interface (:mod:`fedrepro.headtohead.algorithms`), **not private as run**.

A round: the server broadcasts ŵ and τ_k; every client of the round runs τ_k DP-SGD steps
(:func:`fedrepro.headtohead.softmax.dpsgd_steps`) and sends its update and the estimate report
of §IV-B: F_i(ŵ_i), F_i(ŵ), ∇F_i(ŵ_i), ∇F_i(ŵ) and ‖ŵ_i − ŵ‖, computed on all its records
without clipping or noise. The server averages the updates (weights n_i), estimates ρ, β, ξ
from the reports (:func:`fedrepro.alidpfl.tau_rule.estimate_constants`), takes λ and ω by the
library's default rule and chooses τ_{k+1} (:func:`fedrepro.alidpfl.tau_rule.choose_tau`,
τ_0 = 1, at most doubling, capped at 100).

The accountant charges the DP-SGD steps only: the reports are computed from the clients'
records and sent in the clear, a release no accountant covers (the privacy-audit chapter
attacks it: one report reveals whether a record is in the client's data). The variant is
therefore reported apart from the private algorithms, as the paper runs it.

Choices where the head-to-head setting differs from the paper's (all clients in every round,
a global iteration budget):

* **the step budget** — each client may run at most K = P·τ̄ DP-SGD steps over its P
  participations (``mean_steps`` = τ̄, a hyper-parameter like DPFL's τ); the noise is
  calibrated for K steps. A client uses min(τ_k, its steps left) (none left: a zero update);
* **the horizon** of the τ* rule is that of the most frequent client: its steps done, its
  participations left and its steps left (the paper's t, R_s and R_c);
* **λ** uses the clients' weighted loss at the round's starting model (the reports' F_i(ŵ)),
  as the library's training does (:data:`fedrepro.alidpfl.tau_rule.LAMBDA_OMEGA_RULES`);
* **bits**: the update in float32 and the report (two gradients and three numbers in float32)
  on the uplink: 96·d + 96 bits per message.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.alidpfl import tau_rule
from fedrepro.core.validate import check_choice, check_int
from fedrepro.headtohead import accounting
from fedrepro.headtohead import softmax as engine
from fedrepro.headtohead.algorithms import FLOAT_BITS, UpdateAveraging, check_hyperparameters
from fedrepro.problems.softmax import SoftmaxProblem, log_softmax

__all__ = ["ALIDPFL", "client_loss_and_gradient"]


def client_loss_and_gradient(problem: SoftmaxProblem, w: np.ndarray, client: int) -> tuple[float, np.ndarray]:
    """f_i(w) = mean cross-entropy over the client's records + (μ/2)‖w‖², and its gradient
    (float64, flattened), from all the client's records."""
    rows = problem.device_rows(client)
    A = problem.features[rows].astype(np.float64)
    w = np.asarray(w, dtype=np.float64)
    logp = log_softmax(A @ w)
    n = A.shape[0]
    labels = problem.labels[rows]
    loss = float(-logp[np.arange(n), labels].mean()) + 0.5 * problem.mu * float(np.sum(w * w))
    r = np.exp(logp)
    r[np.arange(n), labels] -= 1.0
    return loss, (A.T @ r / n + problem.mu * w).reshape(-1)


@dataclasses.dataclass(frozen=True)
class ALIDPFL(UpdateAveraging):
    """ALI-DPFL (module docstring): Poisson rate ``rate``, clipping ``clip``, step ``lr``, at most
    ``mean_steps`` DP-SGD steps per participation on average (the step budget)."""

    name: ClassVar[str] = "ALI-DPFL (not private as run)"
    lr: float = 0.5
    mean_steps: int = 5
    rate: float = 0.05
    clip: float = 1.0
    lambda_omega_rule: str = "loss"

    def __post_init__(self) -> None:
        check_hyperparameters(self)
        check_choice("lambda_omega_rule", self.lambda_omega_rule, tuple(sorted(tau_rule.LAMBDA_OMEGA_RULES)))
        if hasattr(self, "estimate_samples"):
            check_int("estimate_samples", self.estimate_samples, 1)

    def message_bits(self, d: int) -> float:
        d = check_int("d", d, 1)
        return float(FLOAT_BITS * (3 * d + 3))

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, self.step_budget(participations))

    def step_budget(self, participations: int) -> int:
        """K = P·τ̄, the DP-SGD steps a client that sends P messages may run."""
        return check_int("participations", participations, 1) * check_int("mean_steps", self.mean_steps, 1)

    def start(self, problem: SoftmaxProblem) -> dict[str, Any]:
        state = super().start(problem)
        state.update(tau=1, reports={}, steps=np.zeros(problem.n_devices, dtype=np.int64), x0=state["x"].copy(),
                     taus=[], sigma=None, plan=None)
        return state

    def prepare(self, state: dict[str, Any], schedule: np.ndarray, noise_multiplier: float) -> None:
        """Called by the run once the public schedule and the noise are known: the step
        budget of every client and the client whose horizon the τ* rule follows."""
        counts = np.bincount(schedule.ravel(), minlength=state["steps"].size)
        state["budget"] = self.step_budget(int(counts.max()))
        state["watched"] = int(np.argmax(counts))
        state["left"] = counts.copy()  # participations left, per client
        state["sigma"] = noise_multiplier

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any], client: int, noise_multiplier: float,
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
        loss_local, grad_local = client_loss_and_gradient(problem, w, client)
        loss_global, grad_global = client_loss_and_gradient(problem, x, client)
        state["reports"][client] = tau_rule.ClientReport(loss_local=loss_local, loss_global=loss_global,
                                                         grad_local=grad_local, grad_global=grad_global,
                                                         distance=float(np.linalg.norm(w - x)))
        return w - x, sampled + 2 * (problem.sizes[client])

    def aggregate(self, problem: SoftmaxProblem, state: dict[str, Any], clients: np.ndarray,
                  messages: np.ndarray) -> None:
        super().aggregate(problem, state, clients, messages)
        reports = [state["reports"].pop(int(c)) for c in clients]
        sizes = problem.sizes[clients].astype(np.float64)
        weights = sizes / sizes.sum()
        rho, beta, xi = tau_rule.estimate_constants(reports, weights)
        loss = float(weights @ np.array([r.loss_global for r in reports]))
        lam, omega = tau_rule.lambda_omega(self.lambda_omega_rule, loss,
                                           float(np.linalg.norm(state["x"] - state["x0"])))
        watched = state["watched"]
        done = int(state["steps"][watched])
        batch = self.rate * float(problem.sizes.mean())
        noise = tau_rule.noise_term(problem.dim, max(state["sigma"], 1e-300), self.clip, batch)
        tau, _ = tau_rule.choose_tau(tau_rule.Constants(rho=rho, beta=beta, xi=xi, lam=lam, omega=omega),
                                     tau_prev=int(state["tau"]), eta=self.lr, noise=noise, iterations_done=done,
                                     rounds_left=int(state["left"][watched]),
                                     iterations_left=int(state["budget"] - done))
        state["taus"].append(int(state["tau"]))
        state["tau"] = int(tau)

