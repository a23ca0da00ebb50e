"""Chapters of the ALI-DPFL part (``book/alidpfl/``).

* :mod:`~fedrepro.chapters.alidpfl.theory` -- ``book/alidpfl/theory.ipynb``
* :mod:`~fedrepro.chapters.alidpfl.settings` -- ``book/alidpfl/settings.ipynb``
* :mod:`~fedrepro.chapters.alidpfl.scorecard` -- the part's scorecard provider, with the rules of
  the experimental claims in :mod:`~fedrepro.chapters.alidpfl.claims`

The runs (configs and run functions of the stored results) are in :mod:`fedrepro.experiments.alidpfl`.
"""
