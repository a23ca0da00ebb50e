"""Tables, figures and verdicts of the chapter "DP-FedPAQ: the theory, checked", from the
stored results of :mod:`.experiments` (no computation beyond closed-form bounds)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.dpfedpaq import theorem1 as t
from fedrepro.dpfedpaq.quantizer import variance_parameter

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "all_rows", "statement_summary", "summary_frame", "quantizer_frame", "realized_frame", "training_frame",
    "sensitivity_frame", "lr_frame", "lemma_frame", "theorem_frame", "isotropic_frame", "mnist_frame",
    "heterogeneity_frame", "budget_rows", "best_schedule", "budget_frame", "budget_constants", "verdicts",
    "figure_realized", "figure_lemmas", "figure_theorem", "figure_isotropic", "figure_budget",
    "figure_sensitivity",
]


def _fmt(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, str) or x is None:
        return str(x)
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.3g}"


def _frame(rows: list[dict[str, Any]], caption: str) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(rows)
    df.attrs["caption"] = caption
    return df


def all_rows(checks: dict[str, Any], theorem: dict[str, Any]) -> list[dict[str, Any]]:
    """Every check instance of both experiments (rows with observed, bound, holds...)."""
    rows = []
    for unit in checks["units"].values():
        rows.extend(unit.get("rows", []))
    for name, unit in theorem["units"].items():
        if name.startswith("synthetic"):
            rows.append(unit)
        elif name == "isotropic":
            rows.extend(unit["rows"])
    return rows


def statement_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (family, statement): instances, applicable instances, failures, max ratio."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["statement"]), []).append(r)
    out = []
    for (family, statement), rs in groups.items():
        app = [r for r in rs if r["applicable"]]
        fails = [r for r in app if not r["holds"]]
        ratios = [r["ratio"] for r in app if np.isfinite(r["ratio"])]
        worst = max(fails, key=lambda r: r["ratio"]) if fails else None
        out.append({"family": family, "statement": statement, "instances": len(rs), "applicable": len(app),
                    "failures": len(fails), "max_ratio": max(ratios) if ratios else math.nan,
                    "holds": not fails, "paper_reading": all(r["paper_reading"] for r in rs),
                    "counterexample": worst["instance"] if worst else ""})
    return out


def summary_frame(checks: dict[str, Any], theorem: dict[str, Any]) -> pd.DataFrame:
    rows = [{"family": s["family"], "statement": s["statement"], "instances": s["instances"],
             "failing": s["failures"], "max observed/bound": _fmt(s["max_ratio"]),
             "verdict": ("holds" if s["holds"] else "FAILS") + ("" if s["paper_reading"] else " (our reading)"),
             "first counterexample": s["counterexample"]}
            for s in statement_summary(all_rows(checks, theorem))]
    return _frame(rows, "Every check of the chapter: instances, failures, largest observed/bound")


def quantizer_frame(checks: dict[str, Any]) -> pd.DataFrame:
    u = checks["units"]["quantizer"]
    rows = []
    for s, q in u["q_table"].items():
        emp = {k.split("-s")[0]: v for k, v in u["empirical_ratio"].items() if k.endswith(f"-s{s}")}
        rows.append({"s": int(s), "beta(s)": _fmt(q["beta"]), "fixed-length bits": q["beta_ceil"],
                     "q = min(d/s^2, sqrt(d)/s)": _fmt(q["q"]),
                     **{f"E||Q(v)-v||^2/||v||^2, {k} v": _fmt(v) for k, v in emp.items()}})
    return _frame(rows, "Quantizer Q_s at d = 7850: bits, Assumption 4's q, and the exact variance ratio")


def realized_frame(checks: dict[str, Any]) -> pd.DataFrame:
    u = checks["units"]["per-round"]
    rows = [{"gamma": g, **{f"target eps {e}": _fmt(v) for e, v in zip(u["epsilons"], line, strict=True)}}
            for g, line in zip(u["gammas"], u["realized"], strict=True)]
    return _frame(rows, "Realized per-round eps of eq. (16)'s noise (exact profile and amplification), delta = 1e-4")


def training_frame(checks: dict[str, Any]) -> pd.DataFrame:
    rows = [{"eps per round (target)": r["epsilon"], "gamma": r["gamma"], "K": r["K"],
             "realized per round": _fmt(r["per_round_realized"]), "rounds scheduled": _fmt(r["rounds_scheduled"]),
             "basic, scheduled rounds": _fmt(r["basic_scheduled"]),
             "RDP, scheduled rounds": _fmt(r["rdp_scheduled"]),
             "RDP, with device sampling M/N": _fmt(r["rdp"])}
            for r in checks["units"]["training"]["training"]]
    return _frame(rows, "What a device spends over K rounds (M = 10 of N = 100, delta = 1e-4)")


def sensitivity_frame(checks: dict[str, Any]) -> pd.DataFrame:
    rows = [{"point": r["point"], "eta": r["eta"], "Delta_f": r["mode"], "max ||u - u'||": _fmt(r["max_diff"]),
             "max ratio to Delta_f": _fmt(r["max_ratio"]), "median ratio": _fmt(r["median_ratio"]),
             "pairs above Delta_f": _fmt(r["fraction_exceeding"])}
            for r in checks["units"]["sensitivity"]["summary"]]
    return _frame(rows, "Sensitivity of the released update on coupled neighbouring datasets (HET_MNIST(2), E = 10, "
                        "gamma = 0.2, C = 1)")


def lr_frame(checks: dict[str, Any]) -> pd.DataFrame:
    rows = [{"L": r["L"], "mu": r["mu"], "E": r["E"], "gamma0 rule": r["rule"], "gamma0": _fmt(r["gamma0"]),
             "eta_0": _fmt(r["eta"]), "mu eta": _fmt(r["mu_eta"]), "eta L^2/mu": _fmt(r["eta_L2_over_mu"]),
             "2L^2(E-1)^2 eta^2": _fmt(r["lemma3"]), "mu E eta (30)": _fmt(r["eq30"])}
            for r in checks["units"]["inequalities"]["lr_conditions"]]
    return _frame(rows, "Step-size conditions of the proof (each must be <= 1) at round 0")


def lemma_frame(checks: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for d in checks["units"]["lemmas"]["details"]:
        rows.append({"E": d["E"], "s": d["s"] or "none", "noise": d["noise"],
                     "A (MC)": _fmt(d["A"]), "Lemma 1": _fmt(d["bound_lemma1"]),
                     "B (MC)": _fmt(d["B"]), "Lemma 2": _fmt(d["bound_lemma2"]),
                     "Lemma 2 + noise": _fmt(d["bound_lemma2-corrected"]),
                     "C (MC)": _fmt(d["C"]), "Lemma 3": _fmt(d["bound_lemma3"]),
                     "cross terms / total": _fmt(d["cross"] / d["total"])})
    return _frame(rows, "One round from a fixed x_k (synthetic problem): the terms of (22) against Lemmas 1-3")


def theorem_frame(theorem: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for name, u in theorem["units"].items():
        if not name.startswith("synthetic"):
            continue
        rows.append({"E": u["E"], "s": u["s"] or "none", "noise": u["noise"], "reading": f"{u['variant']}, {u['rule']}",
                     "gamma0": _fmt(u["gamma0"]), "measured E||x_K - x*||^2": _fmt(u["observed"]),
                     "bound": _fmt(u["bound"]), "bound/measured": _fmt(1 / u["ratio"]) if u["ratio"] > 0 else "inf",
                     "holds": u["holds"], "in the ball": u["applicable"]})
    return _frame(rows, "Theorem 1 on the synthetic problem: measured error after T iterations against the bound")


def isotropic_frame(theorem: dict[str, Any]) -> pd.DataFrame:
    rows = [{"mu": r["mu"], "reading": r["statement"], "measured": _fmt(r["observed"]), "bound": _fmt(r["bound"]),
             "privacy term": _fmt(r["privacy_term"]), "measured/bound": _fmt(r["ratio"]), "holds": r["holds"]}
            for r in theorem["units"]["isotropic"]["rows"]]
    return _frame(rows, "Counterexample to eq. (18) as printed: every record's loss (mu/2)||x||^2, only DP noise")


def mnist_frame(theorem: dict[str, Any]) -> pd.DataFrame:
    u = theorem["units"]["mnist"]
    rows = [{"reading": f"{r['variant']}, gamma0 {r['rule']}", "gamma0": _fmt(r["gamma0"]), "eta_0": _fmt(r["lr0"]),
             "bound": _fmt(r["bound"]), "measured ||x_K - x*||^2": _fmt(r["measured"]),
             "orders of magnitude": _fmt(r["orders"]), "loss after K rounds": _fmt(r["loss_end"])}
            for r in u["readings"]]
    return _frame(rows, "Theorem 1 on HET_MNIST(2) (private, eps = 1, E = M = s = 10, theory sensitivity 4 eta E C)")


def heterogeneity_frame(theorem: dict[str, Any]) -> pd.DataFrame:
    rows = [{"n digits": r["n_digits"], "lambda^2": _fmt(r["lambda2"]), "sigma^2": _fmt(r["sigma2"]),
             "sigma^2/64": _fmt(r["sigma2"] / 64)} for r in theorem["units"]["heterogeneity"]["rows"]]
    return _frame(rows, "Heterogeneity lambda^2 (Assumption 5) on HET_MNIST(n)")


def budget_constants(theorem: dict[str, Any], s: int | None, E: int, M: int) -> t.Theorem1Constants:
    """Theorem 1's constants of vanilla FedPAQ (batch 64, no noise) with the MNIST estimates."""
    k = theorem["units"]["mnist"]["constants"]
    return t.Theorem1Constants(L=k["L_max"], mu=k["mu"], sigma2=k["sigma2"], G2=k["G2_vanilla"], lam2=k["lambda2"],
                               q=variance_parameter(7850, s), d=7850, b=min(64, int(k["n"])), n=int(k["n"]),
                               N=100, M=M, E=E)


