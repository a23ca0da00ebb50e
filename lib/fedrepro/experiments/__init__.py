"""Runs: what computes a stored result, and nothing else.

One module per experiment family, grouped by book part (``experiments/<part>/``): the
experiment configs (frozen dataclasses), their run, unit and combine functions, and the
computing helpers those call. A stored result's code hash covers exactly the modules its run
imports, so a run module never imports a view (:mod:`fedrepro.chapters`) or the book helpers
(:mod:`fedrepro.report`); an import-linter contract in ``pyproject.toml`` enforces it.
Tables, figures, scorecard outcomes and the facts a page quotes live in
:mod:`fedrepro.chapters` and read the stored results.
"""
