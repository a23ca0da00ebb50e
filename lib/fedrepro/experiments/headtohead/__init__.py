"""Runs of the head-to-head part (``book/head-to-head/``): the experiment configs of tasks T1
and T2, the accountant's calibrations, ALI-DPFL on both tasks and the probes of the tuning
grids' edges, with the run, unit and combine functions and the computing helpers they call
(the algorithms, tasks and accounting are :mod:`fedrepro.headtohead`); the tables, figures and
facts of the pages are in :mod:`fedrepro.chapters.headtohead`."""
