"""The numbers that the prose of the chapter "DP-FedPAQ: the theory, checked" quotes, computed
from the stored results (and, for the root of eq. (15)'s last link, by a cheap computation), so
that the page glues them instead of typing them. The same page also glues the numbers that the
part's index and the DP-FedPAQ entries of the errata cite from it (their counterexamples'
values, read from the same results or from the library calls the entries name).

Each function reads the stored paper-profile results of :mod:`.checks`, :mod:`.theorem` and
:mod:`.budget` (this module is imported by none of them, so it lies outside their results'
code) and returns a dict of floats and ints. :func:`glued` formats them as the page prints them;
``tests/test_dpfedpaq_facts.py`` pins them against the tables the page shows beside them. The
protocol's settings stay typed in the text.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.report.prose import number_word, order_of_magnitude, power_of_ten

__all__ = ["glued", "quantizer_facts", "privacy_facts", "sensitivity_facts", "step_size_facts", "theorem_facts",
           "budget_facts", "lemma2_facts", "remark6_facts", "link3_root"]


def link3_root() -> float:
    """The largest ``ε₀`` at which eq. (15)'s last link ``γ(e^ε₀ − 1) ≤ 2γε₀`` holds: the
    positive root of ``e^x − 1 = 2x`` (bisection to machine precision)."""
    f = lambda x: math.expm1(x) - 2 * x  # noqa: E731
    lo, hi = 0.5, 3.0  # f(lo) < 0 < f(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def _checks(profile: str) -> dict[str, Any]:
    from fedrepro.experiments.dpfedpaq import theory_checks as checks_exp

    return checks_exp.load_checks(profile)


def quantizer_facts(profile: str = "paper") -> dict[str, float]:
    """Assumption 4 at d = 7850 (the softmax model's dimension): ``√d``, ``q`` at ``s = 1`` and
    ``s = 10`` (the experiments' level), and the exact variance ratio ``E‖Q(v) − v‖²/‖v‖²`` of the
    Gaussian test vector at ``s = 10`` (and ``s = 1``) and its fraction of ``q``; the smallest
    integer ``s`` with ``q ≤ 1`` (``s ≥ √d``)."""
    from fedrepro.experiments.dpfedpaq.mlp_width import softmax_parameters

    u = _checks(profile)["units"]["quantizer"]
    q = {int(s): float(row["q"]) for s, row in u["q_table"].items()}
    gauss = float(u["empirical_ratio"]["random-s10"])
    sqrt_d = math.sqrt(softmax_parameters())
    return {"sqrt_d": sqrt_d, "q_s1": q[1], "q_s10": q[10], "gauss_s10": gauss, "gauss_s10_of_q": gauss / q[10],
            "gauss_s1": float(u["empirical_ratio"]["random-s1"]), "s_for_q1": int(math.ceil(sqrt_d))}


def privacy_facts(profile: str = "paper") -> dict[str, float]:
    """Eqs. (15)–(16) and the whole training: the root of the last link of (15)
    (:func:`link3_root`), the paper's ``ε₀ = ε/(2γ)`` at its defaults (ε = 1, γ = 0.2), the
    smallest target ε at γ = 0.2 whose realized per-round ε (exact profile and amplification)
    exceeds it, and, at ε = 1, γ = 0.2, K = 100, the rounds a device is scheduled in and its
    total ε by basic composition and by the RDP accountant. For the errata's entry on eqs. (15)–(16)
    (:func:`fedrepro.dpfedpaq.amplification.paper_calibration_failure_epsilon`,
    :func:`fedrepro.privacy.gaussian.classical_calibration_failure_epsilon`): the largest ``ε/γ``
    at which the chain holds (``2·link3_root``), the target ε from which eq. (16) fails at
    γ = 0.4 (δ of the defaults), and the ε up to which the classical calibration (13) is valid at
    δ = 10⁻⁵."""
    from fedrepro.dpfedpaq.amplification import paper_calibration_failure_epsilon
    from fedrepro.experiments.dpfedpaq.runs import RunSpec
    from fedrepro.privacy.gaussian import classical_calibration_failure_epsilon

    u = _checks(profile)["units"]
    d = RunSpec()
    pr = u["per-round"]
    g = list(pr["gammas"]).index(d.gamma)
    eps = np.asarray(pr["epsilons"], dtype=float)
    over = eps[np.asarray(pr["realized"], dtype=float)[g] > eps]
    row = next(r for r in u["training"]["training"] if r["epsilon"] == d.eps and r["gamma"] == d.gamma and r["K"] == d.K)
    return {"link3_root": link3_root(), "eps0_default": d.eps / (2 * d.gamma),
            "realized_exceeds_from": float(over.min()) if over.size else math.nan,
            "rounds_scheduled": float(row["rounds_scheduled"]), "basic_total": float(row["basic_scheduled"]),
            "rdp_total": float(row["rdp_scheduled"]), "per_round_target": float(d.eps),
            "link3_eps_over_gamma": 2 * link3_root(),
            "fail_gamma04": float(paper_calibration_failure_epsilon(d.delta, 0.4)),
            "classical_fail_1e5": float(classical_calibration_failure_epsilon(1e-5))}


def sensitivity_facts(profile: str = "paper") -> dict[str, float]:
    """The sensitivity check on coupled neighbouring datasets: the smallest and largest share of
    pairs whose update difference exceeds the authors' ``C/n_i``, the largest ratio to it (over
    all settings and at the smaller step η = 0.05), the largest ratio to the valid ``2η_kEC``,
    and the median and smallest per-sample gradient norm at ``x = 0``."""
    u = _checks(profile)["units"]
    authors = [r for r in u["sensitivity"]["summary"] if r["mode"] == "authors_code"]
    rigorous = [r for r in u["sensitivity"]["summary"] if r["mode"] == "rigorous"]
    eta_min = min(float(r["eta"]) for r in authors)
    return {"authors_min_fraction": float(min(r["fraction_exceeding"] for r in authors)),
            "authors_max_fraction": float(max(r["fraction_exceeding"] for r in authors)),
            "authors_max_ratio": float(max(r["max_ratio"] for r in authors)),
            "eta_min": eta_min,
            "authors_max_ratio_eta_min": float(max(r["max_ratio"] for r in authors if float(r["eta"]) == eta_min)),
            "rigorous_max_ratio": float(max(r["max_ratio"] for r in rigorous)),
            "median_norm_at_0": float(u["clipping"]["median_norm_at_0"]),
            "min_norm_at_0": float(u["clipping"]["min_norm_at_0"])}


def step_size_facts(profile: str = "paper") -> dict[str, float]:
    """The proof's step-size conditions with the MNIST constants (the first rows of the page's
    table): ``L``, and the offset ``γ₀`` and step ``η₀`` under the proof's and the printed rule, and
    the largest of the proof's step-size conditions (each must be ≤ 1) under the printed rule."""
    rows = _checks(profile)["units"]["inequalities"]["lr_conditions"]
    L = max(float(r["L"]) for r in rows)
    by_rule = {r["rule"]: r for r in rows if float(r["L"]) == L}
    return {"L": L, "gamma0_paper": float(by_rule["paper"]["gamma0"]), "eta0_paper": float(by_rule["paper"]["eta"]),
            "gamma0_printed": float(by_rule["printed"]["gamma0"]), "eta0_printed": float(by_rule["printed"]["eta"]),
            "printed_violation": max(float(by_rule["printed"][k]) for k in ("eta_L2_over_mu", "lemma3", "eq30"))}


