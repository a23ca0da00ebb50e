"""Does a training run stay inside the privacy accounting that ε claims? (Ling et al., ALI-DPFL, §V)

The paper's guarantee (Theorem 2 and its R_c) is the RDP of the sampled Gaussian mechanism
composed over the local iterations: each DP-SGD step samples every record with probability
q, clips every *per-sample* gradient to norm C, adds N(0, σ²C²) to their sum, and the result
is post-processed (divided by a constant, scaled by η, averaged by the server). ε then
bounds the run iff

1. the gradient is clipped per sample (the sensitivity of the sum is C);
2. the noise's standard deviation is σ times that same C;
3. the divisor is a constant, independent of the data (a data-independent rescaling is
   post-processing; dividing by the realised batch size |𝓑| is not covered by the
   analysis of the sum);
4. every client runs at most R_c(ε, q, σ, δ) noisy steps, R_c computed by the accountant
   (:func:`fedrepro.privacy.budget.max_steps_bisection`) with the run's own q, under the
   RDP-to-(ε, δ) conversion the reading states (both conversions are valid bounds).

Step size, model width and the data split enter none of the four: they never break the
accounting. :func:`accounting_valid` evaluates the four conditions for a run's description.
"""

from __future__ import annotations

import dataclasses

from fedrepro.core.validate import check_bool, check_int, check_interval, check_positive
from fedrepro.privacy.budget import max_steps_bisection

__all__ = ["RunAccounting", "allowed_steps", "accounting_valid"]


@dataclasses.dataclass(frozen=True)
class RunAccounting:
    """What a run did that the accounting depends on.

    ``steps``: noisy DP-SGD steps of one client; ``q``: its Poisson rate; ``sigma``: noise
    std ÷ the clip applied; ``conversion``: ``"basic"`` (the paper's) or ``"improved"``;
    the three booleans: conditions 1–3 of the module docstring."""

    epsilon: float
    steps: int
    q: float
    sigma: float
    delta: float
    conversion: str = "basic"
    per_sample_clip: bool = True
    noise_matches_clip: bool = True
    divisor_data_independent: bool = True

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        check_int("steps", self.steps, 0)
        check_interval("q", self.q, 0.0, 1.0, closed_low=False)
        check_positive("sigma", self.sigma)
        check_interval("delta", self.delta, 0.0, 1.0, closed_low=False, closed_high=False)
        if self.conversion not in ("basic", "improved"):
            raise ValueError(f"conversion must be 'basic' or 'improved', got {self.conversion!r}")
        for name in ("per_sample_clip", "noise_matches_clip", "divisor_data_independent"):
            check_bool(name, getattr(self, name))


def allowed_steps(epsilon: float, q: float, sigma: float, delta: float, conversion: str = "basic") -> int:
    """R_c: the noisy steps ε allows at rate q (0 when one step already spends more than ε)."""
    try:
        return max_steps_bisection(epsilon, q, sigma, delta, conversion=conversion)  # type: ignore[arg-type]
    except ValueError as exc:
        if "allows no step" in str(exc):
            return 0
        raise


def accounting_valid(run: RunAccounting) -> tuple[bool, str]:
    """(valid, reason): whether ε still bounds ``run`` (the four conditions of the module
    docstring), and the first condition that fails or the margin of the step count."""
    if not isinstance(run, RunAccounting):
        raise ValueError(f"run must be a RunAccounting, got {type(run).__name__}")
    if not run.per_sample_clip:
        return False, "the gradient is not clipped per sample: the sum's sensitivity is unbounded"
    if not run.noise_matches_clip:
        return False, "the noise is not sigma times the clip applied"
    if not run.divisor_data_independent:
        return False, "the divisor depends on the sampled batch: not a post-processing of the noisy sum"
    allowed = allowed_steps(run.epsilon, run.q, run.sigma, run.delta, run.conversion)
    if run.steps > allowed:
        return False, (f"{run.steps} noisy steps at q = {run.q:g}, but eps = {run.epsilon:g} allows only "
                       f"{allowed} ({run.conversion} conversion)")
    return True, f"{run.steps} noisy steps at q = {run.q:g}; eps = {run.epsilon:g} allows {allowed} ({run.conversion} conversion)"
