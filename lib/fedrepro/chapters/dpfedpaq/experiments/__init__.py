"""Chapter "DP-FedPAQ experiments": Figs. 2–4 of Mohammadi et al. on HET_MNIST(2).

* :mod:`fedrepro.experiments.dpfedpaq` — every training run (configs, units, the stored
  results), re-exported by :mod:`.runs`, :mod:`.mlp` and the other modules of the same names;
* :mod:`.trends` — the increasing/decreasing rules the claims are decided by;
* :mod:`.claims` — the decision of every experimental claim from the stored numbers;
* :mod:`.figures`, :mod:`.tables` — what the notebook shows;
* :mod:`.scorecard` — the scorecard provider.
"""
