"""Task T1 of the head-to-head part: federated softmax regression on MNIST (HET_MNIST(2), 100
clients: DP-FedPAQ's task, :mod:`fedrepro.dpfedpaq.mnist`), and the client computations of
the algorithms that run on it.

A round: ``clients_per_round`` clients, drawn without replacement from a public schedule
(:func:`participation_schedule`, fixed before the run from the run's seed, so that the
accountant knows how often each client will send), start from the global model x, run their
local computation and send one message; the server averages the messages weighted by n_i.

Client computations (x is the (785, 10) model, ã_j the record with a constant 1, p_j its
softmax, e_j its one-hot label; the per-record gradient of the cross-entropy is
g_j = ã_j (p_j − e_j)ᵀ, the regulariser μx is data-independent):

* :func:`dpsgd_steps` — τ DP-SGD steps (Abadi et al.; ALI-DPFL's local solver): each record
  is sampled with probability q, every sampled g_j is clipped to norm C, Gaussian noise
  N(0, σ²C²I) is added to the sum, which is divided by the expected batch q·n_i; step η.
  With ``clip=None`` and σ = 0 it is plain minibatch SGD (mean over the realised batch): the
  non-private reference.
* :func:`fedpaq_update` — private FedPAQ's local update (DP-FedPAQ Alg. 2 with the valid
  sensitivity): E steps, each on a Poisson sample at rate q_step, with the mean of the
  clipped g_j over the realised batch (zero on an empty batch, so its norm never exceeds C);
  the released update u = x_E − x gets Gaussian noise of standard deviation σ·Δ with
  Δ = 2ηEC (two coupled runs move apart by at most 2ηC per step), then the quantizer Q_s.
* :func:`noisy_prox_steps` — Fed-PLT's private local training (v2 eq. (13) on the local
  problem of Algorithm 1): N_e full-batch gradient steps on f_i(w) + ‖w − v‖²/(2ρ), the
  data term being the clipped sum plus N(0, σ²C²I), divided by n_i (each step a Gaussian
  release of sensitivity C).

Every random draw comes from the generator passed in, in a fixed order (per step: the n_i
uniforms of the Poisson sample, then the (785, 10) standard normals of the noise). A client
whose model stops being finite stops its local steps and returns it as it is.
"""

from __future__ import annotations

import numpy as np

from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive
from fedrepro.privacy import mechanism
from fedrepro.problems.softmax import N_CLASSES, N_FEATURES, SoftmaxProblem

__all__ = ["participation_schedule", "clipped_sum", "dpsgd_steps", "fedpaq_update", "fedpaq_sensitivity",
           "noisy_prox_steps", "average"]


