"""The ``study:`` block of a job -> a hyperparameter tuning job (no Pulumi, no Google clients).

A job of the stack config with a ``study:`` key is a Vertex AI HyperparameterTuningJob.
Its other keys are the trial job spec, parsed by ``vertex_training.stackconfig`` exactly as a
training
job's; ``wait``, ``adopt``, ``display_name``, ``region``, ``backend``, ``labels`` and
``kms_key`` belong to the tuning job itself (docs/config-shape.md). ``spec.parse_job``
hands the ``study:`` block to ``parse_study`` here and returns a ``TuningJobSpec``: the
training ``JobSpec`` plus the ``Study``, whose ``request_body()`` is the REST
``HyperparameterTuningJob``.

As in ``vertex_training.stackconfig``, two layers: ``StudyConfig`` and friends mirror the YAML key
for
key (``extra="forbid"``); ``Study`` and friends are the canonical, defaulted study. Every
mistake is an ``Issue`` with the full stack config key, the bad value and the fix.

The rules come from google/cloud/aiplatform/v1/study.proto and
hyperparameter_tuning_job.proto (github.com/googleapis/googleapis):

- StudySpec.metrics and .parameters are required; metric and parameter IDs "must not
  contain whitespaces and must be unique amongst all" metric / parameter specs, except
  that conditional parameters of one parent may share an ID when their parent value
  conditions are disjoint.
- DoubleValueSpec / IntegerValueSpec: "inclusive minimum / maximum"; UNIT_LOG_SCALE and
  UNIT_REVERSE_LOG_SCALE: "the entire feasible space must be strictly positive";
  scale_type: "leave unset for CATEGORICAL parameters".
- DiscreteValueSpec.values: "in increasing order and at least 1e-10 apart ... should not
  contain more than 1,000 values".
- ConditionalParameterSpec: parent values of CATEGORICAL, INTEGER or DISCRETE parents only
  (there is no condition on a DOUBLE parent); categorical and discrete parent values "must
  exist in" the parent's values, integer ones "must lie in" its range.
- Algorithm.GRID_SEARCH: "all parameters must be INTEGER, CATEGORICAL, or DISCRETE".
- automated_stopping_spec is a oneof: at most one early stopping rule.
- HyperparameterTuningJob: max_trial_count and parallel_trial_count are required;
  max_failed_trial_count 0 means "Vertex AI decides".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vertex_training._exports import lazy_exports

if TYPE_CHECKING:  # the names' types, for type checkers; at run time each loads on first use
    from vertex_training.stackconfig._constants import STUDY_KEY
    from vertex_training.stackconfig.study._config import StudyConfig
    from vertex_training.stackconfig.study._job import (
        Conditional,
        EarlyStopping,
        Metric,
        Parameter,
        Study,
        TuningJobSpec,
    )
    from vertex_training.stackconfig.study._kind import is_tuning_job
    from vertex_training.stackconfig.study._resolve import parse_study

#: Public name -> the module that defines it: imported on first use, so that asking
#: whether a job is a tuning job (``is_tuning_job``, as every program and provider does)
#: loads none of the study's models.
_EXPORTS = {
    "STUDY_KEY": "vertex_training.stackconfig._constants",
    "Conditional": "vertex_training.stackconfig.study._job",
    "EarlyStopping": "vertex_training.stackconfig.study._job",
    "Metric": "vertex_training.stackconfig.study._job",
    "Parameter": "vertex_training.stackconfig.study._job",
    "Study": "vertex_training.stackconfig.study._job",
    "StudyConfig": "vertex_training.stackconfig.study._config",
    "TuningJobSpec": "vertex_training.stackconfig.study._job",
    "is_tuning_job": "vertex_training.stackconfig.study._kind",
    "parse_study": "vertex_training.stackconfig.study._resolve",
}
__all__ = [
    "STUDY_KEY",
    "Conditional",
    "EarlyStopping",
    "Metric",
    "Parameter",
    "Study",
    "StudyConfig",
    "TuningJobSpec",
    "is_tuning_job",
    "parse_study",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
