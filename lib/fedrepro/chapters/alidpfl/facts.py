"""The numbers that the prose of the three ALI-DPFL chapters ("which setting reproduces the
paper's level?", "Tables II–IV and Figs. 1 and 6", "the theory, checked") quotes, computed from
the stored results or by cheap calls of the accountant, so that the pages glue them instead of
typing them.

Each function reads the stored results of :mod:`fedrepro.chapters.alidpfl.settings`,
:mod:`fedrepro.chapters.alidpfl.experiments` (through :mod:`fedrepro.chapters.alidpfl.tables`)
and :mod:`fedrepro.chapters.alidpfl.theory` (this module is imported by none of them, so it lies
outside their results' code) or calls the RDP accountant of :mod:`fedrepro.privacy.budget`, and
returns a dict of floats. :func:`glued` formats them per page; ``tests/test_alidpfl_facts.py``
pins them against the tables the pages show and against independent recomputations. The
paper's values that the text quotes verbatim (R_c = 79 at ε = 1.55, Table II's 80 %, Table IV's
71.13) and the protocol's settings (q, C, σ, η, the divisor 64) stay in the text; values
*derived* from them (iteration counts, ε spent, ratios) are computed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedrepro.alidpfl.setting import PAPER
from fedrepro.report.prose import number_word, percent, power_of_ten, span

__all__ = ["PAGES", "glued", "accounting_facts", "reading_facts", "reading_levels", "tau1_growth_facts",
           "experiments_facts", "level_facts", "theory_facts", "accountant_errata_facts", "labels_facts", "table2_facts", "theory_errata_facts"]

#: The pages whose prose :func:`glued` serves (the notebook's name under ``book/alidpfl/``).
PAGES: tuple[str, ...] = ("settings", "experiments", "theory")

#: δ of every ALI-DPFL budget (the paper's, §VI-A).
_DELTA = PAPER.delta
#: σ of every ALI-DPFL run (the paper's noise multiplier).
_SIGMA = PAPER.sigma
#: ε of the smallest R_c of the paper (Table II), the budget of the settings chapter.
_EPS_79 = 1.55


def _code_reading() -> tuple[float, float]:
    """(q, divisor) of the public code's reading (``code-q-divisor`` of the settings chapter)."""
    from fedrepro.chapters.alidpfl import settings

    plan = settings.READINGS["code-q-divisor"][2]
    return float(plan["q"]), float(plan["divisor"])


def accounting_facts() -> dict[str, float]:
    """The RDP accountant's numbers of the settings chapter (σ = 1.1, δ = 1e-5): R_c at
    ε = 1.55 under the basic conversion (the paper's 79, Table II) and the improved one (the
    public code's), the improved/basic ratio of R_c over the budgets of the iterations table
    (smallest and largest), the ε that R_c steps spend at the public code's q = 0.05 under each
    conversion, and the DP-SGD steps of one "iteration" read as a local epoch (1/q) and of R_c
    of them."""
    from fedrepro.chapters.alidpfl import settings
    from fedrepro.privacy.budget import epsilon_after_steps

    it = settings.improved_iterations()
    ratio = np.asarray(it["improved"], dtype=float) / np.asarray(it["basic"], dtype=float)
    first = it["epsilon"].index(_EPS_79)
    rc = int(it["basic"][first])
    q_code, _ = _code_reading()
    return {"rc_basic": float(rc), "rc_improved": float(it["improved"][first]),
            "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
            "code_eps_basic": float(epsilon_after_steps(rc, q_code, _SIGMA, _DELTA)[0]),
            "code_eps_improved": float(epsilon_after_steps(rc, q_code, _SIGMA, _DELTA, conversion="improved")[0]),
            "epoch_steps": float(settings.epoch_steps(1)), "epoch_steps_rc": float(settings.epoch_steps(rc))}


