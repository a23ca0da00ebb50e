"""Runs of the ALI-DPFL part (``book/alidpfl/``): the configs and run functions of the stored
results under ``data/results/alidpfl/`` -- the theory checks (:mod:`.theory`), the reading
study (:mod:`.settings`), Tables II-IV (:mod:`.tables`) and the closed-form tau* runs
(:mod:`.closed_form`); their tables, figures and scorecard are in :mod:`fedrepro.chapters.alidpfl`."""
