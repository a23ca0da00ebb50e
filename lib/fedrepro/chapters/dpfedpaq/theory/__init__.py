"""``book/dpfedpaq/theory.ipynb``: Theorem 1, its lemmas and the privacy mechanism of DP-FedPAQ
as checks (:mod:`.experiments`), tables and figures (:mod:`.report`), and the scorecard's
theory, privacy and communication items (:mod:`.scorecard`)."""
