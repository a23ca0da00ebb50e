"""Fed-PLT (Bastianello, Liu, Johansson): the algorithm (v2 Algorithm 1) and its local solvers.

:func:`~fedrepro.fedplt.algorithm.fedplt_iteration` is one outer iteration as a pure
function; :func:`~fedrepro.fedplt.algorithm.run_fedplt` runs it with participation, noise
and the metrics of the experiments.
"""

from fedrepro.fedplt.algorithm import (
    SOLVERS,
    FedPLTRun,
    default_step_size,
    fedplt_iteration,
    fixed_point,
    local_moduli,
    run_fedplt,
)

__all__ = [
    "SOLVERS",
    "FedPLTRun",
    "default_step_size",
    "fedplt_iteration",
    "fixed_point",
    "local_moduli",
    "run_fedplt",
]
