"""Federated problems ``min_x sum_i f_i(x)`` with vectorised per-agent oracles.

* :class:`~fedrepro.problems.base.FederatedProblem`: the protocol (``N``, ``n``, ``lam``,
  ``lam_bar``, ``lam_i``, ``lam_bar_i``, ``cost``, ``grad``, ``hessian``, ``total_grad``,
  ``x_star``, ``local_prox``);
* :mod:`~fedrepro.problems.quadratic`: random quadratics with prescribed moduli;
* :mod:`~fedrepro.problems.logistic`: the Fed-PLT v1/v2 logistic-regression problems.
"""

from fedrepro.problems.base import FederatedProblem, newton_solve
from fedrepro.problems.logistic import (
    LogisticProblem,
    generate_logistic_data,
    logistic_v1,
    logistic_v2,
)
from fedrepro.problems.quadratic import QuadraticProblem, random_quadratic

__all__ = [
    "FederatedProblem",
    "LogisticProblem",
    "QuadraticProblem",
    "generate_logistic_data",
    "logistic_v1",
    "logistic_v2",
    "newton_solve",
    "random_quadratic",
]