def theorem_facts(profile: str = "paper") -> dict[str, float]:
    """Theorem 1: by how much its bound exceeds the measured error on the synthetic problem
    (smallest and largest ``bound/measured`` over every configuration and reading), and on
    HET_MNIST(2) the ``q`` of the constants, ``η₀`` of the proof's and the printed reading and by
    how many orders of magnitude the corrected bound (the proof's offset) exceeds the measurement;
    on the isotropic counterexample (``isotropic_<reading>_<mu>``: measured error, bound and
    measured/bound at ``μ = 0.05`` and ``0.01``)."""
    from fedrepro.experiments.dpfedpaq import theory_theorem as theorem_exp

    th = theorem_exp.load_theorem(profile)
    ratios = [1 / float(u["ratio"]) for name, u in th["units"].items() if name.startswith("synthetic")]
    mnist = th["units"]["mnist"]
    lr0 = {r["rule"]: float(r["lr0"]) for r in mnist["readings"]}
    orders = {r["rule"]: float(r["orders"]) for r in mnist["readings"] if r["variant"] == "corrected"}
    out = {"synthetic_min": float(min(ratios)), "synthetic_max": float(max(ratios)),
           "mnist_q": float(mnist["constants"]["q"]), "mnist_eta0_paper": lr0["paper"],
           "mnist_eta0_printed": lr0["printed"], "mnist_orders_paper": orders["paper"]}
    for r in th["units"]["isotropic"]["rows"]:
        if float(r["mu"]) in (0.05, 0.01):
            key = f"isotropic_{'printed' if r['paper_reading'] else 'corrected'}_{r['mu']:g}"
            out |= {f"{key}_measured": float(r["observed"]), f"{key}_bound": float(r["bound"]),
                    f"{key}_ratio": float(r["ratio"])}
    return out


