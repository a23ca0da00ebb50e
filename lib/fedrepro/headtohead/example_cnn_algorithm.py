"""An example of a reader's algorithm for task T2, the CNN
(``python -m fedrepro.headtohead run fedrepro.headtohead.example_cnn_algorithm:DPFedAvgMomentum --task t2``).

DP-FedAvg with server momentum: each sampled client runs ``local_steps`` DP-SGD steps on the
CNN (:func:`fedrepro.headtohead.cnn.dpsgd_steps`: Poisson sampling at rate q, per-record
gradients clipped to C, N(0, σ²C²I) on the sum, divided by q·n_i, step η) and sends its model
update in float32; the server averages the updates with weights n_i into Δ and moves with
heavy-ball momentum, m ← β·m + Δ, x ← x + η_s·m. The momentum acts on released messages
only (post-processing), so the privacy plan is DP-FedSGD's — ``local_steps`` sampled Gaussian
releases per message at rate q — and the accountant calibrates σ the same way for both.

It is written against the interface only (:class:`~fedrepro.headtohead.interface.HeadToHeadAlgorithm`),
as a reader's module would be, and is in no stored result of the book.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.headtohead import accounting, algorithms
from fedrepro.headtohead.cnn import CNNProblem, dpsgd_steps

__all__ = ["DPFedAvgMomentum"]


@dataclasses.dataclass(frozen=True)
class DPFedAvgMomentum(algorithms.UpdateAveraging):
    """DP-FedAvg on the CNN with server momentum ``momentum`` and server step ``server_lr``
    (module docstring): ``local_steps`` DP-SGD steps at rate ``rate``, step ``lr``, clipping
    norm ``clip``."""

    name: ClassVar[str] = "DP-FedAvg, server momentum"
    lr: float = 0.5
    local_steps: int = 1
    rate: float = 0.015
    clip: float = 0.1
    momentum: float = 0.5
    server_lr: float = 1.0

    def __post_init__(self) -> None:
        for field in ("lr", "clip", "server_lr"):
            if not getattr(self, field) > 0:
                raise ValueError(f"{field} must be positive, got {getattr(self, field)!r}")
        if not 0 < self.rate <= 1:
            raise ValueError(f"rate must lie in (0, 1], got {self.rate!r}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum!r}")
        if isinstance(self.local_steps, bool) or not isinstance(self.local_steps, int) or self.local_steps < 1:
            raise ValueError(f"local_steps must be an integer >= 1, got {self.local_steps!r}")

    @classmethod
    def grid(cls) -> tuple[DPFedAvgMomentum, ...]:
        """The 12 configurations tuned: the client step η and the clip C of T2's DP-FedSGD
        grid's range, with two momenta (the step varies fastest, as in the book's grids)."""
        return tuple(cls(lr=lr, clip=clip, momentum=beta)
                     for beta in (0.5, 0.9)
                     for clip in (0.1, 1.0)
                     for lr in (0.25, 0.5, 1.0))

    def message_bits(self, d: int) -> float:
        return float(algorithms.FLOAT_BITS * d)

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, participations * self.local_steps)

    def start(self, problem: CNNProblem) -> dict[str, Any]:
        x = problem.initial_model()
        return {"x": x, "m": np.zeros_like(x)}

    def client_message(self, problem: CNNProblem, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x = state["x"]
        w, sampled = dpsgd_steps(problem, x, client, steps=self.local_steps, rate=self.rate, lr=self.lr,
                                 clip=self.clip, noise_multiplier=noise_multiplier, rng=rng)
        return w - x, sampled

    def aggregate(self, problem: CNNProblem, state: dict[str, Any], clients: np.ndarray,
                  messages: np.ndarray) -> None:
        weights = problem.sizes[clients].astype(np.float64)
        delta = np.tensordot(weights / weights.sum(), np.asarray(messages, dtype=np.float64), axes=1)
        state["m"] = self.momentum * state["m"] + delta
        state["x"] = state["x"] + self.server_lr * state["m"]
