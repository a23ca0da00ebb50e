"""Runs of the Fed-PLT readings: the alternative readings of the papers' experiments (grids,
tables, epochs, tight and large comparisons, TAMUNA), and the config they share."""
