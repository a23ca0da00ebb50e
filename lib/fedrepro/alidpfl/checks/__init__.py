"""ALI-DPFL's statements as checks (proofs as checks): each function returns the value a
statement bounds, computed on an instance where every constant is known, and the bound the
statement gives (with the tolerance next to the check).

* :mod:`~fedrepro.alidpfl.checks.theorem1` — Theorem 1's h(τ) against the measured gap
  between the federated and the centralised trajectories on quadratic clients;
* :mod:`~fedrepro.alidpfl.checks.lemma3` — Lemma 3's 2√dσC/B against the measured
  ‖g̃ − g‖ with and without clipping and sampling;
* :mod:`~fedrepro.alidpfl.checks.theorem2` — the steps of Theorem 2's proof (Jensen, the
  √3/3 constant, Lemma 6 on noisy gradients);
* :mod:`~fedrepro.alidpfl.checks.statements` — Definition 3, the clipping formula of
  §III-C, eqs. (7), (8) and (11) as printed and as corrected.
"""
