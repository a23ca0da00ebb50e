"""Tuning Fed-PLT: the penalty ``rho`` and the number of local steps ``N_e`` (v2 §VII-D,
Tables VIII-IX; v1 §VII-B, Figs. 2-3), and how sensitive each algorithm of v2 §VII-A is to
its tuned parameters.

Experiments (each a frozen :class:`~fedrepro.core.cache.ExperimentConfig` with a
``profile``; ``load_*`` returns the stored result, computing it when missing or stale):

* :class:`V2SweepConfig` (v2 Tables VIII-IX): ``K*`` of Fed-PLT (local GD, default step,
  full participation, convex v2 problem) on a log grid of ``rho`` for every ``N_e`` of
  Table IX, one batched program per ``N_e``; at ``N_e = 5`` a wider grid gives the dense
  ``K*(rho)`` curve. Time is the paper's formula ``K* (N_e t_G + t_C) N``.
* :class:`DriftConfig` (v2 §V-C, "no client drift for any ``N_e``"): Fed-PLT with GD for
  ``N_e`` up to 50 and with the exact local prox, run to round-off; distance of the model
  to ``x*``.
* :class:`V1RatesConfig` (v1 Figs. 2-3): empirical linear rate of Fed-PLT on the v1
  problem against ``rho`` (``N_e = 10``) and against ``N_e`` (the paper's ``rho = 0.3``, and
  ``rho = 1, 3``), with the empirical rate of exact PRS (``solver="prox"``) and ``zeta(rho)``
  of Lemma 3.
* :func:`sensitivity`: mean ``K*`` of all six algorithms over their whole tuning grids at
  ``N_e = 5`` (v2 Table II convex setting), read from the comparison chapter's
  ``grid_search`` results (not recomputed).

Empirical rate (spec §9.7): ``exp`` of the slope of ``log e_k`` against ``k`` over the
window ``1e-12 <= e_k / e_0 <= 1e-3`` (:func:`fedrepro.chapters.fedplt.theory.checks.fit_rate`), with
``e_k = ||xbar_k - x*||`` (the model, the quantity the batched engine records). Runs with a
rate close to one do not reach the window within ``K_max`` iterations; for them the fit uses
the second half of the run (:func:`empirical_rate`, which reports which window it used).

The paper's iteration counts are decoded from its times with the cost formula printed in
its Table II (:func:`cost_formula`, :func:`paper_K_star`); they are the *paper's* side of
every comparison and are never used as results.

The experiment configs and the functions that compute the stored results live in
:mod:`fedrepro.experiments.fedplt.tuning` (a run module); this module re-exports them.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.experiments.fedplt.tuning import (  # noqa: F401
    DriftConfig,
    V1RatesConfig,
    V2SweepConfig,
    _prox_K,
    _prox_rate,
    _run_drift,
    _run_v1_rates,
    _run_v2_sweeps,
    empirical_rate,
    load_drift,
    load_v1_rates,
    load_v2_sweeps,
    rho_lattice,
)
from fedrepro.report.book import check_profile, roundoff, sig3

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "RATE_RESOLUTION", "DriftConfig", "V1RatesConfig", "V2SweepConfig",
    "cost_formula", "paper_K_star", "table_viii_consistency", "rho_lattice", "empirical_rate", "ne_profile",
    "load_v2_sweeps", "load_drift", "load_v1_rates", "sensitivity", "k_or_inf", "tuned_K", "time_of",
    "table_viii", "table_viii_text", "table_ix", "table_ix_argmin", "table_ix_text", "drift_frame",
    "v1_rates_summary", "v1_rates_text", "sensitivity_frame",
    "figure_v2_rho", "figure_v2_ne", "figure_v1_rho", "figure_v1_ne", "figure_sensitivity",
]

#: Library code the stored Fed-PLT sweeps depend on.

N_AGENTS_V2 = 100  # v2 §VII: N = 100 agents (the cost formula's N)
TABLE_II = "fedplt-v2-TII"


# --------------------------------------------------------------------------- decoding the paper


_TOKEN = re.compile(r"\s*(Ne|tG|tC|N|\d+(?:\.\d+)?|[()+*])")
_OPERANDS = ("Ne", "tG", "tC", "N")


def cost_formula(text: str) -> Callable[..., float]:
    """The per-iteration cost printed in v2 Table II (e.g. ``"(NetG + tC)N"``,
    ``"((Ne + 1)tG + 2tC)N"``, a trailing ``†`` ignored) as a function
    ``cost(Ne=, tG=, tC=, N=)``. Juxtaposition is multiplication; only ``+``, ``*``,
    parentheses, numbers and the four symbols are accepted (no ``eval``)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    s = text.replace("\u2020", "").strip()
    tokens, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None:
            raise ValueError(f"cost formula {text!r}: unexpected character at {s[pos:]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    if not tokens:
        raise ValueError("cost formula is empty")
    parts: list[str] = []
    for tok in tokens:
        if parts and (parts[-1] in _OPERANDS or parts[-1] == ")" or parts[-1][0].isdigit()) and \
                (tok in _OPERANDS or tok == "(" or tok[0].isdigit()):
            parts.append("*")
        parts.append(tok)
    try:
        tree = ast.parse("".join(parts), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cost formula {text!r} is not well formed") from exc
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Expression, ast.BinOp, ast.Add, ast.Mult, ast.Name, ast.Load, ast.Constant)):
            raise ValueError(f"cost formula {text!r} uses {type(node).__name__}; only + and products are allowed")

    def evaluate(node: ast.AST, env: Mapping[str, float]) -> float:
        if isinstance(node, ast.Expression):
            return evaluate(node.body, env)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(env[node.id])
        assert isinstance(node, ast.BinOp)
        a, b = evaluate(node.left, env), evaluate(node.right, env)
        return a + b if isinstance(node.op, ast.Add) else a * b

    def cost(*, Ne: float, tG: float, tC: float, N: float) -> float:
        return evaluate(tree, {"Ne": Ne, "tG": tG, "tC": tC, "N": N})

    return cost


