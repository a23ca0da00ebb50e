"""Empirical privacy auditing: a statistically valid lower bound on ε from an attack's scores.

An auditor runs a mechanism many times on two neighbouring datasets, D (without a canary
record) and D' (with it), and scores each output with an attack (a higher score says "the
canary was in"). Any threshold test on the scores has a false-positive rate α (saying "in" on
D) and a false-negative rate β (saying "out" on D'). If the mechanism is (ε, δ)-DP, every
test satisfies (Kairouz, Oh and Viswanath's hypothesis-testing view of DP)

    α + e^ε β ≥ 1 − δ   and   β + e^ε α ≥ 1 − δ,

so ε ≥ log((1 − δ − α)/β) and ε ≥ log((1 − δ − β)/α) (:func:`epsilon_from_rates`). Replacing α
and β by upper confidence bounds keeps the bound valid at the stated confidence.

:func:`audit` makes this a procedure whose guarantee holds however the threshold is chosen:

1. the scores of each world are split at random in two halves (``heldout=True``): the
   threshold and the direction of the test are chosen on the first half (the one with the
   largest point estimate of the bound);
2. on the second half, α and β at that threshold get Clopper–Pearson upper bounds (scipy's
   beta quantiles), each at level (1 − confidence)/2 so that both hold together with
   probability ≥ ``confidence`` (a union bound);
3. the ε lower bound is :func:`epsilon_from_rates` of the two upper bounds (0 if negative).

For Gaussian-shaped scores the same test also bounds the μ of Gaussian differential privacy:
a μ-GDP mechanism has β ≥ Φ(Φ⁻¹(1 − α) − μ) for every test, so μ ≥ Φ⁻¹(1 − α) − Φ⁻¹(β) with
the confidence bounds of α and β, and μ-GDP implies (ε, δ)-DP exactly where ε is the analytic
Gaussian mechanism's ε at noise 1/μ (:func:`fedrepro.privacy.gaussian.analytic_gaussian_epsilon`;
the tests cross-check it with dp-accounting's privacy-loss distribution). The point estimate
μ̂ = (mean D' − mean D)/pooled std is reported beside it.

A lower bound below the claimed ε does not prove the claim (a better attack might find
more); a lower bound above it refutes the claim at the stated confidence. The tests validate
the auditor on mechanisms of known ε (the Gaussian mechanism, randomized response): over
repeated audits the bound exceeds the true ε no more often than 1 − confidence allows.

``heldout=False`` (threshold chosen on the same samples) and ``interval=False`` (the rates'
medians, about their point estimates, instead of confidence bounds) exist to show, in the
tests, what breaks without them. ``union=False`` (each rate's bound at level 1 − confidence,
not (1 − confidence)/2) is offered for comparison; the tests have not shown it to break the
bound's validity at the sample sizes they use.

Each route's bound holds at ``confidence`` by itself; :func:`joint_audit` reports the larger of
the two (where the μ route is valid) at ``confidence`` jointly, each route at half the error
probability. :func:`epsilon_ceiling` is the largest bound an audit of a given size can report,
:func:`audit_counts` the bound of a test fixed before the data, and :func:`exact_fields` the
fields that put a bound beside the mechanism's exact ε.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import special, stats

from fedrepro.core.validate import ParameterTypeError, as_real, check_array, check_bool, check_int, check_interval
from fedrepro.privacy.gaussian import analytic_gaussian_epsilon

__all__ = ["AuditResult", "ROUTES", "SCOPES", "audit", "audit_counts", "audit_counts_mu", "clopper_pearson_upper",
           "epsilon_ceiling", "epsilon_from_mu", "epsilon_from_rates", "exact_fields", "gdp_mu_from_rates",
           "joint_audit", "mu_ceiling", "route_confidence"]


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """The outcome of one audit (see the module docstring).

    ``epsilon_lower``: the (ε, δ) lower bound at ``delta``, valid with probability
    ≥ ``confidence``; ``mu_lower``: the GDP μ lower bound (its own test, chosen the same way;
    valid with probability ≥ ``confidence`` by itself) and
    ``epsilon_from_mu`` the ε at ``delta`` it implies; ``mu_estimate``: the Gaussian-shape
    point estimate of μ (not a bound); ``fpr_upper``/``fnr_upper``: the rates' confidence
    bounds at the chosen ``threshold`` (``direction`` +1: "in" when score > threshold, −1:
    when score < threshold); ``trials``: scores per world, ``evaluated``: per world in the
    evaluation half."""

    epsilon_lower: float
    delta: float
    confidence: float
    mu_lower: float
    epsilon_from_mu: float
    mu_estimate: float
    fpr_upper: float
    fnr_upper: float
    threshold: float
    direction: int
    trials: int
    evaluated: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided upper confidence bound of a binomial rate from ``k`` events in ``n`` trials:
    P(rate > bound) ≤ ``alpha`` (Clopper–Pearson, exact; the beta quantile of scipy)."""
    n = check_int("n", n, 1)
    k = check_int("k", k, 0, n)
    alpha = check_interval("alpha", alpha, 0.0, 1.0, closed_low=False, closed_high=False)
    return float(_cp_upper(np.array(k), n, alpha))


