"""Stored experiment :class:`BudgetConfig`: the communication trade-off of eq. (11) (spec §7.4) —
for a bit budget B over T iterations, every feasible (s, E, M) and the training loss of vanilla
FedPAQ run with it (the bound is evaluated by :mod:`.report` from the MNIST constants).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.theory_budget`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.theory_budget import (  # noqa: F401
    BudgetConfig,
    _run_budget_unit,
    budget_schedules,
    budget_units,
    load_budget,
)

__all__ = ["BudgetConfig", "budget_schedules", "budget_units", "load_budget"]
