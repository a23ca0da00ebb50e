"""``book/dpfedpaq/theory.ipynb``: Theorem 1, its lemmas and the privacy mechanism of DP-FedPAQ
as checks (run by :mod:`fedrepro.experiments.dpfedpaq.theory_theorem`, ``theory_checks`` and
``theory_budget``, re-exported by :mod:`.theorem`, :mod:`.checks`, :mod:`.budget`), tables and
figures (:mod:`.report`), and the scorecard's theory, privacy and communication items
(:mod:`.scorecard`)."""