def _tc(column: str) -> float:
    m = re.fullmatch(r"tC=([0-9.]+)", column)
    if m is None:
        raise ValueError(f"column {column!r} is not of the form tC=<value>")
    return float(m.group(1))


def paper_K_star(table: str) -> pd.DataFrame:
    """The paper's Fed-PLT iteration counts ``K* = time / cost`` decoded from its cells (spec
    §9.1), for ``table`` in ``"fedplt-v2-TII"`` (convex/nonconvex, ``N_e = 5``, ``t_C = 10``),
    ``"...-TIII"`` (``t_C`` columns, ``N_e = 5``), ``"...-TVIII"`` (``rho`` columns,
    ``N_e = 5``, ``t_C = 10``) and ``"...-TIX"`` (``N_e`` rows, ``t_C`` columns); ``t_G = 1``
    and ``N = 100`` throughout. The cost is Fed-PLT's formula as printed in Table II.
    Columns: cell id, row, column, ``Ne``, ``tC``, ``rho`` (Table VIII), time, cost, ``K*``."""
    import pandas as pd

    from fedrepro.report.paper import load_table

    tables = ("fedplt-v2-TII", "fedplt-v2-TIII", "fedplt-v2-TVIII", "fedplt-v2-TIX")
    if table not in tables:
        raise ValueError(f"table must be one of {tables}, got {table!r}")
    formula = next(c.value_text for c in load_table(TABLE_II) if c.row == "Fed-PLT" and c.column == "Comp. time")
    cost = cost_formula(formula)
    rows = []
    for c in load_table(table):
        if c.value is None:
            continue
        Ne, tC, rho = 5, 10.0, math.nan
        if table in ("fedplt-v2-TII", "fedplt-v2-TIII") and c.row != "Fed-PLT":
            continue
        if table == "fedplt-v2-TIII":
            tC = _tc(c.column)
        elif table == "fedplt-v2-TVIII":
            rho = float(c.column.split("=")[1])
        elif table == "fedplt-v2-TIX":
            Ne, tC = int(c.row.split("=")[1]), _tc(c.column)
        per_iteration = cost(Ne=Ne, tG=1.0, tC=tC, N=N_AGENTS_V2)
        rows.append({"id": c.id, "row": c.row, "column": c.column, "Ne": Ne, "tC": tC, "rho": rho,
                     "time": c.value, "cost": per_iteration, "K*": c.value / per_iteration})
    return pd.DataFrame(rows)


def table_viii_consistency() -> dict[str, Any]:
    """Whether v2 Table VIII can describe the setting of Tables II, III and IX (spec §9.1).

    All four tables are Fed-PLT on the convex problem with local GD, ``N_e = 5``, full
    participation, ``t_G = 1``. The Fed-PLT cells of Tables II, III and IX (``rho`` tuned,
    §VII-D: "obtained by setting ``N_e = 5`` and tuning the penalty ``rho``") decode to
    ``K_tuned``; Table VIII decodes to ``K*`` at ``rho = 0.1, 1, 10``, and its text puts the
    optimum around ``rho = 1``. Returns the decoded values, ``ratio`` = ``K*`` at Table
    VIII's best ``rho`` over the tuned ``K*``, whether every decoded value is an integer, and
    ``consistent`` (the ratio is one)."""
    viii = paper_K_star("fedplt-v2-TVIII")
    others = [paper_K_star("fedplt-v2-TII"), paper_K_star("fedplt-v2-TIII"), paper_K_star("fedplt-v2-TIX")]
    ne5 = np.concatenate([others[0].loc[others[0]["column"] == "Convex", "K*"].to_numpy(),
                          others[1]["K*"].to_numpy(), others[2].loc[others[2]["Ne"] == 5, "K*"].to_numpy()])
    k_viii = viii["K*"].to_numpy()
    best = int(np.argmin(k_viii))
    tuned = float(np.min(ne5))
    return {"rho": viii["rho"].to_numpy(), "K_viii": k_viii, "best_rho": float(viii["rho"].iloc[best]),
            "K_viii_best": float(k_viii[best]), "K_tuned": ne5, "K_tuned_values": sorted(set(np.round(ne5, 9))),
            "ratio": float(k_viii[best] / tuned), "integer": bool(np.allclose(np.concatenate([k_viii, ne5]),
                                                                            np.round(np.concatenate([k_viii, ne5])),
                                                                            atol=1e-9)),
            "consistent": bool(np.isclose(k_viii[best], tuned))}