def reading_facts(profile: str = "paper") -> dict[str, float]:
    """The reading study's numbers (stored seeds 0, 1, 2 of every reading): the clients' mean
    |D_i|; the public code's expected batch q·|D_i| at q = 0.05 and its step against the spec's
    (expected batch over the divisor 64); the step's bound ηC beside the noise; the per-sample
    gradients of ALI-DPFL's estimates per client and round (2 × the records the stored Tables
    II–IV runs estimated on, :func:`~fedrepro.chapters.alidpfl.settings.estimate_samples`) and of
    the exact F_i (two passes over D_i) and their ratios to the τ = 1 accounted ones (q·|D_i|); the paper's τ = 1
    accuracy at ε = 1.55 (Table II) less the spec's and the non-private mean, the gain of η = 4
    over the spec's η = 0.5 (means over the seeds, points), and the largest
    |best over the curve − final accuracy| over the readings (means over the seeds, points)."""
    from fedrepro.alidpfl.tau_rule import unaccounted_evaluations
    from fedrepro.alidpfl.training import RunPlan
    from fedrepro.chapters.alidpfl import settings

    seeds = settings.load_seeds(profile)
    size = float(np.mean(seeds[0]["spec"]["client_sizes"]))
    plan = RunPlan.__dataclass_fields__
    q_spec, eta, clip = (float(plan[k].default) for k in ("q", "eta", "clip_norm"))
    q_code, divisor = _code_reading()
    batch = q_spec * size
    samples = settings.estimate_samples(profile)
    u = unaccounted_evaluations(samples, 1, batch)
    paper = settings.paper_level_79()

    def mean(reading: str, key: str = "final") -> float:
        runs = [seeds[k][reading] for k in sorted(seeds) if reading in seeds[k]]
        if key == "best":
            return float(np.mean([100 * float(r["best_curve_accuracy"]) for r in runs]))
        return float(np.mean([100 * float(r["eval_accuracy"][-1]) for r in runs]))

    gaps = [abs(mean(r, "best") - mean(r)) for r in seeds[0]]
    return {"client_size": size, "code_batch": q_code * size, "code_step_ratio": q_code * size / divisor,
            "step_bound": eta * clip, "estimate_samples": float(samples), "unaccounted": float(u["unaccounted"]),
            "accounted": float(u["accounted"]), "unaccounted_ratio": float(u["ratio"]),
            "full_passes": 2.0 * size, "full_ratio": 2.0 * size / batch,
            "spec_gap": paper - mean("spec"), "non_private_gap": paper - mean("non-private"),
            "eta4_gain": mean("eta-4") - mean("spec"),
            "best_gap_max": float(max(gaps))}


def reading_levels(profile: str = "paper") -> dict[str, str]:
    """How the settings page ranks readings against one another, by the seed-spread rule of
    :func:`fedrepro.report.prose.compare_over_seeds` on the final accuracies of the stored seeds
    (``"higher"``, ``"lower"`` or ``"level"``): clipping without noise against the spec's run,
    each step size against the next smaller one (the spec's η = 0.5, then 1, 2, 4), and the
    public code's Dirichlet partition against the spec's shards."""
    from fedrepro.chapters.alidpfl import settings
    from fedrepro.report.prose import compare_over_seeds

    seeds = settings.load_seeds(profile)

    def finals(reading: str) -> list[float]:
        return [100 * float(seeds[k][reading]["eval_accuracy"][-1]) for k in sorted(seeds) if reading in seeds[k]]

    steps = ("spec", "eta-1", "eta-2", "eta-4")
    out = {"no_noise": compare_over_seeds(finals("no-noise"), finals("spec")),
           "dirichlet": compare_over_seeds(finals("dirichlet"), finals("spec"))}
    for lo, hi in zip(steps, steps[1:], strict=False):
        out[f"{hi}_over_{lo}"] = compare_over_seeds(finals(hi), finals(lo))
    return out


