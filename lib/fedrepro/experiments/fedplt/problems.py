"""Runs of the page "Fed-PLT: the test problems": the stored results ``fedplt/problems``
(:class:`ProblemsConfig`), their run (unit, combine) functions and the computing helpers those
call. The tables, figures and facts that read them stay in
:mod:`fedrepro.chapters.fedplt.problems`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import generator
from fedrepro.fedplt.algorithm import default_step_size, run_fedplt
from fedrepro.problems import LogisticProblem, logistic_v1, logistic_v2


@dataclass(frozen=True)
class ProblemsConfig(ExperimentConfig):
    """Settings of the test-problem report.

    * ``seed``: data seed of every problem (the library default, 0, used by the experiments);
    * ``radii`` x ``directions``: sample points ``r u`` (``u`` uniform on the unit sphere,
      drawn from a stream of ``seed`` only), and each of them with its first coordinate set
      to 1, at which Hessian spectra are measured;
    * ``far_radius``: radius of the v1 strong-convexity finding;
    * ``ne_values``, ``rho``, ``tol``, ``k_max``: the ``N_e`` sweep (Fed-PLT, local GD, default
      step, full participation, ``x_0 = z_0 = 0``) to ``||sum_i grad f_i(xbar_k)||^2 <= tol``;
    * ``trace_ne``, ``trace_iterations``: the convergence traces.
    """

    part: ClassVar[str] = "fedplt"
    experiment: ClassVar[str] = "problems"

    profile: str = "paper"
    seed: int = 0
    radii: tuple[float, ...] = (0.0, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 200.0)
    directions: int = 64
    far_radius: float = 200.0
    ne_values: tuple[int, ...] = (1, 2, 5, 8, 10, 20)
    rho: float = 1.0
    tol: float = 1e-5
    k_max: int = 1000
    trace_ne: int = 5
    trace_iterations: int = 80

    @classmethod
    def for_profile(cls, profile: str) -> ProblemsConfig:
        """The paper profile, or the quick one (fewer sample points, ``N_e`` and iterations)."""
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", radii=(0.0, 1.0, 10.0, 200.0), directions=16,
                       ne_values=(1, 2, 5, 20), trace_iterations=50)
        return cls()


def build_problems(seed: int = 0) -> dict[str, LogisticProblem]:
    """The three test problems, keyed as :data:`PROBLEMS`: v2 convex and nonconvex
    (``logistic_v2``, same data) and v1 (``logistic_v1``), all with data seed ``seed`` and the
    loose smoothness bound (the experiments' default)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return {"v2-convex": logistic_v2(True, seed=seed), "v2-nonconvex": logistic_v2(False, seed=seed),
            "v1": logistic_v1(seed=seed)}


def _check_problem(problem: Any) -> LogisticProblem:
    if not isinstance(problem, LogisticProblem):
        raise ValueError(f"problem must be a LogisticProblem, got {type(problem).__name__}")
    return problem


def class_balance(problem: LogisticProblem) -> dict[str, float]:
    """Fraction of labels ``+1``: over all data (``global``) and the smallest and largest
    over agents (``agent_min``, ``agent_max``)."""
    p = _check_problem(problem)
    per_agent = np.mean(p.labels > 0, axis=1)
    return {"global": float(np.mean(p.labels > 0)), "agent_min": float(per_agent.min()),
            "agent_max": float(per_agent.max())}


