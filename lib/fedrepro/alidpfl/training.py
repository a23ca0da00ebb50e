"""DPFL (Algorithm 1, fixed τ) and ALI-DPFL (Algorithm 2, τ* per round), resumable.

One call of :func:`train` is one training run of a :class:`RunPlan`: every round, each
client starts from the global model ŵ, runs τ DP-SGD steps (:func:`fedrepro.alidpfl.dpsgd.dpsgd_step`;
Poisson rate q, clipping C, noise σC on the sum, divided by q·|D_i|, step η), and the server
averages the clients' models weighted by |D_i| (eq. 1; ``aggregation="unweighted"`` is the
plain mean of one public implementation). A run stops *before* a round that would exceed R_s
rounds or R_c local iterations (:class:`fedrepro.alidpfl.budget.BudgetCounter`).

ALI-DPFL: after the round every client reports F_i and ∇F_i at its own model ŵ_i and at ŵ
(§IV-B), computed on ``estimate_samples`` of its records (a fixed random subset; the paper's
F_i is the full local loss, which would cost two passes over D_i per round); the server
forms ρ, β, ξ (:func:`fedrepro.alidpfl.tau_rule.estimate_constants`), λ and ω by the chosen
rule, and τ* for the next round (:func:`fedrepro.alidpfl.tau_rule.choose_tau`). These
evaluations touch private data outside the privacy accounting (reference §7 item 6): the
result counts them (``unaccounted_gradients``) beside the accounted DP-SGD ones.

Prefix sharing (reference §8): a fixed-τ run with one seed is the same trajectory for every
budget, so one run serves every table cell whose stopping round lies on it; the global
model is evaluated on the full test set at every round of ``eval_rounds`` (the cells'
stopping points) and on a fixed test subset every ``curve_every`` rounds.

Round semantics: every client starts the round from its own copy of ŵ (the global state
never shares storage with a model's parameters), so a client's training never changes ŵ and
the order of the clients does not matter; the aggregate is the |D_i|-weighted mean of the
clients' models. ``method="stacked"`` computes the clients of a round together
(:mod:`fedrepro.alidpfl.stacked`: one parameter copy per client, stacked); the other methods
run one model per client with :func:`fedrepro.alidpfl.dpsgd.dpsgd_step`. All give the same
round up to float32 rounding (the tests pin it).

Randomness (the protocol an independent implementation needs to draw the same numbers):
client i's generator is :func:`client_generators` ``(seed, N)[i]``; in each local step the
client draws |D_i| float64 uniforms for its Poisson batch, then (noise on) one float32
standard normal tensor per parameter in ``model.parameters()`` order
(:mod:`fedrepro.alidpfl.dpsgd`). The initial model is ``make_cnn(shape, seed=seed)``.

Resumable: with ``checkpoint_dir`` the run state (model, every RNG state, round, budget
counters, history) is written atomically every ``checkpoint_every`` rounds; a run killed at
any point resumes from its last checkpoint and ends with the same results as an
uninterrupted run. A checkpoint records the fingerprint of what it belongs to (the plan, a
digest of the data, the code of this module's import graph) and a digest of its content; a
checkpoint of anything else, or a damaged one, is refused with a :class:`CheckpointError`
that names the file and how to restart. Temporary files left by a killed writer are removed.

Device: the model and its arithmetic run on ``device`` (``train(..., device=...)``; by default
the environment variable ``FEDREPRO_TORCH_DEVICE``, else the CPU). The device is not part of
the plan: the random draws (CPU generators), the run state and the checkpoints are the same
on every device, so a run checkpointed on a GPU resumes on a CPU; the results agree with a
CPU run to float32 round-off amplified by training (``make verify``'s tolerances; the
measured differences are in ``benchmarks/README.md``). On CUDA the run uses deterministic
kernels in full float32 (no TF32), so two runs on one GPU give identical results.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import time
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch.nn import functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from fedrepro.alidpfl import setting, stacked, tau_rule
from fedrepro.alidpfl.budget import BudgetCounter, Budgets
from fedrepro.alidpfl.dpsgd import DPSGDSettings, dpsgd_step, poisson_batch
from fedrepro.alidpfl.models import make_cnn, num_parameters
from fedrepro.alidpfl.run_state import RunState, TrainingResult
from fedrepro.alidpfl.setting import PAPER, FederatedData
from fedrepro.core.cache import atomic_write, code_hash
from fedrepro.core.device import DEVICE_VARIABLE, resolve_device
from fedrepro.core.validate import (
    ParameterTypeError,
    check_bool,
    check_int,
    check_interval,
    check_nonnegative,
    check_positive,
)
from fedrepro.privacy import mechanism

__all__ = ["RunPlan", "RunState", "TrainingResult", "train", "evaluate", "client_generators", "check_data",
           "CheckpointError", "CHECKPOINT_NAME", "METHODS", "DEVICE_VARIABLE", "resolve_device"]

CHECKPOINT_NAME = "checkpoint.pt"
#: How a round is computed: all clients together (``"stacked"``) or one model per client
#: with the per-sample method of :func:`fedrepro.alidpfl.dpsgd.dpsgd_step`.
METHODS: tuple[str, ...] = ("fast", "stacked", "loop", "opacus")
_MAGIC = b"fedrepro-checkpoint 2\n"
#: A temporary checkpoint file older than this (seconds) was left by a killed writer.
_ORPHAN_AGE_S = 600.0


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed: damaged, or written for another plan, data or code."""


