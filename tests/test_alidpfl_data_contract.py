"""The property-based contract (``tests/_contract.py``) on the public API of ``fedrepro.alidpfl``
(budgets, the τ rule, the setting's helpers, the DP-SGD helpers that take plain numbers) and of
``fedrepro.data`` (partitions, the registry, the file parsers): every call either returns values
of the documented shape and range or raises ValueError/TypeError naming the offending parameter.

The torch-facing functions (the DP-SGD step, the clipped sums, the stacked clients) have their
own contract in ``tests/test_alidpfl_dpsgd_contract.py``; ``train`` and its plan in
``tests/test_alidpfl_bad_input.py``. The file parsers raise :class:`DataFormatError` (a
ValueError) that names the source; their parameter is the byte string, so the message must
name the source it was given.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

from fedrepro.alidpfl import budget, dpsgd, setting, tau_rule, training
from fedrepro.data import datasets, formats, partition, registry
from tests._contract import Kind, Spec, check_contract
from tests.test_privacy_api_contract import DELTA, NON_FINITE, NONNEG, POS, PROB, _kind

P = dict


def _strict(low: int, high: int) -> Kind:
    """An integer parameter checked strictly (any float, even 2.0, is a wrong type)."""
    return _kind([st.integers(low, high), st.sampled_from([low, high, np.int64(low)])], [low - 1, low - 7],
                 st.sampled_from(["5", True, None, [5], b"5", 2.0, 2.5, math.nan]))


# Budgets are cheap only where R_c is modest: ε and σ from the papers' ranges, extremes included.
EPS = _kind([st.floats(0.05, 20.0), st.sampled_from([0.5, 3.75, 1e3])], [0.0, -1.0] + NON_FINITE)
Q = _kind([st.floats(1e-3, 1.0), st.sampled_from([1.0, 0.015, 0.05])], [0.0, -0.1, 1.5] + NON_FINITE)
SIGMA = _kind([st.floats(0.5, 20.0), st.sampled_from([1.1, 5.0])], [0.0, -1.0] + NON_FINITE)
COUNT = _strict(1, 10**6)
COUNT0 = _strict(0, 10**6)
FLOATS = _kind([st.floats(1e-3, 1e3), st.sampled_from([1e-300, 1e300, np.float64(2.0), 3])],
               [0.0, -1.0] + NON_FINITE)
REALS_X = _kind([st.lists(st.floats(0.0, 200.0), min_size=1, max_size=6), st.floats(0.0, 1e6),
                 st.sampled_from([0, 1e300, [0.0, 1.0, 2.0]])],
                [-1.0, [1.0, -0.5], [math.nan], math.inf, [1.0, math.inf]],
                st.sampled_from(["1", [True], None, ["2"], np.array(["2"]), b"1"]))
RULE = _kind([st.sampled_from(sorted(tau_rule.LAMBDA_OMEGA_RULES))], ["", "Loss", "best"],
             st.sampled_from([None, 1, True, b"loss", ["loss"]]))


def _finite(x) -> bool:
    return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


def out_int(res, args):
    assert isinstance(res, int) and not isinstance(res, bool) and res >= 1, res


def out_budgets(res, args):
    assert isinstance(res, budget.Budgets) and res.iterations >= 1 and res.rounds == args["rounds"], res


def out_stop(res, args):
    rounds, iterations = res
    b = args["budgets"]
    assert 1 <= rounds <= b.rounds and iterations == rounds * args["tau"] <= b.iterations, res


def out_counter(res, args):
    assert res.rounds_left >= 0 and res.iterations_left >= 0, res


def out_pos_float(res, args):
    assert isinstance(res, float) and math.isfinite(res) and res > 0, res


def out_gap(res, args):
    arr = np.asarray(res)
    assert arr.shape == np.shape(args["x"]) and arr.dtype == np.float64, (arr, args)
    # h may overflow to +inf for a large exponent, never to NaN
    assert not np.any(np.isnan(arr)), (arr, args)


def out_lambda_omega(res, args):
    lam, omega = res
    assert _finite([lam, omega]) and lam > 0 and omega > 0, res
    tau_rule.Constants(rho=0.0, beta=0.0, xi=0.0, lam=lam, omega=omega)  # usable by the τ rule


def out_constants(res, args):
    assert isinstance(res, tau_rule.Constants), res
    assert not math.isnan(res.phi(0.5)), res  # φ = ω(1 − βη/2) may overflow, never NaN


def out_choose(res, args):
    tau, g = res
    tau_m = min(2 * args["tau_prev"], args["tau_cap"])
    assert isinstance(tau, int) and 1 <= tau <= tau_m and np.shape(g) == (tau_m,), res
    assert not np.any(np.isnan(g)) and np.all(g > 0), g


def out_labels_per_client(res, args):
    assert isinstance(res, float) and 1.0 - 1e-9 <= res <= args["n_classes"] + 1e-9, res


def out_factors(res, args):
    assert isinstance(res, torch.Tensor) and res.shape == args["norms"].shape, res
    assert torch.all((res >= 0) & (res <= 1)), res  # C/‖g‖ may underflow to 0 in float32


def out_batch(res, args):
    assert isinstance(res, torch.Tensor) and res.dtype == torch.long and res.ndim == 1, res
    assert torch.all((res >= 0) & (res < args["n"])) and torch.unique(res).numel() == res.numel(), res


def out_generators(res, args):
    assert len(res) == args["n_clients"] and all(isinstance(g, torch.Generator) for g in res), res


def out_scaled(res, args):
    n, h, w = np.shape(args["images"])
    assert res.dtype == np.float32 and res.shape == (n, 1, h, w), res
    assert np.all((res >= -1) & (res <= 1)), res


def out_parts(res, args):
    labels = np.asarray(args["labels"])
    n = len(labels)
    allidx = np.concatenate(res) if res else np.array([], dtype=np.int64)
    assert len(res) == args["n_clients"] and allidx.dtype.kind in "iu", res
    assert np.all((allidx >= 0) & (allidx < n)) and len(np.unique(allidx)) == len(allidx), res


def out_counts(res, args):
    counts = np.asarray(res)
    assert counts.dtype.kind in "iu" and counts.shape[0] == len(args["parts"]), res
    assert counts.sum() == sum(len(p) for p in args["parts"]), res


def out_name(res, args):
    assert res in registry.REGISTRY, res


def out_spec(res, args):
    assert isinstance(res, registry.DatasetSpec), res


def out_files(res, args):
    assert res and all(isinstance(f, registry.RemoteFile) for f in res), res


def out_idx(res, args):
    assert isinstance(res, np.ndarray) and res.size >= 1, res


def out_records(res, args):
    images, labels = res
    assert len(images) == len(labels) >= 1 and np.all(labels < args["n_classes"]), res


def out_unit(res, args):
    assert res.dtype == np.float32 and np.all((res >= 0) & (res <= 1)), res


def out_generator(res, args):
    assert isinstance(res, np.random.Generator), res


# --------------------------------------------------------------------------------- strategies

_BUDGETS = st.builds(budget.Budgets, epsilon=st.floats(0.1, 10.0), rounds=st.integers(1, 500),
                     iterations=st.integers(1, 2000))
BUDGETS = Kind(_BUDGETS, None, st.sampled_from([None, (1.0, 10, 100), {"epsilon": 1.0}, "budgets", 3]))


def _tau_within(args: dict) -> Kind:
    b = args["budgets"]
    hi = b.iterations if isinstance(b, budget.Budgets) else 10
    return _kind([st.integers(1, hi), st.just(hi)], [0, -1, hi + 1],
                 st.sampled_from(["2", True, None, 2.0, [2]]))


def _done_within(field: str) -> object:
    def kind(args: dict) -> Kind:
        b = args["budgets"]
        hi = getattr(b, field) if isinstance(b, budget.Budgets) else 10
        return _kind([st.integers(0, hi), st.just(hi)], [-1, -100, hi + 1],
                     st.sampled_from(["2", True, None, 2.0, [2]]))
    return kind


CONSTANTS = Kind(st.builds(tau_rule.Constants, rho=st.floats(0.0, 1.0), beta=st.floats(0.0, 5.0),
                           xi=st.floats(0.0, 10.0), lam=st.floats(1e-3, 10.0), omega=st.floats(1e-6, 10.0)),
                 None, st.sampled_from([None, (0.1, 0.1, 0.1, 1.0, 1.0), {"rho": 0.1}, "constants", 1.0]))
NORMS = Kind(st.lists(st.floats(0.0, 1e6), min_size=1, max_size=8).map(
                 lambda v: torch.tensor(v, dtype=torch.float32)),
             st.sampled_from([torch.tensor([1.0, math.nan]), torch.tensor([-1.0]), torch.tensor([math.inf])]),
             st.sampled_from([None, "1.0", [1.0], np.array([1.0])]))
GEN = Kind(st.integers(0, 2**31).map(lambda s: torch.Generator().manual_seed(s)), None,
           st.sampled_from([None, 0, "g", np.random.default_rng(0)]))
IMAGES = Kind(st.lists(st.integers(0, 255), min_size=2, max_size=12).map(
                  lambda v: np.array(v[: len(v) // 2 * 2], dtype=np.uint8).reshape(-1, 1, 2)),
              st.sampled_from([np.array([[[1, 2]]], dtype=np.int64), np.zeros((2, 3), np.uint8), [1, 2],
                               np.array([0.5])]),
              st.sampled_from([np.array(["a"]), None, "img"]))


def _labels(n_classes: int = 10, reps: tuple[int, ...] = (20, 40, 60)) -> st.SearchStrategy:
    return st.tuples(st.sampled_from(reps), st.integers(0, 2**16)).map(
        lambda a: np.random.default_rng(a[1]).permutation(np.tile(np.arange(n_classes, dtype=np.int64), a[0])))


LABELS = Kind(_labels(), st.sampled_from([np.array([-1, 0, 1, 2]), np.array([0.5, 1.0]), np.array([], dtype=np.int64),
                                          np.array([[0, 1], [1, 0]])]),
              st.sampled_from([None, "0123", [True, False], np.array(["1", "2"])]))
RNG = Kind(st.one_of(st.integers(0, 2**32), st.integers(0, 100).map(np.random.default_rng)),
           st.sampled_from([-1, -(2**40)]), st.sampled_from([None, "seed", 1.5, [1], True]))
RNG_OPTIONAL = Kind(RNG.valid, RNG.bad_range, st.sampled_from(["seed", 1.5, [1], True]))  # None: not given
ALPHA = _kind([st.floats(0.05, 100.0), st.sampled_from([0.1, 0.5, 1e3])], [0.0, -1.0] + NON_FINITE)
SCHEME = _kind([st.sampled_from(["cyclic", "authors_random"])], ["", "random", "Cyclic"],
               st.sampled_from([None, 1, True, b"cyclic"]))
NAME = _kind([st.sampled_from(sorted(registry.REGISTRY) + ["MNIST", "fashion_mnist", "Fashion-MNIST"])],
             ["", "svhn", "mnist2", "imagenet"], st.sampled_from([None, 1, True, b"mnist", ["mnist"]]))
IDX_BYTES = Kind(st.sampled_from([
    bytes([0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 3]),
    bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4]),
    bytes([0, 0, 0x0D, 1, 0, 0, 0, 1]) + np.array([1.5], ">f4").tobytes(),
]), st.one_of(st.binary(max_size=40), st.sampled_from([bytes([0, 0, 8, 1, 0, 0, 0, 0]),
                                                       bytes([0, 0, 8, 1, 0, 0, 0, 9, 1])])),
    st.sampled_from([None, "IDX", 3, [0, 0, 8, 1]]))
RECORD = 1 + 3 * 32 * 32
CIFAR_BYTES = Kind(st.integers(1, 3).flatmap(lambda k: st.integers(0, 9).map(
                       lambda lab: bytes([lab] + [7] * (RECORD - 1)) * k)),
                   st.one_of(st.binary(max_size=50), st.just(bytes([12] + [0] * (RECORD - 1)))),
                   st.sampled_from([None, "records", 3]))
UNIT_IMAGES = Kind(st.lists(st.integers(0, 255), min_size=1, max_size=8).map(lambda v: np.array(v, np.uint8)),
                   st.sampled_from([np.array([300], dtype=np.int64), np.array([-1], dtype=np.int64),
                                    np.array([0.5, math.nan])]),
                   st.sampled_from([None, "img", [True]]))


def _parts_kind(args: dict) -> Kind:
    labels = args["labels"]
    n = len(labels) if isinstance(labels, np.ndarray) and labels.ndim == 1 else 10
    valid = st.tuples(st.integers(1, 5), st.integers(0, 2**16)).map(lambda a: [
        np.sort(c) for c in np.array_split(np.random.default_rng(a[1]).permutation(n), a[0])])
    return Kind(valid, st.sampled_from([[np.array([n + 3])], [np.array([-1])], [np.array([0.5])]]),
                st.sampled_from([None, "parts", 3]))


def _shards_clients(args: dict) -> Kind:
    return _kind([st.sampled_from([1, 2, 5, 10])], [0, -1, 10**6], st.sampled_from(["2", True, None, 2.0]))


SPECS: dict[str, tuple] = {
    # ------------------------------------------------------------------- alidpfl.budget
    "budget.privacy_iterations": (budget.privacy_iterations, Spec(P(epsilon=EPS, q=Q, sigma=SIGMA, delta=DELTA), out_int,
                                                                  examples=40)),
    "budget.make_budgets": (budget.make_budgets, Spec(P(epsilon=EPS, rounds=_strict(1, 10**4), q=Q, sigma=SIGMA,
                                                        delta=DELTA), out_budgets, examples=40)),
    "budget.Budgets": (budget.Budgets, Spec(P(epsilon=POS, rounds=COUNT, iterations=COUNT),
                                            lambda r, a: None)),
    "budget.fixed_tau_stop": (budget.fixed_tau_stop, Spec(P(budgets=BUDGETS, tau=_tau_within), out_stop)),
    "budget.BudgetCounter": (budget.BudgetCounter, Spec(P(budgets=BUDGETS, rounds_done=_done_within("rounds"),
                                                          iterations_done=_done_within("iterations")), out_counter)),
    # ------------------------------------------------------------------- alidpfl.tau_rule
    "tau_rule.noise_term": (tau_rule.noise_term, Spec(P(d=COUNT, sigma=POS, clip=POS, batch=POS), out_pos_float)),
    "tau_rule.gap_h": (tau_rule.gap_h, Spec(P(x=REALS_X, xi=NONNEG, beta=POS, eta=POS, noise=NONNEG), out_gap)),
    "tau_rule.gap_h_printed": (tau_rule.gap_h_printed, Spec(P(x=REALS_X, xi=NONNEG, beta=POS, eta=POS, d=COUNT,
                                                              sigma=POS, clip=POS, batch=POS), out_gap)),
    "tau_rule.lambda_omega": (tau_rule.lambda_omega, Spec(P(rule=RULE, loss=NONNEG, distance_from_start=NONNEG),
                                                          out_lambda_omega)),
    "tau_rule.Constants": (tau_rule.Constants, Spec(P(rho=NONNEG, beta=_kind([st.floats(0.0, 10.0)], [-1.0] + NON_FINITE),
                                                      xi=NONNEG, lam=POS, omega=POS), out_constants)),
    "tau_rule.choose_tau": (tau_rule.choose_tau, Spec(P(constants=CONSTANTS, tau_prev=_strict(1, 60),
                                                        eta=FLOATS, noise=NONNEG, iterations_done=COUNT0,
                                                        rounds_left=COUNT0, iterations_left=COUNT0,
                                                        tau_cap=_strict(1, 100)), out_choose)),
    # ------------------------------------------------------------------- alidpfl helpers
    "setting.expected_labels_per_client": (setting.expected_labels_per_client, Spec(
        P(n_shards=_kind([st.sampled_from([10, 40, 400, 1000])], [0, -4], st.sampled_from(["400", True, None, 400.0])),
          shards_per_client=_kind([st.integers(1, 10)], [0, -1], st.sampled_from(["4", True, None, 4.0])),
          n_classes=_kind([st.sampled_from([1, 2, 5, 10])], [0, -1], st.sampled_from(["10", True, None, 10.0]))),
        out_labels_per_client)),
    "setting.scale_images": (setting.scale_images, Spec(P(images=IMAGES), out_scaled)),
    "dpsgd.clip_factors": (dpsgd.clip_factors, Spec(P(norms=NORMS, clip=POS), out_factors)),
    "dpsgd.poisson_batch": (dpsgd.poisson_batch, Spec(P(n=_strict(0, 5000), q=PROB, generator=GEN), out_batch)),
    "training.client_generators": (training.client_generators, Spec(P(seed=_strict(0, 2**32), n_clients=_strict(1, 50)),
                                                                    out_generators)),
    # ------------------------------------------------------------------- data
    "partition.as_generator": (partition.as_generator, Spec(P(rng=RNG), out_generator)),
    "partition.label_shards": (partition.label_shards, Spec(
        P(labels=LABELS, n_clients=_shards_clients, shards_per_client=_kind([st.just(1), st.just(2)], [0, -1, 10**6],
                                                                            st.sampled_from(["2", True, None, 2.0])),
          rng=RNG), out_parts, fixed={"n_shards": 20})),
    "partition.het_mnist": (partition.het_mnist, Spec(
        P(labels=LABELS, n_digits=_kind([st.integers(1, 10)], [0, -1, 11], st.sampled_from(["2", True, None, 2.0])),
          n_clients=_kind([st.sampled_from([10, 20])], [0, -10, 15, 5], st.sampled_from(["10", True, None, 10.0])),
          scheme=SCHEME, rng=RNG_OPTIONAL), out_parts)),
    "partition.dirichlet_label_skew": (partition.dirichlet_label_skew, Spec(
        P(labels=LABELS, n_clients=_kind([st.integers(1, 10)], [0, -1, 10**7], st.sampled_from(["2", True, None, 2.0])),
          alpha=ALPHA, rng=RNG), out_parts)),
    "partition.client_label_counts": (partition.client_label_counts, Spec(P(labels=LABELS, parts=_parts_kind),
                                                                          out_counts)),
    "registry.canonical_name": (registry.canonical_name, Spec(P(name=NAME), out_name)),
    "registry.dataset_spec": (registry.dataset_spec, Spec(P(name=NAME), out_spec)),
    "registry.dataset_files": (registry.dataset_files, Spec(P(name=NAME), out_files)),
    "formats.parse_idx": (formats.parse_idx, Spec(P(data=IDX_BYTES), out_idx, fixed={"source": "data"})),
    "formats.parse_cifar10_records": (formats.parse_cifar10_records, Spec(P(data=CIFAR_BYTES), out_records,
                                                                          fixed={"source": "data", "n_classes": 10})),
    "datasets.to_unit_float": (datasets.to_unit_float, Spec(P(images=UNIT_IMAGES), out_unit)),
}


@pytest.mark.parametrize("qualname", sorted(SPECS))
def test_alidpfl_data_api_contract(qualname):
    fn, spec = SPECS[qualname]
    check_contract(fn, spec)
