"""Privacy accounting shared by the three papers (knows no paper: the papers' own bounds
live in their packages, e.g. :mod:`fedrepro.fedplt.privacy_bounds`,
:mod:`fedrepro.dpfedpaq.amplification`).

Modules:

* :mod:`~fedrepro.privacy.rdp` — Rényi DP of the Poisson-sampled Gaussian mechanism
  (integer and fractional orders), composition, basic and improved RDP → (ε, δ)
  conversions;
* :mod:`~fedrepro.privacy.budget` — the number of steps a privacy budget allows
  (a bisection, as ALI-DPFL's code does, and the exact largest count);
* :mod:`~fedrepro.privacy.gaussian` — the Gaussian mechanism: classical and analytic
  calibration, RDP;
* :mod:`~fedrepro.privacy.subsampled` — the exact privacy profile of the Poisson-subsampled
  Gaussian mechanism.

Submodules are imported explicitly (``from fedrepro.privacy.rdp import ...``).
"""
