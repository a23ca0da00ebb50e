"""The Fed-PLT chapters (``book/fedplt/``): :mod:`.problems`, :mod:`.theory`,
:mod:`.comparison`, :mod:`.participation_privacy` and :mod:`.tuning`."""
