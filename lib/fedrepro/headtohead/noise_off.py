"""A private head-to-head algorithm with its noise off and its clipping kept (issue 50: what the
non-private ceilings leave out).

A ceiling (:mod:`fedrepro.headtohead.cnn_baselines`) removes both the per-record clipping and
the noise, and tunes its own step sizes. When a ceiling scores below its private algorithm,
the difference holds two effects: the noise (which costs accuracy) and the clipping (which, on
a short run of large per-record gradients, acts as a step normaliser and may help). This
wrapper separates them: :class:`NoiseOff` runs the private algorithm ``inner`` with the same
hyper-parameters, the same clipping norm, the same Poisson samples and the same random stream
(the noise is drawn and multiplied by σ = 0, so every later draw is the private run's), and
declares no privacy plan, so that :func:`fedrepro.headtohead.algorithms.run` treats it as a
non-private reference (ε spent = ∞).

Accuracy ordering the decomposition reads: private ≤ noise off (the cost of the noise at the
private algorithm's own configuration); ceiling against noise off (what dropping the clipping
does, on the ceiling's own grid).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fedrepro.headtohead.interface import HeadToHeadAlgorithm, check_algorithm

__all__ = ["NoiseOff"]


@dataclasses.dataclass(frozen=True)
class NoiseOff:
    """``inner`` (a private algorithm with a clipping norm) with σ = 0 and no privacy plan."""

    inner: HeadToHeadAlgorithm

    def __post_init__(self) -> None:
        check_algorithm(self.inner)
        if self.inner.privacy_plan(1) is None:
            raise ValueError(f"{self.inner.name} is already non-private: NoiseOff needs a private algorithm")
        if getattr(self.inner, "clip", None) is None:
            raise ValueError(f"{self.inner.name} has no clipping norm to keep")

    @property
    def name(self) -> str:
        return f"{self.inner.name}, noise off"

    def message_bits(self, d: int) -> float:
        return self.inner.message_bits(d)

    def downlink_bits(self, d: int) -> float:
        return self.inner.downlink_bits(d)

    def privacy_plan(self, participations: int) -> None:
        """None: the run is a non-private reference."""
        return None

    def start(self, problem: Any) -> dict[str, Any]:
        return self.inner.start(problem)

    def prepare(self, state: dict[str, Any], schedule: np.ndarray, noise_multiplier: float) -> None:
        """The inner algorithm's plan, if it has one, with σ = 0."""
        if hasattr(self.inner, "prepare"):
            self.inner.prepare(state, schedule, 0.0)

    def client_message(self, problem: Any, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """The inner algorithm's message with σ = 0 (the driver passes 0 to a non-private
        algorithm; anything else is refused)."""
        if noise_multiplier != 0.0:
            raise ValueError(f"NoiseOff runs with noise_multiplier 0, got {noise_multiplier!r}")
        return self.inner.client_message(problem, state, client, 0.0, rng)

    def aggregate(self, problem: Any, state: dict[str, Any], clients: np.ndarray, messages: np.ndarray) -> None:
        self.inner.aggregate(problem, state, clients, messages)

    def model(self, state: dict[str, Any]) -> np.ndarray:
        return self.inner.model(state)
