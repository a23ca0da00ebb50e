"""The private mechanism every DP-SGD-type algorithm of the book runs, in one place:
per-sample clipping, Gaussian noise on the clipped sum, and the accountant event the two imply.

A client step of DP-SGD (Abadi et al. 2016, Alg. 1; ALI-DPFL Alg. 1 lines 7–12; the DP-FedSGD,
DPFL and private FedPAQ algorithms of the head-to-head part) clips each per-sample gradient g_s
to norm C, g_s · min(1, C/‖g_s‖) (:func:`clip_factors`), sums the clipped gradients of a
Poisson sample of the records (rate q) and adds N(0, σ²Δ²) noise with Δ = C, the sensitivity of
the sum to adding or removing one record (:func:`gaussian_noise`, :func:`add_gaussian_noise_`;
a release of sensitivity Δ other than C, such as private FedPAQ's whole round, Δ = 2ηEC, uses
the same functions with its Δ). ``count`` such releases are the accountant event
:class:`SampledGaussian`: the Poisson-subsampled Gaussian mechanism with noise multiplier σ,
self-composed ``count`` times, whose Rényi DP (:mod:`fedrepro.privacy.rdp`) or privacy-loss
distribution (dp-accounting) gives the ε spent.

The functions work on NumPy arrays (the softmax and MLP engines) and on torch tensors (the CNN
engines); each computes exactly what the engines computed before they shared it, so the stored
results did not move. The float32 fast paths of the ALI-DPFL CNN (:mod:`fedrepro.alidpfl.fastclip`,
:mod:`fedrepro.alidpfl.stacked`) fold the factor into their book-keeping as
``min(C/‖g_s‖, 1)`` in float32; the tests pin them to :func:`clip_factors` to float32 rounding.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from fedrepro.core.validate import check_int
from fedrepro.privacy import conversion, rdp
from fedrepro.privacy.validate import check_delta, check_positive

if TYPE_CHECKING:  # torch is imported only by the engines that pass tensors
    import torch

__all__ = ["clip_factors", "gaussian_noise", "add_gaussian_noise_", "SampledGaussian"]

ArrayT = TypeVar("ArrayT", np.ndarray, "torch.Tensor")

#: The smallest norm a NumPy clip factor divides by (a zero norm gives the factor 1), by dtype.
_NORM_FLOOR = {np.dtype(np.float64): 1e-300, np.dtype(np.float32): 1e-30}


def _clip_factors_torch(norms: torch.Tensor, clip: float) -> torch.Tensor:
    import torch

    bad = ~torch.isfinite(norms) | (norms < 0)
    if norms.device.type != "meta" and bool(bad.any()):  # meta tensors hold no values
        i = int(torch.nonzero(bad.reshape(-1))[0])
        raise ValueError(f"norms must be finite and >= 0 (per-sample gradient norms); sample {i} "
                         f"has {float(norms.reshape(-1)[i])}")
    # C/‖g‖ ≥ 1 where ‖g‖ ≤ C (a zero norm included); in float64, where neither C nor a
    # float32 norm underflows, and without dividing by zero
    n64 = norms.to(torch.float64)
    above = n64 > clip
    return torch.where(above, clip / torch.where(above, n64, 1.0), 1.0).to(norms.dtype)


def clip_factors(norms: ArrayT, clip: float) -> ArrayT:
    """min(1, C/‖g_s‖) per sample, for per-sample gradient norms ``norms`` (a zero norm gives 1).

    torch tensors: computed in float64, returned in the norms' dtype; a negative or non-finite
    norm raises ValueError naming the sample. NumPy arrays (float64 or float32, dtype kept): a
    non-finite norm gives a non-finite factor, which the engines' divergence checks see (a
    diverged tuning configuration scores nothing rather than stopping the grid)."""
    clip = check_positive("clip", clip)
    if type(norms).__module__.startswith("torch"):
        import torch

        if isinstance(norms, torch.Tensor):
            return _clip_factors_torch(norms, clip)
    if not isinstance(norms, np.ndarray) or norms.dtype not in _NORM_FLOOR:
        raise TypeError(f"norms must be a torch tensor or a float32/float64 NumPy array, got {type(norms).__name__}"
                        f"{'' if not isinstance(norms, np.ndarray) else ' of ' + str(norms.dtype)}")
    return np.minimum(1.0, clip / np.maximum(norms, _NORM_FLOOR[norms.dtype]))


def gaussian_noise(rng: np.random.Generator, shape: Any, noise_multiplier: float, sensitivity: float) -> np.ndarray:
    """σΔ·ξ with ξ ~ N(0, I) of ``shape`` drawn by ``rng`` (``rng.standard_normal(shape)``, one
    draw): the noise of a Gaussian release of sensitivity Δ with noise multiplier σ."""
    return noise_multiplier * sensitivity * rng.standard_normal(shape)


def add_gaussian_noise_(t: torch.Tensor, std: float, generator: torch.Generator) -> torch.Tensor:
    """``t += std·ξ`` in place, ξ ~ N(0, I) of ``t``'s shape and dtype drawn on the CPU by
    ``generator`` (one ``torch.randn`` call, so the draws do not depend on ``t``'s device);
    returns ``t``."""
    import torch

    xi = torch.randn(t.shape, generator=generator, dtype=t.dtype)
    return t.add_(xi.to(t.device), alpha=std)


@dataclasses.dataclass(frozen=True)
class SampledGaussian:
    """The accountant event of ``count`` clipped-and-noised releases: each a Gaussian mechanism
    with noise multiplier σ = ``noise_multiplier`` on a Poisson sample of the records at rate
    ``sampling_rate`` (1: no sampling), composed adaptively."""

    sampling_rate: float
    noise_multiplier: float
    count: int = 1

    def __post_init__(self) -> None:
        q = self.sampling_rate
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 < q <= 1.0:
            raise ValueError(f"sampling_rate must lie in (0, 1], got {q!r}")
        check_positive("noise_multiplier", self.noise_multiplier)
        check_int("count", self.count, 0)

    def rdp(self, orders: Any) -> np.ndarray:
        """The Rényi DP of the event at ``orders`` (Mironov et al. 2019; :mod:`fedrepro.privacy.rdp`)."""
        return rdp.compose(rdp.rdp_sampled_gaussian(self.sampling_rate, self.noise_multiplier, orders), self.count)

    def epsilon_rdp(self, delta: float, orders: Any, conversion_rule: str = "improved") -> float:
        """ε at ``delta`` from the Rényi DP at ``orders`` (:func:`fedrepro.privacy.conversion.epsilon_from_rdp`)."""
        delta = check_delta(delta)
        eps, _ = conversion.epsilon_from_rdp(self.rdp(orders), orders, delta, conversion=conversion_rule)
        return float(eps)

    def dp_event(self) -> Any:
        """The same event for dp-accounting (its PLD and RDP accountants)."""
        import dp_accounting

        event: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(self.noise_multiplier)
        if self.sampling_rate < 1.0:
            event = dp_accounting.PoissonSampledDpEvent(self.sampling_rate, event)
        return dp_accounting.SelfComposedDpEvent(event, self.count)
