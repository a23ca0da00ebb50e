"""``book/fedplt/worst-case.ipynb``: exact worst-case rates of Fed-PLT by performance
estimation. Experiments and rendering in :mod:`.experiments`, the comparisons with the
theory and tuning chapters' results in :mod:`.compare`, the scorecard's check items in
:mod:`.scorecard`."""
