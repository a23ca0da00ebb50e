"""Runs of the privacy parts (``book/privacy-accounting.ipynb``, ``book/privacy-audit.ipynb``):
the configs and run functions of the stored results under ``data/results/privacy/`` -- the
accounting experiments (:mod:`.accounting`), the DP-FedPAQ mechanism claims
(:mod:`.mechanism_claims`) and the canary audits (:mod:`.audit_dpfedpaq`, :mod:`.audit_alidpfl`,
:mod:`.audit_estimates`, :mod:`.audit_fedplt`); their tables, figures and scorecards are in
:mod:`fedrepro.chapters.privacy_accounting` and :mod:`fedrepro.chapters.privacy_audit`."""
