"""Proofs as checks (PEPit style): every lemma and proposition of Fed-PLT (v2 numbering) as a
function that computes the quantity a statement bounds and the bound it gives, on random and
adversarial instances, with minimal counterexamples and corrected statements where a
statement fails.

One function per statement:

=====================  ==========================================================
statement              check
=====================  ==========================================================
Lemma 2                :func:`check_lemma2` (and eq. (11): :func:`check_eq11`)
Lemma 3                :func:`check_lemma3` (v2, or v1 as printed)
Lemma 4                :func:`check_lemma4`
Lemma 5                :func:`check_lemma5`
Lemma 6                :func:`check_lemma6`
Proposition 1          :func:`check_proposition1`
Lemma 7                :func:`check_lemma7`, :func:`check_lemma7_one_step`
Proposition 2          :func:`check_proposition2`
Lemma 8                :func:`check_lemma8`
Proposition 3          :func:`check_proposition3`
Proposition 4          :func:`check_proposition4`
Corollary 1            :func:`check_corollary1`, :func:`check_corollary1_noise`
=====================  ==========================================================

Searches: :func:`random_instances`, :func:`adversarial_search`; counterexamples:
:data:`COUNTEREXAMPLES`.
"""

from fedrepro.fedplt.checks.accelerated import (
    Lemma8Instance,
    Proposition3Instance,
    agd_worst_case,
    check_lemma8,
    check_proposition3,
    proposition3_S,
)
from fedrepro.fedplt.checks.contraction import (
    Eq11Instance,
    Lemma2Instance,
    Lemma3Instance,
    Lemma6Instance,
    check_eq11,
    check_eq11_step_range,
    check_lemma2,
    check_lemma3,
    check_lemma6,
)
from fedrepro.fedplt.checks.counterexamples import (
    COUNTEREXAMPLES,
    Counterexample,
    counterexample_corollary1,
    counterexample_eq11,
    counterexample_lemma3_v1,
    counterexample_lemma7_proof,
    counterexample_lemma8,
    counterexample_proposition1,
    counterexample_proposition1_not_contractive,
    counterexample_proposition2,
    counterexample_proposition3,
    counterexample_proposition4,
)
from fedrepro.fedplt.checks.instances import AffineRound, affine_round, quadratic_problem, reference_round
from fedrepro.fedplt.checks.privacy import (
    PRIVACY_VIEWS,
    Lemma5Instance,
    Proposition4Instance,
    check_lemma5,
    check_proposition4,
    gaussian_renyi_divergence,
)
from fedrepro.fedplt.checks.proposition1 import (
    Lemma7Instance,
    Proposition1Instance,
    check_lemma7,
    check_lemma7_one_step,
    check_proposition1,
    lemma7_condition_agreement,
    proposition1_S,
)
from fedrepro.fedplt.checks.result import CheckResult
from fedrepro.fedplt.checks.search import (
    STATEMENTS,
    SearchResult,
    adversarial_search,
    evaluate,
    random_instances,
    statement,
)
from fedrepro.fedplt.checks.stochastic import (
    Corollary1Instance,
    Lemma4Instance,
    Proposition2Instance,
    check_corollary1,
    check_corollary1_noise,
    check_lemma4,
    check_proposition2,
)

__all__ = [
    "CheckResult", "AffineRound", "affine_round", "quadratic_problem", "reference_round",
    "Lemma2Instance", "check_lemma2", "Eq11Instance", "check_eq11", "check_eq11_step_range",
    "Lemma3Instance", "check_lemma3", "Lemma4Instance", "check_lemma4", "Lemma5Instance", "check_lemma5",
    "Lemma6Instance", "check_lemma6", "Proposition1Instance", "check_proposition1", "proposition1_S",
    "Lemma7Instance", "check_lemma7", "check_lemma7_one_step", "lemma7_condition_agreement",
    "Proposition2Instance", "check_proposition2", "Lemma8Instance", "check_lemma8", "agd_worst_case",
    "Proposition3Instance", "check_proposition3", "proposition3_S", "PRIVACY_VIEWS", "Proposition4Instance",
    "check_proposition4", "gaussian_renyi_divergence", "Corollary1Instance", "check_corollary1",
    "check_corollary1_noise", "STATEMENTS", "SearchResult", "adversarial_search", "evaluate",
    "random_instances", "statement", "COUNTEREXAMPLES", "Counterexample", "counterexample_corollary1",
    "counterexample_eq11", "counterexample_lemma3_v1", "counterexample_lemma7_proof", "counterexample_lemma8",
    "counterexample_proposition1", "counterexample_proposition1_not_contractive", "counterexample_proposition2",
    "counterexample_proposition3",
    "counterexample_proposition4",
]
from fedrepro.fedplt.checks.jacobian import JacobianInstance, check_proposition1_logistic, round_jacobian  # noqa: E402

__all__ += ["JacobianInstance", "check_proposition1_logistic", "round_jacobian"]
