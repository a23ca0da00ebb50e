"""Lemmas 1–3 and the decomposition (22) by Monte Carlo over one round (spec §8 items 9–10).

From a fixed x_k, every one of the N devices runs its local part of Algorithm 2 (these are
the "virtual" updates of the proof); with u_i = x^{(i)}_{k,E} − x_k, noise w_i and
v_i = Q(u_i + w_i):

* x̄_{k,E} = x_k + (1/N)Σ_i u_i (all devices, no noise, no quantization);
* x̂_{k+1} = x_k + (1/N)Σ_i v_i (all devices, noisy and quantized, eq. 21);
* x_{k+1} = x_k + (1/M)Σ_{i∈S_k} v_i (the algorithm).

(22): E‖x_{k+1} − x*‖² = A + B + C with A = E‖x_{k+1} − x̂_{k+1}‖², B = E‖x̂_{k+1} − x̄_{k,E}‖²,
C = E‖x̄_{k,E} − x*‖² (the cross terms vanish in expectation). Lemma 1 bounds A (eq. 23),
Lemma 2 bounds B by qG²E²η²/N (eq. 24; the noise is missing: the corrected bound adds
(1+q)·d·ς²/N), Lemma 3 bounds C (eq. 25).
"""

from __future__ import annotations

import math

import numpy as np

from fedrepro.core.validate import check_int, check_positive
from fedrepro.dpfedpaq import quantizer as qz
from fedrepro.dpfedpaq.checks.result import CheckResult, make_result
from fedrepro.dpfedpaq.checks.synthetic import SyntheticProblem, local_updates
from fedrepro.dpfedpaq.theorem1 import Theorem1Constants

__all__ = ["lemma_bounds", "one_round", "check_decomposition", "check_lemma"]

#: Monte Carlo tolerance: a mean may exceed its bound by 4 standard errors before the check fails.
SE_FACTOR = 4.0


def lemma_bounds(c: Theorem1Constants, eta: float, dist2: float, noise_var: float) -> dict[str, float]:
    """Right-hand sides of (23), (24) as printed, (24) with the noise term, and (25)."""
    eta = check_positive("eta", eta)
    N, M, E, q, G2 = c.N, c.M, c.E, c.q, c.G2
    part = (N - M) / (M * N)
    a = (2 * q * G2 * part * E**2 + 4 * math.e * c.sigma2 * part / c.b * E
         + 8 * math.e * c.lam2 * part * E * (E - 1)) * eta**2
    if c.epsilon is not None and N > 1:
        a += (256 * c.d * G2 * c.b**2 * (1 + q) * (N - M) * math.log(1.25 * c.gamma / c.delta)
              / (M * (N - 1) * c.n**2 * c.epsilon**2)) * E**4 * eta**2
    b_paper = q * G2 / N * E**2 * eta**2
    b_corr = b_paper + (1 + q) * c.d * noise_var / N
    cc = ((1 - c.mu * eta) ** E * dist2 + (3 * c.L * c.lam2 / c.mu + c.sigma2 / (c.b * N)) * E * eta**2
          + 8 * G2 * E * (E - 1) ** 2 * eta**2)
    return {"lemma1": a, "lemma2": b_paper, "lemma2-corrected": b_corr, "lemma3": cc}


def one_round(p: SyntheticProblem, c: Theorem1Constants, x: np.ndarray, eta: float, clip: float,
              s: int | None, noise_std: float, trials: int, rng: np.random.Generator,
              chunk: int = 500) -> dict[str, float]:
    """Monte Carlo means (and standard errors) of A, B, C, the total and the cross terms."""
    trials = check_int("trials", trials, 2)
    x = np.asarray(x, dtype=float)
    N, M, d = c.N, c.M, p.d
    sums: dict[str, list[np.ndarray]] = {k: [] for k in ("A", "B", "C", "total")}
    done = 0
    while done < trials:
        m = min(chunk, trials - done)
        xs = np.tile(x, (m, 1))
        devices = np.tile(np.arange(N), (m, 1))
        u = local_updates(p, xs, devices, eta, c.E, c.b, clip, rng)  # (m, N, d)
        v = u + noise_std * rng.standard_normal(u.shape) if noise_std > 0 else u
        if s is not None:
            v = qz.quantize(v.reshape(-1, d), s, rng).reshape(v.shape)
        keys = rng.random((m, N))
        sel = np.argpartition(keys, M - 1, axis=1)[:, :M] if M < N else np.tile(np.arange(N), (m, 1))
        x_bar = xs + u.mean(axis=1)
        x_hat = xs + v.mean(axis=1)
        x_next = xs + np.take_along_axis(v, sel[:, :, None], axis=1).mean(axis=1)
        sums["A"].append(np.sum((x_next - x_hat) ** 2, axis=1))
        sums["B"].append(np.sum((x_hat - x_bar) ** 2, axis=1))
        sums["C"].append(np.sum((x_bar - p.x_star) ** 2, axis=1))
        sums["total"].append(np.sum((x_next - p.x_star) ** 2, axis=1))
        done += m
    out: dict[str, float] = {}
    arrays = {k: np.concatenate(v) for k, v in sums.items()}
    for k, arr in arrays.items():
        out[k] = float(arr.mean())
        out[f"{k}_se"] = float(arr.std(ddof=1) / math.sqrt(arr.size))
    cross = arrays["total"] - arrays["A"] - arrays["B"] - arrays["C"]
    out["cross"] = float(cross.mean())
    out["cross_se"] = float(cross.std(ddof=1) / math.sqrt(cross.size))
    out["trials"] = trials
    return out


def check_decomposition(mc: dict[str, float]) -> CheckResult:
    """|mean cross terms| of (22) against SE_FACTOR standard errors (they vanish in expectation)."""
    return make_result(abs(mc["cross"]), SE_FACTOR * mc["cross_se"], rtol=0.0,
                       relative_to_total=abs(mc["cross"]) / mc["total"] if mc["total"] > 0 else 0.0)


def check_lemma(name: str, mc: dict[str, float], bounds: dict[str, float]) -> CheckResult:
    """Monte Carlo term (A for Lemma 1, B for Lemma 2, C for Lemma 3) against its bound;
    the mean may exceed the bound by SE_FACTOR standard errors (atol)."""
    term = {"lemma1": "A", "lemma2": "B", "lemma2-corrected": "B", "lemma3": "C"}
    if name not in term:
        raise ValueError(f"name must be one of {sorted(term)}, got {name!r}")
    key = term[name]
    return make_result(mc[key], bounds[name], rtol=0.0, atol=SE_FACTOR * mc[f"{key}_se"], term=key)
