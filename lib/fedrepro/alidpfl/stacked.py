"""The clients of a round computed together: the ALI-DPFL CNN with one parameter copy per client.

Every round of DPFL / ALI-DPFL (Ling et al., Alg. 1 and 2) starts all N clients from the
same global model ŵ; after their first local step they hold N different models. This module
evaluates the CNN of :mod:`fedrepro.alidpfl.models` for M clients at once, each with its own
parameters, stacked along a leading client axis (``(M, *shape)`` per parameter, in
``model.parameters()`` order):

* convolutions are *grouped* convolutions (``groups=M``): client m's images are channel
  group m of one input, its filters group m of one weight;
* the linear layers are batched matrix products (``baddbmm``) over the client axis.

Clients whose batches differ in size are padded to the largest batch; a padded row carries a
zero weight in the loss, so its output gradient and its contribution to every sum are exactly
zero (its gradient norm is 0 and it adds nothing).

:func:`clipped_sums` is the DP-SGD part of a step for all clients (line 8–10 of Alg. 1
without the noise): Σ_{s∈𝓑_m} g_s·min(1, C/‖g_s‖) per client m, by the same identities as
:mod:`fedrepro.alidpfl.fastclip` (one forward, one backward to the layer outputs, per-sample
norms of the linear layers from ‖δ_s‖²(‖a_s‖² + 1), the convolutions' per-sample gradients
materialised one client at a time so that they stay in cache, the clipped sum by
book-keeping). :func:`mean_loss_gradients` gives each client's mean loss F_i and its gradient
∇F_i at its own parameters (the estimates of §IV-B). Both agree with the per-client
computations (``fastclip``, plain autograd) up to float32 rounding; the tests pin it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn import functional as F

from fedrepro.alidpfl.fastclip import unfold_patches

__all__ = ["stack", "unstack_flat", "clipped_sums", "mean_loss_gradients", "forward"]

_KERNEL = 5


def stack(flat: torch.Tensor, shapes: Sequence[torch.Size], m: int) -> list[torch.Tensor]:
    """M independent copies (fresh storage, never views of ``flat``) of the flat parameter
    vector ``flat``, one ``(M, *shape)`` tensor per parameter."""
    out, k = [], 0
    for shape in shapes:
        n = int(torch.Size(shape).numel())
        piece = flat[k:k + n].reshape(shape)
        out.append(piece.unsqueeze(0).repeat((m,) + (1,) * len(shape)))
        k += n
    if k != flat.numel():
        raise ValueError(f"flat has {flat.numel()} entries, the shapes need {k}")
    return out


def unstack_flat(params: Sequence[torch.Tensor]) -> torch.Tensor:
    """(M, d): client m's parameters as one flat vector (``parameters_to_vector`` order)."""
    m = params[0].shape[0]
    return torch.cat([p.reshape(m, -1) for p in params], dim=1)


def _pad(xs: Sequence[torch.Tensor], ys: Sequence[torch.Tensor]):
    m = len(xs)
    b = max(int(x.shape[0]) for x in xs)
    shape = tuple(xs[0].shape[1:])
    x = xs[0].new_zeros((m, b) + shape)
    y = torch.zeros((m, b), dtype=torch.int64)
    mask = torch.zeros((m, b), dtype=xs[0].dtype)
    for i, (xi, yi) in enumerate(zip(xs, ys, strict=True)):
        n = int(xi.shape[0])
        x[i, :n] = xi
        y[i, :n] = yi
        mask[i, :n] = 1.0
    return x, y, mask


def forward(params: Sequence[torch.Tensor], x: torch.Tensor, *, keep: bool = False):
    """Logits (M, b, classes) of the M stacked CNNs on inputs ``x`` (M, b, c, h, w).

    With ``keep`` also returns the layer outputs z1..z4 and the inputs of every layer
    (for per-sample gradients)."""
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    m, b = x.shape[0], x.shape[1]
    xg = x.transpose(0, 1).reshape(b, m * x.shape[2], x.shape[3], x.shape[4])
    z1 = F.conv2d(xg, w1.reshape(-1, *w1.shape[2:]), b1.reshape(-1), groups=m)
    if keep and z1.grad_fn is None:
        z1.requires_grad_(True)  # the backward of clipped_sums starts at the layer outputs
    h1 = F.max_pool2d(F.relu(z1), 2)
    z2 = F.conv2d(h1, w2.reshape(-1, *w2.shape[2:]), b2.reshape(-1), groups=m)
    h2 = F.max_pool2d(F.relu(z2), 2)
    h2 = h2.reshape(b, m, -1).transpose(0, 1)                       # (M, b, flat)
    z3 = torch.baddbmm(b3.unsqueeze(1), h2, w3.transpose(1, 2))     # (M, b, 512)
    h3 = F.relu(z3)
    z4 = torch.baddbmm(b4.unsqueeze(1), h3, w4.transpose(1, 2))     # (M, b, classes)
    if not keep:
        return z4
    return z4, (z1, z2, z3, z4), (xg, h1, h2, h3)


def _norm_sq(t: torch.Tensor, dims: int) -> torch.Tensor:
    """Squared Euclidean norm over the last ``dims`` axes."""
    return torch.linalg.vector_norm(t.flatten(start_dim=t.ndim - dims), dim=-1).square()


