"""The numbers that the prose of the chapter "Fed-PLT: theory" quotes, and those that the
Fed-PLT entries of the errata page cite from it, computed from the stored results, so that the
pages glue them instead of typing them.

The logistic check of Proposition 1 (:mod:`fedrepro.chapters.fedplt.theory.jacobian`) is quoted
in the chapter's prose; its summary (:func:`~fedrepro.chapters.fedplt.theory.jacobian.jacobian_summary`)
is printed right above the text. The errata cite the counterexamples the chapter shows
(:func:`~fedrepro.chapters.fedplt.theory.checks.load_counterexamples`), the Lemma 7 agreement
count (:func:`~fedrepro.chapters.fedplt.theory.checks.load_stability`), the largest ratio of the
Proposition 4 checks that hold, and a few cheap library calls on the counterexamples' instances
(spectral radii, the Lemma 8 premise of Proposition 3, the footnote 6 gap). This module is
imported by no result's code. ``tests/test_fedplt_theory_facts.py`` pins the glued values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.report.prose import number_word, thousands

__all__ = ["jacobian_facts", "counterexample_facts", "instance_facts", "glued"]


def jacobian_facts(profile: str = "paper") -> dict[str, Any]:
    """Proposition 1 on logistic costs, both variants of ``S`` (printed, corrected): the
    summary of :func:`~fedrepro.chapters.fedplt.theory.jacobian.jacobian_summary`, by variant."""
    from fedrepro.chapters.fedplt.theory import jacobian

    return jacobian.jacobian_summary(jacobian.load_jacobian(profile))


def counterexample_facts(profile: str = "paper") -> dict[str, Any]:
    """From the stored results: every counterexample's observed value, printed bound and
    corrected ``(bound, ratio)`` (by the name of the chapter's table), the Lemma 8 worst case at
    ``kappa = 2`` and ``ell = 3`` (the curve of the chapter's figure) with its bound, the Lemma 7
    agreement counts, and the largest observed/bound of the Proposition 4 checks for the
    released model and for all final models."""
    from fedrepro.chapters.fedplt.theory import checks as theory

    ex = theory.load_counterexamples(profile)
    out: dict[str, Any] = {}
    for name, c in ex.items():
        if isinstance(c.get("paper"), dict):
            corr = c["corrected"] or {}
            out[name] = {"observed": float(c["paper"]["observed"]), "bound": float(c["paper"]["bound"]),
                         "corrected_bound": float(corr.get("bound", np.nan)),
                         "corrected_ratio": float(corr.get("ratio", np.nan)), "instance": dict(c["instance"])}
    curve = ex["lemma8-curve-2"]
    ell = int(np.flatnonzero(np.asarray(curve["ell"]) == 3)[0])
    out["lemma8-kappa2"] = {"observed": float(curve["u"][ell]), "bound": float(curve["paper"][ell])}
    agreement = theory.load_stability(profile)["agreement"]
    out["lemma7-agreement"] = {k: int(v) for k, v in agreement.items()}
    units = theory.load_checks(profile)["units"]
    out["proposition4-released-max"] = max(float(units[f"proposition4--{v}"]["max_ratio"]) for v in ("agent", "models"))
    return out


def instance_facts() -> dict[str, float]:
    """Cheap library calls on the counterexamples' instances: the spectral radius of the
    printed ``S`` at the first Proposition 1 counterexample; at the second (``rho = 0.2``) the
    printed ``||S||`` and the spectral radius of the corrected ``S~``; the round at which the
    Corollary 1 counterexample fails; the accelerated local map's exact Lipschitz constant and
    ``chi(N_e)`` at ``lam = 1, lam_bar = 4, rho = 3, N_e = 10`` (Lemma 8 inside Proposition 3);
    and footnote 6's printed prox against the exact one (max-norm gap at ``rho = 0.5, 1, 2`` on
    ``random_quadratic(3, 2, 1.0, 3.0, 5)`` at the points ``default_rng(6)`` draws)."""
    from fedrepro.fedplt import checks
    from fedrepro.fedplt.checks import counterexamples as ce
    from fedrepro.problems import random_quadratic

    p1 = ce.counterexample_proposition1()
    p1c = ce.counterexample_proposition1_not_contractive()
    cor1 = ce.counterexample_corollary1()
    p3 = checks.check_proposition3(checks.Proposition3Instance(lam=1.0, lam_bar=4.0, rho=3.0, Ne=10))
    q = random_quadratic(3, 2, 1.0, 3.0, 5)
    V = np.random.default_rng(6).standard_normal((3, 2))
    gap = {}
    for rho in (0.5, 1.0, 2.0):
        printed = np.linalg.solve(np.eye(2) + rho * q.A, (V + q.b)[:, :, None])[:, :, 0]  # (I + rho A)^-1 (v - c), c = -b
        gap[rho] = float(np.max(np.abs(q.local_prox(V, rho) - printed)))
    return {"prop1_radius_S": float(p1.paper.details["radius_S"]),
            "prop1c_S_printed": float(p1c.paper.details["S_norm_printed"]),
            "prop1c_radius_corrected": float(p1c.corrected.details["radius_S"]),
            "cor1_iterate": int(cor1.paper.details["max_ratio_iterate"]),
            "prop3_local_lipschitz": float(p3.details["local_lipschitz"]), "prop3_chi_Ne": float(p3.details["chi_Ne"]),
            "footnote6_gap_05": gap[0.5], "footnote6_gap_1": gap[1.0], "footnote6_gap_2": gap[2.0]}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose, and the errata's Fed-PLT entries, quote, formatted as
    they print it, by glue name."""
    s = jacobian_facts(profile)
    paper, corrected = s["paper"], s["corrected"]
    ce, inst = counterexample_facts(profile), instance_facts()
    ag = ce["lemma7-agreement"]
    eq11 = ce["eq11"]["instance"]
    out = {
        "fedplt-theory-j-fixed-median-corrected": f"{corrected['median_ratio_fixed_point']:.2f}",
        "fedplt-theory-j-failing-below-1": str(paper["failing_rho_below_1"]),
        "fedplt-theory-j-applicable-below-1": str(paper["applicable_rho_below_1"]),
        "fedplt-theory-j-max-printed": f"{paper['max_ratio']:.2f}",
        "fedplt-theory-j-fixed-median-printed": f"{paper['median_ratio_fixed_point']:.2f}",
        # errata: the counterexamples (observed, printed bound, corrected)
        "fedplt-theory-ce-prop1-radius": f"{inst['prop1_radius_S']:.3f}",
        "fedplt-theory-ce-prop1c-s-printed": f"{inst['prop1c_S_printed']:.3f}",
        "fedplt-theory-ce-prop1c-radius-corrected": f"{inst['prop1c_radius_corrected']:.3f}",
        "fedplt-theory-ce-cor1-round": str(inst["cor1_iterate"]),
        "fedplt-theory-ce-lemma7-mismatch-printed": thousands(ag["mismatch_printed"]),
        "fedplt-theory-ce-lemma7-draws": thousands(ag["count"]),
        "fedplt-theory-ce-lemma7-mismatch-corrected": number_word(ag["mismatch_corrected"]),
        "fedplt-theory-ce-lemma8-k2-observed": f"{ce['lemma8-kappa2']['observed']:.3g}",
        "fedplt-theory-ce-lemma8-k2-bound": f"{ce['lemma8-kappa2']['bound']:.3g}",
        "fedplt-theory-ce-prop3-local": f"{inst['prop3_local_lipschitz']:#.3g}",
        "fedplt-theory-ce-prop3-chi": f"{inst['prop3_chi_Ne']:#.3g}",
        "fedplt-theory-ce-prop4-released-max": f"{ce['proposition4-released-max']:.2f}",
        "fedplt-theory-ce-eq11-printed-end": f"{2 / (eq11['lam'] + 1 / eq11['rho']):.3g}",
        "fedplt-theory-ce-footnote6-gap-05": f"{inst['footnote6_gap_05']:.3g}",
        "fedplt-theory-ce-footnote6-gap-1": f"{inst['footnote6_gap_1']:.0f}",
        "fedplt-theory-ce-footnote6-gap-2": f"{inst['footnote6_gap_2']:.3g}",
    }
    for name in ("proposition1", "proposition1-contractive", "proposition2", "proposition3", "corollary1",
                 "lemma7-proof", "lemma8", "proposition4", "proposition4-state", "eq11", "lemma3-v1"):
        out[f"fedplt-theory-ce-{name}-observed"] = f"{ce[name]['observed']:.3g}"
    for name in ("proposition1", "proposition2", "proposition3", "corollary1", "lemma7-proof", "lemma8",
                 "proposition4", "proposition4-state", "lemma3-v1"):
        out[f"fedplt-theory-ce-{name}-bound"] = f"{ce[name]['bound']:.3g}"
    for name in ("proposition2", "proposition3", "corollary1", "lemma3-v1"):
        out[f"fedplt-theory-ce-{name}-corrected-ratio"] = f"{ce[name]['corrected_ratio']:.3f}"
    return out
