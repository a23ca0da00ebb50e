"""Fed-PLT with partial participation: v2 Table VI, v1 Table III and the exact-convergence
runs behind v2 §V-C3 (chapter "Participation and privacy").

* **v2 Table VI** (:class:`CohortsConfig`): a uniform cohort of ``c`` of the ``N = 100``
  agents is active at each iteration (``c/N`` = 40 %, ..., 100 %), local gradient descent
  with ``N_e = 5``, ``t_G = 1``, ``t_C = 10``; the time is ``K* (N_e t_G + t_C) c`` (the
  Table II formula with the number of active agents, spec §9.1), ``K*`` the iterations to
  ``||sum_i grad f_i(xbar)||^2 <= 1e-5``; 100 Monte Carlo trials per fraction. One ``rho`` is
  used for every fraction: the one tuned at full participation (the comparison's tuning,
  v2 §VII-D: "tuning the penalty rho"), so that the table isolates the effect of
  participation; a per-fraction grid search on fewer trials shows what re-tuning would gain.
* **v1 Table III** (:class:`V1RatesConfig`): the v1 problem (``N = 10``), ``N_e = 10``,
  ``c = 1, ..., 10`` active agents; the empirical rate is the geometric fit of spec §9.7 to
  the Monte Carlo average of ``log ||x_k - 1 (x) x*||``. Beside it: ``sigma =
  sqrt(1 - p + p r^2)`` of Proposition 2 with ``r`` the full-participation rate (the v1
  observation of spec §9.2) and the mean-contraction ``1 - p (1 - r)``.
* **Exact convergence** (:class:`ExactConfig`): gradient and accelerated local solvers with
  cohorts of 40-100 % and Bernoulli participation, run past the threshold until the model is
  within ``1e-8`` of ``x*`` (v2 §V-C3, claim C10); their per-iteration rates against
  ``sigma`` (claim C22).

:func:`state_errors` runs any :class:`~fedrepro.fedplt.batched.BatchedAlgorithm` on stacked
runs and records the distance of the *whole state* to a reference (what spec §§9.7-9.8
measure), with the same random streams as :func:`~fedrepro.fedplt.batched.run_batched`.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.participation` (a run module); this module re-exports them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.core.validate import check_interval
from fedrepro.report.book import roundoff, sig3

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

from fedrepro.experiments.fedplt.participation import (  # noqa: F401
    _V1_TUNING_RHOS,
    FRACTIONS,
    T_C,
    T_G,
    CohortsConfig,
    ExactConfig,
    StateErrors,
    V1RatesConfig,
    _check_participation,
    _masks,
    _pct,
    _run_cohorts,
    _run_exact,
    _run_v1_rates,
    _settings,
    cohort_size,
    iteration_cost,
    load_cohorts,
    load_exact,
    load_v1_rates,
    paper_time,
    s_norms,
    state_errors,
    tuned_rho,
    tuned_rho_by_rate,
)

__all__ = [
    "FRACTIONS", "T_C", "T_G",
    "CohortsConfig", "ExactConfig", "StateErrors", "V1RatesConfig",
    "cohort_size", "decode_paper_iterations", "figure_time_vs_participation", "figure_v1_rates",
    "iteration_cost", "load_cohorts", "load_exact", "load_v1_rates", "mean_contraction", "paper_time",
    "participation_sigma", "s_norms", "spearman", "state_errors", "table_vi", "tuned_rho", "tuned_rho_by_rate",
    "tuning_frame", "exact_frame", "v1_table_iii", "cohort_summary", "formula_fit", "full_grid_frame",
    "v1_tuning_frame", "s_norm_frame",
]


#: Library code the stored results of this module depend on.


# --------------------------------------------------------------------------------------- costs


def decode_paper_iterations(time: Any, Ne: int, active: float, t_G: float = T_G, t_C: float = T_C) -> np.ndarray:
    """Iterations ``K*`` behind a paper time: ``time / iteration_cost`` (spec §9.1)."""
    t = np.asarray(time, dtype=float)
    if np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError(f"time must be finite and >= 0, got {time!r}")
    return t / iteration_cost(Ne, active, t_G, t_C)


# ------------------------------------------------------------------------------ theory helpers
def participation_sigma(p: Any, norm: float) -> np.ndarray:
    """``sigma = sqrt(1 - p + p ||S||^2)`` of Proposition 2 (uniform ``p_i = p``)."""
    p = np.asarray(p, dtype=float)
    if np.any(~((p > 0) & (p <= 1))):
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    norm = check_interval("norm", norm, 0.0, math.inf)
    return np.sqrt(1.0 - p + p * norm ** 2)


def mean_contraction(p: Any, rate: float) -> np.ndarray:
    """``1 - p (1 - r)``: the contraction of the error *in mean* when each agent is updated with
    probability ``p`` by an ``r``-contraction (Jensen: it lies below ``sigma`` with ``||S|| = r``)."""
    p = np.asarray(p, dtype=float)
    if np.any(~((p > 0) & (p <= 1))):
        raise ValueError(f"p must lie in (0, 1], got {p!r}")
    rate = check_interval("rate", rate, 0.0, math.inf)
    return 1.0 - p * (1.0 - rate)


def spearman(x: Any, y: Any) -> float:
    """Spearman rank correlation of two samples (average ranks for ties)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError("x and y must be 1-D arrays of the same length >= 2")

    def ranks(a):
        order = np.argsort(a, kind="mergesort")
        r = np.empty(a.size)
        r[order] = np.arange(a.size, dtype=float)
        for v in np.unique(a):
            tie = a == v
            r[tie] = r[tie].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


