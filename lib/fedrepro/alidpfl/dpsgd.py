"""One DP-SGD step of ALI-DPFL (Ling et al., Alg. 1/2; reference notes §3).

A client with data D_i (``x``: (n, c, h, w), ``y``: (n,) class labels) does:

1. Poisson sampling: each record joins the batch 𝓑 independently with probability q;
2. per-sample gradients g_s of the cross-entropy loss, each clipped to norm C:
   ḡ_s = g_s · min(1, C/‖g_s‖) (‖·‖ the Euclidean norm over all d parameters);
3. g̃ = (Σ_{s∈𝓑} ḡ_s + 𝒩(0, σ²C² I_d)) / B with B = q·|D_i| the *expected* batch size
   (or ``settings.expected_batch``);
4. the SGD update w ← w − η g̃.

Public interface (stable; later additions only add keyword arguments or functions):

``DPSGDSettings(q, clip, sigma, lr, expected_batch=None)``
    frozen dataclass; validates its fields (``ValueError`` naming the field).
``dpsgd_step(model, x, y, settings, generator, *, method="fast", noise=True) -> int``
    one step, updating ``model`` in place; returns the realised batch size |𝓑|.
``noisy_clipped_gradient(model, x, y, settings, generator, *, method="fast", noise=True)``
    ``-> (list[Tensor], int)``: g̃ per parameter (in ``model.parameters()`` order, on the
    model's device) and |𝓑|, without touching the model. ``flatten(grads)`` makes it one vector.
``clipped_gradient_sum(model, xb, yb, clip, *, method="fast") -> list[Tensor]``
    Σ_s ḡ_s over an explicit batch (no sampling, no noise, no division).
``poisson_batch(n, q, generator) -> Tensor``: the sampled indices (int64, sorted).

Every function above also takes ``fast_options=`` (a :class:`fastclip.FastOptions`, used by
the ``"fast"`` method only) to pick a variant for benchmarking. Data ``x`` may live on any
device; the batch is moved to the model's device (``make_cnn(..., device=...)``).

Randomness: all of it comes from ``generator`` (a CPU ``torch.Generator``), in this order:
n uniforms for the Poisson sampling, then (when ``noise`` and σ > 0) one standard normal tensor per
parameter in ``model.parameters()`` order, drawn on the CPU and moved to the model's device.
So any two methods (and any two devices) given generators in the same state sample the same
batch and add the same noise, and the same seed gives the same trajectory.

Methods (identical updates up to floating-point rounding; a test pins 1e-5 relative):

``"loop"``
    batch-of-one forward/backward per sample: the straightforward reference.
``"opacus"``
    Opacus's ghost clipping (``GradSampleModuleFastGradientClipping``, as selected by
    ``grad_sample_mode="ghost"``): per-sample norms from hooks (linear layers by the
    activation/output-gradient identity, convolutions by materialised per-sample
    gradients), then a second, reweighted backward; our clip factor, sampling and noise.
``"fast"`` (default)
    :mod:`fedrepro.alidpfl.fastclip`: one forward, one backward to the layer outputs only,
    per-sample norms without materialising the linear layers' per-sample gradients, and the
    clipped sum by book-keeping from the same quantities (no second backward).

Clip factor: min(1, C/‖g_s‖) exactly (a zero gradient gets factor 1); the public code's
C/(‖g‖ + 1e-6) is smaller by a relative 1e-6/‖g‖ on clipped samples; we do not copy it.

Speed on CPU (``benchmarks/README.md``): run with the Makefile's ``GLIBC_TUNABLES`` and
``OMP_WAIT_POLICY=PASSIVE`` (both read at process start) and torch intra-op threads equal to
the cores given to the process.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from fedrepro.alidpfl import fastclip
from fedrepro.alidpfl.fastclip import FastOptions
from fedrepro.core.validate import ParameterTypeError, check_int
from fedrepro.privacy import mechanism

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "METHODS",
    "DPSGDSettings",
    "dpsgd_step",
    "noisy_clipped_gradient",
    "clipped_gradient_sum",
    "poisson_batch",
    "flatten",
    "clip_factors",
]

#: The implementations of the per-sample clipped sum, default first.
METHODS: tuple[str, ...] = ("fast", "loop", "opacus")


def _real(name: str, value: object) -> float:
    if (isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, (int, float))
            and not hasattr(value, "__float__")):
        raise ParameterTypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)  # type: ignore[arg-type]
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


@dataclass(frozen=True)
class DPSGDSettings:
    """Hyper-parameters of one DP-SGD step.

    q: Poisson sampling rate, in (0, 1]; clip: clipping norm C > 0; sigma: noise multiplier
    σ ≥ 0 (noise std σC on the sum); lr: step size η > 0; expected_batch: the divisor B > 0
    (default q·|D_i|, the expected Poisson batch size).
    """

    q: float
    clip: float
    sigma: float
    lr: float
    expected_batch: float | None = None

    def __post_init__(self) -> None:
        q = _real("q", self.q)
        if not 0.0 < q <= 1.0:
            raise ValueError(f"q must lie in (0, 1], got {self.q!r}")
        if _real("clip", self.clip) <= 0.0:
            raise ValueError(f"clip must be > 0, got {self.clip!r}")
        if _real("sigma", self.sigma) < 0.0:
            raise ValueError(f"sigma must be >= 0, got {self.sigma!r}")
        if _real("lr", self.lr) <= 0.0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.expected_batch is not None and _real("expected_batch", self.expected_batch) <= 0.0:
            raise ValueError(f"expected_batch must be > 0 (or None for q*|D_i|), got {self.expected_batch!r}")

    def divisor(self, n: int) -> float:
        """B: ``expected_batch`` if given, else q·n."""
        return float(self.expected_batch) if self.expected_batch is not None else float(self.q) * n


def _check_generator(generator: torch.Generator) -> None:
    if not isinstance(generator, torch.Generator):
        raise ParameterTypeError(f"generator must be a CPU torch.Generator, got {generator!r}")
    if generator.device.type != "cpu":
        raise ValueError(f"generator must be a CPU torch.Generator, got {generator!r}")


def poisson_batch(n: int, q: float, generator: torch.Generator) -> torch.Tensor:
    """Indices of a Poisson sample of {0..n−1} at rate q (n uniforms from ``generator``)."""
    _check_generator(generator)
    n = check_int("n", n, 0)
    qf = _real("q", q)
    if not 0.0 < qf <= 1.0:
        raise ValueError(f"q must lie in (0, 1], got {q!r}")
    u = torch.rand(n, generator=generator, dtype=torch.float64)
    return torch.nonzero(u < qf).reshape(-1)


def _parameters(model: nn.Module) -> list[torch.Tensor]:
    return [p for p in model.parameters() if p.requires_grad]


def _device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def _check_data(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise ValueError("x and y must be torch tensors")
    expected = getattr(model, "input_shape", None)
    if x.ndim != 4 or (expected is not None and tuple(x.shape[1:]) != tuple(expected)):
        want = f"(n, {', '.join(map(str, expected))})" if expected is not None else "(n, c, h, w)"
        raise ValueError(f"x must have shape {want}, got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got dtype {x.dtype}")
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(f"y must have shape ({x.shape[0]},) to match x, got {tuple(y.shape)}")
    if y.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
        raise ValueError(f"y must hold integer class labels, got dtype {y.dtype}")


def clip_factors(norms: torch.Tensor, clip: float) -> torch.Tensor:
    """min(1, C/‖g_s‖) per sample; a zero norm gives 1.

    Raises ValueError for a norm that is negative or not finite (a diverged gradient), naming
    ``norms``; TypeError when ``norms`` is not a tensor."""
    if not isinstance(norms, torch.Tensor):
        raise ParameterTypeError(f"norms must be a torch tensor, got {type(norms).__name__}")
    return mechanism.clip_factors(norms, clip)  # the one clipping rule (fedrepro.privacy.mechanism)


def flatten(grads: Sequence[torch.Tensor]) -> torch.Tensor:
    """The per-parameter tensors as one flat vector (``model.parameters()`` order)."""
    return torch.cat([g.reshape(-1) for g in grads])


# --------------------------------------------------------------------------- methods


def _clipped_sum_loop(model: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float,
                      options: FastOptions | None) -> list[torch.Tensor]:
    params = _parameters(model)
    total = [torch.zeros_like(p) for p in params]
    for s in range(x.shape[0]):
        loss = F.cross_entropy(model(x[s:s + 1]), y[s:s + 1], reduction="sum")
        grads = torch.autograd.grad(loss, params)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        factor = clip_factors(norm, clip)
        for t, g in zip(total, grads, strict=True):
            t.add_(g * factor)
    return total


def _clipped_sum_opacus(model: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float,
                        options: FastOptions | None) -> list[torch.Tensor]:
    from opacus.grad_sample import GradSampleModuleFastGradientClipping

    params = _parameters(model)
    saved = [p.grad for p in params]
    for p in params:
        p.grad = None
    training = model.training
    model.train()  # Opacus's hooks only record in training mode (the CNN has no mode-dependent layer)
    gsm = GradSampleModuleFastGradientClipping(
        model, batch_first=True, loss_reduction="sum", max_grad_norm=clip, use_ghost_clipping=True)
    try:
        with warnings.catch_warnings():
            # Opacus's hooks fire on module outputs when the input needs no gradient (torch warns).
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            # Opacus's two-pass ghost clipping (what DPTensorFastGradientClipping.backward does),
            # with the exact factor min(1, C/‖g‖) instead of Opacus's C/(‖g‖ + 1e-6).
            losses = F.cross_entropy(gsm(x), y, reduction="none")
            losses.sum().backward(retain_graph=True)
            for p in params:
                p.grad = None
            factors = clip_factors(gsm.get_norm_sample(), clip).detach()
            gsm.disable_hooks()
            (factors * losses).sum().backward()
            out = [p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p) for p in params]
    finally:
        gsm._close()
        model.train(training)
        for p, g in zip(params, saved, strict=True):
            p.grad = g
    return out


def _clipped_sum_fast(model: nn.Module, x: torch.Tensor, y: torch.Tensor, clip: float,
                      options: FastOptions | None) -> list[torch.Tensor]:
    return fastclip.clipped_sum(model, x, y, clip, options=options or fastclip.DEFAULT_OPTIONS)


_IMPLEMENTATIONS = {"loop": _clipped_sum_loop, "opacus": _clipped_sum_opacus, "fast": _clipped_sum_fast}


def clipped_gradient_sum(model: nn.Module, xb: torch.Tensor, yb: torch.Tensor, clip: float, *,
                         method: str = "fast", fast_options: FastOptions | None = None) -> list[torch.Tensor]:
    """Σ_s g_s · min(1, C/‖g_s‖) over the batch ``(xb, yb)`` (cross-entropy per sample).

    One tensor per parameter (``model.parameters()`` order), on the model's device; the
    model's parameters and their ``.grad`` are left as they were. An empty batch gives zeros.
    ``fast_options`` selects a variant of the fast method (:class:`fastclip.FastOptions`).
    """
    if method not in _IMPLEMENTATIONS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if _real("clip", clip) <= 0.0:
        raise ValueError(f"clip must be > 0, got {clip!r}")
    _check_data(model, xb, yb)
    device = _device(model)
    if xb.shape[0] == 0:
        return [torch.zeros_like(p) for p in _parameters(model)]
    xb = xb.to(device=device, dtype=next(model.parameters()).dtype)
    yb = yb.to(device=device, dtype=torch.int64)
    with torch.enable_grad():  # also when called under torch.no_grad()
        return _IMPLEMENTATIONS[method](model, xb, yb, float(clip), fast_options)


def noisy_clipped_gradient(model: nn.Module, x: torch.Tensor, y: torch.Tensor, settings: DPSGDSettings,
                           generator: torch.Generator, *, method: str = "fast",
                           noise: bool = True, fast_options: FastOptions | None = None
                           ) -> tuple[list[torch.Tensor], int]:
    """g̃ = (Σ_{s∈𝓑} ḡ_s + σC·ξ)/B on a Poisson batch 𝓑 of the client's data ``(x, y)``.

    Returns (g̃ per parameter, |𝓑|); the model is not changed. ``noise=False`` leaves out ξ
    (and draws no normals). See the module docstring for the order of random draws.
    """
    if not isinstance(settings, DPSGDSettings):
        raise ValueError(f"settings must be a DPSGDSettings, got {type(settings).__name__}")
    _check_generator(generator)
    _check_data(model, x, y)
    if x.shape[0] == 0:
        raise ValueError("x must hold at least one record: the divisor q*|D_i| of an empty client is 0")
    idx = poisson_batch(int(x.shape[0]), settings.q, generator)
    sums = clipped_gradient_sum(model, x[idx], y[idx], settings.clip, method=method, fast_options=fast_options)
    scale = 1.0 / settings.divisor(int(x.shape[0]))
    std = float(settings.sigma) * float(settings.clip)
    out = []
    for g in sums:
        if noise and std > 0.0:
            g = mechanism.add_gaussian_noise_(g, std, generator)
        out.append(g.mul_(scale))
    return out, int(idx.numel())


def dpsgd_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor, settings: DPSGDSettings,
               generator: torch.Generator, *, method: str = "fast", noise: bool = True,
               fast_options: FastOptions | None = None) -> int:
    """One DP-SGD step on the client's data ``(x, y)``: w ← w − η g̃ in place; returns |𝓑|."""
    grads, size = noisy_clipped_gradient(model, x, y, settings, generator, method=method, noise=noise,
                                         fast_options=fast_options)
    with torch.no_grad():
        for p, g in zip(_parameters(model), grads, strict=True):
            p.add_(g, alpha=-float(settings.lr))
    return size
