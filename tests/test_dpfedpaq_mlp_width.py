"""Claim C48's quantizer effect with a network of the softmax model's size
(``fedrepro.chapters.dpfedpaq.experiments.mlp_width``): the narrow width is the widest with no
more parameters than the softmax model (counted by torch), the runs differ from the chapter's
by the width and step only, and the scorecard's cause follows the decision (every branch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.chapters.dpfedpaq.experiments import mlp, mlp_width, mlp_width_effects
from fedrepro.chapters.dpfedpaq.experiments import scorecard as sc
from fedrepro.dpfedpaq.mlp import dimension


def _torch_count(hidden: int | None) -> int:
    layers = ([torch.nn.Linear(784, 10)] if hidden is None else
              [torch.nn.Linear(784, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 10)])
    return sum(p.numel() for p in torch.nn.Sequential(*layers).parameters())


def test_parameter_counts_agree_with_torch_and_the_narrow_width_is_the_widest_that_fits():
    for hidden in (1, 9, 10, 64):
        assert dimension(hidden) == _torch_count(hidden)
    assert mlp_width.softmax_parameters() == _torch_count(None)
    h = mlp_width.NARROW_HIDDEN
    assert dimension(h) <= mlp_width.softmax_parameters() < dimension(h + 1)


def test_bad_configs_are_refused_and_names_say_width_and_step():
    with pytest.raises(ValueError, match="lr0 must be one of"):
        mlp_width.MLPWidthConfig(lr0=0.5)
    with pytest.raises(ValueError, match="hidden must be a positive integer"):
        mlp_width.MLPWidthConfig(hidden=0)
    assert mlp_width.MLPWidthConfig().result_name() == "experiments-mlp-width9-lr1"
    assert mlp_width.MLPWidthConfig(profile="quick", lr0=0.3).result_name() == "experiments-mlp-width9-lr0p3-quick"
    assert len(mlp_width.MLPWidthConfig().units()) == 3 * 3  # the three quantizer levels on three seeds
    with pytest.raises(ValueError, match="unknown unit"):
        mlp_width._train(mlp_width.MLPWidthConfig(profile="quick", lr0=0.1), "mlp-nothing--seed0")


def test_at_the_chapters_width_and_step_a_unit_is_the_chapters_unit(results_dir):
    quick = mlp.PROFILE_SETTINGS["quick"]
    cfg = mlp_width.MLPWidthConfig(profile="quick", hidden=quick["hidden"], lr0=0.1)
    unit = cfg.units()[1]
    assert unit in mlp.MLPConfig(profile="quick").units()
    np.testing.assert_array_equal(mlp_width._train(cfg, unit)["loss"],
                                  mlp.run_unit(mlp.MLPConfig(profile="quick"), unit)["loss"])
    narrow = mlp_width._train(mlp_width.MLPWidthConfig(profile="quick", lr0=0.1),
                              unit.replace(f"mlp{quick['hidden']}-", f"mlp{mlp_width.NARROW_HIDDEN}-"))
    assert np.all(np.isfinite(narrow["loss"])) and narrow["loss"].shape == (len(narrow["rounds"]),)


def _fake(monkeypatch, holds: bool, others=()):
    w = {"lr0": 1.0, "hidden": 9, "parameters": {"softmax": 7850, "network": 50890, "narrow": 7165},
         "decided": [(holds, True, holds, "s: little impact over [1, None]: network [1, 0.9]")],
         "holds": holds, "others": list(others)}
    monkeypatch.setattr(mlp_width_effects, "width_effects", lambda profile: w)


def test_the_cause_follows_the_narrow_network(monkeypatch):
    _fake(monkeypatch, holds=True)
    cause, evidence, why = sc.width_cause("paper")
    assert (cause, evidence) == ("unstated-setting", "dpfedpaq/experiments-mlp-width9-lr1.json")
    assert "narrow network [1, 0.9]" in why and "7,165 parameters" in why
    _fake(monkeypatch, holds=False)
    cause, evidence, why = sc.width_cause("paper")
    assert (cause, evidence) == ("open", "") and why.startswith("tried") and "does not explain" in why
    _fake(monkeypatch, holds=True, others=["E: final loss decreasing in E at fixed K"])
    cause, evidence, why = sc.width_cause("paper")
    assert (cause, evidence) == ("open", "") and "other than the quantizer's" in why


@pytest.mark.stored
def test_stored_narrow_network_supports_the_page():
    """The page: at the softmax model's size the coarsest quantizer still ends far above the
    unquantized run (beyond the 10 % of 'little impact', about as far as the chapter's
    network), so the narrow network is among what was tried before the block size
    (``tests/test_dpfedpaq_mlp_block.py``) explains C48."""
    from fedrepro.chapters.dpfedpaq.experiments import mlp_effects
    from fedrepro.chapters.dpfedpaq.experiments.scorecard import outcomes
    from fedrepro.core.cache import read_only

    with read_only():
        w = mlp_width_effects.width_effects("paper")
        out = outcomes()["dpfedpaq-main-C48"]
    gap = {k: float(np.mean(w["loss"][k][0]) / np.mean(w["loss"][k][-1]) - 1) for k in ("narrow", "network")}
    assert gap["narrow"] > mlp_effects.FLAT_TOLERANCE and abs(gap["narrow"] - gap["network"]) < 0.1
    assert not w["holds"] and not w["others"]
    assert out.status == "miss" and "tried a network of 9 hidden units" in out.reason
    assert "so the model's size does not explain it" in out.reason
