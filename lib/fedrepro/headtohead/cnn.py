"""Task T2 of the head-to-head part: the ALI-DPFL CNN on Fashion-MNIST, and the client
computations of the algorithms that run on it.

:class:`CNNProblem` is the federated problem: the clients' images and labels, an evaluation
set, and a fixed initial model (the CNN of :mod:`fedrepro.alidpfl.models`, d = 582,026,
seeded). A model is a flat float64 vector in ``model.parameters()`` order; the computations
run in float32 on a private copy of it (the CNN's own parameter storage: a client never
writes into the vector it was given).

The client computations are those of T1 (:mod:`fedrepro.headtohead.softmax`) on the CNN,
with the cross-entropy per record and no regulariser:

* :func:`dpsgd_steps` — τ DP-SGD steps: Poisson sample at rate q, per-record gradients
  clipped to C (:func:`fedrepro.alidpfl.dpsgd.clipped_gradient_sum`, the fast per-sample
  path), N(0, σ²C²I) added to the sum, divided by the expected batch q·n_i; step η. With
  ``clip=None`` and σ = 0: plain minibatch SGD (mean over the realised batch), the
  non-private reference.
* :func:`fedpaq_update` — private FedPAQ's message: E steps of the clipped mean over a Poisson
  sample (zero on an empty sample), then N(0, σ²Δ²I) with Δ = 2ηEC on the update, then Q_s.
* :func:`noisy_prox_steps` — Fed-PLT's private local training on the CNN: N_e noisy
  *subsampled* gradient steps on f_i(w) + ‖w − v‖²/(2ρ) (each step a sampled Gaussian
  release at rate q; a full-batch step over the client's 6,000 records, T1's choice, costs
  66 DP-SGD steps of the CNN).

Every random draw comes from the numpy generator passed in, in a fixed order (per step: the
n_i uniforms of the Poisson sample, then the d standard normals of the noise), as in T1. A
client whose model stops being finite stops its local steps and returns it as it is.

Device: the records, the work model and its arithmetic live on ``problem.device``
(``CNNProblem(..., device=...)``; by default ``$FEDREPRO_TORCH_DEVICE``, else the CPU:
:func:`fedrepro.core.device.resolve_device`). The draws stay on the CPU (numpy) and the
model is handed in and out as a float64 numpy vector, so a GPU run makes the same draws as a
CPU run and differs from it by float32 round-off only; on the CPU nothing is copied and the
results are those of the code without a device. The device is outside every result's
identity (it is recorded in the result's metadata).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch
from torch.nn import functional as F

from fedrepro.core.device import resolve_device
from fedrepro.core.validate import check_int, check_interval, check_nonnegative, check_positive

__all__ = ["CNNProblem", "dpsgd_steps", "fedpaq_update", "noisy_prox_steps", "load_into", "flat_parameters"]

#: Records per forward pass when evaluating.
_EVAL_BATCH = 1000


def load_into(model: torch.nn.Module, x: np.ndarray) -> None:
    """Copy the flat vector ``x`` into ``model``'s own parameter storage (never a view of x)."""
    flat = torch.from_numpy(np.asarray(x, dtype=np.float32))
    flat = flat.to(next(model.parameters()).device)
    k = 0
    with torch.no_grad():
        for p in model.parameters():
            n = p.numel()
            p.copy_(flat[k:k + n].view_as(p))
            k += n
    if k != flat.numel():
        raise ValueError(f"the model has {k} parameters, x has {flat.numel()}")


def flat_parameters(model: torch.nn.Module) -> np.ndarray:
    """The model's parameters as one flat float64 vector (a copy)."""
    with torch.no_grad():
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double().cpu().numpy().copy()


