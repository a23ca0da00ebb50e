"""``book/fedplt/participation-privacy.ipynb``: partial participation (:mod:`.participation`,
v2 Table VI, v1 Table III), noisy local training (:mod:`.noise`, v2 Table VII, v1 Table IV)
and their scorecard outcomes (:mod:`.scorecard`)."""