# ----------------------------------------------------------------------------------- Table VI


def cohort_summary(result: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per fraction: mean, std, 10 % and 90 % quantiles of ``K*`` and of the time."""
    K = np.asarray(result["K_star"], dtype=float)
    K = np.where(K >= 0, K, np.nan)
    t = np.asarray(result["time"], dtype=float)
    return {"K_mean": np.nanmean(K, axis=1), "K_std": np.nanstd(K, axis=1),
            "K_p10": np.nanquantile(K, 0.1, axis=1), "K_p90": np.nanquantile(K, 0.9, axis=1),
            "time_mean": np.nanmean(t, axis=1), "time_p10": np.nanquantile(t, 0.1, axis=1),
            "time_p90": np.nanquantile(t, 0.9, axis=1), "reached": np.mean(K >= 0, axis=1)}


def table_vi(profile: str = "paper") -> pd.DataFrame:
    """v2 Table VI: our mean time (``t_G`` units) and ``K*`` over the Monte Carlo trials beside
    the paper's time, its decoded ``K*`` (paper time / cost) and the ratio ours/paper."""
    import pandas as pd

    from fedrepro.report.paper import load_table

    r = load_cohorts(profile)
    s = cohort_summary(r)
    paper = {c.row: c.value for c in load_table("fedplt-v2-TVI")}
    cfg = CohortsConfig.for_profile(profile)
    rows = []
    for i, f in enumerate(r["fractions"]):
        c = int(r["cohort"][i])
        pv = paper.get(_pct(f))
        pK = float(decode_paper_iterations(pv, cfg.Ne, c, cfg.t_G, cfg.t_C)) if pv else math.nan
        rows.append({"active": _pct(f), "c": c, "K* ours (mean)": sig3(s["K_mean"][i]),
                     "K* 10-90%": f"{sig3(s['K_p10'][i])}-{sig3(s['K_p90'][i])}", "K* paper": sig3(pK),
                     "time ours": sig3(s["time_mean"][i]), "time paper": sig3(pv) if pv else "",
                     "ours/paper": sig3(s["time_mean"][i] / pv) if pv else ""})
    return pd.DataFrame(rows).set_index("active")


def tuning_frame(profile: str = "paper") -> pd.DataFrame:
    """Mean ``K*`` (over the tuning trials) of each ``rho`` of the per-fraction grid, the
    best ``rho`` of each fraction and the ``rho`` used (tuned at full participation)."""
    import pandas as pd

    r = load_cohorts(profile)
    frame = pd.DataFrame(r["tune_mean_K"], index=[_pct(f) for f in r["fractions"]],
                         columns=[f"rho={sig3(x)}" for x in r["tune_rhos"]])
    frame = frame.loc[~np.isnan(r["tune_mean_K"]).all(axis=1)]
    out = frame.map(sig3)
    best = np.asarray(r["tune_rhos"])[np.nanargmin(frame.to_numpy(), axis=1)]
    out["best rho"] = [sig3(b) for b in best]
    return out


def full_grid_frame(profile: str = "paper") -> pd.DataFrame:
    """``K*`` of Fed-PLT (GD, full participation) at every ``rho`` of its tuning grid (v2
    problem, ``N_e = 5``): the choice of the ``rho`` used for every fraction."""
    import pandas as pd

    r = load_cohorts(profile)
    K = np.asarray(r["full_K_star"])
    return pd.DataFrame({"rho": [sig3(x) for x in r["full_rhos"]],
                         "K*": [int(k) if k >= 0 else "not reached" for k in K]}).set_index("rho").T


def v1_tuning_frame(profile: str = "paper") -> pd.DataFrame:
    """Empirical full-participation rate of Fed-PLT on the v1 problem at every ``rho`` of the
    grid (v1 §VII-B tunes ``rho`` for the rate)."""
    import pandas as pd

    r = load_v1_rates(profile)
    return pd.DataFrame({"rho": [sig3(x) for x in r["tuning_rhos"]],
                         "rate": [sig3(x) for x in r["tuning_rates"]]}).set_index("rho").T


def s_norm_frame(result: dict[str, Any]) -> pd.DataFrame:
    """``||S||`` and the spectral radius of ``S`` (Proposition 1), printed and corrected, with
    the loose and the tight smoothness constant, from a result's ``"S"`` entry."""
    import pandas as pd

    S = result["S"]
    rows = [{"S": variant, "smoothness": name, "||S||": sig3(S[f"{variant}_{name}"]),
             "spectral radius": sig3(S[f"radius_{variant}_{name}"]), "chi": sig3(S[f"chi_{name}"])}
            for variant in ("printed", "corrected") for name in ("loose", "tight")]
    return pd.DataFrame(rows).set_index(["S", "smoothness"])


def figure_time_vs_participation(result: dict[str, Any]) -> Figure:
    """Time (``t_G`` units) against the fraction of active agents: Monte Carlo spread of our
    runs (box per fraction), their mean, and the paper's Table VI; right: ``K*``."""
    import matplotlib.pyplot as plt

    from fedrepro.report.paper import load_table

    paper = {c.row: c.value for c in load_table("fedplt-v2-TVI")}
    f = 100 * np.asarray(result["fractions"])
    s = cohort_summary(result)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, key, mean, label in ((axes[0], "time", s["time_mean"], "time [$t_G$ units]"),
                                 (axes[1], "K_star", s["K_mean"], "$K^*$ (iterations)")):
        data = np.asarray(result[key], dtype=float)
        ax.boxplot([d[np.isfinite(d) & (d >= 0)] for d in data], positions=f, widths=4, whis=(10, 90),
                   showfliers=False, manage_ticks=False)
        ax.plot(f, mean, "o-", color="C0", label="ours (mean of trials)")
        pv = np.array([paper.get(_pct(x / 100), np.nan) for x in f], dtype=float)
        if key == "K_star":
            pv = pv / np.asarray(result["cost"])
        ax.plot(f, pv, "s--", color="C3", label="paper")
        ax.set_xlabel("active agents [%]")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------ v1 Table III


def _full_rate(agents: np.ndarray, rates: np.ndarray, N: int) -> float:
    full = np.flatnonzero(np.asarray(agents) == N)
    return float(rates[full[0]]) if full.size else math.nan


def v1_table_iii(profile: str = "paper") -> pd.DataFrame:
    """v1 Table III: our rate (Monte Carlo average of log-errors, and the median of per-run
    fits) beside the paper's, the ratio, and the two participation formulas evaluated with
    each side's own full-participation rate ``r``: ``sigma = sqrt(1 - p + p r^2)`` and
    ``1 - p (1 - r)``, ``p = c/N``."""
    import pandas as pd

    from fedrepro.report.paper import load_table

    r = load_v1_rates(profile)
    paper = {int(c.row): c.value for c in load_table("fedplt-v1-TIII")}
    N = int(r["N"])
    r1 = _full_rate(r["agents"], r["rate"], N)
    p1 = paper[N]
    rows = []
    for i, c in enumerate(r["agents"]):
        p = c / N
        pv = paper[int(c)]
        rows.append({"active agents": int(c), "rate ours": sig3(r["rate"][i]),
                     "median of runs": sig3(r["rate_median"][i]), "rate paper": sig3(pv),
                     "ours/paper": sig3(r["rate"][i] / pv),
                     "sigma(ours r)": sig3(float(participation_sigma(p, r1))) if np.isfinite(r1) else "",
                     "1-p(1-r) ours": sig3(float(mean_contraction(p, r1))) if np.isfinite(r1) else "",
                     "sigma(paper r)": sig3(float(participation_sigma(p, p1))),
                     "1-p(1-r) paper": sig3(float(mean_contraction(p, p1)))})
    return pd.DataFrame(rows).set_index("active agents")


def formula_fit(profile: str = "paper") -> dict[str, float]:
    """Largest deviation of the paper's and our Table III rates from ``sigma = sqrt(1-p+p r^2)``
    and from ``1 - p (1 - r)``, each with its own full-participation rate ``r``."""
    from fedrepro.report.paper import load_table

    r = load_v1_rates(profile)
    N = int(r["N"])
    paper = {int(c.row): c.value for c in load_table("fedplt-v1-TIII")}
    agents = np.asarray(r["agents"])
    p = agents / N
    pr = np.array([paper[int(a)] for a in agents])
    r1 = _full_rate(agents, r["rate"], N)
    return {"paper_sigma": float(np.max(np.abs(pr - participation_sigma(p, paper[N])))),
            "paper_mean": float(np.max(np.abs(pr - mean_contraction(p, paper[N])))),
            "ours_sigma": float(np.max(np.abs(r["rate"] - participation_sigma(p, r1)))),
            "ours_mean": float(np.max(np.abs(r["rate"] - mean_contraction(p, r1))))}


def figure_v1_rates(result: dict[str, Any]) -> Figure:
    """v1 Table III: rate against active agents, ours (with the 10-90 % range of per-run fits)
    and the paper's, with ``sigma`` and ``1 - p(1 - r)`` for each side's full rate ``r``."""
    import matplotlib.pyplot as plt

    from fedrepro.report.paper import load_table

    paper = {int(c.row): c.value for c in load_table("fedplt-v1-TIII")}
    N = int(result["N"])
    a = np.asarray(result["agents"])
    grid = np.linspace(1, N, 100)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.fill_between(a, result["rate_p10"], result["rate_p90"], color="C0", alpha=0.2, label="ours, 10-90% of runs")
    ax.plot(a, result["rate"], "o-", color="C0", label="ours (MC mean of log-errors)")
    pa = np.array(sorted(paper))
    ax.plot(pa, [paper[k] for k in pa], "s", color="C3", label="paper (v1 Table III)")
    for r1, color, who in ((_full_rate(a, result["rate"], N), "C0", "ours"), (paper[N], "C3", "paper")):
        if np.isfinite(r1):
            ax.plot(grid, participation_sigma(grid / N, r1), ":", color=color, label=f"sigma, {who} r")
            ax.plot(grid, mean_contraction(grid / N, r1), "--", color=color, alpha=0.7, label=f"1-p(1-r), {who} r")
    ax.set_xlabel("active agents c (of N = 10)")
    ax.set_ylabel("empirical rate")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------- exact convergence (C10)


def exact_frame(profile: str = "paper") -> pd.DataFrame:
    """Per solver and participation: iterations to the ``1e-5`` threshold and to
    ``||xbar - x*|| < 1e-8`` (mean over runs), the largest final distance, the fitted rate of
    ``||xbar_k - x*||`` and ``sigma`` from the corrected ``||S~||`` (tight smoothness)."""
    import pandas as pd

    r = load_exact(profile)
    norm = r["S"]["corrected_tight"]
    rows = []
    for s, solver in enumerate(r["solvers"]):
        for j, name in enumerate(r["settings"]):
            kt, kd = r["K_threshold"][s, j], r["K_distance"][s, j]
            rows.append({"solver": solver, "participation": name,
                         "K to 1e-5": sig3(float(np.mean(kt))) if np.all(kt >= 0) else "not reached",
                         "K to dist 1e-8": sig3(float(np.mean(kd))) if np.all(kd >= 0) else "not reached",
                         "max final dist": roundoff(float(np.max(r["final_model_err"][s, j]))),
                         "rate": sig3(r["rate"][s, j]),
                         "sigma (tight, corrected S)": sig3(float(participation_sigma(r["p"][j], norm)))})
    return pd.DataFrame(rows).set_index(["solver", "participation"])