# --------------------------------------------------------------------------- v2: Tables VIII and IX


def k_or_inf(K: np.ndarray) -> np.ndarray:
    """Iteration counts as floats, ``-1`` (tolerance not reached) as ``inf``."""
    return np.where(np.asarray(K) >= 0, np.asarray(K, dtype=float), np.inf)


def tuned_K(result: Mapping[str, Any], rho: str) -> tuple[np.ndarray, np.ndarray]:
    """``(K*, rho)`` per ``N_e``: the best ``rho`` of the grid per ``N_e`` (``"tuned"``) or
    the ``rho`` tuned at ``N_e = 5`` for every ``N_e`` (``"fixed"``)."""
    if rho not in ("tuned", "fixed"):
        raise ValueError(f"rho must be 'tuned' or 'fixed', got {rho!r}")
    K = k_or_inf(result["K_grid"])
    if rho == "tuned":
        idx = np.argmin(K, axis=1)
    else:
        e5 = int(np.flatnonzero(np.asarray(result["Nes"]) == result["dense_Ne"])[0])
        idx = np.full(K.shape[0], int(np.argmin(K[e5])))
    rows = np.arange(K.shape[0])
    return K[rows, idx], np.asarray(result["rhos"])[idx]


def time_of(K: np.ndarray, Ne: Any, tC: float, tG: float, N: int) -> np.ndarray:
    """Paper-style time ``K* (N_e t_G + t_C) N`` (v2 Table II formula for Fed-PLT)."""
    return np.asarray(K, dtype=float) * (np.asarray(Ne, dtype=float) * tG + tC) * N


def table_ix(result: Mapping[str, Any], rho: str = "tuned") -> pd.DataFrame:
    """v2 Table IX: time per ``(N_e, t_C)``, ours (``rho`` tuned per ``N_e`` or fixed at the
    ``N_e = 5`` optimum) beside the paper's, with ``K*`` and the ratio ours/paper. Our time
    uses ``N`` of the run (100 at the paper profile)."""
    import pandas as pd

    K, rhos = tuned_K(result, rho)
    paper = paper_K_star("fedplt-v2-TIX")
    rows = []
    for e, Ne in enumerate(result["Nes"]):
        for tC in result["tCs"]:
            ours = float(time_of(K[e], Ne, float(tC), result["tG"], result["N"]))
            p = paper[(paper["Ne"] == int(Ne)) & np.isclose(paper["tC"], float(tC))]
            pt = float(p["time"].iloc[0]) if len(p) else math.nan
            pk = float(p["K*"].iloc[0]) if len(p) else math.nan
            rows.append({"Ne": int(Ne), "tC": sig3(float(tC)), "rho": sig3(float(rhos[e])),
                         "K* ours": int(K[e]) if np.isfinite(K[e]) else "not reached",
                         "K* paper": sig3(pk), "time ours": sig3(ours), "time paper": sig3(pt),
                         "ours/paper": sig3(ours / pt) if np.isfinite(pt) else "nan"})
    return pd.DataFrame(rows).set_index(["Ne", "tC"])


def table_ix_argmin(result: Mapping[str, Any], rho: str = "tuned") -> dict[float, list[int]]:
    """``{t_C: the N_e minimising our time}`` (every minimiser, ties included)."""
    K, _ = tuned_K(result, rho)
    out: dict[float, list[int]] = {}
    for tC in result["tCs"]:
        t = time_of(K, result["Nes"], float(tC), result["tG"], result["N"])
        out[float(tC)] = [int(n) for n in np.asarray(result["Nes"])[np.isclose(t, t.min())]]
    return out


def table_ix_text(result: Mapping[str, Any]) -> str:
    """The best ``N_e`` per ``t_C`` (ours with ``rho`` tuned per ``N_e`` and fixed; the
    paper's from its cells) and the best ``K*`` of exact PRS on the same ``rho`` grid."""
    paper = paper_K_star("fedplt-v2-TIX")
    lines = []
    for rho in ("tuned", "fixed"):
        arg = table_ix_argmin(result, rho)
        lines.append(f"best Ne per tC, ours (rho {rho}): "
                     + ", ".join(f"tC={sig3(t)}: {a}" for t, a in arg.items()))
    parts = []
    for tC in result["tCs"]:
        col = paper[np.isclose(paper["tC"], float(tC))]
        best = [int(n) for n in col.loc[np.isclose(col["time"], col["time"].min()), "Ne"]]
        parts.append(f"tC={sig3(float(tC))}: {best}")
    lines.append("best Ne per tC, paper: " + ", ".join(parts))
    Kp = k_or_inf(result["K_prox"])
    i = int(np.argmin(Kp))
    Kt, rt = tuned_K(result, "tuned")
    lines.append(f"exact PRS (Ne = infinity): best K* = {int(Kp[i])} at rho = {sig3(float(result['rhos'][i]))}; "
                 f"Fed-PLT GD: best K* = {int(np.min(Kt))} at Ne = {int(result['Nes'][int(np.argmin(Kt))])}")
    return "\n".join(lines)


