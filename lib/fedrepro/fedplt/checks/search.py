"""Random and adversarial search over the instances of every statement.

Each statement is registered in :data:`STATEMENTS` with the box of instance parameters it is
searched over (log-uniform, uniform, integer or categorical coordinates), how a point of
that box becomes an instance, and its check. :func:`random_instances` samples the box;
:func:`adversarial_search` maximises ``observed / bound`` over it by random restarts
followed by Nelder–Mead on the box coordinates (integer and categorical coordinates are
rounded), so worst cases are searched for, not hand-picked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fedrepro.core.validate import ParameterTypeError, check_int
from fedrepro.fedplt.checks import accelerated, contraction, privacy, proposition1, stochastic
from fedrepro.fedplt.checks._validate import generator
from fedrepro.fedplt.checks.result import CheckResult

__all__ = ["Param", "Statement", "STATEMENTS", "statement", "random_instances", "evaluate",
           "adversarial_search", "SearchResult"]


@dataclass(frozen=True)
class Param:
    """One coordinate of a search box: ``kind`` is ``"log"``, ``"lin"``, ``"int"`` (inclusive
    ``[low, high]``) or ``"choice"`` (``options``)."""

    name: str
    kind: str
    low: float = 0.0
    high: float = 1.0
    options: tuple = ()

    def value(self, u: float) -> Any:
        u = min(max(float(u), 0.0), 1.0)
        if self.kind == "log":
            return float(math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low))))
        if self.kind == "lin":
            return float(self.low + u * (self.high - self.low))
        if self.kind == "int":
            return int(min(self.high, math.floor(self.low + u * (self.high - self.low + 1))))
        if self.kind == "choice":
            return self.options[min(len(self.options) - 1, int(u * len(self.options)))]
        raise ValueError(f"kind must be log, lin, int or choice, got {self.kind!r}")


@dataclass(frozen=True)
class Statement:
    """A statement of the paper as a searchable check.

    ``build(values, seed)`` makes an instance from the box values; ``check(instance, variant)``
    evaluates it; ``variants[0]`` is the statement as printed."""

    name: str
    ref: str
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, Any], int], Any]
    check: Callable[[Any, str], CheckResult]
    variants: tuple[str, ...] = ("paper",)


def _moduli(v: Mapping[str, Any]) -> dict[str, float]:
    return {"lam": v["lam"], "lam_bar": v["lam"] * v["kappa"]}


def _p(v: Mapping[str, Any]) -> dict[str, float]:
    return {"p_min": v["p_min"], "p_max": v["p_min"] + v["p_ratio"] * (1 - v["p_min"])}


LAM = Param("lam", "log", 0.05, 5.0)
KAPPA = Param("kappa", "log", 1.0, 100.0)
RHO = Param("rho", "log", 1e-2, 1e2)
THETA = Param("theta", "lin", 0.05, 0.99)

STATEMENTS: dict[str, Statement] = {}


def _register(st: Statement) -> None:
    STATEMENTS[st.name] = st


_register(Statement(
    "lemma2", "Lemma 2",
    (Param("kind", "choice", options=("quadratic", "logistic")), Param("n", "int", 1, 6), LAM,
     Param("kappa", "log", 1.0, 1e3), Param("step_factor", "lin", 0.01, 0.99)),
    lambda v, s: contraction.Lemma2Instance(kind=v["kind"], n=v["n"], step_factor=v["step_factor"], seed=s,
                                            **_moduli(v)),
    lambda inst, variant: contraction.check_lemma2(inst)))
_register(Statement(
    "eq11", "eq. (11)",
    (RHO, LAM, Param("kappa", "log", 1.01, 100.0), Param("theta", "lin", 0.01, 0.99), Param("n", "int", 1, 4)),
    lambda v, s: contraction.Eq11Instance(rho=v["rho"], theta=v["theta"], n=v["n"], seed=s, **_moduli(v)),
    lambda inst, variant: contraction.check_eq11(inst)))
_register(Statement(
    "lemma3", "Lemma 3",
    (Param("N", "int", 1, 5), Param("n", "int", 1, 4), LAM, KAPPA, RHO),
    lambda v, s: contraction.Lemma3Instance(N=v["N"], n=v["n"], rho=v["rho"], seed=s, **_moduli(v)),
    lambda inst, variant: contraction.check_lemma3(inst, "v2" if variant == "paper" else variant),
    variants=("paper", "v1")))
_register(Statement(
    "lemma4", "Lemma 4",
    (Param("N", "int", 1, 6), Param("m", "int", 1, 3), Param("zeta", "lin", 0.0, 0.99),
     Param("p_min", "lin", 0.05, 1.0), Param("p_ratio", "lin", 0.0, 1.0),
     Param("noise", "choice", options=(0.0, 0.01, 0.1, 1.0))),
    lambda v, s: stochastic.Lemma4Instance(N=v["N"], m=v["m"], zeta=v["zeta"], noise=v["noise"], K=30,
                                           trials=1000, seed=s, **_p(v)),
    lambda inst, variant: stochastic.check_lemma4(inst)))
_register(Statement(
    "lemma5", "Lemma 5",
    (Param("alpha", "log", 1.01, 100.0), Param("sigma", "log", 0.1, 100.0), Param("delta", "log", 1e-10, 0.5)),
    lambda v, s: privacy.Lemma5Instance(alpha=v["alpha"], sensitivity=1.0, sigma=v["sigma"], delta=v["delta"]),
    lambda inst, variant: privacy.check_lemma5(inst)))
_register(Statement(
    "lemma6", "Lemma 6",
    (Param("kind", "choice", options=("zero", "l1", "box")), Param("N", "int", 1, 8), Param("n", "int", 1, 5),
     RHO, Param("weight", "log", 0.01, 10.0)),
    lambda v, s: contraction.Lemma6Instance(kind=v["kind"], N=v["N"], n=v["n"], rho=v["rho"], weight=v["weight"],
                                            seed=s),
    lambda inst, variant: contraction.check_lemma6(inst)))
_PROP1_PARAMS = (Param("N", "int", 1, 4), Param("n", "int", 1, 3), LAM, KAPPA, RHO, Param("Ne", "int", 1, 20), THETA)
_register(Statement(
    "proposition1", "Proposition 1", _PROP1_PARAMS,
    lambda v, s: proposition1.Proposition1Instance(N=v["N"], n=v["n"], rho=v["rho"], Ne=v["Ne"], theta=v["theta"],
                                                   seed=s, **_moduli(v)),
    lambda inst, variant: proposition1.check_proposition1(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "lemma7", "Lemma 7",
    (LAM, Param("kappa", "log", 1.0, 1e4)),
    lambda v, s: proposition1.Lemma7Instance(n_rho=41, Ne_max=300, **_moduli(v)),
    lambda inst, variant: proposition1.check_lemma7(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "lemma7-proof", "Lemma 7 (proof)",
    (RHO, LAM, KAPPA),
    lambda v, s: dict(rho=v["rho"], **_moduli(v)),
    lambda inst, variant: proposition1.check_lemma7_one_step(inst["rho"], inst["lam"], inst["lam_bar"], variant),
    variants=("paper", "corrected")))
_register(Statement(
    "proposition2", "Proposition 2",
    (Param("N", "int", 1, 4), Param("n", "int", 1, 2), LAM, Param("kappa", "log", 1.0, 10.0),
     Param("rho", "log", 0.05, 20.0), Param("Ne", "int", 1, 20), THETA, Param("p_min", "lin", 0.1, 1.0),
     Param("p_ratio", "lin", 0.0, 1.0), Param("tau", "log", 1e-3, 1.0),
     Param("start", "choice", options=("worst", "random"))),
    lambda v, s: stochastic.Proposition2Instance(N=v["N"], n=v["n"], rho=v["rho"], Ne=v["Ne"], theta=v["theta"],
                                                 tau=v["tau"], start=v["start"], K=10, trials=100, seed=s,
                                                 **_moduli(v), **_p(v)),
    lambda inst, variant: stochastic.check_proposition2(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "lemma8", "Lemma 8",
    (Param("kappa", "log", 1.01, 1e3), Param("ell", "int", 1, 100), Param("sequence", "choice", options=("u", "w"))),
    lambda v, s: accelerated.Lemma8Instance(kappa=v["kappa"], ell=v["ell"], sequence=v["sequence"], grid=1001),
    lambda inst, variant: accelerated.check_lemma8(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "proposition3", "Proposition 3",
    (Param("N", "int", 1, 4), Param("n", "int", 1, 3), LAM, KAPPA, RHO, Param("Ne", "int", 1, 30)),
    lambda v, s: accelerated.Proposition3Instance(N=v["N"], n=v["n"], rho=v["rho"], Ne=v["Ne"], seed=s,
                                                  **_moduli(v)),
    lambda inst, variant: accelerated.check_proposition3(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "proposition4", "Proposition 4",
    (Param("N", "int", 1, 4), Param("n", "int", 1, 2), Param("q", "int", 1, 50), Param("r", "log", 0.05, 20.0),
     Param("rho", "log", 0.1, 100.0), Param("Ne", "int", 1, 10), Param("K", "int", 1, 20),
     Param("tau", "log", 0.1, 10.0), Param("theta", "lin", 0.05, 0.95), Param("alpha", "log", 1.1, 50.0)),
    lambda v, s: privacy.Proposition4Instance(N=v["N"], n=v["n"], q=v["q"], r=v["r"], rho=v["rho"], Ne=v["Ne"],
                                              K=v["K"], tau=v["tau"], theta=v["theta"], alpha=v["alpha"], seed=s),
    lambda inst, variant: privacy.check_proposition4(inst, variant),
    variants=privacy.PRIVACY_VIEWS))
_COR1_PARAMS = (Param("N", "int", 1, 4), Param("n", "int", 1, 2), LAM, Param("kappa", "log", 1.0, 10.0),
                Param("rho", "log", 0.05, 20.0), Param("Ne", "int", 1, 20), THETA, Param("tau", "log", 1e-3, 1.0))
_register(Statement(
    "corollary1", "Corollary 1", _COR1_PARAMS,
    lambda v, s: stochastic.Corollary1Instance(N=v["N"], n=v["n"], rho=v["rho"], Ne=v["Ne"], theta=v["theta"],
                                               tau=v["tau"], K=8, trials=100, seed=s, **_moduli(v)),
    lambda inst, variant: stochastic.check_corollary1(inst, variant),
    variants=("paper", "corrected")))
_register(Statement(
    "corollary1-noise", "Corollary 1 (noise step)", _COR1_PARAMS,
    lambda v, s: stochastic.Corollary1Instance(N=v["N"], n=v["n"], rho=v["rho"], Ne=v["Ne"], theta=v["theta"],
                                               tau=v["tau"], trials=400, seed=s, **_moduli(v)),
    lambda inst, variant: stochastic.check_corollary1_noise(inst)))


def statement(name: str) -> Statement:
    """The registered statement ``name`` (see :data:`STATEMENTS`)."""
    if not isinstance(name, str):
        raise ParameterTypeError(f"statement name must be a string, one of {sorted(STATEMENTS)}, got {name!r} "
                                 f"({type(name).__name__})")
    if name not in STATEMENTS:
        raise ValueError(f"statement must be one of {sorted(STATEMENTS)}, got {name!r}")
    return STATEMENTS[name]


def _instance(st: Statement, u: np.ndarray, seed: int) -> Any:
    values = {p.name: p.value(x) for p, x in zip(st.params, u, strict=False)}
    return st.build(values, seed)


def random_instances(name: str, count: int, rng: np.random.Generator) -> list[Any]:
    """``count`` instances of statement ``name`` drawn uniformly from its box (each with its
    own data seed from ``rng``)."""
    st = statement(name)
    check_int("count", count, 0)
    generator("rng", rng)
    U = rng.random((count, len(st.params)))
    seeds = rng.integers(0, 2**31 - 1, count)
    return [_instance(st, U[i], int(seeds[i])) for i in range(count)]


def evaluate(name: str, instance: Any, variant: str | None = None) -> CheckResult:
    """Check ``instance`` of statement ``name`` (``variant`` defaults to the printed one)."""
    st = statement(name)
    variant = st.variants[0] if variant is None else variant
    if variant not in st.variants:
        raise ValueError(f"variant of {name} must be one of {st.variants}, got {variant!r}")
    return st.check(instance, variant)


@dataclass(frozen=True)
class SearchResult:
    """Worst instance found by :func:`adversarial_search`, its check, and the number of
    instances evaluated."""

    instance: Any
    result: CheckResult
    evaluations: int


def _score(res: CheckResult) -> float:
    return -math.inf if not math.isfinite(res.ratio) and math.isnan(res.ratio) else res.ratio


def adversarial_search(name: str, rng: np.random.Generator, *, variant: str | None = None,
                       restarts: int = 4, samples: int = 20, maxiter: int = 40) -> SearchResult:
    """Maximise ``observed / bound`` of statement ``name`` over its box.

    ``samples`` random points; the best ``restarts`` of them start Nelder–Mead runs (at most
    ``maxiter`` iterations each) on the box coordinates, keeping each start's data seed.
    Instances outside the statement's hypotheses score ``-inf``.
    """
    from scipy.optimize import minimize

    st = statement(name)
    for label, val, lo in (("restarts", restarts, 1), ("samples", samples, 1), ("maxiter", maxiter, 0)):
        check_int(label, val, lo)
    count = 0
    best: tuple[float, Any, CheckResult] | None = None
    starts = []
    U = rng.random((samples, len(st.params)))
    seeds = rng.integers(0, 2**31 - 1, samples)
    for u, seed in zip(U, seeds, strict=False):
        inst = _instance(st, u, int(seed))
        res = evaluate(name, inst, variant)
        count += 1
        score = _score(res)
        starts.append((score, u, int(seed)))
        if best is None or score > best[0]:
            best = (score, inst, res)
    starts.sort(key=lambda t: -t[0])
    for score0, u0, seed in starts[:restarts]:
        if maxiter == 0 or not math.isfinite(score0):
            continue
        cache: dict[tuple, float] = {}

        def objective(u: np.ndarray, seed: int = seed, cache: dict[tuple, float] = cache) -> float:
            nonlocal best, count
            u = np.clip(u, 0.0, 1.0)
            key = tuple(np.round(u, 12))
            if key in cache:
                return cache[key]
            inst = _instance(st, u, seed)
            res = evaluate(name, inst, variant)
            count += 1
            score = _score(res)
            if score > best[0]:
                best = (score, inst, res)
            cache[key] = -score if math.isfinite(score) else 1e6
            return cache[key]

        minimize(objective, u0, method="Nelder-Mead",
                 options={"maxiter": maxiter, "xatol": 1e-4, "fatol": 1e-9, "initial_simplex": _simplex(u0)})
    return SearchResult(instance=best[1], result=best[2], evaluations=count)


def _simplex(u0: np.ndarray) -> np.ndarray:
    """Initial simplex of side 0.15 around ``u0`` inside the unit box."""
    d = len(u0)
    pts = [u0.copy()]
    for j in range(d):
        p = u0.copy()
        p[j] = p[j] + 0.15 if p[j] + 0.15 <= 1 else p[j] - 0.15
        pts.append(p)
    return np.array(pts)


def with_changes(instance: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` for instances (a dict instance is copied and updated)."""
    if isinstance(instance, dict):
        return {**instance, **changes}
    return replace(instance, **changes)