def _check_rates(fpr: Any, fnr: Any) -> tuple[np.ndarray, np.ndarray]:
    """``fpr`` and ``fnr`` as float arrays of rates in [0, 1] (scalars or arrays that broadcast)."""
    a = check_array("fpr", fpr, finite=False, nonempty=False)
    b = check_array("fnr", fnr, finite=False, nonempty=False)
    for name, r in (("fpr", a), ("fnr", b)):
        if np.any(np.isnan(r) | (r < 0) | (r > 1)):
            raise ValueError(f"{name} must hold rates in [0, 1], got {r!r}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"fpr and fnr must have shapes that broadcast, got {a.shape} and {b.shape}") from None
    return a, b


def epsilon_from_rates(fpr: float | np.ndarray, fnr: float | np.ndarray, delta: float) -> np.ndarray | float:
    """The ε every (ε, δ)-DP mechanism must reach for a test with these rates:
    max(log((1 − δ − α)/β), log((1 − δ − β)/α)), floored at 0 (+inf when a rate is 0 and the
    other below 1 − δ)."""
    delta = check_interval("delta", delta, 0.0, 1.0, closed_high=False)
    a, b = _check_rates(fpr, fnr)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.where(1 - delta - a > 0, np.log(np.maximum(1 - delta - a, 1e-300)) - np.log(b), -np.inf)
        two = np.where(1 - delta - b > 0, np.log(np.maximum(1 - delta - b, 1e-300)) - np.log(a), -np.inf)
    out = np.maximum(np.maximum(one, two), 0.0)
    return float(out) if out.ndim == 0 else out


def gdp_mu_from_rates(fpr: float | np.ndarray, fnr: float | np.ndarray) -> np.ndarray | float:
    """The μ every μ-GDP mechanism must reach for a test with these rates:
    Φ⁻¹(1 − α) − Φ⁻¹(β), floored at 0."""
    a, b = _check_rates(fpr, fnr)
    out = np.maximum(special.ndtri(1 - a) - special.ndtri(b), 0.0)
    out = np.where(np.isnan(out), 0.0, out)
    return float(out) if out.ndim == 0 else out


def epsilon_from_mu(mu: float, delta: float) -> float:
    """The ε at ``delta`` of a μ-GDP mechanism: the analytic Gaussian mechanism's ε with
    sensitivity μ and noise 1 (0 for μ = 0, +inf for μ = +inf)."""
    mu = as_real("mu", mu)
    if mu < 0:
        raise ValueError(f"mu must be in [0, inf], got {mu!r}")
    check_interval("delta", delta, 0.0, 1.0, closed_low=False, closed_high=False)
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    return float(analytic_gaussian_epsilon(delta, mu, 1.0))


def _scores(name: str, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu" or arr.ndim != 1:
        raise ParameterTypeError(f"{name} must be a one-dimensional array of real scores, got {arr.dtype} "
                                 f"{arr.shape}")
    arr = arr.astype(float)
    if arr.size < 4 or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold at least 4 finite scores, got {arr.size} "
                         f"({int(np.sum(~np.isfinite(arr)))} not finite)")
    return arr


def _rates(out_sorted: np.ndarray, in_sorted: np.ndarray, thresholds: np.ndarray, direction: int):
    """Counts of false positives (D scored "in") and false negatives (D' scored "out")."""
    if direction > 0:  # "in" when score > t
        fp = out_sorted.size - np.searchsorted(out_sorted, thresholds, side="right")
        fn = np.searchsorted(in_sorted, thresholds, side="right")
    else:  # "in" when score < t
        fp = np.searchsorted(out_sorted, thresholds, side="left")
        fn = in_sorted.size - np.searchsorted(in_sorted, thresholds, side="left")
    return fp, fn


#: At most this many thresholds are tried (quantiles of the selection scores): the bound moves
#: little between neighbouring order statistics, and the search stays fast for 10^6 scores.
MAX_THRESHOLDS = 2001


def _candidates(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    both = np.unique(np.concatenate([a, b]))
    if both.size > MAX_THRESHOLDS:
        both = np.unique(np.quantile(both, np.linspace(0.0, 1.0, MAX_THRESHOLDS)))
    mids = (both[1:] + both[:-1]) / 2 if both.size > 1 else both
    return np.concatenate([[both[0] - 1.0], mids, [both[-1] + 1.0]])


def _cp_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """:func:`clopper_pearson_upper` for an array of counts (unchecked): the 1 − alpha
    quantile of Beta(k + 1, n − k), and 1 where k = n."""
    k = np.asarray(k)
    return np.where(k >= n, 1.0, stats.beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1)))


