"""The numbers the DP-FedPAQ experiments and theory pages glue into their prose
(:mod:`fedrepro.chapters.dpfedpaq.experiments.facts`, :mod:`fedrepro.chapters.dpfedpaq.theory.facts`):
the formatting helpers, each glued number against the table the page shows beside it (built by
other code of the chapter) or an independent recomputation, and the statements the prose makes
around them."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fedrepro.chapters.dpfedpaq.experiments import (
    claims,
    fig4_readings,
    mlp,
    mlp_effects,
    mlp_lr,
    mlp_lr_effects,
    mlp_width_effects,
    runs,
    tables,
)
from fedrepro.chapters.dpfedpaq.experiments import facts as ex_facts
from fedrepro.chapters.dpfedpaq.theory import budget as budget_exp
from fedrepro.chapters.dpfedpaq.theory import checks as checks_exp
from fedrepro.chapters.dpfedpaq.theory import facts as th_facts
from fedrepro.chapters.dpfedpaq.theory import report
from fedrepro.chapters.dpfedpaq.theory import theorem as theorem_exp
from fedrepro.core.cache import read_only
from fedrepro.dpfedpaq.mlp import dimension
from fedrepro.dpfedpaq.quantizer import bits
from fedrepro.report import prose

BOOK = Path(__file__).resolve().parents[1] / "book" / "dpfedpaq"
PAGES = {"experiments": (BOOK / "experiments.ipynb", ex_facts), "theory": (BOOK / "theory.ipynb", th_facts)}


def _floats(text: str) -> list[float]:
    """The numbers of the first ``[a, b, ...]`` list in ``text``."""
    return [float(x) for x in re.search(r"\[([^\]]*)\]", text).group(1).split(",")]


def test_link3_root_solves_the_last_link_of_eq15():
    r = th_facts.link3_root()
    assert math.expm1(r) == pytest.approx(2 * r, rel=1e-12)
    assert math.expm1(r - 1e-3) < 2 * (r - 1e-3) and math.expm1(r + 1e-3) > 2 * (r + 1e-3)


# ---- every glue the pages cite is glued, and every glued name is cited

@pytest.fixture(scope="module")
def glued():
    with read_only():
        return {page: mod.glued("paper") for page, (_, mod) in PAGES.items()}


@pytest.mark.stored
@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_glue_the_page_cites_is_glued_and_every_glued_number_is_cited(glued, page):
    nb = json.loads(PAGES[page][0].read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    cited = set(re.findall(r"\{glue:text\}`([a-z0-9-]+)`", text))
    by_name = set(re.findall(r'(?:book|show)\.glue\("([a-z0-9-]+)"', code))
    names = set(glued[page])
    # a name counts as cited when this page or another page of the book (the index, the errata) cites it
    missing, uncited = prose.glue_coverage(PAGES[page][0], names)
    assert not uncited, f"glued but not cited: {sorted(uncited)}"
    assert not missing and cited <= names | by_name, f"cited but not glued: {sorted(missing | (cited - names - by_name))}"
    assert "facts.glued(profile)" in code
    other = set(glued["theory" if page == "experiments" else "experiments"])
    assert not names & other


# ---- the experiments page

@pytest.fixture(scope="module")
def softmax_runs():
    with read_only():
        return runs.load_runs("paper")


@pytest.fixture(scope="module")
def verdicts(softmax_runs):
    with read_only():
        return claims.verdicts(softmax_runs, "paper")


@pytest.mark.stored
def test_no_noise_losses_are_c09s_evidence(glued, verdicts):
    g = glued["experiments"]
    status, why = verdicts["dpfedpaq-main-C09"]
    clip = _floats(why.split("clip ", 1)[1])
    gamma = _floats(why.split("gamma ", 1)[1])
    assert g["dpfedpaq-ex-noclip-loss"] == f"{clip[0]:.2f}" and g["dpfedpaq-ex-unclipped-loss"] == f"{clip[-1]:.2f}"
    # the text: clipping alone costs a lot, the subsampling ratio has no visible effect, C09 fails
    assert clip[0] > 3 * clip[-1]
    assert np.ptp(gamma) / np.mean(gamma) < 0.01 and status == "miss"


@pytest.mark.stored
def test_uplink_ratio_is_eq11_and_s1_costs_less_than_ten_percent(glued, softmax_runs):
    assert glued["experiments"]["dpfedpaq-ex-uplink-ratio"] == f"{bits(7850, None) / bits(7850, 1):.0f}"
    with read_only():
        frame = tables.final_loss_frame(softmax_runs, "paper", "3a")
    loss = frame["final loss (mean)"]
    for algo in ("vanilla", "private"):
        assert 0 < loss[f"s=1, {algo}"] / loss[f"s=None, {algo}"] - 1 < 0.10


@pytest.mark.stored
def test_valid_sensitivity_facts_are_the_valid_summary_and_tables(glued, softmax_runs):
    g = glued["experiments"]
    with read_only():
        summary = tables.valid_summary(softmax_runs, "paper").splitlines()
        valid = tables.valid_calibration_frame(softmax_runs, "paper")
    assert summary[1].endswith(": " + g["dpfedpaq-ex-valid-ratio"])
    assert g["dpfedpaq-ex-valid-trains-eps"] == prose.order_of_magnitude(float(summary[0].rsplit(": ", 1)[1]))
    ln10 = math.log(10)
    eps = valid.index.to_numpy(dtype=float)
    per_step = valid["loss per_step"].to_numpy(dtype=float)
    first = float(g["dpfedpaq-ex-per-step-eps"])
    assert (per_step[eps >= first] < ln10).all() and (per_step[eps < first] > ln10).all()
    authors = valid["‖z‖/‖u‖ authors_code"].to_numpy(dtype=float)
    first = float(g["dpfedpaq-ex-authors-below-eps"])
    assert (authors[eps >= first] < 1).all() and (authors[eps < first] > 1).all()
    # the text: two to three orders of magnitude at every eps; the valid runs end far above ln 10
    rigorous = valid["‖z‖/‖u‖ rigorous"].to_numpy(dtype=float)
    assert ((rigorous > 100) & (rigorous < 1000)).all()
    assert (valid["loss rigorous"].to_numpy(dtype=float) > 10 * ln10).all()


@pytest.mark.stored
def test_growth_rescues_every_claim_about_fig2_and_none_of_fig4(glued, verdicts):
    with read_only():
        frame = tables.growth_frame(verdicts, "paper")
    rescued = set(frame.index[(frame["authors' noise"] == "miss") & (frame["per-step noise"] == "match")])
    assert rescued == {"F2b", "F2c", "F2d", "C22", "C25", "C26", "C28", "C39", "C46"}
    assert glued["experiments"]["dpfedpaq-ex-growth-rescued"] == prose.number_word(len(rescued))
    fig4 = ["F4b", "F4c", "F4d", "C36", "C40", "C41", "C42", "C47"]
    assert (frame.loc[fig4, "per-step noise"] == "miss").all()


@pytest.mark.stored
def test_fig4_readings_statements(glued, verdicts):
    with read_only():
        frame = tables.fig4_readings_frame(verdicts, "paper")
        ev = fig4_readings.all_verdicts("paper")[(1.0, "authors_code")]["dpfedpaq-main-C40"][1]
    g = glued["experiments"]
    m = re.search(r"holds for (\d+) of (\d+) seeds", ev)
    assert g["dpfedpaq-ex-c40-seeds-hold"] == prose.number_word(int(m.group(1))) and 0 < int(m.group(1)) < int(m.group(2))
    assert g["dpfedpaq-ex-seeds"] == prose.number_word(runs.PROFILE_SETTINGS["paper"]["seeds"])
    authors = {float(re.search(r"ε = ([\d.]+)", r).group(1)): frame.loc[r] for r in frame.index if "authors'" in r}
    # the text: C40 holds under the authors' code at eps = 1 and 0.5, not at 1.5 or 2; C41, C42 from 0.5 up
    assert [authors[e]["C40"] for e in (0.5, 1.0, 1.5, 2.0)] == ["match", "match", "miss", "miss"]
    assert all(authors[e][c] == "match" for e in (0.5, 1.0, 1.5, 2.0) for c in ("C41", "C42"))
    # the text: at eps = 0.1, C = 0.5 is the best clipping at every gamma; C47 fails under every reading
    assert all(r["rank of C = 0.5 over γ (C40)"] == "[1, 1, 1, 1]" for i, r in frame.iterrows() if "ε = 0.1," in i)
    assert (frame["C47"] == "miss").all()
    # the text: under Algorithm 2, from eps = 0.5 up C = 0.5 is the worst at nearly every gamma and
    # gamma never turns it from the worst into the best (the most it moves is to second, at eps = 0.5)
    alg2 = [json.loads(r["rank of C = 0.5 over γ (C40)"]) for i, r in frame.iterrows()
            if "Alg. 2" in i and "ε = 0.1," not in i]
    assert all(ranks[0] == 4 and min(ranks) >= 2 and ranks.count(4) >= 3 for ranks in alg2)


@pytest.mark.stored
def test_authors_code_emulation_ends_below_algorithm2(softmax_runs):
    with read_only():
        loss = tables.authors_profile_frame(softmax_runs, "paper")["final loss (mean)"]
    for e in ("0.1", "1"):
        assert loss[f"eps={e}, authors_code semantics †"] < loss[f"eps={e}, paper semantics †"]
    assert loss["eps=1, authors_code semantics †"] < loss["vanilla"]  # the text: even below the vanilla curve


@pytest.fixture(scope="module")
def mlp_tables(softmax_runs):
    with read_only():
        net = mlp.load_mlp_runs("paper")
        return (mlp_effects.effects_frame(softmax_runs, net, "paper"), mlp_effects.verdict(softmax_runs, "paper"),
                mlp_width_effects.width_frame("paper"), net)


@pytest.mark.stored
def test_mlp_facts_are_the_effects_table(glued, mlp_tables):
    g = glued["experiments"]
    frame, (status, why), width, net = mlp_tables
    eps_row = frame.loc["eps: final loss decreasing in eps"]
    assert g["dpfedpaq-ex-mlp-eps-loss"] == f"{_floats(eps_row['network (mean)'])[0]:.2f}"
    assert g["dpfedpaq-ex-softmax-eps-loss"] == f"{_floats(eps_row['softmax (mean)'])[0]:.2f}"
    s_row = frame.loc["s: final loss decreasing in s (coarser quantizer is worse)"]
    s_net, s_soft = _floats(s_row["network (mean)"]), _floats(s_row["softmax (mean)"])
    assert g["dpfedpaq-ex-mlp-s1-loss"] == f"{s_net[0]:.3g}" and g["dpfedpaq-ex-mlp-none-loss"] == f"{s_net[-1]:.3g}"
    for key, means in (("mlp", s_net), ("softmax", s_soft)):  # to the table's three digits
        pct = float(g[f"dpfedpaq-ex-{key}-s1-gap"].removesuffix(" %"))
        assert pct == pytest.approx(100 * (means[0] / means[-1] - 1), abs=1.2)
    # s = 10 against the unquantized run, recomputed from the stored runs of both models
    with read_only():
        soft = runs.load_runs("paper")
    final = lambda run: float(np.mean(np.asarray(run["loss"], dtype=float)[:, -1]))  # noqa: E731
    for key, get in (("mlp", lambda s: net[mlp.mlp_spec("paper", s=s).name()]),
                     ("softmax", lambda s: soft[runs.spec("paper", s=s).name()])):
        assert g[f"dpfedpaq-ex-{key}-s10-gap"] == prose.percent(final(get(10)) / final(get(None)) - 1)
    # the C48 evidence states the largest gap to one more digit
    gaps = [float(x) for x in re.findall(r"largest gap ([\d.]+) %", why)]
    assert g["dpfedpaq-ex-softmax-s1-gap"] == f"{gaps[0]:.0f} %" and g["dpfedpaq-ex-mlp-s1-gap"] == f"{gaps[1]:.0f} %"
    # five of the six effects carry over; the quantizer's "little impact" is the one that does not
    assert int(frame["same"].sum()) == 5 and len(frame) == 6 and why.startswith("1 of 6 effects differ: s: little impact")
    assert (g["dpfedpaq-ex-mlp-carried"], g["dpfedpaq-ex-mlp-effects"]) == ("Five", "six") and status == "miss"
    # the sizes: the width table beside the narrow network
    params = {k: int(v.replace(",", "")) for k, v in width["parameters"].items()}
    d_soft, d_net, d_narrow = (params[k] for k in ("softmax regression", "network, 64 hidden units (the chapter's)",
                                                    "network, 9 hidden units"))
    assert (d_soft, d_net, d_narrow) == (785 * 10, 785 * 64 + 65 * 10, 785 * 9 + 10 * 10) == (7850, dimension(64), 7165)
    assert g["dpfedpaq-ex-mlp-d"] == "50,890" and g["dpfedpaq-ex-softmax-d"] == "7,850" and g["dpfedpaq-ex-narrow-d"] == "7,165"
    assert g["dpfedpaq-ex-mlp-size-ratio"] == f"{d_net / d_soft:.1f}" and g["dpfedpaq-ex-mlp-sqrt-ratio"] == f"{(d_net / d_soft) ** 0.5:.1f}"


@pytest.mark.stored
def test_the_network_climbs_back_at_the_smallest_epsilon(glued, mlp_tables):
    net = mlp_tables[3]
    run = net[mlp.mlp_spec("paper", eps=0.1).name()]
    rounds, curve = np.asarray(run["rounds"]), np.asarray(run["loss"], dtype=float).mean(axis=0)
    k = int(glued["experiments"]["dpfedpaq-ex-mlp-lowest-round"])
    after = curve[rounds >= k]
    assert curve[rounds == k][0] == curve.min()
    assert (np.diff(after[1:]) > 0).all() and after[-1] > after[0] + 0.5  # rises from the next evaluation on


@pytest.mark.stored
def test_mlp_lr_facts_are_the_step_table(glued):
    g = glued["experiments"]
    with read_only():
        frame = tables.mlp_lr_frame("paper")
        steps = mlp_lr_effects.verdicts("paper")
    pct = [int(x.removesuffix(" %")) for x in frame["s = 1 above unquantized"]]
    assert g["dpfedpaq-ex-lr-gaps"] == f"{min(pct)} to {max(pct)} %"
    proper = frame.index[frame["proper"].astype(bool)]
    assert len(proper) == 1 and proper[0] == g["dpfedpaq-ex-proper-lr"]
    # the text: the proper step is the largest tried, and the five other effects carry over at every step
    assert float(g["dpfedpaq-ex-proper-lr"]) == max(mlp_lr.LEARNING_RATES["paper"])
    assert all(why.startswith("1 of 6 effects differ: s: little impact") for _, why in steps.values())
    assert min(pct) > 10


# ---- the theory page

@pytest.fixture(scope="module")
def stored_theory():
    with read_only():
        return checks_exp.load_checks("paper"), theorem_exp.load_theorem("paper"), budget_exp.load_budget("paper")


@pytest.mark.stored
def test_quantizer_facts_are_the_quantizer_table(glued, stored_theory):
    g = glued["theory"]
    frame = report.quantizer_frame(stored_theory[0]).set_index("s")
    q = "q = min(d/s^2, sqrt(d)/s)"
    assert g["dpfedpaq-th-q-s10"] == frame.loc[10, q] and g["dpfedpaq-th-q-s1"] == frame.loc[1, q]
    assert g["dpfedpaq-th-sqrt-d"] == f"{math.sqrt(7850):.1f}" == frame.loc[1, q]
    gauss = frame.loc[10, "E||Q(v)-v||^2/||v||^2, random v"]
    assert g["dpfedpaq-th-gauss-s10"] == gauss
    assert float(g["dpfedpaq-th-gauss-of-q"]) == pytest.approx(float(gauss) / float(frame.loc[10, q]), abs=0.006)
    # the text: close to q (within a factor two) and far above one
    assert 0.5 < float(g["dpfedpaq-th-gauss-of-q"]) < 1 and float(gauss) > 5


@pytest.mark.stored
def test_privacy_facts_are_the_chain_and_realized_tables(glued, stored_theory):
    g = glued["theory"]
    checks = stored_theory[0]
    link3 = [r for r in checks["units"]["chain"]["rows"] if r["statement"].startswith("(15) link 3")]
    eps0 = lambda r: float(r["instance"].rsplit("eps0=", 1)[1])  # noqa: E731
    holds = max(eps0(r) for r in link3 if r["holds"])
    fails = min(eps0(r) for r in link3 if not r["holds"])
    assert holds < float(g["dpfedpaq-th-link3-root"]) < fails
    assert not any(r["holds"] for r in link3 if eps0(r) == float(g["dpfedpaq-th-eps0-default"]))
    assert float(g["dpfedpaq-th-eps0-default"]) == 1.0 / (2 * 0.2)
    realized = report.realized_frame(checks).set_index("gamma").loc[0.2]
    over = [float(c.split()[-1]) for c, v in realized.items() if float(v) > float(c.split()[-1])]
    assert g["dpfedpaq-th-realized-from"] == f"{min(over):g}"
    assert all(float(c.split()[-1]) >= min(over) for c, v in realized.items() if float(v) > float(c.split()[-1]))
    training = report.training_frame(checks)
    row = training[(training["eps per round (target)"] == 1.0) & (training["gamma"] == 0.2) & (training["K"] == 100)].iloc[0]
    assert row["rounds scheduled"] == g["dpfedpaq-th-rounds"] == f"{100 * 10 / 100:g}"
    # the text: the total epsilon is several times the per-round figure (both accountings)
    assert float(row["basic, scheduled rounds"]) > 2 and float(row["RDP, scheduled rounds"]) > 2


@pytest.mark.stored
def test_sensitivity_facts_are_the_sensitivity_table(glued, stored_theory):
    g = glued["theory"]
    frame = report.sensitivity_frame(stored_theory[0])
    authors = frame[frame["Delta_f"] == "authors_code"]
    share = authors["pairs above Delta_f"].astype(float)
    assert g["dpfedpaq-th-authors-exceeded"] == f"{100 * share.min():.1f} %" and share.min() > 0.99
    # the text: by about an order of magnitude; the valid sensitivity holds with a wide margin
    assert round(math.log10(authors["max ratio to Delta_f"].astype(float).max())) == 1
    assert (frame[frame["Delta_f"] == "rigorous"]["max ratio to Delta_f"].astype(float) < 0.1).all()
    clipping = stored_theory[0]["units"]["clipping"]
    assert g["dpfedpaq-th-grad-norm"] == f"{clipping['median_norm_at_0']:.0f}"
    assert float(g["dpfedpaq-th-grad-norm-min"]) > 1  # so with C = 1 every gradient is clipped


@pytest.mark.stored
def test_step_size_facts_are_the_lr_and_mnist_tables(glued, stored_theory):
    g = glued["theory"]
    checks, theorem, _ = stored_theory
    lr = report.lr_frame(checks)
    mnist = lr[lr["L"] == lr["L"].max()].set_index("gamma0 rule")
    assert g["dpfedpaq-th-lipschitz"] == f"{lr['L'].max():.3g}"
    assert prose.power_of_ten(float(mnist.loc["paper", "gamma0"]), 1, "×") == g["dpfedpaq-th-gamma0-paper"]
    assert prose.order_of_magnitude(float(mnist.loc["paper", "eta_0"])) == g["dpfedpaq-th-eta0-paper"]
    assert mnist.loc["printed", "gamma0"] == g["dpfedpaq-th-gamma0-printed"] == f"{4 * 10}"
    assert mnist.loc["printed", "eta_0"] == g["dpfedpaq-th-eta0-printed"]
    # the text: the relaxed offset violates eta <= mu/L^2
    assert float(mnist.loc["relaxed", "eta L^2/mu"]) > 1
    frame = report.mnist_frame(theorem).set_index("reading")
    assert prose.order_of_magnitude(float(frame.loc["corrected, gamma0 paper", "eta_0"])) == g["dpfedpaq-th-mnist-eta0-paper"]
    assert frame.loc["as_printed, gamma0 printed", "eta_0"] == g["dpfedpaq-th-mnist-eta0-printed"]
    assert g["dpfedpaq-th-mnist-q"] == report.quantizer_frame(checks).set_index("s").loc[10, "q = min(d/s^2, sqrt(d)/s)"]


@pytest.mark.stored
def test_theorem_on_the_synthetic_problem_holds_by_the_glued_orders(glued, stored_theory):
    frame = report.theorem_frame(stored_theory[1])
    ratio = frame["bound/measured"].astype(float)
    assert frame["holds"].all()
    lo, hi = glued["theory"]["dpfedpaq-th-synthetic-orders"].split(" to ")
    assert (prose.number_word(round(math.log10(ratio.min()))), prose.number_word(round(math.log10(ratio.max())))) == (lo, hi) == ("three", "six")


@pytest.mark.stored
def test_budget_statements(glued, stored_theory):
    _, theorem, budget = stored_theory
    rows = report.budget_rows(budget, theorem, budget_exp.BudgetConfig.for_profile("paper").T)
    ratio = [r["bound_printed"] / r["loss"] for r in rows]
    assert glued["theory"]["dpfedpaq-th-budget-ratio"] == f"{prose.power_of_ten(min(ratio), 1, '×')} to {prose.power_of_ten(max(ratio), 1, '×')}"
    by_s: dict[int, list[dict]] = {}
    for r in rows:
        by_s.setdefault(r["s"], []).append(r)
    for rs in by_s.values():
        rs = sorted((r for r in rs if r["E"] >= 2), key=lambda r: r["E"])
        # the text: the loss and the printed bound grow with E, the corrected bound decreases (from E = 2 on:
        # with s = 1, E = 2 ends below E = 1 in loss and in the printed bound)
        assert all(a["loss"] < b["loss"] for a, b in zip(rs, rs[1:], strict=False))
        assert all(a["bound_printed"] < b["bound_printed"] for a, b in zip(rs, rs[1:], strict=False))
        assert all(a["bound_corrected"] > b["bound_corrected"] for a, b in zip(rs, rs[1:], strict=False))
    assert min(r["E"] for r in by_s[0]) == 10  # no quantization cannot afford E < 10
    loss = {(r["s"], r["E"]): r["loss"] for r in rows}
    for E in {r["E"] for r in rows}:
        at = {s: v for (s, e), v in loss.items() if e == E}
        assert min(at, key=at.get) == 10  # s = 10 is best at equal E
    assert loss[(1, 1)] > loss[(1, 2)]  # the text: at s = 1, E = 1 ends slightly above E = 2


# ---- the numbers the part's index and the DP-FedPAQ entries of the errata cite from the two pages

INDEX = BOOK / "index.md"
ERRATA = BOOK.parent / "errata.md"
_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def _pow10(text: str) -> float:
    """The value of ``prose.power_of_ten``'s ``"m×10ᵉ"``."""
    m, e = text.split("×10")
    return float(m) * 10.0 ** int(e.translate(_SUPERSCRIPT))


