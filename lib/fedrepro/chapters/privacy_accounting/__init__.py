"""``book/privacy-accounting.ipynb``: the accounting shared by the privacy parts -- the
chapter's cached experiments (:mod:`.experiments`), the DP-FedPAQ mechanism claims
(:mod:`.claims`), tables (:mod:`.tables`), figures (:mod:`.figures`) and scorecard outcomes
(:mod:`.scorecard`)."""
