"""The canonical study (``Study``, its metrics, parameters and early stopping rule) and
``TuningJobSpec``, whose ``request_body()`` is the REST ``HyperparameterTuningJob``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from vertex_training.stackconfig._constants import ParameterType
from vertex_training.stackconfig._job import JobSpec, _SpecModel
from vertex_training.stackconfig.study._config import (
    ALGORITHM_ENUMS,
    EARLY_STOPPING_FIELDS,
    MEASUREMENT_SELECTION_ENUMS,
    SCALE_TYPES,
    ParameterValue,
)


def _number_text(value: float) -> str:
    """An int64 in proto3 JSON: a decimal string."""
    return str(int(value))


class Metric(_SpecModel):
    """A metric to optimize."""

    id: str
    goal: Literal["MAXIMIZE", "MINIMIZE"]

    def request_body(self) -> dict[str, Any]:
        """REST ``StudySpec.MetricSpec``."""
        return {"metricId": self.id, "goal": self.goal}


class Conditional(_SpecModel):
    """Parameters that are active when the parent parameter takes one of ``when``."""

    when: list[ParameterValue]
    parameters: list[Parameter]

    def request_bodies(self, parent_type: str) -> list[dict[str, Any]]:
        """REST ``ConditionalParameterSpec``s, one per parameter."""
        values: list[str] | list[float]
        if parent_type == "categorical":
            field, values = "parentCategoricalValues", [str(v) for v in self.when]
        elif parent_type == "integer":
            field, values = "parentIntValues", [_number_text(float(v)) for v in self.when]
        else:
            field, values = "parentDiscreteValues", [float(v) for v in self.when]
        return [
            {field: {"values": values}, "parameterSpec": p.request_body()} for p in self.parameters
        ]


class Parameter(_SpecModel):
    """A parameter to tune. ``min``/``max`` apply to double and integer parameters,
    ``values`` to categorical (text) and discrete (numbers, increasing) ones."""

    id: str
    type: ParameterType
    min: float | None = None
    max: float | None = None
    values: list[ParameterValue] = Field(default_factory=list)
    scale: Literal["linear", "log", "reverse_log"] | None = None
    conditional: list[Conditional] = Field(default_factory=list)

    def request_body(self) -> dict[str, Any]:
        """REST ``StudySpec.ParameterSpec``."""
        body: dict[str, Any] = {"parameterId": self.id}
        if self.type == "double":
            body["doubleValueSpec"] = {
                "minValue": float(self.min or 0),
                "maxValue": float(self.max or 0),
            }
        elif self.type == "integer":
            body["integerValueSpec"] = {
                "minValue": _number_text(self.min or 0),
                "maxValue": _number_text(self.max or 0),
            }
        elif self.type == "categorical":
            body["categoricalValueSpec"] = {"values": [str(v) for v in self.values]}
        else:
            body["discreteValueSpec"] = {"values": [float(v) for v in self.values]}
        if self.scale is not None:
            body["scaleType"] = SCALE_TYPES[self.scale]
        specs = [spec for c in self.conditional for spec in c.request_bodies(self.type)]
        if specs:
            body["conditionalParameterSpecs"] = specs
        return body


class EarlyStopping(_SpecModel):
    """One automated early stopping rule; the convex rule's settings only for ``convex``."""

    rule: Literal["decay_curve", "median", "convex"]
    use_elapsed_duration: bool = False
    max_step_count: int | None = None
    min_step_count: int | None = None
    min_measurement_count: int | None = None
    learning_rate_parameter_name: str | None = None
    update_all_stopped_trials: bool | None = None

    def request_body(self) -> dict[str, Any]:
        """``{<rule field>: {...}}`` for the StudySpec's automated_stopping_spec oneof."""
        spec: dict[str, Any] = {}
        if self.use_elapsed_duration:
            spec["useElapsedDuration"] = True
        if self.rule == "convex":
            for name, value in (
                ("maxStepCount", self.max_step_count),
                ("minStepCount", self.min_step_count),
                ("minMeasurementCount", self.min_measurement_count),
            ):
                if value is not None:
                    spec[name] = str(value)  # int64
            if self.learning_rate_parameter_name:
                spec["learningRateParameterName"] = self.learning_rate_parameter_name
            if self.update_all_stopped_trials is not None:
                spec["updateAllStoppedTrials"] = self.update_all_stopped_trials
        return {EARLY_STOPPING_FIELDS[self.rule]: spec}


class Study(_SpecModel):
    """The study of a tuning job, validated and defaulted."""

    metrics: list[Metric]
    parameters: list[Parameter]
    algorithm: Literal["default", "grid", "random"] = "default"
    measurement_selection: Literal["best", "last"] | None = None
    early_stopping: EarlyStopping | None = None
    max_trials: int
    parallel_trials: int = 1
    max_failed_trials: int = 0

    def request_body(self) -> dict[str, Any]:
        """REST ``StudySpec`` (unset fields omitted)."""
        body: dict[str, Any] = {
            "metrics": [m.request_body() for m in self.metrics],
            "parameters": [p.request_body() for p in self.parameters],
        }
        if algorithm := ALGORITHM_ENUMS[self.algorithm]:
            body["algorithm"] = algorithm
        if self.measurement_selection is not None:
            body["measurementSelectionType"] = MEASUREMENT_SELECTION_ENUMS[
                self.measurement_selection
            ]
        if self.early_stopping is not None:
            body.update(self.early_stopping.request_body())
        return body


class TuningJobSpec(JobSpec):
    """A hyperparameter tuning job: a training job (the trial job spec) plus its study.

    The inherited fields say what each trial runs; ``display_name``, ``labels``,
    ``kms_key``, ``wait`` and ``adopt`` are the tuning job's own.
    """

    request_kind: ClassVar[str] = "hyperparameterTuningJob"

    study: Study

    def request_body(self) -> dict[str, Any]:
        """The exact Vertex AI REST ``HyperparameterTuningJob`` request body.

        ``trialJobSpec`` is the CustomJobSpec a training job with the same keys would
        submit as its ``jobSpec``; int32 counts are JSON numbers; a zero
        ``maxFailedTrialCount`` (Vertex decides) is omitted, as proto3 JSON omits it.
        """
        custom = super().request_body()
        body: dict[str, Any] = {
            "displayName": custom.pop("displayName"),
            "studySpec": self.study.request_body(),
            "maxTrialCount": self.study.max_trials,
            "parallelTrialCount": self.study.parallel_trials,
        }
        if self.study.max_failed_trials:
            body["maxFailedTrialCount"] = self.study.max_failed_trials
        body["trialJobSpec"] = custom.pop("jobSpec")
        body.update(custom)  # labels, encryptionSpec
        return body