def _errata_section() -> str:
    text = ERRATA.read_text(encoding="utf-8")
    start = text.index("(errata-dpfedpaq-eq15-16)=")
    return text[start:text.index("### ALI-DPFL", start)]


def _stored_glue(notebook: Path, name: str) -> str:
    """The text/plain a notebook's stored outputs hold for a glued name."""
    text = prose.stored_glues(notebook).get(name)
    if text is None:
        raise KeyError(name)
    return text.strip("'")


def test_pow10_reads_power_of_ten():
    for x in (1.2e9, 3.29e-6, 1.04e7, 0.000132):
        assert _pow10(prose.power_of_ten(x, 3, "×")) == pytest.approx(x, rel=5e-3)


@pytest.mark.stored
def test_the_index_and_the_errata_cite_the_facts_of_the_two_pages(glued):
    """Every number the index and the DP-FedPAQ entries cite from the two pages is one of their
    facts (or a number the experiments page glues itself), and the typed numbers these texts
    replaced are gone."""
    cites = prose.cross_document_glues(INDEX)
    section = _errata_section()
    errata = [c for c in prose.cross_document_glues(ERRATA) if f"::{c[1]}:" in section]
    by_name = set(re.findall(r'(?:book|show)\.glue\("([a-z0-9-]+)"',
                             "".join("".join(c["source"]) for c in json.loads(PAGES["experiments"][0].read_text())["cells"])))
    pages = {path.resolve(): page for page, (path, _) in PAGES.items()}
    ours = [(pages[nb], name) for nb, name, _ in cites + errata if nb in pages]
    assert len(ours) >= 40
    for page, name in ours:
        assert name in glued[page] or (page == "experiments" and name in by_name), name
    assert {nb.name for nb, _, _ in errata} == {"theory.ipynb", "experiments.ipynb", "privacy-accounting.ipynb",
                                                "privacy-audit.ipynb"}
    for old in ("0.81\\|v\\|^2", "16.8\\|v\\|^2", "two orders of magnitude larger", "1.2564", "0.000132"):
        assert old not in section
    for old in ("hundreds of times", "six of those", "85 scorecard", "q=8.86"):
        assert old not in INDEX.read_text(encoding="utf-8")