def _bounds(out_sorted: np.ndarray, in_sorted: np.ndarray, threshold: float, direction: int,
            alpha: float) -> tuple[float, float]:
    fp, fn = _rates(out_sorted, in_sorted, np.array([threshold]), direction)
    return (clopper_pearson_upper(int(fp[0]), out_sorted.size, alpha),
            clopper_pearson_upper(int(fn[0]), in_sorted.size, alpha))


def _choose(sel_out: np.ndarray, sel_in: np.ndarray, bound, alpha: float) -> tuple[float, int]:
    """The threshold and direction whose bound, computed with the confidence bounds of the
    rates on the selection scores, is largest."""
    sa, sb = np.sort(sel_out), np.sort(sel_in)
    cand = _candidates(sa, sb)
    best = (-1.0, float(cand[0]), 1)
    for direction in (1, -1):
        fp, fn = _rates(sa, sb, cand, direction)
        value = np.asarray(bound(_cp_upper(fp, sa.size, alpha), _cp_upper(fn, sb.size, alpha)), dtype=float)
        i = int(np.argmax(value))
        if value[i] > best[0]:
            best = (float(value[i]), float(cand[i]), direction)
    return best[1], best[2]


def audit(scores_out: Any, scores_in: Any, *, delta: float, confidence: float = 0.95,
          seed: int | np.random.SeedSequence = 0, heldout: bool = True, union: bool = True,
          interval: bool = True) -> AuditResult:
    """Lower bounds on ε (at ``delta``) and on the GDP μ of a mechanism from attack scores
    on its outputs without (``scores_out``) and with (``scores_in``) the canary; valid with
    probability ≥ ``confidence`` (see the module docstring). ``seed`` draws the split."""
    a, b = _scores("scores_out", scores_out), _scores("scores_in", scores_in)
    delta = check_interval("delta", delta, 0.0, 1.0, closed_high=False)
    confidence = check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False)
    for name, flag in (("heldout", heldout), ("union", union), ("interval", interval)):
        check_bool(name, flag)
    if not isinstance(seed, np.random.SeedSequence):
        check_int("seed", seed, 0)
    rng = np.random.default_rng(seed)
    if heldout:
        pa, pb = rng.permutation(a.size), rng.permutation(b.size)
        sel_a, ev_a = a[pa[: a.size // 2]], a[pa[a.size // 2:]]
        sel_b, ev_b = b[pb[: b.size // 2]], b[pb[b.size // 2:]]
    else:
        sel_a, ev_a, sel_b, ev_b = a, a, b, b
    alpha = (1.0 - confidence) / 2 if union else 1.0 - confidence
    if not interval:
        alpha = 0.5  # the beta median: about the point estimate k/n, no confidence at all
    eps_test = _choose(sel_a, sel_b, lambda fa, fb: epsilon_from_rates(fa, fb, delta), alpha)
    mu_test = _choose(sel_a, sel_b, gdp_mu_from_rates, alpha)
    ea, eb = np.sort(ev_a), np.sort(ev_b)
    fpr_up, fnr_up = _bounds(ea, eb, *eps_test, alpha)
    eps = float(epsilon_from_rates(fpr_up, fnr_up, delta))
    mu = float(gdp_mu_from_rates(*_bounds(ea, eb, *mu_test, alpha)))
    threshold, direction = eps_test
    pooled = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    mu_hat = abs(float(np.mean(b) - np.mean(a))) / pooled if pooled > 0 else math.inf
    return AuditResult(epsilon_lower=eps, delta=delta, confidence=confidence, mu_lower=mu,
                       epsilon_from_mu=epsilon_from_mu(mu, delta) if delta > 0 else math.inf,
                       mu_estimate=mu_hat, fpr_upper=fpr_up, fnr_upper=fnr_up, threshold=threshold,
                       direction=direction, trials=int(min(a.size, b.size)), evaluated=int(min(ea.size, eb.size)))


# --- Joint confidence, the ceiling of an audit, audits at a fixed threshold, exact-ε records ---------
#
# :func:`audit` reports two bounds, each valid at ``confidence`` by itself: from the error rates
# (any mechanism) and from the GDP μ (a mechanism with a Gaussian trade-off curve). Reporting
# their larger value is a claim that both hold, which by a union bound holds with probability
# ≥ 1 − 2(1 − confidence) only (90 % for two bounds at 95 %). :func:`joint_audit` splits the
# error probability between the routes it uses (Bonferroni): each at 1 − (1 − confidence)/routes,
# so the reported maximum holds at ``confidence``.
#
# The **ceiling** of an audit is the largest bound its trial count can produce. A bound from the
# rates is largest when the evaluated half shows no error at all (0 false positives and 0 false
# negatives among ``evaluated`` outputs per world); each rate's Clopper–Pearson upper bound is
# then u = 1 − α^{1/n} (:func:`clopper_pearson_upper` of 0 events), and since
# :func:`epsilon_from_rates` decreases in both rates, no outcome gives more than
#
#     ε_ceil = log((1 − δ − u)/u)          (:func:`epsilon_ceiling`),
#
# and likewise μ_ceil = Φ⁻¹(1 − u) − Φ⁻¹(u) = 2Φ⁻¹(1 − u) for the μ route (:func:`mu_ceiling`).
# A claim above the ceiling could not have been refuted by the audit, whatever the mechanism.

ROUTES: tuple[str, ...] = ("rates", "mu")


def route_confidence(confidence: float, routes: int) -> float:
    """The confidence each of ``routes`` bounds is computed at so that all hold together with
    probability ≥ ``confidence`` (Bonferroni: 1 − (1 − confidence)/routes)."""
    confidence = check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False)
    if isinstance(routes, bool) or not isinstance(routes, int | np.integer) or routes < 1:
        raise ValueError(f"routes must be an integer >= 1, got {routes!r}")
    return 1.0 - (1.0 - confidence) / int(routes)


def _rate_alpha(confidence: float) -> float:
    """The level of each rate's one-sided bound in :func:`audit` (union bound over the two rates)."""
    return (1.0 - confidence) / 2


def epsilon_ceiling(evaluated: int, *, delta: float, confidence: float = 0.95) -> float:
    """The largest ε lower bound the rates route of :func:`audit` (at ``confidence``) can report
    with ``evaluated`` outputs per world: log((1 − δ − u)/u), u = 1 − α^{1/n}, α = (1 −
    confidence)/2 (zero errors on both sides; see the comment above)."""
    if isinstance(evaluated, bool) or int(evaluated) != evaluated or evaluated < 1:
        raise ValueError(f"evaluated must be an integer >= 1, got {evaluated!r}")
    delta = check_interval("delta", delta, 0.0, 1.0, closed_high=False)
    confidence = check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False)
    u = clopper_pearson_upper(0, int(evaluated), _rate_alpha(confidence))
    return float(epsilon_from_rates(u, u, delta))


def mu_ceiling(evaluated: int, *, confidence: float = 0.95) -> float:
    """The largest μ lower bound the μ route of :func:`audit` can report with ``evaluated``
    outputs per world: 2Φ⁻¹(1 − u), u as in :func:`epsilon_ceiling`."""
    if isinstance(evaluated, bool) or int(evaluated) != evaluated or evaluated < 1:
        raise ValueError(f"evaluated must be an integer >= 1, got {evaluated!r}")
    confidence = check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False)
    u = clopper_pearson_upper(0, int(evaluated), _rate_alpha(confidence))
    return float(gdp_mu_from_rates(u, u))


def _ceiling(evaluated: int, delta: float, confidence: float, gaussian: bool) -> float:
    ceil = epsilon_ceiling(evaluated, delta=delta, confidence=confidence)
    if gaussian:
        ceil = max(ceil, epsilon_from_mu(mu_ceiling(evaluated, confidence=confidence), delta))
    return ceil


def joint_audit(scores_out: Any, scores_in: Any, *, delta: float, gaussian: bool, confidence: float = 0.95,
                seed: int | np.random.SeedSequence = 0) -> dict[str, Any]:
    """:func:`audit` with one reported bound valid at ``confidence``: for a mechanism with a
    Gaussian trade-off curve (``gaussian``) both routes at :func:`route_confidence` (2 routes)
    and their larger value; otherwise the rates route alone at ``confidence`` (the μ route is
    not a bound there, and is not reported). Returns the record's fields:
    ``empirical_epsilon_lower`` (the bound), ``epsilon_lower_rates``, ``epsilon_lower_mu`` and
    ``mu_lower`` (None without ``gaussian``), ``confidence`` (joint), ``route_confidence``,
    ``routes``, ``mu_estimate``, ``fpr_upper``/``fnr_upper`` (rates route), ``evaluated`` and
    ``epsilon_ceiling`` (the largest bound these trials could report, :func:`epsilon_ceiling`,
    and with ``gaussian`` the μ route's, at the routes' confidence)."""
    if not isinstance(gaussian, bool):
        raise ParameterTypeError(f"gaussian must be True or False, got {gaussian!r}")
    routes = ROUTES if gaussian else ROUTES[:1]
    per_route = route_confidence(confidence, len(routes))
    res = audit(scores_out, scores_in, delta=delta, confidence=per_route, seed=seed)
    eps_mu = res.epsilon_from_mu if gaussian else None
    lower = max(res.epsilon_lower, eps_mu) if gaussian else res.epsilon_lower
    return {"empirical_epsilon_lower": float(lower), "epsilon_lower_rates": res.epsilon_lower,
            "epsilon_lower_mu": eps_mu, "mu_lower": res.mu_lower if gaussian else None,
            "mu_estimate": res.mu_estimate, "confidence": float(confidence), "route_confidence": per_route,
            "routes": list(routes), "fpr_upper": res.fpr_upper, "fnr_upper": res.fnr_upper,
            "evaluated": res.evaluated, "epsilon_ceiling": _ceiling(res.evaluated, res.delta, per_route, gaussian)}


def audit_counts(false_positives: int, false_negatives: int, trials: int, *, delta: float,
                 confidence: float = 0.95) -> float:
    """The rates route's ε lower bound for one test fixed before the data (no selection half):
    ``false_positives`` of ``trials`` outputs without the canary flagged, ``false_negatives`` of
    ``trials`` with it missed; each rate's Clopper–Pearson upper bound at (1 − confidence)/2,
    valid together with probability ≥ ``confidence``."""
    alpha = _rate_alpha(check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False))
    return float(epsilon_from_rates(clopper_pearson_upper(false_positives, trials, alpha),
                                    clopper_pearson_upper(false_negatives, trials, alpha), delta))