def lemma2_facts(profile: str = "paper") -> dict[str, float]:
    """Lemma 2 (the errata's entry): on the configuration without quantization with noise at
    ``E = 1``, the Monte Carlo ``E‖x̂_{k+1} − x̄_{k,E}‖²`` and the noise term ``dς²/N`` alone (the
    corrected bound at ``q = 0``); over every configuration, how many there are and the largest
    ratio of the term to the corrected bound."""
    rows = [r for r in _checks(profile)["units"]["lemmas"]["rows"] if r["statement"] == "Lemma 2 with the noise term"]
    row = next(r for r in rows if r["instance"] == "E=1, s=none, noise=on")
    return {"mc": float(row["observed"]), "noise_term": float(row["bound"]), "configs": len(rows),
            "max_ratio": float(max(r["ratio"] for r in rows))}


def remark6_facts(profile: str = "paper", T: int = 1000) -> dict[str, Any]:
    """Remark 6 and eq. (19) (the errata's entry) with the MNIST constants of the stored theorem
    results (``G = C = 1``, ``E = 10``, ``T`` iterations; :func:`fedrepro.dpfedpaq.theorem1.theorem1_bound`
    without noise): the ``(E−1)²`` term at ``λ = 0``, and the ``E ∈ {1, …, 100}`` minimising
    eq. (18) under ``M = E`` for ``λ² ∈ {0, ¼, 1, 4}×`` the MNIST ``λ²``."""
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.experiments.dpfedpaq import theory_theorem as theorem_exp

    th = theorem_exp.load_theorem(profile)
    k = th["units"]["mnist"]["constants"]
    x0 = k["x_star_norm2"]

    def constants(**kw: Any) -> Any:
        base = dict(L=k["L_max"], mu=k["mu"], sigma2=k["sigma2"], G2=k["G2"], lam2=k["lambda2"], q=k["q"], d=7850,
                    b=int(k["b"]), n=int(k["n"]), N=100, M=10, E=10, epsilon=None)
        return t.Theorem1Constants(**(base | kw))

    Es = list(range(1, 101))
    argmin = [Es[int(np.argmin([t.theorem1_bound(constants(E=E, M=E, lam2=f * k["lambda2"]), T, x0).total for E in Es]))]
              for f in (0.0, 0.25, 1.0, 4.0)]
    return {"drift_at_zero_lambda": float(t.theorem1_bound(constants(lam2=0.0), T, x0).terms["drift"]),
            "argmin_E": argmin}


def budget_fact_rows(profile: str = "paper") -> list[dict[str, Any]]:
    """The rows of the page's fixed-budget table (:func:`.report.budget_rows`)."""
    from fedrepro.chapters.dpfedpaq.theory import report
    from fedrepro.experiments.dpfedpaq import theory_budget as budget_exp
    from fedrepro.experiments.dpfedpaq import theory_theorem as theorem_exp

    T = budget_exp.BudgetConfig.for_profile(profile).T
    return report.budget_rows(budget_exp.load_budget(profile), theorem_exp.load_theorem(profile), T)


