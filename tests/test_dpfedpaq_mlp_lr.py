"""Claim C48 with the network's step read (``fedrepro.chapters.dpfedpaq.experiments.mlp_lr``):
the runs differ from the chapter's network runs by the step only (same seeds and streams), the
proper step is chosen by the default run's loss alone, and the scorecard's cause follows the
verdict at that step (both outcomes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.chapters.dpfedpaq.experiments import mlp, mlp_lr, mlp_lr_effects
from fedrepro.chapters.dpfedpaq.experiments import scorecard as sc


def test_steps_other_than_the_chapters_are_refused_and_names_say_the_step():
    with pytest.raises(ValueError, match="lr0 must be one of"):
        mlp_lr.MLPLearningRateConfig(profile="paper", lr0=mlp_lr.CHAPTER_LEARNING_RATE)
    assert mlp_lr.MLPLearningRateConfig(lr0=0.03).result_name() == "experiments-mlp-lr0p03"
    assert mlp_lr.MLPLearningRateConfig(profile="quick", lr0=0.3).result_name() == "experiments-mlp-lr0p3-quick"
    assert mlp_lr.MLPLearningRateConfig(lr0=1.0).units() == mlp.MLPConfig().units()
    with pytest.raises(ValueError, match="unknown unit"):
        mlp_lr._train(mlp_lr.MLPLearningRateConfig(profile="quick"), "mlp-nothing--seed0")


def test_runs_differ_from_the_chapters_by_the_step_only(results_dir):
    # with the chapter's step substituted, the reading's unit is the chapter's unit, bit for bit
    cfg = mlp_lr.MLPLearningRateConfig(profile="quick", lr0=0.3)
    unit = mlp.MLPConfig(profile="quick").units()[1]
    chapter = mlp.run_unit(mlp.MLPConfig(profile="quick"), unit)
    object.__setattr__(cfg, "lr0", mlp_lr.CHAPTER_LEARNING_RATE)  # bypass the check: the chapter's step
    np.testing.assert_array_equal(mlp_lr._train(cfg, unit)["loss"], chapter["loss"])
    object.__setattr__(cfg, "lr0", 0.3)
    other = mlp_lr._train(cfg, unit)
    assert not np.array_equal(other["loss"], chapter["loss"])
    np.testing.assert_array_equal(other["rounds"], chapter["rounds"])


def test_quick_profile_verdicts_and_proper_step(results_dir):
    losses = mlp_lr_effects.final_losses("quick")
    assert sorted(losses) == [0.1, 0.3]
    proper = mlp_lr_effects.proper_learning_rate("quick")
    assert losses[proper] == min(v for v in losses.values() if math.isfinite(v))
    v = mlp_lr_effects.verdicts("quick")
    assert set(v) == {0.1, 0.3} and all(status in ("match", "miss") for status, _ in v.values())


def _fake(monkeypatch, statuses, losses):
    monkeypatch.setattr(mlp_lr_effects, "final_losses", lambda profile: losses)
    monkeypatch.setattr(mlp_lr_effects, "verdicts", lambda profile: {lr: (s, "why") for lr, s in statuses.items()})


def test_the_cause_is_the_step_when_the_claim_holds_at_the_proper_step(monkeypatch):
    _fake(monkeypatch, {0.1: "miss", 0.3: "match", 1.0: "miss"}, {0.1: 0.9, 0.3: 0.7, 1.0: math.nan})
    cause, evidence, why = sc.learning_rate_cause("paper")
    assert cause == "unstated-setting" and evidence == "dpfedpaq/experiments-mlp-lr0p3.json"
    assert "proper step, the one with the lowest final loss, is eta0 = 0.3" in why and "C48 holds" in why


def test_a_claim_holding_only_at_an_improper_step_stays_open(monkeypatch):
    # the proper step is chosen by the loss, never by the claim: holding at 1.0 does not count
    _fake(monkeypatch, {0.1: "miss", 0.3: "miss", 1.0: "match"}, {0.1: 0.9, 0.3: 0.7, 1.0: 0.8})
    cause, evidence, why = sc.learning_rate_cause("paper")
    assert cause == "open" and evidence == "" and why.startswith("tried") and "eta0 = 1: final loss" in why


def _glued() -> dict[str, str]:
    from fedrepro.chapters.dpfedpaq.experiments import facts
    from fedrepro.core.cache import read_only

    with read_only():
        return facts.glued("paper")


def _cell(cell_id: str) -> str:
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parents[1] / "book" / "dpfedpaq" / "experiments.ipynb").read_text())
    return "".join(next(c for c in nb["cells"] if c.get("id") == cell_id)["source"])


@pytest.mark.stored
def test_stored_steps_support_the_page():
    # the page's reading: the proper step is the largest tried, C48 misses at every step, and
    # the coarsest quantizer ends 29 to 43 % above the unquantized run (the numbers it quotes)
    from fedrepro.core.cache import read_only

    with read_only():
        proper = mlp_lr_effects.proper_learning_rate("paper")
        status = {lr: v[0] for lr, v in mlp_lr_effects.verdicts("paper").items()}
        gaps = mlp_lr_effects.quantizer_gaps("paper")
        cause, evidence, why = sc.learning_rate_cause("paper")
    assert proper == max(mlp_lr.LEARNING_RATES["paper"]) and set(status.values()) == {"miss"}
    # the page glues these numbers (experiments.facts); each cited glue is this computation's text
    text, glued = _cell("mlp-lr-prose"), _glued()
    assert glued["dpfedpaq-ex-lr-gaps"] == f"{100 * min(gaps.values()):.0f} to {100 * max(gaps.values()):.0f} %"
    assert glued["dpfedpaq-ex-proper-lr"] == f"{proper:g}"
    assert "{glue:text}`dpfedpaq-ex-lr-gaps`" in text and "$\\eta_0=${glue:text}`dpfedpaq-ex-proper-lr`" in text
    assert cause == "open" and evidence == "" and "eta0 = 1" in why


@pytest.mark.stored
def test_stored_network_numbers_quoted_by_the_page():
    # the numbers the network section quotes, recomputed from the stored runs
    from fedrepro.chapters.dpfedpaq.experiments import mlp_effects
    from fedrepro.chapters.dpfedpaq.experiments.runs import load_runs
    from fedrepro.core.cache import read_only

    with read_only():
        rows = mlp_effects.effects(load_runs("paper"), mlp.load_mlp_runs("paper"), "paper")
    text = " ".join(_cell("58b50fc6").split())
    flat = next(r for r in rows if r["direction"] == "flat")
    soft, net = flat["softmax"].mean(axis=1), flat["network"].mean(axis=1)
    eps = next(r for r in rows if r["effect"] == "eps" and r["metric"] == "loss")
    glued = _glued()
    expected = {"mlp-eps-loss": f"{eps['network'].mean(axis=1)[0]:.2f}",
                "softmax-eps-loss": f"{eps['softmax'].mean(axis=1)[0]:.2f}",
                "mlp-s1-gap": f"{100 * (net[0] / net[-1] - 1):.0f} %", "mlp-s1-loss": f"{net[0]:.2f}",
                "mlp-none-loss": f"{net[-1]:.3f}", "mlp-s10-gap": f"{100 * (net[1] / net[-1] - 1):.0f} %",
                "softmax-s1-gap": f"{100 * (soft[0] / soft[-1] - 1):.0f} %",
                "softmax-s10-gap": f"{100 * (soft[1] / soft[-1] - 1):.1f} %"}
    for name, value in expected.items():
        assert glued[f"dpfedpaq-ex-{name}"] == value, name
        assert f"{{glue:text}}`dpfedpaq-ex-{name}`" in text, name