@pytest.mark.stored
def test_quantizer_numbers_of_the_errata(glued, stored_theory):
    g = glued["theory"]
    frame = report.quantizer_frame(stored_theory[0]).set_index("s")
    q, gauss = "q = min(d/s^2, sqrt(d)/s)", "E||Q(v)-v||^2/||v||^2, random v"
    assert g["dpfedpaq-th-gauss-s1"] == frame.loc[1, gauss] and g["dpfedpaq-th-gauss-s10"] == frame.loc[10, gauss]
    # the text: q <= 1 needs s >= 89 (the first integer s with min(d/s^2, sqrt(d)/s) <= 1)
    first = next(s for s in range(1, 1000) if min(7850 / s**2, math.sqrt(7850) / s) <= 1)
    assert g["dpfedpaq-th-s-for-q1"] == str(first) and float(frame.loc[100, q]) < 1
    # the text: not merely loose (the Gaussian vector's variance is of the order of q at s = 1 and 10)
    for s in (1, 10):
        assert 0.5 < float(frame.loc[s, gauss]) / float(frame.loc[s, q]) < 1
    verdict = report.verdicts(*stored_theory[:2])
    assert verdict["quantizer: packed bits < beta(s) + 1"]  # the index: within one bit of beta(s)


@pytest.mark.stored
def test_privacy_numbers_of_the_errata(glued, stored_theory):
    from fedrepro.dpfedpaq import amplification
    from fedrepro.privacy import gaussian

    g = glued["theory"]
    accounting = BOOK.parent / "privacy-accounting.ipynb"
    assert g["dpfedpaq-th-link3-eps-over-gamma"] == f"{2 * amplification.CHAIN_THRESHOLD:.3f}"
    assert g["dpfedpaq-th-link3-root"] == f"{amplification.CHAIN_THRESHOLD:.4f}"
    assert g["dpfedpaq-th-fail-gamma04"] == f"{amplification.paper_calibration_failure_epsilon(1e-4, 0.4):.3g}"
    assert g["dpfedpaq-th-classical-fail-1e5"] == f"{gaussian.classical_calibration_failure_epsilon(1e-5):.3g}"
    # the numbers cited from the privacy-accounting page are the ones the entry states
    assert float(_stored_glue(accounting, "privacy-fedpaq-fail-first")) == pytest.approx(
        amplification.paper_calibration_failure_epsilon(1e-4, 0.2), rel=1e-6)
    assert float(_stored_glue(accounting, "privacy-plain-fail-min")) == pytest.approx(
        gaussian.classical_calibration_failure_epsilon(1e-4), rel=1e-6)
    assert float(_stored_glue(accounting, "privacy-chain-threshold")) == pytest.approx(amplification.CHAIN_THRESHOLD)
    realized = report.realized_frame(stored_theory[0]).set_index("gamma")
    for target, name in ((1.5, "privacy-c07-exact-15"), (2.0, "privacy-c07-exact-2")):
        assert float(_stored_glue(accounting, name)) == pytest.approx(float(realized.loc[0.2, f"target eps {target}"]), abs=0.006)
    # the text: at gamma = 0.4 eq. (16) still holds on the chapter's grid (targets up to 2)
    assert all(float(v) < float(c.split()[-1]) for c, v in realized.loc[0.4].items())
    training = report.training_frame(stored_theory[0])
    row = training[(training["eps per round (target)"] == 1.0) & (training["gamma"] == 0.2) & (training["K"] == 100)].iloc[0]
    assert g["dpfedpaq-th-rdp-total"] == f"{float(row['RDP, scheduled rounds']):.2g}"
    assert g["dpfedpaq-th-basic-total"] == f"{float(row['basic, scheduled rounds']):.2g}"


