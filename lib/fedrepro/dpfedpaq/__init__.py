"""Privacy-augmented FedPAQ (Mohammadi et al.): the paper's science, importing only the
shared layer. So far: its privacy amplification and calibration (eqs. 13, 15, 16,
:mod:`.amplification`); the algorithms and Theorem 1 come with the DP-FedPAQ part."""
