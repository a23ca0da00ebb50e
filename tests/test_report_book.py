"""Book helpers: rounding of printed numbers."""

from __future__ import annotations

import math

import pytest

from fedrepro.report import book


def test_roundoff_prints_a_bound_below_the_floor():
    assert book.roundoff(8.82e-16) == "< 1e-10"
    assert book.roundoff(-7.7e-16) == "< 1e-10"
    assert book.roundoff(3.2e-11, floor=1e-12) == "3.2e-11"
    assert book.roundoff(0.0) == "< 1e-10"
    assert book.roundoff(0.1234567) == "0.123"
    assert book.roundoff(math.nan) == "nan" and book.roundoff(math.inf) == "inf"
    assert book.roundoff(7) == "7" and book.roundoff(True) == "True"
    with pytest.raises(ValueError, match="floor"):
        book.roundoff(1.0, floor=0)
