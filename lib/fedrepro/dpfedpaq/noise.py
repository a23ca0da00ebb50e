"""Sensitivity Δ_f of the released update and the noise std of Alg. 2 (spec §5.2–5.3).

A scheduled device releases u = x_{k,E} − x_k after E clipped local steps of size η_k on
disjoint mini-batches of b of its n records (subsampling ratio γ = Eb/n), plus Gaussian noise
of std σ. Which Δ_f enters the calibration is not stated by the paper; the library offers
(:data:`SENSITIVITIES`):

* ``rigorous``: 2η_kEC — valid for substitution neighbours with per-sample clipping (couple
  the two runs: the parameter gap grows by at most 2η_kC per step, and 1 − η_kμ ≤ 1);
* ``theory``: 4η_kEC — what eqs. (18)/(51) imply (G playing the role of C); valid, 2×
  conservative;
* ``per_step``: 2η_kC/b — counts only the step that uses the differing record, ignoring its
  propagation: a heuristic, not a valid bound for u;
* ``authors_code``: C/n — the authors' public code (no η, E or b): not a valid bound for u.

Only ``rigorous`` and ``theory`` give a valid (ε, δ) guarantee (per round).

Calibrations (:data:`CALIBRATIONS`): ``paper`` is eq. (16), σ² = 8γ²Δ² ln(1.25γ/δ)/ε²
(:func:`fedrepro.dpfedpaq.amplification.paper_noise_std`); ``exact`` inverts the amplification
exactly and uses the analytic Gaussian mechanism (``exact_noise_std``); ``unamplified`` is
eq. (13) without subsampling amplification, σ = Δ·sqrt(2 ln(1.25/δ))/ε. Each σ is linear in
Δ, so a per-device multiplier σ/Δ is computed once and scaled by Δ_{i,k} every round.
:func:`add_noise` draws the noise z_i ~ N(0, σ_i² I) of Alg. 2 (line 9) from float64 standard
normals and adds it in the precision of the update (float32 for the library's rounds).
"""

from __future__ import annotations

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int, check_positive
from fedrepro.dpfedpaq._compiled import add_gaussian
from fedrepro.dpfedpaq.amplification import exact_noise_std, paper_noise_std
from fedrepro.privacy.gaussian import classical_gaussian_sigma
from fedrepro.privacy.validate import check_delta, real_array

__all__ = ["CALIBRATIONS", "SENSITIVITIES", "VALID_SENSITIVITIES", "add_noise", "noise_multipliers",
           "sensitivity"]

