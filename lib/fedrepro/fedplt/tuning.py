"""Grid-search tuning of the algorithms of v2 §VII ("tuned to achieve the best performance
possible"), on stacked runs.

Every algorithm class in :mod:`fedrepro.fedplt.baselines` has a ``tuning_grid(problem, Ne,
solver)`` classmethod (its grid, spec §§1-6). :func:`grid_search` runs every grid point for
``trials`` Monte Carlo trials in one batched program (trial ``t`` uses the same random
streams at every grid point: common random numbers), and picks the point with the smallest
mean ``K*`` (iterations to ``||sum_i grad f_i(xbar)||^2 <= tol``). With a fixed ``N_e`` the
time of v2 Tables II-V is ``K*`` times a constant, so the same point minimises the time for
every ``t_C`` (spec §9.6).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.fedplt.baselines import algorithm_class
from fedrepro.fedplt.batched import run_batched
from fedrepro.problems.base import FederatedProblem

__all__ = ["GridSearch", "grid_points", "grid_search"]

MAX_RUNS_PER_BATCH = 400  # stacked runs per batched program (memory: N x runs x q floats)


@dataclass
class GridSearch:
    """Result of :func:`grid_search`.

    ``points[g]`` is the parameter dict of grid point ``g``; ``K_star[g, t]`` its
    iterations to ``tol`` in trial ``t`` (-1: not reached within ``K``); ``mean_K[g]`` the
    mean over trials (``inf`` when a trial did not reach ``tol``); ``best`` the index of the
    smallest ``mean_K`` (the first on ties).
    """

    name: str
    solver: str
    Ne: int
    participation: Any
    points: list[dict[str, float]]
    K_star: np.ndarray
    mean_K: np.ndarray
    best: int
    K: int
    tol: float
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def best_params(self) -> dict[str, float]:
        return dict(self.points[self.best])

    @property
    def best_K_star(self) -> np.ndarray:
        """``K*`` of the chosen point in each trial."""
        return self.K_star[self.best]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "solver": self.solver, "Ne": self.Ne,
                "participation": self.participation, "points": self.points,
                "K_star": self.K_star, "mean_K": self.mean_K, "best": self.best,
                "K": self.K, "tol": self.tol}


def grid_points(grid: Mapping[str, Sequence[float]]) -> list[dict[str, float]]:
    """Cartesian product of a grid ``{name: values}`` as a list of parameter dicts (the
    first parameter varies slowest)."""
    if not grid:
        return [{}]
    keys = list(grid)
    for key in keys:
        if len(grid[key]) == 0:
            raise ValueError(f"grid values for {key} must not be empty")
    return [dict(zip(keys, map(float, combo), strict=False)) for combo in itertools.product(*(grid[k] for k in keys))]


def grid_search(name: str, problem: FederatedProblem, *, Ne: int, solver: str = "gd",
                grid: Mapping[str, Sequence[float]] | None = None, fixed: Mapping[str, Any] | None = None,
                trials: int = 1, participation: Any = None, K: int = 1000, tol: float = 1e-5,
                seed: int = 0, progress: bool = False) -> GridSearch:
    """Tune algorithm ``name`` (v2 §VII) on ``grid`` (default: the class's
    ``tuning_grid(problem, Ne, solver)``) by the mean over ``trials`` of ``K*``.

    ``fixed`` holds further keyword arguments of the algorithm that are not tuned. Grid
    points whose parameters the algorithm rejects (``ValueError``, e.g. a step outside its
    range) are kept with ``K* = -1`` and never chosen.
    """
    cls = algorithm_class(name)
    check_int("trials", trials, 1)
    if grid is None:
        grid = cls.tuning_grid(problem, Ne, solver)
    points = grid_points(grid)
    fixed = dict(fixed or {})
    G = len(points)
    K_star = np.full((G, trials), -1, dtype=np.int64)
    valid = []
    for g, point in enumerate(points):
        try:
            cls(problem, Ne=Ne, solver=solver, **fixed, **point)
        except ValueError:
            continue
        valid.append(g)
    per_batch = max(1, MAX_RUNS_PER_BATCH // trials)
    batches = [valid[i:i + per_batch] for i in range(0, len(valid), per_batch)]
    if progress:
        from tqdm.auto import tqdm
        batches = tqdm(batches, desc=f"tuning {name} ({solver})", leave=False)
    for batch in batches:
        params = {key: np.repeat([points[g][key] for g in batch], trials) for key in points[batch[0]]}
        algo = cls(problem, Ne=Ne, solver=solver, **fixed, **params)
        run = run_batched(algo, K=K, runs=len(batch) * trials, tol=tol, participation=participation,
                          seed=seed, stream_ids=np.tile(np.arange(trials), len(batch)), drop_finished=True)
        K_star[batch] = run.iterations_to_tol.reshape(len(batch), trials)
    reached = np.all(K_star >= 0, axis=1)
    mean_K = np.where(reached, np.where(K_star >= 0, K_star, 0).mean(axis=1), np.inf)
    if not np.any(reached):
        raise ValueError(f"no grid point of {name} reached tol={tol} within K={K} iterations; "
                         "enlarge K or the grid")
    best = int(np.argmin(mean_K))
    return GridSearch(name=name, solver=solver, Ne=int(Ne), participation=participation,
                      points=points, K_star=K_star, mean_K=mean_K, best=best, K=int(K), tol=float(tol),
                      settings={"fixed": fixed, "trials": int(trials), "seed": int(seed)})
