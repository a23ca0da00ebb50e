"""Runs of the Fed-PLT part (Chapter "Fed-PLT" of the book): the experiment configs of its pages
(test problems, theory, worst case, tuning, comparison, participation and privacy, readings),
the run, unit and combine functions that compute their stored results, and the computing
helpers those call. The tables, figures, scorecards and facts stay in
:mod:`fedrepro.chapters.fedplt`."""
