"""``book/privacy-audit.ipynb``: empirical privacy audits of the papers' mechanisms with canaries
(the auditor is :mod:`fedrepro.privacy.audit`): DP-FedPAQ's round (:mod:`.dpfedpaq`), ALI-DPFL's
clients' DP-SGD (:mod:`.alidpfl`), ALI-DPFL's tau* estimates (:mod:`.estimates`) and Fed-PLT
(:mod:`.fedplt`), and tight audits of exact one-dimensional reductions (:mod:`.tight`), whose
runs are in :mod:`fedrepro.experiments.privacy` (``audit_*``) and stay importable from here; their tables (:mod:`.tables`) and figures (:mod:`.figures`)."""
