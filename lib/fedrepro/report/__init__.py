"""Reporting: the papers' values (:mod:`~fedrepro.report.paper`), the reproduction
scorecard (:mod:`~fedrepro.report.scorecard`) and helpers for the book's chapters
(:mod:`~fedrepro.report.book`)."""
