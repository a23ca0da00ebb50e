"""``book/fedplt/theory.ipynb``: every lemma and proposition as a check (:mod:`.checks`),
Proposition 1 on logistic costs by the round's Jacobian (:mod:`.jacobian`), and the
scorecard's check items (:mod:`.scorecard`)."""
