"""Every training run of the chapter "DP-FedPAQ experiments" (Figs. 2–4, spec §6.3).

A run is a :class:`RunSpec` (algorithm and its parameters); :func:`registry` lists, per
profile, every run the figures, claims and the valid-calibration section need, each once
(runs shared by several figures are computed once; their evaluation rounds are merged).
:class:`RunsConfig` is one stored experiment per group of runs (:data:`GROUPS`): one unit
per (run, seed) through :func:`fedrepro.core.cache.run_units`, combined into
``{run name: {metric: (seeds, rounds)}}``.

Defaults (spec §6.2): HET_MNIST(2), N = 100, M = 10, E = 10, K = 100, η_k = 0.1/(1 + kE/100),
s = 10, γ = 0.2, C = 1, ε = 1, δ = 10⁻⁴; vanilla batch 64, private b_i = ⌊γn_i/E⌋. The
figures use the authors' code's noise (sensitivity C/n_i, eq. 16 calibration; spec §5.5, our
choice): **not a valid (ε, δ) guarantee** — the valid sensitivity 2η_kEC is run in its own
section.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import glob
import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from fedrepro.core import rng
from fedrepro.core.cache import ExperimentConfig, MissingResult, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.dpfedpaq.algorithms import fedpaq, private_fedpaq
from fedrepro.dpfedpaq.mnist import het_mnist_problem

__all__ = ["GROUPS", "PROFILE_SETTINGS", "RunSpec", "RunsConfig", "load_runs", "missing_groups", "registry", "run_unit",
           "spec"]


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run. ``algo``: ``"vanilla"`` (FedPAQ, batch ``batch``) or ``"private"``
    (Alg. 2); ``semantics``: ``"paper"`` (Alg. 2) or ``"authors_code"`` (their code
    emulated, spec §9); ``eps=None``: no noise; ``clip=None``: no clipping; ``s=None``: no quantization."""

    algo: str = "private"
    E: int = 10
    M: int = 10
    s: int | None = 10
    K: int = 100
    gamma: float = 0.2
    clip: float | None = 1.0
    eps: float | None = 1.0
    delta: float = 1e-4
    sensitivity: str = "authors_code"
    calibration: str = "paper"
    semantics: str = "paper"
    n_digits: int = 2
    batch: int = 64
    accuracy: bool = False

    def name(self) -> str:
        """A file-name-safe unique name (the unit name without the seed)."""
        if self.algo == "vanilla":
            core = f"van-E{self.E}-M{self.M}-s{self.s}-b{self.batch}"
        else:
            core = (f"priv-E{self.E}-M{self.M}-s{self.s}-g{self.gamma:g}-C{self.clip}-e{self.eps}"
                    f"-d{self.delta:g}-{self.sensitivity}-{self.calibration}-{self.semantics}")
        return f"{core}-K{self.K}-het{self.n_digits}"


#: Sizes of each profile: ``paper`` is the spec's §6.3; ``quick`` shrinks everything to seconds.
PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "paper": dict(per_device=None, seeds=3, K=100, T=2000, K_bottom=20, batch=64,
                  E_top=(1, 10, 100), E_bottom=(1, 2, 5, 10, 20, 50, 100), gammas=(0.2, 0.4, 0.6, 0.8),
                  eps=(0.1, 0.5, 1.0, 1.5, 2.0), clips=(0.5, 1.0, 1.5, 2.0), Ms=(1, 10, 100),
                  levels=(1, 10, None), deltas=(1e-5, 1e-3), eps_needed=(1.0, 10.0, 100.0, 1000.0, 1e4),
                  clips_nonoise=(0.1, 0.5, 1.0, 2.0, None), gammas_nonoise=(0.05, 0.2, 1.0),
                  eps_authors=(0.1, 1.0), het10=True),
    "quick": dict(per_device=100, seeds=2, K=4, T=20, K_bottom=2, batch=16,
                  E_top=(1, 10), E_bottom=(1, 2, 5), gammas=(0.2, 0.8),
                  eps=(0.1, 1.0), clips=(0.5, 1.0), Ms=(1, 10),
                  levels=(1, None), deltas=(1e-3,), eps_needed=(1.0, 1000.0),
                  clips_nonoise=(0.5, None), gammas_nonoise=(0.2, 1.0), eps_authors=(1.0,),
                  het10=False),
}