def table_viii_text() -> str:
    """The paper's Table VIII decoded against its Tables II, III and IX
    (:func:`table_viii_consistency`)."""
    c = table_viii_consistency()
    viii = ", ".join(f"rho={sig3(float(r))}: {sig3(float(k))}" for r, k in zip(c["rho"], c["K_viii"], strict=False))
    return (f"paper K* decoded from Table VIII (Ne=5, tC=10): {viii}\n"
            f"paper K* decoded from the Fed-PLT cells of Tables II, III and IX at Ne=5 (rho tuned): "
            f"{', '.join(sig3(float(k)) for k in c['K_tuned_values'])} ({len(c['K_tuned'])} cells)\n"
            f"every decoded value an integer: {c['integer']}\n"
            f"K* at Table VIII's best rho / tuned K*: {sig3(c['ratio'])}; consistent: {c['consistent']}")


def table_viii(result: Mapping[str, Any], tC: float = 10.0) -> pd.DataFrame:
    """v2 Table VIII: time at ``rho = 0.1, 1, 10`` (``N_e = 5``, ``t_G = 1``, ``t_C = 10``),
    ours beside the paper's, with ``K*`` (ours; paper decoded) and the ratio; a last row
    gives our tuned ``K*`` and the paper's Table II one for comparison."""
    import pandas as pd

    paper = paper_K_star("fedplt-v2-TVIII")
    dense, Kd = np.asarray(result["dense_rhos"]), k_or_inf(result["K_dense"])
    Ne = int(result["dense_Ne"])
    rows = []
    for r in result["table_viii_rhos"]:
        i = int(np.argmin(np.abs(np.log(dense / r))))
        ours = float(time_of(Kd[i], Ne, tC, result["tG"], result["N"]))
        p = paper[np.isclose(paper["rho"], r)]
        rows.append({"rho": sig3(float(r)), "K* ours": int(Kd[i]) if np.isfinite(Kd[i]) else "not reached",
                     "K* paper": sig3(float(p["K*"].iloc[0])), "time ours": sig3(ours),
                     "time paper": sig3(float(p["time"].iloc[0])),
                     "ours/paper": sig3(ours / float(p["time"].iloc[0]))})
    best = int(np.argmin(Kd))
    t2 = paper_K_star("fedplt-v2-TII")
    t2 = t2[t2["column"] == "Convex"].iloc[0]
    rows.append({"rho": f"tuned ({sig3(float(dense[best]))})", "K* ours": int(Kd[best]),
                 "K* paper": f"{sig3(float(t2['K*']))} (Table II)",
                 "time ours": sig3(float(time_of(Kd[best], Ne, tC, result["tG"], result["N"]))),
                 "time paper": f"{sig3(float(t2['time']))} (Table II)",
                 "ours/paper": sig3(float(time_of(Kd[best], Ne, tC, result["tG"], result["N"])) / float(t2["time"]))})
    return pd.DataFrame(rows).set_index("rho")


