"""What it would take to reach the paper's level: one knob at a time (Ling et al., ALI-DPFL, Table II).

The reference cell is Table II's τ = 1 at ε = 1.55 (R_c = 79 local iterations, R_s = 2R_c,
Fashion-MNIST; the smallest R_c of the paper). The reader's recipe is the spec's literal
reading (:data:`fedrepro.experiments.alidpfl.settings.READINGS` ``"spec"``: 40 label-sorted
shards per client, q = 0.015, noisy sum ÷ q|D_i|, C = 0.1, σ = 1.1, η = 0.5, DPFL with τ = 1
for 79 rounds). From it, each knob is moved alone along a ladder stated here, before any run
(never searched for the paper's value); every rung is trained once (seed 0) and the global
model's accuracy read on the full test set after its last round:

* ``eta``: step size η × {2, 4, 8, 16, 32};
* ``clip``: clipping norm C × {0.25, 0.5, 2, 4} (the noise σC moves with it, σ fixed);
* ``steps``: DP-SGD steps per round τ × {2, 4} with the 79 rounds kept (158, 316 steps);
* ``batch``: sampling rate q × {2, 4} (0.03, 0.06), divisor q|D_i| (the expected batch), 79 steps;
* ``width``: every hidden width of the CNN × {2} (:mod:`fedrepro.alidpfl.wide`; × 4 costs
  about ten times a rung of the paper's model, beyond this study's compute);
* ``split``: the data split: 4 shards per client (the paper's "three or four" labels),
  Dirichlet(1.0) with 75/25 client splits (the public code), IID (60,000 one-record shards);
* ``code``: combinations of the public code's settings (Dirichlet partition, q = 0.05,
  divisor 64, R_c recomputed for q = 0.05 under the improved conversion, 3 iterations at
  ε = 1.55) with η × {1, 4, 16}.

The divisor needs no run of its own: the update is η·(noisy sum)/divisor, so divisor ÷ k is
η × k. Whether a rung keeps the privacy accounting valid is not decided here (runs record
what they did: steps, rate, clip, noise); the view computes it
(:func:`fedrepro.alidpfl.validity.accounting_valid`).

One stored result per knob, ``alidpfl/what-it-takes-<knob>.json`` (one unit per rung and
seed, resumable through :func:`fedrepro.core.cache.run_units`); ``recipe`` is the reader's
recipe itself (rung × 1 of every ladder).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from fedrepro.alidpfl.budget import Budgets
from fedrepro.alidpfl.setting import PAPER, FederatedSetting, build_clients
from fedrepro.alidpfl.training import RunPlan, train
from fedrepro.alidpfl.wide import train_wide
from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.experiments.alidpfl.settings import ReadingConfig, public_code_iterations

__all__ = ["Rung", "KNOBS", "KNOB_ORDER", "REFERENCE_EPSILON", "REFERENCE_ROUNDS", "WhatItTakesConfig",
           "rung_rounds", "run_rung", "load_knob", "load_all"]

#: ε of the reference cell (Table II, τ = 1, R_s = 2R_c, Fashion-MNIST).
REFERENCE_EPSILON: float = 1.55
#: Rounds of the reader's recipe (R_c at ε = 1.55, q = 0.015, basic conversion).
REFERENCE_ROUNDS: int = 79


@dataclasses.dataclass(frozen=True)
class Rung:
    """One stated change of the reader's recipe.

    ``multiplier``: the factor on the knob's recipe value (``None`` for a categorical change);
    ``setting``/``plan``: overrides of :class:`FederatedSetting` and :class:`RunPlan`;
    ``tau``: DP-SGD steps per round; ``rounds``: rounds (``None``: R_c of the rung's q at
    ε = 1.55 under ``conversion``); ``width``: CNN width multiplier; ``conversion``: the
    RDP-to-(ε, δ) conversion the rung's accounting uses."""

    label: str
    multiplier: float | None
    setting: tuple[tuple[str, Any], ...] = ()
    plan: tuple[tuple[str, Any], ...] = ()
    tau: int = 1
    rounds: int | None = REFERENCE_ROUNDS
    width: int = 1
    conversion: str = "basic"


def _code(k: float) -> Rung:
    return Rung(f"public code (Dirichlet, q = 0.05, divisor 64, R_c improved), eta x {k:g}", k,
                (("partition", "dirichlet"), ("q", 0.05)),
                (("q", 0.05), ("divisor", 64.0), ("eta", PAPER.eta * k)), rounds=None, conversion="improved")


#: knob → (what it changes, its stated ladder)
KNOBS: dict[str, tuple[str, tuple[Rung, ...]]] = {
    "recipe": ("the reader's recipe (spec)", (Rung("reader's recipe", 1.0),)),
    "eta": ("step size eta (recipe 0.5)",
            tuple(Rung(f"eta x {k:g}", k, plan=(("eta", PAPER.eta * k),)) for k in (2, 4, 8, 16, 32))),
    "clip": ("clipping norm C (recipe 0.1)",
             tuple(Rung(f"C x {k:g}", k, plan=(("clip_norm", PAPER.clip * k),)) for k in (0.25, 0.5, 2, 4))),
    "steps": ("DP-SGD steps per round (recipe 1), 79 rounds",
              tuple(Rung(f"steps x {k}", k, tau=k) for k in (2, 4))),
    "batch": ("sampling rate q (recipe 0.015), divisor q|D_i|",
              tuple(Rung(f"q x {k}", k, setting=(("q", PAPER.q * k),), plan=(("q", PAPER.q * k),))
                    for k in (2, 4))),
    "width": ("CNN width (recipe 32-64-512)", (Rung("width x 2", 2, width=2),)),
    "split": ("data split (recipe: 40 of 400 label-sorted shards per client)",
              (Rung("4 shards per client (3-4 labels)", None, setting=(("shards_per_client", 4),)),
               Rung("Dirichlet(1.0), 75/25 client splits (public code)", None,
                    setting=(("partition", "dirichlet"),)),
               Rung("IID (60,000 one-record shards)", None,
                    setting=(("n_shards", 60_000), ("shards_per_client", 6_000))))),
    "code": ("public code's settings combined", tuple(_code(k) for k in (1, 4, 16))),
}