def tau1_growth_facts(profile: str = "paper") -> dict[str, float]:
    """τ = 1's accuracy (%) on the full 10k test set (the value Tables II–IV show) after R_c at
    ε = 1.55 (79 iterations) and at ε = 2 (317 iterations, the paper's largest R_s), and the
    growth between them (points), for every stored seed of the experiments chapter's tables
    (``seed<k>`` keys for each seed k, then the smallest, largest and mean growth and the
    highest accuracy at 317 over the seeds; ``seeds``: how many)."""
    from fedrepro.chapters.alidpfl import experiments, tables

    counts = {c["epsilon"]: c["iterations"] for c in experiments.cells(experiments.TablesConfig(profile=profile))
              if c["table"] == "II"}  # R_c of ε = 1.55 and ε = 2 at the profile's scale
    first, last = int(counts[_EPS_79]), int(counts[2.0])
    out: dict[str, float] = {"first_iterations": float(first), "last_iterations": float(last)}
    growth, ends = [], []
    for seed, result in sorted(tables.stored_seeds(profile, "spec").items()):
        run = result["runs"]["tau-1"]
        acc = {int(r): 100 * float(a) for r, a in zip(run["eval_rounds"], run["eval_accuracy"], strict=True)}
        out[f"seed{seed}_first"], out[f"seed{seed}_last"] = acc[first], acc[last]
        out[f"seed{seed}_growth"] = acc[last] - acc[first]
        growth.append(acc[last] - acc[first])
        ends.append(acc[last])
    if not growth:
        raise ValueError(f"profile {profile!r} has no stored tables result of the spec's reading")
    out.update({"seeds": float(len(growth)), "growth_min": float(min(growth)), "growth_max": float(max(growth)),
                "growth_mean": float(np.mean(growth)), "last_max": float(max(ends))})
    return out


def _tables(profile: str) -> dict[str, Any]:
    from fedrepro.chapters.alidpfl import experiments

    return experiments.load_tables(profile)


def experiments_facts(profile: str = "paper") -> dict[str, float]:
    """The experiments chapter's numbers: R_s and R_c of Table II's first column (ε = 1.75,
    "R_s = R_c"); the authors'-code reading's per-sample gradients against the spec's (the ratio
    of their sampling rates) and its number of runs; the largest median range over the seeds of a
    table's entries (points, :func:`~fedrepro.chapters.alidpfl.tables.seeds_spread_frame`);
    ALI-DPFL's shortfall to the best fixed τ in Table III (smallest and largest, points); and
    how far the paper's Table IV entry τ = 9 at ε = 3.25 lies below its neighbours in ε (the
    smaller of the two drops, points of the paper's own values)."""
    from fedrepro.alidpfl.setting import FederatedSetting
    from fedrepro.chapters.alidpfl import experiments, tables

    cfg = experiments.TablesConfig(profile=profile)
    first = next(c for c in experiments.cells(cfg) if c["table"] == "II" and c["condition"] == "Rs=Rc")
    q_code = float(experiments.TABLE_READINGS["authors_code"]["q"])
    runs = experiments.units(experiments.TablesConfig(profile=profile, reading="authors_code"))
    seeds = tables.stored_seeds(profile, "spec")
    spread = tables.seeds_spread_frame(seeds)["median range (points)"] if len(seeds) > 1 else None
    result = _tables(profile)
    shortfall = -np.asarray(tables.ali_vs_fixed(result["table"], tables.cell_keys(result, "III"))["margins"])
    paper = tables.paper_table("IV")
    row = [paper[tables.cell_key("IV", "Rs=Rc/5", e)]["tau=9"] for e in (2.75, 3.25, 3.75)]
    return {"first_rounds": float(first["rounds"]), "first_rc": float(first["iterations"]),
            "code_work": q_code / float(FederatedSetting().q), "code_runs": float(len(runs)),
            "median_range_max": float(spread.max()) if spread is not None else float("nan"),
            "iii_shortfall_min": float(shortfall.min()), "iii_shortfall_max": float(shortfall.max()),
            "misprint_dip": float(min(row[0], row[2]) - row[1])}