def figure_v2_rho(result: Mapping[str, Any]) -> Figure:
    """``K*(rho)`` at ``N_e = 5`` (dense grid), with the paper's decoded Table VIII points and
    its Table II tuned ``K*``; right axis: ``zeta(rho)`` of Lemma 3 (v2 moduli)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    Kd = k_or_inf(result["K_dense"])
    ax.plot(result["dense_rhos"], Kd, "o-", ms=3, color="#1565c0", label=f"ours, $N_e$={int(result['dense_Ne'])}")
    viii = paper_K_star("fedplt-v2-TVIII")
    ax.plot(viii["rho"], viii["K*"], "s", ms=8, mfc="none", mew=1.5, color="#c62828",
            label="paper, Table VIII (decoded)")
    t2 = paper_K_star("fedplt-v2-TII")
    ax.axhline(float(t2.loc[t2["column"] == "Convex", "K*"].iloc[0]), color="#c62828", ls="--", lw=1,
               label="paper, Table II (tuned $\\rho$, decoded)")
    ax.plot(result["rhos"], k_or_inf(result["K_prox"]), "^", ms=4, mfc="none", color="#2e7d32",
            label=r"exact PRS ($N_e\to\infty$)")
    best = int(np.argmin(Kd))
    ax.plot([result["dense_rhos"][best]], [Kd[best]], "*", ms=12, color="#1565c0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$\rho$")
    ax.set_ylabel(r"$K^\star$ (iterations to $10^{-5}$)")
    ax2 = ax.twinx()
    ax2.plot(result["dense_rhos"], result["zeta_dense"], color="grey", lw=1)
    ax2.set_ylabel(r"$\zeta(\rho)$ (Lemma 3), grey", color="grey")
    ax2.set_ylim(0, 1)
    ax.legend(frameon=False, fontsize=8, loc="upper center")
    ax.spines[["top"]].set_visible(False)
    fig.tight_layout()
    return fig


def figure_v2_ne(result: Mapping[str, Any]) -> Figure:
    """Left: ``K*`` against ``N_e`` (ours, ``rho`` tuned per ``N_e`` and fixed; paper decoded).
    Right: time against ``N_e`` for every ``t_C`` (ours solid, paper dashed)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    Nes = np.asarray(result["Nes"])
    paper = paper_K_star("fedplt-v2-TIX")
    pk = paper.groupby("Ne")["K*"].mean()
    Kt, _ = tuned_K(result, "tuned")
    Kf, _ = tuned_K(result, "fixed")
    ax = axes[0]
    ax.plot(Nes, Kt, "o-", color="#1565c0", label=r"ours, $\rho$ tuned per $N_e$")
    ax.plot(Nes, Kf, "^:", color="#1565c0", label=r"ours, $\rho$ of $N_e=5$")
    ax.plot(pk.index, pk.to_numpy(), "s--", color="#c62828", label="paper (decoded)")
    ax.axhline(float(np.min(k_or_inf(result["K_prox"]))), color="#2e7d32", ls=":", lw=1,
               label=r"ours, exact PRS ($N_e\to\infty$), $\rho$ tuned")
    ax.set_xlabel(r"$N_e$")
    ax.set_ylabel(r"$K^\star$")
    ax.legend(frameon=False, fontsize=8)
    ax = axes[1]
    colours = plt.cm.viridis(np.linspace(0, 0.85, len(result["tCs"])))
    for tC, col in zip(result["tCs"], colours, strict=False):
        ax.plot(Nes, time_of(Kt, Nes, float(tC), result["tG"], result["N"]), "o-", color=col,
                label=f"$t_C$={sig3(float(tC))}")
        p = paper[np.isclose(paper["tC"], float(tC))].sort_values("Ne")
        ax.plot(p["Ne"], p["time"], "s--", color=col, ms=4, lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel(r"$N_e$")
    ax.set_ylabel(r"time ($t_G$ units)")
    ax.legend(frameon=False, fontsize=8, ncols=2)
    for a in axes:
        a.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- v2: no client drift


def drift_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Final distance ``||xbar - x*||`` and iterations per local solver."""
    import pandas as pd

    labels = [f"GD, Ne={int(n)}" for n in result["Nes"]] + ["exact prox (Ne = infinity)"]
    return pd.DataFrame({"local training": labels, "iterations": [int(k) for k in result["iterations"]],
                         "||xbar - x*||": [roundoff(float(e)) for e in result["error"]]}).set_index("local training")


# --------------------------------------------------------------------------- v1: Figs. 2 and 3


#: Rates closer than this are treated as equal when locating minima and dips: the fit of
#: one run is reproducible to about 1e-6 (different windows, round-off), and 1e-3 is the
#: smallest difference visible on the figures.
RATE_RESOLUTION = 1e-3


def ne_profile(Nes: Any, rates: Any, exact: float, resolution: float = RATE_RESOLUTION) -> dict[str, Any]:
    """Shape of a rate-against-``N_e`` curve (v1 Fig. 3) beside the exact-PRS rate ``exact``:
    the first ``N_e`` within ``resolution`` of the minimum (``argmin``), the minimum, whether
    the rate is non-increasing up to ``resolution`` (``monotone``), the dip of the minimum
    below ``exact``, the spread and the largest distance to ``exact`` over ``N_e > 20``, and
    the smallest ``N_e`` from which every rate is within 0.05 of ``exact``."""
    Nes, r = np.asarray(Nes, dtype=int), np.asarray(rates, dtype=float)
    if Nes.ndim != 1 or Nes.shape != r.shape or Nes.size < 2:
        raise ValueError("Nes and rates must be 1-D arrays of the same length >= 2")
    if not np.all(np.diff(Nes) > 0):
        raise ValueError("Nes must be increasing")
    if not (resolution > 0):
        raise ValueError(f"resolution must be > 0, got {resolution}")
    rmin = float(np.nanmin(r))
    k = int(np.flatnonzero(r <= rmin + resolution)[0])
    over20 = r[Nes > 20]
    close = np.abs(r - exact) < 0.05
    from_ne = next((int(Nes[m]) for m in range(Nes.size) if np.all(close[m:])), None)
    return {"argmin": int(Nes[k]), "min": rmin, "first": float(r[0]), "last": float(r[-1]), "last_Ne": int(Nes[-1]),
            "exact": float(exact), "dip": float(exact - rmin),
            "monotone": bool(np.all(np.diff(r) <= resolution)),
            "rise_after_min": float(np.nanmax(r[k:]) - rmin),
            "rate_at_20": float(r[Nes == 20][0]) if np.any(Nes == 20) else math.nan,
            "spread_over_20": float(np.ptp(over20)) if over20.size else math.nan,
            "max_gap_over_20": float(np.max(np.abs(over20 - exact))) if over20.size else math.nan,
            "within_005_from_Ne": from_ne}


def v1_rates_summary(result: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers the chapter and the claims use. Fig. 2: argmins over ``rho`` (Fed-PLT,
    exact PRS, ``zeta``), the minimum rates and the rate at both ends of the ``rho`` range,
    the ``rho`` where 10 local GD steps beat the exact prox by more than
    :data:`RATE_RESOLUTION`. Fig. 3: :func:`ne_profile` at each ``rho`` (``"fig3"``: list in
    the order of ``fig3_rhos``)."""
    rhos, rate = np.asarray(result["fig2_rhos"]), np.asarray(result["fig2_rate"])
    prox_rhos, prox = np.asarray(result["prox_rhos"]), np.asarray(result["prox_rate"])
    i, j, z = int(np.nanargmin(rate)), int(np.nanargmin(prox)), int(np.argmin(result["zeta"]))
    common = [(float(r), float(rate[np.argmin(np.abs(np.log(rhos / r)))]), float(p))
              for r, p in zip(prox_rhos, prox, strict=False) if np.min(np.abs(np.log(rhos / r))) < 1e-9]
    faster = [r for r, g, p in common if g < p - RATE_RESOLUTION]
    return {
        "fig2_argmin_rho": float(rhos[i]), "fig2_min_rate": float(rate[i]),
        "fig2_rate_low_end": float(rate[0]), "fig2_rate_high_end": float(rate[-1]),
        "fig2_low_rho": float(rhos[0]), "fig2_high_rho": float(rhos[-1]),
        "prox_argmin_rho": float(prox_rhos[j]), "prox_min_rate": float(prox[j]),
        "zeta_argmin_rho": float(rhos[z]), "zeta_min": float(result["zeta"][z]),
        "fig2_tail_fits": int(np.sum(np.asarray(result["fig2_window"]) == "tail")),
        "gd_beats_prox_rhos": faster, "common_rhos": len(common),
        "max_gap_gd_prox": float(max(abs(g - p) for _, g, p in common)) if common else math.nan,
        "fig3": [ne_profile(result["fig3_Nes"], result["fig3_rate"][j3], float(result["fig3_prox_rate"][j3]))
                 | {"rho": float(rho), "zeta": float(result["fig3_zeta"][j3]),
                    "exact_stacked": float(result["fig3_prox_rate_stacked"][j3])}
                 for j3, rho in enumerate(result["fig3_rhos"])],
    }


def v1_rates_text(result: Mapping[str, Any]) -> str:
    """:func:`v1_rates_summary` as printed lines (three significant digits)."""
    s = v1_rates_summary(result)
    lines = [
        f"Fig. 2 (Ne={int(result['fig2_Ne'])}): best rho {sig3(s['fig2_argmin_rho'])} "
        f"(rate {sig3(s['fig2_min_rate'])}); "
        f"exact PRS: best rho {sig3(s['prox_argmin_rho'])} (rate {sig3(s['prox_min_rate'])}); "
        f"zeta of Lemma 3: best rho {sig3(s['zeta_argmin_rho'])} (zeta {sig3(s['zeta_min'])})",
        f"rate at rho={sig3(s['fig2_low_rho'])}: {sig3(s['fig2_rate_low_end'])}, at rho={sig3(s['fig2_high_rho'])}: "
        f"{sig3(s['fig2_rate_high_end'])}; {s['fig2_tail_fits']} of {len(result['fig2_rhos'])} rates fitted on the "
        f"second half of the run",
        f"largest |Fed-PLT - exact PRS| over the {s['common_rhos']} common rho: {sig3(s['max_gap_gd_prox'])}; "
        f"10 GD steps faster than the exact prox (by > {sig3(RATE_RESOLUTION)}) at rho = "
        + (", ".join(sig3(r) for r in s["gd_beats_prox_rhos"]) or "none"),
    ]
    for p in s["fig3"]:
        lines.append(
            f"Fig. 3 at rho={sig3(p['rho'])}: rate {sig3(p['first'])} at Ne=1, minimum {sig3(p['min'])} first reached "
            f"at Ne={p['argmin']}, {sig3(p['last'])} at Ne={p['last_Ne']}; exact PRS {sig3(p['exact'])} "
            f"(stacked models: {sig3(p['exact_stacked'])}), zeta {sig3(p['zeta'])}; dip below exact PRS "
            f"{sig3(p['dip'])}; largest |rate - exact PRS| for Ne > 20: {sig3(p['max_gap_over_20'])}")
    return "\n".join(lines)


def figure_v1_rho(result: Mapping[str, Any]) -> Figure:
    """v1 Fig. 2: empirical rate against ``rho`` (``N_e = 10``), the empirical exact-PRS rate
    and ``zeta(rho)`` of Lemma 3 (loose and tight smoothness constants); hollow markers: rates
    fitted on the second half of the run (rate close to one)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    rhos, rate = np.asarray(result["fig2_rhos"]), np.asarray(result["fig2_rate"])
    tail = np.asarray(result["fig2_window"]) == "tail"
    ax.plot(rhos, rate, "-", color="#1565c0", lw=1.2)
    ax.plot(rhos[~tail], rate[~tail], "o", ms=4, color="#1565c0",
            label=f"Fed-PLT, GD, $N_e$={int(result['fig2_Ne'])}")
    ax.plot(rhos[tail], rate[tail], "o", ms=4, mfc="none", color="#1565c0")
    ax.plot(result["prox_rhos"], result["prox_rate"], "s", ms=6, mfc="none", mew=1.2, color="#2e7d32",
            label="exact PRS (exact local prox)")
    ax.plot(rhos, result["zeta"], color="black", lw=1, label=r"$\zeta(\rho)$, Lemma 3 (loose $\bar\lambda$)")
    ax.plot(rhos, result["zeta_tight"], color="black", lw=0.8, ls=":",
            label=r"$\zeta(\rho)$, Lemma 3 (tight $\bar\lambda$)")
    i = int(np.nanargmin(rate))
    ax.plot([rhos[i]], [rate[i]], "*", ms=12, color="#1565c0")
    ax.axvline(0.3, color="#c62828", lw=0.8, ls="--", label=r"paper's optimum $\rho\approx0.3$")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\rho$")
    ax.set_ylabel("rate per iteration")
    ax.set_ylim(0, 1.02)
    ax.legend(frameon=False, fontsize=7, loc="lower left")
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def figure_v1_ne(result: Mapping[str, Any]) -> Figure:
    """v1 Fig. 3: empirical rate against ``N_e`` at each ``rho`` of the sweep (the paper's
    ``rho = 0.3`` in the left panel), with the empirical rate of exact PRS (dashed) and
    ``zeta(rho)`` of Lemma 3 (solid grey)."""
    import matplotlib.pyplot as plt

    r3 = np.asarray(result["fig3_rhos"])
    fig, axes = plt.subplots(1, r3.size, figsize=(3.4 * r3.size, 3.4), squeeze=False)
    Nes = np.asarray(result["fig3_Nes"])
    for j, ax in enumerate(axes[0]):
        rate = np.asarray(result["fig3_rate"][j])
        prof = ne_profile(Nes, rate, float(result["fig3_prox_rate"][j]))
        ax.plot(Nes, rate, "o-", ms=3, color="#1565c0", label="Fed-PLT, GD")
        ax.axhline(float(result["fig3_prox_rate"][j]), color="#2e7d32", ls="--", lw=1, label="exact PRS")
        ax.axhline(float(result["fig3_zeta"][j]), color="grey", lw=1, label=r"$\zeta(\rho)$, Lemma 3")
        k = int(np.flatnonzero(Nes == prof["argmin"])[0])
        ax.plot([Nes[k]], [rate[k]], "*", ms=12, color="#1565c0")
        lo = min(float(np.nanmin(rate)), float(result["fig3_prox_rate"][j]))
        ax.set_ylim(lo - 0.05, min(1.0, max(float(result["fig3_zeta"][j]), float(np.nanmax(rate))) + 0.03))
        ax.set_title(rf"$\rho$ = {sig3(float(r3[j]))}" + (" (paper)" if j == 0 else ""), fontsize=10)
        ax.set_xlabel(r"$N_e$")
        ax.spines[["top", "right"]].set_visible(False)
    axes[0, 0].set_ylabel("rate per iteration")
    axes[0, 0].legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- sensitivity to tuning


ALGORITHM_ORDER: tuple[str, ...] = ("FedPD", "FedLin", "TAMUNA", "LED", "5GCS", "Fed-PLT")


def sensitivity(profile: str = "paper") -> dict[str, Any]:
    """Mean ``K*`` of every algorithm over its whole tuning grid in the v2 Table II convex
    setting (``N_e = 5``, GD, full participation), read from the comparison chapter's tuning
    (:func:`fedrepro.chapters.fedplt.comparison.experiments.load_comparison`; nothing is recomputed
    here). The grid points are rebuilt from each class's ``tuning_grid`` on the same problem;
    points that did not reach the tolerance within the tuning cap have ``mean_K = inf``.
    Returns ``{"algorithms", "Ne", name: {"keys", "values", "mean_K", "best", "cap",
    "trials"}}``."""
    from fedrepro.chapters.fedplt.comparison import experiments as comparison
    from fedrepro.fedplt.baselines import algorithm_class
    from fedrepro.fedplt.tuning import grid_points
    from fedrepro.problems.logistic import logistic_v2

    check_profile(profile)
    config = comparison.ComparisonConfig.for_profile(profile)
    units = comparison.load_comparison(profile)["units"]
    problem = logistic_v2(convex=True, seed=config.data_seed, N=config.N, n=config.n, q=config.q)
    out: dict[str, Any] = {"algorithms": [a for a in ALGORITHM_ORDER if a in config.algorithms], "Ne": config.Ne}
    for name in out["algorithms"]:
        u = units[comparison.unit_name(name, "convex", "gd", False)]
        points = grid_points(algorithm_class(name).tuning_grid(problem, config.Ne, "gd"))
        mean_K = np.asarray(u["tune_mean_K"], dtype=float)
        if len(points) != mean_K.size:
            raise ValueError(f"{name}: the comparison's tuning has {mean_K.size} grid points, the class's grid "
                             f"{len(points)}; rerun the comparison chapter")
        keys = list(points[0])
        values = np.array([[p[k] for k in keys] for p in points], dtype=float).reshape(len(points), len(keys))
        best = int(np.argmin(mean_K))
        chosen = u["best_params"]
        if any(not np.isclose(values[best, m], chosen[k]) for m, k in enumerate(keys)):
            raise ValueError(f"{name}: the stored choice {chosen} is not the grid's argmin")
        out[name] = {"keys": keys, "values": values, "mean_K": mean_K, "best": best, "cap": int(u["tune_cap"]),
                     "trials": int(u["tune_trials"])}
    return out


def _slices(entry: Mapping[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """For each tuned parameter, its values and ``mean K*`` with the other parameters at
    the chosen point (a slice of the grid through the optimum)."""
    values, mean_K, best = np.asarray(entry["values"]), np.asarray(entry["mean_K"]), int(entry["best"])
    out = {}
    for j, key in enumerate(entry["keys"]):
        others = [m for m in range(values.shape[1]) if m != j]
        on = np.all(np.isclose(values[:, others], values[best, others]), axis=1) if others else \
            np.ones(values.shape[0], dtype=bool)
        order = np.argsort(values[on, j])
        out[key] = (values[on, j][order], mean_K[on][order])
    return out


def sensitivity_frame(result: Mapping[str, Any]) -> pd.DataFrame:
    """Per algorithm: the chosen parameters, the best mean ``K*``, the grid size, how many
    grid points come within 10% and 50% of the best, the points above the tuning cap, and,
    per tuned parameter, the factor between the smallest and largest grid value (through
    the optimum, other parameters at their chosen values) keeping ``K*`` within 20% of the
    best."""
    import pandas as pd

    rows = []
    for name in result["algorithms"]:
        entry = result[name]
        mean_K = np.asarray(entry["mean_K"])
        best = float(mean_K[int(entry["best"])])
        chosen = ", ".join(f"{k}={sig3(float(v))}" for k, v in zip(entry["keys"], entry["values"][int(entry["best"])], strict=False))
        widths = []
        for key, (vals, mk) in _slices(entry).items():
            ok = mk <= 1.2 * best
            b = int(np.argmin(mk))
            lo, hi = b, b
            while lo > 0 and ok[lo - 1]:
                lo -= 1
            while hi < vals.size - 1 and ok[hi + 1]:
                hi += 1
            widths.append(f"{key}: x{sig3(float(vals[hi] / vals[lo]))} of x{sig3(float(vals[-1] / vals[0]))}"
                          if vals[lo] > 0 else f"{key}: -")
        rows.append({"algorithm": name, "chosen": chosen or "(no free parameter)", "best mean K*": sig3(best),
                     "grid points": int(mean_K.size), "within 10%": int(np.sum(mean_K <= 1.1 * best)),
                     "within 50%": int(np.sum(mean_K <= 1.5 * best)),
                     "K* > cap": int(np.sum(~np.isfinite(mean_K))), "cap": int(entry["cap"]),
                     "range within 20%": "; ".join(widths) or "-"})
    return pd.DataFrame(rows).set_index("algorithm")


def figure_sensitivity(result: Mapping[str, Any]) -> Figure:
    """One panel per algorithm: mean ``K*`` along each tuned parameter through the chosen
    point, against the parameter relative to its chosen value (log axes); crosses at the
    tuning cap mark grid points that did not reach the tolerance within it."""
    import matplotlib.pyplot as plt

    names = list(result["algorithms"])
    cols = 3
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3.0 * rows), sharey=True, squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        entry = result[name]
        cap = float(entry["cap"])
        best_vals = np.asarray(entry["values"])[int(entry["best"])]
        for (key, (vals, mk)), bv in zip(_slices(entry).items(), best_vals, strict=False):
            x = vals / bv if bv > 0 else vals
            y = np.where(np.isfinite(mk), mk, np.nan)
            line = ax.plot(x, y, "o-", ms=3, label=key)[0]
            miss = ~np.isfinite(mk)
            ax.plot(x[miss], np.full(int(miss.sum()), cap), "x", color=line.get_color())
        if not entry["keys"]:
            ax.plot([1.0], [float(np.asarray(entry["mean_K"])[0])], "o", label="(no parameter)")
        ax.axhline(cap, color="grey", lw=0.6, ls=":")
        ax.axvline(1.0, color="grey", lw=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.legend(frameon=False, fontsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(r"mean $K^\star$")
    for ax in axes[-1, :]:
        ax.set_xlabel("parameter / chosen value")
    fig.tight_layout()
    return fig