@pytest.mark.stored
def test_sensitivity_numbers_of_the_errata(glued, stored_theory, softmax_runs):
    g = glued["theory"]
    frame = report.sensitivity_frame(stored_theory[0])
    authors = frame[frame["Delta_f"] == "authors_code"]
    share = authors["pairs above Delta_f"].astype(float)
    assert g["dpfedpaq-th-authors-exceeded-range"] == f"{100 * share.min():.1f}–{100 * share.max():g} %"
    ratio = authors["max ratio to Delta_f"].astype(float)
    assert g["dpfedpaq-th-authors-max-ratio"] == f"{ratio.max():.3g}"
    assert float(authors.loc[ratio.idxmax(), "eta"]) == 0.1  # the text: the largest at eta = 0.1
    assert g["dpfedpaq-th-authors-max-ratio-eta-min"] == f"{ratio[authors['eta'].astype(float) == 0.05].max():.3g}"
    rigorous = frame[frame["Delta_f"] == "rigorous"]["max ratio to Delta_f"].astype(float)
    assert float(g["dpfedpaq-th-rigorous-max-ratio"]) == pytest.approx(rigorous.max(), rel=0.01)
    # the noise of the valid sensitivity against the authors' at eps = 1 (the valid summary's lines)
    with read_only():
        summary = tables.valid_summary(softmax_runs, "paper").splitlines()
    assert float(summary[2].rsplit(": ", 1)[1]) == pytest.approx(float(glued["experiments"]["dpfedpaq-ex-authors-ratio"]), abs=0.006)
    # the audit: the one refuted mechanism is C/n_i at the claimed eps = 1 without quantization
    from fedrepro.chapters.privacy_audit import dpfedpaq as audit
    from fedrepro.chapters.privacy_audit import tables as audit_tables

    with read_only():
        s = audit_tables.fedpaq_summary(audit.load_fedpaq_audit("paper"))
    assert s["refuted"] == [("authors_code", 1.0, 0)] and s["worst_claim"] == 1.0 < s["worst_lower"]
    assert s["valid_max"] <= 0.0  # no valid-sensitivity setting exceeds its claim
    audit_page = BOOK.parent / "privacy-audit.ipynb"
    assert float(_stored_glue(audit_page, "audit-fedpaq-worst_lower")) == pytest.approx(s["worst_lower"])
    assert float(_stored_glue(audit_page, "audit-fedpaq-valid_max")) == s["valid_max"]


