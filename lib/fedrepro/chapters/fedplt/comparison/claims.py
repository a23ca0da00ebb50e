"""The checks of the comparison chapter's claims: each claim a pure function of plain numbers
(``times[table][(row, column)]`` in ``t_G`` units, ``rates[(row, column)]``, ...) returning
``(holds, reason)``. :mod:`.scorecard` decides the claims with them on the stored results, and
:mod:`fedrepro.chapters.fedplt.readings.effects` decides v1 C02, C04 and C07 again under each
reading of the v1 problem."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fedrepro.report.book import sig3

Times = Mapping[str, Mapping[tuple[str, str], float | None]]
Rates = Mapping[tuple[str, str], float | None]

TII, TIII, TIV, TV = "fedplt-v2-TII", "fedplt-v2-TIII", "fedplt-v2-TIV", "fedplt-v2-TV"

#: Claim v2-C07: ``(table, column) -> whether Fed-PLT is the fastest there`` (its check text).
C07_PATTERN: dict[tuple[str, str], bool] = {
    (TII, "Convex"): True, (TII, "Nonconvex"): True,
    (TIII, "tC=0.1"): False, (TIII, "tC=1"): False, (TIII, "tC=10"): True, (TIII, "tC=100"): True,
    (TIV, "Grad."): True, (TIV, "Gradient Partial p."): True, (TIV, "Acc. grad."): True,
    (TIV, "Acc. grad. Partial p."): False,
    (TV, "tC=2"): False, (TV, "tC=20"): False, (TV, "tC=200"): True, (TV, "tC=2000"): True,
}
V1_COLS = ("Grad.", "Gradient Partial p.", "Acc. grad.", "Acc. grad. Partial p.")
#: Numbers below this are round-off (the distance of a converged run to the exact solution).
ROUND_OFF = 1e-12


def _err(e: float) -> str:
    """A distance to the solution, printed as "< 1e-12" at round-off level (its digits then
    depend on the machine)."""
    return f"< {ROUND_OFF:g}" if e < ROUND_OFF else sig3(e)


def _column(table: Mapping[tuple[str, str], float | None], column: str) -> dict[str, float]:
    return {r: v for (r, c), v in table.items() if c == column and v is not None}


def _fastest(table: Mapping[tuple[str, str], float | None], column: str) -> tuple[bool, str]:
    """Whether Fed-PLT has the strictly smallest time of ``column``; the runner-up text."""
    col = _column(table, column)
    plt = col["Fed-PLT"]
    others = {r: v for r, v in col.items() if r != "Fed-PLT"}
    best = min(others, key=others.get)
    return plt < others[best], f"Fed-PLT {sig3(plt)} vs best other {best} {sig3(others[best])}"


# --------------------------------------------------------------------------- v2 claims


def claim_v2_c01(Nes: Sequence[int], final_error: Sequence[float], bound: float = 1e-8) -> tuple[bool, str]:
    """C01: with GD local training the model reaches ``x*`` (final ``||xbar - x*|| < bound``)
    for every ``N_e`` tested: no ``N_e``-dependent floor."""
    ok = all(e < bound for e in final_error)
    detail = ", ".join(f"Ne={n}: {_err(e)}" for n, e in zip(Nes, final_error, strict=False))
    return ok, f"final ||xbar_K - x*|| (smooth problem): {detail}; required < {sig3(bound)}"


def claim_v2_c03(Nes: Sequence[int], cases: Mapping[str, Mapping[str, Sequence[float]]],
                 bound: float = 1e-8) -> tuple[bool, str]:
    """C03: for the smooth and composite problems, every ``N_e`` converges linearly (fitted
    rate < 1) to the exact solution (final distance < ``bound``) and no ``N_e > 1`` ends
    farther than ``N_e = 1`` (up to round-off, :data:`ROUND_OFF`)."""
    ok = True
    parts = []
    for case, res in cases.items():
        err, rate = list(res["final_error"]), list(res["rate"])
        exact = all(e < bound for e in err)
        linear = all(r < 1 for r in rate)
        no_drift = all(e <= err[0] + ROUND_OFF for e in err[1:])
        ok &= exact and linear and no_drift
        parts.append(f"{case}: final error {_err(max(err))}, rates {sig3(min(rate))}-"
                     f"{sig3(max(rate))} over Ne = {', '.join(map(str, Nes))}")
    return ok, "; ".join(parts) + f" (exact: < {sig3(bound)}; Ne = 1 first)"


def claim_v2_c07(times: Times) -> tuple[bool, str]:
    """C07: Fed-PLT is the fastest exactly in the columns :data:`C07_PATTERN` says."""
    wrong = []
    for (tid, column), expected in C07_PATTERN.items():
        fastest, text = _fastest(times[tid], column)
        if fastest != expected:
            wrong.append(f"{tid.split('-')[-1]} {column}: {'fastest' if fastest else 'not fastest'} ({text})")
    n = len(C07_PATTERN)
    if not wrong:
        return True, f"Fed-PLT is fastest in exactly the {sum(C07_PATTERN.values())} of {n} columns the claim lists"
    return False, f"{len(wrong)} of {n} columns differ from the paper's pattern: " + "; ".join(wrong)


def claim_v2_c16(times: Times) -> tuple[bool, str]:
    """C16: Table II, Fed-PLT fastest in the Convex and the Nonconvex column."""
    res = [(c, *_fastest(times[TII], c)) for c in ("Convex", "Nonconvex")]
    return all(r[1] for r in res), "; ".join(f"{c}: {text}" for c, _, text in res)


def claim_v2_c17(times: Times) -> tuple[bool, str]:
    """C17: Table III, Fed-PLT slower than FedLin at ``t_C = 0.1, 1``, faster at 10 and 100,
    and the ratio Fed-PLT/FedLin decreasing in ``t_C``."""
    cols = ("tC=0.1", "tC=1", "tC=10", "tC=100")
    t = times[TIII]
    ratio = [t[("Fed-PLT", c)] / t[("FedLin", c)] for c in cols]
    ok = ratio[0] > 1 and ratio[1] > 1 and ratio[2] < 1 and ratio[3] < 1
    ok &= all(a > b for a, b in zip(ratio, ratio[1:], strict=False))
    return ok, "time(Fed-PLT)/time(FedLin) at tC = 0.1, 1, 10, 100: " + ", ".join(sig3(r) for r in ratio)


def claim_v2_c18(formulas: Mapping[str, str], paper_formulas: Mapping[str, str],
                 realised: Mapping[str, tuple[float, float]], Ne: int) -> tuple[bool, str]:
    """C18: FedLin realises ``N_e + 1`` gradients and 2 round trips per agent and iteration
    and its cost formula is ``((Ne + 1)tG + 2tC)N``; every formula built from our classes
    equals the paper's."""
    g, c = realised["FedLin"]
    fedlin = abs(g - (Ne + 1)) < 1e-9 and abs(c - 2) < 1e-9
    same = {name: formulas[name] == paper_formulas[name] for name in paper_formulas}
    ok = fedlin and all(same.values())
    counts = ", ".join(f"{n} {sig3(gr)}/{sig3(cm)}" for n, (gr, cm) in realised.items())
    differ = [n for n, s in same.items() if not s]
    return ok, (f"realised gradients/round trips per active agent and iteration (Table II convex runs): {counts}; "
                f"cost formulas from the classes equal the paper's " + ("for all six" if not differ else
                                                                         f"except {', '.join(differ)}")
                + f"; FedLin's formula {formulas['FedLin']}")


