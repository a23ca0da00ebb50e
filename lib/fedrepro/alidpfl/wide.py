"""DPFL with a wider CNN: the model-width knob of "what it would take" (Ling et al., ALI-DPFL).

The paper never names its model (reference notes §1); :mod:`fedrepro.alidpfl.models` takes
the public code's CNN (conv 32 → conv 64 → FC 512 → 10). :class:`WideCNN` multiplies every
hidden width by ``width`` (conv 32·width → conv 64·width → FC 512·width → 10), keeping the
kernels, the pooling and the initialisation scheme of :func:`fedrepro.alidpfl.models.make_cnn`
(uniform on ±1/√fan_in, layer by layer from one generator seeded by ``SeedSequence(seed)``),
so that ``width = 1`` is exactly the paper's model with the same initial parameters.

:func:`train_wide` runs DPFL (Alg. 1, fixed τ) with it: the same local DP-SGD steps as
:func:`fedrepro.alidpfl.training.train` with ``method="stacked"``
(:func:`fedrepro.alidpfl.training.stacked_steps`: Poisson rate q, per-sample clipping to C,
noise N(0, σ²C²) on the sum, divided by the batch divisor, step η), the same client
generators (:func:`fedrepro.alidpfl.training.client_generators`) and the |D_i|-weighted
average (eq. 1). Width changes neither the sampling, the clipping nor the noise multiplier,
so the privacy accounting of a run is the one of the paper's model. No checkpoints: one run
is minutes.
"""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from fedrepro.alidpfl import stacked
from fedrepro.alidpfl.models import _validate_shape
from fedrepro.alidpfl.setting import FederatedData
from fedrepro.alidpfl.training import RunPlan, check_data, client_generators, evaluate, stacked_steps
from fedrepro.core.validate import ParameterTypeError, check_int

__all__ = ["WideCNN", "make_wide_cnn", "train_wide"]


class WideCNN(nn.Module):
    """conv5×5(32w) → ReLU → maxpool2 → conv5×5(64w) → ReLU → maxpool2 → FC(512w) → ReLU → FC10."""

    def __init__(self, input_shape: tuple[int, int, int], width: int = 1, num_classes: int = 10) -> None:
        super().__init__()
        width = check_int("width", width, 1)
        c, h, w = input_shape
        self.conv1 = nn.Conv2d(c, 32 * width, kernel_size=5)
        self.conv2 = nn.Conv2d(32 * width, 64 * width, kernel_size=5)
        h2, w2 = ((h - 4) // 2 - 4) // 2, ((w - 4) // 2 - 4) // 2
        self.fc1 = nn.Linear(64 * width * h2 * w2, 512 * width)
        self.fc = nn.Linear(512 * width, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(F.relu(self.fc1(x.flatten(1))))


def make_wide_cnn(input_shape: tuple[int, int, int], width: int, *, seed: int) -> WideCNN:
    """:class:`WideCNN` initialised as :func:`fedrepro.alidpfl.models.make_cnn` (same draws
    for ``width = 1``)."""
    shape = _validate_shape(input_shape)
    check_int("seed", seed, 0)
    state = np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)[0]
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(state) & 0x7FFF_FFFF_FFFF_FFFF)
    model = WideCNN(shape, width)
    with torch.no_grad():
        for layer in (model.conv1, model.conv2, model.fc1, model.fc):
            bound = 1.0 / math.sqrt(layer.weight[0].numel())
            layer.weight.uniform_(-bound, bound, generator=gen)
            layer.bias.uniform_(-bound, bound, generator=gen)
    return model


def train_wide(plan: RunPlan, data: FederatedData, width: int) -> dict[str, Any]:
    """DPFL with fixed τ = ``plan.tau`` for ``plan.budgets.rounds`` rounds (each of τ local
    DP-SGD steps, at most ``plan.budgets.iterations`` in all) with :class:`WideCNN` of
    ``width``; returns the final full-test accuracy and loss, the test-subset curve every
    ``plan.curve_every`` rounds and d.

    Raises ValueError for ALI-DPFL plans (``plan.tau`` None), non-private plans, other
    methods than ``"stacked"`` or ``"fast"`` (both mean: the clients computed together) or
    ``width`` < 1."""
    if not isinstance(plan, RunPlan):
        raise ParameterTypeError(f"plan must be a RunPlan, got {type(plan).__name__}")
    width = check_int("width", width, 1)
    if plan.tau is None:
        raise ValueError("plan.tau must be a fixed tau (DPFL): the wide model runs Alg. 1 only")
    if not (plan.clip and plan.noise):
        raise ValueError("plan.clip and plan.noise must be True: the wide model runs DP training only")
    if plan.method not in ("stacked", "fast"):
        raise ValueError(f"plan.method must be 'stacked' or 'fast', got {plan.method!r}")
    check_data(data)
    shape = tuple(int(s) for s in data.clients[0].x.shape[1:])
    model = make_wide_cnn(shape, width, seed=plan.seed)  # type: ignore[arg-type]
    shapes = [p.shape for p in model.parameters()]
    w = parameters_to_vector(model.parameters()).detach().clone()
    gens = client_generators(plan.seed, len(data.clients))
    sizes = data.sizes.astype(np.float64)
    weights = torch.from_numpy(sizes / sizes.sum() if plan.aggregation == "weighted"
                               else np.full(len(sizes), 1.0 / len(sizes)))
    xs = [torch.from_numpy(np.ascontiguousarray(c.x)) for c in data.clients]
    ys = [torch.from_numpy(np.ascontiguousarray(c.y)) for c in data.clients]
    curve_rng = np.random.default_rng(np.random.SeedSequence([plan.seed, 0xA11D]).spawn(len(xs) + 2)[-1])
    curve_idx = np.sort(curve_rng.permutation(len(data.test_y))[: min(plan.curve_size, len(data.test_y))])
    settings = plan.dpsgd_settings()
    counter = types.SimpleNamespace(sampled_records=0)
    rounds = min(plan.budgets.rounds, plan.budgets.iterations // plan.tau)
    curve: dict[int, float] = {}
    for r in range(1, rounds + 1):
        params = stacked.stack(w, shapes, len(xs))
        stacked_steps(params, xs, ys, gens, plan.tau, settings, counter)  # type: ignore[arg-type]
        w = (weights @ stacked.unstack_flat(params).double()).float()
        if r % plan.curve_every == 0:
            vector_to_parameters(w.clone(), model.parameters())
            curve[r] = evaluate(model, data.test_x[curve_idx], data.test_y[curve_idx])["accuracy"]
    vector_to_parameters(w.clone(), model.parameters())
    final = evaluate(model, data.test_x, data.test_y)
    return {"rounds": rounds, "iterations": rounds * plan.tau, "final_accuracy": final["accuracy"],
            "final_loss": final["loss"], "curve_rounds": np.array(sorted(curve), dtype=np.int64),
            "curve_accuracy": np.array([curve[k] for k in sorted(curve)]),
            "sampled_records": int(counter.sampled_records),
            "d": int(sum(p.numel() for p in model.parameters()))}
