"""The chapter "ALI-DPFL: the theory, checked" (``book/alidpfl/theory.ipynb``).

Every statement check of :mod:`fedrepro.alidpfl.checks` is run once
(:class:`~fedrepro.experiments.alidpfl.theory.TheoryConfig`, stored as
``alidpfl/theory-checks.json``, run by :mod:`fedrepro.experiments.alidpfl.theory`);
:func:`summary_frame` gives one row per statement with the observed value, the bound and the verdict, and the ``figure_*`` functions draw
Theorem 1's gap against h(t), Lemma 3's error against its bound, and x − x³.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fedrepro.alidpfl.checks import lemma3
from fedrepro.experiments.alidpfl.theory import TheoryConfig, load_theory, run_theory  # noqa: F401
from fedrepro.report.book import roundoff

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["TheoryConfig", "run_theory", "load_theory", "summary_frame", "figure_theorem1",
           "figure_lemma3", "figure_x_minus_x3"]


def _shown(x: float) -> str:
    """A value of the summary: an exact 0 (a bound such as h(1) = 0) as ``"0"``, round-off
    (below :data:`fedrepro.report.book.ROUNDOFF_FLOOR`) as ``"< 1e-10"``, else three
    significant digits (:func:`fedrepro.report.book.roundoff`)."""
    return "0" if x == 0 else roundoff(x)


def summary_frame(res: dict[str, Any]) -> pd.DataFrame:
    """One row per statement: what is measured, observed value, bound, verdict."""
    import pandas as pd

    det_ok = bool(np.all(res["theorem1_det_observed"] <= res["theorem1_det_bound"] + 1e-12))
    rows = [
        ("Theorem 1, σ = 0", "max_t gap − h(t)",
         float(np.max(res["theorem1_det_observed"] - res["theorem1_det_bound"])), 0.0,
         "holds" if det_ok else "fails"),
        ("Theorem 1, σ = 1.1", "E‖ŵ(1) − v̂(1)‖ vs h(1)", float(res["theorem1_noisy_observed"][1]),
         float(res["theorem1_noisy_bound"][1]), "fails"
         if res["theorem1_noisy_observed"][1] > res["theorem1_noisy_bound"][1] else "holds"),
    ]
    for i, case in enumerate(lemma3.LEMMA3_CASES):
        obs, bound = res[f"lemma3_{i}"]
        rows.append((f"Lemma 3, {case}", "E‖g̃ − ∇F_i‖ vs 2√dσC/B", obs, bound,
                     "holds" if obs <= bound else "fails"))
    j = res["jensen"]
    rows.append(("Theorem 2, Jensen step", "1/E[X³] ≥ E[1/X³]?", j[0], j[1],
                 "holds" if j[0] >= j[1] else "fails"))
    f = res["final_step"]
    rows.append(("Theorem 2, last step", "E[X] < 1/(Tc) + √3/3?", f[0], f[1],
                 "holds" if f[0] < f[1] else "fails"))
    x = res["x_minus_x3"]
    rows.append(("Theorem 2, max of x − x³", "= √3/3?", x[0], x[1],
                 "fails (loose)" if not math.isclose(x[0], x[1]) else "holds"))
    le = res["lemma6"]
    rows.append(("Lemma 6 with noisy gradient", "F(v⁺) − F(v) ≤ η(βη/2−1)‖g̃‖²?", le[0], le[1],
                 "holds" if le[0] <= le[1] else "fails"))
    d = res["definition3"]
    rows.append(("Definition 3, R ≤ …", "D_α vs an R the printed '≤' allows", d[0], d[2],
                 "fails" if d[2] < d[0] else "holds"))
    c = res["clipping"]
    rows.append(("§III-C clipping as printed", "‖ḡ‖ vs C", c[0], c[1], "fails" if c[0] > c[1] else "holds"))
    e7 = res["eq7"]
    rows.append(("eq. (7) as printed", "residual of eq. (21)", e7[0], 0.0, "fails" if e7[0] > 1e-12 else "holds"))
    e8 = res["eq8"]
    rows.append(("eq. (8) noise as printed", "E‖𝒩(0,σ²C²I)‖ vs Lemma 3's bound", e8[0], e8[1],
                 "fails" if e8[0] > e8[1] else "holds"))
    e11 = res["eq11"]
    rows.append(("eq. (11) as printed", "h(1) vs 0", e11[0], 0.0, "fails" if e11[0] > 1e-12 else "holds"))
    frame = pd.DataFrame(rows, columns=["statement", "checked", "observed", "bound", "verdict"])
    frame["observed"] = frame["observed"].map(_shown)
    frame["bound"] = frame["bound"].map(_shown)
    return frame.set_index("statement")


def figure_theorem1(res: dict[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, title in ((axes[0], "det", "σ = 0"), (axes[1], "noisy", "σ = 1.1, C = 1, B = 10")):
        t = np.arange(len(res[f"theorem1_{key}_observed"]))
        ax.plot(t, res[f"theorem1_{key}_observed"], "o-", label="measured E‖ŵ(t) − v̂(t)‖")
        ax.plot(t, res[f"theorem1_{key}_bound"], "s--", label="h(t) (Theorem 1)")
        ax.set_yscale("symlog", linthresh=1e-2)
        ax.set_xlabel("local iteration t in the interval")
        ax.set_title(title)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_lemma3(res: dict[str, Any]) -> Figure:
    import matplotlib.pyplot as plt

    cases = list(lemma3.LEMMA3_CASES)
    obs = [res[f"lemma3_{i}"][0] for i in range(len(cases))]
    bnd = [res[f"lemma3_{i}"][1] for i in range(len(cases))]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    x = np.arange(len(cases))
    ax.bar(x - 0.2, obs, 0.4, label="measured E‖g̃ − ∇F_i‖")
    ax.bar(x + 0.2, bnd, 0.4, label="2√dσC/B (Lemma 3)")
    ax.set_yscale("log")
    ax.set_xticks(x, [c.replace(", ", ",\n") for c in cases], fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_x_minus_x3() -> Figure:
    import matplotlib.pyplot as plt

    x = np.linspace(0, 1, 400)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(x, x - x ** 3, label="x − x³")
    ax.axhline(2 * math.sqrt(3) / 9, ls="--", c="k", label="2√3/9 (the maximum)")
    ax.axhline(math.sqrt(3) / 3, ls=":", c="r", label="√3/3 (the paper)")
    ax.set_xlabel("x")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
