"""The names random streams are drawn from, by declared experiment identity.

Every random number of an experiment comes from a ``SeedSequence`` whose entropy is derived
from the experiment's *stream name* and its config fields (:mod:`fedrepro.core.rng`). The
stream name is a declared name, looked up by the experiment's declared identity
``(part, experiment)`` (the class variables of its config), never computed from where its
code lives: moving, renaming or splitting a run module changes no draw.

New experiments draw from ``"<part>/<experiment>"``. The experiments below existed before
streams were named this way; their streams keep the names their results were computed with
(the then location of their config class, now only an opaque label), so that every stored
result stays what it is: re-drawing them would move every random number of the book and
cost hours of recomputation for no change in what is computed. The labels are stored without
their package prefix: they are names, not references to modules. An entry leaves this table
only with a recomputation of the results it keys (its results then draw from
``"<part>/<experiment>"``); none is ever added.
"""

from __future__ import annotations

__all__ = ["HISTORICAL_STREAMS", "stream_name"]

#: ``(part, experiment) -> stream label`` for the experiments named before streams were
#: declared (see the module docstring). Frozen: entries may be removed, never added or changed.
HISTORICAL_STREAMS: dict[tuple[str, str], str] = {
    ("alidpfl", "closed-form-tau"): "chapters.alidpfl.closed_form:ClosedFormConfig",
    ("alidpfl", "reading"): "chapters.alidpfl.settings:ReadingConfig",
    ("alidpfl", "reading-seeds"): "chapters.alidpfl.settings:ReadingSeedsConfig",
    ("alidpfl", "tables"): "chapters.alidpfl.experiments:TablesConfig",
    ("alidpfl", "theory-checks"): "chapters.alidpfl.theory:TheoryConfig",
    ("dpfedpaq", "experiments-fig2-noise-growth"): "chapters.dpfedpaq.experiments.noise_growth:GrowthRunsConfig",
    ("dpfedpaq", "experiments-fig4-epsilon"): "chapters.dpfedpaq.experiments.fig4_epsilon:Fig4EpsilonRunsConfig",
    ("dpfedpaq", "experiments-mlp"): "chapters.dpfedpaq.experiments.mlp:MLPConfig",
    ("dpfedpaq", "experiments-mlp-block"): "chapters.dpfedpaq.experiments.mlp_block:MLPBlockConfig",
    ("dpfedpaq", "experiments-mlp-lr"): "chapters.dpfedpaq.experiments.mlp_lr:MLPLearningRateConfig",
    ("dpfedpaq", "experiments-mlp-width"): "chapters.dpfedpaq.experiments.mlp_width:MLPWidthConfig",
    ("dpfedpaq", "experiments-runs"): "chapters.dpfedpaq.experiments:RunsConfig",
    ("dpfedpaq", "softmax-optimum"): "chapters.dpfedpaq.experiments:OptimumConfig",
    ("dpfedpaq", "theory-budget"): "chapters.dpfedpaq.theory:BudgetConfig",
    ("dpfedpaq", "theory-checks"): "chapters.dpfedpaq.theory:ChecksConfig",
    ("dpfedpaq", "theory-theorem1"): "chapters.dpfedpaq.theory:TheoremConfig",
    ("fedplt", "comparison-exactness"): "fedplt.experiments.comparison:ExactnessConfig",
    ("fedplt", "comparison-large"): "fedplt.experiments.comparison:LargeComparisonConfig",
    ("fedplt", "comparison-times"): "fedplt.experiments.comparison:ComparisonConfig",
    ("fedplt", "comparison-v1-rates"): "fedplt.experiments.comparison:V1RatesConfig",
    ("fedplt", "participation-privacy-cohorts"): "fedplt.experiments.participation:CohortsConfig",
    ("fedplt", "participation-privacy-exact"): "fedplt.experiments.participation:ExactConfig",
    ("fedplt", "participation-privacy-noise"): "fedplt.experiments.noise:NoiseConfig",
    ("fedplt", "participation-privacy-v1-rates"): "fedplt.experiments.participation:V1RatesConfig",
    ("fedplt", "problems"): "fedplt.problems_report:ProblemsConfig",
    ("fedplt", "reading-v1-fig3"): "chapters.fedplt.readings.epochs:ReadingsEpochsConfig",
    ("fedplt", "reading-v1-grid"): "chapters.fedplt.readings.experiments:ReadingsGridConfig",
    ("fedplt", "reading-v1-tables"): "chapters.fedplt.readings.experiments:ReadingTablesConfig",
    ("fedplt", "reading-v2-grid-range"): "fedplt.experiments.comparison:ComparisonConfig",
    ("fedplt", "reading-v2-table-v-tight"): "fedplt.experiments.comparison:LargeComparisonConfig",
    ("fedplt", "reading-v2-tables-ii-iv-tight"): "fedplt.experiments.comparison:ComparisonConfig",
    ("fedplt", "reading-v2-tamuna"): "fedplt.experiments.comparison:ComparisonConfig",
    ("fedplt", "theory-checks"): "fedplt.theory:ChecksConfig",
    ("fedplt", "theory-counterexamples"): "fedplt.theory:CounterexamplesConfig",
    ("fedplt", "theory-jacobian"): "fedplt.theory_jacobian:JacobianConfig",
    ("fedplt", "theory-rate"): "fedplt.theory:RateConfig",
    ("fedplt", "theory-stability"): "fedplt.theory:StabilityConfig",
    ("fedplt", "tuning-v1-rates"): "fedplt.experiments.sweeps:V1RatesConfig",
    ("fedplt", "tuning-v2-drift"): "fedplt.experiments.sweeps:DriftConfig",
    ("fedplt", "tuning-v2-sweeps"): "fedplt.experiments.sweeps:V2SweepConfig",
    ("fedplt", "worst-case-grid"): "chapters.fedplt.worst_case:GridConfig",
    ("fedplt", "worst-case-validation"): "chapters.fedplt.worst_case:ValidationConfig",
    ("headtohead", "t1"): "chapters.headtohead.t1:T1Config",
    ("headtohead", "t1-alidpfl"): "chapters.headtohead.t1_alidpfl:T1ALIConfig",
    ("headtohead", "t1-calibration"): "chapters.headtohead.calibration:CalibrationConfig",
    ("headtohead", "t1-edges"): "chapters.headtohead.t1_edges:T1EdgesConfig",
    ("headtohead", "t1-walk"): "chapters.headtohead.t1_walk:T1WalkConfig",
    ("headtohead", "t2"): "chapters.headtohead.t2:T2Config",
    ("headtohead", "t2-alidpfl"): "chapters.headtohead.t2_alidpfl:T2ALIConfig",
    ("headtohead", "t2-alidpfl-tuning"): "chapters.headtohead.t2_alidpfl:T2ALITuningConfig",
    ("headtohead", "t2-edges"): "chapters.headtohead.t2_edges:T2EdgesConfig",
    ("headtohead", "t2-edges-tuning"): "chapters.headtohead.t2_edges:T2EdgesTuningConfig",
    ("headtohead", "t2-tuning"): "chapters.headtohead.t2:T2TuningConfig",
    ("privacy", "alidpfl-epsilon-curve"): "privacy.experiments:EpsilonCurveConfig",
    ("privacy", "alidpfl-iteration-counts"): "privacy.experiments:IterationCountsConfig",
    ("privacy", "audit-alidpfl-dpsgd"): "chapters.privacy_audit.alidpfl:DPSGDAuditConfig",
    ("privacy", "audit-alidpfl-estimates"): "chapters.privacy_audit.estimates:EstimatesAuditConfig",
    ("privacy", "audit-dpfedpaq"): "chapters.privacy_audit.dpfedpaq:FedPAQAuditConfig",
    ("privacy", "audit-fedplt"): "chapters.privacy_audit.fedplt:FedPLTAuditConfig",
    ("privacy", "dpfedpaq-calibration"): "privacy.experiments:CalibrationConfig",
    ("privacy", "dpfedpaq-mechanism-claims"): "privacy.claims:MechanismClaimsConfig",
    ("privacy", "fedplt-lemma5-check"): "privacy.experiments:Lemma5CheckConfig",
    ("privacy", "fedplt-proposition4"): "privacy.experiments:Proposition4Config",
}


def stream_name(part: str, experiment: str) -> str:
    """The stream name of the experiment ``(part, experiment)``: its historical label (with
    the package prefix it was drawn with) or ``"<part>/<experiment>"``."""
    label = HISTORICAL_STREAMS.get((part, experiment))
    return f"fedrepro.{label}" if label is not None else f"{part}/{experiment}"
