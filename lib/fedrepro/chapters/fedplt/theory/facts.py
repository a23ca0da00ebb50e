"""The numbers that the prose of the chapter "Fed-PLT: theory" quotes, computed from the stored
results, so that the page glues them instead of typing them.

Only the logistic check of Proposition 1 (:mod:`fedrepro.chapters.fedplt.theory.jacobian`)
is quoted in prose; its summary (:func:`~fedrepro.chapters.fedplt.theory.jacobian.jacobian_summary`)
is printed right above the text. This module is imported by no result's code.
``tests/test_fedplt_theory_facts.py`` pins the glued values against that summary.
"""

from __future__ import annotations

from typing import Any

__all__ = ["jacobian_facts", "glued"]


def jacobian_facts(profile: str = "paper") -> dict[str, Any]:
    """Proposition 1 on logistic costs, both variants of ``S`` (printed, corrected): the
    summary of :func:`~fedrepro.chapters.fedplt.theory.jacobian.jacobian_summary`, by variant."""
    from fedrepro.chapters.fedplt.theory import jacobian

    return jacobian.jacobian_summary(jacobian.load_jacobian(profile))


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number the page's prose quotes, formatted as the page prints it, by glue name."""
    s = jacobian_facts(profile)
    paper, corrected = s["paper"], s["corrected"]
    return {
        "fedplt-theory-j-fixed-median-corrected": f"{corrected['median_ratio_fixed_point']:.2f}",
        "fedplt-theory-j-failing-below-1": str(paper["failing_rho_below_1"]),
        "fedplt-theory-j-applicable-below-1": str(paper["applicable_rho_below_1"]),
        "fedplt-theory-j-max-printed": f"{paper['max_ratio']:.2f}",
        "fedplt-theory-j-fixed-median-printed": f"{paper['median_ratio_fixed_point']:.2f}",
    }