def level_facts(profile: str = "paper") -> dict[str, Any]:
    """Which fixed τ the stored seeds of the spec's reading can rank (:func:`fedrepro.report.prose.level_group`:
    a difference counts only when it exceeds the larger standard deviation over the seeds):
    per table, the fixed τ level with the best in every cell (``lead_<table>``, sorted) and the
    cells of the table (``cells_<table>``); for Table II also the cells where τ = 1 is among
    them (``tau1_level_II``); over the cells where ALI-DPFL runs on its own (R_s < R_c), how
    often it is lower than, level with or higher than the fixed τ of the highest mean
    (``ali_cells``, ``ali_lower``, ``ali_level``, ``ali_higher``). With fewer than two stored
    seeds only ``seeds`` is given."""
    from fedrepro.chapters.alidpfl import experiments, tables
    from fedrepro.report.prose import compare_over_seeds, level_group

    seeds = tables.stored_seeds(profile, "spec")
    out: dict[str, Any] = {"seeds": len(seeds)}
    if len(seeds) < 2:
        return out  # one seed ranks nothing (the quick profile from an empty store)
    first = seeds[min(seeds)]
    for table in tables.TABLES:
        keys = tables.cell_keys(first, table)
        groups = []
        for k in keys:
            fixed = [m for m in first["table"][k] if m.startswith("tau=")]
            groups.append({int(m.split("=")[1]) for m in level_group({m: [seeds[s]["table"][k][m] for s in seeds]
                                                                      for m in fixed})})
        out[f"lead_{table}"] = sorted(set.intersection(*groups))
        out[f"cells_{table}"] = len(keys)
        out[f"tau1_level_{table}"] = sum(1 in g for g in groups)
    own = [tables.cell_key(c["table"], c["condition"], c["epsilon"])  # R_s >= R_c: ALI-DPFL is the τ = 1 run
           for c in experiments.cells(experiments.TablesConfig(profile=profile)) if c["rounds"] < c["iterations"]]
    verdicts = []
    for key in own:
        fixed = {m: [seeds[s]["table"][key][m] for s in seeds] for m in first["table"][key] if m.startswith("tau=")}
        best = max(fixed, key=lambda m: float(np.mean(fixed[m])))
        verdicts.append(compare_over_seeds([seeds[s]["table"][key]["ALI-DPFL"] for s in seeds], fixed[best]))
    out.update({"ali_cells": len(verdicts), "ali_lower": verdicts.count("lower"),
                "ali_level": verdicts.count("level"), "ali_higher": verdicts.count("higher")})
    return out


def _taus_text(taus: list[int]) -> str:
    if not taus:
        return "none"
    return ", ".join(str(t) for t in taus[:-1]) + f" and {taus[-1]}" if len(taus) > 1 else str(taus[0])


def theory_facts(profile: str = "paper") -> dict[str, float]:
    """The theory chapter's numbers (stored checks of :mod:`fedrepro.chapters.alidpfl.theory`):
    Theorem 1's bound h(t) over the measured gap at t = 3 and t = 6 without and with noise;
    Lemma 3's bound over the measured error of the noise alone (full batch, no clipping); eq.
    (8)'s printed noise over Lemma 3's bound; and d, the parameters of the CNN of the runs (read
    from the stored spec reading of the settings chapter)."""
    from fedrepro.alidpfl.checks import lemma3
    from fedrepro.chapters.alidpfl import settings, theory

    res = theory.load_theory(profile)
    out: dict[str, float] = {}
    for case in ("det", "noisy"):
        obs, bound = res[f"theorem1_{case}_observed"], res[f"theorem1_{case}_bound"]
        for t in (3, 6):
            out[f"{case}_ratio_{t}"] = float(bound[t] / obs[t])
    noise_only = list(lemma3.LEMMA3_CASES).index("full batch, no clipping")
    obs, bound = res[f"lemma3_{noise_only}"]
    out["lemma3_spare"] = float(bound / obs)
    out["eq8_ratio"] = float(res["eq8"][0] / res["eq8"][1])
    out["d"] = float(settings.load_reading("spec", profile)["d"])
    return out


