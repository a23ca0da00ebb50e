"""One module (or folder) per chapter of the book, mirroring ``book/``.

A chapter's configs, runs, tables, figures and scorecard outcomes live here; each calls the
paper's science package (:mod:`fedrepro.fedplt`, :mod:`fedrepro.dpfedpaq`,
:mod:`fedrepro.alidpfl`) and the shared layer. Notebooks import only this package and
:mod:`fedrepro.report`, so a table in the book is two hops from the code that computes it.

* :mod:`~fedrepro.chapters.privacy_accounting` -- ``book/privacy-accounting.ipynb``
* :mod:`~fedrepro.chapters.fedplt` -- ``book/fedplt/*.ipynb``
"""
