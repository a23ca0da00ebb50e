"""Experiments of the chapter "Fed-PLT: the test problems".

Every Fed-PLT experiment runs on the federated logistic-regression problems of the papers'
numerical sections (v2 §VII, v1 §VII), built by :mod:`fedrepro.problems.logistic`. This
module documents them with numbers computed by the library:

* the problems and the realised class split of our data generator (a choice: the papers only
  say "randomly generated, to have a roughly 50-50 split");
* the moduli ``lam`` and ``lam_bar`` (tight and loose) the library uses, against the extreme
  Hessian eigenvalues measured at sampled points, and v1's stated constants
  ``f_i in F_{eps, q_i/4 + eps}`` beside ours;
* the v1 finding: the per-agent regulariser ``eps/(2N) ||x||^2`` makes ``f_i`` only
  ``eps/N``-strongly convex (:func:`v1_strong_convexity`);
* ``x*`` by Newton's method and the gradient residual it reaches (spec §9.5);
* why the experiments take the step size from the loose smoothness bound: iterations to the
  v2 stopping test ``||sum_i grad f_i(xbar_k)||^2 <= 1e-5`` against ``N_e``, beside the
  iteration counts decoded from v2 Table IX (:func:`paper_table_ix_iterations`);
* convergence traces of Fed-PLT on the v2 convex and v1 problems.

The result of :class:`ProblemsConfig` is stored with :func:`fedrepro.core.cache.load_or_run`
(:func:`load`); the ``*_frame`` and ``figure_*`` functions render it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fedrepro.core.cache import ExperimentConfig, load_or_run
from fedrepro.core.rng import generator
from fedrepro.fedplt.algorithm import default_step_size, run_fedplt
from fedrepro.problems import LogisticProblem, logistic_v1, logistic_v2
from fedrepro.report.book import check_profile, roundoff, sig3

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "PROBLEMS", "ProblemsConfig", "build_problems", "class_balance",
    "sample_points", "hessian_extremes", "v1_strong_convexity", "iterations_to_tolerance",
    "convergence_trace", "run", "load", "paper_table_ix_iterations",
    "problems_frame", "constants_frame", "lam_by_radius_frame", "v1_constants_frame", "newton_frame", "ne_frame",
    "ne_trend", "ne_summary", "v1_summary", "figure_ne", "figure_convergence",
]

#: Problem keys, in the chapter's order, with their labels.
PROBLEMS: dict[str, str] = {
    "v2-convex": "v2, convex (r = ||x||^2/2)",
    "v2-nonconvex": "v2, nonconvex (r = sum x_j^2/(1+x_j^2))",
    "v1": "v1 (eps/(2N) ||x||^2, intercept)",
}

#: Library code the stored result depends on.


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
    seed_name: ClassVar[str] = "fedrepro.fedplt.problems_report:ProblemsConfig"  # its random streams: unchanged by moves

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


# --------------------------------------------------------------------------- problems


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


# --------------------------------------------------------------------------- Fed-PLT runs


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


# --------------------------------------------------------------------------- the experiment


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


# --------------------------------------------------------------------------- paper side


def paper_table_ix_iterations() -> dict[int, int]:
    """Iteration counts ``K*`` of v2 Table IX, decoded from its times.

    Table IX prints the time to the stopping test for ``N_e`` = 1, 2, 5, 8, 10, 20 and
    ``t_C`` = 0.1, 1, 10, 100 (``t_G = 1``). With full participation each iteration costs
    ``(N_e t_G + t_C) N`` (v2 Table II, ``N = 100``), so ``K* = time / ((N_e + t_C) N)``.
    The decoding is accepted only if every ``t_C`` column gives the same integer (to the
    printed precision, 1%); otherwise ``ValueError``."""
    from fedrepro.report.paper import load_table

    per_ne: dict[int, list[float]] = {}
    for cell in load_table("fedplt-v2-TIX"):
        ne = int(cell.row.split("=")[1])
        tc = float(cell.column.split("=")[1])
        per_ne.setdefault(ne, []).append(cell.value / ((ne * 1.0 + tc) * 100))
    out = {}
    for ne, ks in sorted(per_ne.items()):
        k = int(round(ks[0]))
        if any(abs(v - k) > 0.01 * k for v in ks):
            raise ValueError(f"Table IX times at Ne={ne} do not decode to one iteration count: {ks}")
        out[ne] = k
    return out


# --------------------------------------------------------------------------- rendering


def _fmt(x: Any) -> str:
    if isinstance(x, float) and np.isnan(x):
        return "-"
    return sig3(x)


def problems_frame(result: dict[str, Any]) -> pd.DataFrame:
    """One row per problem: sizes, regulariser, and the realised share of label ``+1``
    (global, and smallest/largest over agents)."""
    import pandas as pd

    rows = []
    for key, label in PROBLEMS.items():
        s = result["problems"][key]
        b = s["balance"]
        rows.append({"problem": label, "N": s["N"], "n": s["n"], "q_i": s["q"], "eps": _fmt(s["eps"]),
                     "weight of r in f_i": _fmt(s["reg_weight"]), "share +1": _fmt(b["global"]),
                     "agent min": _fmt(b["agent_min"]), "agent max": _fmt(b["agent_max"])})
    return pd.DataFrame(rows).set_index("problem")


def constants_frame(result: dict[str, Any]) -> pd.DataFrame:
    """The moduli per problem: ``lam`` used by the library and measured (smallest Hessian
    eigenvalue over agents and sample points), ``lam_bar`` tight and loose and the largest
    measured eigenvalue, the condition numbers ``lam_bar / lam``, the default GD steps at
    ``rho`` of the config, and v1's stated constants."""
    import pandas as pd

    rows = []
    for key, label in PROBLEMS.items():
        s = result["problems"][key]
        rows.append({"problem": label, "lam": _fmt(s["lam"]), "lam measured": _fmt(s["lam_measured"]),
                     "lam_bar tight": _fmt(s["lam_bar_tight"]), "lam_bar loose": _fmt(s["lam_bar_loose"]),
                     "max eig measured": _fmt(s["lam_bar_measured"]),
                     "kappa tight": _fmt(s["kappa_tight"]), "kappa loose": _fmt(s["kappa_loose"]),
                     "gamma tight": _fmt(s["gamma_tight"]), "gamma loose": _fmt(s["gamma_loose"]),
                     "paper lam": _fmt(s.get("stated_lam", float("nan"))),
                     "paper lam_bar": _fmt(s.get("stated_lam_bar", float("nan")))})
    return pd.DataFrame(rows).set_index("problem")


