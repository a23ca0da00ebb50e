"""The numbers that the prose of the chapter "Privacy accounting" quotes and that no stored
result of the chapter holds, computed here so that the page glues them instead of typing them
(the chapter's other numbers are glued from its stored results by its own cells).

This module is imported by no result's code; ``tests/test_privacy_accounting_facts.py`` checks
its numbers against Opacus's accountant.
"""

from __future__ import annotations

from fedrepro.alidpfl.setting import PAPER

__all__ = ["ALIDPFL_Q", "ALIDPFL_SIGMA", "fractional_gap", "glued"]

#: ALI-DPFL's sampling rate and noise multiplier (the paper's §VI-A; the chapter's setting).
ALIDPFL_Q: float = PAPER.q
ALIDPFL_SIGMA: float = PAPER.sigma


def fractional_gap(q: float = ALIDPFL_Q, sigma: float = ALIDPFL_SIGMA, alpha: float = 1.5) -> float:
    """How much ``dp-accounting``'s RDP of the sampled Gaussian mechanism exceeds the exact value
    at a fractional order (relative; Mironov, Talwar and Zhang §3.3): its series adds the absolute
    values of the alternating terms, so it is an upper bound."""
    from dp_accounting.rdp import rdp_privacy_accountant

    from fedrepro.privacy import rdp

    theirs = float(rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])
    return theirs / rdp.rdp_fractional_order(q, sigma, alpha) - 1.0


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number of the page's prose that this module computes, formatted as the page prints
    it, by glue name (``profile`` is accepted for the pages' common call; these numbers do not
    depend on it)."""
    from fedrepro.report.prose import percent

    return {"privacy-fractional-gap": percent(fractional_gap())}
