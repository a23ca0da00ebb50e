"""Chapter "DP-FedPAQ experiments": Figs. 2–4 of Mohammadi et al. on HET_MNIST(2).

* :mod:`.runs` — every training run (configs, units, the stored result);
* :mod:`.claims` — the decision of every experimental claim from the stored numbers;
* :mod:`.figures`, :mod:`.tables` — what the notebook shows;
* :mod:`.scorecard` — the scorecard provider.
"""
