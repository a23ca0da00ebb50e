"""``book/head-to-head/``: the three papers' private algorithms compared at one guarantee and
one uplink budget (the library side is :mod:`fedrepro.headtohead`); :mod:`.calibration`: the
noise each algorithm needs for each target ε on task T1."""
