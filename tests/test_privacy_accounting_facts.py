"""The numbers the privacy-accounting page glues from
:mod:`fedrepro.chapters.privacy_accounting.facts`, checked against Opacus's accountant."""

from __future__ import annotations

from pathlib import Path

import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from opacus.accountants.analysis import rdp as opacus_rdp

from fedrepro.chapters.privacy_accounting import facts
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "privacy-accounting.ipynb"


def test_the_fractional_gap_is_dp_accountings_excess_over_opacus():
    theirs = float(rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(0.015, 1.1, [1.5])[0])
    exact = float(opacus_rdp._compute_rdp(0.015, 1.1, 1.5))
    # Opacus sums the alternating series with its signs; our value equals it to 1e-7 (the page)
    assert facts.fractional_gap() == pytest.approx(theirs / exact - 1, rel=1e-5)
    assert facts.glued()["privacy-fractional-gap"] == prose.percent(theirs / exact - 1)
    assert theirs / exact - 1 > 0.01  # the page: an upper bound, not an equality


def test_every_glue_the_page_cites_is_glued():
    assert prose.glue_coverage(PAGE, facts.glued()) == (set(), set())
