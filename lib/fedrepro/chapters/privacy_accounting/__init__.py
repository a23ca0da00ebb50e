"""``book/privacy-accounting.ipynb``: the accounting shared by the privacy parts -- the
chapter's cached experiments (run by :mod:`fedrepro.experiments.privacy.accounting`, importable
from :mod:`.experiments`), the DP-FedPAQ mechanism claims (run by
:mod:`fedrepro.experiments.privacy.mechanism_claims`; :mod:`.claims`), tables (:mod:`.tables`),
figures (:mod:`.figures`) and scorecard outcomes (:mod:`.scorecard`)."""
