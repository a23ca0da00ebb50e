"""What each reading of the v1 problem (:mod:`.experiments`) does to the v1 numbers we miss:
the grid of readings against v1's two statements about Fed-PLT (its rate in Table II, its
optimum ``rho`` ≈ 0.3 in Fig. 2), Tables II and III under one reading beside the main
setting and the paper, cell by cell (``matches`` within the scorecard's tolerance, else
``closer`` or ``further``), and the claims about Fig. 3 under each reading (:mod:`.epochs`).
The paper's values are the other side of each comparison only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.chapters.fedplt.readings.experiments import (
    PRINTED_CLASS,
    load_reading_tables,
    load_readings_grid,
    reading_label,
)
from fedrepro.report.book import sig3

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["grid_frame", "table_ii_cells", "table_ii_effects", "table_iii_cells", "table_iii_effects",
           "figure_readings", "evidence_of", "reading_cause", "calibrated_readings", "readings", "table_causes",
           "effects_frame", "rho_optimum", "grid_evidence", "EPOCH_CLAIMS", "epochs_verdicts", "epochs_reading",
           "epochs_cause", "epochs_frame", "figure_epochs", "TABLE_II_CLAIMS", "table_ii_claim_verdicts",
           "table_ii_claim_cause"]


def grid_frame(profile: str = "paper") -> pd.DataFrame:
    """Per reading: ``lam``, ``lam_bar``, Fed-PLT's smallest rate and its ``rho``, beside v1's
    rate (Table II, Fed-PLT Grad.) and optimum (Fig. 2, "``rho`` ≈ 0.3")."""
    import pandas as pd

    from fedrepro.report.paper import load_table

    g = load_readings_grid(profile)
    paper_rate = {c.id: c.value for c in load_table("fedplt-v1-TII")}["fedplt-v1-TII-fed-plt-grad"]
    rows = []
    for a, weight in enumerate(g["weights"]):
        for b, scale in enumerate(g["scales"]):
            rows.append({"weight": f"{weight:g}", "s": f"{scale:g}", "lam": sig3(g["lam"][a, b]),
                         "lam_bar": sig3(g["lam_bar"][a, b]), "rate": sig3(g["min_rate"][a, b]),
                         "argmin rho": sig3(g["argmin_rho"][a, b]),
                         "rate / paper": sig3(g["min_rate"][a, b] / paper_rate)})
    return pd.DataFrame(rows).set_index(["weight", "s"])


def _effect(paper: float, main: float, reading: float, tid: str) -> str:
    """``matches`` (within the scorecard's tolerance of table ``tid``), else ``closer`` or
    ``further`` (the reading's rate against the main setting's, in distance to the paper)."""
    from fedrepro.report.paper import tolerance_for
    from fedrepro.report.scorecard import compare

    if not (np.isfinite(main) and np.isfinite(reading)):
        return "no rate"
    if compare(paper, reading, tolerance_for(tid))[0] == "match":
        return "matches"
    return "closer" if abs(reading - paper) < abs(main - paper) else "further"


def table_ii_cells(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                   scale: float = PRINTED_CLASS[1]) -> dict[str, dict[str, Any]]:
    """v1 Table II under a reading: ``{cell id: {paper, ours, reading, effect, params}}``
    (``ours`` the main setting's rate; cells the algorithm has no run for are left out)."""
    from fedrepro.chapters.fedplt.comparison.experiments import V1_COLUMNS, V1_ROW_NAMES, v1_rate_cells

    mine = load_reading_tables(profile, weight, scale)["units"]
    out = {}
    for cid, c in v1_rate_cells(profile).items():
        solver, partial = V1_COLUMNS[c["column"]]
        u = mine.get(f"tii-{solver}-{'cohort' if partial else 'full'}-{V1_ROW_NAMES[c['row']]}")
        if u is None or c["ours"] is None or c["paper"] is None:
            continue
        out[cid] = {"row": c["row"], "column": c["column"], "paper": float(c["paper"]), "ours": float(c["ours"]),
                    "reading": float(u["rate"]), "params": u["best_params"],
                    "effect": _effect(float(c["paper"]), float(c["ours"]), float(u["rate"]), "fedplt-v1-TII")}
    return out


def table_ii_effects(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                     scale: float = PRINTED_CLASS[1]) -> pd.DataFrame:
    """v1 Table II under a reading: per cell the paper's rate, ours (main setting), ours under
    the reading, and whether the reading moves the cell toward the paper (``matches`` within
    the scorecard's tolerance, ``closer`` or ``further``)."""
    import pandas as pd

    rows = [{"algorithm": c["row"], "column": c["column"], "paper": sig3(c["paper"]), "ours": sig3(c["ours"]),
             "ours, reading": sig3(c["reading"]), "effect": c["effect"]}
            for c in table_ii_cells(profile, weight, scale).values()]
    return pd.DataFrame(rows).set_index(["algorithm", "column"])


def table_iii_cells(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                    scale: float = PRINTED_CLASS[1]) -> dict[str, dict[str, Any]]:
    """v1 Table III under a reading: ``{cell id: {agents, paper, ours, reading, effect}}``."""
    from fedrepro.chapters.fedplt.participation_privacy.participation import load_v1_rates
    from fedrepro.report.paper import load_table

    main = load_v1_rates(profile)
    mine = load_reading_tables(profile, weight, scale)["units"]["tiii"]
    main_rate = dict(zip((int(c) for c in main["agents"]), main["rate"], strict=True))
    mine_rate = dict(zip((int(c) for c in mine["agents"]), mine["rate"], strict=True))
    out = {}
    for cell in load_table("fedplt-v1-TIII"):
        c = int(cell.row)
        if c not in main_rate or c not in mine_rate or cell.value is None:
            continue
        m, r = float(main_rate[c]), float(mine_rate[c])
        out[cell.id] = {"agents": c, "paper": float(cell.value), "ours": m, "reading": r,
                        "effect": _effect(float(cell.value), m, r, "fedplt-v1-TIII")}
    return out


def table_iii_effects(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                      scale: float = PRINTED_CLASS[1]) -> pd.DataFrame:
    """v1 Table III under a reading, as :func:`table_ii_effects` (rows: active agents)."""
    import pandas as pd

    rows = [{"active agents": c["agents"], "paper": sig3(c["paper"]), "ours": sig3(c["ours"]),
             "ours, reading": sig3(c["reading"]), "effect": c["effect"]}
            for c in table_iii_cells(profile, weight, scale).values()]
    return pd.DataFrame(rows).set_index("active agents")


def figure_readings(profile: str = "paper") -> Any:
    """Fed-PLT's rate against ``rho`` (``N_e = 10``) under every reading of the grid: one
    panel per regulariser weight, one curve per feature scale; v1's rate (Table II) and
    optimum (Fig. 2) marked."""
    import matplotlib.pyplot as plt

    from fedrepro.report.paper import load_table

    g = load_readings_grid(profile)
    paper_rate = {c.id: c.value for c in load_table("fedplt-v1-TII")}["fedplt-v1-TII-fed-plt-grad"]
    fig, axes = plt.subplots(1, len(g["weights"]), figsize=(4.2 * len(g["weights"]), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    for a, (ax, weight) in enumerate(zip(axes, g["weights"], strict=True)):
        for b, scale in enumerate(g["scales"]):
            ax.semilogx(g["rhos"], g["rate"][a, b], label=f"s = {scale:g}")
        ax.axhline(paper_rate, color="k", ls=":", lw=1, label="v1 Table II")
        ax.axvline(0.3, color="k", ls="--", lw=1, label=r"v1: $\rho \approx 0.3$")
        ax.set_title(f"regulariser weight {weight:g} on every $f_i$", fontsize=10)
        ax.set_xlabel(r"$\rho$")
        ax.set_ylim(0, 1.02)
    axes[0].set_ylabel(r"rate of Fed-PLT ($N_e = 10$)")
    axes[-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- causes for the scorecard


def evidence_of(profile: str = "paper", weight: float = PRINTED_CLASS[0], scale: float = PRINTED_CLASS[1]) -> str:
    """The stored result (path in the store) of the tables under a reading."""
    from fedrepro.chapters.fedplt.readings.experiments import ReadingTablesConfig

    return f"fedplt/{ReadingTablesConfig.for_profile(profile, weight, scale).result_name()}.json"


def reading_cause(cell: Mapping[str, Any], label: str, evidence: str) -> tuple[str, str, str]:
    """(cause, evidence, sentence) of a miss from its value under a reading (a cell of
    :func:`table_ii_cells` or :func:`table_iii_cells`). The reading explains the miss
    (``unstated-setting``) when it brings our value within the tolerance or closes at least
    half the distance to the paper; otherwise the miss stays ``open`` and the sentence says
    what the reading did."""
    paper, main, reading = float(cell["paper"]), float(cell["ours"]), float(cell["reading"])
    what = f"under the reading '{label}' ours is {sig3(reading)} (main setting {sig3(main)}, paper {sig3(paper)})"
    if not np.isfinite(reading):
        return "open", "", f"tried the reading '{label}': no rate fitted"
    gap, left = abs(main - paper), abs(reading - paper)
    if cell["effect"] == "matches" or left <= 0.5 * gap:
        return "unstated-setting", evidence, what + (": within the tolerance" if cell["effect"] == "matches"
                                                     else f": ours minus the paper's moves from {sig3(main - paper)} to "
                                                          f"{sig3(reading - paper)}"
                                                          + (" (an overshoot)" if (main - paper) * (reading - paper) < 0
                                                             else ""))
    return "open", "", f"tried: {what}, {'closer' if left < gap else 'further'}; not understood yet"


def calibrated_readings(profile: str = "paper") -> list[tuple[float, float]]:
    """Per regulariser weight of the grid, the reading whose Fed-PLT rate is closest to v1's
    (Table II, Fed-PLT with GD): one free parameter (the unstated feature scale) fitted to one
    cell, so that the other cells of Tables II and III test the reading."""
    from fedrepro.report.paper import load_table

    g = load_readings_grid(profile)
    paper_rate = {c.id: c.value for c in load_table("fedplt-v1-TII")}["fedplt-v1-TII-fed-plt-grad"]
    out = []
    for a, weight in enumerate(g["weights"]):
        b = int(np.nanargmin(np.abs(np.asarray(g["min_rate"][a]) - paper_rate)))
        out.append((float(weight), float(g["scales"][b])))
    return out


def readings(profile: str = "paper") -> list[tuple[float, float]]:
    """The readings Tables II and III are run under: the printed class (an ``eps = 5``
    regulariser on every ``f_i``), then :func:`calibrated_readings` (duplicates dropped)."""
    out = [PRINTED_CLASS]
    for r in calibrated_readings(profile):
        if r not in out:
            out.append(r)
    return out


def _cells_under(tid: str, profile: str, reading: tuple[float, float]) -> dict[str, dict[str, Any]]:
    if tid == "fedplt-v1-TII":
        return table_ii_cells(profile, *reading)
    if tid == "fedplt-v1-TIII":
        return table_iii_cells(profile, *reading)
    raise ValueError(f"tid must be fedplt-v1-TII or fedplt-v1-TIII, got {tid!r}")


def _explains(cell: Mapping[str, Any]) -> bool:
    return reading_cause(cell, "", "x")[0] == "unstated-setting"


def table_causes(tid: str, profile: str = "paper") -> dict[str, tuple[str, str, str]]:
    """``{cell id: (cause, evidence, sentence)}`` for every cell of ``tid`` (v1 Table II or
    III) that misses in the main setting. One reading per table, the one of :func:`readings`
    that explains the most of its misses (:func:`reading_cause`; ties: the earlier reading),
    so that a cell is never explained by a reading the rest of its table refutes; a miss it
    does not explain stays ``open``, with every reading's value."""
    from fedrepro.report.paper import tolerance_for
    from fedrepro.report.scorecard import compare

    by_reading = {r: _cells_under(tid, profile, r) for r in readings(profile)}
    first = next(iter(by_reading.values()))
    misses = [cid for cid, c in first.items() if compare(c["paper"], c["ours"], tolerance_for(tid))[0] == "miss"]
    counts = {r: sum(_explains(cells[cid]) for cid in misses) for r, cells in by_reading.items()}
    best = max(counts, key=lambda r: (counts[r], -list(counts).index(r)))
    out = {}
    for cid in misses:
        cell = by_reading[best][cid]
        if counts[best] and _explains(cell):
            out[cid] = reading_cause(cell, reading_label(*best), evidence_of(profile, *best))
        else:
            tried = ", ".join(f"'{reading_label(*r)}' {sig3(cells[cid]['reading'])}" for r, cells in by_reading.items())
            out[cid] = ("open", "", f"tried the readings of the problem ({tried}; main setting "
                                    f"{sig3(first[cid]['ours'])}, paper {sig3(first[cid]['paper'])}): none closes "
                                    "half the gap; not understood yet")
    return out


def effects_frame(tid: str, profile: str = "paper") -> pd.DataFrame:
    """One row per cell of ``tid`` (v1 Table II or III): the paper, ours in the main setting,
    ours under every reading of :func:`readings`, and the cause the scorecard gives a miss."""
    import pandas as pd

    by_reading = {r: _cells_under(tid, profile, r) for r in readings(profile)}
    causes = table_causes(tid, profile)
    first = next(iter(by_reading.values()))
    rows = []
    for cid, c in first.items():
        key = ({"algorithm": c["row"], "column": c["column"]} if tid == "fedplt-v1-TII"
               else {"active agents": c["agents"]})
        row = {**key, "paper": sig3(c["paper"]), "ours": sig3(c["ours"])}
        for r, cells in by_reading.items():
            row[reading_label(*r)] = sig3(cells[cid]["reading"])
        row["cause of the miss"] = causes[cid][0] if cid in causes else "(match)"
        rows.append(row)
    return pd.DataFrame(rows).set_index(list(key))


def rho_optimum(profile: str = "paper", weight: float = PRINTED_CLASS[0],
                scale: float = PRINTED_CLASS[1]) -> dict[str, float]:
    """Fed-PLT's rate curve against ``rho`` under a reading of the grid: its argmin, minimum,
    and the rates at both ends of the ``rho`` range (the quantities of v1 claim C11)."""
    g = load_readings_grid(profile)
    a = int(np.flatnonzero(np.isclose(g["weights"], weight))[0])
    b = int(np.flatnonzero(np.isclose(g["scales"], scale))[0])
    r = np.asarray(g["rate"][a, b])
    return {"argmin_rho": float(g["argmin_rho"][a, b]), "min_rate": float(g["min_rate"][a, b]),
            "rate_low_end": float(r[0]), "rate_high_end": float(r[-1])}


def grid_evidence(profile: str = "paper") -> str:
    """The stored result of the grid of readings (path in the store)."""
    from fedrepro.chapters.fedplt.readings.experiments import ReadingsGridConfig

    return f"fedplt/{ReadingsGridConfig.for_profile(profile).result_name()}.json"


# --------------------------------------------------------------------------- Fig. 3 under the readings

#: The claims about v1 Fig. 3 (the rate against ``N_e`` at ``rho = 0.3``) that miss on the main
#: setting, decided again under each reading of :mod:`.epochs`.
EPOCH_CLAIMS: tuple[str, ...] = ("fedplt-v1-C03", "fedplt-v1-C13", "fedplt-v1-C15", "fedplt-v2-C13")


def epochs_verdicts(result: Mapping[str, Any]) -> dict[tuple[float, float], dict[str, tuple[bool, str]]]:
    """``{reading: {claim: (holds, reason)}}`` for :data:`EPOCH_CLAIMS`, with the tuning
    chapter's checks (:mod:`fedrepro.chapters.fedplt.tuning.scorecard`) on the stored curves
    of :class:`.epochs.ReadingsEpochsConfig`."""
    from fedrepro.chapters.fedplt.tuning import checks as sc
    from fedrepro.chapters.fedplt.tuning.sweeps import ne_profile

    Nes = np.asarray(result["Nes"])
    upto20 = Nes <= 20
    out: dict[tuple[float, float], dict[str, tuple[bool, str]]] = {}
    for a, (weight, scale) in enumerate(np.asarray(result["readings"])):
        rate, exact = np.asarray(result["rate"][a]), float(result["prox_rate"][a])
        p = ne_profile(Nes, rate, exact) | {"rho": float(result["rho"])}
        p20 = ne_profile(Nes[upto20], rate[upto20], exact) | {"rho": float(result["rho"])}
        out[(float(weight), float(scale))] = {
            "fedplt-v1-C03": sc.check_v1_dip(p), "fedplt-v1-C13": sc.check_v1_plateau(p),
            "fedplt-v1-C15": sc.check_v1_inexact_faster(p),
            "fedplt-v2-C13": sc.check_v2_c13(p20, np.asarray(result["S_printed"][a])[upto20])}
    return out


def epochs_reading(result: Mapping[str, Any]) -> tuple[float, float]:
    """The one reading (other than the main setting) under which the most claims of
    :data:`EPOCH_CLAIMS` hold (the first in the config's order on a tie): one reading for
    the figure, never a reading chosen per claim."""
    from fedrepro.chapters.fedplt.readings.experiments import MAIN

    verdicts = epochs_verdicts(result)
    others = [r for r in verdicts if r != MAIN]
    return max(others, key=lambda r: sum(ok for ok, _ in verdicts[r].values()))


def epochs_cause(claim: str, profile: str = "paper") -> tuple[str, str, str]:
    """(cause, evidence, sentence) of a Fig. 3 claim that misses on the main setting: decided
    again under :func:`epochs_reading`; holding there, ``unstated-setting`` (v1 does not
    state the scale of its data, and prints two regulariser weights)."""
    from fedrepro.chapters.fedplt.readings.epochs import ReadingsEpochsConfig, load_readings_epochs

    result = load_readings_epochs(profile)
    reading = epochs_reading(result)
    ok, why = epochs_verdicts(result)[reading][claim]
    label = reading_label(*reading)
    if ok:
        evidence = f"fedplt/{ReadingsEpochsConfig.for_profile(profile).result_name()}.json"
        return "unstated-setting", evidence, f"under the reading '{label}' it holds: {why}"
    return "open", "", f"tried the readings of the v1 problem, the best being '{label}': {why}; not understood yet"


def epochs_frame(profile: str = "paper") -> pd.DataFrame:
    """Per reading: Fed-PLT's rate at ``N_e = 1``, its smallest rate and where, the exact-PRS
    rate, the dip below it, and which Fig. 3 claims hold."""
    import pandas as pd

    from fedrepro.chapters.fedplt.readings.epochs import load_readings_epochs
    from fedrepro.chapters.fedplt.tuning.sweeps import ne_profile
    from fedrepro.report.book import roundoff

    result = load_readings_epochs(profile)
    verdicts = epochs_verdicts(result)
    rows = []
    for a, reading in enumerate(verdicts):
        p = ne_profile(result["Nes"], result["rate"][a], float(result["prox_rate"][a]))
        holding = [c.removeprefix("fedplt-") for c, (ok, _) in verdicts[reading].items() if ok]
        rows.append({"reading": reading_label(*reading), "rate at Ne = 1": sig3(p["first"]),
                     "smallest rate": sig3(p["min"]), "at Ne": p["argmin"], "exact PRS": sig3(p["exact"]),
                     "dip below exact PRS": roundoff(p["dip"], 1e-4),
                     "claims holding": ", ".join(holding) if holding else "none"})
    return pd.DataFrame(rows).set_index("reading")


def figure_epochs(profile: str = "paper") -> Any:
    """v1 Fig. 3 under each reading: Fed-PLT's rate against ``N_e`` at ``rho = 0.3`` (solid)
    and the exact-PRS rate (dotted, same colour)."""
    import matplotlib.pyplot as plt

    from fedrepro.chapters.fedplt.readings.epochs import load_readings_epochs

    result = load_readings_epochs(profile)
    fig, ax = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
    for a, reading in enumerate(np.asarray(result["readings"])):
        line, = ax.plot(result["Nes"], result["rate"][a], marker=".", lw=1, label=reading_label(*reading))
        ax.axhline(float(result["prox_rate"][a]), color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("local steps $N_e$")
    ax.set_ylabel(f"empirical rate at rho = {float(result['rho']):g}")
    ax.legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------- v1 Table II's claims under the readings

#: v1's claims about its Table II as a whole (Fed-PLT the fastest; GD against AGD).
TABLE_II_CLAIMS: tuple[str, ...] = ("fedplt-v1-C02", "fedplt-v1-C04", "fedplt-v1-C07")


def table_ii_claim_verdicts(profile: str = "paper") -> dict[tuple[float, float], dict[str, tuple[bool, str]]]:
    """``{reading: {claim: (holds, reason)}}``: v1 C02, C04 and C07 decided by the comparison
    chapter's checks on v1 Table II as rerun under each reading (:func:`readings`); a cell
    without a run under the reading counts as missing."""
    from fedrepro.chapters.fedplt.comparison import claims as sc
    from fedrepro.chapters.fedplt.comparison.experiments import v1_rate_cells

    keys = [(c["row"], c["column"]) for c in v1_rate_cells(profile).values()]
    checks = {"fedplt-v1-C02": sc.claim_v1_c02, "fedplt-v1-C04": sc.claim_v1_c04, "fedplt-v1-C07": sc.claim_v1_c07}
    out = {}
    for reading in readings(profile):
        cells = table_ii_cells(profile, *reading)
        rates = dict.fromkeys(keys)
        rates.update({(c["row"], c["column"]): c["reading"] for c in cells.values()})
        out[reading] = {cid: check(rates) for cid, check in checks.items()}
    return out


def table_ii_claim_cause(claim: str, profile: str = "paper") -> tuple[str, str, str]:
    """(cause, evidence, sentence) of a miss among :data:`TABLE_II_CLAIMS`: decided again under
    the one reading where the most of them hold (the earlier reading on a tie); holding there,
    ``unstated-setting``, else ``open`` with what was tried."""
    verdicts = table_ii_claim_verdicts(profile)
    order = list(verdicts)
    best = max(order, key=lambda r: (sum(ok for ok, _ in verdicts[r].values()), -order.index(r)))
    ok, why = verdicts[best][claim]
    if ok:
        return "unstated-setting", evidence_of(profile, *best), f"under the reading '{reading_label(*best)}' it holds: {why}"
    tried = "; ".join(f"'{reading_label(*r)}': {verdicts[r][claim][1]}" for r in order)
    return "open", "", f"tried the readings of the problem ({tried}): it fails under each; not understood yet"