class CNNProblem:
    """A federated image-classification problem for the ALI-DPFL CNN (module docstring).

    ``clients`` is a sequence of (images float32 (n_i, c, h, w), labels int64 (n_i,)); the
    evaluation set ``(eval_x, eval_y)`` is the test set (final problem) or the pooled
    validation records (tuning problem). ``init_seed`` seeds the initial model. ``device``
    (default ``$FEDREPRO_TORCH_DEVICE``, else the CPU) holds the records and the work model
    (module docstring: outside the result's identity).
    """

    def __init__(self, clients: list[tuple[np.ndarray, np.ndarray]], eval_x: np.ndarray, eval_y: np.ndarray,
                 *, init_seed: int = 0, device: str | torch.device | None = None) -> None:
        from fedrepro.alidpfl.models import make_cnn

        if not clients:
            raise ValueError("clients must not be empty")
        self.device = resolve_device(device)
        xs, ys = [], []
        for i, (x, y) in enumerate(clients):
            x = np.ascontiguousarray(x, dtype=np.float32)
            y = np.ascontiguousarray(y, dtype=np.int64)
            if x.ndim != 4 or len(x) != len(y) or len(y) == 0:
                raise ValueError(f"client {i}: images must be (n, c, h, w) with n = len(labels) >= 1, "
                                 f"got {x.shape} and {y.shape}")
            xs.append(torch.from_numpy(x).to(self.device))
            ys.append(torch.from_numpy(y).to(self.device))
        eval_x = np.ascontiguousarray(eval_x, dtype=np.float32)
        eval_y = np.ascontiguousarray(eval_y, dtype=np.int64)
        if len(eval_x) != len(eval_y) or len(eval_y) == 0:
            raise ValueError(f"the evaluation set needs as many images as labels, at least one; got "
                             f"{len(eval_x)} and {len(eval_y)}")
        self.xs, self.ys = tuple(xs), tuple(ys)
        self.eval_x, self.eval_y = torch.from_numpy(eval_x).to(self.device), torch.from_numpy(eval_y).to(self.device)
        self.input_shape = tuple(int(s) for s in xs[0].shape[1:])
        self.init_seed = check_int("init_seed", init_seed, 0)
        self.net = make_cnn(self.input_shape, seed=self.init_seed, device=self.device)  # the work model
        self._init = flat_parameters(self.net)
        self.sizes = np.array([len(y) for y in ys], dtype=np.int64)
        self._last: tuple[bytes, tuple[float, float]] | None = None

    @property
    def n_devices(self) -> int:
        return len(self.xs)

    @property
    def dim(self) -> int:
        return int(self._init.size)

    def initial_model(self) -> np.ndarray:
        """The seeded initial model (a fresh copy)."""
        return self._init.copy()

    def evaluate(self, x: np.ndarray) -> tuple[float, float]:
        """(accuracy, mean cross-entropy) of the model ``x`` on the evaluation set (one
        forward pass for both; the last answer is kept for the same x)."""
        x = np.asarray(x, dtype=np.float64)
        key = hashlib.blake2b(x.tobytes(), digest_size=16).digest()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        load_into(self.net, x)
        correct, loss = 0, 0.0
        with torch.no_grad():
            for i in range(0, len(self.eval_y), _EVAL_BATCH):
                out = self.net(self.eval_x[i:i + _EVAL_BATCH])
                yb = self.eval_y[i:i + _EVAL_BATCH]
                loss += float(F.cross_entropy(out, yb, reduction="sum"))
                correct += int((out.argmax(1) == yb).sum())
        n = len(self.eval_y)
        result = (correct / n, loss / n)
        self._last = (key, result)
        return result

    def accuracy(self, x: np.ndarray) -> float:
        """Accuracy of ``x`` on the evaluation set."""
        return self.evaluate(x)[0]

    def loss(self, x: np.ndarray) -> float:
        """Mean cross-entropy of ``x`` on the evaluation set (T2 reports the evaluation loss:
        a pass over the 60,000 training images at every evaluation would cost more than the
        training of a round)."""
        return self.evaluate(x)[1]


def _sample(rng: np.random.Generator, n: int, rate: float) -> np.ndarray:
    return np.flatnonzero(rng.random(n) < rate)


def _gradient_sum(problem: CNNProblem, client: int, rows: np.ndarray, clip: float | None) -> torch.Tensor:
    """Σ_j min(1, C/‖g_j‖) g_j (``clip=None``: Σ_j g_j) over ``rows`` of ``client``, at the
    work model's parameters, as one flat float32 vector."""
    from fedrepro.alidpfl.dpsgd import clipped_gradient_sum

    net = problem.net
    if rows.size == 0:
        return torch.zeros(problem.dim, dtype=torch.float32, device=problem.device)
    idx = torch.from_numpy(rows).to(problem.device)
    xb, yb = problem.xs[client][idx], problem.ys[client][idx]
    if clip is None:
        params = list(net.parameters())
        with torch.enable_grad():
            loss = F.cross_entropy(net(xb), yb, reduction="sum")
            grads = torch.autograd.grad(loss, params)
    else:
        grads = clipped_gradient_sum(net, xb, yb, clip, method="fast")
    return torch.cat([g.reshape(-1) for g in grads])


