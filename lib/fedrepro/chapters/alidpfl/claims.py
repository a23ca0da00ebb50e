"""The experimental claims of ALI-DPFL (Tables II–IV, Figs. 1 and 6) decided from one seed's
stored tables (:func:`tables_outcomes`), with the claims of :data:`BEST_FIXED_CLAIMS` (ALI-DPFL
against the best fixed τ).

The rules live here, below both :mod:`fedrepro.chapters.alidpfl.scorecard` (the part's
provider, which adds what was tried and the causes) and
:mod:`fedrepro.chapters.alidpfl.closed_form_effects` (the same rules on the tables with the
closed-form τ*), so that neither imports the other's caller.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedrepro.alidpfl import tau_rule
from fedrepro.report import paper
from fedrepro.report.book import sig3
from fedrepro.report.scorecard import Outcome

__all__ = ["CIFAR_REASON", "BEST_FIXED_CLAIMS", "bound_decreases_in_T", "tables_outcomes", "claims_frame",
           "claims_by_seed_frame", "misprint_suspects", "claim_c19"]



CIFAR_REASON = ("data unavailable: CIFAR-10 is not on the offline mirror of the machines that computed "
                "the committed results; the same code computes these cells where the data is present")


def bound_decreases_in_T() -> tuple[int, int]:
    """(grid instances with a feasible G, those where G(τ) at 2T is at most G(τ) at T for
    every feasible τ): the first half of claim C15."""
    taus = np.arange(1, 21)
    feasible = ok = 0
    for rho, beta, xi, lam, omega, T in itertools.product((0.01, 0.1, 1.0), (0.1, 1.0, 3.0), (0.0, 0.1, 1.0),
                                                          (0.1, 0.5), (0.1, 1.0), (50.0, 300.0)):
        with np.errstate(over="ignore", invalid="ignore"):
            h = tau_rule.gap_h(taus, xi, beta, 0.5, 0.1)
        c = tau_rule.Constants(rho, beta, xi, lam, omega)
        g1 = tau_rule.bound_G(taus, np.full(taus.size, T), h, eta=0.5, phi=c.phi(0.5), rho=rho, lam=lam)
        g2 = tau_rule.bound_G(taus, np.full(taus.size, 2 * T), h, eta=0.5, phi=c.phi(0.5), rho=rho, lam=lam)
        fin = np.isfinite(g1)
        if fin.any():
            feasible += 1
            ok += int(np.all(g2[fin] <= g1[fin]))
    return feasible, ok


def _frac(n: int, m: int) -> str:
    return f"{n} of {m}"


def _margins(values: list[float]) -> str:
    return ", ".join(f"{v:+.1f}" for v in values)


def tables_outcomes(result: dict[str, Any], profile: str = "paper",
                    cause: tuple[str, str, str] | None = None) -> dict[str, Outcome]:
    """Every ALI-DPFL item that needs the training runs, decided from ``result`` (the stored
    :func:`fedrepro.chapters.alidpfl.experiments.load_tables` of one seed). ``cause``:
    (cause, evidence, sentence) given to every table cell that misses (:func:`table_cause`)."""
    from fedrepro.chapters.alidpfl import experiments, tables  # the data loaders: only when runs are read

    out: dict[str, Outcome] = {}
    table = result["table"]
    suspects = {k: v for name in tables.TABLES
                for k, v in misprint_suspects(tables.paper_table(name),
                                              {k: table[k] for k in tables.cell_keys(result, name)}).items()}
    for name, tid in tables.TABLES.items():
        for cell in paper.load_table(tid):
            condition, dataset, eps = tables.parse_column(cell.column)
            if dataset != "F-MNIST":
                out[cell.id] = Outcome(status="not-run", reason=CIFAR_REASON)
                continue
            row = table.get(tables.cell_key(name, condition, eps), {})
            if cell.row not in row:
                out[cell.id] = Outcome(status="not-run", reason=f"{cell.row} exceeds R_c in this cell")
            else:
                why, evidence, sentence = cause or ("open", "", "")
                key = (tables.cell_key(name, condition, eps), cell.row)
                if key in suspects:
                    why, sentence = "paper-misprint", suspects[key]
                    evidence = evidence or f"alidpfl/{experiments.TablesConfig(profile=profile).result_name()}.json"
                out[cell.id] = Outcome(ours=round(float(row[cell.row]), 2), cause=why, evidence=evidence,
                                       reason=sentence)
    one = tables.cell_keys(result, "II")
    two = tables.cell_keys(result, "III") + tables.cell_keys(result, "IV")
    tol = tables.TOLERANCE
    cfg = experiments.TablesConfig(profile=profile)
    budgets = {tables.cell_key(c["table"], c["condition"], c["epsilon"]): c for c in experiments.cells(cfg)}

    t1 = tables.tau1_optimal(table, one)
    ok16 = t1["tau1_within_tolerance"] == t1["cells"]
    text16 = (f"Table II (R_s >= R_c): tau = 1 is the best fixed tau in {_frac(t1['tau1_best'], t1['cells'])} cells "
              f"and within {tol:g} points of the best in {_frac(t1['tau1_within_tolerance'], t1['cells'])} "
              f"(best tau per cell: {t1['best_taus']})")
    for cid in ("alidpfl-main-C14", "alidpfl-main-C16"):
        out[cid] = Outcome(ours=ok16, status="match" if ok16 else "miss", reason=text16)

    # C19 speaks of R_s >= R_c (Condition I): Table II's columns where it holds (C15 likewise)
    cond1 = [k for k in one if budgets[k]["rounds"] >= budgets[k]["iterations"]]
    out["alidpfl-main-C19"] = claim_c19(table, {k: result["taus"][k] for k in one}, cond1, tol)

    used = [tables.iterations_used(1, budgets[k]["rounds"], budgets[k]["iterations"]) for k in two]
    rc = [budgets[k]["iterations"] for k in two]
    unused = sum(u < r for u, r in zip(used, rc, strict=True))
    beaten = sum(tables.best_fixed(table[k])[0] > 1 for k in two)
    ok17 = unused == len(two)
    out["alidpfl-main-C17"] = Outcome(
        ours=ok17, status="match" if ok17 else "miss",
        reason=(f"R_s < R_c: tau = 1 uses {used} of R_c = {rc} local iterations (unused in {_frac(unused, len(two))} "
                f"cells); a larger fixed tau is the best in {_frac(beaten, len(two))} cells"))

    feasible, dec = bound_decreases_in_T()
    truly = [k for k in one if budgets[k]["rounds"] >= budgets[k]["iterations"]]
    iters = {k: [tables.iterations_used(t, budgets[k]["rounds"], budgets[k]["iterations"]) for t in range(1, 10)]
             for k in one}
    iters_max = all(iters[k][0] >= max(iters[k]) for k in truly)
    exceptions = "; ".join(f"{k.replace('|', ' ')}: R_s = {budgets[k]['rounds']} < R_c = {budgets[k]['iterations']}, "
                           f"tau = 1 uses {iters[k][0]}, tau = {int(np.argmax(iters[k])) + 1} uses {max(iters[k])}"
                           for k in one if k not in truly)
    ok15 = dec == feasible and iters_max
    out["alidpfl-main-C15"] = Outcome(
        ours=ok15, status="match" if ok15 else "miss",
        reason=(f"G at 2T <= G at T for every feasible tau on {_frac(dec, feasible)} grid instances; where R_s >= R_c "
                f"tau = 1 uses the most local iterations of tau = 1..9 ({_frac(len(truly), len(one))} Table II cells): "
                f"{iters_max}" + (f"; not so in Table II's {exceptions}" if exceptions else "")
                + " (with R_s < R_c, tau = 1 uses only R_s, see C17)"))

    vs = tables.ali_vs_fixed(table, two)
    # every rule is first evaluated on the paper's own tables (a rule its own numbers fail misreads the claim)
    theirs = {k: v for name in ("II", "III", "IV") for k, v in tables.paper_table(name).items()}
    pv = tables.ali_vs_fixed(theirs, [k for k in two if k in theirs])
    pv1 = tables.ali_vs_fixed(theirs, [k for k in one if k in theirs])
    on_paper = (f"; the same rule on the paper's own Tables III-IV: above in {_frac(pv['above'], pv['cells'])} cells, "
                f"by more than {tol:g} points in {_frac(pv['above_by_tolerance'], pv['cells'])} (margins "
                f"{_margins(pv['margins'])})")
    ok20 = vs["above"] > vs["cells"] / 2
    text20 = (f"R_s < R_c (Tables III, IV): ALI-DPFL above the best fixed tau in {_frac(vs['above'], vs['cells'])} "
              f"cells, by more than {tol:g} points in {_frac(vs['above_by_tolerance'], vs['cells'])} "
              f"(margins {_margins(vs['margins'])})")
    out["alidpfl-main-C20"] = Outcome(ours=ok20, status="match" if ok20 else "miss", reason=text20 + on_paper)
    vs1 = tables.ali_vs_fixed(table, one)
    ok05 = ok20 and vs1["within_tolerance"] == vs1["cells"]
    out["alidpfl-main-C05"] = Outcome(
        ours=ok05, status="match" if ok05 else "miss",
        reason=(text20 + f"; Table II: within {tol:g} points of the best fixed tau in "
                f"{_frac(vs1['within_tolerance'], vs1['cells'])} cells" + on_paper
                + f"; Table II of the paper: within {tol:g} points in {_frac(pv1['within_tolerance'], pv1['cells'])}"))
    # 'significantly better' cannot mean more than the tables' tolerance: the paper's own margins are all
    # below it (on_paper); read as C20's rule (above the best fixed tau in most R_s < R_c cells)
    for cid in ("alidpfl-main-C02", "alidpfl-main-C21"):
        out[cid] = Outcome(ours=ok20, status="match" if ok20 else "miss",
                           reason=("'significantly better' read as above the best fixed tau in most R_s < R_c cells "
                                   f"(the paper's own margins are all below the tables' tolerance of {tol:g} points, "
                                   "so a stricter reading would fail its own tables): " + text20 + on_paper))
    ok01 = vs["within_tolerance"] == vs["cells"]
    out["alidpfl-main-C01"] = Outcome(
        ours=ok01, status="match" if ok01 else "miss",
        reason=(f"the tau* of the bound does as well as the best fixed tau found by trying them all (within {tol:g} "
                f"points) in {_frac(vs['within_tolerance'], vs['cells'])} R_s < R_c cells (margins "
                f"{_margins(vs['margins'])}); in the paper's own Tables III-IV in "
                f"{_frac(pv['within_tolerance'], pv['cells'])}"))

    groups = {"R_s >= R_c": one, "R_s = R_c/2": tables.cell_keys(result, "III"),
              "R_s = R_c/5": tables.cell_keys(result, "IV")}
    per = {g: tables.ali_vs_tau1(table, ks) for g, ks in groups.items()}
    rise = tables.tau_sequences_rise(result["taus"], two)
    ok12 = all(p["at_least"] > p["cells"] / 2 for p in per.values()) and rise["rises"] == len(two)
    out["alidpfl-main-C12"] = Outcome(
        ours=ok12, status="match" if ok12 else "miss",
        reason=("ALI-DPFL at least as accurate as tau = 1 in " + "; ".join(
            f"{g}: {_frac(p['at_least'], p['cells'])}" for g, p in per.items())
            + f"; tau* rises above 1 in {_frac(rise['rises'], len(two))} R_s < R_c cells"))
    p2 = tables.ali_vs_tau1(table, two)
    ok04 = p2["at_least"] > p2["cells"] / 2
    out["alidpfl-main-C04"] = Outcome(
        ours=ok04, status="match" if ok04 else "miss",
        reason=(f"with the same budgets ALI-DPFL ends at least as accurate as tau = 1 in "
                f"{_frac(p2['at_least'], p2['cells'])} R_s < R_c cells (margins {_margins(p2['margins'])})"))

    spread = tables.argmax_spread(table, one + two)
    ok03 = spread["distinct"] >= 2 and spread["range"] >= 2
    for cid in ("alidpfl-main-C03", "alidpfl-main-F1"):
        out[cid] = Outcome(ours=ok03, status="match" if ok03 else "miss",
                           reason=(f"best fixed tau per budget pair (Tables II-IV, Fashion-MNIST): {spread['best_taus']} "
                                   f"({spread['distinct']} distinct values, range {spread['range']})"))
    ok06 = rise["rises"] == len(two)
    out["alidpfl-main-F6"] = Outcome(
        ours=ok06, status="match" if ok06 else "miss",
        reason=(f"tau* rises above 1 in {_frac(rise['rises'], len(two))} R_s < R_c cells; max tau* {rise['max']}, "
                f"mean tau* {[round(m, 1) for m in rise['mean']]}, rounds {rise['rounds']} (CIFAR-10 panel not run: "
                f"data unavailable)"))

    runs = [k for k in result["runs"] if k.startswith("ali-")]
    fractions = [float(np.mean(np.asarray(result["runs"][k]["constants"]["feasible"]) > 0)) for k in runs]
    ok10 = bool(fractions) and min(fractions) > 0.5
    out["alidpfl-main-C10"] = Outcome(
        ours=ok10, status="match" if ok10 else "miss",
        reason=(f"the traversal of tau = 1..min(2 tau_prev, 100) finds a feasible tau (positive denominator of G) in "
                f"{min(fractions):.0%} to {max(fractions):.0%} of the rounds of each ALI-DPFL run; elsewhere tau* = 1 "
                f"by the fallback") if fractions else "no ALI-DPFL run")
    return out


def claims_frame(result: dict[str, Any], profile: str = "paper"):
    """The experimental claims and figures of ALI-DPFL with their outcome and evidence."""
    import pandas as pd

    out = tables_outcomes(result, profile)
    rows = [(cid.removeprefix("alidpfl-main-"), o.status, o.reason) for cid, o in sorted(out.items())
            if "-C" in cid or "-F" in cid]
    return pd.DataFrame(rows, columns=["item", "outcome", "evidence"]).set_index("item")


def claims_by_seed_frame(results: dict[int, dict[str, Any]], profile: str = "paper"):
    """The experimental claims and figures of ALI-DPFL decided on each seed of ``results``
    (``{seed: tables result}``) by the same rules as :func:`claims_frame`, and on how many
    seeds each one holds (``match``). The scorecard itself is decided on seed 0."""
    import pandas as pd

    seeds = sorted(results)
    per_seed = {s: tables_outcomes(results[s], profile) for s in seeds}
    items = sorted(cid for cid in per_seed[seeds[0]] if "-C" in cid or "-F" in cid)
    rows = []
    for cid in items:
        statuses = [per_seed[s][cid].status for s in seeds]
        held = sum(st == "match" for st in statuses)
        rows.append((cid.removeprefix("alidpfl-main-"), *statuses, f"{held} of {len(seeds)}"))
    return pd.DataFrame(rows, columns=["item", *[f"seed {s}" for s in seeds], "holds on"]).set_index("item")


def _rows(cells: Mapping[str, Mapping[str, float]]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """``{(table|condition, method): [(cell key, accuracy), ...]}`` in increasing ε."""
    rows: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for key in sorted(cells, key=lambda k: float(k.split("|")[2])):
        for method, value in cells[key].items():
            rows.setdefault(("|".join(key.split("|")[:2]), method), []).append((key, float(value)))
    return rows


def _dips(row: list[tuple[str, float]]) -> dict[str, float]:
    """For each inner cell of a row, how far it lies below both neighbours (0 if not below)."""
    return {row[i][0]: max(0.0, min(row[i - 1][1], row[i + 1][1]) - row[i][1]) for i in range(1, len(row) - 1)}


def misprint_suspects(paper_cells: Mapping[str, Mapping[str, float]], ours: Mapping[str, Mapping[str, float]],
                      min_dip: float = 5.0) -> dict[tuple[str, str], str]:
    """Paper values that fall below both their neighbours in ε (same table, condition and
    method) by at least ``min_dip`` points and by more than twice any such dip in the rest of
    the paper's table and in every row of ours (where a larger ε never means fewer rounds):
    likely misprints. ``{(cell key, method): sentence}``."""
    theirs, mine = _rows(paper_cells), _rows(ours)
    paper_dips = {(key, m): d for (_, m), row in theirs.items() for key, d in _dips(row).items()}
    our_largest = max((d for row in mine.values() for d in _dips(row).values()), default=0.0)
    out = {}
    for (key, method), dip in paper_dips.items():
        others = max((d for k, d in paper_dips.items() if k != (key, method)), default=0.0)
        if dip >= min_dip and dip > 2 * max(others, our_largest):
            out[(key, method)] = (f"likely a misprint: the paper's value lies {sig3(dip)} points below both its "
                                  f"neighbours in epsilon (same table, condition and method), where no other cell "
                                  f"of the paper's table dips by more than {sig3(others)} and no row of ours by "
                                  f"more than {sig3(our_largest)} (a larger epsilon gives at least as many rounds)")
    return out


def claim_c19(table: Mapping[str, Mapping[str, float]], taus: Mapping[str, Any], cond1: Sequence[str],
              tol: float) -> Outcome:
    """C19: where R_s >= R_c (Condition I: the cells ``cond1``), ALI-DPFL's τ list is all 1 and
    τ = 1 gives the best accuracy (within ``tol`` points of the best fixed τ). Columns of
    Table II with R_s < R_c are not Condition I and are only listed."""
    from fedrepro.chapters.alidpfl import tables

    all_one = all(set(np.asarray(taus[k]).tolist()) == {1} for k in cond1)
    t1 = tables.tau1_optimal(table, cond1, tol)
    best = t1["tau1_within_tolerance"] == t1["cells"]
    others = [k for k in taus if k not in cond1]
    ok = bool(cond1) and all_one and best
    return Outcome(
        ours=ok, status="match" if ok else "miss",
        reason=(f"where R_s >= R_c ({_frac(len(cond1), len(taus))} Table II columns): ALI-DPFL's tau list is all 1: "
                f"{all_one} (max tau* per column: {[int(max(taus[k])) for k in cond1]}); tau = 1 within {tol:g} "
                f"points of the best fixed tau in {_frac(t1['tau1_within_tolerance'], t1['cells'])} "
                f"(best tau per column: {t1['best_taus']})"
                + (f"; not Condition I, not counted: {', '.join(k.replace('|', ' ') for k in others)} "
                   f"(max tau* {[int(max(taus[k])) for k in others]})" if others else "")))


#: The claims that ALI-DPFL beats (or matches) the best fixed τ where R_s < R_c.
BEST_FIXED_CLAIMS: tuple[str, ...] = ("alidpfl-main-C01", "alidpfl-main-C02", "alidpfl-main-C05",
                                      "alidpfl-main-C20", "alidpfl-main-C21")
