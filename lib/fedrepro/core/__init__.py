"""Shared machinery: the results store (:mod:`~fedrepro.core.cache`) and seeding
(:mod:`~fedrepro.core.rng`)."""
