"""``book/fedplt/tuning.ipynb``: v2 Tables VIII-IX, v1 Figs. 2-3 and the sensitivity sweeps
(:mod:`.sweeps`), and their scorecard outcomes (:mod:`.scorecard`)."""
