"""The privacy scorecard provider and the chapter's experiments (results store, determinism)."""

from __future__ import annotations

import pytest

from fedrepro.chapters.privacy_accounting import experiments
from fedrepro.chapters.privacy_accounting import scorecard as privacy_scorecard
from fedrepro.report import scorecard


@pytest.fixture()
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDREPRO_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path / "results"


@pytest.mark.stored
def test_provider_statuses():
    """On the committed paper-profile results (a test never computes them)."""
    items = {it.id: it for it in scorecard.build(privacy_scorecard.table_outcomes())
             if it.ref == privacy_scorecard.TABLE and it.kind == "table-cell"}
    assert len(items) == 10
    last = items.pop("alidpfl-main-Teps-iterations-eps-3p75")
    assert all(it.status == "match" for it in items.values()), {k: it.status for k, it in items.items()}
    assert last.status == "erratum" and last.ours == 1538 and last.evidence.startswith("privacy/")
    assert "1538" in last.reason and "1585" in last.reason


@pytest.mark.stored
def test_provider_string_resolves():
    missing = []
    merged = scorecard.collect_outcomes(("fedrepro.chapters.privacy_accounting.scorecard:outcomes",), missing=missing)
    assert missing == []
    assert len(merged) == 10 + len(privacy_scorecard.CLAIMS)


def test_quick_experiments_are_deterministic(results_dir):
    cfg = experiments.Lemma5CheckConfig(profile="quick")
    first = experiments.run_lemma5_check(cfg)
    assert first == experiments.run_lemma5_check(cfg)
    assert first["violations"] == 0 and first["max_ratio"] <= 1.0
    cal = experiments.load(experiments.CalibrationConfig(profile="quick"))
    assert (results_dir / "privacy" / "dpfedpaq-calibration-quick.json").exists()
    # the paper's calibration fails at γ = 0.2 before ε = 1.5, never at ε₀ < 1
    assert 0.4 < cal["fedpaq_failure_epsilon"][0] < 1.5


def test_bad_profile_and_config():
    with pytest.raises(ValueError, match="profile"):
        experiments.run_proposition4(experiments.Proposition4Config(profile="fast"))
    with pytest.raises(ValueError, match="config"):
        experiments.load(object())


def test_a_count_that_overspends_its_budget_is_an_erratum_of_the_paper():
    from fedrepro.chapters.privacy_accounting import experiments
    from fedrepro.chapters.privacy_accounting.scorecard import overspending_cause

    cfg = experiments.IterationCountsConfig(profile="paper")
    cause, evidence = overspending_cause(3.75 + 2 * cfg.tolerance, 3.75, cfg)
    assert cause == scorecard.ERRATUM_CAUSE and evidence == f"privacy/{cfg.result_name()}.json"
    # within the search's tolerance the count may come from another search: not an error
    assert overspending_cause(3.75 + 0.5 * cfg.tolerance, 3.75, cfg) == (None, "")