def accountant_errata_facts(profile: str = "paper") -> dict[str, float]:
    """The accountant's numbers of the errata's §VI-B and Theorem 3 entries (the stored iteration
    counts of :mod:`fedrepro.chapters.privacy_accounting.experiments`, the paper's q, σ, δ): ε
    that R_c = 79 steps spend (the paper's budget 1.55); eq. (14) as printed at 79 steps and
    its best order; printed/accountant ε over 79, 317 and the last count (smallest, largest:
    claim C11); the last count's relative gap to the design value 1585 = 317/0.2 and the largest
    gap of the ten counts to their nearest design points (claim C18); and the smallest surplus of
    the improved conversion's counts over the basic ones."""
    from fedrepro.chapters.privacy_accounting import claims, experiments
    from fedrepro.privacy.budget import epsilon_after_steps

    cfg = experiments.IterationCountsConfig(profile=profile)
    counts = experiments.load(cfg)
    basic = np.asarray(counts["bisection_basic_paper"], dtype=float)
    eps = list(np.asarray(counts["epsilon"], dtype=float))
    steps = (basic[eps.index(_EPS_79)], basic[eps.index(2.0)], basic[-1])

    def accountant(n: float) -> float:
        return float(epsilon_after_steps(float(n), cfg.q, cfg.sigma, cfg.delta)[0])

    printed = [claims.printed_theorem3_epsilon(int(n), cfg.q, cfg.sigma, cfg.delta) for n in steps]
    ratios = [p[0] / accountant(n) for p, n in zip(printed, steps, strict=True)]
    gaps, points = claims.design_gaps(basic, claims.design_iterations())
    improved = np.asarray(counts["bisection_improved_code"], dtype=float)
    return {"eps_79": accountant(steps[0]), "printed_79": float(printed[0][0]), "printed_order_79": float(printed[0][1]),
            "printed_ratio_min": float(min(ratios)), "printed_ratio_max": float(max(ratios)),
            "count_last": float(basic[-1]), "design_last": float(points[-1]), "design_gap_last": float(gaps[-1]),
            "design_gap_max": float(gaps.max()), "improved_surplus_min": float((improved - basic).min())}


def labels_facts(profile: str = "paper") -> dict[str, float]:
    """Labels per client of the errata's §VI-A entry: the expected number under 40 and under 4
    random shards of the 400 label-sorted ones (closed form), the fewest labels of a client of
    the stored spec partition (seed 0), the clients' |D_i| there, and |D_i| with 4 shards in
    place of 40."""
    from fedrepro.alidpfl.setting import FederatedSetting, expected_labels_per_client
    from fedrepro.chapters.alidpfl import settings

    spec = settings.load_seeds(profile)[0]["spec"]
    s = FederatedSetting()
    size = float(np.mean(spec["client_sizes"]))
    return {"labels_40": expected_labels_per_client(s.n_shards, s.shards_per_client),
            "labels_4": expected_labels_per_client(s.n_shards, 4),
            "labels_min": float(np.min(spec["labels_per_client"])), "client_size": size,
            "client_size_4": size * 4 / s.shards_per_client}


def table2_facts(profile: str = "paper") -> dict[str, float]:
    """The budgets of Table II's first column ("R_s = R_c" at ε = 1.75) and of the ALI-DPFL runs:
    R_s/R_c there, the local iterations τ = 1 and τ = 3 can use
    (:func:`~fedrepro.chapters.alidpfl.tables.iterations_used`), the number of Table II's other
    columns with R_s ≥ R_c, and the smallest and largest τ* of any ALI-DPFL run."""
    from fedrepro.chapters.alidpfl import tables

    result = _tables(profile)
    frame = tables.budget_frame(result, profile)
    ii = frame[frame.index.str.startswith("II:")]
    first = ii.loc["II: Rs=Rc, eps = 1.75"]
    rs, rc = int(first["R_s"]), int(first["R_c"])
    others = ii.drop(index="II: Rs=Rc, eps = 1.75")
    taus = np.concatenate([np.asarray(r["taus"]) for n, r in result["runs"].items() if n.startswith("ali-")])
    return {"first_share": rs / rc, "tau1_used": float(tables.iterations_used(1, rs, rc)),
            "tau3_used": float(tables.iterations_used(3, rs, rc)),
            "condition_i_others": float((others["R_s"] >= others["R_c"]).sum()),
            "tau_min": float(taus.min()), "tau_max": float(taus.max())}


