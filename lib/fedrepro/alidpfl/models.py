"""The ALI-DPFL convolutional network, with a deterministic seeded initialisation.

The paper (Ling et al.) never names its model; we take the one of its public code
(a FedAvg-style CNN, see the reference notes §1): two 5×5 convolutions without padding
(32 and 64 channels), each followed by ReLU and 2×2 max-pooling, then a 512-unit hidden
layer with ReLU and 10 logits. For 1×28×28 inputs (Fashion-MNIST) it has d = 582,026
parameters; for 3×32×32 inputs (CIFAR-10) d = 878,538.

Initialisation follows PyTorch's default scheme for convolutions and linear layers (weights
and biases uniform on ±1/√fan_in), drawn from a ``torch.Generator`` seeded by
``numpy.random.SeedSequence(seed)``, so the same seed gives the same parameters on any
machine, independently of torch's global random state.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from fedrepro.core.validate import check_int

__all__ = ["CNN", "make_cnn", "num_parameters", "SUPPORTED_INPUT_SHAPES"]

#: Input shapes of the two datasets of the paper (channels, height, width).
SUPPORTED_INPUT_SHAPES: tuple[tuple[int, int, int], ...] = ((1, 28, 28), (3, 32, 32))


class CNN(nn.Module):
    """conv5×5(32) → ReLU → maxpool2 → conv5×5(64) → ReLU → maxpool2 → FC512 → ReLU → FC10.

    ``input_shape`` is (channels, height, width); the flattened dimension after the second
    pooling is 64·⌊(⌊(h−4)/2⌋−4)/2⌋·⌊(⌊(w−4)/2⌋−4)/2⌋ (1,024 for 28×28, 1,600 for 32×32).
    """

    def __init__(self, input_shape: tuple[int, int, int], num_classes: int = 10) -> None:
        super().__init__()
        c, h, w = input_shape
        self.input_shape: tuple[int, int, int] = (int(c), int(h), int(w))
        self.conv1 = nn.Conv2d(c, 32, kernel_size=5)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=5)
        h2, w2 = ((h - 4) // 2 - 4) // 2, ((w - 4) // 2 - 4) // 2
        self.flat_dim = 64 * h2 * w2
        self.fc1 = nn.Linear(self.flat_dim, 512)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc(x)


def _validate_shape(input_shape: tuple[int, int, int]) -> tuple[int, int, int]:
    try:
        shape = tuple(int(s) for s in input_shape)
        ok = len(shape) == 3 and all(not isinstance(s, bool) for s in input_shape)
    except (TypeError, ValueError):
        ok = False
    if not ok or shape[0] < 1 or min(shape[1:]) < 16:
        raise ValueError(
            f"input_shape must be (channels >= 1, height >= 16, width >= 16), got {input_shape!r}")
    return shape  # type: ignore[return-value]


def make_cnn(input_shape: tuple[int, int, int], *, seed: int,
             device: str | torch.device = "cpu") -> CNN:
    """The ALI-DPFL CNN for ``input_shape``, initialised deterministically from ``seed``.

    Weights and biases of every layer are drawn uniformly on ±1/√fan_in (PyTorch's default
    bounds) from one generator seeded by ``SeedSequence(seed)``, layer by layer in order.
    """
    shape = _validate_shape(input_shape)
    check_int("seed", seed, 0)
    state = np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)[0]
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(state) & 0x7FFF_FFFF_FFFF_FFFF)
    model = CNN(shape)
    with torch.no_grad():
        for layer in (model.conv1, model.conv2, model.fc1, model.fc):
            fan_in = layer.weight[0].numel()
            bound = 1.0 / math.sqrt(fan_in)
            layer.weight.uniform_(-bound, bound, generator=gen)
            layer.bias.uniform_(-bound, bound, generator=gen)
    return model.to(device)


def num_parameters(model: nn.Module) -> int:
    """d: the number of trainable scalars of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
