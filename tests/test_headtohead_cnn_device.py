"""Where task T2's CNN computes (:mod:`fedrepro.headtohead.cnn`): the device argument, its
environment default and its errors, and (on a machine with a CUDA GPU) the client
computations on the GPU against the same computations and draws on the CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.core.device import DEVICE_VARIABLE
from fedrepro.headtohead import cnn
from fedrepro.headtohead import cnn_baselines as cb

CUDA = torch.cuda.is_available()
#: float32 round-off over a few steps of the CNN, relative to the size of the model's move.
GPU_RTOL = 1e-3


def _problem(device=None) -> cnn.CNNProblem:
    rng = np.random.default_rng(5)
    clients = [(rng.uniform(-1, 1, (n, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, n)) for n in (30, 42)]
    ex = rng.uniform(-1, 1, (16, 1, 28, 28)).astype(np.float32)
    return cnn.CNNProblem(clients, ex, rng.integers(0, 10, 16), init_seed=2, device=device)


def test_the_problem_computes_on_the_cpu_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    p = _problem()
    assert p.device == torch.device("cpu")
    assert all(x.device.type == "cpu" for x in p.xs) and p.eval_x.device.type == "cpu"
    assert next(p.net.parameters()).device.type == "cpu"
    monkeypatch.setenv(DEVICE_VARIABLE, "cpu")
    assert _problem().device == torch.device("cpu")


def test_the_device_changes_no_cpu_result(monkeypatch):
    """Naming the CPU explicitly, through the variable or not at all: the same bytes."""
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    outs = []
    for device in (None, "cpu", torch.device("cpu")):
        p = _problem(device)
        x0 = p.initial_model()
        w, n = cnn.dpsgd_steps(p, x0, 1, steps=2, rate=0.3, lr=0.5, clip=0.1, noise_multiplier=1.0,
                               rng=np.random.default_rng(0))
        outs.append((w.tobytes(), n, p.evaluate(w)))
    assert outs[0] == outs[1] == outs[2]


def test_a_bad_device_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    with pytest.raises(ValueError, match=DEVICE_VARIABLE):
        _problem("gpu0")
    with pytest.raises(ValueError, match="CPU or a CUDA"):
        _problem("meta")
    monkeypatch.setenv(DEVICE_VARIABLE, "gpu0")
    with pytest.raises(ValueError, match=DEVICE_VARIABLE):
        _problem()


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA device")
def test_asking_for_cuda_without_one_is_refused(monkeypatch):
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    with pytest.raises(ValueError, match="no CUDA device"):
        _problem("cuda")


def test_the_pooled_problem_stays_on_the_device():
    p = _problem("cpu")
    pooled = cb.pooled(p)
    assert pooled.device == p.device and pooled.n_devices == 1
    assert int(pooled.sizes[0]) == int(p.sizes.sum())


def _client_computations(p: cnn.CNNProblem) -> dict[str, tuple[np.ndarray, int]]:
    x0 = p.initial_model()
    v = x0 + 0.01
    out = {
        "dpsgd": cnn.dpsgd_steps(p, x0, 0, steps=3, rate=0.4, lr=0.5, clip=0.3, noise_multiplier=0.8,
                                 rng=np.random.default_rng(1)),
        "sgd": cnn.dpsgd_steps(p, x0, 1, steps=3, rate=0.4, lr=0.1, clip=None, noise_multiplier=0.0,
                               rng=np.random.default_rng(2)),
        "prox": cnn.noisy_prox_steps(p, x0, v, 1, steps=3, rate=0.4, lr=0.2, rho=1.0, clip=0.3,
                                     noise_multiplier=0.8, rng=np.random.default_rng(3)),
        "fedpaq": cnn.fedpaq_update(p, x0, 0, local_steps=3, rate=0.4, lr=0.3, clip=0.3, noise_multiplier=0.5,
                                    levels=None, rng=np.random.default_rng(4)),
        "ceiling-prox": cb.prox_sgd_steps(p, x0, 0, steps=3, rate=0.4, lr=0.1, v=v, rho=1.0,
                                          rng=np.random.default_rng(5)),
    }
    out["evaluate"] = (np.array(p.evaluate(out["dpsgd"][0])), 0)
    return out


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
def test_the_gpu_makes_the_cpu_draws_and_agrees_within_float32_round_off():
    """Same inputs and generators on both devices: the records sampled are identical and the
    models agree to GPU_RTOL of the distance they moved (cuDNN and CPU kernels sum in other
    orders)."""
    cpu, gpu = _client_computations(_problem("cpu")), _client_computations(_problem("cuda"))
    x0 = _problem("cpu").initial_model()
    for name, (w_cpu, n_cpu) in cpu.items():
        w_gpu, n_gpu = gpu[name]
        assert n_gpu == n_cpu, name
        if name == "evaluate":
            np.testing.assert_allclose(w_gpu, w_cpu, rtol=1e-4, atol=1e-5)
            continue
        moved = np.linalg.norm(w_cpu - (0.0 if name == "fedpaq" else x0))
        assert np.linalg.norm(w_gpu - w_cpu) <= GPU_RTOL * moved, name
