"""Readings of the Fed-PLT v1 problem that the paper leaves open (:mod:`.experiments`) and
what each does to the v1 numbers we miss (:mod:`.effects`)."""