@pytest.mark.stored
def test_theorem1_numbers_of_the_errata(glued, stored_theory):
    g = glued["theory"]
    checks, theorem, _ = stored_theory
    iso = report.isotropic_frame(theorem)
    printed = iso[iso["reading"] == "Theorem 1, as_printed"].set_index("mu")
    corrected = iso[iso["reading"] == "Theorem 1, corrected"].set_index("mu")
    for mu, key in ((0.05, "005"), (0.01, "001")):
        assert _pow10(g[f"dpfedpaq-th-iso-measured-{key}"]) == pytest.approx(float(printed.loc[mu, "measured"]), rel=5e-3)
        assert _pow10(g[f"dpfedpaq-th-iso-bound-{key}"]) == pytest.approx(float(printed.loc[mu, "bound"]), rel=5e-3)
        assert not printed.loc[mu, "holds"] and corrected.loc[mu, "holds"]  # the counterexample and its correction
    assert g["dpfedpaq-th-iso-ratio-005"] == printed.loc[0.05, "measured/bound"]
    assert g["dpfedpaq-th-iso-corrected-ratio-005"] == corrected.loc[0.05, "measured/bound"]
    lr = report.lr_frame(checks)
    row = lr[(lr["L"] == lr["L"].max()) & (lr["gamma0 rule"] == "printed")].iloc[0]
    worst = max(float(row[c]) for c in ("eta L^2/mu", "2L^2(E-1)^2 eta^2", "mu E eta (30)"))
    assert g["dpfedpaq-th-printed-violation"] == prose.power_of_ten(worst, 2, "×")
    mnist = report.mnist_frame(theorem).set_index("reading")
    assert float(g["dpfedpaq-th-mnist-orders"]) == pytest.approx(float(mnist.loc["corrected, gamma0 paper", "orders of magnitude"]), abs=0.051)


