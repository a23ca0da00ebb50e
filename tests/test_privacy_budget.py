"""Number of steps a privacy budget allows: ALI-DPFL's iteration list (§VI)."""

from __future__ import annotations

import numpy as np
import pytest

from fedrepro.privacy import budget, rdp

Q, SIGMA, DELTA = 0.015, 1.1, 1e-5
BUDGETS = (1.55, 1.65, 1.75, 1.85, 2.0, 2.25, 2.5, 2.75, 3.25)
# The paper's list (ALI-DPFL §VI-B, as quoted in the issue) for the budgets above.
PAPER_LIST = (79, 122, 177, 231, 317, 457, 598, 775, 1123)


@pytest.mark.parametrize("orders", [rdp.ALIDPFL_PAPER_ORDERS, rdp.ALIDPFL_CODE_ORDERS], ids=["2..64", "code"])
def test_bisection_reproduces_the_papers_list(orders):
    ours = tuple(budget.max_steps_bisection(e, Q, SIGMA, DELTA, orders, "basic") for e in BUDGETS)
    assert ours == PAPER_LIST  # exact: step counts are integers


def test_last_budget_gives_1538_not_1585():
    """ε = 3.75: the paper prints 1585; the same recipe gives 1538, and 1585 steps overspend."""
    assert budget.max_steps_bisection(3.75, Q, SIGMA, DELTA) == 1538
    eps_1585, order = budget.epsilon_after_steps(1585, Q, SIGMA, DELTA)
    # 5e-4 absolute: pins ε(1585) = 3.806 (basic conversion, orders 2..64) to its 3 decimals.
    assert eps_1585 == pytest.approx(3.8063, abs=5e-4)
    assert eps_1585 > 3.75 + 0.01  # beyond even the bisection's tolerance
    assert order == 7


@pytest.mark.parametrize("conversion", ["basic", "improved"])
def test_exact_count_is_the_largest_within_budget(conversion):
    for target in (1.55, 2.0, 3.75):
        t = budget.max_steps_exact(target, Q, SIGMA, DELTA, conversion=conversion)
        assert budget.epsilon_after_steps(t, Q, SIGMA, DELTA, conversion=conversion)[0] <= target
        assert budget.epsilon_after_steps(t + 1, Q, SIGMA, DELTA, conversion=conversion)[0] > target
        t_bis = budget.max_steps_bisection(target, Q, SIGMA, DELTA, conversion=conversion)
        assert t <= t_bis
        # The bisection stops within 0.01 of the budget (its tolerance) above it.
        assert budget.epsilon_after_steps(t_bis, Q, SIGMA, DELTA, conversion=conversion)[0] <= target + 0.01


def test_improved_conversion_allows_more_steps():
    for target in (1.55, 3.75):
        basic = budget.max_steps_exact(target, Q, SIGMA, DELTA, conversion="basic")
        improved = budget.max_steps_exact(target, Q, SIGMA, DELTA, conversion="improved")
        assert improved > basic


def test_epsilon_grows_with_steps():
    steps = np.arange(1, 3000, 7, dtype=float)
    eps, _ = budget.epsilon_after_steps(steps, Q, SIGMA, DELTA)
    assert np.all(np.diff(eps) > 0)


def test_budget_that_allows_no_step_raises():
    with pytest.raises(ValueError, match="target_epsilon"):
        budget.max_steps_exact(0.05, 1.0, 0.5, DELTA)
    with pytest.raises(ValueError, match="target_epsilon"):
        budget.max_steps_bisection(0.05, 1.0, 0.5, DELTA)


def test_budget_beyond_the_search_interval_raises():
    with pytest.raises(ValueError, match="target_epsilon"):
        budget.max_steps_bisection(1e4, Q, SIGMA, DELTA)


@pytest.mark.parametrize("kwargs,name", [
    (dict(target_epsilon=0.0), "target_epsilon"),
    (dict(q=0.0), "q"),
    (dict(q=1.01), "q"),
    (dict(sigma=0.0), "sigma"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(orders=(1, 2)), "orders"),
])
def test_bad_inputs_name_the_parameter(kwargs, name):
    args = dict(target_epsilon=2.0, q=Q, sigma=SIGMA, delta=DELTA)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        budget.max_steps_exact(**args)
    with pytest.raises(ValueError, match=name):
        budget.max_steps_bisection(**args)
