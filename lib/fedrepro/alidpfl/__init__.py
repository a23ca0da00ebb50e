"""ALI-DPFL (Ling et al.): the paper's science, importing only the shared layer. Empty until
the ALI-DPFL part is built (its accounting is shared: :mod:`fedrepro.privacy`)."""
