"""Two readings of the v2 baseline TAMUNA {cite}`condat2023tamuna` that the paper leaves open,
on stacked runs: its compression on, and the control-variate update in the order of the
public baseline written by two of its authors.

:class:`~fedrepro.fedplt.baselines.tamuna.TAMUNA` runs compression off (``s = c``) and updates
the control variates in the round they are computed in (spec §4, both [CHOICE]).

**The update order of the Flower baseline** (:class:`TAMUNAFlowerOrder`). The public baseline
postpones step 5 to the agent's next participation and then uses the server model of that
moment (spec §4, "Notes on the sources"): an agent of the cohort of round ``r`` first applies
its pending update ``h_i <- h_i + (eta/gamma)(xbar_r - w_i^last)`` with ``xbar_r`` the model it
receives now and ``w_i^last`` its local model of its previous participation, then trains
locally from ``xbar_r``; after the cohort mean, its local model becomes ``w_i^last``. With
every agent in every round this is the paper's order (``xbar_r`` is the previous round's
mean); with cohorts it is not.

**Compression** (:class:`CompressedTAMUNA`). TAMUNA's own method compresses the uplink: in round ``r`` a random pattern
``q_j in {0, 1}^n`` per cohort agent has exactly ``s`` ones per coordinate across the cohort
(``2 <= s <= c``), and steps 4-5 of the round become (spec §4)

    xbar_{r+1} = (1/s) sum_{j in Omega_r} q_j * w_j,
    h_i <- h_i + (eta/gamma) q_i * (xbar_{r+1} - w_i)    (i in Omega_r),

the rest of the round (cohort, ``L_r ~ Geom(p)``, local steps on ``f_i - <h_i, .>``) being
:class:`TAMUNA`'s. The pattern is drawn uniformly: for every coordinate, ``s`` of the ``c``
cohort agents uniformly without replacement (the ``s`` smallest of one uniform draw per agent
and coordinate). The control-variate step defaults to the upper end of the Flower baseline's
range, ``eta = p c (s - 1) / (s (c - 1))`` (spec §4, "the upper end usually works best"),
computed from each round's cohort size ``c``; ``s = c`` gives ``eta = p`` and the plain cohort
mean, i.e. :class:`TAMUNA`.

The compressed classes fix ``s`` (:class:`TAMUNAS2`: ``s = 2``, the strongest compression
TAMUNA allows). None of these classes is in :data:`fedrepro.fedplt.baselines.ALGORITHMS` (the
paper's baselines); :mod:`fedrepro.chapters.fedplt.readings.tamuna` runs them.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from fedrepro.fedplt.baselines.tamuna import TAMUNA
from fedrepro.fedplt.batched import RunStreams, State, local_agd, local_gd

__all__ = ["CompressedTAMUNA", "TAMUNAFlowerOrder", "TAMUNAS2", "compression_pattern", "eta_upper"]


def eta_upper(p: float, c: np.ndarray | int, s: int) -> np.ndarray:
    """The upper end of the control-variate step range, ``p c (s - 1) / (s (c - 1))`` (Flower
    README; ``p`` when ``s = c``)."""
    c = np.asarray(c, dtype=float)
    return np.where(c > 1, p * c * (s - 1) / (s * np.maximum(c - 1, 1)), p)


def compression_pattern(members: np.ndarray, s: int, uniforms: np.ndarray) -> np.ndarray:
    """The masks ``q`` (bool, ``(R, N, n)``): for every run and coordinate, the ``s`` cohort
    members (``members``, bool ``(R, N)``) with the smallest ``uniforms`` (``(R, N, n)``), i.e.
    ``s`` of them uniformly without replacement. Raises ``ValueError`` when a cohort has fewer
    than ``s`` members."""
    if np.any(members.sum(axis=1) < s):
        raise ValueError(f"every cohort needs at least s = {s} agents, got {int(members.sum(axis=1).min())}")
    u = np.where(members[:, :, None], uniforms, np.inf)
    kth = np.partition(u, s - 1, axis=1)[:, s - 1:s, :]
    return (u <= kth) & members[:, :, None]


def _local_models(algo: TAMUNA, xbar: np.ndarray, h: np.ndarray, streams: RunStreams) -> tuple[np.ndarray, np.ndarray]:
    """Steps 2-3 of a TAMUNA round (:meth:`TAMUNA.step`): ``L_r ~ Geom(p)`` from the runs'
    streams and every agent's ``L_r`` local steps on ``f_i - <h_i, .>`` from ``xbar``
    (GD, or the AGD variant). Returns the local models ``(R, N, n)`` and ``L``."""
    R, N, n = h.shape
    L = algo.local_steps(streams)
    W0 = np.broadcast_to(xbar[:, None, :], (R, N, n))
    grad_phi = algo._stepping_grad(h, L)
    if algo.solver == "agd":
        return local_agd(grad_phi, W0, algo.problem.lam_bar, algo.problem.lam, int(L.max()), steps=L[:, None, None]), L
    return local_gd(grad_phi, W0, algo.param("gamma"), int(L.max()), steps=L[:, None, None]), L


class CompressedTAMUNA(TAMUNA):
    """TAMUNA with the ``s``-sparse compression of its uplink; see the module docstring."""

    name: ClassVar[str] = "TAMUNA (compressed)"
    sparsity: ClassVar[int] = 0  # set by each subclass

    def validate(self) -> None:
        if self.sparsity < 2:
            raise ValueError(f"{type(self).__name__}: the sparsity s must be an integer >= 2, got {self.sparsity}")
        given_eta = "eta" in self.params
        if not given_eta:  # checked by TAMUNA against [p/2, p]; replaced by the per-round rule below
            self.params["eta"] = np.asarray(self.p)
        super().validate()
        self._eta_rule = not given_eta

    def step(self, state: State, active: np.ndarray | None, streams: RunStreams) -> tuple[State, np.ndarray]:
        xbar, h = state["xbar"], state["h"]
        R, N, n = h.shape
        W, L = _local_models(self, xbar, h, streams)
        members = np.ones((R, N), dtype=bool) if active is None else active
        count = members.sum(axis=1)
        q = compression_pattern(members, self.sparsity, streams.uniform((N, n)))
        xbar_new = np.where(q, W, 0.0).sum(axis=1) / self.sparsity
        eta = eta_upper(self.p, count, self.sparsity) if self._eta_rule else self.param("eta")
        eta = np.reshape(eta, (-1,) + (1,) * 2) if np.ndim(eta) else eta
        h_new = h + (eta / self.param("gamma")) * np.where(q, xbar_new[:, None, :] - W, 0.0)
        return {"xbar": xbar_new, "h": h_new}, L * count


class TAMUNAS2(CompressedTAMUNA):
    """TAMUNA with ``s = 2`` ones per coordinate across the cohort (the strongest compression)."""

    name: ClassVar[str] = "TAMUNA (s = 2)"
    sparsity: ClassVar[int] = 2


class TAMUNAFlowerOrder(TAMUNA):
    """TAMUNA (compression off) with the control-variate update postponed to the agent's next
    participation, as the Flower baseline orders it; see the module docstring."""

    name: ClassVar[str] = "TAMUNA (Flower order)"

    def init_state(self, runs: int, streams: RunStreams) -> State:
        state = super().init_state(runs, streams)
        N, n = self.problem.N, self.problem.n
        state["w_last"] = np.zeros((runs, N, n))
        state["pending"] = np.zeros((runs, N), dtype=bool)
        return state

    def step(self, state: State, active: np.ndarray | None, streams: RunStreams) -> tuple[State, np.ndarray]:
        xbar, h, w_last, pending = state["xbar"], state["h"], state["w_last"], state["pending"]
        R, N, n = h.shape
        members = np.ones((R, N), dtype=bool) if active is None else active
        due = (members & pending)[:, :, None]
        h = np.where(due, h + (self.param("eta") / self.param("gamma")) * (xbar[:, None, :] - w_last), h)
        W, L = _local_models(self, xbar, h, streams)
        count = members.sum(axis=1)
        total = np.where(members[:, :, None], W, 0.0).sum(axis=1)
        xbar_new = np.where(count[:, None] > 0, total / np.maximum(count, 1)[:, None], xbar)
        m = members[:, :, None]
        return ({"xbar": xbar_new, "h": h, "w_last": np.where(m, W, w_last), "pending": pending | members},
                L * count)
