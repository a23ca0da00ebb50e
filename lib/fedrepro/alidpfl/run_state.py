"""The typed state and result of one ALI-DPFL / DPFL training run.

:class:`RunState` is what :func:`fedrepro.alidpfl.training.train` (and the closed-form τ* run of
:mod:`fedrepro.alidpfl.closed_form_training`) carries from round to round and writes to a
checkpoint: the global model ŵ (on the CPU), every client's generator state, the budget
counters of Algorithm 1 lines 3–4 (R_s rounds, R_c local iterations) and the history so far.

:class:`TrainingResult` is what a run returns: the rounds and iterations it used, the τ of every
round, the full-test evaluations at the planned rounds, the test-subset curve, the constants of
ALI-DPFL's τ* rule (§IV-B: ρ, β, ξ, λ, ω), the closed-form rule's μ and γ, and the counts of
accounted (DP-SGD) and unaccounted (§IV-B estimates) per-record gradients. It reads like the
mapping it replaces (``result["final_accuracy"]``), and :meth:`TrainingResult.as_dict` is the
plain dict a results store keeps, with the same keys in the same order as before.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch

__all__ = ["RunState", "TrainingResult", "CONSTANT_NAMES"]

#: The per-round constants of the τ* rule (:func:`fedrepro.alidpfl.tau_rule.choose_tau`) a run records.
CONSTANT_NAMES: tuple[str, ...] = ("rho", "beta", "xi", "lam", "omega", "feasible")


@dataclasses.dataclass
class RunState:
    """The resumable state of one training run (module docstring).

    ``round``: rounds completed; ``rounds_done``/``iterations_done``: the budget counters;
    ``tau_next``: the τ of the next round; ``w``/``w0``: the global model now and at the start
    (flat float32, CPU); ``generators``: every client's torch generator state; ``estimate_idx``:
    each client's fixed records for the §IV-B estimates; ``curve_idx``: the fixed test subset of
    the curve; ``taus``: τ per round; ``evals``: full-test evaluations by round; ``curve``:
    test-subset accuracy by round; ``constants``: the τ* rule's constants per round;
    ``mu``/``gamma``: the closed-form rule's statistics per round; ``unaccounted_gradients``:
    per-record gradients outside the accounting; ``sampled_records``: records in all DP-SGD
    batches."""

    round: int
    rounds_done: int
    iterations_done: int
    tau_next: int
    w: torch.Tensor
    w0: torch.Tensor
    generators: list[torch.Tensor]
    estimate_idx: list[np.ndarray]
    curve_idx: np.ndarray
    taus: list[int] = dataclasses.field(default_factory=list)
    evals: dict[int, dict[str, float]] = dataclasses.field(default_factory=dict)
    curve: dict[int, float] = dataclasses.field(default_factory=dict)
    constants: list[dict[str, float]] = dataclasses.field(default_factory=list)
    mu: list[float] = dataclasses.field(default_factory=list)
    gamma: list[float] = dataclasses.field(default_factory=list)
    unaccounted_gradients: int = 0
    sampled_records: int = 0

    def to_checkpoint(self) -> dict[str, Any]:
        """The state as a plain dict of tensors, arrays and Python values (what a checkpoint stores)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_checkpoint(cls, data: Mapping[str, Any]) -> RunState:
        """The state a checkpoint stored; ``ValueError`` naming the fields when it does not hold one."""
        names = {f.name for f in dataclasses.fields(cls)}
        missing, extra = sorted(names - set(data)), sorted(set(data) - names)
        if missing or extra:
            raise ValueError(f"a checkpoint's state must hold the fields of RunState: missing {missing}, "
                             f"unknown {extra}")
        return cls(**dict(data))


@dataclasses.dataclass(frozen=True, eq=False)
class TrainingResult(Mapping):
    """The history of one training run (module docstring); ``None`` fields were not recorded
    by the engine that ran it (full-test evaluations and τ* constants: :func:`~fedrepro.alidpfl.training.train`;
    μ and γ: the closed-form run); ``model`` (the final flat global model) only on request."""

    rounds: int
    iterations: int
    taus: np.ndarray
    final_accuracy: float
    final_loss: float
    curve_rounds: np.ndarray
    curve_accuracy: np.ndarray
    unaccounted_gradients: int
    sampled_records: int
    d: int
    eval_rounds: np.ndarray | None = None
    eval_accuracy: np.ndarray | None = None
    eval_loss: np.ndarray | None = None
    best_curve_accuracy: float | None = None
    constants: dict[str, np.ndarray] | None = None
    mu: np.ndarray | None = None
    gamma: np.ndarray | None = None
    model: np.ndarray | None = None

    #: The order of the keys of :meth:`as_dict` (the stored layout; ``model`` first when present).
    _ORDER = ("model", "rounds", "iterations", "taus", "mu", "gamma", "eval_rounds", "eval_accuracy", "eval_loss",
              "final_accuracy", "final_loss", "curve_rounds", "curve_accuracy", "best_curve_accuracy",
              "constants", "unaccounted_gradients", "sampled_records", "d")

    @classmethod
    def from_state(cls, state: RunState, final: Mapping[str, float], d: int, *, evaluations: bool,
                   closed_form: bool, return_model: bool) -> TrainingResult:
        """The result of a finished run in ``state`` with the final full-test evaluation ``final``;
        ``evaluations``: the run recorded planned evaluations and τ* constants; ``closed_form``:
        it recorded μ and γ."""
        curve_rounds = sorted(state.curve)
        extra: dict[str, Any] = {}
        if evaluations:
            rounds = sorted(state.evals)
            extra |= {
                "eval_rounds": np.array(rounds, dtype=np.int64),
                "eval_accuracy": np.array([state.evals[k]["accuracy"] for k in rounds]),
                "eval_loss": np.array([state.evals[k]["loss"] for k in rounds]),
                "best_curve_accuracy": max(state.curve.values()) if state.curve else math.nan,
                "constants": {k: np.array([c[k] for c in state.constants]) for k in CONSTANT_NAMES},
            }
        if closed_form:
            extra |= {"mu": np.array(state.mu), "gamma": np.array(state.gamma)}
        if return_model:
            extra["model"] = state.w.numpy().copy()
        return cls(rounds=int(state.round), iterations=int(state.iterations_done),
                   taus=np.array(state.taus, dtype=np.int64), final_accuracy=final["accuracy"],
                   final_loss=final["loss"], curve_rounds=np.array(curve_rounds, dtype=np.int64),
                   curve_accuracy=np.array([state.curve[k] for k in curve_rounds]),
                   unaccounted_gradients=int(state.unaccounted_gradients),
                   sampled_records=int(state.sampled_records), d=int(d), **extra)

    def as_dict(self) -> dict[str, Any]:
        """The recorded fields as a plain dict in the stored order (what a results store keeps)."""
        return {k: getattr(self, k) for k in self._ORDER if getattr(self, k) is not None}

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, key, None) if key in self._ORDER else None
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())