def claim_v2_c19(times: Times) -> tuple[bool, str]:
    """C19 ("Fed-PLT indeed achieves convergence in nonconvex scenarios as well"): Fed-PLT's
    Nonconvex time is finite. Whether it is also the fastest is reported, not required: the
    sentence claims convergence only."""
    v = times[TII].get(("Fed-PLT", "Nonconvex"))
    finite = v is not None and v == v and v < float("inf")
    text = _fastest(times[TII], "Nonconvex")[1] if finite else "Fed-PLT did not converge"
    return finite, f"converges (finite time): {finite}; for comparison, not part of the claim: {text}"


def claim_v2_c20(times: Times) -> tuple[bool, str]:
    """C20: Table IV, Fed-PLT fastest in Grad., Gradient Partial p., Acc. grad.; 5GCS faster
    in Acc. grad. Partial p."""
    t = times[TIV]
    res = [(c, *_fastest(t, c)) for c in ("Grad.", "Gradient Partial p.", "Acc. grad.")]
    last = t[("5GCS", "Acc. grad. Partial p.")] < t[("Fed-PLT", "Acc. grad. Partial p.")]
    ok = all(r[1] for r in res) and last
    return ok, "; ".join(f"{c}: {text}" for c, _, text in res) + (
        f"; Acc. grad. Partial p.: 5GCS {sig3(t[('5GCS', 'Acc. grad. Partial p.')])} vs Fed-PLT "
        f"{sig3(t[('Fed-PLT', 'Acc. grad. Partial p.')])}")