def lam_by_radius_frame(result: dict[str, Any]) -> pd.DataFrame:
    """Smallest Hessian eigenvalue over agents and directions, per sampling radius."""
    import pandas as pd

    radii = result["problems"]["v1"]["radii"]
    data = {PROBLEMS[k]: [_fmt(v) for v in result["problems"][k]["lam_measured_by_radius"]] for k in PROBLEMS}
    return pd.DataFrame(data, index=pd.Index([_fmt(float(r)) for r in radii], name="radius"))


def v1_constants_frame(result: dict[str, Any]) -> pd.DataFrame:
    """The v1 finding: the smallest Hessian eigenvalue of the ``f_i`` (and of their sum) at
    ``x = 0``, at ``x*`` and far from the origin, against the stated and corrected moduli."""
    import pandas as pd

    f = result["v1_finding"]
    rows = [
        ("paper: lam of every f_i (eps)", _fmt(f["stated_lam"])),
        ("corrected: eps/N", _fmt(f["corrected_lam"])),
        ("measured min_i lam_min(grad^2 f_i) at x = 0", _fmt(f["at_zero"])),
        ("measured min_i lam_min(grad^2 f_i) at x*", _fmt(f["at_x_star"])),
        (f"measured min_i lam_min(grad^2 f_i), ||x|| = {_fmt(f['radius'])} (min over directions)",
         _fmt(f["far_min"])),
        (f"measured min_i lam_min(grad^2 f_i), ||x|| = {_fmt(f['radius'])} (max over directions)",
         _fmt(f["far_max"])),
        (f"measured lam_min(grad^2 sum_i f_i), ||x|| = {_fmt(f['radius'])} (min over directions)",
         _fmt(f["far_total_min"])),
        ("paper: lam_bar = max_i q_i/4 + eps", _fmt(f["stated_lam_bar"])),
        ("corrected loose: max_i q_i/4 + eps/N", _fmt(f["corrected_lam_bar_loose"])),
        ("corrected tight: max_i lam_max(A_i^T A_i)/(4 m_i) + eps/N", _fmt(f["corrected_lam_bar_tight"])),
    ]
    return pd.DataFrame(rows, columns=["quantity", "value"]).set_index("quantity")


def newton_frame(result: dict[str, Any]) -> pd.DataFrame:
    """``x*`` by Newton: the residual ``||sum_i grad f_i(x*)||``, the iterations and the
    smallest eigenvalue of ``grad^2 sum_i f_i(x*)`` (positive: a minimiser)."""
    import pandas as pd

    rows = []
    for key, label in PROBLEMS.items():
        s = result["problems"][key]
        rows.append({"problem": label, "||sum grad f_i(x*)||": roundoff(s["newton_grad_norm"]),
                     "Newton iterations": s["newton_iterations"],
                     "lam_min of Hessian of sum at x*": _fmt(s["newton_hessian_min_eig"]),
                     "||x*||": _fmt(float(np.linalg.norm(s["x_star"])))})
    return pd.DataFrame(rows).set_index("problem")


