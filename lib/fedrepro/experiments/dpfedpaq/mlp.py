"""Beyond softmax regression: the hyperparameter sweeps of Figs. 2–4 with a small network (C48).

Claim C48 (Sec. V) says that privacy-aware FedPAQ on "ANNs, CNNs and spiking neural networks"
shows, with a proper learning rate, the same effects of the FL hyperparameters as the paper's
softmax regression. This module re-runs, with the one-hidden-layer tanh network of
:mod:`fedrepro.dpfedpaq.mlp` (784→64→10, d = 50,890) in place of the softmax model, the sweeps
of the private runs behind the paper's figures:

* ε ∈ {0.1, 0.5, 1, 1.5, 2} (Fig. 4 a), s ∈ {1, 10, unquantized} (Fig. 3 a),
* E ∈ {1, 10, 100} at a fixed number of rounds (Fig. 2 a), M ∈ {1, 10, 100} (Fig. 3 b),

each around the figures' defaults (HET_MNIST(2), N = 100, M = 10, E = 10, s = 10, γ = 0.2, C = 1,
ε = 1, δ = 10⁻⁴, the authors' noise Δ = C/n_i with the eq. (16) calibration, Alg. 2 semantics,
η_k = 0.1/(1 + kE/100)) for K = 100 rounds, as the softmax runs. The learning rate is the
softmax one (η₀ = 0.1), not tuned. Every (run, seed) is a unit of one stored result
(:class:`MLPConfig`); seed j of every run draws the same initial weights, devices and batches
where the runs share the schedule (common random numbers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from fedrepro.core import rng
from fedrepro.core.cache import run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq.mlp import private_fedpaq_mlp
from fedrepro.dpfedpaq.mnist import het_mnist_problem
from fedrepro.experiments.dpfedpaq.runs import Float32RunsConfig, _one_blas_thread

__all__ = ["EFFECTS", "MLPConfig", "MLPRun", "PROFILE_SETTINGS", "combine", "load_mlp_runs", "mlp_spec",
           "registry", "run_unit", "sweep"]

#: Sizes of each profile. ``paper``: the figures' grids (three seeds, K = 100, 64 hidden units);
#: ``quick``: 100 records per device, 16 hidden units, K = 4 rounds, two seeds (seconds).
PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "paper": dict(per_device=None, seeds=3, K=100, hidden=64,
                  eps=(0.1, 0.5, 1.0, 1.5, 2.0), levels=(1, 10, None), E=(1, 10, 100), M=(1, 10, 100)),
    "quick": dict(per_device=100, seeds=2, K=4, hidden=16,
                  eps=(0.1, 1.0), levels=(1, None), E=(1, 10), M=(1, 10)),
}

#: The swept hyperparameters: ``{effect: (RunSpec field, settings key, the paper's figure)}``.
EFFECTS: dict[str, tuple[str, str, str]] = {
    "eps": ("eps", "eps", "Fig. 4 (a)"),
    "s": ("s", "levels", "Fig. 3 (a)"),
    "E": ("E", "E", "Fig. 2 (a)"),
    "M": ("M", "M", "Fig. 3 (b)"),
}


@dataclasses.dataclass(frozen=True)
class MLPRun:
    """One private run of the network (Alg. 2, the figures' noise); defaults of the figures."""

    E: int = 10
    M: int = 10
    s: int | None = 10
    eps: float | None = 1.0
    K: int = 100
    hidden: int = 64
    gamma: float = 0.2
    clip: float = 1.0
    delta: float = 1e-4

    def name(self) -> str:
        return (f"mlp{self.hidden}-E{self.E}-M{self.M}-s{self.s}-e{self.eps}-g{self.gamma:g}-C{self.clip}"
                f"-d{self.delta:g}-K{self.K}")


def mlp_spec(profile: str, **overrides: Any) -> MLPRun:
    """The default run of ``profile`` (its K and hidden width) with ``overrides``."""
    st = PROFILE_SETTINGS[check_profile(profile)]
    return MLPRun(**{"K": st["K"], "hidden": st["hidden"], **overrides})


def sweep(profile: str, effect: str) -> tuple[tuple[Any, ...], list[MLPRun]]:
    """The values of ``effect`` (a key of :data:`EFFECTS`) and the runs that sweep it."""
    if effect not in EFFECTS:
        raise ValueError(f"effect must be one of {tuple(EFFECTS)}, got {effect!r}")
    field, key, _ = EFFECTS[effect]
    values = PROFILE_SETTINGS[check_profile(profile)][key]
    return tuple(values), [mlp_spec(profile, **{field: v}) for v in values]


def _eval_rounds(K: int) -> tuple[int, ...]:
    """0, 5, every 10th round and K (each evaluation is a pass over the 60,000 records)."""
    return tuple(sorted({0, min(5, K), K} | set(range(0, K + 1, 10))))


def registry(profile: str) -> dict[str, MLPRun]:
    """Every distinct run of ``profile`` (the default run is shared by the four sweeps)."""
    out: dict[str, MLPRun] = {}
    for effect in EFFECTS:
        for run in sweep(profile, effect)[1]:
            out.setdefault(run.name(), run)
    return out


@dataclasses.dataclass(frozen=True)
class MLPConfig(Float32RunsConfig):
    """The network runs of ``profile``, each on ``PROFILE_SETTINGS[profile]["seeds"]`` seeds."""

    part = "dpfedpaq"
    experiment = "experiments-mlp"

    profile: str = "paper"

    def result_name(self) -> str:
        return self.experiment if self.profile == "paper" else f"{self.experiment}-{self.profile}"

    def units(self) -> list[str]:
        n = PROFILE_SETTINGS[check_profile(self.profile)]["seeds"]
        return [f"{name}--seed{j}" for name in registry(self.profile) for j in range(n)]


def run_unit(cfg: MLPConfig, unit: str) -> dict[str, Any]:
    """Train one (run, seed) unit (one BLAS thread: many small products)."""
    name, _, seed_txt = unit.rpartition("--seed")
    reg = registry(cfg.profile)
    if name not in reg or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for profile {cfg.profile!r}")
    run = reg[name]
    st = PROFILE_SETTINGS[cfg.profile]
    problem = het_mnist_problem(2, per_device=st["per_device"])
    seed = rng.seed_sequence(cfg, int(seed_txt), fields=())
    with _one_blas_thread():
        h = private_fedpaq_mlp(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M, hidden=run.hidden,
                               sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                               sensitivity_mode="authors_code", calibration="paper", q_levels=run.s,
                               seed=seed, eval_rounds=_eval_rounds(run.K), accuracy=True)
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy, "bits": h.bits,
            "update_norm_mean": float(np.mean(h.update_norm)), "noise_norm_mean": float(np.mean(h.noise_norm)),
            "noise_std_round0": float(h.info["noise_std_round0"])}


def combine(cfg: MLPConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{"runs": {run name: {"rounds": (R,), metric: (seeds, R) or (seeds,)}}}``."""
    n = PROFILE_SETTINGS[cfg.profile]["seeds"]
    out: dict[str, Any] = {}
    for name in registry(cfg.profile):
        per = [done[f"{name}--seed{j}"] for j in range(n)]
        entry: dict[str, Any] = {"rounds": np.asarray(per[0]["rounds"])}
        for key in per[0]:
            if key != "rounds":
                entry[key] = np.array([np.asarray(p[key], dtype=float) for p in per])
        out[name] = entry
    return {"runs": out}


def load_mlp_runs(profile: str = "paper") -> dict[str, dict[str, np.ndarray]]:
    """The stored network runs of ``profile`` (computed when missing, except in a read-only
    context, which raises :class:`fedrepro.core.cache.MissingResult`)."""
    cfg = MLPConfig(profile=check_profile(profile))
    return run_units(cfg, cfg.units(), run_unit, combine=combine)["runs"]
