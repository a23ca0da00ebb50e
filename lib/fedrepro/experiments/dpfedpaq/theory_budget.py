"""Stored experiment :class:`BudgetConfig`: the communication trade-off of eq. (11) (spec §7.4) —
for a bit budget B over T iterations, every feasible (s, E, M) and the training loss of vanilla
FedPAQ run with it (the bound is evaluated by :mod:`fedrepro.chapters.dpfedpaq.theory.report` from
the MNIST constants).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fedrepro.core.cache import ExperimentConfig, run_units
from fedrepro.core.profiles import check_profile
from fedrepro.core.rng import seed_sequence

__all__ = ["BudgetConfig", "budget_schedules", "budget_units", "load_budget"]


# =========================================================================== budget (eq. 11)


@dataclass(frozen=True)
class BudgetConfig(ExperimentConfig):
    """Eq. (11): budget ``budget_bits`` over ``T`` iterations; E grid, levels (0: none), seeds
    of the simulated vanilla FedPAQ runs (HET_MNIST(2), batch 64, the experiments' step size)."""

    part: ClassVar[str] = "dpfedpaq"
    experiment: ClassVar[str] = "theory-budget"
    verify_rtol: ClassVar[float] = 2e-4
    verify_note: ClassVar[str] = ("float32 local steps and a stochastic quantizer whose rounding decisions follow "
                                  "the last bits: the final losses differ by 1.8e-5 relative between the AVX2 and "
                                  "AVX-512 kernel families (`make verify-kernels`)")
    # about two minutes in full: make verify recomputes four of the 36 units, spread over the grid
    verify_units: ClassVar[int | None] = 4

    profile: str = "paper"
    T: int = 1000
    budget_bits: float = 100 * 10 * 34_512.0  # K·M·β(10) at E = 10, M = 10, T = 1000
    E_values: tuple[int, ...] = (1, 2, 5, 10, 20, 50, 100)
    levels: tuple[int, ...] = (1, 10, 0)
    seeds: int = 2
    per_device: int | None = None

    @classmethod
    def for_profile(cls, profile: str) -> BudgetConfig:
        check_profile(profile)
        if profile == "quick":
            return cls(profile="quick", T=40, budget_bits=4 * 10 * 34_512.0, E_values=(1, 5, 10, 20),
                       levels=(1, 10), seeds=1, per_device=60)
        return cls()


def budget_schedules(cfg: BudgetConfig) -> list[dict[str, Any]]:
    """Every feasible (s, E, M) of eq. (11) for ``cfg`` (M the largest allowed, ≤ N = 100)."""
    from fedrepro.dpfedpaq import theorem1 as t
    from fedrepro.dpfedpaq.quantizer import bits

    out = []
    for s in cfg.levels:
        beta = bits(7850, s or None)
        for row in t.budget_schedules(cfg.budget_bits, cfg.T, beta, 100, cfg.E_values):
            out.append({"s": s, "beta": beta, **row})
    return out


def budget_units(cfg: BudgetConfig) -> list[str]:
    """One unit per (schedule, seed), the longest first (K·E·M local steps): the workers take
    units in this order, so that no long unit is left to run alone at the end."""
    rows = sorted(budget_schedules(cfg), key=lambda r: -r["K"] * r["E"] * r["M"])
    return [f"s{r['s']}--E{r['E']}--seed{j}" for r in rows for j in range(cfg.seeds)]


def _run_budget_unit(cfg: BudgetConfig, unit: str) -> dict[str, Any]:
    from fedrepro.dpfedpaq.algorithms import fedpaq
    from fedrepro.dpfedpaq.mnist import het_mnist_problem

    s_part, e_part, seed_part = unit.split("--")
    s, E, j = int(s_part[1:]), int(e_part[1:]), int(seed_part[4:])
    row = next(r for r in budget_schedules(cfg) if r["s"] == s and r["E"] == E)
    P = het_mnist_problem(2, per_device=cfg.per_device, with_test=False)
    hist = fedpaq(P, rounds=row["K"], local_steps=E, m_per_round=row["M"], batch_size=min(64, int(P.sizes.min())),
                  q_levels=s or None, seed=seed_sequence(cfg, "run", s, E, j), eval_rounds=[row["K"]])
    return {**row, "seed": j, "loss": float(hist.loss[-1]), "bits_counted": float(hist.bits[-1])}


def load_budget(profile: str = "paper") -> dict[str, Any]:
    """Stored result of :class:`BudgetConfig` (``{"units": {...}}``)."""
    cfg = BudgetConfig.for_profile(profile)
    return run_units(cfg, budget_units(cfg), _run_budget_unit, progress=False)