def theory_errata_facts(profile: str = "paper") -> dict[str, float]:
    """The counterexamples of the errata's Theorem 1, Lemma 3, Theorem 2 and §III–§V entries,
    from the stored checks of :mod:`fedrepro.chapters.alidpfl.theory`: Theorem 1's gap at the
    first step (Monte Carlo and exact); Lemma 3's error and bound when sampling (no clipping) and
    when clipping (full batch); the Jensen step's two sides; E[1/X] of the last step's
    distribution (recomputed from it), E[X] and the bound; the maximum of x − x³; Lemma 6's rise
    and the fall (27) promises; Definition 3's divergence and the level "≤" admits; the printed
    clipping's norm; eq. (7)'s residual; eq. (8)'s noise and Lemma 3's bound; eq. (11)'s h(1)."""
    from fedrepro.alidpfl.checks import lemma3, theorem2
    from fedrepro.chapters.alidpfl import theory

    res = theory.load_theory(profile)
    cases = list(lemma3.LEMMA3_CASES)
    sampled = res[f"lemma3_{cases.index('sampled, no clipping')}"]
    clipped = res[f"lemma3_{cases.index('full batch, clipped')}"]
    values, probs = (np.asarray(v, dtype=float) for v in theorem2.FINAL_STEP_COUNTEREXAMPLE)
    return {"t1_mc": float(res["theorem1_noisy_observed"][1]), "t1_exact": float(res["theorem1_noisy_exact_at_one"]),
            "l3_sampled": float(sampled[0]), "l3_sampled_bound": float(sampled[1]),
            "l3_clipped": float(clipped[0]), "l3_clipped_bound": float(clipped[1]),
            "jensen_inv_mean": float(res["jensen"][0]), "jensen_mean_inv": float(res["jensen"][1]),
            "final_tc": float(probs @ (1.0 / values)), "final_mean": float(res["final_step"][0]),
            "final_bound": float(res["final_step"][1]), "x3_max": float(res["x_minus_x3"][0]),
            "lemma6_rise": float(res["lemma6"][0]), "lemma6_fall": float(-res["lemma6"][1]),
            "def3_divergence": float(res["definition3"][0]), "def3_allowed": float(res["definition3"][2]),
            "clipped_norm": float(res["clipping"][0]), "eq7_residual": float(res["eq7"][0]),
            "eq8_noise": float(res["eq8"][0]), "eq8_bound": float(res["eq8"][1]), "eq11_h1": float(res["eq11"][0])}


def _seed_ids(facts: dict[str, float]) -> list[int]:
    return sorted(int(k[4:-7]) for k in facts if k.startswith("seed") and k.endswith("_growth"))