def sample_points(n: int, radii: Sequence[float], directions: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Points ``r u`` for every radius ``r`` and ``directions`` directions ``u`` uniform on the
    unit sphere of ``R^n`` (the same directions at every radius): shape
    ``(len(radii) * directions, n)``, radius-major."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    r = np.asarray(radii, dtype=float)
    if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r) & (r >= 0)):
        raise ValueError(f"radii must be a non-empty sequence of finite numbers >= 0, got {radii!r}")
    if isinstance(directions, bool) or not isinstance(directions, (int, np.integer)) or directions < 1:
        raise ValueError(f"directions must be an integer >= 1, got {directions!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    u = rng.standard_normal((int(directions), int(n)))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return (r[:, None, None] * u[None]).reshape(-1, int(n))


def hessian_extremes(problem: LogisticProblem, points: Any) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest eigenvalue of every agent's Hessian ``grad^2 f_i(x)`` at every
    point: two arrays of shape ``(P, N)`` for ``points`` of shape ``(P, n)``.

    These are the moduli of Assumption 1 seen locally: ``lam_i <= min`` and
    ``lam_bar_i >= max`` at every point."""
    p = _check_problem(problem)
    X = np.asarray(points, dtype=float)
    if X.ndim != 2 or X.shape[1] != p.n or X.shape[0] < 1:
        raise ValueError(f"points must have shape (P, {p.n}) with P >= 1, got {X.shape}")
    lo = np.empty((X.shape[0], p.N))
    hi = np.empty((X.shape[0], p.N))
    for j, x in enumerate(X):  # loop over points; agents are vectorised
        eig = np.linalg.eigvalsh(p.hessian(np.broadcast_to(x, (p.N, p.n))))
        lo[j], hi[j] = eig[:, 0], eig[:, -1]
    return lo, hi


def v1_strong_convexity(seed: int = 0, radius: float = 200.0, directions: int = 64,
                        rng: np.random.Generator | None = None) -> dict[str, Any]:
    """The v1 constants counterexample (v1 §VII): v1 states ``f_i in F_{eps, q_i/4 + eps}``
    with ``eps = 5``, but ``f_i`` carries the regulariser ``eps/(2N) ||x||^2`` only.

    On ``logistic_v1(seed)`` this measures, at ``directions`` points of norm ``radius``
    (uniform directions from ``rng``, default ``default_rng(seed)``), the smallest Hessian
    eigenvalue over agents, ``min_i lam_min(grad^2 f_i(x))``, and the smallest eigenvalue of
    ``grad^2 sum_i f_i(x)``; also at ``x = 0`` and at ``x*``. Far from the origin the data
    curvature vanishes, so the first tends to ``eps / N`` (0.5) and the second to ``eps``:
    ``eps`` is the modulus of the sum, not of each ``f_i``. Returns the per-point arrays and
    their extremes with the stated and corrected constants."""
    radius = float(radius)
    if not (np.isfinite(radius) and radius >= 0):
        raise ValueError(f"radius must be finite and >= 0, got {radius!r}")
    if rng is None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        rng = np.random.default_rng(seed)
    p = logistic_v1(seed=seed)
    X = sample_points(p.n, (radius,), directions, rng)
    lo, hi = hessian_extremes(p, X)
    total = np.array([np.linalg.eigvalsh(p.total_hessian(x))[0] for x in X])
    lo0, _ = hessian_extremes(p, np.zeros((1, p.n)))
    los, _ = hessian_extremes(p, p.x_star()[None])
    eps = float(p.info["eps"])
    stated_bar = np.asarray(p.info["stated_lam_bar_i"])
    return {
        "eps": eps, "N": p.N, "radius": radius, "stated_lam": float(p.info["stated_lam"]),
        "corrected_lam": eps / p.N, "library_lam": p.lam,
        "agent_min_eig": lo.min(axis=1), "total_min_eig": total,
        "far_min": float(lo.min()), "far_max": float(lo.min(axis=1).max()),
        "far_total_min": float(total.min()), "far_total_max": float(total.max()),
        "at_zero": float(lo0.min()), "at_x_star": float(los.min()),
        "stated_lam_bar": float(stated_bar.max()),
        "corrected_lam_bar_loose": p.lam_bar_loose, "corrected_lam_bar_tight": p.lam_bar_tight,
        "max_eig_far": float(hi.max()),
    }


def iterations_to_tolerance(problem: LogisticProblem, ne_values: Sequence[int], *, rho: float = 1.0,
                            tol: float = 1e-5, k_max: int = 1000) -> np.ndarray:
    """``K* = min{k : ||sum_i grad f_i(xbar_k)||^2 <= tol}`` (v2 §VII stopping test, spec §9.6)
    of Fed-PLT with local GD at the default step ``2/(lam_bar + lam + 2/rho)`` (from the
    problem's own ``lam_bar``), full participation and ``x_0 = z_0 = 0``, for every ``N_e``;
    ``-1`` where ``k_max`` iterations do not reach ``tol``."""
    p = _check_problem(problem)
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ValueError(f"k_max must be an integer >= 1, got {k_max!r}")
    out = []
    for Ne in ne_values:
        r = run_fedplt(p, rho=rho, Ne=Ne, K=int(k_max), tol=tol, record=("grad_sq",))
        out.append(-1 if r.iterations_to_tol is None else r.iterations_to_tol)
    return np.asarray(out, dtype=np.int64)


def convergence_trace(problem: LogisticProblem, *, Ne: int = 5, K: int = 80,
                      rho: float = 1.0) -> dict[str, np.ndarray]:
    """``||x_k - 1 (x) x*||`` and ``||sum_i grad f_i(xbar_k)||^2`` for ``k = 0..K`` of Fed-PLT
    (local GD, default step, full participation, ``x_0 = z_0 = 0``)."""
    r = run_fedplt(_check_problem(problem), rho=rho, Ne=Ne, K=K, record=("x_err", "grad_sq"))
    return {"x_err": r.x_err, "grad_sq": r.grad_sq, "gamma": float(r.settings["gamma"])}


def _problem_summary(key: str, p: LogisticProblem, config: ProblemsConfig) -> dict[str, Any]:
    X = sample_points(p.n, config.radii, config.directions,
                      generator(config, "hessian-points", key, fields=("seed",)))
    # and each point with its first coordinate set to 1, where t^2/(1+t^2) has its most
    # negative curvature (-1/2): there the nonconvex regulariser's bound -eps/2 is approached
    X1 = X.copy()
    X1[:, 0] = 1.0
    lo, hi = hessian_extremes(p, np.concatenate([X, X1]))
    lo = np.minimum(lo[:X.shape[0]], lo[X.shape[0]:])
    xs = p.x_star()
    lo_s, hi_s = hessian_extremes(p, xs[None])
    radii = np.asarray(config.radii, dtype=float)
    lo_by_r = lo.reshape(radii.size, config.directions, p.N).min(axis=(1, 2))
    with_tight = p.with_smoothness("tight")
    out: dict[str, Any] = {
        "N": p.N, "n": p.n, "q": p.q, "reg": p.reg, "reg_weight": p.reg_weight,
        "eps": float(p.info["eps"]), "intercept": key == "v1",
        "balance": class_balance(p),
        "lam": p.lam, "lam_bar_tight": p.lam_bar_tight, "lam_bar_loose": p.lam_bar_loose,
        "lam_measured": float(lo.min()), "lam_bar_measured": float(hi.max()),
        "lam_measured_by_radius": lo_by_r, "radii": radii,
        "lam_at_x_star": float(lo_s.min()), "lam_bar_at_x_star": float(hi_s.max()),
        "kappa_tight": p.lam_bar_tight / p.lam if p.lam > 0 else float("nan"),
        "kappa_loose": p.lam_bar_loose / p.lam if p.lam > 0 else float("nan"),
        "x_star": xs, "newton_grad_norm": float(p.x_star_info["grad_norm"]),
        "newton_iterations": int(p.x_star_info["iterations"]),
        "newton_hessian_min_eig": float(p.x_star_info["hessian_min_eig"]),
    }
    out["gamma_loose"] = float(default_step_size(p, config.rho))
    out["gamma_tight"] = float(default_step_size(with_tight, config.rho))
    if key == "v1":
        out["stated_lam"] = float(p.info["stated_lam"])
        out["stated_lam_bar"] = float(np.max(p.info["stated_lam_bar_i"]))
    return out


def run(config: ProblemsConfig) -> dict[str, Any]:
    """Compute the report (see the module docstring)."""
    if not isinstance(config, ProblemsConfig):
        raise ValueError(f"config must be a ProblemsConfig, got {type(config).__name__}")
    problems = build_problems(config.seed)
    out: dict[str, Any] = {"problems": {k: _problem_summary(k, p, config) for k, p in problems.items()}}
    out["v1_finding"] = v1_strong_convexity(
        config.seed, config.far_radius, config.directions,
        rng=generator(config, "v1-far-directions", fields=("seed",)))
    v2 = problems["v2-convex"]
    ne = np.asarray(config.ne_values, dtype=np.int64)
    out["ne_sweep"] = {
        "ne_values": ne,
        "loose": iterations_to_tolerance(v2.with_smoothness("loose"), config.ne_values, rho=config.rho,
                                         tol=config.tol, k_max=config.k_max),
        "tight": iterations_to_tolerance(v2.with_smoothness("tight"), config.ne_values, rho=config.rho,
                                         tol=config.tol, k_max=config.k_max),
    }
    out["traces"] = {k: convergence_trace(problems[k], Ne=config.trace_ne, K=config.trace_iterations,
                                          rho=config.rho) for k in ("v2-convex", "v1")}
    return out


def load(profile: str = "paper") -> dict[str, Any]:
    """The stored result of :class:`ProblemsConfig` for ``profile`` (computed if missing or
    stale)."""
    return load_or_run(ProblemsConfig.for_profile(profile), run)
