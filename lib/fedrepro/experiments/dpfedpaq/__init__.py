"""Runs of the DP-FedPAQ part (privacy-augmented FedPAQ, Mohammadi et al.): the training runs of
Figs. 2–4 and their readings (:mod:`.runs`, :mod:`.fig4_epsilon`, :mod:`.noise_growth`), the
network runs of claim C48 (:mod:`.mlp`, :mod:`.mlp_lr`, :mod:`.mlp_width`, :mod:`.mlp_block`),
the softmax optimum (:mod:`.optimum`) and the theory chapter's checks (:mod:`.theory_theorem`,
:mod:`.theory_checks`, :mod:`.theory_budget`); the chapters in :mod:`fedrepro.chapters.dpfedpaq`
read their stored results."""
