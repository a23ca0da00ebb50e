"""ALI-DPFL's budgets and stopping rule (§V, §VI-B; spec decision 4): boundaries and the
exact messages of every bad input (each names its parameter first)."""

from __future__ import annotations

import pytest

from fedrepro.alidpfl.budget import BudgetCounter, Budgets, fixed_tau_stop, make_budgets


def test_smallest_budgets_are_accepted():
    b = Budgets(1e-9, 1, 1)
    assert (b.epsilon, b.rounds, b.iterations) == (1e-9, 1, 1)
    assert fixed_tau_stop(b, 1) == (1, 1)


@pytest.mark.parametrize("args, message", [
    ((0.0, 10, 10), r"^epsilon must be in \(0, inf\), got 0\.0"),
    ((1.0, 0, 10), r"^rounds must be an integer >= 1"),
    ((1.0, 10, 0), r"^iterations must be an integer >= 1"),
])
def test_budgets_reject_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        Budgets(*args)


def test_make_budgets_checks_the_rounds_first():
    with pytest.raises(ValueError, match=r"^rounds must be an integer >= 1"):
        make_budgets(2.0, 0, q=0.015, sigma=1.1, delta=1e-5)
    # before the accountant: an ε that allows no step with rounds = 0 is reported as bad rounds
    with pytest.raises(ValueError, match=r"^rounds must be an integer >= 1"):
        make_budgets(1e-6, 0, q=0.015, sigma=1.1, delta=1e-5)
    b = make_budgets(2.0, 1, q=0.015, sigma=1.1, delta=1e-5)
    assert b.rounds == 1 and b.epsilon == 2.0 and b.iterations >= 1


def test_fixed_tau_stop_accepts_tau_up_to_the_iteration_budget():
    b = Budgets(1.0, 10, 5)
    assert fixed_tau_stop(b, 5) == (1, 5)  # τ = R_c: one round
    assert fixed_tau_stop(b, 2) == (2, 4)  # ⌊5/2⌋ rounds
    assert fixed_tau_stop(Budgets(1.0, 3, 100), 7) == (3, 21)  # R_s binds
    with pytest.raises(ValueError, match=r"^tau must be at most R_c = 5 .*got tau=6"):
        fixed_tau_stop(b, 6)
    with pytest.raises(ValueError, match=r"^tau must be an integer >= 1"):
        fixed_tau_stop(b, 0)


def test_counter_allows_the_last_round_exactly_and_names_what_is_left():
    c = BudgetCounter(Budgets(1.0, 2, 5))
    assert c.allows(1) and c.allows(5) and not c.allows(6)
    c.spend(4)
    assert (c.rounds_left, c.iterations_left) == (1, 1)
    assert c.allows(1) and not c.allows(2)
    with pytest.raises(ValueError, match=r"^tau must be an integer >= 1"):
        c.allows(0)
    with pytest.raises(ValueError, match=r"^tau=2: the round exceeds the budgets \(1 rounds and 1 iterations left\)$"):
        c.spend(2)
    c.spend(1)
    assert (c.rounds_done, c.iterations_done) == (2, 5) and not c.allows(1)