def budget_facts(profile: str = "paper") -> dict[str, float]:
    """Eq. (11) at a fixed budget: the printed bound of Theorem 1 over the simulated loss
    (smallest and largest over the feasible schedules)."""
    ratio = [r["bound_printed"] / r["loss"] for r in budget_fact_rows(profile)]
    return {"printed_over_loss_min": float(min(ratio)), "printed_over_loss_max": float(max(ratio))}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name
    (the page's hidden cell glues each; the formats keep round-off digits out of the text)."""
    qz, pv, se = quantizer_facts(profile), privacy_facts(profile), sensitivity_facts(profile)
    st, th, bu = step_size_facts(profile), theorem_facts(profile), budget_facts(profile)
    l2, r6 = lemma2_facts(profile), remark6_facts(profile)
    return {
        "dpfedpaq-th-sqrt-d": f"{qz['sqrt_d']:.1f}",
        "dpfedpaq-th-q-s10": f"{qz['q_s10']:.3g}",
        "dpfedpaq-th-q-s1": f"{qz['q_s1']:.3g}",
        "dpfedpaq-th-gauss-s10": f"{qz['gauss_s10']:.3g}",
        "dpfedpaq-th-gauss-of-q": f"{qz['gauss_s10_of_q']:.2f}",
        "dpfedpaq-th-link3-root": f"{pv['link3_root']:.4f}",
        "dpfedpaq-th-eps0-default": f"{pv['eps0_default']:g}",
        "dpfedpaq-th-realized-from": f"{pv['realized_exceeds_from']:g}",
        "dpfedpaq-th-rounds": f"{pv['rounds_scheduled']:.0f}",
        "dpfedpaq-th-authors-exceeded": f"{100 * se['authors_min_fraction']:.1f} %",
        "dpfedpaq-th-grad-norm": f"{se['median_norm_at_0']:.0f}",
        "dpfedpaq-th-grad-norm-min": f"{se['min_norm_at_0']:.2g}",
        "dpfedpaq-th-lipschitz": f"{st['L']:.3g}",
        "dpfedpaq-th-gamma0-paper": power_of_ten(st["gamma0_paper"], 1, "×"),
        "dpfedpaq-th-eta0-paper": order_of_magnitude(st["eta0_paper"]),
        "dpfedpaq-th-gamma0-printed": f"{st['gamma0_printed']:g}",
        "dpfedpaq-th-eta0-printed": f"{st['eta0_printed']:g}",
        "dpfedpaq-th-synthetic-orders": f"{number_word(round(math.log10(th['synthetic_min'])))} to {number_word(round(math.log10(th['synthetic_max'])))}",
        "dpfedpaq-th-mnist-q": f"{th['mnist_q']:.3g}",
        "dpfedpaq-th-mnist-eta0-paper": order_of_magnitude(th["mnist_eta0_paper"]),
        "dpfedpaq-th-mnist-eta0-printed": f"{th['mnist_eta0_printed']:g}",
        "dpfedpaq-th-budget-ratio": f"{power_of_ten(bu['printed_over_loss_min'], 1, '×')} to {power_of_ten(bu['printed_over_loss_max'], 1, '×')}",
        # cited by the part's index and the errata
        "dpfedpaq-th-gauss-s1": f"{qz['gauss_s1']:.3g}",
        "dpfedpaq-th-s-for-q1": str(qz["s_for_q1"]),
        "dpfedpaq-th-link3-eps-over-gamma": f"{pv['link3_eps_over_gamma']:.3f}",
        "dpfedpaq-th-fail-gamma04": f"{pv['fail_gamma04']:.3g}",
        "dpfedpaq-th-classical-fail-1e5": f"{pv['classical_fail_1e5']:.3g}",
        "dpfedpaq-th-rdp-total": f"{pv['rdp_total']:.2g}",
        "dpfedpaq-th-basic-total": f"{pv['basic_total']:.2g}",
        "dpfedpaq-th-authors-exceeded-range": f"{100 * se['authors_min_fraction']:.1f}–{round(100 * se['authors_max_fraction'], 1):g} %",
        "dpfedpaq-th-authors-max-ratio": f"{se['authors_max_ratio']:.3g}",
        "dpfedpaq-th-authors-max-ratio-eta-min": f"{se['authors_max_ratio_eta_min']:.3g}",
        "dpfedpaq-th-rigorous-max-ratio": f"{se['rigorous_max_ratio']:.2g}",
        "dpfedpaq-th-printed-violation": power_of_ten(st["printed_violation"], 2, "×"),
        "dpfedpaq-th-mnist-orders": f"{th['mnist_orders_paper']:.1f}",
        "dpfedpaq-th-iso-measured-005": power_of_ten(th["isotropic_printed_0.05_measured"], 3, "×"),
        "dpfedpaq-th-iso-bound-005": power_of_ten(th["isotropic_printed_0.05_bound"], 3, "×"),
        "dpfedpaq-th-iso-ratio-005": f"{th['isotropic_printed_0.05_ratio']:.3g}",
        "dpfedpaq-th-iso-measured-001": power_of_ten(th["isotropic_printed_0.01_measured"], 3, "×"),
        "dpfedpaq-th-iso-bound-001": power_of_ten(th["isotropic_printed_0.01_bound"], 2, "×"),
        "dpfedpaq-th-iso-corrected-ratio-005": f"{th['isotropic_corrected_0.05_ratio']:.3g}",
        "dpfedpaq-th-lemma2-mc": power_of_ten(l2["mc"], 3, "×"),
        "dpfedpaq-th-lemma2-noise": power_of_ten(l2["noise_term"], 3, "×"),
        "dpfedpaq-th-lemma2-configs": str(l2["configs"]),
        "dpfedpaq-th-lemma2-max-ratio": f"{l2['max_ratio']:.3g}",
        "dpfedpaq-th-drift-at-zero": power_of_ten(r6["drift_at_zero_lambda"], 3, "×"),
        "dpfedpaq-th-argmin-e": str(r6["argmin_E"]),
    }
