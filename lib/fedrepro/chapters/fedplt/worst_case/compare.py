"""The exact worst-case rates against the other Fed-PLT chapters' results: the empirical
rates of the theory chapter (:func:`fedrepro.chapters.fedplt.theory.checks.load_rate`, the
v2 logistic problem at the same moduli) and the tuned ``rho`` of the tuning chapter
(:func:`fedrepro.chapters.fedplt.tuning.sweeps.load_v2_sweeps`). Both are read from the
results store, never recomputed here (they recompute only if missing or stale)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.fedplt.checks.pep import RATE_RTOL
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TUNING_STEP", "theory_points", "theory_frame", "best_rho", "best_rho_frame"]

#: One step of the tuning chapter's ``rho`` lattice (8 points per decade): the resolution of
#: its tuned ``rho``.
TUNING_STEP = 10 ** (1 / 8)


def theory_points(val: dict[str, Any], profile: str = "paper") -> dict[str, Any]:
    """At the theory chapter's simulated ``(rho, N_e)`` (GD, default step, v2 logistic problem,
    loose ``lam_bar``): its fitted empirical rate of ``||(x_k, z_k) - s_bar||`` and corrected
    ``||S||``, the exact one-round worst case, and their ratios. The empirical asymptotic rate
    of one instance can never exceed the one-round worst case over the class: ``holds`` counts
    the points where ``rate <= exact (1 + RATE_RTOL)``."""
    from fedrepro.chapters.fedplt.theory.checks import load_rate

    rate = load_rate(profile)
    u = val["units"]["theory-points"]
    if not (np.allclose(rate["rho"], u["rho"]) and np.array_equal(rate["Ne"], u["Ne"])):
        raise ValueError("the theory chapter's RateConfig grid differs from ValidationConfig.theory_rhos/theory_Nes")
    exact = u["pep"]
    emp = rate["rate_xz"]
    ok = np.isfinite(emp)
    return {"rho": u["rho"], "Ne": u["Ne"], "exact": exact, "empirical": emp, "S_corrected": rate["S_norm_corrected"],
            "S_paper": rate["S_norm_paper"], "points": int(ok.sum()),
            "holds": int(np.sum(emp[ok] <= exact[ok] * (1 + RATE_RTOL))),
            "empirical_over_exact": emp / exact, "S_over_exact": rate["S_norm_corrected"] / exact}


def theory_frame(tp: dict[str, Any]) -> pd.DataFrame:
    """Per ``(rho, N_e)``: exact rate, empirical rate, ``||S~||`` and the two ratios."""
    import pandas as pd

    rows = []
    for i, rho in enumerate(tp["rho"]):
        for j, Ne in enumerate(tp["Ne"]):
            rows.append({"rho": sig3(float(rho)), "Ne": int(Ne), "exact": sig3(tp["exact"][i, j]),
                         "empirical (v2)": sig3(tp["empirical"][i, j]), "||S~||": sig3(tp["S_corrected"][i, j]),
                         "empirical / exact": sig3(tp["empirical_over_exact"][i, j]),
                         "||S~|| / exact": sig3(tp["S_over_exact"][i, j])})
    return pd.DataFrame(rows).set_index(["rho", "Ne"])


def best_rho(grid: dict[str, Any], profile: str = "paper") -> dict[str, Any]:
    """Per ``N_e`` (those both chapters have): the ``rho`` minimising the exact worst-case
    one-round rate (GD, default step) and the ``rho`` minimising ``K*`` on the v2 problem
    (tuning chapter), their ratio, and whether they agree to one step of the tuning
    lattice (:data:`TUNING_STEP`)."""
    from fedrepro.chapters.fedplt.tuning.sweeps import load_v2_sweeps, tuned_K

    sweeps = load_v2_sweeps(profile)
    K, rho_tuned = tuned_K(sweeps, "tuned")
    tuned = dict(zip(np.asarray(sweeps["Nes"]).tolist(), rho_tuned.tolist(), strict=True))
    k_of = dict(zip(np.asarray(sweeps["Nes"]).tolist(), K.tolist(), strict=True))
    wc = grid["units"]["best-gd"]
    Nes, r_wc, r_tu, rates, Ks = [], [], [], [], []
    for Ne, r, rate in zip(np.asarray(wc["Ne"]).tolist(), wc["best_rho"], wc["best_rate"], strict=True):
        if Ne in tuned:
            Nes.append(int(Ne))
            r_wc.append(float(r))
            r_tu.append(float(tuned[Ne]))
            rates.append(float(rate))
            Ks.append(float(k_of[Ne]))
    r_wc_a, r_tu_a = np.array(r_wc), np.array(r_tu)
    ratio = r_tu_a / r_wc_a
    agree = (ratio <= TUNING_STEP) & (ratio >= 1 / TUNING_STEP)
    return {"Ne": np.array(Nes), "worst_case_rho": r_wc_a, "worst_case_rate": np.array(rates),
            "tuned_rho": r_tu_a, "tuned_K": np.array(Ks), "ratio": ratio, "agree": agree}


def best_rho_frame(b: dict[str, Any]) -> pd.DataFrame:
    """The worst-case-optimal ``rho`` next to the empirically tuned one, per ``N_e``."""
    import pandas as pd

    return pd.DataFrame({"Ne": b["Ne"], "worst-case best rho": [sig3(v) for v in b["worst_case_rho"]],
                         "its exact rate": [sig3(v) for v in b["worst_case_rate"]],
                         "tuned rho (v2 problem)": [sig3(v) for v in b["tuned_rho"]],
                         "K* there": [sig3(v) for v in b["tuned_K"]],
                         "tuned / worst-case": [sig3(v) for v in b["ratio"]],
                         "within one lattice step": b["agree"]}).set_index("Ne")
