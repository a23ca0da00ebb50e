"""The checks of the tuning chapter's claims: pure functions of plain numbers (``check_*``),
each returning ``(holds, reason)``, with their tolerances. :mod:`.scorecard` decides the claims
with them on the stored sweeps, and :mod:`fedrepro.chapters.fedplt.readings.effects` decides
the Fig. 3 claims again under each reading of the v1 problem."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedrepro.chapters.fedplt.tuning import sweeps
from fedrepro.report.book import roundoff, sig3

#: Distance to ``x*`` below which a run has reached the optimum (claim C09's threshold).
DRIFT_TOL = 1e-8
RES = sweeps.RATE_RESOLUTION


def _rate_gap(x: Any) -> str:
    """A difference of two measured rates: below a tenth of the resolution it is round-off of
    the rate estimates (it changes between CPUs), printed as a bound."""
    return roundoff(x, RES / 10)


# --------------------------------------------------------------------------- checks (pure)


def _argmins(times: Mapping[int, float]) -> list[int]:
    t = np.array(list(times.values()), dtype=float)
    return [n for n, v in times.items() if np.isclose(v, t.min())]


def check_interior_optimum(times: Mapping[float, Mapping[int, float]]) -> tuple[bool, str]:
    """v2 C08/C29: in every ``t_C`` column (``{t_C: {N_e: time}}``) the time is not
    monotonically decreasing in ``N_e`` and every minimiser is an interior ``N_e`` (neither
    the smallest nor the largest); then the largest ``N_e`` is strictly slower than the best.
    Times are exact multiples of the cost, so ties are exact (``isclose``, relative 1e-9)."""
    if not times:
        raise ValueError("times must not be empty")
    ok, parts = True, []
    for tC, col in times.items():
        Nes = sorted(col)
        t = np.array([col[n] for n in Nes], dtype=float)
        arg = _argmins(dict(zip(Nes, t, strict=False)))
        decreasing = bool(np.all(np.diff(t) < 0))
        interior = all(Nes[0] < a < Nes[-1] for a in arg)
        ok &= interior and not decreasing and t[-1] > t.min() * (1 + 1e-9)
        parts.append(f"tC={sig3(tC)}: argmin Ne={arg}")
    return bool(ok), "; ".join(parts)


def check_ne_grows_with_tc(argmins: Mapping[float, Sequence[int]]) -> tuple[bool, str]:
    """v2 C30: the optimal ``N_e`` (smallest minimiser of each column) is non-decreasing in
    ``t_C`` and larger at the largest ``t_C`` than at the smallest."""
    if len(argmins) < 2:
        raise ValueError("argmins needs at least two t_C columns")
    tcs = sorted(argmins)
    best = [min(argmins[t]) for t in tcs]
    ok = all(b >= a for a, b in zip(best, best[1:], strict=False)) and best[-1] > best[0]
    return ok, "optimal Ne over tC=" + ", ".join(sig3(t) for t in tcs) + ": " + ", ".join(map(str, best))


def check_no_drift(errors: Mapping[str, float], table_ix_reached: bool, tol: float = DRIFT_TOL) -> tuple[bool, str]:
    """v2 C09: every run (GD for each ``N_e``, exact prox) ends within ``tol`` of ``x*``
    (Newton, to ``||grad||<=1e-14``: far below ``tol``), and every ``N_e`` of Table IX reaches
    the threshold."""
    worst = max(errors.values())
    ok = worst < tol and table_ix_reached
    return ok, (f"largest ||xbar - x*|| over {', '.join(errors)}: {roundoff(worst)} (threshold {sig3(tol)}); "
                f"Table IX runs all reach 1e-5: {table_ix_reached}")


def check_rho_optimum(t_viii: Mapping[float, float], dense_argmin: float, zeta_argmin: float,
                      window: tuple[float, float] = (0.3, 3.0)) -> tuple[bool, str]:
    """v2 C28: ``time(rho=1) < time(0.1)`` and ``< time(10)``; the argmin of the dense sweep
    and of ``zeta(rho)`` lie in ``window`` ([0.3, 3], the check's "around 1")."""
    t01, t1, t10 = t_viii[0.1], t_viii[1.0], t_viii[10.0]
    lo, hi = window
    ok = t1 < t01 and t1 < t10 and lo <= dense_argmin <= hi and lo <= zeta_argmin <= hi
    return ok, (f"time at rho=0.1, 1, 10: {sig3(t01)}, {sig3(t1)}, {sig3(t10)}; dense-sweep argmin rho="
                f"{sig3(dense_argmin)}, zeta argmin rho={sig3(zeta_argmin)} (window [{sig3(lo)}, {sig3(hi)}])")


def check_u_shape(x: Sequence[float], y: Sequence[float], resolution: float = RES) -> bool:
    """A curve decreases to an interior minimum and then increases, up to ``resolution``
    (fit noise): ``y`` non-increasing before the argmin and non-decreasing after it, and
    both ends above the minimum by more than ``resolution``."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size != len(x) or y.size < 3:
        raise ValueError("x and y must be 1-D of the same length >= 3")
    i = int(np.nanargmin(y))
    if i in (0, y.size - 1):
        return False
    return bool(np.all(np.diff(y[:i + 1]) <= resolution) and np.all(np.diff(y[i:]) >= -resolution)
                and y[0] > y[i] + resolution and y[-1] > y[i] + resolution)


def check_v1_rho_optimum(argmin_rho: float, rate_min: float, rate_low: float, rate_high: float,
                         window: tuple[float, float] = (0.1, 1.0), margin: float = 0.1) -> tuple[bool, str]:
    """v1 C11: the argmin of the Fig. 2 rate lies in ``window`` (within a factor ~3 of the
    paper's 0.3) and the rate at both ends of the ``rho`` range exceeds the minimum by more
    than ``margin`` ("clearly larger")."""
    lo, hi = window
    ok = lo <= argmin_rho <= hi and rate_low > rate_min + margin and rate_high > rate_min + margin
    return ok, (f"argmin rho={sig3(argmin_rho)} (window [{sig3(lo)}, {sig3(hi)}], paper 0.3), min rate "
                f"{sig3(rate_min)}; rate {sig3(rate_low)} at the low end and {sig3(rate_high)} at the high end")


def check_v1_resembles_prs(u_fedplt: bool, argmin_rho: float, u_zeta: bool, zeta_argmin: float,
                           u_prox: bool, prox_argmin: float, factor: float = 3.0) -> tuple[bool, str]:
    """v1 C12: the Fig. 2 curve is U-shaped, and so is ``zeta(rho)`` of Lemma 3 or the
    empirical exact-PRS rate, with argmins within ``factor`` of Fed-PLT's (either reference
    suffices, as the check's "or" says)."""
    def near(a: float) -> bool:
        return max(a / argmin_rho, argmin_rho / a) <= factor

    ok = u_fedplt and ((u_zeta and near(zeta_argmin)) or (u_prox and near(prox_argmin)))
    return ok, (f"Fed-PLT U-shaped {u_fedplt}, argmin rho={sig3(argmin_rho)}; zeta (Lemma 3) U-shaped {u_zeta}, "
                f"argmin {sig3(zeta_argmin)} (factor {sig3(max(zeta_argmin / argmin_rho, argmin_rho / zeta_argmin))});"
                f" exact PRS U-shaped {u_prox}, argmin {sig3(prox_argmin)} "
                f"(factor {sig3(max(prox_argmin / argmin_rho, argmin_rho / prox_argmin))}); limit {sig3(factor)}")


def _profile_text(p: Mapping[str, Any]) -> str:
    return (f"rho={sig3(p['rho'])}: rate {sig3(p['first'])} at Ne=1, min {sig3(p['min'])} first reached at "
            f"Ne={p['argmin']}, {sig3(p['rate_at_20'])} at Ne=20, {sig3(p['last'])} at Ne={p['last_Ne']}, "
            f"exact PRS {sig3(p['exact'])}")


def check_v1_dip(p: Mapping[str, Any], resolution: float = RES) -> tuple[bool, str]:
    """v1 C03 (and the first half of C13): the Fig. 3 rate is not monotonically decreasing
    in ``N_e``: after its minimum it rises by more than ``resolution`` (fit noise is ~1e-6),
    so the rate at the largest ``N_e`` is strictly larger than the minimum."""
    ok = (not p["monotone"]) and p["last"] > p["min"] + resolution
    return ok, _profile_text(p) + f" (differences below {sig3(resolution)} count as equal)"


def check_v1_plateau(p: Mapping[str, Any], resolution: float = RES) -> tuple[bool, str]:
    """v1 C13: the rate decreases from ``N_e = 1`` to an argmin in [5, 15], is larger at
    ``N_e = 20`` than at the argmin (by more than ``resolution``) and varies by less than
    0.01 over ``N_e`` in 21..50."""
    ok = (5 <= p["argmin"] <= 15 and p["first"] > p["min"] + resolution
          and p["rate_at_20"] > p["min"] + resolution and p["spread_over_20"] < 0.01)
    return ok, _profile_text(p) + f"; spread over Ne > 20: {_rate_gap(p['spread_over_20'])}"


def check_v1_close_to_prs(p: Mapping[str, Any]) -> tuple[bool, str]:
    """v1 C14: for every ``N_e`` in 21..50, ``|rate - exact PRS| < 0.01``."""
    ok = p["max_gap_over_20"] < 0.01
    return ok, f"largest |rate - exact PRS| over Ne > 20 at rho={sig3(p['rho'])}: {_rate_gap(p['max_gap_over_20'])}"


def check_v1_inexact_faster(p: Mapping[str, Any], resolution: float = RES) -> tuple[bool, str]:
    """v1 C15: the minimum over ``N_e`` of the rate is lower than exact PRS by more than
    ``resolution``."""
    ok = p["dip"] > resolution
    return ok, (f"rho={sig3(p['rho'])}: min rate {sig3(p['min'])} (Ne={p['argmin']}) against exact PRS "
                f"{sig3(p['exact'])}: dip {_rate_gap(p['dip'])} (needs > {sig3(resolution)})")


def check_v1_close_for_small_ne(p: Mapping[str, Any], small: int = 5) -> tuple[bool, str]:
    """v1 C17: the rate is within 0.05 of the exact-PRS rate from a small ``N_e``
    (``<= small``) on."""
    n = p["within_005_from_Ne"]
    ok = n is not None and n <= small
    return ok, f"rho={sig3(p['rho'])}: within 0.05 of exact PRS ({sig3(p['exact'])}) for every Ne >= {n}"


def check_v1_dominated_by_prs(argmin_rho: float, prox_argmin: float, p: Mapping[str, Any],
                              gd_agd_gap: float | None, factor: float = 3.0) -> tuple[bool, str]:
    """v1 C16: (a) the Fig. 2 argmin of Fed-PLT and of exact PRS within ``factor``; (b) in
    Fig. 3 the rate within 0.05 of exact PRS for every ``N_e >= 5``; (c) GD and AGD local
    solvers change Fed-PLT's v1 Table II rate by less than 0.05 (``None``: not available,
    the claim then does not hold on our evidence)."""
    a = max(argmin_rho / prox_argmin, prox_argmin / argmin_rho) <= factor
    n = p["within_005_from_Ne"]
    b = n is not None and n <= 5
    c = gd_agd_gap is not None and gd_agd_gap < 0.05
    gap = "not available" if gd_agd_gap is None else sig3(gd_agd_gap)
    return a and b and c, (f"(a) argmin rho: Fed-PLT {sig3(argmin_rho)}, exact PRS {sig3(prox_argmin)}: {a}; "
                           f"(b) rho={sig3(p['rho'])}: within 0.05 of exact PRS from Ne={n}: {b}; "
                           f"(c) v1 Table II Fed-PLT |GD - AGD| rate: {gap}: {c}")


def check_v2_c13(p: Mapping[str, Any], S_printed: Sequence[float], resolution: float = RES) -> tuple[bool, str]:
    """v2 C13: the smallest rate over ``N_e <= 20`` (``p`` from :func:`sweeps.ne_profile`
    over ``N_e <= 20``) is below exact PRS by more than ``resolution``, while ``||S||``
    (Proposition 1) decreases monotonically in ``N_e``."""
    s = np.asarray(S_printed, dtype=float)
    mono = bool(np.all(np.diff(s) <= 1e-12))
    ok = p["dip"] > resolution and mono
    return ok, (f"rho={sig3(p['rho'])}: min rate over Ne <= 20 {sig3(p['min'])} against exact PRS {sig3(p['exact'])} "
                f"(dip {_rate_gap(p['dip'])}, needs > {sig3(resolution)}); ||S|| decreasing in Ne: {mono} "
                f"({sig3(s[0])} -> {sig3(s[-1])})")
