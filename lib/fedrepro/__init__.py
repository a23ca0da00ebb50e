"""fedrepro: the library behind the book that reproduces, checks and extends
Fed-PLT, privacy-augmented FedPAQ and ALI-DPFL.

Subpackages: ``core`` (results store, seeding), ``report`` (paper values, scorecard, book
helpers). The algorithm packages (``fedplt``, ``dpfedpaq``, ``alidpfl``, ``privacy``,
``problems``, ``data``) are added part by part.
"""

__version__ = "0.1.0"