#: The knobs in the order the chapter shows them.
KNOB_ORDER: tuple[str, ...] = tuple(KNOBS)


def rung_rounds(rung: Rung, profile: str = "paper") -> int:
    """Rounds of ``rung``: its stated count, or R_c of its q at ε = 1.55 under its conversion
    (:func:`fedrepro.experiments.alidpfl.settings.public_code_iterations`); at most 2 in the
    quick profile."""
    check_profile(profile)
    if rung.rounds is None:
        q = dict(rung.plan).get("q", PAPER.q)
        n = public_code_iterations(REFERENCE_EPSILON, q=q) if rung.conversion == "improved" else REFERENCE_ROUNDS
    else:
        n = rung.rounds
    return min(n, 2) if profile == "quick" else n


@dataclasses.dataclass(frozen=True)
class WhatItTakesConfig(ExperimentConfig):
    """The rungs of one knob of :data:`KNOBS`, each under ``seeds``: one unit per rung and seed,
    ``"<rung index>@seed<k>"``."""

    part: ClassVar[str] = "alidpfl"
    experiment: ClassVar[str] = "what-it-takes"
    verify_rtol: ClassVar[float] = ReadingConfig.verify_rtol
    verify_atol: ClassVar[float] = ReadingConfig.verify_atol
    verify_rules: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = ReadingConfig.verify_rules
    verify_note: ClassVar[str] = "as the reading study (float32 training on a CPU); one unit recomputed"
    verify_units: ClassVar[int | None] = 1

    profile: str = "paper"
    knob: str = "eta"
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        check_profile(self.profile)
        if self.knob not in KNOBS:
            raise ValueError(f"knob must be one of {sorted(KNOBS)}, got {self.knob!r}")
        if not self.seeds or any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of integers >= 0, got {self.seeds!r}")

    def result_name(self) -> str:
        base = f"what-it-takes-{self.knob}"
        if self.seeds != (0,):
            base += "-seeds" + "-".join(str(s) for s in self.seeds)
        return base if self.profile == "paper" else f"{base}-{self.profile}"

    def units(self) -> list[str]:
        return [f"{i}@seed{s}" for s in self.seeds for i in range(len(KNOBS[self.knob][1]))]


def run_rung(cfg: WhatItTakesConfig, unit: str) -> dict[str, Any]:
    """Train the rung ``unit`` (``"<index>@seed<k>"``) of ``cfg.knob``: DPFL with fixed τ, the
    clients' data drawn as in the reading study (seed k), accuracy on the full test set after
    the last round."""
    index, seed_text = unit.split("@seed")
    rung = KNOBS[cfg.knob][1][int(index)]
    seed = int(seed_text)
    quick = cfg.profile == "quick"
    data = build_clients(FederatedSetting(**dict(rung.setting)),
                         np.random.default_rng(np.random.SeedSequence([seed, 0xDA7A])),
                         subset=200 if quick else None)
    rounds = rung_rounds(rung, cfg.profile)
    plan = RunPlan(Budgets(REFERENCE_EPSILON, rounds, rounds * rung.tau), tau=rung.tau, eval_rounds=(rounds,),
                   curve_every=1 if quick or rounds < 20 else 10, curve_size=200 if quick else 2000, seed=seed,
                   checkpoint_every=max(rounds, 1), **dict(rung.plan))
    if rung.width == 1:
        res = train(plan, data).as_dict()
        acc, loss, d = float(res["eval_accuracy"][-1]), float(res["eval_loss"][-1]), int(res["d"])
        curve_rounds, curve_acc = res["curve_rounds"], res["curve_accuracy"]
    else:
        res = train_wide(plan, data, rung.width)
        acc, loss, d = float(res["final_accuracy"]), float(res["final_loss"]), int(res["d"])
        curve_rounds, curve_acc = res["curve_rounds"], res["curve_accuracy"]
    return {"final_accuracy": acc, "final_loss": loss, "rounds": rounds, "steps": rounds * rung.tau,
            "q": float(plan.q), "clip_norm": float(plan.clip_norm), "sigma": float(plan.sigma),
            "eta": float(plan.eta), "d": d, "client_sizes": data.sizes, "test_size": len(data.test_y),
            "curve_rounds": np.asarray(curve_rounds), "curve_accuracy": np.asarray(curve_acc)}


def load_knob(knob: str, profile: str = "paper", seeds: tuple[int, ...] = (0,)) -> dict[str, dict[str, Any]]:
    """``{unit: result}`` of one knob (computed, resumably, if missing or stale)."""
    cfg = WhatItTakesConfig(profile=profile, knob=knob, seeds=seeds)
    return run_units(cfg, cfg.units(), run_rung)["units"]


def load_all(profile: str = "paper") -> dict[str, dict[str, dict[str, Any]]]:
    """``{knob: {unit: result}}`` for every knob of :data:`KNOB_ORDER` (seed 0)."""
    return {k: load_knob(k, profile) for k in KNOB_ORDER}