def participation_schedule(n_clients: int, clients_per_round: int, rounds: int,
                           rng: np.random.Generator) -> np.ndarray:
    """(rounds, clients_per_round) client indices, public (drawn before the run, independent
    of the data). When ``clients_per_round`` divides ``n_clients`` the rounds walk through
    random permutations of the clients, so that every client sends either ⌊R·M/N⌋ or ⌈R·M/N⌉
    messages (the accountant's plan, set by the most frequent client, is then the same for
    every seed); otherwise each round is a uniform draw without replacement."""
    n_clients = check_int("n_clients", n_clients, 1)
    m = check_int("clients_per_round", clients_per_round, 1, n_clients)
    rounds = check_int("rounds", rounds, 0)
    if n_clients % m:
        return np.array([np.sort(rng.choice(n_clients, size=m, replace=False)) for _ in range(rounds)],
                        dtype=np.int64).reshape(rounds, m)
    per_perm = n_clients // m
    perms = [rng.permutation(n_clients) for _ in range(-(-rounds // per_perm))]
    order = np.concatenate(perms) if perms else np.zeros(0, dtype=np.int64)
    return np.sort(order[:rounds * m].reshape(rounds, m), axis=1).astype(np.int64)


def _sample(rng: np.random.Generator, start: int, n: int, rate: float) -> np.ndarray:
    return start + np.flatnonzero(rng.random(n) < rate)


def clipped_sum(problem: SoftmaxProblem, x: np.ndarray, rows: np.ndarray, clip: float | None) -> np.ndarray:
    """Σ_j min(1, C/‖g_j‖) g_j over ``rows`` (float64, (785, 10)); ``clip=None``: Σ_j g_j."""
    if rows.size == 0:
        return np.zeros((N_FEATURES, N_CLASSES))
    r = problem.residuals(x, rows).astype(np.float64)
    if clip is not None:
        norms = np.sqrt(problem.sq_norms[rows].astype(np.float64) * np.einsum("ij,ij->i", r, r))
        r *= mechanism.clip_factors(norms, clip)[:, None]
    return problem.features[rows].T.astype(np.float64) @ r


def dpsgd_steps(problem: SoftmaxProblem, x: np.ndarray, client: int, *, steps: int, rate: float, lr: float,
                clip: float | None, noise_multiplier: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``steps`` DP-SGD steps of client ``client`` from ``x`` (module docstring); returns the
    model and the number of records sampled (per-sample gradients computed)."""
    steps = check_int("steps", steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    lr = check_positive("lr", lr)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    if clip is None and sigma > 0:
        raise ValueError("noise needs a clipping norm: clip=None only for the non-private reference (noise 0)")
    if clip is not None:
        clip = check_positive("clip", clip)
    rows_of = problem.device_rows(client)
    start, n = rows_of.start, rows_of.stop - rows_of.start
    x = np.array(x, dtype=np.float64, copy=True)
    sampled = 0
    for _ in range(steps):
        rows = _sample(rng, start, n, rate)
        sampled += rows.size
        g = clipped_sum(problem, x, rows, clip)
        if clip is None:
            g /= max(rows.size, 1)
        else:
            g = (g + mechanism.gaussian_noise(rng, g.shape, sigma, clip)) / (rate * n)
        x -= lr * (g + problem.mu * x)
        if not np.isfinite(x).all():  # diverged: the caller sees a non-finite model
            break
    return x, sampled


def fedpaq_sensitivity(lr: float, local_steps: int, clip: float) -> float:
    """Δ = 2ηEC: the largest distance between the updates of two coupled local runs on
    neighbouring datasets (each step's clipped mean has norm at most C)."""
    return 2.0 * check_positive("lr", lr) * check_int("local_steps", local_steps, 1) * check_positive("clip", clip)


def fedpaq_update(problem: SoftmaxProblem, x: np.ndarray, client: int, *, local_steps: int, rate: float,
                  lr: float, clip: float, noise_multiplier: float, levels: int | None,
                  rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Private FedPAQ's message of client ``client`` (module docstring): Q_s(u + N(0, σ²Δ²I));
    returns the (785, 10) message and the number of records sampled."""
    from fedrepro.dpfedpaq import quantizer

    E = check_int("local_steps", local_steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    rows_of = problem.device_rows(client)
    start, n = rows_of.start, rows_of.stop - rows_of.start
    x0 = np.asarray(x, dtype=np.float64)
    w = x0.copy()
    sampled = 0
    for _ in range(E):
        rows = _sample(rng, start, n, rate)
        sampled += rows.size
        g = clipped_sum(problem, w, rows, clip) / max(rows.size, 1)
        w -= lr * (g + problem.mu * w)
        if not np.isfinite(w).all():  # diverged: returned as it is, unquantized
            return w - x0, sampled
    u = w - x0 + mechanism.gaussian_noise(rng, x0.shape, sigma, fedpaq_sensitivity(lr, E, clip))
    return quantizer.quantize(u.reshape(-1), levels, rng).reshape(x0.shape), sampled


def noisy_prox_steps(problem: SoftmaxProblem, w0: np.ndarray, v: np.ndarray, client: int, *, steps: int, lr: float,
                     rho: float, clip: float, noise_multiplier: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``steps`` noisy gradient steps of client ``client`` on f_i(w) + ‖w − v‖²/(2ρ) from
    ``w0`` (module docstring); returns the model and the per-record gradients computed."""
    steps = check_int("steps", steps, 1)
    lr = check_positive("lr", lr)
    rho = check_positive("rho", rho)
    clip = check_positive("clip", clip)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    rows_of = problem.device_rows(client)
    rows = np.arange(rows_of.start, rows_of.stop)
    v = np.asarray(v, dtype=np.float64)
    w = np.array(w0, dtype=np.float64, copy=True)
    for _ in range(steps):
        g = clipped_sum(problem, w, rows, clip)
        if sigma > 0:
            g += mechanism.gaussian_noise(rng, g.shape, sigma, clip)
        w -= lr * (g / rows.size + problem.mu * w + (w - v) / rho)
        if not np.isfinite(w).all():  # diverged: the caller sees a non-finite model
            break
    return w, steps * rows.size


def average(messages: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_i w_i m_i / Σ_i w_i over the first axis (the server's aggregate)."""
    w = np.asarray(weights, dtype=np.float64)
    return np.tensordot(w / w.sum(), np.asarray(messages, dtype=np.float64), axes=1)