def claim_v2_c21(times: Times) -> tuple[bool, str]:
    """C21: partial participation slows Fed-PLT (GD and AGD) and speeds up 5GCS (both)."""
    t = times[TIV]
    pairs = {(a, s): (t[(a, full)], t[(a, part)]) for a in ("Fed-PLT", "5GCS")
             for s, full, part in (("GD", "Grad.", "Gradient Partial p."),
                                   ("AGD", "Acc. grad.", "Acc. grad. Partial p."))}
    ok = all(p > f for (a, _), (f, p) in pairs.items() if a == "Fed-PLT") and \
        all(p < f for (a, _), (f, p) in pairs.items() if a == "5GCS")
    return ok, "; ".join(f"{a} {s}: full {sig3(f)}, partial {sig3(p)}" for (a, s), (f, p) in pairs.items())


def claim_v2_c23(times: Times) -> tuple[bool, str]:
    """C23: Fed-PLT is faster with GD than with AGD, with full and partial participation."""
    t = times[TIV]
    full = (t[("Fed-PLT", "Grad.")], t[("Fed-PLT", "Acc. grad.")])
    part = (t[("Fed-PLT", "Gradient Partial p.")], t[("Fed-PLT", "Acc. grad. Partial p.")])
    ok = full[0] < full[1] and part[0] < part[1]
    return ok, (f"Fed-PLT GD vs AGD: full {sig3(full[0])} vs {sig3(full[1])}, partial {sig3(part[0])} vs "
                f"{sig3(part[1])}")


def claim_v2_c24(times: Times) -> tuple[bool, str]:
    """C24: for each column index and each other algorithm, the sign of time(Fed-PLT) -
    time(A) is the same in Table III and Table V."""
    c3 = ("tC=0.1", "tC=1", "tC=10", "tC=100")
    c5 = ("tC=2", "tC=20", "tC=200", "tC=2000")
    others = sorted({r for (r, _) in times[TIII] if r != "Fed-PLT"})
    flips = []
    for a in others:
        for j, (x, y) in enumerate(zip(c3, c5, strict=False)):
            s3 = times[TIII][("Fed-PLT", x)] < times[TIII][(a, x)]
            s5 = times[TV][("Fed-PLT", y)] < times[TV][(a, y)]
            if s3 != s5:
                flips.append(f"{a} column {j + 1} (Fed-PLT {'faster' if s3 else 'slower'} in III, "
                             f"{'faster' if s5 else 'slower'} in V)")
    n = len(others) * len(c3)
    return not flips, (f"same sign in all {n} (algorithm, column) pairs" if not flips else
                       f"{len(flips)} of {n} pairs change sign: " + "; ".join(flips))


# --------------------------------------------------------------------------- v1 claims


def _v1_column(rates: Rates, column: str) -> dict[str, float]:
    return {r: v for (r, c), v in rates.items() if c == column and v is not None}


def claim_v1_c02(rates: Rates) -> tuple[bool, str]:
    """v1-C02: Fed-PLT's rate is below every other algorithm's, in every column where that
    algorithm has a value."""
    worse = []
    for col in V1_COLS:
        vals = _v1_column(rates, col)
        worse += [f"{a} {col} {sig3(v)} <= Fed-PLT {sig3(vals['Fed-PLT'])}" for a, v in vals.items()
                  if a != "Fed-PLT" and v <= vals["Fed-PLT"]]
    n = sum(len(_v1_column(rates, c)) - 1 for c in V1_COLS)
    return not worse, (f"Fed-PLT below all {n} other entries" if not worse else
                       f"{len(worse)} of {n} entries at or below Fed-PLT: " + "; ".join(worse))