def _curve_rounds(K: int, *, early: bool = False) -> set[int]:
    """Evaluation rounds of a curve: 0, 1, 2, 3, 5, then every 10th round and K; with
    ``early`` every round up to 10 (Fig. 3b's early instability)."""
    first = set(range(min(K, 10) + 1)) if early else {k for k in (0, 1, 2, 3, 5) if k <= K}
    return first | set(range(0, K + 1, 10)) | {K}


def spec(profile: str, **overrides: Any) -> RunSpec:
    """The default run of ``profile`` with ``overrides`` (K and vanilla batch from the profile)."""
    st = PROFILE_SETTINGS[check_profile(profile)]
    base = {"K": st["K"], "batch": st["batch"]}
    return RunSpec(**{**base, **overrides})


#: Groups of runs, each stored as one result, in the order they are computed (the light
#: figures first); a run shared by several figures belongs to the first group listing it.
GROUPS: tuple[str, ...] = ("fig2top", "fig3", "fig4", "claims", "valid", "fig2bottom")
_REGISTRATION_ORDER: tuple[str, ...] = ("fig2top", "fig2bottom", "fig3", "fig4", "claims", "valid")


def _add(reg: dict[str, tuple[RunSpec, set[int], str]], run: RunSpec, rounds: set[int], group: str) -> str:
    """Register ``run`` evaluated at ``rounds`` in ``group``; merges rounds (and accuracy) of
    duplicates, which stay in the group that registered them first."""
    key = dataclasses.replace(run, accuracy=False).name()
    if key in reg:
        old, r, g = reg[key]
        reg[key] = (dataclasses.replace(old, accuracy=old.accuracy or run.accuracy), r | rounds, g)
    else:
        reg[key] = (run, set(rounds), group)
    return key


@lru_cache(maxsize=8)
def registry(profile: str, group: str | None = None) -> dict[str, tuple[RunSpec, tuple[int, ...]]]:
    """Every run of ``profile`` (or of one of its :data:`GROUPS`): ``{name: (spec, evaluation
    rounds)}`` (figures, claims, the valid-calibration section and the authors'-code
    emulation)."""
    if group is not None and group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
    return {k: (v[0], v[1]) for k, v in _full_registry(profile).items() if group in (None, v[2])}


