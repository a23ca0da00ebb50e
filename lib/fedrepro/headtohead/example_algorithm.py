"""An example of a reader's algorithm for the head-to-head command
(``python -m fedrepro.headtohead run fedrepro.headtohead.example_algorithm:NormalisedDPFedSGD``).

DP-FedSGD with another clipping rule: every sampled per-record gradient g_j is *normalised*
rather than clipped, g_j ↦ C·g_j / (‖g_j‖ + γ), so every record pulls with nearly the same
strength C whatever its loss, and the stability constant γ > 0 keeps the scale finite when a
gradient vanishes. Each scaled gradient has norm below C, so one local step is a sampled
Gaussian release of sensitivity C, exactly as for clipping: Poisson sampling at rate q, the
sum of the scaled gradients plus N(0, σ²C²I), divided by the expected batch q·n_i, step η.
Its privacy plan is DP-FedSGD's (``local_steps`` releases per message at rate q), so the
accountant calibrates σ the same way for both; the message is the model update in float32,
averaged by the server with weights n_i (:class:`~fedrepro.headtohead.algorithms.UpdateAveraging`).

It is written against the interface only (:class:`~fedrepro.headtohead.interface.HeadToHeadAlgorithm`),
as a reader's module would be, and is in no stored result of the book.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.headtohead import accounting, algorithms
from fedrepro.problems.softmax import SoftmaxProblem

__all__ = ["NormalisedDPFedSGD"]


def _normalised_sum(problem: SoftmaxProblem, x: np.ndarray, rows: np.ndarray, clip: float,
                    stability: float) -> np.ndarray:
    """Σ_j C·g_j / (‖g_j‖ + γ) over ``rows``, with g_j = ã_j (p_j − e_j)ᵀ the per-record
    gradient of the cross-entropy (its norm is ‖ã_j‖·‖p_j − e_j‖: no gradient is formed)."""
    if rows.size == 0:
        return np.zeros_like(x)
    r = problem.residuals(x, rows).astype(np.float64)
    norms = np.sqrt(problem.sq_norms[rows].astype(np.float64) * np.einsum("ij,ij->i", r, r))
    r *= (clip / (norms + stability))[:, None]
    return problem.features[rows].T.astype(np.float64) @ r


@dataclasses.dataclass(frozen=True)
class NormalisedDPFedSGD(algorithms.UpdateAveraging):
    """DP-FedSGD whose per-record gradients are normalised to norm C (module
    docstring): ``local_steps`` DP-SGD steps on Poisson samples at ``rate``, step
    ``lr``, norm ``clip``, stability constant ``stability``."""

    name: ClassVar[str] = "DP-FedSGD, normalised gradients"
    lr: float = 1.0
    local_steps: int = 1
    rate: float = 0.05
    clip: float = 1.0
    stability: float = 0.01

    def __post_init__(self) -> None:
        for field in ("lr", "rate", "clip", "stability"):
            if not getattr(self, field) > 0:
                raise ValueError(f"{field} must be positive, got {getattr(self, field)!r}")
        if not 0 < self.rate <= 1:
            raise ValueError(f"rate must lie in (0, 1], got {self.rate!r}")
        if not (isinstance(self.local_steps, int) and self.local_steps >= 1):
            raise ValueError(f"local_steps must be an integer >= 1, "
                             f"got {self.local_steps!r}")

    @classmethod
    def grid(cls) -> tuple[NormalisedDPFedSGD, ...]:
        """The 12 configurations tuned: DP-FedSGD's steps and rates (the step
        varies fastest, as in the book's grids), with two stability constants."""
        return tuple(cls(lr=lr, rate=rate, stability=gamma)
                     for gamma in (0.01, 0.1)
                     for rate in (0.05, 0.2)
                     for lr in (0.3, 1.0, 3.0))

    def message_bits(self, d: int) -> float:
        return float(algorithms.FLOAT_BITS * d)

    def privacy_plan(self, participations: int) -> accounting.PrivacyPlan:
        return accounting.PrivacyPlan(self.rate, participations * self.local_steps)

    def client_message(self, problem: SoftmaxProblem, state: dict[str, Any],
                       client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        x0 = state["x"]
        rows_of = problem.device_rows(client)
        start, n = rows_of.start, rows_of.stop - rows_of.start
        w = np.array(x0, dtype=np.float64, copy=True)
        sampled = 0
        for _ in range(self.local_steps):
            rows = start + np.flatnonzero(rng.random(n) < self.rate)  # Poisson sample
            sampled += rows.size
            g = _normalised_sum(problem, w, rows, self.clip, self.stability)
            noise = noise_multiplier * self.clip * rng.standard_normal(g.shape)
            g = (g + noise) / (self.rate * n)
            w -= self.lr * (g + problem.mu * w)
            if not np.isfinite(w).all():  # diverged: the run sees it and stops
                break
        return w - x0, sampled
