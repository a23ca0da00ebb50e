"""FedPD {cite}`zhang2021fedpd` on stacked runs, as Fed-PLT v2 §VII compares it (spec §2).

FedPD is a primal-dual (augmented-Lagrangian) method on the consensus reformulation
``min sum_i f_i(x_i)`` s.t. ``x_i = x_0``. Each agent keeps its local primal ``x_i`` and dual
``lambda_i``; the coordinator keeps the centre ``x_0`` (``2N + 1`` vectors, v2 Table I).
One iteration (spec §2, the order of the authors' Python optimiser ``FedPD_SGD``):

1. every agent takes ``N_e`` local steps from its previous primal ``x_i`` (warm start) on the
   local augmented Lagrangian
   ``L_i(w) = f_i(w) + <lambda_i, w - x_0> + ||w - x_0||^2 / (2 eta)``, whose gradient is
   ``grad f_i(w) + lambda_i + (w - x_0) / eta``; the result is the new ``x_i``;
2. dual step ``lambda_i <- lambda_i + (x_i - x_0) / eta`` (with the *new* ``x_i``);
3. the agent uploads the centre candidate ``c_i = x_i + eta lambda_i`` (with the *new*
   dual) and the coordinator sets ``x_0 = mean_i c_i`` and broadcasts it.

The same order is in decent-bench's ``FedPD`` (warm start, dual with the new primal, centre
candidate with the new dual); the authors' MATLAB script builds the centre from the old
dual instead, which has the same fixed point but other dynamics (spec §2).
The original lets the coordinator skip the averaging with probability ``p``; v2 Table II
charges one communication per iteration, so here ``p = 0`` (spec §9.9 item 8).

Fixed point (spec §2): ``x_i = x_0 = x*`` and ``lambda_i = -grad f_i(x*)`` (so
``sum_i lambda_i = 0``). Model point (spec §9.6): ``xbar = mean_i x_i``.

Parameters: ``eta > 0`` (penalty and dual step); for GD the local step ``eta1`` in
``(0, 2 / L)`` with ``L = lam_bar + 1/eta`` the smoothness of ``L_i``, default
``theta * 2 / (L + mu)`` with ``mu = lam + 1/eta`` (floored at ``MU_FLOOR`` for a weakly
convex problem, as Fed-PLT does) and ``theta = 1``. The AGD variant (spec §0, our
construction: v1 calls it "a straightforward modification") runs v2 eq. (12) on ``L_i``
with ``mu_phi = lam + 1/eta`` (floored at ``MU_FLOOR`` when the problem is only weakly
convex) and ``L_phi = lam_bar + 1/eta``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from fedrepro.fedplt.algorithm import MU_FLOOR
from fedrepro.fedplt.batched import BatchedAlgorithm, RunStreams, State, local_agd, local_gd
from fedrepro.problems.base import FederatedProblem

__all__ = ["FedPD", "SOURCES"]

#: Where each update rule comes from (printed in the book).
SOURCES = (
    'FedPD (Zhang, Hong, Dhople, Yin, Liu, IEEE TSP 2021). Order of one iteration as in the '
    "authors' public Python optimiser (FedPD_SGD) and in decent-bench's FedPD: N_e local steps on "
    'the augmented Lagrangian L_i(w) = f_i(w) + <lambda_i, w - x_0> + ||w - x_0||^2/(2 eta), warm '
    'started at the previous local primal; dual step lambda_i <- lambda_i + (x_i - x_0)/eta with '
    'the new primal; centre candidate c_i = x_i + eta lambda_i with the new dual, averaged by the '
    "coordinator. (The authors' MATLAB script builds the centre from the old dual: same fixed "
    'point, other dynamics.) The original may skip the averaging with probability p; Fed-PLT v2 '
    'Table II charges one communication per iteration, so p = 0. Grids for eta and the local '
    'step, and the AGD variant on L_i: our choices.'
)

#: ``eta`` grid: spec §2's log grid over ``[1e-2, 1e2]``, about two points per decade and
#: denser in ``[0.3, 3]``, where the penalty balances the local and the consensus terms.
ETA_GRID = (0.01, 0.03, 0.1, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0)
#: multipliers of the default GD step (spec §2).
THETA_GRID = (0.25, 0.5, 1.0)


class FedPD(BatchedAlgorithm):
    """FedPD {cite}`zhang2021fedpd` on stacked runs (spec §2); see the module docstring.

    ``FedPD(problem, Ne=5, solver="gd", eta=1.0, eta1=None, theta=1.0)``: ``eta1`` (the GD
    step) defaults to ``theta * 2/(lam_bar + lam + 2/eta)``; give either ``eta1`` or
    ``theta``, and neither with ``solver="agd"`` (its step is ``1/L_phi``).
    """

    name: ClassVar[str] = "FedPD"
    rounds: ClassVar[int] = 1
    extra_gradients: ClassVar[int] = 0
    partial_participation: ClassVar[bool] = False
    memory: ClassVar[str] = "2N+1"
    solvers: ClassVar[tuple[str, ...]] = ("gd", "agd")

    def __init__(self, problem: FederatedProblem, *, Ne: int, solver: str = "gd", eta: Any = 1.0,
                 eta1: Any = None, theta: Any = None):
        params: dict[str, Any] = {"eta": eta}
        if eta1 is not None:
            params["eta1"] = eta1
        if theta is not None:
            params["theta"] = theta
        super().__init__(problem, Ne=Ne, solver=solver, **params)

    @classmethod
    def tuning_grid(cls, problem: FederatedProblem, Ne: int, solver: str = "gd") -> dict[str, list[float]]:
        """``eta`` on a log grid over ``[1e-2, 1e2]`` (13 values) and, for GD, ``theta`` in
        ``{0.25, 0.5, 1}`` (spec §2): 39 points for GD, 13 for AGD. For a weakly convex
        problem only ``eta`` with ``lam + 1/eta > 0`` (``L_i`` strongly convex) is kept."""
        etas = [e for e in ETA_GRID if problem.convex or problem.lam + 1.0 / e > 0]
        if solver == "agd":
            return {"eta": etas}
        return {"eta": etas, "theta": list(THETA_GRID)}

    def moduli(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mu, L)`` of ``L_i``: ``lam + 1/eta`` (floored at ``MU_FLOOR`` when the problem is
        only weakly convex) and ``lam_bar + 1/eta``; per run, shape ``()`` or ``(R,)``."""
        inv = 1.0 / self.params["eta"]
        mu = self.problem.lam + inv
        if not self.problem.convex:
            mu = np.maximum(mu, MU_FLOOR)
        return mu, self.problem.lam_bar + inv

    def validate(self) -> None:
        eta = self.params["eta"]
        if np.any(eta <= 0):
            raise ValueError(f"eta must be > 0, got {eta}")
        has_eta1, has_theta = "eta1" in self.params, "theta" in self.params
        if self.solver == "agd":
            if has_eta1 or has_theta:
                raise ValueError("eta1 and theta set the GD step; with solver='agd' the step is 1/(lam_bar + 1/eta) "
                                 "and they must be left out")
            return
        if has_eta1 and has_theta:
            raise ValueError("give either eta1 (the local step) or theta (a multiple of the default step), not both")
        mu, L = self.moduli()
        if not has_eta1:
            theta = self.params.pop("theta", np.asarray(1.0))
            step = np.asarray(theta * 2.0 / (L + mu), dtype=float)
            # the step is checked too: at the edge of theta's range it can round to 2/L
            if np.any(theta <= 0) or np.any(theta >= (L + mu) / L) or np.any(step >= 2.0 / L):
                raise ValueError(f"theta must lie in (0, (L + mu)/L) so that eta1 = theta * 2/(L + mu) is in (0, 2/L) "
                                 f"(L = lam_bar + 1/eta, mu = lam + 1/eta), got {theta}")
            self.params["eta1"] = step
        eta1 = self.params["eta1"]
        if np.any(eta1 <= 0) or np.any(eta1 >= 2.0 / L):
            raise ValueError(f"eta1 must lie in (0, 2/(lam_bar + 1/eta)) (GD on the L-smooth L_i), got {eta1}")

    def init_state(self, runs: int, streams: RunStreams) -> State:
        N, n = self.problem.N, self.problem.n
        return {"x": np.zeros((runs, N, n)), "lam": np.zeros((runs, N, n)), "x0": np.zeros((runs, n))}

    def step(self, state: State, active: np.ndarray | None, streams: RunStreams) -> tuple[State, np.ndarray]:
        if active is not None:
            raise ValueError("FedPD has no partial participation (v2 Table I); active must be None")
        x, lam = state["x"], state["lam"]
        x0 = state["x0"][:, None, :]  # (R, 1, n): the centre every agent received
        eta = self.param("eta")

        def grad_L(W: np.ndarray) -> np.ndarray:  # gradient of the local augmented Lagrangian
            return self.grad(W) + lam + (W - x0) / eta

        if self.solver == "agd":
            mu, L = self.moduli()
            shape = (-1, 1, 1) if np.ndim(mu) else ()
            W = local_agd(grad_L, x, np.reshape(L, shape), np.reshape(mu, shape), self.Ne)
        else:
            W = local_gd(grad_L, x, self.param("eta1"), self.Ne)
        lam_new = lam + (W - x0) / eta
        centre = (W + eta * lam_new).mean(axis=1)
        R, N = x.shape[:2]
        return {"x": W, "lam": lam_new, "x0": centre}, np.full(R, N * self.Ne)

    def model(self, state: State) -> np.ndarray:
        return state["x"].mean(axis=1)
