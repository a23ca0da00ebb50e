"""Theorem 1 of DP-FedPAQ (eq. 18), its closed form (eq. 36) and the budget of eq. (11).

Mohammadi et al., §III and Appendix A. Under Assumptions 1–6 (L-smooth, μ-strongly convex,
mini-batch variance σ²/b, q-lossy unbiased quantizer, heterogeneity λ², E‖g‖² ≤ G²) and the
step size η_k = 4/(μ(kE + γ0)), the per-round recursion (26)

    δ_{k+1} ≤ (1 − μη_k)^E δ_k + η_k² [D1 E² + D2 E + D3 E(E−1) + D4 E(E−1)² + D5 E⁴]

(constants D1..D5 of eq. 27, :func:`recursion_constants`) gives the closed form (36) with
k0 = 0:

    E‖x_K − x*‖² ≤ (γ0/(KE + γ0))² ‖x0 − x*‖²
                  + (16/μ²)[D1 E + D2 + D3 (E−1) + D4 (E−1)² + D5 E³]/(KE + γ0),

valid for γ0 = max{4E, 4L²/μ², 4√2 L(E−1)/μ} (the proof's choice). Theorem 1 as printed
(eq. 18) replaces γ0 by 4E in the first term, KE + γ0 by T, (N−M)/(MN) by 1/M and
(N−M)/(N−1) by 1, and omits the 1/μ² of the privacy term.

Two variants (:func:`theorem1_bound`):

``as_printed``
    eq. (18) literally (γ0 = 4E, T, no μ² in the privacy term).
``corrected``
    eq. (36) with the exact participation factors, the 16/μ² factor on the privacy term,
    the noise term that Lemma 2 drops, (1+q)·d·ς²/N per round (errata item 4), and γ0 from
    ``lr_offset``: ``"paper"`` (the proof's γ0) or ``"relaxed"`` (γ0 = max{4E, 16κ,
    4√2κ(E−1)}: the condition η ≤ 1/(4L) of the FedAvg lemma Lemma 3 borrows).

The privacy constants assume the theory's sensitivity Δ = 4η_k E G (what eq. 51 implies)
and the noise variance of eq. (16), ς² = 8γ²Δ² ln(1.25γ/δ)/ε² with γ = Eb/n.

Eq. (11): an uplink budget of B bits over T local iterations allows K = ⌊T/E⌋ rounds of
M messages of β bits each, K·M·β ≤ B (:func:`budget_schedules`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from fedrepro.core.validate import ParameterTypeError, check_int, check_interval, check_nonnegative, check_positive

__all__ = [
    "LR_OFFSETS",
    "VARIANTS",
    "Theorem1Bound",
    "Theorem1Constants",
    "alpha_constant",
    "budget_schedules",
    "closed_form_bound",
    "learning_rate",
    "lr_offset",
    "noise_variance",
    "recursion_constants",
    "smallest_feasible_E",
    "theorem1_bound",
]

VARIANTS: tuple[str, ...] = ("as_printed", "corrected")
LR_OFFSETS: tuple[str, ...] = ("paper", "relaxed", "printed")


@dataclass(frozen=True)
class Theorem1Constants:
    """The constants Theorem 1 depends on.

    ``L, mu, sigma2, G2, lam2, q``: Assumptions 1–6 (σ² is the per-sample variance, so a
    mini-batch of b has variance σ²/b; G² bounds E‖g‖², G plays the clip C in the privacy
    term). ``d``: dimension; ``b``: mini-batch size; ``n``: records per device |D_i|;
    ``N``, ``M``: devices and devices per round; ``E``: local steps; ``epsilon``,
    ``delta``: per-round privacy (``epsilon=None``: no noise, D5 = 0).
    """

    L: float
    mu: float
    sigma2: float
    G2: float
    lam2: float
    q: float
    d: int
    b: int
    n: int
    N: int
    M: int
    E: int
    epsilon: float | None = None
    delta: float = 1e-4

    def __post_init__(self) -> None:
        check_positive("L", self.L)
        check_positive("mu", self.mu)
        if self.mu > self.L:
            raise ValueError(f"mu must be in (0, L] = (0, {self.L}], got {self.mu!r}")
        check_nonnegative("sigma2", self.sigma2)
        check_nonnegative("G2", self.G2)
        check_nonnegative("lam2", self.lam2)
        check_nonnegative("q", self.q)
        check_int("d", self.d, 1)
        check_int("n", self.n, 1)
        check_int("E", self.E, 1)
        check_int(f"b (mini-batch size, at most n = {self.n})", self.b, 1, self.n)
        check_int("N", self.N, 1)
        check_int(f"M (devices per round, at most N = {self.N})", self.M, 1, self.N)
        check_interval("delta", self.delta, 0.0, 1.0, closed_low=False, closed_high=False)
        if self.epsilon is not None:
            check_positive("epsilon", self.epsilon)
            # Alg. 2 draws one subset of E·b records per round
            check_int(f"b (mini-batch size of Alg. 2, with E·b <= n = {self.n})", self.b, 1,
                      max(1, self.n // self.E))
            if not 0 < self.delta < self.E * self.b / self.n:
                raise ValueError(f"delta must be in (0, gamma) = (0, {self.E * self.b / self.n}) "
                                 f"(delta/gamma < 1), got {self.delta!r}")

    @property
    def gamma(self) -> float:
        """Subsampling ratio γ = E·b/n."""
        return self.E * self.b / self.n

    @property
    def kappa(self) -> float:
        return self.L / self.mu

    def with_(self, **changes: Any) -> Theorem1Constants:
        """A copy with some constants changed (validated again)."""
        return replace(self, **changes)


def _check_constants(c: object) -> None:
    if not isinstance(c, Theorem1Constants):
        raise ParameterTypeError(f"c must be a Theorem1Constants, got {type(c).__name__}")


def lr_offset(c: Theorem1Constants, rule: str = "paper") -> float:
    """γ0 of η_k = 4/(μ(kE + γ0)).

    ``"paper"``: max{4E, 4L²/μ², 4√2 L(E−1)/μ} (Appendix A); ``"relaxed"``:
    max{4E, 16κ, 4√2 κ(E−1)} (η ≤ 1/(4L)); ``"printed"``: 4E (Theorem 1's statement).
    """
    _check_constants(c)
    if not isinstance(rule, str):
        raise ParameterTypeError(f"rule must be one of {LR_OFFSETS}, got {rule!r}")
    if rule not in LR_OFFSETS:
        raise ValueError(f"rule must be one of {LR_OFFSETS}, got {rule!r}")
    E, kappa = c.E, c.kappa
    if rule == "printed":
        return 4.0 * E
    if rule == "paper":
        return max(4.0 * E, 4.0 * kappa**2, 4.0 * math.sqrt(2.0) * kappa * (E - 1))
    return max(4.0 * E, 16.0 * kappa, 4.0 * math.sqrt(2.0) * kappa * (E - 1))


def learning_rate(k: int, c: Theorem1Constants, gamma0: float) -> float:
    """η_k = 4/(μ(kE + γ0)) (Theorem 1 with offset γ0)."""
    _check_constants(c)
    k = check_int("k (round)", k, 0)
    gamma0 = check_positive("gamma0", gamma0)
    return 4.0 / (c.mu * (k * c.E + gamma0))


def _log_term(c: Theorem1Constants) -> float:
    return math.log(1.25 * c.gamma / c.delta)


def noise_variance(c: Theorem1Constants, eta: float) -> float:
    """Per-coordinate noise variance ς² of eq. (16) at step size η with the theory's
    sensitivity Δ = 4ηEG: ς² = 8γ²Δ² ln(1.25γ/δ)/ε² (0 without privacy)."""
    _check_constants(c)
    eta = check_positive("eta", eta)
    if c.epsilon is None:
        return 0.0
    delta_f = 4.0 * eta * c.E * math.sqrt(c.G2)
    return 8.0 * c.gamma**2 * delta_f**2 * _log_term(c) / c.epsilon**2


def recursion_constants(c: Theorem1Constants, variant: str = "as_printed") -> dict[str, float]:
    """D1..D5 of eq. (27).

    ``as_printed``: eq. (27) as printed; ``corrected``: D5 plus the noise term that Lemma 2
    drops, (1+q)·d·ς²/(N η²E⁴) = 128 d G² b² (1+q) ln(1.25γ/δ)/(N n² ε²).
    """
    _check_constants(c)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    N, M, E = c.N, c.M, c.E
    part = (N - M) / (M * N)
    D1 = 2 * c.q * c.G2 * part + c.q * c.G2 / N
    D2 = 4 * math.e * c.sigma2 * part / c.b + 3 * c.L * c.lam2 / c.mu + c.sigma2 / (c.b * N)
    D3 = 8 * math.e * part * c.lam2
    D4 = 8 * c.G2
    if c.epsilon is None:
        D5 = 0.0
    else:
        base = c.d * c.G2 * c.b**2 * (1 + c.q) * _log_term(c) / (c.n**2 * c.epsilon**2)
        D5 = 256 * base * (N - M) / (M * (N - 1)) if N > 1 else 0.0
        if variant == "corrected":
            D5 += 128 * base / N
    del E
    return {"D1": D1, "D2": D2, "D3": D3, "D4": D4, "D5": D5}


def alpha_constant(c: Theorem1Constants, variant: str = "as_printed") -> float:
    """α of eq. (33): (16/μ²)(D1 + D2/E + (E−1)D3/E + (E−1)²D4/E + E²D5)."""
    _check_constants(c)
    D = recursion_constants(c, variant)
    E = c.E
    return 16 / c.mu**2 * (D["D1"] + D["D2"] / E + (E - 1) * D["D3"] / E
                           + (E - 1) ** 2 * D["D4"] / E + E**2 * D["D5"])


@dataclass(frozen=True)
class Theorem1Bound:
    """The bound on E‖x_K − x*‖² and its terms (``init``, ``quantization``, ``variance``
    (σ², Lλ²/μ), ``heterogeneity`` (λ², E−1), ``drift`` (G², (E−1)²), ``privacy``)."""

    total: float
    terms: dict[str, float]
    gamma0: float
    variant: str
    lr_offset: str
    K: int


def closed_form_bound(c: Theorem1Constants, K: int, x0_dist2: float, gamma0: float,
                      variant: str = "corrected") -> Theorem1Bound:
    """Eq. (36) at round K with k0 = 0 and offset γ0 (D-constants of ``variant``)."""
    _check_constants(c)
    K = check_int("K (rounds)", K, 0)
    x0_dist2 = check_nonnegative("x0_dist2", x0_dist2)
    gamma0 = check_positive("gamma0", gamma0)
    D = recursion_constants(c, variant)
    E = c.E
    den = K * E + gamma0
    s = 16 / c.mu**2 / den
    terms = {
        "init": (gamma0 / den) ** 2 * x0_dist2,
        "quantization": s * D["D1"] * E,
        "variance": s * D["D2"],
        "heterogeneity": s * D["D3"] * (E - 1),
        "drift": s * D["D4"] * (E - 1) ** 2,
        "privacy": s * D["D5"] * E**3,
    }
    return Theorem1Bound(sum(terms.values()), terms, gamma0, variant, "", K)


def theorem1_bound(c: Theorem1Constants, T: int, x0_dist2: float, *, variant: str = "as_printed",
                   lr_offset_rule: str = "paper") -> Theorem1Bound:
    """Theorem 1's bound on E‖x_K − x*‖² after T local iterations (K = ⌊T/E⌋ rounds).

    ``variant="as_printed"``: eq. (18) literally (``lr_offset_rule`` is ignored: the printed
    statement uses γ0 = 4E); ``"corrected"``: eq. (36) with γ0 by ``lr_offset_rule`` and
    the corrections listed in the module docstring.
    """
    _check_constants(c)
    T = check_int("T (local iterations)", T, 1)
    x0_dist2 = check_nonnegative("x0_dist2", x0_dist2)
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    K = T // c.E
    if variant == "corrected":
        g0 = lr_offset(c, lr_offset_rule)
        out = closed_form_bound(c, K, x0_dist2, g0, "corrected")
        return Theorem1Bound(out.total, out.terms, g0, variant, lr_offset_rule, K)
    E, M, N, mu = c.E, c.M, c.N, c.mu
    e = math.e
    terms = {
        "init": 16 * E**2 / T**2 * x0_dist2,
        "quantization": 16 / mu**2 * (2 * c.q * c.G2 / M + c.q * c.G2 / N) * E / T,
        "variance": 16 / mu**2 * (4 * e * c.sigma2 / (c.b * M) + 3 * c.L * c.lam2 / mu
                                  + c.sigma2 / (c.b * N)) / T,
        "heterogeneity": 128 * e * c.lam2 / (mu**2 * M) * (E - 1) / T,
        "drift": 128 * c.G2 / mu**2 * (E - 1) ** 2 / T,
        "privacy": 0.0 if c.epsilon is None else
        4096 * c.d * c.G2 * c.b**2 * (1 + c.q) * _log_term(c) / (M * c.n**2 * c.epsilon**2) * E**3 / T,
    }
    return Theorem1Bound(sum(terms.values()), terms, 4.0 * E, variant, "printed", K)


# --------------------------------------------------------------------------- eq. (11)


def smallest_feasible_E(budget_bits: float, T: int, M: int, beta: float) -> int | None:
    """Smallest E in 1..T with ⌊T/E⌋·M·β ≤ B (eq. 11); ``None`` if even E = T exceeds B."""
    budget_bits = check_positive("budget_bits", budget_bits)
    T = check_int("T", T, 1)
    M = check_int("M", M, 1)
    beta = check_positive("beta", beta)
    for E in range(1, T + 1):
        if (T // E) * M * beta <= budget_bits:
            return E
    return None


def budget_schedules(budget_bits: float, T: int, beta: float, N: int,
                     E_values: tuple[int, ...] | None = None) -> list[dict[str, float]]:
    """Feasible schedules of eq. (11): for each E, the largest M ≤ N with ⌊T/E⌋·M·β ≤ B.

    Returns ``[{"E", "K", "M", "bits"}]`` for the E (default 1..T) that allow M ≥ 1;
    ``bits`` = K·M·β is the uplink traffic actually used.
    """
    budget_bits = check_positive("budget_bits", budget_bits)
    T = check_int("T", T, 1)
    beta = check_positive("beta", beta)
    N = check_int("N", N, 1)
    values = range(1, T + 1) if E_values is None else E_values
    out = []
    for E in values:
        E = check_int(f"E (local steps, in [1, T={T}])", E, 1, T)
        K = T // E
        M = min(N, int(budget_bits // (K * beta)))
        if M >= 1:
            out.append({"E": E, "K": K, "M": M, "bits": K * M * beta})
    return out
