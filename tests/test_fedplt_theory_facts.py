"""The numbers the Fed-PLT theory page glues into its prose
(:mod:`fedrepro.chapters.fedplt.theory.facts`), recomputed here by a plain loop over the stored
units of the logistic Proposition 1 check, and the statements the prose makes around them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.fedplt.theory import facts, jacobian
from fedrepro.core.cache import read_only
from fedrepro.report import prose

PAGE = Path(__file__).resolve().parents[1] / "book" / "fedplt" / "theory.ipynb"


@pytest.fixture(scope="module")
def stored():
    with read_only():
        return jacobian.load_jacobian("paper"), facts.glued("paper")


def _loop(result, variant):
    """(ratio, rho, ratio at the fixed point) of every applicable instance, one by one."""
    out = []
    for unit in result["units"].values():
        observed, fixed = np.asarray(unit["observed"]), np.asarray(unit["at_fixed_point"])
        bound, ok = np.asarray(unit[f"bound_{variant}"]), np.asarray(unit[f"applicable_{variant}"])
        for i, rho in enumerate(result["rhos"]):
            for j in range(ok.shape[1]):
                if ok[i, j]:
                    out.append((observed[i, j] / bound[i, j], float(rho), fixed[i, j] / bound[i, j]))
    return np.array(out)


@pytest.mark.stored
def test_glued_numbers_are_the_stored_instances(stored):
    result, glued = stored
    printed, corrected = _loop(result, "paper"), _loop(result, "corrected")
    below = printed[:, 1] < 1
    fails = printed[:, 0] > 1 + 1e-9
    assert glued["fedplt-theory-j-failing-below-1"] == str(int(np.sum(fails & below)))
    assert glued["fedplt-theory-j-applicable-below-1"] == str(int(np.sum(below)))
    assert glued["fedplt-theory-j-max-printed"] == f"{printed[:, 0].max():.2f}"
    assert glued["fedplt-theory-j-fixed-median-printed"] == f"{np.median(printed[:, 2]):.2f}"
    assert glued["fedplt-theory-j-fixed-median-corrected"] == f"{np.median(corrected[:, 2]):.2f}"


@pytest.mark.stored
def test_the_statements_around_the_glued_numbers(stored):
    result, _ = stored
    printed, corrected = _loop(result, "paper"), _loop(result, "corrected")
    # "no sampled state gives ||J|| > ||S~||"; "the largest ratio is 1 to within 1e-10"
    assert corrected[:, 0].max() <= 1 + 1e-9 and abs(corrected[:, 0].max() - 1) < 1e-10
    # "reached at rho < 1"; "it fails at none with rho >= 1"; "already at the fixed point"
    assert corrected[np.argmax(corrected[:, 0]), 1] < 1
    assert not np.any((printed[:, 0] > 1 + 1e-9) & (printed[:, 1] >= 1))
    assert np.median(printed[printed[:, 1] < 1, 2]) > 1
    # "at the fixed point itself the ratio is smaller"
    assert np.median(corrected[:, 2]) < 1


@pytest.mark.stored
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(stored):
    _, glued = stored
    assert prose.glue_coverage(PAGE, glued) == (set(), set())
    assert "facts.glued(profile)" in PAGE.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- the errata's counterexamples


@pytest.fixture(scope="module")
def examples():
    from fedrepro.chapters.fedplt.theory import checks as theory

    with read_only():
        ex = theory.load_counterexamples("paper")
        return ex, theory.counterexample_frame(ex), theory.load_checks("paper"), theory.load_stability("paper")


@pytest.mark.stored
def test_counterexample_numbers_are_the_table_the_chapter_shows(stored, examples):
    """Every observed value and printed bound the errata cite is the cell of the chapter's
    table "Every counterexample found" (three significant digits)."""
    _, glued = stored
    _, frame, _, _ = examples
    for name in ("proposition1", "proposition1-contractive", "proposition2", "proposition3", "corollary1",
                 "lemma7-proof", "lemma8", "proposition4", "proposition4-state", "eq11", "lemma3-v1"):
        assert float(glued[f"fedplt-theory-ce-{name}-observed"]) == pytest.approx(float(frame.loc[name, "observed"]),
                                                                                  rel=1e-9), name
        bound = f"fedplt-theory-ce-{name}-bound"
        if bound in glued:
            assert float(glued[bound]) == pytest.approx(float(frame.loc[name, "printed bound"]), rel=1e-9), name
        assert frame.loc[name, "corrected holds"] in (True,), name
        assert float(frame.loc[name, "ratio"]) > 1  # each is a counterexample


@pytest.mark.stored
def test_counterexample_facts_against_the_library_calls_the_errata_name(stored, examples):
    from fedrepro.fedplt import checks
    from fedrepro.fedplt.checks import counterexamples as ce

    _, glued = stored
    ex, _, _, _ = examples
    # Proposition 1 at rho = 0.398: the closed forms of the errata, and S stable
    rho = ex["proposition1"]["instance"]["rho"]
    assert f"{rho:.3g}" == "0.398"
    assert glued["fedplt-theory-ce-proposition1-observed"] == f"{np.sqrt(1 + (1 - rho) ** 2) / (1 + rho):.3g}"
    assert glued["fedplt-theory-ce-proposition1-bound"] == f"{np.sqrt(rho ** 2 + (1 - rho) ** 2) / (1 + rho):.3g}"
    S = np.array([[0.0, rho / (1 + rho)], [0.0, abs(1 - rho) / (1 + rho)]])  # chi = 0, lam = lam_bar = 1
    assert glued["fedplt-theory-ce-prop1-radius"] == f"{max(abs(np.linalg.eigvals(S))):.3f}"
    # at rho = 0.2: the printed ||S|| is below one, the round expands
    c = ce.counterexample_proposition1_not_contractive()
    assert f"{c.instance.rho:.2g}" == "0.2" and c.paper.observed > 1
    r = c.instance.rho
    printed = np.array([[0.0, r / (1 + r)], [0.0, (1 - r) / (1 + r)]])
    corrected = np.array([[0.0, 1 / (1 + r)], [0.0, (1 - r) / (1 + r)]])
    assert glued["fedplt-theory-ce-prop1c-s-printed"] == f"{np.linalg.norm(printed, 2):.3f}"
    assert np.linalg.norm(printed, 2) < 1
    assert glued["fedplt-theory-ce-prop1c-radius-corrected"] == f"{max(abs(np.linalg.eigvals(corrected))):.3f}"
    assert glued["fedplt-theory-ce-proposition1-contractive-observed"] == f"{np.linalg.norm(corrected, 2):.3g}"
    # Corollary 1: the instance runs K = 3 rounds and fails at the first (the errata: "K=3: at round 1")
    assert ex["corollary1"]["instance"]["K"] == 3 and glued["fedplt-theory-ce-cor1-round"] == "1"
    # Lemma 8 at kappa = 2, ell = 3 (the test the errata name pins 0.0784 and 0.0754)
    res = checks.check_lemma8(checks.Lemma8Instance(kappa=2.0, ell=3, sequence="u"))
    assert glued["fedplt-theory-ce-lemma8-k2-observed"] == f"{res.observed:.3g}" == "0.0784"
    assert glued["fedplt-theory-ce-lemma8-k2-bound"] == f"{res.bound:.3g}" == "0.0754"
    # Lemma 8 inside Proposition 3: lam = 1, lam_bar = 4 (the instance's defaults), rho = 3, Ne = 10
    inst = checks.Proposition3Instance(rho=3.0, Ne=10)
    assert (inst.lam, inst.lam_bar) == (1.0, 4.0)
    p3 = checks.check_proposition3(inst)
    assert glued["fedplt-theory-ce-prop3-local"] == f"{p3.details['local_lipschitz']:.5f}"
    assert glued["fedplt-theory-ce-prop3-chi"] == f"{p3.details['chi_Ne']:.5f}"
    assert p3.details["local_lipschitz"] > p3.details["chi_Ne"]
    # eq. (11): gamma = 1.49 (typed) is the middle of the extra range; the printed range ends at 2/(lam + 1/rho)
    e = ex["eq11"]["instance"]
    lo, hi = 2 / (e["lam_bar"] + 1 / e["rho"]), 2 / (e["lam"] + 1 / e["rho"])
    assert f"{(lo + hi) / 2:.3g}" == "1.49" and glued["fedplt-theory-ce-eq11-printed-end"] == f"{hi:.3g}"
    assert glued["fedplt-theory-ce-eq11-observed"] == f"{abs(1 - (lo + hi) / 2 * (e['lam_bar'] + 1 / e['rho'])):.3g}"


@pytest.mark.stored
def test_lemma7_and_proposition4_facts_and_the_statements_around_them(stored, examples):
    _, glued = stored
    ex, _, checks_result, stability = examples
    a = stability["agreement"]
    # "it disagrees with the eigenvalues on all of its draws, the corrected one on none"
    assert a["mismatch_printed"] == a["count"] and a["mismatch_corrected"] == 0
    assert glued["fedplt-theory-ce-lemma7-mismatch-printed"] == glued["fedplt-theory-ce-lemma7-draws"] == f"{a['count']:,}"
    assert glued["fedplt-theory-ce-lemma7-mismatch-corrected"] == "zero"
    # Proposition 4: the released model and all final models hold, with ratios up to the glued one
    units = checks_result["units"]
    ratios = np.concatenate([np.asarray(units[f"proposition4--{v}"]["ratios"], dtype=float) for v in ("agent", "models")])
    assert all(units[f"proposition4--{v}"]["holds_everywhere"] for v in ("agent", "models"))
    top = max(np.nanmax(ratios), *(units[f"proposition4--{v}"]["adversarial_ratio"] for v in ("agent", "models")))
    assert glued["fedplt-theory-ce-prop4-released-max"] == f"{top:.2f}"
    # the errata: on random quadratic instances Proposition 1 fails only for rho < 1; corrected, it holds everywhere
    u = units["proposition1--paper"]
    fails = ~np.asarray(u["holds"], dtype=bool)
    assert fails.any() and (np.asarray(u["rho"])[fails] < 1).all()
    assert units["proposition1--corrected"]["holds_everywhere"]
    # the three corrected bounds of Propositions 2, 3 and Corollary 1 hold, with the glued ratios
    for name in ("proposition2", "proposition3", "corollary1"):
        corr = ex[name]["corrected"]
        assert corr["holds"] and glued[f"fedplt-theory-ce-{name}-corrected-ratio"] == f"{corr['observed'] / corr['bound']:.3f}"


@pytest.mark.stored
def test_footnote6_gaps_against_the_closed_form_prox():
    """The errata's footnote 6 entry: the printed prox (I + rho A)^-1 (v - c) against the
    minimiser (I + rho A)^-1 (v - rho c) written out here (c = -b in the library's sign
    convention), on the instance the entry names; zero at rho = 1 only."""
    from fedrepro.problems import random_quadratic

    with read_only():
        g = facts.glued("paper")
    p = random_quadratic(3, 2, 1.0, 3.0, 5)
    c = -p.b
    V = np.random.default_rng(6).standard_normal((3, 2))
    for rho, name in ((0.5, "05"), (1.0, "1"), (2.0, "2")):
        M = np.linalg.inv(np.eye(2) + rho * p.A)
        gap = float(np.max(np.abs(np.einsum("ijk,ik->ij", M, V - rho * c) - np.einsum("ijk,ik->ij", M, V - c))))
        assert g[f"fedplt-theory-ce-footnote6-gap-{name}"] == (f"{gap:.0f}" if rho == 1.0 else f"{gap:.3g}")
        assert (gap < 1e-14) == (rho == 1.0)