@dataclasses.dataclass(frozen=True)
class RunPlan:
    """What one training run does.

    ``tau``: the fixed τ (DPFL) or ``None`` for ALI-DPFL; ``budgets``: R_s, R_c;
    ``eval_rounds``: rounds after which the global model is evaluated on the full test set;
    ``curve_every``/``curve_size``: a fixed test subset evaluated every few rounds;
    ``clip``/``noise``: ``False`` turns clipping (C → ∞) or the noise off (non-private
    comparisons); ``divisor``: the gradient divisor (``None``: q·|D_i|); ``method``: how a
    round is computed (:data:`METHODS`). Every field is checked here, under its own name."""

    budgets: Budgets
    tau: int | None = 1
    q: float = PAPER.q
    clip_norm: float = PAPER.clip
    sigma: float = PAPER.sigma
    eta: float = PAPER.eta
    divisor: float | None = None
    clip: bool = True
    noise: bool = True
    aggregation: Literal["weighted", "unweighted"] = "weighted"
    eval_rounds: tuple[int, ...] = ()
    curve_every: int = 10
    curve_size: int = 2000
    rule: str = "loss"
    estimate_samples: int = 512
    seed: int = 0
    checkpoint_every: int = 20
    method: str = "fast"

    def __post_init__(self) -> None:
        if not isinstance(self.budgets, Budgets):
            raise ParameterTypeError(f"budgets must be a Budgets, got {type(self.budgets).__name__}")
        if self.tau is not None:
            check_int("tau", self.tau, 1)
        check_interval("q", self.q, 0.0, 1.0, closed_low=False)
        check_positive("clip_norm", self.clip_norm)
        check_nonnegative("sigma", self.sigma)
        check_positive("eta", self.eta)
        if self.divisor is not None:
            check_positive("divisor", self.divisor)
        for name in ("clip", "noise"):
            check_bool(name, getattr(self, name))
        if not isinstance(self.eval_rounds, tuple):
            raise ParameterTypeError(f"eval_rounds must be a tuple of rounds, got {self.eval_rounds!r}")
        for r in self.eval_rounds:
            check_int("eval_rounds", r, 1)
        check_int("curve_every", self.curve_every, 1)
        check_int("curve_size", self.curve_size, 1)
        check_int("estimate_samples", self.estimate_samples, 1)
        check_int("seed", self.seed, 0)
        check_int("checkpoint_every", self.checkpoint_every, 1)
        if self.aggregation not in ("weighted", "unweighted"):
            raise ValueError(f"aggregation must be 'weighted' or 'unweighted', got {self.aggregation!r}")
        if self.rule not in tau_rule.LAMBDA_OMEGA_RULES:
            raise ValueError(f"rule must be one of {sorted(tau_rule.LAMBDA_OMEGA_RULES)}, got {self.rule!r}")
        if self.noise and not self.clip:
            raise ValueError("noise=True needs clip=True: without clipping the noise sigma*C has no "
                             "sensitivity to protect (use clip=False only with noise=False)")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")

    def dpsgd_settings(self) -> DPSGDSettings:
        return DPSGDSettings(q=self.q, clip=self.clip_norm if self.clip else 1e12,
                             sigma=self.sigma if self.noise else 0.0, lr=self.eta,
                             expected_batch=self.divisor)