SENSITIVITIES: tuple[str, ...] = ("rigorous", "theory", "per_step", "authors_code")
#: The sensitivities that bound the released update (a valid per-round (ε, δ) guarantee).
VALID_SENSITIVITIES: tuple[str, ...] = ("rigorous", "theory")
CALIBRATIONS: tuple[str, ...] = ("paper", "exact", "unamplified")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be one of {choices}, got {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def sensitivity(mode: str, *, lr: float | np.ndarray, local_steps: int, clip: float,
                batch_size: int | np.ndarray, n_samples: int | np.ndarray) -> np.ndarray:
    """Δ_f of the released update under ``mode`` (see module docstring); broadcasts over
    devices (``batch_size``, ``n_samples`` arrays) and returns a float64 array."""
    mode = _check_choice("mode", mode, SENSITIVITIES)
    local_steps = check_int("local_steps (E)", local_steps, 1)
    clip = check_positive("clip (C)", clip)
    lr_arr = real_array("lr", lr)
    b = np.asarray(batch_size)
    n = np.asarray(n_samples)
    for name, arr in (("batch_size", b), ("n_samples", n)):
        if arr.dtype.kind not in "iuf":
            raise ParameterTypeError(f"{name} must be integers >= 1, got {arr!r}")
    if np.any(~(lr_arr > 0)) or not np.all(np.isfinite(lr_arr)):
        raise ValueError("lr must be in (0, inf)")
    if b.dtype.kind not in "iu" or np.any(b < 1):
        raise ValueError("batch_size must be integers >= 1")
    if n.dtype.kind not in "iu" or np.any(n < 1):
        raise ValueError("n_samples must be integers >= 1")
    try:
        np.broadcast(lr_arr, b, n)
    except ValueError:
        raise ValueError(f"lr, batch_size and n_samples must broadcast to one shape (one value per device), "
                         f"got shapes {lr_arr.shape}, {b.shape} and {n.shape}") from None
    if mode == "rigorous":
        out = 2 * lr_arr * local_steps * clip * np.ones(np.broadcast(b, n).shape)
    elif mode == "theory":
        out = 4 * lr_arr * local_steps * clip * np.ones(np.broadcast(b, n).shape)
    elif mode == "per_step":
        out = 2 * lr_arr * clip / b * np.ones(n.shape)
    else:
        out = clip / n * np.ones(np.broadcast(b, lr_arr).shape)
    return np.asarray(out, dtype=float)


def noise_multipliers(calibration: str, *, epsilon: float, delta: float,
                      gamma: np.ndarray | float) -> np.ndarray:
    """σ/Δ per device for ``calibration`` at target (ε, δ) and subsampling ratios ``gamma``
    (one per device, in (0, 1], each > δ for the amplified calibrations)."""
    calibration = _check_choice("calibration", calibration, CALIBRATIONS)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta(delta)
    g = np.atleast_1d(real_array("gamma", gamma))
    if np.any(~(g > 0)) or np.any(g > 1):
        raise ValueError("gamma (subsampling ratio E·b/n) must lie in (0, 1]")
    if calibration == "unamplified":
        return np.full(g.shape, classical_gaussian_sigma(epsilon, delta, 1.0))
    fn = paper_noise_std if calibration == "paper" else exact_noise_std
    cache: dict[float, float] = {}
    out = np.empty(g.shape)
    for j, gj in enumerate(g):  # few distinct values (b_i takes one or two values)
        key = float(gj)
        if key not in cache:
            cache[key] = fn(epsilon, delta, 1.0, key)
        out[j] = cache[key]
    return out


def add_noise(u: np.ndarray, std: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """u_i ← u_i + z_i with z_i ~ N(0, std_i² I) (Alg. 2, line 9), in place, for the m rows
    ``u[i]`` of a float32 or float64 array of shape (m, d) or (m, r, c), any strides.
    z_i = std_i·ζ_i with ζ the float64 standard normals of ``rng`` in the row-major order of
    the index (the numbers ``rng.standard_normal(u.shape)`` returns, whatever the memory
    layout), rounded once to ``u``'s precision: one compiled pass (:func:`._compiled.add_gaussian`),
    no temporary of u's size. ``std`` (m,) or a scalar, each in [0, inf). Returns ‖z_i‖ per
    row (float64 (m,), of the rounded noise)."""
    if not isinstance(u, np.ndarray):
        raise ParameterTypeError(f"u must be a float32 or float64 array of shape (m, d) or (m, r, c), got "
                                 f"{type(u).__name__}")
    if (u.ndim not in (2, 3)
            or u.dtype not in (np.float32, np.float64)):
        raise ValueError(f"u must be a float32 or float64 array of shape (m, d) or (m, r, c), got "
                         f"{type(u).__name__} {np.shape(u)}")
    if not u.flags.writeable:
        raise ValueError("u must be writeable (the noise is added in place)")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    sd = real_array("std", std)
    if sd.ndim == 0:
        sd = np.full(u.shape[0], float(sd))
    if sd.shape != (u.shape[0],):
        raise ValueError(f"std must be a scalar or have shape (m,) = ({u.shape[0]},), got {sd.shape}")
    if not np.all((sd >= 0) & np.isfinite(sd)):
        raise ValueError("std (noise standard deviation) must lie in [0, inf)")
    return np.sqrt(add_gaussian(u if u.ndim == 3 else u[:, :, None], sd, rng))