def _step(net: torch.nn.Module, direction: torch.Tensor, lr: float) -> bool:
    """w ← w − η·direction on the work model; False once w is no longer finite."""
    k = 0
    with torch.no_grad():
        for p in net.parameters():
            n = p.numel()
            p.add_(direction[k:k + n].view_as(p), alpha=-lr)
            k += n
        return bool(all(torch.isfinite(p).all() for p in net.parameters()))


def _normals(rng: np.random.Generator, d: int, device: torch.device) -> torch.Tensor:
    """d standard normals drawn by ``rng`` (on the CPU), as float32 on ``device``."""
    return torch.from_numpy(rng.standard_normal(d).astype(np.float32)).to(device)


def dpsgd_steps(problem: CNNProblem, x: np.ndarray, client: int, *, steps: int, rate: float, lr: float,
                clip: float | None, noise_multiplier: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``steps`` DP-SGD steps of ``client`` from ``x`` (module docstring); returns the model
    (float64) and the number of records sampled."""
    steps = check_int("steps", steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    lr = check_positive("lr", lr)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    if clip is None and sigma > 0:
        raise ValueError("noise needs a clipping norm: clip=None only for the non-private reference (noise 0)")
    if clip is not None:
        clip = check_positive("clip", clip)
    n = int(problem.sizes[client])
    load_into(problem.net, x)
    sampled = 0
    for _ in range(steps):
        rows = _sample(rng, n, rate)
        sampled += rows.size
        g = _gradient_sum(problem, client, rows, clip)
        if clip is None:
            g = g / max(rows.size, 1)
        else:
            g = (g + (sigma * clip) * _normals(rng, problem.dim, problem.device)) / (rate * n)
        if not _step(problem.net, g, lr):
            break
    return flat_parameters(problem.net), sampled


def fedpaq_update(problem: CNNProblem, x: np.ndarray, client: int, *, local_steps: int, rate: float,
                  lr: float, clip: float, noise_multiplier: float, levels: int | None,
                  rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Private FedPAQ's message of ``client`` (module docstring): Q_s(u + N(0, σ²Δ²I)) with
    Δ = 2ηEC; returns the flat message and the number of records sampled."""
    from fedrepro.dpfedpaq import quantizer
    from fedrepro.headtohead.softmax import fedpaq_sensitivity

    E = check_int("local_steps", local_steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    clip = check_positive("clip", clip)
    n = int(problem.sizes[client])
    x0 = np.asarray(x, dtype=np.float64)
    load_into(problem.net, x0)
    sampled = 0
    for _ in range(E):
        rows = _sample(rng, n, rate)
        sampled += rows.size
        g = _gradient_sum(problem, client, rows, clip) / max(rows.size, 1)
        if not _step(problem.net, g, lr):  # diverged: returned as it is, unquantized
            return flat_parameters(problem.net) - x0, sampled
    u = flat_parameters(problem.net) - x0 + sigma * fedpaq_sensitivity(lr, E, clip) * rng.standard_normal(x0.shape)
    return quantizer.quantize(u, levels, rng), sampled


def noisy_prox_steps(problem: CNNProblem, w0: np.ndarray, v: np.ndarray, client: int, *, steps: int, rate: float,
                     lr: float, rho: float, clip: float, noise_multiplier: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``steps`` noisy subsampled gradient steps of ``client`` on f_i(w) + ‖w − v‖²/(2ρ) from
    ``w0`` (module docstring): the data term is (clipped sum + N(0, σ²C²I))/(q·n_i) over a
    Poisson sample at rate q. Returns the model and the records sampled."""
    steps = check_int("steps", steps, 1)
    rate = check_interval("rate", rate, 0.0, 1.0, closed_low=False)
    lr = check_positive("lr", lr)
    rho = check_positive("rho", rho)
    clip = check_positive("clip", clip)
    sigma = check_nonnegative("noise_multiplier", noise_multiplier)
    n = int(problem.sizes[client])
    v_t = torch.from_numpy(np.asarray(v, dtype=np.float32)).to(problem.device)
    load_into(problem.net, w0)
    sampled = 0
    for _ in range(steps):
        rows = _sample(rng, n, rate)
        sampled += rows.size
        g = (_gradient_sum(problem, client, rows, clip) + (sigma * clip) * _normals(rng, problem.dim, problem.device)) / (rate * n)
        with torch.no_grad():
            w = torch.cat([p.reshape(-1) for p in problem.net.parameters()])
        if not _step(problem.net, g + (w - v_t) / rho, lr):
            break
    return flat_parameters(problem.net), sampled