def audit_counts_mu(false_positives: int, false_negatives: int, trials: int, *, confidence: float = 0.95) -> float:
    """The μ route's lower bound (:func:`gdp_mu_from_rates`) for one test fixed before the data
    (as :func:`audit_counts`); a bound only for a mechanism with a Gaussian trade-off curve."""
    alpha = _rate_alpha(check_interval("confidence", confidence, 0.0, 1.0, closed_low=False, closed_high=False))
    return float(gdp_mu_from_rates(clopper_pearson_upper(false_positives, trials, alpha),
                                   clopper_pearson_upper(false_negatives, trials, alpha)))


#: The scopes an audit record's ε refers to: one release (one step, one report), one
#: communication round, or a whole training run.
SCOPES: tuple[str, ...] = ("step", "round", "training")


def exact_fields(lower: float, exact: float | None, scope: str, reason: str | None = None) -> dict[str, Any]:
    """The fields every audit record carries beside its bound: ``exact_epsilon`` (the
    mechanism's exact ε for the ``scope`` audited; None where not computed or infinite, with
    ``exact_reason`` saying why), ``tightness`` = lower/exact (None without a finite, positive
    exact ε) and ``scope`` (:data:`SCOPES`)."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    if exact is not None:
        exact = float(exact)
        if math.isnan(exact) or exact < 0:
            raise ValueError(f"exact must be None or an ε >= 0, got {exact!r}")
        if math.isinf(exact):
            exact, reason = None, reason or "infinite"
    if exact is None and not reason:
        raise ValueError("reason must say why exact is None")
    tight = float(lower) / exact if exact is not None and exact > 0 else None
    return {"exact_epsilon": exact, "exact_reason": reason if exact is None else None, "tightness": tight,
            "scope": scope}
