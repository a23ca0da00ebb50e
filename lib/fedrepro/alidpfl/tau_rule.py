"""ALI-DPFL's choice of the number of local iterations τ* (Ling et al., §III-D, §IV-B).

Theorem 1's gap function (eq. 24; eq. 11 as printed is mis-parenthesised)

    h(x) = (ξ + N)/β·((ηβ + 1)^x − 1) − η(ξ + N)·x,   N = 2√d·σC/B,

and Theorem 2's bound (eq. 13)

    G(τ) = 1 / (T·(ηφ − ρh(τ)/(τλ²))) + √3/3,   φ = ω(1 − βη/2).

Spec decision 5 [our choice where the paper is silent]:

* T is not fixed: T(τ) = t_done + min(R_s,left·τ, R_c,left), the iterations a run would
  reach if it kept τ until a budget ends. With T fixed, h(1) = 0 and h(τ)/τ increasing make
  τ = 1 the minimiser always, which contradicts the paper's Condition II results.
* τ ranges over the integers 1..τ_m, τ_m = min(2τ*_prev, 100) (§IV-B), τ*_0 = 1.
* a τ whose denominator ηφ − ρh(τ)/(τλ²) is ≤ 0 (Theorem 2's condition 2 fails) is
  infeasible (G = +∞); when no τ is feasible, τ* = 1.
* ρ, β, ξ are estimated from the clients' reports as §IV-B says
  (:func:`estimate_constants`), weighted by |D_i|/|D|;
* λ and ω (hence φ) are not specified by the paper; :data:`LAMBDA_OMEGA_RULES` names our
  documented rules (:func:`lambda_omega`), default ``"loss"``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_nonnegative, check_positive

__all__ = ["noise_term", "gap_h", "gap_h_printed", "horizon", "bound_G", "Constants",
           "ClientReport", "estimate_constants", "LAMBDA_OMEGA_RULES", "lambda_omega",
           "choose_tau", "TAU_CAP", "SQRT3_OVER_3", "unaccounted_evaluations"]

TAU_CAP = 100
SQRT3_OVER_3 = math.sqrt(3.0) / 3.0


def noise_term(d: int, sigma: float, clip: float, batch: float) -> float:
    """N = 2√d·σC/B, Lemma 3's bound on E‖g̃_i − g_i‖ (eq. 19).

    Raises ValueError naming the parameters when N overflows (or underflows to 0)."""
    check_int("d", d, 1)
    out = 2.0 * math.sqrt(d) * check_positive("sigma", sigma) * check_positive(
        "clip", clip) / check_positive("batch", batch)
    if not 0.0 < out < math.inf:
        raise ValueError(f"d, sigma, clip and batch give a noise term 2√d·sigma·clip/batch = {out} "
                         "outside the floating-point range; rescale them")
    return out


def gap_h(x: float | np.ndarray, xi: float, beta: float, eta: float,
          noise: float) -> np.ndarray:
    """h(x) of eq. (24) (Theorem 1): (ξ+N)/β((ηβ+1)^x − 1) − η(ξ+N)x; h(0) = h(1) = 0.

    h is convex with h(0) = h(1) = 0; where floating point overflows it is +inf for x > 1 and
    −inf for 0 < x < 1 (never NaN); h ≡ 0 when ξ + N = 0."""
    xi = check_nonnegative("xi", xi)
    beta = check_positive("beta", beta)
    eta = check_positive("eta", eta)
    noise = check_nonnegative("noise", noise)
    a = xi + noise
    return _gap(_check_x(x), a / beta, eta * a, math.log1p(eta * beta))


def _check_x(x: object) -> np.ndarray:
    if isinstance(x, (str, bytes, bool, np.bool_)) or x is None:
        raise ParameterTypeError(f"x must be a real number or array of them, got {x!r}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"x must be a real number or array of them, got {x!r}") from exc
    if arr.dtype.kind not in "iuf":
        raise ParameterTypeError(f"x must be a real number or array of them, got {x!r}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"x must hold finite numbers >= 0, got {x!r}")
    return arr


def _gap(x: np.ndarray, first: float, linear: float, log_base: float) -> np.ndarray:
    """first·(e^{x·log_base} − 1) − linear·x, both coefficients ≥ 0; where floating point
    gives NaN (inf − inf, 0·inf) the convex h's value is 0 at x ∈ {0, 1}, +inf beyond 1 and
    −inf in between (see gap_h)."""
    if first == 0.0 and linear == 0.0:
        return np.zeros_like(x)
    with np.errstate(over="ignore", invalid="ignore"):
        h = first * np.expm1(x * log_base) - linear * x
    fix = np.where((x == 0) | (x == 1), 0.0, np.where(x > 1, np.inf, -np.inf))
    return np.where(np.isnan(h), fix, h)


def gap_h_printed(x: float | np.ndarray, xi: float, beta: float, eta: float, d: int,
                  sigma: float, clip: float, batch: float) -> np.ndarray:
    """h(x) of eq. (11) *as printed*: (ξ + 2√dσC/B)/β((ηβ+1)^x − 1) − η(ξ + 2√dσC)/B·x
    (the second term's parentheses close after C, so ξ is divided by B).

    Overflow is resolved as in :func:`gap_h` (+inf for x > 1, never NaN)."""
    x = _check_x(x)
    xi = check_nonnegative("xi", xi)
    beta = check_positive("beta", beta)
    eta = check_positive("eta", eta)
    noise_term(d, sigma, clip, batch)  # validates d, σ, C, B and that 2√dσC/B is finite
    s = 2.0 * math.sqrt(d) * sigma * clip
    with np.errstate(over="ignore"):
        first = (xi + s / batch) / beta
        linear = eta * (xi + s) / batch
    return _gap(x, first, linear, math.log1p(eta * beta))


def horizon(tau: int | np.ndarray, iterations_done: int, rounds_left: int,
            iterations_left: int) -> np.ndarray:
    """T(τ) = t_done + min(R_s,left·τ, R_c,left) (spec decision 5)."""
    check_int("iterations_done", iterations_done, 0)
    check_int("rounds_left", rounds_left, 0)
    check_int("iterations_left", iterations_left, 0)
    tau = np.asarray(tau)
    if tau.dtype.kind not in "iu" or np.any(tau < 1):
        raise ValueError(f"tau must hold integers >= 1, got {tau!r}")
    return iterations_done + np.minimum(rounds_left * tau, iterations_left)


def bound_G(tau: np.ndarray, T: np.ndarray, h: np.ndarray, *, eta: float, phi: float,
            rho: float, lam: float) -> np.ndarray:
    """G(τ) of eq. (13); +inf where the denominator T(ηφ − ρh(τ)/(τλ²)) is ≤ 0."""
    tau = np.asarray(tau, dtype=np.float64)
    denom = np.asarray(T, dtype=np.float64) * (eta * phi - rho * np.asarray(h) / (tau * lam ** 2))
    with np.errstate(divide="ignore"):
        return np.where(denom > 0, 1.0 / np.where(denom > 0, denom, 1.0) + SQRT3_OVER_3, np.inf)


@dataclasses.dataclass(frozen=True)
class Constants:
    """The constants of Theorem 2 at one round: ρ, β, ξ (estimated), λ, ω (by a rule)."""

    rho: float
    beta: float
    xi: float
    lam: float
    omega: float

    def __post_init__(self) -> None:
        for name in ("rho", "beta", "xi"):
            check_nonnegative(name, getattr(self, name))
        for name in ("lam", "omega"):
            check_positive(name, getattr(self, name))

    def phi(self, eta: float) -> float:
        """φ = ω(1 − βη/2) (Theorem 2)."""
        return self.omega * (1.0 - self.beta * eta / 2.0)


@dataclasses.dataclass(frozen=True)
class ClientReport:
    """What client i reports after local training (§IV-B, "Perform Estimate"):
    F_i(ŵ_i), F_i(ŵ), ∇F_i(ŵ_i), ∇F_i(ŵ) and ‖ŵ_i − ŵ‖ (ŵ: the global model broadcast at
    the start of the round, ŵ_i: the client's model after its τ local iterations)."""

    loss_local: float
    loss_global: float
    grad_local: np.ndarray
    grad_global: np.ndarray
    distance: float

    def __post_init__(self) -> None:
        check_nonnegative("loss_local", self.loss_local)
        check_nonnegative("loss_global", self.loss_global)
        check_nonnegative("distance", self.distance)
        for name in ("grad_local", "grad_global"):
            g = np.asarray(getattr(self, name))
            if g.ndim != 1 or g.dtype.kind not in "fiu" or not np.all(np.isfinite(g)):
                raise ValueError(f"{name} must be a finite 1-D gradient vector")
        if np.shape(self.grad_local) != np.shape(self.grad_global):
            raise ValueError("grad_local and grad_global must have the same length")


def estimate_constants(reports: Sequence[ClientReport],
                       weights: np.ndarray) -> tuple[float, float, float]:
    """(ρ, β, ξ) of §IV-B, weighted by |D_i|/|D|:

    ρ_i = |F_i(ŵ_i) − F_i(ŵ)| / ‖ŵ_i − ŵ‖, β_i = ‖∇F_i(ŵ_i) − ∇F_i(ŵ)‖ / ‖ŵ_i − ŵ‖,
    ξ_i = ‖∇F_i(ŵ) − ∇F(ŵ)‖ with ∇F(ŵ) = Σ_i (|D_i|/|D|) ∇F_i(ŵ).

    A client whose model did not move (‖ŵ_i − ŵ‖ = 0) contributes ρ_i = β_i = 0."""
    if not reports:
        raise ValueError("reports must hold at least one client report")
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(reports),) or np.any(w < 0) or not math.isclose(w.sum(), 1.0, rel_tol=1e-9):
        raise ValueError("weights must be non-negative, one per report, and sum to 1")
    g_global = np.stack([np.asarray(r.grad_global, dtype=np.float64) for r in reports])
    full = w @ g_global
    rho = beta = xi = 0.0
    for wi, r, gg in zip(w, reports, g_global, strict=True):
        if r.distance > 0:
            rho += wi * abs(r.loss_local - r.loss_global) / r.distance
            beta += wi * float(np.linalg.norm(np.asarray(r.grad_local, np.float64) - gg)) / r.distance
        xi += wi * float(np.linalg.norm(gg - full))
    return rho, beta, xi


#: The documented rules for λ and ω (the paper gives none). F: the clients' weighted loss
#: F(ŵ) at the global model the round started from (what their reports carry, §IV-B);
#: D: ‖ŵ − ŵ_0‖ at the new global model, the distance travelled since the start.
LAMBDA_OMEGA_RULES: dict[str, str] = {
    "loss": "λ = F(ŵ) (the gap to the cross-entropy's lower bound 0, taking F* = 0); "
            "ω = 1/D² (the distance travelled as a proxy for ‖ŵ_0 − w*‖)",
    "half-loss": "λ = F(ŵ)/2 (F* taken as half the current loss); ω = 1/D²",
    "fixed": "λ = 0.5, ω = 1 (constants that ignore the data)",
}


def lambda_omega(rule: str, loss: float, distance_from_start: float) -> tuple[float, float]:
    """(λ, ω) by one of :data:`LAMBDA_OMEGA_RULES`; D is floored at 1e-12."""
    if not isinstance(rule, str):
        raise ParameterTypeError(f"rule must be one of {sorted(LAMBDA_OMEGA_RULES)}, got {rule!r}")
    if rule not in LAMBDA_OMEGA_RULES:
        raise ValueError(f"rule must be one of {sorted(LAMBDA_OMEGA_RULES)}, got {rule!r}")
    loss = check_nonnegative("loss", loss)
    dist = max(check_nonnegative("distance_from_start", distance_from_start), 1e-12)
    if rule == "fixed":
        return 0.5, 1.0
    lam = loss if rule == "loss" else loss / 2.0
    omega = 1.0 / (dist * dist)
    if omega == 0.0:
        raise ValueError(f"distance_from_start = {distance_from_start!r} is too large: ω = 1/D² "
                         "underflows to 0")
    return max(lam, 1e-12), omega


def choose_tau(constants: Constants, *, tau_prev: int, eta: float, noise: float,
               iterations_done: int, rounds_left: int, iterations_left: int,
               tau_cap: int = TAU_CAP) -> tuple[int, np.ndarray]:
    """τ* = argmin of G(τ) over τ = 1..min(2τ*_prev, ``tau_cap``) (spec decision 5).

    Returns (τ*, G over the searched range; +inf marks an infeasible τ). τ* = 1 when no τ
    is feasible; ties go to the smallest τ."""
    if not isinstance(constants, Constants):
        raise ParameterTypeError(f"constants must be a Constants, got {type(constants).__name__}")
    tau_prev = check_int("tau_prev", tau_prev, 1)
    tau_cap = check_int("tau_cap", tau_cap, 1)
    check_positive("eta", eta)
    check_nonnegative("noise", noise)
    check_int("rounds_left", rounds_left, 0)
    check_int("iterations_left", iterations_left, 0)
    check_int("iterations_done", iterations_done, 0)
    tau_m = min(2 * tau_prev, tau_cap)
    taus = np.arange(1, tau_m + 1)
    T = horizon(taus, iterations_done, rounds_left, iterations_left)
    h = gap_h(taus, constants.xi, max(constants.beta, 1e-300), eta, noise)
    g = bound_G(taus, T, h, eta=eta, phi=constants.phi(eta), rho=constants.rho, lam=constants.lam)
    if not np.any(np.isfinite(g)):
        return 1, g
    return int(taus[int(np.argmin(g))]), g


def unaccounted_evaluations(estimate_samples: int, tau: int, expected_batch: float) -> dict[str, float]:
    """Per client and round: per-sample gradient evaluations on private data that the
    estimates of §IV-B use (∇F_i at ŵ_i and at ŵ on ``estimate_samples`` records each; the
    losses come with them) and are not charged by the accountant, beside the τ·B accounted
    ones of DP-SGD (reference §7 item 6)."""
    m = check_int("estimate_samples", estimate_samples, 1)
    tau = check_int("tau", tau, 1)
    accounted = tau * check_positive("expected_batch", expected_batch)
    unaccounted = 2.0 * m
    return {"unaccounted": unaccounted, "accounted": accounted,
            "ratio": unaccounted / accounted}
