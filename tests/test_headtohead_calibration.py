"""The head-to-head accountant page (``fedrepro.chapters.headtohead.calibration``): every
calibration exact, the Rényi cross-check never below PLD, Opacus's PRV accountant within its
error bound, the rounds within the uplink budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedrepro.chapters.headtohead import calibration as C
from fedrepro.headtohead.algorithms import rounds_within


def _check(result, cfg):
    for r in result["rows"]:
        assert r["epsilon_pld"] == pytest.approx(r["epsilon_target"], rel=1e-6)  # exact calibration
        assert r["epsilon_rdp"] >= r["epsilon_pld"] * (1 - 1e-3)  # RDP is an upper bound on the same mechanism
        if np.isfinite(r["epsilon_prv"]):
            assert r["epsilon_prv"] == pytest.approx(r["epsilon_target"], abs=0.02)  # Opacus's eps_error 0.01
        assert r["rounds"] * cfg.clients_per_round * r["message_bits"] <= cfg.budget_bits
        assert r["rounds"] == rounds_within(cfg.budget_bits, cfg.clients_per_round, r["message_bits"])
        assert r["participations"] == math.ceil(r["rounds"] * cfg.clients_per_round / cfg.n_clients)


def test_quick_calibration(results_dir):
    cfg = C.CalibrationConfig.for_profile("quick")
    _check(C._run(cfg), cfg)


def test_config_refuses_bad_epsilons():
    with pytest.raises(ValueError, match="epsilons"):
        C.CalibrationConfig(epsilons=(1.0, -1.0))


@pytest.mark.stored
def test_stored_calibration():
    from fedrepro.core.cache import read_only

    with read_only():
        result = C.load_calibration("paper")
    cfg = C.CalibrationConfig()
    _check(result, cfg)
    assert len(result["rows"]) == len(C.ALGORITHMS) * len(cfg.epsilons)
    s = C.calibration_summary(result)
    assert 0 < s["rdp_over_pld_low"] <= s["rdp_over_pld_high"] and s["quantizer_rounds"] > 1