@pytest.mark.stored
def test_lemma2_numbers_of_the_errata(glued, stored_theory):
    g = glued["theory"]
    frame = report.lemma_frame(stored_theory[0])
    row = frame[(frame["E"] == 1) & (frame["s"] == "none") & frame["noise"].astype(bool)].iloc[0]
    assert _pow10(g["dpfedpaq-th-lemma2-mc"]) == pytest.approx(float(row["B (MC)"]), rel=5e-3)
    assert _pow10(g["dpfedpaq-th-lemma2-noise"]) == pytest.approx(float(row["Lemma 2 + noise"]), rel=5e-3)
    assert float(row["Lemma 2"]) == 0  # the text: the printed bound is 0 there
    summary = report.summary_frame(*stored_theory[:2]).set_index("statement")
    line = summary.loc["Lemma 2 with the noise term"]
    assert g["dpfedpaq-th-lemma2-configs"] == str(line["instances"]) == str(len(frame))
    assert g["dpfedpaq-th-lemma2-max-ratio"] == line["max observed/bound"] and int(line["failing"]) == 0


@pytest.mark.stored
def test_remark6_numbers_are_the_scorecards_reasons(glued):
    from fedrepro.report import scorecard

    with read_only():
        items = {it.id: it for it in scorecard.load()}
    g = glued["theory"]
    drift = re.search(r"= ([\d.e+-]+) \(MNIST constants", items["dpfedpaq-main-C13"].reason).group(1)
    assert _pow10(g["dpfedpaq-th-drift-at-zero"]) == pytest.approx(float(drift), rel=5e-3)
    argmin = re.search(r"increasing lambda: (\[[\d, ]+\])", items["dpfedpaq-main-C17"].reason).group(1)
    assert g["dpfedpaq-th-argmin-e"] == argmin
    # the text: the minimising E does not grow with lambda
    values = json.loads(argmin)
    assert values[-1] <= values[0]