@lru_cache(maxsize=4)
def _full_registry(profile: str) -> dict[str, tuple[RunSpec, tuple[int, ...], str]]:
    st = PROFILE_SETTINGS[check_profile(profile)]
    reg: dict[str, tuple[RunSpec, set[int], str]] = {}
    K, T, Kb = st["K"], st["T"], st["K_bottom"]
    # Fig. 2 (a, b): E on the top row; one run per (E, version) long enough for both panels
    for E in st["E_top"]:
        kk = max(K, T // E)
        every = max(1, (T // 20) // E)  # Fig. 2b: 20 points over the T iterations
        rounds = _curve_rounds(K) | set(range(0, T // E + 1, every)) | {T // E}
        for algo in ("vanilla", "private"):
            _add(reg, spec(profile, algo=algo, E=E, K=kk, accuracy=True), rounds, "fig2top")
    # Fig. 2 (c, d): loss after K_bottom rounds and after T iterations, E x gamma
    for E in st["E_bottom"]:
        kk = max(Kb, T // E)
        rounds = {0, Kb, T // E}
        _add(reg, spec(profile, algo="vanilla", E=E, K=kk), rounds, "fig2bottom")
        for g in st["gammas"]:
            _add(reg, spec(profile, E=E, K=kk, gamma=g), rounds, "fig2bottom")
    curve = _curve_rounds(K)
    # Fig. 3 (a): quantization levels, vanilla (and private, claims C31/C32; HET(10), C43)
    for s in st["levels"]:
        _add(reg, spec(profile, algo="vanilla", s=s), curve, "fig3")
        _add(reg, spec(profile, s=s), curve, "fig3")
        if st["het10"]:
            _add(reg, spec(profile, algo="vanilla", s=s, n_digits=10), curve, "fig3")
    # Fig. 3 (b): devices per round
    early = _curve_rounds(K, early=True)
    for M in st["Ms"]:
        _add(reg, spec(profile, algo="vanilla", M=M), early, "fig3")
        _add(reg, spec(profile, M=M), early, "fig3")
    # Fig. 4 (a): eps (with accuracy); (b) C at eps = 1 and 0.1; (c, d) gamma x C
    for e in st["eps"]:
        _add(reg, spec(profile, eps=e, accuracy=True), curve, "fig4")
    for c in st["clips"]:
        _add(reg, spec(profile, clip=c, eps=min(st["eps"])), curve, "fig4")
        for g in st["gammas"]:
            _add(reg, spec(profile, clip=c, gamma=g), curve, "fig4")
    for d in st["deltas"]:  # C23
        _add(reg, spec(profile, delta=d), curve, "fig4")
    # Claims C02, C08, C38: no subsampling (gamma = 1) and unamplified noise (eq. 13)
    _add(reg, spec(profile, gamma=1.0, calibration="unamplified", accuracy=True), curve, "claims")
    _add(reg, spec(profile, calibration="unamplified", accuracy=True), curve, "claims")
    # Claims C09, C41: clipping and subsampling without noise
    for c in st["clips_nonoise"]:
        _add(reg, spec(profile, eps=None, clip=c), curve, "claims")
    for g in st["gammas_nonoise"]:
        _add(reg, spec(profile, eps=None, gamma=g), curve, "claims")
    for g in st["gammas"]:
        _add(reg, spec(profile, eps=None, clip=min(st["clips"]), gamma=g), curve, "claims")
    # Valid calibration: Fig. 4 (a) with the valid sensitivity 2ηEC and with per_step
    for e in st["eps"]:
        _add(reg, spec(profile, eps=e, sensitivity="rigorous"), curve, "valid")
        _add(reg, spec(profile, eps=e, sensitivity="per_step"), curve, "valid")
    for e in st["eps_needed"]:  # which eps would train with a valid guarantee (exact calibration)
        _add(reg, spec(profile, eps=e, sensitivity="rigorous", calibration="exact"), curve, "valid")
    # The authors' code emulated (epochs, batch clipping, their noise)
    for e in st["eps_authors"]:
        _add(reg, spec(profile, eps=e, semantics="authors_code"), curve, "valid")
    return {k: (v[0], tuple(sorted(v[1])), v[2]) for k, v in reg.items()}


class Float32RunsConfig(ExperimentConfig):
    """What ``make verify`` allows the training runs of this part (float32 products)."""

    verify_rtol = 1e-3
    verify_atol = 1e-6
    verify_note = ("float32 mini-batch products: the BLAS kernel moves the last bits, which the "
                   "stochastic quantizer's thresholds can amplify over 100 rounds")
    verify_units = 2


@dataclasses.dataclass(frozen=True)
class RunsConfig(Float32RunsConfig):
    """The runs of one :data:`GROUPS` entry for ``profile``, each on
    ``PROFILE_SETTINGS[profile]["seeds"]`` seeds (common random numbers: seed j of every run,
    in every group, draws from the same streams)."""

    part = "dpfedpaq"
    experiment = "experiments-runs"

    profile: str = "paper"
    group: str = "fig4"

    def result_name(self) -> str:
        stem = f"experiments-{self.group}"
        return stem if self.profile == "paper" else f"{stem}-{self.profile}"

    def units(self) -> list[str]:
        n = PROFILE_SETTINGS[check_profile(self.profile)]["seeds"]
        return [f"{name}--seed{j}" for name in registry(self.profile, self.group) for j in range(n)]


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the block with one OpenBLAS thread (numpy's bundled OpenBLAS, found by name; a
    no-op where it is not found). The local steps are many small products, for which extra
    BLAS threads only cost (measured: 8x slower with two threads on a loaded 2-core machine)."""
    lib = None
    with contextlib.suppress(OSError, IndexError):
        libs = sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                                             "*openblas*")))
        lib = ctypes.CDLL(libs[0])
    setter = getattr(lib, "scipy_openblas_set_num_threads64_", None) if lib else None
    getter = getattr(lib, "scipy_openblas_get_num_threads64_", None) if lib else None
    if setter is None or getter is None:
        yield
        return
    before = int(getter())
    setter(1)
    try:
        yield
    finally:
        setter(before)


def run_unit(cfg: RunsConfig, unit: str) -> dict[str, Any]:
    """Train one (run, seed) unit; returns the metrics at its evaluation rounds."""
    with _one_blas_thread():
        return _run_unit(cfg, unit)


def _run_unit(cfg: RunsConfig, unit: str) -> dict[str, Any]:
    name, _, seed_txt = unit.rpartition("--seed")
    reg = registry(cfg.profile, cfg.group)
    if name not in reg or not seed_txt.isdigit():
        raise ValueError(f"unknown unit {unit!r} for profile {cfg.profile!r}")
    run, rounds = reg[name]
    st = PROFILE_SETTINGS[cfg.profile]
    problem = het_mnist_problem(run.n_digits, per_device=st["per_device"])
    seed = rng.seed_sequence(cfg, int(seed_txt), fields=())
    if run.algo == "vanilla":
        h = fedpaq(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M, batch_size=run.batch,
                   q_levels=run.s, seed=seed, eval_rounds=rounds, accuracy=run.accuracy)
    else:
        h = private_fedpaq(problem, rounds=run.K, local_steps=run.E, m_per_round=run.M,
                           sample_ratio=run.gamma, clip=run.clip, epsilon=run.eps, delta=run.delta,
                           sensitivity_mode=run.sensitivity, calibration=run.calibration,
                           q_levels=run.s, profile=run.semantics, seed=seed, eval_rounds=rounds,
                           accuracy=run.accuracy)
    first = slice(0, min(10, run.K))
    return {"rounds": h.rounds, "loss": h.loss, "accuracy": h.accuracy, "bits": h.bits,
            "update_norm_first10": float(np.mean(h.update_norm[first])),
            "noise_norm_first10": float(np.mean(h.noise_norm[first])),
            "update_norm_mean": float(np.mean(h.update_norm)),
            "noise_norm_mean": float(np.mean(h.noise_norm)),
            "noise_std_round0": float(h.info.get("noise_std_round0", np.nan))}


def combine(cfg: RunsConfig, done: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{run name: {"rounds": (R,), metric: (seeds, R) or (seeds,)}}``."""
    out: dict[str, Any] = {}
    n = PROFILE_SETTINGS[cfg.profile]["seeds"]
    for name in registry(cfg.profile, cfg.group):
        per = [done[f"{name}--seed{j}"] for j in range(n)]
        entry: dict[str, Any] = {"rounds": np.asarray(per[0]["rounds"])}
        for key in per[0]:
            if key != "rounds":
                entry[key] = np.array([np.asarray(p[key], dtype=float) for p in per])
        out[name] = entry
    return {"runs": out}


def load_runs(profile: str = "paper", groups: tuple[str, ...] = GROUPS) -> dict[str, dict[str, np.ndarray]]:
    """The runs of ``profile``: ``{name: metrics}``, group by group (computed when missing).

    In a read-only context (the tests, the scorecard) a group that is not stored is left out
    (its figures and claims then say "not computed"): :func:`missing_groups` names them.
    """
    out: dict[str, dict[str, np.ndarray]] = {}
    for group in groups:
        cfg = RunsConfig(profile=profile, group=group)
        try:
            out.update(run_units(cfg, cfg.units(), run_unit, combine=combine)["runs"])
        except MissingResult:
            continue
    return out


def missing_groups(runs: Mapping[str, Any], profile: str = "paper") -> list[str]:
    """The groups of ``profile`` with a run absent from ``runs``."""
    return [g for g in GROUPS if any(name not in runs for name in registry(profile, g))]
