"""Stored experiment :class:`TheoremConfig`: Theorem 1 against measurement — the synthetic ridge
problem (E ∈ {1, 5, 10} × quantization × noise × three readings of the theorem), the isotropic
counterexample to eq. (18) as printed, MNIST (x*, constants, the bound against a run under the
theory's step sizes) and λ² on HET_MNIST(n) (claim C11).

View side: the runs (configs, run and unit functions, settings) live in
:mod:`fedrepro.experiments.dpfedpaq.theory_theorem`, re-exported here for the chapter's readers."""

from __future__ import annotations

from fedrepro.experiments.dpfedpaq.theory_theorem import (  # noqa: F401
    TheoremConfig,
    _run_theorem_unit,
    _theorem_heterogeneity,
    _theorem_isotropic,
    _theorem_mnist,
    _theorem_synthetic,
    load_theorem,
    theorem_units,
)

__all__ = ["TheoremConfig", "load_theorem", "theorem_units"]