def _listed(items: list[str]) -> str:
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def _settings_glued(profile: str) -> dict[str, str]:
    acc, rd, gr = accounting_facts(), reading_facts(profile), tau1_growth_facts(profile)
    lv = reading_levels(profile)
    steps = [lv[k] for k in ("eta-1_over_spec", "eta-2_over_eta-1", "eta-4_over_eta-2")]
    ae, lb = accountant_errata_facts(profile), labels_facts(profile)
    return {
        "alidpfl-sf-epoch": f"{acc['epoch_steps']:.0f}",
        "alidpfl-sf-improved-ratio": span(acc["ratio_min"], acc["ratio_max"], ".1f"),
        "alidpfl-sf-no-noise-level": {"level": "level with", "higher": "above", "lower": "below"}[lv["no_noise"]],
        "alidpfl-sf-dirichlet-level": {"level": "level with", "higher": "above", "lower": "below"}[lv["dirichlet"]],
        "alidpfl-sf-eta-steps": ("each above the step before it" if all(v == "higher" for v in steps)
                                 else "not each above the step before it"),
        "alidpfl-sf-estimate-samples": f"{rd['estimate_samples']:.0f}",
        "alidpfl-sf-unaccounted": f"{rd['unaccounted']:.0f}",
        "alidpfl-sf-unaccounted-ratio": f"{rd['unaccounted_ratio']:.1f}",
        "alidpfl-sf-full-passes": f"{rd['full_passes']:,.0f}",
        "alidpfl-sf-full-ratio": f"{rd['full_ratio']:.0f}",
        "alidpfl-sf-step-bound": f"{rd['step_bound']:g}",
        "alidpfl-sf-code-batch": f"{rd['code_batch']:.0f}",
        "alidpfl-sf-code-step-ratio": f"{rd['code_step_ratio']:.1f}",
        "alidpfl-sf-code-eps-basic": f"{acc['code_eps_basic']:.2f}",
        "alidpfl-sf-code-eps-improved": f"{acc['code_eps_improved']:.2f}",
        "alidpfl-sf-best-gap": f"{rd['best_gap_max']:.1f}",
        "alidpfl-sf-improved-iterations": f"{acc['rc_improved']:.0f}",
        "alidpfl-sf-tau1-growth": span(gr["growth_min"], gr["growth_max"], ".1f"),
        "alidpfl-sf-tau1-growth-seeds": _listed([f"{gr[f'seed{k}_growth']:.1f}" for k in _seed_ids(gr)]),
        "alidpfl-sf-tau1-seeds": _listed([str(k) for k in _seed_ids(gr)]),
        "alidpfl-sf-tau1-last-max": f"{gr['last_max']:.1f}",
        "alidpfl-sf-epoch-steps": f"{acc['epoch_steps_rc']:,.0f}",
        # cited by the part's index and the errata
        "alidpfl-sf-spec-gap": f"{rd['spec_gap']:.1f}",
        "alidpfl-sf-eta4-gain": f"{rd['eta4_gain']:.1f}",
        "alidpfl-sf-eps-79": f"{ae['eps_79']:.4f}",
        "alidpfl-sf-printed-order": f"{ae['printed_order_79']:.0f}",
        "alidpfl-sf-printed-ratio": f"{ae['printed_ratio_min']:.1f} to {ae['printed_ratio_max']:.0f}",
        "alidpfl-sf-design-gap-last": percent(ae["design_gap_last"]),
        "alidpfl-sf-design-gap-max": f"{100 * ae['design_gap_max']:.1f} %",
        "alidpfl-sf-labels-40": f"{lb['labels_40']:.2f}",
        "alidpfl-sf-labels-4": f"{lb['labels_4']:.2f}",
        "alidpfl-sf-labels-min": f"{lb['labels_min']:.0f}",
        "alidpfl-sf-client-size": f"{lb['client_size']:.0f}",
        "alidpfl-sf-client-size-4": f"{lb['client_size_4']:.0f}",
    }


def _level_glued(lv: dict[str, Any]) -> dict[str, str]:
    names = ("lead-iii", "lead-iv", "lead-min-iii", "lead-min-iv", "ii-tau1-level", "ii-cells", "ali-lower",
             "ali-level", "ali-cells", "ali-higher")
    out = {"alidpfl-ef-level-seeds": number_word(lv["seeds"])}
    if lv["seeds"] < 2:  # nothing to rank with one seed: the page says so where it would rank
        return out | {f"alidpfl-ef-{n}": "(needs two seeds)" for n in names}
    return out | {
        "alidpfl-ef-lead-iii": _taus_text(lv["lead_III"]),
        "alidpfl-ef-lead-iv": _taus_text(lv["lead_IV"]),
        "alidpfl-ef-lead-min-iii": _taus_text(lv["lead_III"][:1]),
        "alidpfl-ef-lead-min-iv": _taus_text(lv["lead_IV"][:1]),
        "alidpfl-ef-ii-tau1-level": number_word(lv["tau1_level_II"]),
        "alidpfl-ef-ii-cells": number_word(lv["cells_II"]),
        "alidpfl-ef-ali-lower": number_word(lv["ali_lower"]),
        "alidpfl-ef-ali-level": number_word(lv["ali_level"]),
        "alidpfl-ef-ali-cells": number_word(lv["ali_cells"]),
        "alidpfl-ef-ali-higher": ("in none is it higher" if lv["ali_higher"] == 0
                                  else f"higher in {number_word(lv['ali_higher'])}"),
    }


