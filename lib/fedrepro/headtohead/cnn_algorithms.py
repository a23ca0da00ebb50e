"""The algorithms of task T2: those of T1 (:mod:`fedrepro.headtohead.algorithms`) on the CNN.

Each class is its T1 counterpart (same hyper-parameters, same message bits, same privacy
plan, same server) with the client computation of :mod:`fedrepro.headtohead.cnn` and the
CNN's seeded initial model in place of zeros; :func:`fedrepro.headtohead.algorithms.run`
runs them unchanged (it needs of a problem only ``dim``, ``n_devices``, ``sizes``,
``accuracy`` and ``loss``).

The one change of substance is Fed-PLT's local training: T1's full-batch noisy gradient step
(6,000 per-record gradients per step and client on T2) becomes a Poisson-subsampled one at
rate ``rate``, so that a step costs what a DP-SGD step costs; its privacy plan is then the
sampled Gaussian at rate q over N_e·P steps (v2's analysis covers noisy gradient steps; the
subsampling is our variant, stated on the page).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.headtohead import accounting
from fedrepro.headtohead import algorithms as t1
from fedrepro.headtohead import cnn as engine
from fedrepro.headtohead.cnn import CNNProblem

__all__ = ["FedAvgCNN", "DPFLCNN", "PrivateFedPAQCNN", "FedPLTCNN"]


class _CNNStart:
    def start(self, problem: CNNProblem) -> dict[str, Any]:
        return {"x": problem.initial_model()}


@dataclasses.dataclass(frozen=True)
class FedAvgCNN(_CNNStart, t1.FedAvg):
    """:class:`~fedrepro.headtohead.algorithms.FedAvg` on the CNN (the non-private ceiling)."""

    lr: float = 0.1
    rate: float = 0.015

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=None, noise_multiplier=0.0, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class DPFLCNN(_CNNStart, t1.DPFL):
    """:class:`~fedrepro.headtohead.algorithms.DPFL` on the CNN (τ = 1: DP-FedSGD); the
    defaults are ALI-DPFL's setting (q = 0.015, C = 0.1, η = 0.5)."""

    lr: float = 0.5
    rate: float = 0.015
    clip: float = 0.1

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = engine.dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                        clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        return w - x, sampled


@dataclasses.dataclass(frozen=True)
class PrivateFedPAQCNN(_CNNStart, t1.PrivateFedPAQ):
    """:class:`~fedrepro.headtohead.algorithms.PrivateFedPAQ` on the CNN (Δ = 2ηEC, one
    Gaussian release per round)."""

    lr: float = 0.5
    rate: float = 0.015
    clip: float = 0.1

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        return engine.fedpaq_update(problem, state["x"], client, local_steps=self.local_steps, rate=self.rate,
                                    lr=self.lr, clip=self.clip, noise_multiplier=noise_multiplier,
                                    levels=self.levels, rng=rng)


@dataclasses.dataclass(frozen=True)
class FedPLTCNN(t1.FedPLT):
    """:class:`~fedrepro.headtohead.algorithms.FedPLT` on the CNN with subsampled local steps
    (module docstring): the plan is N_e·P sampled Gaussian releases at rate ``rate``."""

    name: ClassVar[str] = "Fed-PLT (private)"
    lr: float = 0.5
    rho: float = 1.0
    local_steps: int = 2
    clip: float = 0.1
    rate: float = 0.015

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, check_int("participations", participations, 1) * self.local_steps)

    def start(self, problem: CNNProblem) -> dict[str, Any]:
        x0 = problem.initial_model()
        stacked = np.tile(x0, (problem.n_devices, 1))
        return {"z": stacked.copy(), "x_local": stacked, "y": x0}

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        y, z_i = state["y"], state["z"][client]
        w, sampled = engine.noisy_prox_steps(problem, state["x_local"][client], 2.0 * y - z_i, client,
                                             steps=self.local_steps, rate=self.rate, lr=self.lr, rho=self.rho,
                                             clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        state["x_local"][client] = w  # the client's own memory: never sent
        return z_i + 2.0 * (w - y), sampled