def ne_frame(result: dict[str, Any]) -> pd.DataFrame:
    """``K*`` against ``N_e`` with the step from the loose and from the tight ``lam_bar``,
    beside the iteration counts decoded from v2 Table IX."""
    import pandas as pd

    sweep = result["ne_sweep"]
    paper = paper_table_ix_iterations()
    rows = []
    for i, ne in enumerate(sweep["ne_values"]):
        ne = int(ne)
        rows.append({"Ne": ne, "K* loose": _k(sweep["loose"][i]), "K* tight": _k(sweep["tight"][i]),
                     "paper (Table IX, decoded)": paper.get(ne, "-")})
    return pd.DataFrame(rows).set_index("Ne")


def _k(k: Any) -> str:
    return "not reached" if int(k) < 0 else str(int(k))


def ne_trend(result: dict[str, Any]) -> dict[str, Any]:
    """The trend of ``K*`` in ``N_e``: for each bound whether ``K*`` is non-increasing, the
    ratio ``K*(smallest N_e) / K*(largest N_e)`` and ``max K* / min K*``."""
    sweep = result["ne_sweep"]
    out: dict[str, Any] = {}
    for name in ("loose", "tight"):
        k = np.asarray(sweep[name], dtype=float)
        reached = bool(np.all(k > 0))
        out[name] = {"reached": reached,
                     "non_increasing": reached and bool(np.all(np.diff(k) <= 0)),
                     "first_over_last": float(k[0] / k[-1]) if reached else float("nan"),
                     "max_over_min": float(k.max() / k.min()) if reached else float("nan")}
    return out


def ne_summary(result: dict[str, Any]) -> str:
    """Two lines: for the loose and the tight step, whether ``K*`` is non-increasing in
    ``N_e`` and the ratio ``K*(smallest N_e) / K*(largest N_e)``."""
    trend = ne_trend(result)
    ne = result["ne_sweep"]["ne_values"]
    lines = []
    for name in ("loose", "tight"):
        t = trend[name]
        lines.append(f"{name}: every run reached the tolerance: {t['reached']}; K* non-increasing in Ne: "
                     f"{t['non_increasing']}; K*(Ne={int(ne[0])}) / K*(Ne={int(ne[-1])}) = "
                     f"{_fmt(t['first_over_last'])}; max K* / min K* = {_fmt(t['max_over_min'])}")
    return "\n".join(lines)


def v1_summary(result: dict[str, Any]) -> str:
    """One line: the stated modulus of v1, the measured one and whether the statement fails."""
    f = result["v1_finding"]
    measured = min(f["far_min"], f["at_zero"], f["at_x_star"])
    return (f"stated lam = {_fmt(f['stated_lam'])}; smallest sampled eigenvalue of the Hessians of the f_i = "
            f"{_fmt(measured)}; eps/N = {_fmt(f['corrected_lam'])}; stated modulus refuted: "
            f"{measured < f['stated_lam']}; eps/N holds at every sampled point: "
            f"{bool(np.min(f['agent_min_eig']) >= f['corrected_lam'] - 1e-9)}")


def figure_ne(result: dict[str, Any]) -> Figure:
    """``K*`` against ``N_e`` (loose and tight step) and the decoded Table IX counts."""
    import matplotlib.pyplot as plt

    sweep = result["ne_sweep"]
    paper = paper_table_ix_iterations()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ne = np.asarray(sweep["ne_values"])
    for name, style in (("loose", "o-"), ("tight", "s-")):
        k = np.asarray(sweep[name], dtype=float)
        k[k < 0] = np.nan
        ax.plot(ne, k, style, label=f"ours, step from the {name} $\\bar\\lambda$")
    pn = sorted(paper)
    ax.plot(pn, [paper[x] for x in pn], "k^--", label="v2 Table IX (decoded)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(pn)
    ax.set_xticklabels([str(x) for x in pn])
    ax.set_yticks([5, 10, 20, 50])
    ax.set_yticklabels(["5", "10", "20", "50"])
    ax.yaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("local steps $N_e$")
    ax.set_ylabel("iterations $K^\\star$ to $\\|\\sum_i\\nabla f_i(\\bar x_k)\\|^2\\leq 10^{-5}$")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_convergence(result: dict[str, Any]) -> Figure:
    """Convergence of Fed-PLT (local GD, loose step): ``||x_k - 1 (x) x*||`` and
    ``||sum_i grad f_i(xbar_k)||^2`` against ``k`` on the v2 convex and v1 problems."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for key in ("v2-convex", "v1"):
        t = result["traces"][key]
        k = np.arange(t["x_err"].size)
        label = {"v2-convex": "v2, convex", "v1": "v1"}[key]
        axes[0].semilogy(k, t["x_err"], label=label)
        axes[1].semilogy(k, t["grad_sq"], label=label)
    axes[0].set_ylabel("$\\|\\mathbf{x}_k - \\mathbf{1}\\otimes x^\\star\\|$")
    axes[1].set_ylabel("$\\|\\sum_i\\nabla f_i(\\bar x_k)\\|^2$")
    axes[1].axhline(1e-5, color="k", lw=0.8, ls=":", label="stopping test $10^{-5}$")
    for ax in axes:
        ax.set_xlabel("iteration $k$")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig
