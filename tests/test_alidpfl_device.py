"""Where ALI-DPFL trains: the device argument, its environment default and its errors, and
(on a machine with a CUDA GPU) a GPU run against the CPU run of the same plan and draws."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedrepro.alidpfl import budget, setting, training
from fedrepro.core.validate import ParameterTypeError

SHAPE = (1, 28, 28)
CUDA = torch.cuda.is_available()


def _data() -> setting.FederatedData:
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, (n,) + SHAPE).astype(np.float32) for n in (24, 36)]
    ys = [rng.integers(0, 10, n).astype(np.int64) for n in (24, 36)]
    clients = tuple(setting.ClientData(x, y) for x, y in zip(xs, ys, strict=True))
    return setting.FederatedData(clients, rng.uniform(-1, 1, (12,) + SHAPE).astype(np.float32),
                                 rng.integers(0, 10, 12).astype(np.int64))


def _plan(**kw) -> training.RunPlan:
    base = dict(budgets=budget.Budgets(1.0, 3, 9), tau=None, q=0.3, eval_rounds=(3,), curve_every=1,
                curve_size=6, estimate_samples=8)
    base.update(kw)
    return training.RunPlan(**base)


def test_the_default_device_is_the_cpu(monkeypatch):
    monkeypatch.delenv(training.DEVICE_VARIABLE, raising=False)
    assert training.resolve_device() == torch.device("cpu")
    monkeypatch.setenv(training.DEVICE_VARIABLE, "cpu")
    assert training.resolve_device() == torch.device("cpu")
    assert training.resolve_device("cpu") == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu0", "", "cuda:x"])
def test_a_name_that_is_no_torch_device_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.delenv(training.DEVICE_VARIABLE, raising=False)
    if bad == "":
        # an empty variable means "not set": the CPU
        monkeypatch.setenv(training.DEVICE_VARIABLE, bad)
        assert training.resolve_device() == torch.device("cpu")
        return
    with pytest.raises(ValueError, match=training.DEVICE_VARIABLE):
        training.resolve_device(bad)
    monkeypatch.setenv(training.DEVICE_VARIABLE, bad)
    with pytest.raises(ValueError, match=training.DEVICE_VARIABLE):
        training.train(_plan(), _data())


def test_devices_other_than_cpu_and_cuda_and_non_names_are_refused():
    with pytest.raises(ValueError, match="CPU or a CUDA"):
        training.resolve_device("meta")
    with pytest.raises(ParameterTypeError, match="device"):
        training.resolve_device(3)


@pytest.mark.skipif(CUDA, reason="checks the error of a machine without CUDA")
def test_cuda_without_a_gpu_says_how_to_train_on_the_cpu(monkeypatch):
    monkeypatch.setenv(training.DEVICE_VARIABLE, "cuda")
    with pytest.raises(ValueError, match="no CUDA device"):
        training.train(_plan(), _data())


def test_the_stacked_method_refuses_a_gpu_before_training(monkeypatch):
    monkeypatch.setattr(training, "resolve_device", lambda device=None: torch.device("cuda"))
    with pytest.raises(ValueError, match="stacked"):
        training.train(_plan(method="stacked", tau=1), _data())


def test_naming_the_cpu_is_the_default_run_bit_for_bit(monkeypatch):
    monkeypatch.delenv(training.DEVICE_VARIABLE, raising=False)
    a = training.train(_plan(), _data(), return_model=True)
    b = training.train(_plan(), _data(), return_model=True, device="cpu")
    np.testing.assert_array_equal(a["model"], b["model"])
    np.testing.assert_array_equal(a["taus"], b["taus"])
    np.testing.assert_array_equal(a["constants"]["rho"], b["constants"]["rho"])


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
def test_a_gpu_run_repeats_bit_for_bit_and_stays_within_float32_of_the_cpu_run(tmp_path):
    data = _data()
    cpu = training.train(_plan(), data, return_model=True, device="cpu")
    gpu1 = training.train(_plan(), data, return_model=True, device="cuda")
    gpu2 = training.train(_plan(), data, return_model=True, device="cuda")
    np.testing.assert_array_equal(gpu1["model"], gpu2["model"])
    np.testing.assert_array_equal(gpu1["taus"], cpu["taus"])
    # 3 rounds of float32 training: relative model difference 1e-4 (measured 1e-6 after 20 paper rounds)
    rel = np.linalg.norm(gpu1["model"] - cpu["model"]) / np.linalg.norm(cpu["model"])
    assert rel < 1e-4
    # a GPU checkpoint resumes on the CPU (the run state lives on the CPU)
    training.train(_plan(checkpoint_every=1), data, checkpoint_dir=tmp_path, device="cuda", stop_after_rounds=2)
    resumed = training.train(_plan(checkpoint_every=1), data, checkpoint_dir=tmp_path, device="cpu",
                             return_model=True)
    assert np.linalg.norm(resumed["model"] - cpu["model"]) / np.linalg.norm(cpu["model"]) < 1e-4
