"""``book/privacy-audit.ipynb``: empirical privacy audits of the papers' mechanisms with canaries
(the auditor is :mod:`fedrepro.privacy.audit`): DP-FedPAQ's round (:mod:`.dpfedpaq`), ALI-DPFL's
clients' DP-SGD (:mod:`.alidpfl`); their tables (:mod:`.tables`) and figures (:mod:`.figures`)."""