def clipped_sums(params: Sequence[torch.Tensor], xs: Sequence[torch.Tensor], ys: Sequence[torch.Tensor],
                 clip: float) -> list[torch.Tensor]:
    """Σ_{s} g_s·min(1, C/‖g_s‖) over client m's batch ``(xs[m], ys[m])`` for every client m,
    one ``(M, *shape)`` tensor per parameter; g_s is the gradient of sample s's cross-entropy
    at client m's parameters ``params[·][m]``, ‖·‖ the norm over all parameters. An empty
    batch gives zeros. The parameters are not changed."""
    m = params[0].shape[0]
    if len(xs) != m or len(ys) != m:
        raise ValueError(f"xs and ys must hold one batch per client ({m}), got {len(xs)} and {len(ys)}")
    if max(int(x.shape[0]) for x in xs) == 0:
        return [torch.zeros_like(p) for p in params]
    x, y, mask = _pad(xs, ys)
    b = x.shape[1]
    detached = [p.detach() for p in params]
    with torch.enable_grad():
        z4, zs, (xg, h1, h2, h3) = forward(detached, x, keep=True)
        z1, z2, z3 = zs[:3]
        losses = F.cross_entropy(z4.reshape(m * b, -1), y.reshape(-1), reduction="none").reshape(m, b)
        d1, d2, d3, d4 = torch.autograd.grad((losses * mask).sum(), [z1, z2, z3, z4])
    h1, h2, h3 = h1.detach(), h2.detach(), h3.detach()
    c_in = xg.shape[1] // m
    # conv1, all clients: per-sample gradients (b·M, 32, c·25) are small
    d1 = d1.reshape(b, m, d1.shape[1] // m, -1)                      # (b, M, 32, L1)
    u1 = unfold_patches(xg.reshape(b * m, c_in, xg.shape[2], xg.shape[3]), _KERNEL)  # (b·M, c·25, L1)
    g1 = torch.bmm(d1.reshape(b * m, d1.shape[2], -1), u1.transpose(1, 2)).reshape(b, m, -1)
    bias1 = d1.sum(dim=3)                                            # (b, M, 32)
    sq = (_norm_sq(g1, 1) + _norm_sq(bias1, 1)).t()                  # (M, b)
    # linear layers: rank-one per-sample gradients
    sq = sq + _norm_sq(d3, 1) * (_norm_sq(h2, 1) + 1.0) + _norm_sq(d4, 1) * (_norm_sq(h3, 1) + 1.0)
    # conv2: per-sample gradients materialised one client at a time
    c2 = d2.shape[1] // m
    d2 = d2.reshape(b, m, c2, -1)                                    # (b, M, 64, L2)
    h1 = h1.reshape(b, m, h1.shape[1] // m, h1.shape[2], h1.shape[3])
    g2s, bias2 = [], d2.sum(dim=3)                                   # (b, M, 64)
    sq2 = torch.empty((m, b), dtype=sq.dtype)
    for i in range(m):
        g2 = torch.bmm(d2[:, i], unfold_patches(h1[:, i], _KERNEL).transpose(1, 2))  # (b, 64, 32·25)
        sq2[i] = _norm_sq(g2, 2)
        g2s.append(g2)
    sq = sq + sq2 + _norm_sq(bias2, 1).t()
    c = torch.clamp(clip / torch.sqrt(sq), max=1.0) * mask           # (M, b)
    ct = c.t()                                                       # (b, M)
    out = [torch.einsum("sm,smk->mk", ct, g1).reshape(params[0].shape),
           torch.einsum("sm,smk->mk", ct, bias1)]
    out.append(torch.stack([c[i] @ g2s[i].reshape(b, -1) for i in range(m)]).reshape(params[2].shape))
    out.append(torch.einsum("sm,smk->mk", ct, bias2))
    for a, d in ((h2, d3), (h3, d4)):
        cd = d * c.unsqueeze(2)                                      # (M, b, out)
        out += [torch.bmm(cd.transpose(1, 2), a), cd.sum(dim=1)]
    return out


def mean_loss_gradients(params: Sequence[torch.Tensor], xs: Sequence[torch.Tensor],
                        ys: Sequence[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """F_m = mean cross-entropy of client m's records ``(xs[m], ys[m])`` at its parameters,
    and ∇F_m: returns (F (M,), one ``(M, *shape)`` gradient per parameter)."""
    m = params[0].shape[0]
    sizes = torch.tensor([int(x.shape[0]) for x in xs], dtype=params[0].dtype)
    if torch.any(sizes == 0):
        raise ValueError("every client needs at least one record to estimate F_i")
    x, y, mask = _pad(xs, ys)
    leaves = [p.detach().requires_grad_(True) for p in params]
    with torch.enable_grad():
        z4 = forward(leaves, x)
        b = x.shape[1]
        losses = F.cross_entropy(z4.reshape(m * b, -1), y.reshape(-1), reduction="none").reshape(m, b)
        per_client = (losses * mask).sum(dim=1) / sizes
        grads = torch.autograd.grad(per_client.sum(), leaves)
    return per_client.detach(), list(grads)