@pytest.mark.stored
def test_scorecard_numbers_of_the_index_are_the_stored_scorecard(glued):
    from fedrepro.report import scorecard

    with read_only():
        items = [it for it in scorecard.load() if it.paper == "dpfedpaq"]
    g = glued["experiments"]
    counts = scorecard.counts(items)["dpfedpaq"]
    assert g["dpfedpaq-ex-scorecard-items"] == str(len(items)) == str(sum(counts.values()))
    for status in ("match", "miss", "erratum"):
        assert g[f"dpfedpaq-ex-scorecard-{status}"] == str(counts[status])
    assert counts["not-run"] == 0  # the text: none is left unrun
    fragile = {}
    for it in items:
        m = re.search(r"holds for (\d+) of (\d+) seeds", it.reason)
        if it.status == "match" and m and m.group(1) != m.group(2):
            fragile[it.id.rsplit("-", 1)[1]] = (int(m.group(1)), int(m.group(2)))
    assert g["dpfedpaq-ex-seed-fragile"] == prose.number_word(len(fragile))
    assert g["dpfedpaq-ex-seed-fragile-ids"].split(", ") == sorted(fragile, key=lambda c: int(c[1:]))
    # the text: one or two of the three seeds
    assert fragile and all(k in (1, 2) and n == 3 for k, n in fragile.values())
