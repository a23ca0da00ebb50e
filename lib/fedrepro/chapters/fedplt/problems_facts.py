"""The numbers of the chapter "Fed-PLT: the test problems" that the errata page cites, computed
from the stored result of :func:`fedrepro.chapters.fedplt.problems.load`, so that the pages
glue them instead of typing them.

Only v1's stated constants (v1 §VII, the errata entry on the moduli of the logistic costs) are
quoted: the measurement of :func:`~fedrepro.chapters.fedplt.problems.v1_strong_convexity` that
the chapter stores and shows in its table "v1's stated constants against sampled curvatures".
This module is imported by no result's code; ``tests/test_fedplt_problems_facts.py`` pins the
glued values against that table. The paper's stated values (``eps = 5``) stay typed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["v1_constants_facts", "glued"]


def v1_constants_facts(profile: str = "paper") -> dict[str, Any]:
    """The stored v1 finding: the smallest Hessian eigenvalue over the agents far from the
    origin (smallest and largest over the sampled points), at ``x = 0`` and at ``x*``, the
    smallest eigenvalue of the sum's Hessian far out, ``eps / N``, the stated smoothness modulus
    ``max_i q_i/4 + eps``, and the corrected loose and tight ones."""
    from fedrepro.chapters.fedplt import problems

    f = problems.load(profile)["v1_finding"]
    keys = ("far_min", "far_max", "at_zero", "at_x_star", "far_total_min", "far_total_max", "corrected_lam",
            "stated_lam_bar", "corrected_lam_bar_loose", "corrected_lam_bar_tight", "radius")
    return {k: float(f[k]) for k in keys} | {"points": int(len(f["agent_min_eig"]))}


def glued(profile: str = "paper") -> dict[str, str]:
    """Every number that another page cites from this chapter, formatted as it prints it."""
    v = v1_constants_facts(profile)
    return {
        "fedplt-problems-v1-far-min": f"{v['far_min']:.3g}",
        "fedplt-problems-v1-at-zero": f"{v['at_zero']:.3g}",
        "fedplt-problems-v1-far-total-min": f"{v['far_total_min']:.3g}",
        "fedplt-problems-v1-eps-over-n": f"{v['corrected_lam']:.3g}",
        "fedplt-problems-v1-stated-lam-bar": f"{v['stated_lam_bar']:.3g}",
        "fedplt-problems-v1-loose-lam-bar": f"{v['corrected_lam_bar_loose']:.3g}",
        "fedplt-problems-v1-tight-lam-bar": f"{v['corrected_lam_bar_tight']:.3g}",
    }
