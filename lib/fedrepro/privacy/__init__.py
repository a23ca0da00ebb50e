"""Privacy accounting shared by the three papers.

Modules:

* :mod:`~fedrepro.privacy.rdp` — Rényi DP of the Poisson-sampled Gaussian mechanism
  (integer and fractional orders), composition, basic and improved RDP → (ε, δ)
  conversions;
* :mod:`~fedrepro.privacy.budget` — the number of steps a privacy budget allows
  (ALI-DPFL's bisection and the exact largest count);
* :mod:`~fedrepro.privacy.gaussian` — the Gaussian mechanism: classical and analytic
  calibration, RDP;
* :mod:`~fedrepro.privacy.amplification` — DP-FedPAQ's subsampling amplification (eq. 15)
  and reduced noise (eq. 16);
* :mod:`~fedrepro.privacy.fedplt` — Fed-PLT's Proposition 4 and Lemma 5;
* :mod:`~fedrepro.privacy.experiments` — the chapter's computations (cached configs);
* :mod:`~fedrepro.privacy.scorecard` — scorecard outcomes for the ALI-DPFL iteration table.

Submodules are imported explicitly (``from fedrepro.privacy.rdp import ...``).
"""