def _experiments_glued(profile: str) -> dict[str, str]:
    ex, t2, lv = experiments_facts(profile), table2_facts(profile), level_facts(profile)
    return _level_glued(lv) | {
        "alidpfl-ef-estimate-samples": f"{reading_facts(profile)['estimate_samples']:.0f}",
        "alidpfl-ef-first-rc": f"{ex['first_rc']:.0f}",
        "alidpfl-ef-code-work": f"{ex['code_work']:.1f}",
        "alidpfl-ef-code-runs": f"{ex['code_runs']:.0f}",
        "alidpfl-ef-median-range": f"{ex['median_range_max']:.1f}",
        "alidpfl-ef-iii-shortfall": span(ex["iii_shortfall_min"], ex["iii_shortfall_max"], ".1f"),
        "alidpfl-ef-misprint-dip": f"{ex['misprint_dip']:.1f}",
        # cited by the part's index and the errata
        "alidpfl-ef-first-share": f"{t2['first_share']:.2f}",
        "alidpfl-ef-first-tau1-used": f"{t2['tau1_used']:.0f}",
        "alidpfl-ef-first-tau3-used": f"{t2['tau3_used']:.0f}",
        "alidpfl-ef-condition-i-others": number_word(int(t2["condition_i_others"])),
        "alidpfl-ef-tau-min": f"{t2['tau_min']:.0f}",
        "alidpfl-ef-tau-max": f"{t2['tau_max']:.0f}",
    }


def _theory_glued(profile: str) -> dict[str, str]:
    th, te = theory_facts(profile), theory_errata_facts(profile)
    return {
        "alidpfl-tf-det-ratio-3": f"{th['det_ratio_3']:.0f}",
        "alidpfl-tf-det-ratio-6": f"{th['det_ratio_6']:.0f}",
        "alidpfl-tf-noisy-ratio-3": f"{th['noisy_ratio_3']:.0f}",
        "alidpfl-tf-noisy-ratio-6": f"{th['noisy_ratio_6']:.0f}",
        "alidpfl-tf-lemma3-spare": f"{th['lemma3_spare']:.1f}",
        "alidpfl-tf-d": f"{th['d']:,.0f}",
        "alidpfl-tf-eq8-ratio": f"{th['eq8_ratio']:.0f}",
        # cited by the errata
        "alidpfl-tf-t1-mc": f"{te['t1_mc']:.3f}",
        "alidpfl-tf-t1-exact": f"{te['t1_exact']:.3f}",
        "alidpfl-tf-l3-sampled": f"{te['l3_sampled']:.2g}",
        "alidpfl-tf-l3-sampled-bound": f"{te['l3_sampled_bound']:.2g}",
        "alidpfl-tf-l3-clipped": f"{te['l3_clipped']:.3g}",
        "alidpfl-tf-l3-clipped-bound": power_of_ten(te["l3_clipped_bound"], 2),
        "alidpfl-tf-jensen-inv-mean": f"{te['jensen_inv_mean']:.3g}",
        "alidpfl-tf-jensen-mean-inv": f"{te['jensen_mean_inv']:.0f}",
        "alidpfl-tf-final-tc": f"{te['final_tc']:.0f}",
        "alidpfl-tf-final-mean": f"{te['final_mean']:.3g}",
        "alidpfl-tf-final-bound": f"{te['final_bound']:.3g}",
        "alidpfl-tf-x3-max": f"{te['x3_max']:.3f}",
        "alidpfl-tf-lemma6-rise": f"{te['lemma6_rise']:.4g}",
        "alidpfl-tf-lemma6-fall": f"{te['lemma6_fall']:.4g}",
        "alidpfl-tf-def3-divergence": f"{te['def3_divergence']:.4g}",
        "alidpfl-tf-def3-allowed": f"{te['def3_allowed']:.3g}",
        "alidpfl-tf-clipped-norm": f"{te['clipped_norm']:g}",
        "alidpfl-tf-eq7-residual": f"{te['eq7_residual']:.2f}",
        "alidpfl-tf-eq8-noise": f"{te['eq8_noise']:.1f}",
        "alidpfl-tf-eq8-bound": f"{te['eq8_bound']:.3g}",
        "alidpfl-tf-eq11-h1": f"{te['eq11_h1']:.3g}",
    }


def glued(profile: str = "paper", page: str = "settings") -> dict[str, str]:
    """Every number the prose of ``page`` (one of :data:`PAGES`) quotes, formatted as the page
    prints it, by glue name (the page's hidden cell glues each; the formats keep round-off
    digits out of the text)."""
    pages = {"settings": _settings_glued, "experiments": _experiments_glued, "theory": _theory_glued}
    if page not in pages:
        raise ValueError(f"page must be one of {PAGES}, got {page!r}")
    return pages[page](profile)
