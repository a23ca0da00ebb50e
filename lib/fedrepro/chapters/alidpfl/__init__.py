"""Chapters of the ALI-DPFL part (``book/alidpfl/``).

* :mod:`~fedrepro.chapters.alidpfl.theory` -- ``book/alidpfl/theory.ipynb``
* :mod:`~fedrepro.chapters.alidpfl.settings` -- ``book/alidpfl/settings.ipynb``
* :mod:`~fedrepro.chapters.alidpfl.scorecard` -- the part's scorecard provider
"""
