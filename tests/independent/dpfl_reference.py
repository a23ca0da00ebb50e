"""Plain reference implementation of DPFL (FedAvg with DP-SGD) and of the ALI-DPFL estimates.

Written from the paper: X. Ling, J. Fu, K. Wang, H. Liu, Z. Chen, "ALI-DPFL: Differentially
Private Federated Learning with Adaptive Local Iterations" -- Algorithm 1 (DPFL) for the
training loop and Section IV-B ("Perform Estimate") for rho_i, beta_i and xi_i. It is used by
the test suite to check the library's training loop and estimates, so it is deliberately
straightforward: a loop over rounds, a loop over clients, a loop over local steps; every client
trains its own copy of the global model; per-sample clipping, noise and the division by the
batch size are done by Opacus (``GradSampleModule`` + ``opacus.optimizers.DPOptimizer``).
Speed is not a goal. Only numpy, torch and opacus are imported.

One DP-SGD step of client i (n_i records, generator g, sampling rate q, clip C, noise
multiplier sigma, step size eta, divisor B = ``divisor`` or q * n_i)::

    w <- w - eta * ( sum_{s in batch} clip_C(grad l(w; s)) + N(0, sigma^2 C^2 I) ) / B

RNG protocol (each client has its own ``torch.Generator``, seeded by the caller; it is never
reseeded or copied, and nothing else draws from it):

1. Poisson sampling: ``u = torch.rand(n_i, generator=g, dtype=torch.float64)``; the batch is
   the indices with ``u < q`` in increasing order. The batch may be empty: the clipped sum is
   then zero, but the noise is still added and the step still taken.
2. Only if the noise is on (``noise_on`` and ``sigma > 0``): after the uniforms, one float32
   standard-normal tensor per parameter, in ``model.parameters()`` order (conv1.weight,
   conv1.bias, conv2.weight, conv2.bias, fc1.weight, fc1.bias, fc.weight, fc.bias), each of the
   parameter's shape, scaled by sigma * C. If the noise is off, no normals are drawn.

The global torch RNG is not touched (the model template is built under ``fork_rng``).

What Opacus 1.6.0 does, checked in its source (``opacus/optimizers/optimizer.py``), and how
it is used here:

* Noise: ``DPOptimizer.add_noise`` loops over its parameters in parameter order and calls
  ``torch.normal(mean=0, std=noise_multiplier * max_grad_norm, size=p.shape,
  generator=self.generator, dtype=p.dtype)``; with ``std == 0`` it returns zeros and draws
  nothing. This consumes the generator exactly as ``torch.randn(p.shape, generator=g)`` per
  parameter would. The values are randn * std computed inside the sampler: for tensors of
  fewer than 16 elements (fc.bias) torch's CPU sampler forms std * z in double and rounds
  once, so against ``torch.randn(p.shape, generator=g) * std`` an element may differ by one
  float32 ulp. So Opacus draws the noise itself here (``generator=g``, ``secure_mode`` off).
* Empty batch: ``clip_and_accumulate`` detects ``len(grad_samples[0]) == 0`` and uses an empty
  clip-factor vector, so the clipped sum is an exact zero tensor; the noise is then added and
  the gradient scaled as usual. GradSampleModule's hooks do fire on a zero-size batch and
  produce (0, ...) per-sample gradients (checked), so no special handling is needed here.
* ``expected_batch_size`` is annotated ``Optional[int]`` but is only used in
  ``scale_grad`` as ``p.grad /= expected_batch_size * accumulated_iterations`` (no cast, no
  check), so the real-valued B = q * n_i is passed as a Python float and used as is.
* Clipping: the factor is ``(C / (||g_s|| + 1e-6)).clamp(max=1)`` with ||g_s|| the norm over
  all parameters together. It is kept as is; on clipped samples it differs from the paper's
  min(1, C/||g_s||) by a relative ~1e-6/||g_s||.
* Loss scaling: the per-sample gradients come from a ``GradSampleModule`` with
  ``loss_reduction="sum"`` and a summed cross-entropy (so they are the true per-sample
  gradients, also for an empty batch), and the ``DPOptimizer`` has ``loss_reduction="mean"``
  with ``expected_batch_size=B``, so the update is exactly w - eta * (clipped sum + noise) / B.
* Clipping off: ``max_grad_norm = 2**40`` (the factor is then exactly 1 for any realistic
  gradient), and to keep the noise std equal to sigma * C (C = ``clip``) the noise multiplier
  passed to Opacus is sigma * C / 2**40; Opacus multiplies it back by 2**40, which is exact in
  floating point (power of two), so the std is exactly sigma * C.

Server: w <- sum_i (n_i / n) w_i (``weighted=True``) or the plain mean; the average is formed in
float64 and rounded once to float32.

Estimates (Section IV-B): F_i is the mean cross-entropy over the records given for client i;
the losses and gradients are computed in float64 on a float64 copy of the model.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from opacus import GradSampleModule
from opacus.optimizers import DPOptimizer

#: max_grad_norm used when clipping is off (a power of two, see the module docstring).
_NO_CLIP = 2.0**40

#: records per forward pass when evaluating losses / gradients for the estimates.
_EVAL_CHUNK = 500


class _ReferenceCNN(nn.Module):
    """conv5x5(32) -> ReLU -> maxpool2 -> conv5x5(64) -> ReLU -> maxpool2 -> FC512 -> ReLU -> FC10."""

    def __init__(self, input_shape: tuple[int, int, int] = (1, 28, 28)) -> None:
        super().__init__()
        c, h, w = input_shape
        self.conv1 = nn.Conv2d(c, 32, kernel_size=5)
        self.conv2 = nn.Conv2d(32, 64, kernel_size=5)
        h_out = ((h - 4) // 2 - 4) // 2
        w_out = ((w - 4) // 2 - 4) // 2
        self.fc1 = nn.Linear(64 * h_out * w_out, 512)
        self.fc = nn.Linear(512, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc(x)


def make_reference_cnn(input_shape: tuple[int, int, int] = (1, 28, 28)) -> torch.nn.Module:
    """Return the reference CNN for inputs of shape ``input_shape`` = (channels, height, width).

    conv 5x5 (channels -> 32, no padding) -> ReLU -> maxpool 2 -> conv 5x5 (32 -> 64) -> ReLU
    -> maxpool 2 -> flatten -> Linear(flat, 512) -> ReLU -> Linear(512, 10). Its parameters are
    named conv1.weight, conv1.bias, conv2.weight, conv2.bias, fc1.weight, fc1.bias, fc.weight,
    fc.bias, in this order of ``model.parameters()``. Initialised with torch's default
    initialisation (drawn from the global torch RNG).
    """
    return _ReferenceCNN(tuple(input_shape))


def _template_model(input_shape: tuple[int, int, int]) -> nn.Module:
    """A model of the right architecture, built without touching the caller's global RNG."""
    with torch.random.fork_rng(devices=[]):
        return make_reference_cnn(input_shape)


