"""The run modules of two Fed-PLT readings compute at small sizes and refuse bad input:
exact PRS against ``rho`` under the v1 readings (``reading-v1-fig2-prs``) and v2 Table IV's
remaining settings under the tight smoothness constant (``reading-v2-table-iv-tight``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.experiments.fedplt.readings import fig2_prs, tight_table_iv
from fedrepro.experiments.fedplt.tuning import rho_lattice


def test_fig2_prs_computes_a_u_shaped_rate_curve_at_small_size():
    """Exact PRS on the printed class: every rate a contraction in (0, 1) and the smallest one
    inside the lattice (the curve falls then rises; 1e-12 slack for the fit)."""
    config = fig2_prs.Fig2PRSConfig(profile="quick", readings=((5.0, 1.0),), rhos=rho_lattice(-8, 8, 4), K=300)
    out = fig2_prs.run_fig2_prs(config)
    rate = out["prox_rate"][0]
    assert rate.shape == (len(config.rhos),) and np.all((rate > 0) & (rate < 1))
    i = int(np.argmin(rate))
    assert 0 < i < rate.size - 1
    assert out["prox_argmin_rho"][0] == pytest.approx(config.rhos[i], rel=1e-12)
    assert out["prox_min_rate"][0] == pytest.approx(rate[i], rel=1e-12)


def test_fig2_prs_readings_are_the_grids_less_the_main_setting():
    from fedrepro.experiments.fedplt.readings.experiments import MAIN, ReadingsGridConfig

    grid = ReadingsGridConfig.for_profile("paper")
    assert set(fig2_prs.READINGS) == {(w, s) for w in grid.weights for s in grid.scales} - {MAIN}
    assert fig2_prs.Fig2PRSConfig.for_profile("paper").rhos == grid.rhos  # the Fig. 2 lattice


def test_fig2_prs_refuses_bad_input():
    with pytest.raises(ValueError, match="rhos"):
        fig2_prs.Fig2PRSConfig(rhos=(0.1, 1.0))
    with pytest.raises(ValueError, match="readings"):
        fig2_prs.Fig2PRSConfig(readings=(), rhos=(0.1, 1.0, 10.0))
    with pytest.raises(ValueError, match="K"):
        fig2_prs.Fig2PRSConfig(rhos=(0.1, 1.0, 10.0), K=1)


def test_table_iv_tight_completes_table_iv():
    """The two tight runs together cover every timed setting of v2 Table IV exactly once."""
    from fedrepro.experiments.fedplt.comparison import TABLE_IV_COLUMNS, TABLE_IV_NOT_DESIGNED, TABLE_IV_ROWS, unit_name
    from fedrepro.experiments.fedplt.readings.tight_small import SETTINGS

    table = {unit_name(r, "convex", s, p) for r in TABLE_IV_ROWS for s, p in TABLE_IV_COLUMNS.values()
             if (r, s) not in TABLE_IV_NOT_DESIGNED}
    assert set(tight_table_iv.REST) | (set(SETTINGS) & table) == table
    assert not set(tight_table_iv.REST) & set(SETTINGS)


def test_table_iv_tight_runs_one_setting_at_small_size():
    config = tight_table_iv.TightTableIVConfig.for_profile("quick")
    out = tight_table_iv._run_unit(config, "convex-gd-full-Fed-PLT")  # noqa: SLF001
    assert out["name"] == "Fed-PLT" and math.isfinite(out["mean_K"]) and out["mean_K"] >= 1
    assert out["lam_bar"] > 0 and set(out["best_params"]) == {"rho"}


def test_table_iv_tight_refuses_repeated_or_unknown_settings():
    with pytest.raises(ValueError, match="rerun"):
        tight_table_iv.TightTableIVConfig(rerun=("convex-agd-cohort-Fed-PLT",))
    with pytest.raises(ValueError, match="rerun"):
        tight_table_iv.TightTableIVConfig(rerun=("convex-gd-full-Nope",))


def test_local_minimisers_are_scipys():
    """Each agent's minimiser by damped Newton (:func:`~fedrepro.problems.base.newton_solve`,
    row-wise) against scipy's trust-region minimiser of ``f_i`` alone (scipy's gradient
    tolerance 1e-12): equal to 1e-8 relative."""
    from scipy.optimize import minimize

    from fedrepro.experiments.fedplt.readings.experiments import reading_problem
    from fedrepro.experiments.fedplt.readings.noise_reference import local_minimisers

    problem = reading_problem(0.5, 1.0)
    X = local_minimisers(problem, 1e-13)
    for i in range(problem.N):
        def f(x, i=i):
            return float(problem.cost(x[None], agents=[i])[0])

        def g(x, i=i):
            return problem.grad(x[None], agents=[i])[0]

        def h(x, i=i):
            return problem.hessian(x[None], agents=[i])[0]

        ref = minimize(f, np.zeros(problem.n), jac=g, hess=h, method="trust-exact", options={"gtol": 1e-12}).x
        assert np.linalg.norm(X[i] - ref) <= 1e-8 * max(1.0, np.linalg.norm(ref)), i


def test_noise_reference_computes_at_small_size_and_refuses_bad_input():
    """The control (errors against ``x*``) is our measure of the noise floor; against another
    point the error at the smallest noise is that point's distance to ``x*`` up to the control
    (triangle inequality, exact)."""
    from fedrepro.experiments.fedplt.readings.noise_reference import NoiseReferenceConfig, run_noise_reference

    config = NoiseReferenceConfig(values=(1e-6, 1e-2), trials=1)  # the stored paper-profile noise run
    out = run_noise_reference(config)
    control = out["error"]["minimiser of the printed cost"]
    assert control[0] < control[1]
    for name, offset in out["offsets"].items():
        assert abs(out["error"][name][0] - offset) <= control[0] + 1e-12, name
    with pytest.raises(ValueError, match="values"):
        NoiseReferenceConfig(values=())
    with pytest.raises(ValueError, match="trials"):
        NoiseReferenceConfig(trials=0)
    with pytest.raises(ValueError, match="tol"):
        NoiseReferenceConfig(tol=1e-3)


def test_the_tight_runs_together_cover_every_timed_setting_of_tables_ii_to_iv_once():
    from fedrepro.experiments.fedplt.comparison import ComparisonConfig, unit_name
    from fedrepro.experiments.fedplt.readings import tight_tables_ii_iii
    from fedrepro.experiments.fedplt.readings.tight_small import SETTINGS

    runs = [set(SETTINGS), set(tight_table_iv.REST), set(tight_tables_ii_iii.REST)]
    assert sum(len(r) for r in runs) == len(set().union(*runs))  # no setting run twice
    every = {unit_name(a, p, s, c) for a, p, s, c in ComparisonConfig.for_profile("paper").settings()}
    assert set().union(*runs) == every
    with pytest.raises(ValueError, match="rerun"):
        tight_tables_ii_iii.TightTablesIIIIIConfig(rerun=("convex-gd-full-Fed-PLT",))
