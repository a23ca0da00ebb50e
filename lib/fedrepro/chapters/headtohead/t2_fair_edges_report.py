"""What the edge probe around the fair selections shows (:mod:`fedrepro.experiments.headtohead.t2_fair_edges`):
the same table, ranking and numbers as T2's own probe (:mod:`fedrepro.chapters.headtohead.t2_edges_report`),
with the fair tuning in place of T2's and the fair grid's cells in place of T2's (the clip C is an
axis of every algorithm). Reads stored results only.
"""

from __future__ import annotations

from typing import Any

from fedrepro.chapters.headtohead import t2, t2_edges_report
from fedrepro.chapters.headtohead import t2_fair as fair_view
from fedrepro.chapters.headtohead.t1_edges_report import _text
from fedrepro.chapters.headtohead.t2_report import Text
from fedrepro.core.cache import load_if_computed
from fedrepro.experiments.headtohead import t2_fair, t2_fair_edges

__all__ = ["stored", "progress", "clip_edges", "facts", "reading_text"]


def _probe_config(profile: str, table: dict[str, Any]) -> t2_fair_edges.T2FairEdgesTuningConfig:
    selection = tuple((t["algorithm"], int(t["selected"])) for t in table["tuning"]
                      if t["algorithm"] in t2_fair.PRIVATE)
    return t2_fair_edges.T2FairEdgesTuningConfig(profile=profile, selected=selection)


def stored(profile: str = "paper") -> dict[str, Any] | None:
    """The data :func:`fedrepro.chapters.headtohead.t2_edges_report.verdicts` reads
    (``{"tuning", "t2", "edges_tuning", "edges", "reference"}``, the fair tuning and the fair
    grid's records in place of T2's) when the fair tuning, the fair grid and the probe are all
    stored and fresh, else ``None``."""
    table = fair_view.fair_computed(profile)
    if table is None:
        return None
    grid = fair_view.final_computed(profile, table)
    probe_cfg = _probe_config(profile, table)
    probe = load_if_computed(probe_cfg)
    if grid is None or probe is None:
        return None
    runs_cfg = t2_fair_edges.T2FairEdgesConfig(profile=profile, selected=probe_cfg.selected,
                                               chosen=t2_fair_edges.binding(table, probe.result))
    runs = load_if_computed(runs_cfg) if runs_cfg.chosen else None
    if runs_cfg.chosen and runs is None:
        return None
    p = t2.T2Config.for_profile(profile)
    private = {"tuning": [t for t in table["tuning"] if t["algorithm"] in t2_fair.PRIVATE]}
    # the probe's runs are all at the reference cell's ε, which its records leave implicit
    edges = [{**r, "epsilon_target": p.tuning_epsilon} for r in (runs.result["records"] if runs is not None else [])]
    return {"tuning": private, "t2": grid, "edges_tuning": probe.result, "edges": {"records": edges},
            "reference": (p.tuning_epsilon, p.budget_bits)}


def progress(profile: str = "paper") -> str:
    """Where the probe stands, for the page while it is not complete."""
    table = fair_view.fair_computed(profile)
    if table is None:
        return "The probe around the fair selections starts once the fair tuning is stored."
    if fair_view.final_computed(profile, table) is None:
        return "The fair grid's cells are not all stored yet; the probe runs after them."
    if load_if_computed(_probe_config(profile, table)) is None:
        return ("The extensions' tuning runs (the clip among the axes) are not all stored yet; they resume from "
                "the results store.")
    return "The binding extensions' runs on the test set are not all stored yet; they resume from the results store."


def clip_edges(data: dict[str, Any]) -> dict[str, str | None]:
    """For every probed algorithm, the end of the clip axis its fair selection sits on
    (``"clip high"`` / ``"clip low"``), or ``None`` where it sits inside the axis."""
    out: dict[str, str | None] = {}
    for v in t2_edges_report.verdicts(data):
        out[v["algorithm"]] = next((e for e in v["edges"] if e.startswith("clip ")), None)
    return out


def reading_text(data: dict[str, Any]) -> Text:
    """What the probe around the fair selections says, computed from it: which selections sit
    at an end of the clip axis, which edges bind on validation (with the best extension), and
    whether the leader at the reference cell changes."""
    v = t2_edges_report.verdicts(data)
    s = t2_edges_report.summary(data)
    clips = clip_edges(data)
    at_clip = [f"{t2.LABELS.get(a, a)} ({e.split()[1]})" for a, e in clips.items() if e]
    bound = [x for x in v if x["binds"]]
    parts = [f"Of the {len(v)} private algorithms, {len(at_clip)} select at an end of the clip axis"
             + (f": {', '.join(at_clip)}" if at_clip else "") + "."]
    if bound:
        parts.append("One step beyond the edges does better on the validation split for "
                     + "; ".join(f"{t2.LABELS.get(x['algorithm'], x['algorithm'])} ({_text(x['extension_config'])}: "
                                 f"test {100 * x['extension_test']:.1f} against {100 * x['grid_test']:.1f} %)"
                                 for x in bound) + ".")
    else:
        parts.append("No edge binds: no extension does better than the fair selection on the validation split.")
    parts.append(f"The leader at the reference cell is {s['leader_grid']} with the fair selections and "
                 f"{s['leader_wider']} with the better of selections and extensions.")
    return Text(" ".join(parts))


def facts(data: dict[str, Any]) -> dict[str, float]:
    """The numbers the page and the index quote about the probe (glued as
    ``h2h-t2-fair-edges-<key>``): the counts of :func:`fedrepro.chapters.headtohead.t2_edges_report.summary`
    (``algorithms``, ``binds``, ``order_moves``, ``leader_changes``, ``gain_<algorithm>`` in
    points), ``clip_ends`` (selections at an end of the clip axis), and for DPFL and Fed-PLT
    the test accuracy in % of the fair selection and of the binding extension
    (``test_grid_<a>``, ``test_beyond_<a>``, NaN where the edge does not bind), their clip and
    local steps beyond (``clip_beyond_<a>``, ``steps_beyond_<a>``), and the distance in points
    from Fed-PLT to DPFL on the fair selections and with the better of selection and extension
    (``gap_grid``, ``gap_wider``)."""
    s = t2_edges_report.summary(data)
    v = {x["algorithm"]: x for x in t2_edges_report.verdicts(data)}
    out: dict[str, float] = {k: float(s[k]) for k in ("algorithms", "binds", "order_moves", "leader_changes")}
    out.update({k: float(val) for k, val in s.items() if k.startswith("gain_")})
    out["clip_ends"] = float(sum(e is not None for e in clip_edges(data).values()))

    def best(a: str) -> float:
        x = v[a]
        return max(x["grid_test"], x["extension_test"]) if x["binds"] else x["grid_test"]

    for a in ("dpfl", "fed-plt"):
        x = v[a]
        out[f"test_grid_{a}"] = 100 * x["grid_test"]
        out[f"test_beyond_{a}"] = 100 * x["extension_test"] if x["binds"] else float("nan")
        out[f"clip_beyond_{a}"] = float(x["extension_config"]["clip"])
        out[f"steps_beyond_{a}"] = float(x["extension_config"]["local_steps"])
    out["gap_grid"] = 100 * (v["dpfl"]["grid_test"] - v["fed-plt"]["grid_test"])
    out["gap_wider"] = 100 * (best("dpfl") - best("fed-plt"))
    return out