def budget_rows(budget: dict[str, Any], theorem: dict[str, Any], T: int) -> list[dict[str, Any]]:
    """Per feasible (s, E, M): mean simulated loss over seeds and both bounds."""
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for u in budget["units"].values():
        groups.setdefault((u["s"], u["E"]), []).append(u)
    x0 = theorem["units"]["mnist"]["constants"]["x_star_norm2"]
    out = []
    for (s, E), us in sorted(groups.items()):
        c = budget_constants(theorem, s or None, E, us[0]["M"])
        out.append({"s": s, "E": E, "M": us[0]["M"], "K": us[0]["K"], "bits": us[0]["bits"],
                    "loss": float(np.mean([u["loss"] for u in us])),
                    "loss_min": float(np.min([u["loss"] for u in us])), "loss_max": float(np.max([u["loss"] for u in us])),
                    "bound_printed": t.theorem1_bound(c, T, x0, variant="as_printed").total,
                    "bound_corrected": t.theorem1_bound(c, T, x0, variant="corrected", lr_offset_rule="relaxed").total})
    return out


def best_schedule(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The feasible schedule with the lowest mean simulated loss."""
    return min(rows, key=lambda r: r["loss"])


def budget_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    out = [{"s": r["s"] or "none", "E": r["E"], "M": r["M"], "K": r["K"], "uplink bits": _fmt(r["bits"]),
            "training loss (mean of seeds)": _fmt(r["loss"]), "bound (18) as printed": _fmt(r["bound_printed"]),
            "bound (36) corrected, relaxed gamma0": _fmt(r["bound_corrected"])} for r in rows]
    return _frame(out, "Eq. (11) at a fixed uplink budget: every feasible (s, E, M), simulated vanilla FedPAQ and the bound")


def verdicts(checks: dict[str, Any], theorem: dict[str, Any]) -> dict[str, bool]:
    """One boolean per statement (holds on every applicable instance)."""
    return {f"{s['family']}: {s['statement']}": bool(s["holds"])
            for s in statement_summary(all_rows(checks, theorem))}


# --------------------------------------------------------------------------- figures


def _fig(ncols: int = 1, width: float = 6.0, height: float = 3.6):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, height), squeeze=False)
    return fig, axes[0]


def figure_realized(checks: dict[str, Any]) -> Figure:
    u = checks["units"]["per-round"]
    fig, (ax,) = _fig()
    for g, line in zip(u["gammas"], u["realized"], strict=True):
        ax.plot(u["epsilons"], line, marker="o", label=f"gamma = {g}")
    ax.plot(u["epsilons"], u["epsilons"], "k--", label="target (valid if below)")
    ax.set_xlabel("target eps per round")
    ax.set_ylabel("realized eps per round")
    ax.legend(fontsize=8)
    ax.set_title("Eq. (16): realized against target eps")
    fig.tight_layout()
    return fig


def figure_sensitivity(checks: dict[str, Any]) -> Figure:
    fig, (ax,) = _fig()
    rows = checks["units"]["sensitivity"]["summary"]
    labels = [f"{r['point'][:9]}, eta={r['eta']}\n{r['mode']}" for r in rows]
    ax.bar(range(len(rows)), [r["max_ratio"] for r in rows], color=["C0", "C1", "C3"] * (len(rows) // 3 + 1))
    ax.axhline(1.0, color="k", ls="--")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), labels, rotation=90, fontsize=6)
    ax.set_ylabel("max ||u(D) - u(D')|| / Delta_f")
    ax.set_title("Measured sensitivity against three calibrations")
    fig.tight_layout()
    return fig


def figure_lemmas(checks: dict[str, Any]) -> Figure:
    fig, (ax,) = _fig(width=7.0)
    det = checks["units"]["lemmas"]["details"]
    x = np.arange(len(det))
    for off, (key, bkey, label) in enumerate((("A", "bound_lemma1", "A / Lemma 1"),
                                              ("B", "bound_lemma2-corrected", "B / Lemma 2 with noise"),
                                              ("C", "bound_lemma3", "C / Lemma 3"))):
        ax.bar(x + 0.27 * (off - 1), [d[key] / d[bkey] if d[bkey] > 0 else np.nan for d in det], width=0.27,
               label=label)
    ax.axhline(1.0, color="k", ls="--")
    ax.set_yscale("log")
    ax.set_xticks(x, [f"E={d['E']} s={d['s'] or '-'} {'DP' if d['noise'] else ''}" for d in det], rotation=60,
                  fontsize=7)
    ax.set_ylabel("Monte Carlo term / bound")
    ax.legend(fontsize=8)
    ax.set_title("Lemmas 1-3, one round (Lemma 2 as printed is 0 without quantization)")
    fig.tight_layout()
    return fig


def figure_theorem(theorem: dict[str, Any]) -> Figure:
    fig, axes = _fig(ncols=len({u["E"] for n, u in theorem["units"].items() if n.startswith("synthetic")}),
                     width=4.2)
    Es = sorted({u["E"] for n, u in theorem["units"].items() if n.startswith("synthetic")})
    styles = {("as_printed", "printed"): "C0", ("corrected", "paper"): "C1", ("corrected", "relaxed"): "C2"}
    for ax, E in zip(axes, Es, strict=True):
        for name, u in theorem["units"].items():
            if not name.startswith("synthetic") or u["E"] != E or u["s"] is not None:
                continue
            col = styles[(u["variant"], u["rule"])]
            ls = "-" if u["noise"] else ":"
            it = np.asarray(u["rounds"]) * E
            ax.loglog(it, u["measured"], color=col, ls=ls, lw=1)
            ax.loglog(it, u["bounds"], color=col, ls=ls, lw=2.5, alpha=0.5)
        ax.set_title(f"E = {E} (thin: measured, thick: bound)", fontsize=9)
        ax.set_xlabel("local iterations kE")
    axes[0].set_ylabel("E||x_k - x*||^2")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, label=f"{v}, gamma0 {r}") for (v, r), c in styles.items()]
    handles += [Line2D([], [], color="k", ls="-", label="with DP noise"), Line2D([], [], color="k", ls=":", label="no noise")]
    axes[-1].legend(handles=handles, fontsize=7)
    fig.tight_layout()
    return fig


def figure_isotropic(theorem: dict[str, Any]) -> Figure:
    fig, (ax,) = _fig()
    for r in theorem["units"]["isotropic"]["rows"]:
        col = {0: "C0", 1: "C1", 2: "C2"}[[0.5, 0.05, 0.01].index(r["mu"]) if r["mu"] in (0.5, 0.05, 0.01) else 0]
        printed = "as_printed" in r["statement"]
        if printed:
            ax.loglog(r["rounds"], r["measured"], color=col, lw=1, label=f"measured, mu = {r['mu']}")
        ax.loglog(r["rounds"], r["bounds"], color=col, lw=2.5 if printed else 1.5, ls="--" if printed else "-.",
                  alpha=0.6, label=f"{'(18) as printed' if printed else '(36) corrected'}, mu = {r['mu']}")
    ax.set_xlabel("rounds k (E = 1)")
    ax.set_ylabel("E||x_k - x*||^2")
    ax.legend(fontsize=6)
    ax.set_title("Only DP noise: (18) as printed falls below the measurement")
    fig.tight_layout()
    return fig


def figure_budget(rows: list[dict[str, Any]]) -> Figure:
    fig, axes = _fig(ncols=2, width=4.6)
    for s in sorted({r["s"] for r in rows}):
        rs = [r for r in rows if r["s"] == s]
        label = f"s = {s}" if s else "no quantization"
        E = [r["E"] for r in rs]
        axes[0].errorbar(E, [r["loss"] for r in rs],
                         yerr=[[r["loss"] - r["loss_min"] for r in rs], [r["loss_max"] - r["loss"] for r in rs]],
                         marker="o", capsize=2, label=label)
        axes[1].loglog(E, [r["bound_printed"] for r in rs], marker="o", label=f"{label}, (18) as printed")
        axes[1].loglog(E, [r["bound_corrected"] for r in rs], marker="x", ls="--", label=f"{label}, corrected")
    axes[0].set_xscale("log")
    axes[0].set_xlabel("E (M = largest feasible)")
    axes[0].set_ylabel("training loss after T iterations")
    axes[0].set_title("Simulated vanilla FedPAQ", fontsize=9)
    axes[1].set_xlabel("E")
    axes[1].set_ylabel("bound on E||x_K - x*||^2")
    axes[1].set_title("Theorem 1 (MNIST constants)", fontsize=9)
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=6)
    fig.tight_layout()
    return fig
