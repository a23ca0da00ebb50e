"""Proofs as checks for DP-FedPAQ (spec §8): one module per family, one function per
statement, each returning a :class:`~fedrepro.dpfedpaq.checks.result.CheckResult` (the
computed value against the bound the statement gives, with its tolerance).

==========================  =========================================================
module                      statements
==========================  =========================================================
:mod:`.quantizer`           eq. (20): unbiasedness, exact variance, Assumption 4, bits β(s)
:mod:`.sampling`            device sampling probabilities and identity (39)
:mod:`.privacy`             chain (15) link by link, Gaussian profile (eqs. 13, 16), budget over K rounds
:mod:`.sensitivity`         Δ_f of the released update on coupled neighbours; per-sample clipping
:mod:`.inequalities`        (28)–(30), the γ0 conditions, recursion (32) → (34)
:mod:`.synthetic`           a small ridge regression problem whose constants are exact
:mod:`.lemmas`              Lemmas 1–3 and decomposition (22) by Monte Carlo
:mod:`.theorem`             Theorem 1 on the synthetic problem (bound vs measurement)
==========================  =========================================================

Import the modules by their full path (this package's ``__init__`` imports nothing, so a
result's code hash covers only the modules it uses).
"""
