"""Checks of the quantizer Q_s of eq. (20) and its bit cost (spec §8 items 1 and 12).

* :func:`check_unbiased`: the Monte Carlo mean of Q(v) equals v (per-coordinate z-test);
* :func:`check_variance`: the Monte Carlo E‖Q(v) − v‖² equals (‖v‖²/s²)Σp_i(1 − p_i);
* :func:`check_variance_bound`: that exact variance against Assumption 4's q‖v‖² with
  q = min(d/s², √d/s) (and the tighter min(d/(4s²), ‖v‖₁/(s‖v‖₂))‖v‖²);
* :func:`check_q_range`: q against the range [0, 1] Assumption 4 states (fails for s < √d);
* :func:`check_bits`: a message packed as one base-(2s+1) integer plus a float32 norm takes
  ⌈d·log2(2s+1)⌉ + 32 bits, within one bit of β(s) = d·log2(2s+1) + 32, and decodes exactly;
* :func:`check_budget_identity`: the bits of all messages of K rounds of M devices = K·M·β.
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.dpfedpaq import quantizer as qz
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result

__all__ = [
    "check_bits",
    "check_budget_identity",
    "check_q_range",
    "check_unbiased",
    "check_variance",
    "check_variance_bound",
    "pack_message",
    "test_vectors",
    "unpack_message",
]

#: z-score threshold of the Monte Carlo checks: with d = 7850 coordinates the chance that an
#: unbiased quantizer exceeds |z| = 5.5 anywhere is about d·3.8e-8 ≈ 3e-4.
Z_MAX = 5.5


def _vector(v: np.ndarray) -> np.ndarray:
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)):
        raise ValueError(f"v must be a finite vector of shape (d,), d >= 1, got shape {arr.shape}")
    return arr


def test_vectors(d: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random (Gaussian), sparse (5% non-zero) and one-hot test vectors of dimension d."""
    d = check_int("d", d, 1)
    dense = rng.standard_normal(d)
    sparse = np.where(rng.random(d) < 0.05, rng.standard_normal(d), 0.0)
    sparse[0] = 1.0
    onehot = np.zeros(d)
    onehot[d // 2] = -2.5
    return {"random": dense, "sparse": sparse, "one-hot": onehot}


def _mc(v: np.ndarray, s: int, trials: int, rng: np.random.Generator, chunk: int = 500):
    total = np.zeros_like(v)
    sq = 0.0
    done = 0
    while done < trials:
        m = min(chunk, trials - done)
        qv = qz.quantize(np.broadcast_to(v, (m, v.size)), s, rng)
        total += qv.sum(axis=0)
        sq += float(((qv - v) ** 2).sum())
        done += m
    return total / trials, sq / trials


def check_unbiased(v: np.ndarray, s: int, trials: int, rng: np.random.Generator) -> CheckResult:
    """max_i |z_i| of the Monte Carlo mean of Q_s(v) against v (bound :data:`Z_MAX`).

    z_i = (mean_i − ρv_i)/sqrt(Var Q_i/trials), Var Q_i = (‖v‖²/s²)p_i(1 − p_i); ρ = (float32
    norm)/‖v‖ is the rounding of the transmitted norm (|ρ − 1| ≤ 2⁻²⁴, reported). Coordinates
    with p_i = 0 are deterministic and must equal ρv_i to 1e-12 relative.
    """
    v = _vector(v)
    trials = check_int("trials", trials, 2)
    norm = float(np.linalg.norm(v))
    mean, _ = _mc(v, s, trials, rng)
    if norm == 0:
        return make_result(float(np.abs(mean).max()), 0.0, rtol=0.0, deterministic=True)
    rho = float(np.float32(norm)) / norm
    scaled = np.abs(v) * s / norm
    p = scaled - np.floor(scaled)
    var = norm**2 / s**2 * p * (1 - p)
    random_coords = var > 0
    # the z-test needs a near-normal count: coordinates with trials·min(p, 1−p) < 5 are
    # skewed Bernoulli sums and are left to the exact-variance check
    tested = random_coords & (trials * np.minimum(p, 1 - p) >= 5)
    z = np.abs(mean - rho * v)[tested] / np.sqrt(var[tested] / trials)
    det_err = np.abs(mean - rho * v)[~random_coords]
    det_ok = bool(np.all(det_err <= 1e-12 * np.abs(v[~random_coords]) + 1e-300))
    res = make_result(float(z.max()) if z.size else 0.0, Z_MAX, rtol=0.0,
                      trials=trials, s=s, random_coordinates=int(random_coords.sum()), tested_coordinates=int(tested.sum()),
                      norm_rounding=abs(rho - 1), deterministic_exact=det_ok)
    if not det_ok:
        return CheckResult(res.observed, res.bound, False, res.ratio, res.details)
    return res


def check_variance(v: np.ndarray, s: int, trials: int, rng: np.random.Generator) -> CheckResult:
    """|MC − exact|/SE of E‖Q_s(v) − v‖² against :data:`Z_MAX` (exact formula of spec §4).

    SE is the standard error of the Monte Carlo mean, from the exact per-coordinate fourth
    moments (independent Bernoulli coordinates)."""
    v = _vector(v)
    trials = check_int("trials", trials, 2)
    exact = float(qz.exact_variance(v, s)[0])
    _, mc = _mc(v, s, trials, rng)
    norm = float(np.linalg.norm(v))
    if norm == 0 or exact == 0:
        return make_result(abs(mc - exact), 1e-12 * max(norm**2, 1e-300), rtol=0.0,
                           exact=exact, monte_carlo=mc)
    scaled = np.abs(v) * s / norm
    p = scaled - np.floor(scaled)
    c = (norm / s) ** 2
    # error e_i = (norm/s)(B_i − p_i): Var(e_i²) = c² Var((B − p)²) = c² p(1−p)(1−2p)²
    var_sq = c**2 * np.sum(p * (1 - p) * (1 - 2 * p) ** 2)
    se = math.sqrt(var_sq / trials)
    # float32 rounding of the norm adds (ρ−1)²‖v‖² at most: negligible against se
    z = abs(mc - exact) / se if se > 0 else abs(mc - exact) / (1e-12 * exact)
    return make_result(z, Z_MAX, rtol=0.0, exact=exact, monte_carlo=mc, trials=trials, s=s)


def check_variance_bound(v: np.ndarray, s: int, which: str = "paper") -> CheckResult:
    """Exact E‖Q_s(v) − v‖² against Assumption 4's q‖v‖² (``which="paper"``) or the tighter
    min(d/(4s²), ‖v‖₁/(s‖v‖₂))‖v‖² (``"tight"``); exact arithmetic, rtol 1e-12."""
    if which not in ("paper", "tight"):
        raise ValueError(f"which must be 'paper' or 'tight', got {which!r}")
    v = _vector(v)
    exact = float(qz.exact_variance(v, s)[0])
    bound = float(qz.variance_bound(v, s)[which][0])
    return make_result(exact, bound, rtol=1e-12, s=s, which=which,
                       ratio_to_norm2=exact / float(v @ v) if v @ v > 0 else 0.0)


def check_q_range(d: int, s: int) -> CheckResult:
    """q = min(d/s², √d/s) of Q_s against the range q ≤ 1 that Assumption 4 states."""
    q = qz.variance_parameter(d, s)
    return make_result(q, 1.0, rtol=0.0, d=d, s=s)


def pack_message(norm: float, h: np.ndarray, s: int) -> tuple[int, int]:
    """Pack (float32 norm, h ∈ {−s..s}^d) as one integer: h + s read as base-(2s+1) digits.

    Returns ``(payload, bits)`` where ``bits`` = 32 + ⌈log2((2s+1)^d)⌉ is the fixed length
    of every such message (the number of bits needed for the largest payload)."""
    s = check_int("s", s, 1)
    h = np.asarray(h).reshape(-1)
    if h.size < 1 or int(np.abs(h).max(initial=0)) > s:
        raise ValueError(f"h must be a non-empty vector with entries in [-s, s] = [{-s}, {s}]")
    base = 2 * s + 1
    payload = 0
    for digit in (h[::-1] + s).tolist():  # most significant digit: the last coordinate
        payload = payload * base + int(digit)
    norm_bits = int(np.array(norm, dtype=np.float32).view(np.uint32))
    width = (base ** h.size - 1).bit_length()
    return (payload << qz.FLOAT_BITS) | norm_bits, qz.FLOAT_BITS + width


def unpack_message(message: int, d: int, s: int) -> tuple[float, np.ndarray]:
    """Inverse of :func:`pack_message`."""
    d = check_int("d", d, 1)
    s = check_int("s", s, 1)
    norm = float(np.array(message & 0xFFFFFFFF, dtype=np.uint32).view(np.float32))
    payload = message >> qz.FLOAT_BITS
    base = 2 * s + 1
    digits = np.empty(d, dtype=np.int64)
    for i in range(d):
        payload, digits[i] = divmod(payload, base)
    return norm, digits - s


def check_bits(d: int, s: int, rng: np.random.Generator) -> CheckResult:
    """Counted bits of a packed message (:func:`pack_message`) against β(s) + 1 (the packed
    length is ⌈d·log2(2s+1)⌉ + 32, within [β, β + 1)); also that it decodes to the same Q(v)."""
    d = check_int("d", d, 1)
    v = rng.standard_normal(d)
    norms, h = qz.encode(v, s, rng)
    message, counted = pack_message(float(norms[0]), h[0], s)
    norm_back, h_back = unpack_message(message, d, s)
    roundtrip = bool(np.array_equal(h_back, h[0]) and norm_back == float(norms[0]))
    beta = qz.bits(d, s)
    res = make_result(counted, beta + 1, rtol=0.0, beta=beta, at_least_beta=counted >= beta,
                      roundtrip=roundtrip, d=d, s=s)
    ok = res.holds and roundtrip and counted >= beta
    return CheckResult(res.observed, res.bound, ok, res.ratio, res.details)


def check_budget_identity(d: int, s: int, K: int, M: int, rng: np.random.Generator) -> CheckResult:
    """Bits of all K·M messages of a run (each packed) against K·M·⌈β⌉ (eq. 11 with the
    fixed-length code; equality expected, exact integers)."""
    K = check_int("K", K, 1)
    M = check_int("M", M, 1)
    total = 0
    for _ in range(K):
        norms, h = qz.encode(rng.standard_normal((M, d)), s, rng)
        total += sum(pack_message(float(norms[i]), h[i], s)[1] for i in range(M))
    per = math.ceil(d * math.log2(2 * s + 1)) + qz.FLOAT_BITS
    res = make_result(total, K * M * per, rtol=0.0, K=K, M=M, beta=qz.bits(d, s),
                      equal=total == K * M * per)
    return CheckResult(res.observed, res.bound, total == K * M * per, res.ratio, res.details)
