"""Device sampling (spec §8 item 2): S_k is M of N devices drawn uniformly without
replacement, so P(i ∈ S) = M/N and P(i, j ∈ S) = M(M−1)/(N(N−1)) (used in Lemma 1's proof),
and for any vectors Δ_1..Δ_N with mean Δ̄ (eq. 39)

    E‖(1/M)Σ_{i∈S}Δ_i − Δ̄‖² = (N−M)/(M(N−1)) · (1/N)Σ_i‖Δ_i − Δ̄‖².
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result

__all__ = ["check_identity39", "check_inclusion", "sample_devices"]

Z_MAX = 5.0


def sample_devices(N: int, M: int, rng: np.random.Generator, rounds: int = 1) -> np.ndarray:
    """``rounds`` independent draws of M of N devices without replacement, shape (rounds, M)."""
    N = check_int("N", N, 1)
    M = check_int(f"M (at most N={N})", M, 1, N)
    rounds = check_int("rounds", rounds, 1)
    keys = rng.random((rounds, N))
    return np.argpartition(keys, M - 1, axis=1)[:, :M] if M < N else np.tile(np.arange(N), (rounds, 1))


def check_inclusion(N: int, M: int, rounds: int, rng: np.random.Generator) -> CheckResult:
    """max |z| of the empirical single and pair inclusion frequencies against M/N and
    M(M−1)/(N(N−1)) over ``rounds`` draws (bound :data:`Z_MAX`)."""
    S = sample_devices(N, M, rng, rounds)
    member = np.zeros((rounds, N))
    np.put_along_axis(member, S, 1.0, axis=1)
    p1, p2 = M / N, M * (M - 1) / (N * (N - 1)) if N > 1 else 0.0
    f1 = member.mean(axis=0)
    pair = (member.T @ member) / rounds
    iu = np.triu_indices(N, 1)
    f2 = pair[iu]
    z1 = np.abs(f1 - p1) / math.sqrt(max(p1 * (1 - p1), 1e-300) / rounds)
    z2 = np.abs(f2 - p2) / math.sqrt(max(p2 * (1 - p2), 1e-300) / rounds) if f2.size else np.zeros(1)
    return make_result(float(max(z1.max(), z2.max())), Z_MAX, rtol=0.0, rounds=rounds,
                       p_single=p1, p_pair=p2, max_single_error=float(np.abs(f1 - p1).max()))


def check_identity39(deltas: np.ndarray, M: int) -> CheckResult:
    """Identity (39) by enumeration of all C(N, M) subsets: ``observed`` = left side,
    ``bound`` = right side; equality within rtol 1e-12 both ways (round-off of the sums)."""
    deltas = np.asarray(deltas, dtype=np.float64)
    if deltas.ndim != 2 or deltas.shape[0] < 2:
        raise ValueError(f"deltas must have shape (N, d) with N >= 2, got {deltas.shape}")
    N = deltas.shape[0]
    M = check_int(f"M (at most N={N})", M, 1, N)
    if math.comb(N, M) > 200_000:
        raise ValueError(f"C(N, M) = {math.comb(N, M)} subsets: choose N, M with at most 200000")
    mean = deltas.mean(axis=0)
    lhs = np.mean([np.sum((deltas[list(c)].mean(axis=0) - mean) ** 2)
                   for c in itertools.combinations(range(N), M)])
    rhs = (N - M) / (M * (N - 1)) * np.mean(np.sum((deltas - mean) ** 2, axis=1))
    res = make_result(lhs, rhs, rtol=1e-12, N=N, M=M, subsets=math.comb(N, M))
    equal = abs(lhs - rhs) <= 1e-12 * max(abs(rhs), 1e-300)
    return CheckResult(res.observed, res.bound, bool(equal), res.ratio, res.details)
