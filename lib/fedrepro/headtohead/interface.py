"""The head-to-head algorithm interface, as a type: what :func:`fedrepro.headtohead.algorithms.run`
needs of an algorithm, on either task (T1's softmax problem, T2's CNN problem).

An algorithm is a frozen dataclass of its hyper-parameters with a ``name`` and the methods of
:class:`HeadToHeadAlgorithm`; :class:`Preparing` adds the optional ``prepare`` hook of an
algorithm that plans with the public participation schedule and the calibrated noise (ALI-DPFL's
step budget). :func:`check_algorithm` is what ``run`` calls first: an object that lacks a
method is refused with the names of the missing ones, before any budget is spent.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from fedrepro.core.validate import ParameterTypeError

__all__ = ["HeadToHeadAlgorithm", "Preparing", "check_algorithm", "missing_methods"]


@runtime_checkable
class HeadToHeadAlgorithm(Protocol):
    """A private (or non-private reference) federated algorithm of the head-to-head part."""

    #: How the algorithm is named in tables and stored units.
    name: str

    def message_bits(self, d: int) -> float:
        """Uplink bits of one client message for a model of dimension ``d``."""
        ...

    def downlink_bits(self, d: int) -> float:
        """Bits the server sends to one participating client per round."""
        ...

    def privacy_plan(self, participations: int) -> Any:
        """The :class:`~fedrepro.headtohead.accounting.PrivacyPlan` of a client that sends
        ``participations`` messages; ``None`` for a non-private reference."""
        ...

    def start(self, problem: Any) -> dict[str, Any]:
        """The state of a run: the server's model and any client memory."""
        ...

    def client_message(self, problem: Any, state: dict[str, Any], client: int, noise_multiplier: float,
                       rng: np.random.Generator) -> tuple[np.ndarray, int]:
        """One client's message in the current state, and the per-record gradients it computed."""
        ...

    def aggregate(self, problem: Any, state: dict[str, Any], clients: np.ndarray, messages: np.ndarray) -> None:
        """The server's step, in place."""
        ...

    def model(self, state: dict[str, Any]) -> np.ndarray:
        """The model the run reports."""
        ...


@runtime_checkable
class Preparing(Protocol):
    """An algorithm that plans with the public schedule and the calibrated noise before round 1."""

    def prepare(self, state: dict[str, Any], schedule: np.ndarray, noise_multiplier: float) -> None:
        """Called once, before the first round."""
        ...


_REQUIRED = ("name", "message_bits", "downlink_bits", "privacy_plan", "start", "client_message", "aggregate",
             "model")


def missing_methods(algorithm: object) -> list[str]:
    """The members of :class:`HeadToHeadAlgorithm` that ``algorithm`` lacks (or has not callable)."""
    out = []
    for member in _REQUIRED:
        value = getattr(algorithm, member, None)
        if value is None or (member != "name" and not callable(value)):
            out.append(member)
    return out


def check_algorithm(algorithm: object) -> HeadToHeadAlgorithm:
    """``algorithm`` if it implements :class:`HeadToHeadAlgorithm`; else a
    :class:`~fedrepro.core.validate.ParameterTypeError` naming what it lacks."""
    missing = missing_methods(algorithm)
    if missing or not isinstance(algorithm, HeadToHeadAlgorithm):
        raise ParameterTypeError(f"algorithm {type(algorithm).__name__} does not implement the head-to-head "
                                 f"interface (fedrepro.headtohead.interface.HeadToHeadAlgorithm): it lacks "
                                 f"{', '.join(missing) or 'a member'}")
    return algorithm
