"""Runs of the Fed-PLT theory page: the statement checks, counterexamples, stability and rate
experiments, and the Jacobian study."""
