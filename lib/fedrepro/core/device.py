"""The torch device a run computes on: outside every result's identity.

Which device ran a computation is recorded in the stored result's metadata, never hashed:
a result computed on a GPU is the same result as on the CPU, within the tolerance its config
declares (``make verify`` compares them as it compares CPU kernel families). This module is
therefore one of the results store's modules (:data:`fedrepro.core.codehash.STORE_MODULES`),
followed for its imports but not hashed: changing the default device makes no result stale.
"""

from __future__ import annotations

import os

import torch

from fedrepro.core.validate import ParameterTypeError

__all__ = ["DEFAULT_DEVICE", "DEVICE_VARIABLE", "resolve_device"]

#: The environment variable naming the default torch device (e.g. ``cuda``).
DEVICE_VARIABLE = "FEDREPRO_TORCH_DEVICE"
#: The device used when neither the caller nor ``$FEDREPRO_TORCH_DEVICE`` names one.
DEFAULT_DEVICE = "cpu"


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The torch device of a run: ``device``, else ``$FEDREPRO_TORCH_DEVICE``, else the CPU.

    A CUDA device is prepared for reproducible float32 arithmetic: deterministic kernels
    (``torch.use_deterministic_algorithms``, cuDNN without autotuning) and no TF32."""
    if device is None:
        device = os.environ.get(DEVICE_VARIABLE) or DEFAULT_DEVICE
    if not isinstance(device, (str, torch.device)):
        raise ParameterTypeError(f"device must be a torch device or its name, got {type(device).__name__}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as err:
        raise ValueError(f"device {device!r} is not a torch device name (e.g. 'cpu', 'cuda', 'cuda:0'); "
                         f"set it with train(device=...) or ${DEVICE_VARIABLE}") from err
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be a CPU or a CUDA device, got {device!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} asked for (train(device=...) or ${DEVICE_VARIABLE}), "
                             "but torch sees no CUDA device: unset it to train on the CPU")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)  # a kernel without one warns
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    return dev