def _clone_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Detached float32 copies of a state dict (no shared storage with the input)."""
    return {k: v.detach().clone().to(torch.float32) for k, v in state.items()}


def _client_round(
    template: nn.Module,
    global_state: dict[str, torch.Tensor],
    x: torch.Tensor,
    y: torch.Tensor,
    g: torch.Generator,
    *,
    tau: int,
    q: float,
    clip: float,
    sigma: float,
    eta: float,
    divisor: float | None,
    clip_on: bool,
    noise_on: bool,
) -> tuple[dict[str, torch.Tensor], int]:
    """Run tau DP-SGD steps of one client from its own copy of the global model.

    Returns the client's final state dict and the number of records it sampled.
    """
    n_i = x.shape[0]
    model = copy.deepcopy(template)
    model.load_state_dict(global_state)  # copies the values into the model's own tensors
    model.train()
    gs_model = GradSampleModule(model, batch_first=True, loss_reduction="sum")

    if clip_on:
        max_grad_norm = float(clip)
        noise_multiplier = float(sigma) if (noise_on and sigma > 0) else 0.0
    else:
        max_grad_norm = _NO_CLIP
        noise_multiplier = float(sigma) * float(clip) / _NO_CLIP if (noise_on and sigma > 0) else 0.0
    expected_batch = float(divisor) if divisor is not None else float(q) * n_i

    optimizer = DPOptimizer(
        torch.optim.SGD(model.parameters(), lr=eta),
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        expected_batch_size=expected_batch,
        loss_reduction="mean",
        generator=g,
    )

    sampled = 0
    for _ in range(tau):
        # (a) Poisson sampling with the client's generator.
        u = torch.rand(n_i, generator=g, dtype=torch.float64)
        idx = torch.nonzero(u < q).flatten()  # increasing order; may be empty
        sampled += int(idx.numel())
        xb, yb = x[idx], y[idx]

        # (b)-(d): per-sample gradients of the summed loss; Opacus clips, sums, adds the
        # noise (drawn from g), divides by expected_batch; SGD takes the step.
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(gs_model(xb), yb, reduction="sum")
        with warnings.catch_warnings():
            # the inputs do not require grad; Opacus's full backward hooks still fire on the
            # module outputs, which is all they need, but torch warns about it.
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            loss.backward()
        optimizer.step()

    state = _clone_state(model.state_dict())
    gs_model.cleanup()  # remove the hooks and the attributes Opacus put on the parameters
    return state, sampled


def reference_dpfl(
    init_state: dict[str, torch.Tensor],
    clients: Sequence[tuple[np.ndarray, np.ndarray]],
    generators: Sequence[torch.Generator],
    *,
    rounds: int,
    tau: int,
    q: float,
    clip: float,
    sigma: float,
    eta: float,
    divisor: float | None = None,
    clip_on: bool = True,
    noise_on: bool = True,
    weighted: bool = True,
) -> dict:
    """Run DPFL (paper's Algorithm 1): FedAvg over all clients, each doing tau DP-SGD steps.

    Args:
        init_state: the initial global model w(0), a state dict of the reference CNN
            (float32 tensors, keys conv1.weight ... fc.bias).
        clients: per client ``(x, y)``; x float32 of shape (n_i, c, h, w), y int64 (n_i,).
        generators: one seeded CPU ``torch.Generator`` per client, consumed per the module's
            RNG protocol (uniforms for Poisson sampling, then normals for the noise).
        rounds: number of communication rounds.
        tau: local DP-SGD steps per client per round.
        q: Poisson sampling rate.
        clip: clipping norm C (over all parameters together).
        sigma: noise multiplier; noise std sigma * C on the sum of clipped gradients.
        eta: learning rate.
        divisor: the B the noisy sum is divided by; default the expected batch size q * n_i.
        clip_on: if False, per-sample gradients are not clipped (noise std stays sigma * clip).
        noise_on: if False (or sigma == 0), no noise and no normals are drawn.
        weighted: server average with weights n_i / n (True) or the plain mean (False).

    Returns:
        ``{"state": final global state dict (float32), "client_states": the clients' state
        dicts at the end of the last round (before averaging), "batch_sizes": total number of
        sampled records over all clients, rounds and steps}``.
    """
    if len(clients) != len(generators):
        raise ValueError("need one generator per client")
    xs = [torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) for x, _ in clients]
    ys = [torch.from_numpy(np.ascontiguousarray(y, dtype=np.int64)) for _, y in clients]
    sizes = [int(x.shape[0]) for x in xs]
    n_total = sum(sizes)
    if weighted:
        weights = [n_i / n_total for n_i in sizes]
    else:
        weights = [1.0 / len(clients)] * len(clients)

    template = _template_model(tuple(xs[0].shape[1:]))
    global_state = _clone_state(init_state)
    client_states: list[dict[str, torch.Tensor]] = []
    batch_sizes = 0

    for _ in range(rounds):
        client_states = []
        for i in range(len(clients)):
            state_i, sampled = _client_round(
                template,
                global_state,
                xs[i],
                ys[i],
                generators[i],
                tau=tau,
                q=q,
                clip=clip,
                sigma=sigma,
                eta=eta,
                divisor=divisor,
                clip_on=clip_on,
                noise_on=noise_on,
            )
            client_states.append(state_i)
            batch_sizes += sampled

        # Server: weighted average, formed in float64, rounded once to float32.
        new_state = {}
        for name in global_state:
            acc = torch.zeros_like(global_state[name], dtype=torch.float64)
            for w_i, state_i in zip(weights, client_states, strict=True):
                acc += w_i * state_i[name].to(torch.float64)
            new_state[name] = acc.to(torch.float32)
        global_state = new_state

    return {"state": global_state, "client_states": client_states, "batch_sizes": batch_sizes}


def _loss_and_grad(model64: nn.Module, x: np.ndarray, y: np.ndarray) -> tuple[float, torch.Tensor]:
    """Mean cross-entropy over all (x, y) and its gradient (flat, float64, parameter order)."""
    n = int(x.shape[0])
    if n == 0:
        raise ValueError("a client has no records to evaluate on")
    xt = torch.from_numpy(np.asarray(x)).to(torch.float64)
    yt = torch.from_numpy(np.asarray(y)).to(torch.int64)
    params = list(model64.parameters())
    grads = [torch.zeros_like(p) for p in params]
    total = 0.0
    for start in range(0, n, _EVAL_CHUNK):
        out = model64(xt[start : start + _EVAL_CHUNK])
        loss = F.cross_entropy(out, yt[start : start + _EVAL_CHUNK], reduction="sum") / n
        chunk_grads = torch.autograd.grad(loss, params)
        for acc, gr in zip(grads, chunk_grads, strict=True):
            acc += gr
        total += float(loss.detach())
    return total, torch.cat([gr.reshape(-1) for gr in grads])


def _flat(state: dict[str, torch.Tensor], names: list[str]) -> torch.Tensor:
    return torch.cat([state[k].detach().to(torch.float64).reshape(-1) for k in names])


def reference_estimates(
    global_state: dict[str, torch.Tensor],
    client_states: Sequence[dict[str, torch.Tensor]],
    clients: Sequence[tuple[np.ndarray, np.ndarray]],
    weights: Sequence[float],
) -> dict:
    """ALI-DPFL estimates of Section IV-B for one round.

    With w = ``global_state`` (the model broadcast at the start of the round), w_i =
    ``client_states[i]`` (after the local steps), F_i the mean cross-entropy over
    ``clients[i]`` (all records given) and grad F = sum_i weights_i grad F_i(w):

        rho_i  = |F_i(w_i) - F_i(w)| / ||w_i - w||
        beta_i = ||grad F_i(w_i) - grad F_i(w)|| / ||w_i - w||
        xi_i   = ||grad F_i(w) - grad F(w)||

    (rho_i = beta_i = 0 for a client with ||w_i - w|| = 0); rho, beta, xi are the
    ``weights``-weighted sums (weights = |D_i| / |D|). Norms are over all parameters
    together. Losses and gradients are computed in float64 on a float64 copy of the model.

    Returns ``{"rho", "beta", "xi"}`` (floats), ``{"rho_i", "beta_i", "xi_i", "distance_i"}``
    (numpy float64 arrays) and ``"loss_global"`` = sum_i weights_i F_i(w).
    """
    if not (len(client_states) == len(clients) == len(weights)):
        raise ValueError("client_states, clients and weights must have the same length")
    input_shape = tuple(np.asarray(clients[0][0]).shape[1:])
    model64 = _template_model(input_shape).to(torch.float64)
    names = [name for name, _ in model64.named_parameters()]
    w_flat = _flat(global_state, names)

    def evaluate(state: dict[str, torch.Tensor], x: np.ndarray, y: np.ndarray):
        model64.load_state_dict(state)  # float32 values copied into the float64 parameters
        return _loss_and_grad(model64, x, y)

    m = len(clients)
    loss_at_global = np.zeros(m)
    grads_at_global = []
    rho_i = np.zeros(m)
    beta_i = np.zeros(m)
    distance_i = np.zeros(m)
    for i, (x, y) in enumerate(clients):
        f_w, g_w = evaluate(global_state, x, y)
        f_wi, g_wi = evaluate(client_states[i], x, y)
        loss_at_global[i] = f_w
        grads_at_global.append(g_w)
        dist = float(torch.linalg.vector_norm(_flat(client_states[i], names) - w_flat))
        distance_i[i] = dist
        if dist > 0:
            rho_i[i] = abs(f_wi - f_w) / dist
            beta_i[i] = float(torch.linalg.vector_norm(g_wi - g_w)) / dist

    grad_global = sum(float(w) * g for w, g in zip(weights, grads_at_global, strict=True))
    xi_i = np.array([float(torch.linalg.vector_norm(g - grad_global)) for g in grads_at_global])

    wts = np.asarray(weights, dtype=np.float64)
    return {
        "rho": float(np.sum(wts * rho_i)),
        "beta": float(np.sum(wts * beta_i)),
        "xi": float(np.sum(wts * xi_i)),
        "rho_i": rho_i,
        "beta_i": beta_i,
        "xi_i": xi_i,
        "distance_i": distance_i,
        "loss_global": float(np.sum(wts * loss_at_global)),
    }