def claim_v1_c04(rates: Rates) -> tuple[bool, str]:
    """v1-C04: Fed-PLT has the lowest rate of each of the four columns."""
    res = []
    for col in V1_COLS:
        vals = _v1_column(rates, col)
        best = min(vals, key=vals.get)
        res.append((col, best == "Fed-PLT" and list(vals.values()).count(vals[best]) == 1, best, vals[best]))
    return all(r[1] for r in res), "; ".join(f"{c}: lowest {b} {sig3(v)}" for c, _, b, v in res)


def claim_v1_c05(rates: Rates) -> tuple[bool, str]:
    """v1-C05: with AGD, FedPD, FedLin, TAMUNA and LED converge (rate < 1)."""
    names = ("Fed-PD", "FedLin", "TAMUNA", "LED")
    vals = {a: rates[(a, "Acc. grad.")] for a in names}
    ok = all(v is not None and v < 1 for v in vals.values())
    return ok, "Acc. grad. rates: " + ", ".join(f"{a} {sig3(v)}" for a, v in vals.items())


def claim_v1_c06(rates: Rates) -> tuple[bool, str]:
    """v1-C06: partial participation raises the rate of Fed-PLT, TAMUNA and 5GCS, with GD
    and with AGD."""
    pairs = [(a, s, rates[(a, f)], rates[(a, p)]) for a in ("Fed-PLT", "TAMUNA", "5GCS")
             for s, f, p in (("GD", "Grad.", "Gradient Partial p."), ("AGD", "Acc. grad.", "Acc. grad. Partial p."))]
    ok = all(p > f for _, _, f, p in pairs)
    return ok, "; ".join(f"{a} {s}: {sig3(f)} -> {sig3(p)}" for a, s, f, p in pairs)


def claim_v1_c07(rates: Rates, resolution: float = 1e-3) -> tuple[bool, str]:
    """v1-C07: Fed-PLT's GD rate is below its AGD rate (full and partial), and GD is lower
    in at least as many (algorithm, participation) pairs as AGD. Rates closer than
    ``resolution`` (the tuning chapter's ``RATE_RESOLUTION``: the smallest difference visible
    on a figure) count as equal, lower for neither."""
    pairs = []
    for (a, c), v in rates.items():
        if c in ("Grad.", "Gradient Partial p.") and v is not None:
            acc = rates[(a, "Acc. grad." if c == "Grad." else "Acc. grad. Partial p.")]
            if acc is not None:
                pairs.append((a, c, v, acc))
    gd_lower = sum(g < x - resolution for _, _, g, x in pairs)
    agd_lower = sum(x < g - resolution for _, _, g, x in pairs)
    plt = [(g, x) for a, _, g, x in pairs if a == "Fed-PLT"]
    ok = all(g < x - resolution for g, x in plt) and gd_lower >= agd_lower
    return ok, (f"GD lower in {gd_lower} of {len(pairs)} pairs, AGD lower in {agd_lower} (differences below "
                f"{sig3(resolution)} count as equal); Fed-PLT GD vs AGD: "
                + ", ".join(f"{sig3(g)} vs {sig3(x)}" for g, x in plt))


def claim_v1_c08(rate_gd: float, rate_agd: float, prs_gd: float, prs_agd: float,
                 tol: float = 0.05) -> tuple[bool, str]:
    """v1-C08: Fed-PLT's GD and AGD rates (full participation) are within ``tol`` of each
    other and of the exact-PRS rate at the same ``rho``."""
    ok = abs(rate_gd - rate_agd) < tol and abs(rate_gd - prs_gd) < tol and abs(rate_agd - prs_agd) < tol
    return ok, (f"Fed-PLT GD {sig3(rate_gd)} (exact PRS at its rho: {sig3(prs_gd)}), AGD {sig3(rate_agd)} "
                f"(exact PRS: {sig3(prs_agd)}); tolerance {sig3(tol)}")
