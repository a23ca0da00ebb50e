"""Local solvers written out for the tests: N_e gradient steps, and Nesterov's method with the
constant momentum (sqrt(L) − sqrt(mu))/(sqrt(L) + sqrt(mu)) of Fed-PLT eq. (12)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def gd_steps(grad: Callable[[np.ndarray], np.ndarray], w0: np.ndarray, Ne: int, step: float) -> np.ndarray:
    w = w0.copy()
    for _ in range(Ne):
        w = w - step * grad(w)
    return w


def agd_steps(grad: Callable[[np.ndarray], np.ndarray], w0: np.ndarray, Ne: int, L: float,
              mu: float) -> tuple[np.ndarray, np.ndarray]:
    """The extrapolated output w and the gradient-step sequence u after N_e steps."""
    beta = (np.sqrt(L) - np.sqrt(mu)) / (np.sqrt(L) + np.sqrt(mu))
    w, u = w0.copy(), w0.copy()
    for _ in range(Ne):
        u_next = w - grad(w) / L
        w = u_next + beta * (u_next - u)
        u = u_next
    return w, u
