"""The tables of the head-to-head accountant on task T1 (rounds, messages of the most frequent
client, the calibrated noise multiplier, and the same noise under the Rényi and PRV accountants).

The run (its configs, unit, combine and computing helpers) is
:mod:`fedrepro.experiments.headtohead.calibration`, so that a stored result's code hash covers no view;
its names are re-exported here for the pages and the tests."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fedrepro.experiments.headtohead.calibration import (  # noqa: F401  (re-exported)
    ALGORITHMS,
    CalibrationConfig,
    _prv_epsilon,
    _run,
    load_calibration,
)

__all__ = ["CalibrationConfig", "ALGORITHMS", "load_calibration", "calibration_frame", "calibration_summary"]


def calibration_frame(result: dict[str, Any]) -> Any:
    """One row per (algorithm, ε): rounds within the budget, messages of the most frequent
    client, the accountant's plan, the calibrated noise multiplier, and ε at that noise by PLD
    (the target), RDP and Opacus's PRV accountant."""
    import pandas as pd

    rows = [{"algorithm": r["algorithm"], "target ε": r["epsilon_target"], "rounds": int(r["rounds"]),
             "messages per client": int(r["participations"]),
             "releases (sampling rate)": f"{int(r['compositions'])} (q = {r['sampling_rate']:g})",
             "noise multiplier σ": float(r["noise_multiplier"]), "ε PLD": float(r["epsilon_pld"]),
             "ε RDP": float(r["epsilon_rdp"]),
             "ε PRV (Opacus)": float(r["epsilon_prv"]) if np.isfinite(r["epsilon_prv"]) else "—"}
            for r in result["rows"]]
    return pd.DataFrame(rows).set_index(["algorithm", "target ε"])


def calibration_summary(result: dict[str, Any], epsilon: float = 1.0) -> dict[str, float]:
    """The numbers the page quotes: the range of RDP/PLD over every row, the largest distance
    of Opacus's PRV ε from the target, and at ``epsilon`` the noise multipliers of DPFL (τ = 5)
    and of private FedPAQ with and without its quantizer, of Fed-PLT (N_e = 2), and the
    quantizer's gain in rounds."""
    rows = result["rows"]
    at = {r["algorithm"]: r for r in rows if r["epsilon_target"] == epsilon}
    ratios = [r["epsilon_rdp"] / r["epsilon_pld"] for r in rows]
    prv = [abs(r["epsilon_prv"] - r["epsilon_target"]) for r in rows if np.isfinite(r["epsilon_prv"])]
    flt, quant = at["private FedPAQ (float32)"], at["private FedPAQ (s = 10)"]
    return {"rdp_over_pld_low": min(ratios) - 1, "rdp_over_pld_high": max(ratios) - 1,
            "prv_gap": max(prv) if prv else math.nan,
            "sigma_dpfl": at["DPFL (τ = 5)"]["noise_multiplier"], "sigma_fedpaq": flt["noise_multiplier"],
            "sigma_fedpaq_quantized": quant["noise_multiplier"],
            "sigma_fedplt": at["Fed-PLT (private, N_e = 2)"]["noise_multiplier"],
            "quantizer_rounds": quant["rounds"] / flt["rounds"],
            "quantizer_noise": quant["noise_multiplier"] / flt["noise_multiplier"]}
