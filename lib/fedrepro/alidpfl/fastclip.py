"""Per-sample clipping for the ALI-DPFL CNN at about the cost of one ordinary backward pass.

Notation for one layer with output z = W·a + b, batch index s, per-sample output gradient
δ_s = ∂ℓ_s/∂z_s (the backward pass computes every δ_s: sample s's loss only reaches z_s):

* linear layer (a_s ∈ ℝ^k, δ_s ∈ ℝ^m): ∇_W ℓ_s = δ_s a_sᵀ is rank one, so
  ‖∇_W ℓ_s‖² + ‖∇_b ℓ_s‖² = ‖δ_s‖²(‖a_s‖² + 1) — no per-sample gradient is formed;
* convolution (δ_s ∈ ℝ^{m×L} over L output positions, U_s ∈ ℝ^{k×L} the unfolded input
  patches): ∇_W ℓ_s = δ_s U_sᵀ and ∇_b ℓ_s = δ_s 1. Its squared norm is either computed from
  the materialised m×k matrix (cheap here: 800 and 52k numbers per sample) or by the Gram
  identity ‖δ_s U_sᵀ‖² = ⟨δ_sᵀδ_s, U_sᵀU_s⟩ (L×L matrices; ``conv_norm="gram"``).

With ‖g_s‖² the sum over layers and c_s = min(1, C/‖g_s‖), the clipped sum is linear in the
δ's: Σ_s c_s ∇_W ℓ_s = Σ_s (c_s δ_s) a_sᵀ. *Book-keeping* (``sum_by="bookkeeping"``, the
default) forms it from the activations and output gradients already at hand: one matrix
product per linear layer, a weighted sum of the materialised per-sample gradients (or one
weight-gradient convolution with the reweighted δ) per convolution. The alternative
(``sum_by="reweight"``) runs a second backward pass of Σ_s c_s ℓ_s. The first backward pass
stops at the layer outputs: it never forms parameter gradients and skips conv1's input
gradient, so book-keeping costs about one non-private step plus the norms.
``benchmarks/dpsgd_throughput.py --variants`` measures the four combinations; the defaults are
the fastest measured on our CPU (see ``benchmarks/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn import functional as F

from fedrepro.alidpfl.models import CNN

__all__ = ["FastOptions", "clipped_sum", "per_sample_norms", "unfold_patches"]

_CONV_NORMS = ("materialise", "gram")
_SUM_BY = ("bookkeeping", "reweight")


@dataclass(frozen=True)
class FastOptions:
    """How the fast method computes conv norms and the clipped sum (see module docstring)."""

    conv_norm: str = "materialise"
    sum_by: str = "bookkeeping"

    def __post_init__(self) -> None:
        if self.conv_norm not in _CONV_NORMS:
            raise ValueError(f"conv_norm must be one of {_CONV_NORMS}, got {self.conv_norm!r}")
        if self.sum_by not in _SUM_BY:
            raise ValueError(f"sum_by must be one of {_SUM_BY}, got {self.sum_by!r}")


DEFAULT_OPTIONS = FastOptions()


def _norm_rows(t: torch.Tensor) -> torch.Tensor:
    """Euclidean norm of each row of a (B, ...) tensor (``vector_norm``: ``pow(2).sum()`` is slow here)."""
    return torch.linalg.vector_norm(t.reshape(t.shape[0], -1), dim=1)


class _Pass:
    """Forward to the layer outputs and backward to their gradients (no parameter gradients)."""

    def __init__(self, model: CNN, x: torch.Tensor, y: torch.Tensor, *, weights_require_grad: bool) -> None:
        c1, c2, f1, f2 = model.conv1, model.conv2, model.fc1, model.fc
        if weights_require_grad:
            w = [c1.weight, c1.bias, c2.weight, c2.bias, f1.weight, f1.bias, f2.weight, f2.bias]
        else:
            w = [t.detach() for t in (c1.weight, c1.bias, c2.weight, c2.bias, f1.weight, f1.bias,
                                      f2.weight, f2.bias)]
        self.x = x
        z1 = F.conv2d(x, w[0], w[1])
        if not weights_require_grad:
            z1.requires_grad_(True)
        self.h1 = F.max_pool2d(F.relu(z1), 2)
        z2 = F.conv2d(self.h1, w[2], w[3])
        self.h2 = F.max_pool2d(F.relu(z2), 2).flatten(1)
        z3 = F.linear(self.h2, w[4], w[5])
        self.h3 = F.relu(z3)
        z4 = F.linear(self.h3, w[6], w[7])
        self.losses = F.cross_entropy(z4, y, reduction="none")
        self.d1, self.d2, self.d3, self.d4 = torch.autograd.grad(
            self.losses.sum(), [z1, z2, z3, z4], retain_graph=weights_require_grad)
        self.h1 = self.h1.detach()
        self.h2 = self.h2.detach()
        self.h3 = self.h3.detach()


def unfold_patches(a: torch.Tensor, k: int) -> torch.Tensor:
    """The k×k patches of ``a`` (B, c, h, w) as (B, c·k·k, L), ordered like ``F.unfold`` and the
    conv weight (c, i, j); built from a strided view (a plain copy, faster than ``F.unfold`` here)."""
    b, c, h, w = a.shape
    a = a.contiguous()
    sb, sc, sh, sw = a.stride()
    view = a.as_strided((b, c, k, k, h - k + 1, w - k + 1), (sb, sc, sh, sw, sh, sw))
    return view.reshape(b, c * k * k, (h - k + 1) * (w - k + 1))


def _conv_parts(a: torch.Tensor, d: torch.Tensor, kernel: int, conv_norm: str, need_grads: bool):
    """Per-sample squared norms of a conv layer's (W, b) gradient, and the per-sample weight
    gradients (B, m, k) when materialised and ``need_grads``."""
    b, m = d.shape[0], d.shape[1]
    dl = d.reshape(b, m, -1)                       # (B, m, L)
    u = unfold_patches(a, kernel)                  # (B, k, L)
    bias = dl.sum(dim=2)                           # (B, m)
    if conv_norm == "materialise":
        g = torch.bmm(dl, u.transpose(1, 2))       # (B, m, k)
        sq = _norm_rows(g).square() + _norm_rows(bias).square()
        return sq, (g if need_grads else None), bias
    dd = torch.bmm(dl.transpose(1, 2), dl)         # (B, L, L)
    uu = torch.bmm(u.transpose(1, 2), u)           # (B, L, L)
    sq = (dd * uu).sum(dim=(1, 2)) + _norm_rows(bias).square()
    return sq, None, bias


def _norms_and_parts(p: _Pass, options: FastOptions, need_grads: bool):
    sq1, g1, b1 = _conv_parts(p.x, p.d1, 5, options.conv_norm, need_grads)
    sq2, g2, b2 = _conv_parts(p.h1, p.d2, 5, options.conv_norm, need_grads)
    n3 = _norm_rows(p.d3)
    n4 = _norm_rows(p.d4)
    sq3 = n3.square() * (_norm_rows(p.h2).square() + 1.0)
    sq4 = n4.square() * (_norm_rows(p.h3).square() + 1.0)
    norms = torch.sqrt(sq1 + sq2 + sq3 + sq4)
    return norms, (g1, b1, g2, b2)


def per_sample_norms(model: CNN, x: torch.Tensor, y: torch.Tensor, *,
                     options: FastOptions = DEFAULT_OPTIONS) -> torch.Tensor:
    """‖∇_w ℓ(w; x_s, y_s)‖ for each sample s of the batch (cross-entropy loss)."""
    _check_model(model)
    p = _Pass(model, x, y, weights_require_grad=False)
    norms, _ = _norms_and_parts(p, options, need_grads=False)
    return norms


def _check_model(model: object) -> None:
    if not isinstance(model, CNN):
        raise ValueError(f"method 'fast' needs a fedrepro.alidpfl.models.CNN, got {type(model).__name__}")


def clipped_sum(model: CNN, x: torch.Tensor, y: torch.Tensor, clip: float, *,
                options: FastOptions = DEFAULT_OPTIONS) -> list[torch.Tensor]:
    """Σ_s min(1, C/‖g_s‖) g_s over the batch, one tensor per parameter (parameters() order)."""
    _check_model(model)
    reweight = options.sum_by == "reweight"
    p = _Pass(model, x, y, weights_require_grad=reweight)
    norms, (g1, b1, g2, b2) = _norms_and_parts(p, options, need_grads=not reweight)
    c = torch.clamp(clip / norms, max=1.0)
    if reweight:
        params = [model.conv1.weight, model.conv1.bias, model.conv2.weight, model.conv2.bias,
                  model.fc1.weight, model.fc1.bias, model.fc.weight, model.fc.bias]
        return list(torch.autograd.grad((c.detach() * p.losses).sum(), params))
    out = []
    for layer, a, d, g, bias in ((model.conv1, p.x, p.d1, g1, b1), (model.conv2, p.h1, p.d2, g2, b2)):
        if g is not None:
            w = (c @ g.reshape(g.shape[0], -1)).reshape(layer.weight.shape)
        else:
            w = torch.nn.grad.conv2d_weight(a, layer.weight.shape, d * c[:, None, None, None])
        out += [w, c @ bias]
    for a, d in ((p.h2, p.d3), (p.h3, p.d4)):
        cd = d * c[:, None]
        out += [cd.t() @ a, cd.sum(dim=0)]
    return out