def _tensor(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


@torch.no_grad()
def evaluate(model: torch.nn.Module, x: np.ndarray, y: np.ndarray, batch: int = 1000) -> dict[str, float]:
    """Accuracy and mean cross-entropy of ``model`` on (x, y)."""
    check_int("batch", batch, 1)
    if len(y) == 0 or len(x) != len(y):
        raise ValueError(f"evaluate needs as many images as labels, at least one; got {len(x)} and {len(y)}")
    correct, loss = 0, 0.0
    device = next(model.parameters()).device
    for i in range(0, len(y), batch):
        xb, yb = _tensor(x[i:i + batch]).to(device), _tensor(y[i:i + batch]).to(device)
        out = model(xb)
        loss += float(F.cross_entropy(out, yb, reduction="sum"))
        correct += int((out.argmax(1) == yb).sum())
    return {"accuracy": correct / len(y), "loss": loss / len(y)}


def _load_copy(model: torch.nn.Module, w: torch.Tensor) -> None:
    """Set ``model``'s parameters to a copy of the flat vector ``w`` (never views of it), on
    the model's device."""
    device = next(model.parameters()).device
    vector_to_parameters(w.detach().to(device, copy=True), model.parameters())


def _loss_and_grad(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, np.ndarray]:
    model.zero_grad(set_to_none=True)
    device = next(model.parameters()).device
    loss = F.cross_entropy(model(x.to(device)), y.to(device))
    loss.backward()
    grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    model.zero_grad(set_to_none=True)
    return float(loss.detach()), grad.double().cpu().numpy()


def client_generators(seed: int, n_clients: int) -> list[torch.Generator]:
    """The clients' CPU generators of a run with ``seed`` (the randomness protocol of the
    module docstring): generator i is seeded from the i-th child of
    ``SeedSequence([seed, 0xA11D])`` (its first 64-bit word, top bit cleared)."""
    seed = check_int("seed", seed, 0)
    n_clients = check_int("n_clients", n_clients, 1)
    children = np.random.SeedSequence([seed, 0xA11D]).spawn(n_clients + 2)
    gens = []
    for s in children[:n_clients]:
        g = torch.Generator(device="cpu")
        g.manual_seed(int(s.generate_state(1, np.uint64)[0]) & 0x7FFF_FFFF_FFFF_FFFF)
        gens.append(g)
    return gens


def _check_images(name: str, x: np.ndarray, y: np.ndarray, shape: tuple[int, ...], classes: int) -> None:
    setting.check_client_arrays(name, x, y, shape)
    if x.shape[0] == 0:
        raise ValueError(f"{name} holds no records")
    out = (y < 0) | (y >= classes)
    if out.any():
        i = int(np.argmax(out))
        raise ValueError(f"{name}: label {int(y[i])} of record {i} is outside 0..{classes - 1}")


def check_data(data: FederatedData, classes: int = 10) -> None:
    """Reject data that would train silently wrong: empty clients or test set, non-finite
    pixels, labels outside 0..classes−1 (the error names the client or test set and the record)."""
    if not isinstance(data, FederatedData):
        raise ParameterTypeError(f"data must be a FederatedData, got {type(data).__name__}")
    if not data.clients:
        raise ValueError("data holds no clients")
    shape = tuple(int(s) for s in data.clients[0].x.shape[1:])
    for i, c in enumerate(data.clients):
        _check_images(f"client {i}", c.x, c.y, shape, classes)
    _check_images("test set", data.test_x, data.test_y, shape, classes)


def _fresh_state(plan: RunPlan, data: FederatedData, model: torch.nn.Module) -> RunState:
    ss = np.random.SeedSequence([plan.seed, 0xA11D])
    c_seeds = ss.spawn(len(data.clients) + 2)
    gens = [g.get_state() for g in client_generators(plan.seed, len(data.clients))]
    est_rng = np.random.default_rng(c_seeds[-2])
    estimate_idx = [np.sort(est_rng.permutation(len(c))[: min(plan.estimate_samples, len(c))])
                    for c in data.clients]
    curve_rng = np.random.default_rng(c_seeds[-1])
    curve_idx = np.sort(curve_rng.permutation(len(data.test_y))[: min(plan.curve_size, len(data.test_y))])
    w = parameters_to_vector(model.parameters()).detach().cpu().clone()  # the run state lives on the CPU
    return RunState(round=0, rounds_done=0, iterations_done=0, tau_next=plan.tau or 1, w=w, w0=w.clone(),
                    generators=gens, estimate_idx=estimate_idx, curve_idx=curve_idx)


def _fingerprint(plan: RunPlan, data: FederatedData) -> str:
    """What a checkpoint belongs to: the plan, the data (every array's bytes) and the code."""
    h = hashlib.sha256()
    plan_fields = dataclasses.asdict(plan)
    h.update(json.dumps(plan_fields, sort_keys=True, default=repr).encode())
    for arr in [a for c in data.clients for a in (c.x, c.y)] + [data.test_x, data.test_y]:
        a = np.ascontiguousarray(arr)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    h.update(code_hash([__name__]).encode())
    return h.hexdigest()


def _save(state: RunState, path: Path, fingerprint: str) -> None:
    buf = io.BytesIO()
    torch.save(state.to_checkpoint(), buf)
    payload = buf.getvalue()
    header = json.dumps({"fingerprint": fingerprint, "sha256": hashlib.sha256(payload).hexdigest(),
                         "size": len(payload), "round": int(state.round)}).encode()
    atomic_write(path, lambda fh: fh.write(_MAGIC + header + b"\n" + payload))


def _restart_hint(path: Path) -> str:
    return f"delete {path.name} in its folder to restart the run from round 0"


def _load(path: Path, fingerprint: str) -> RunState | None:
    """The checkpointed state, or ``None`` when there is none; :class:`CheckpointError` for a
    damaged checkpoint or one written for another plan, data or code."""
    if not path.is_file():
        return None
    raw = path.read_bytes()
    if not raw.startswith(_MAGIC) or b"\n" not in raw[len(_MAGIC):]:
        raise CheckpointError(f"checkpoint {path.name} is not a fedrepro checkpoint of this version "
                              f"(damaged, or written by older code): {_restart_hint(path)}")
    end = raw.index(b"\n", len(_MAGIC))
    try:
        header = json.loads(raw[len(_MAGIC):end])
    except ValueError as err:
        raise CheckpointError(f"checkpoint {path.name} has a damaged header: {_restart_hint(path)}") from err
    payload = raw[end + 1:]
    if len(payload) != header.get("size") or hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise CheckpointError(f"checkpoint {path.name} is damaged or truncated (its content does not match "
                              f"its digest): {_restart_hint(path)}")
    if header.get("fingerprint") != fingerprint:
        raise CheckpointError(f"checkpoint {path.name} (round {header.get('round')}) belongs to another plan, "
                              f"data or code than this run: {_restart_hint(path)}")
    try:
        return RunState.from_checkpoint(torch.load(io.BytesIO(payload), weights_only=False))
    except ValueError as err:
        raise CheckpointError(f"checkpoint {path.name} does not hold a run state ({err}): {_restart_hint(path)}") from err


def _remove_orphans(path: Path) -> None:
    """Temporary files of ``path`` older than ``_ORPHAN_AGE_S`` (left by a killed writer)."""
    now = time.time()
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if now - tmp.stat().st_mtime > _ORPHAN_AGE_S:
                tmp.unlink()
        except FileNotFoundError:
            pass


def _local_per_client(plan: RunPlan, model: torch.nn.Module, w: torch.Tensor, xs, ys, gens, tau: int,
                      settings: DPSGDSettings, state: RunState) -> torch.Tensor:
    """(N, d): every client's model after ``tau`` DP-SGD steps from its own copy of ``w``."""
    out = []
    for i in range(len(xs)):
        # client i starts from its own copy of ŵ: vector_to_parameters makes the parameters
        # views of its argument, and the in-place SGD update must not reach ŵ
        _load_copy(model, w)
        for _ in range(tau):
            state.sampled_records += dpsgd_step(model, xs[i], ys[i], settings, gens[i], method=plan.method)
        out.append(parameters_to_vector(model.parameters()).detach().clone())
    return torch.stack(out)


def stacked_steps(params: list[torch.Tensor], xs, ys, gens, tau: int, settings: DPSGDSettings,
                  state: RunState) -> list[torch.Tensor]:
    """``tau`` DP-SGD steps (ALI-DPFL Alg. 1, lines 7-12) of every client on its stacked
    parameters, in place: each record sampled with probability q, each per-sample gradient
    clipped to C, the sum noised with N(0, σ²C²) from the client's generator and divided by
    the batch divisor, step η. The one implementation of a round's local training with the
    stacked engine (:func:`train`'s and the closed-form τ* run's); returns each client's last
    batch indices."""
    std = float(settings.sigma) * float(settings.clip)
    idx: list[torch.Tensor] = []
    for _ in range(tau):
        idx = [poisson_batch(int(x.shape[0]), settings.q, g) for x, g in zip(xs, gens, strict=True)]
        sums = stacked.clipped_sums(params, [x[i] for x, i in zip(xs, idx, strict=True)],
                                    [y[i] for y, i in zip(ys, idx, strict=True)], settings.clip)
        for m, g in enumerate(gens):
            scale = 1.0 / settings.divisor(int(xs[m].shape[0]))
            for p, s in zip(params, sums, strict=True):
                grad = s[m]
                if std > 0.0:
                    grad = mechanism.add_gaussian_noise_(grad, std, g)
                p[m].add_(grad.mul_(scale), alpha=-float(settings.lr))
        state.sampled_records += sum(int(i.numel()) for i in idx)
    return idx


def _local_stacked(model: torch.nn.Module, w: torch.Tensor, xs, ys, gens, tau: int,
                   settings: DPSGDSettings, state: RunState) -> torch.Tensor:
    """The same as :func:`_local_per_client`, all clients computed together (same draws)."""
    shapes = [p.shape for p in model.parameters()]
    params = stacked.stack(w, shapes, len(xs))
    stacked_steps(params, xs, ys, gens, tau, settings, state)
    return stacked.unstack_flat(params)


def _reports(plan: RunPlan, model: torch.nn.Module, w: torch.Tensor, local: torch.Tensor, xs, ys,
             state: RunState) -> list[tau_rule.ClientReport]:
    """Each client's report of §IV-B: F_i and ∇F_i at its model ŵ_i and at ŵ, on its fixed
    estimate subset, and ‖ŵ_i − ŵ‖."""
    sub = [(x[_tensor(i)], y[_tensor(i)]) for x, y, i in zip(xs, ys, state.estimate_idx, strict=True)]
    n = len(xs)
    w_dev = w.to(local.device)
    if plan.method == "stacked":
        shapes = [p.shape for p in model.parameters()]
        xe, ye = [a for a, _ in sub], [b for _, b in sub]
        split = [int(torch.Size(s).numel()) for s in shapes]
        at_local = [t.reshape((n,) + tuple(s)) for t, s in zip(local.split(split, dim=1), shapes, strict=True)]
        loss_l, grad_l = stacked.mean_loss_gradients(at_local, xe, ye)
        loss_g, grad_g = stacked.mean_loss_gradients(stacked.stack(w, shapes, n), xe, ye)
        gl, gg = stacked.unstack_flat(grad_l).double().numpy(), stacked.unstack_flat(grad_g).double().numpy()
        pairs = [(float(loss_l[i]), gl[i], float(loss_g[i]), gg[i]) for i in range(n)]
    else:
        pairs = []
        for i, (xe, ye) in enumerate(sub):
            _load_copy(model, local[i])
            loss_local, grad_local = _loss_and_grad(model, xe, ye)
            _load_copy(model, w)
            loss_global, grad_global = _loss_and_grad(model, xe, ye)
            pairs.append((loss_local, grad_local, loss_global, grad_global))
    reports = []
    for i, (loss_local, grad_local, loss_global, grad_global) in enumerate(pairs):
        reports.append(tau_rule.ClientReport(loss_local, loss_global, grad_local, grad_global,
                                             float(torch.linalg.vector_norm((local[i] - w_dev).double()))))
        state.unaccounted_gradients += 2 * len(sub[i][1])
    return reports


def train(plan: RunPlan, data: FederatedData, *, checkpoint_dir: Path | None = None,
          stop_after_rounds: int | None = None, return_model: bool = False,
          device: str | torch.device | None = None) -> TrainingResult | None:
    """Run ``plan`` on ``data``; returns the run's history (:class:`TrainingResult`; see the
    module docstring).

    ``stop_after_rounds`` ends the call early (as a killed run would, after its last
    checkpoint) and returns ``None``, for the resumption test; ``return_model`` adds the final global model
    (``"model"``, the flat float32 parameter vector) for tests that check a round;
    ``device``: where the model is trained (:func:`resolve_device`; the CPU by default)."""
    if not isinstance(plan, RunPlan):
        raise ParameterTypeError(f"plan must be a RunPlan, got {type(plan).__name__}")
    check_data(data)
    if stop_after_rounds is not None:
        check_int("stop_after_rounds", stop_after_rounds, 1)
    dev = resolve_device(device)
    if plan.method == "stacked" and dev.type != "cpu":
        raise ValueError(f"method='stacked' runs on the CPU only (device {str(dev)!r} asked for): "
                         "use method='fast' on a GPU")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    shape = tuple(int(s) for s in data.clients[0].x.shape[1:])
    model = make_cnn(shape, seed=plan.seed, device=dev)
    d = num_parameters(model)
    settings = plan.dpsgd_settings()
    ckpt = Path(checkpoint_dir) / CHECKPOINT_NAME if checkpoint_dir is not None else None
    fingerprint = _fingerprint(plan, data) if ckpt is not None else ""
    state = None
    if ckpt is not None:
        _remove_orphans(ckpt)
        state = _load(ckpt, fingerprint)
    if state is None:
        state = _fresh_state(plan, data, model)
    counter = BudgetCounter(plan.budgets, state.rounds_done, state.iterations_done)
    gens = []
    for st in state.generators:
        g = torch.Generator(device="cpu")
        g.set_state(st)
        gens.append(g)
    sizes = data.sizes.astype(np.float64)
    weights = sizes / sizes.sum() if plan.aggregation == "weighted" else np.full(len(sizes), 1 / len(sizes))
    weights_dev = torch.from_numpy(weights).to(dev)
    xs = [_tensor(c.x) for c in data.clients]
    ys = [_tensor(c.y) for c in data.clients]
    noise = tau_rule.noise_term(d, plan.sigma, plan.clip_norm,
                                plan.divisor or plan.q * float(sizes.mean()))
    eval_rounds = set(plan.eval_rounds)
    calls = 0
    while True:
        tau = int(state.tau_next)
        if not counter.allows(tau):
            break
        w = state.w
        if plan.method == "stacked":
            local = _local_stacked(model, w, xs, ys, gens, tau, settings, state)
        else:
            local = _local_per_client(plan, model, w, xs, ys, gens, tau, settings, state)
        new_w = (weights_dev @ local.double()).cpu()
        reports = _reports(plan, model, w, local, xs, ys, state) if plan.tau is None else []
        counter.spend(tau)
        state.w = new_w.float()
        state.taus.append(tau)
        state.round += 1
        state.rounds_done, state.iterations_done = counter.rounds_done, counter.iterations_done
        r = state.round
        if plan.tau is None:
            rho, beta, xi = tau_rule.estimate_constants(reports, weights)
            loss = float(sum(wt * rep.loss_global for wt, rep in zip(weights, reports, strict=True)))
            dist = float(torch.linalg.vector_norm((state.w - state.w0).double()))
            lam, omega = tau_rule.lambda_omega(plan.rule, loss, dist)
            consts = tau_rule.Constants(rho, beta, xi, lam, omega)
            tau_star, g = tau_rule.choose_tau(
                consts, tau_prev=tau, eta=plan.eta, noise=noise,
                iterations_done=counter.iterations_done, rounds_left=counter.rounds_left,
                iterations_left=counter.iterations_left)
            state.constants.append({"rho": rho, "beta": beta, "xi": xi, "lam": lam,
                                    "omega": omega, "feasible": int(np.isfinite(g).sum())})
            state.tau_next = tau_star
        _load_copy(model, state.w)
        if r in eval_rounds:
            state.evals[r] = evaluate(model, data.test_x, data.test_y)
        if r % plan.curve_every == 0:
            idx = state.curve_idx
            state.curve[r] = evaluate(model, data.test_x[idx], data.test_y[idx])["accuracy"]
        state.generators = [g.get_state() for g in gens]
        calls += 1
        if ckpt is not None and r % plan.checkpoint_every == 0:
            _save(state, ckpt, fingerprint)
        if stop_after_rounds is not None and calls >= stop_after_rounds:
            return None
    final = state.evals.get(state.round)
    if final is None:  # the last round was not an evaluation round
        _load_copy(model, state.w)
        final = evaluate(model, data.test_x, data.test_y)
    return TrainingResult.from_state(state, final, d, evaluations=True, closed_form=False,
                                     return_model=return_model)
