"""``book/fedplt/comparison.ipynb``: v2 Tables I-V and v1 Table II (:mod:`.experiments`) and
their scorecard outcomes (:mod:`.scorecard`)."""
