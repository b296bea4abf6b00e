"""The ``study:`` block of a job -> a hyperparameter tuning job (no Pulumi, no Google clients).

A job of the stack config with a ``study:`` key is a Vertex AI HyperparameterTuningJob.
Its other keys are the trial job spec, parsed by ``provider.spec`` exactly as a training
job's; ``wait``, ``adopt``, ``display_name``, ``region``, ``backend``, ``labels`` and
``kms_key`` belong to the tuning job itself (docs/config-shape.md). ``spec.parse_job``
hands the ``study:`` block to ``parse_study`` here and returns a ``TuningJobSpec``: the
training ``JobSpec`` plus the ``Study``, whose ``request_body()`` is the REST
``HyperparameterTuningJob``.

As in ``provider.spec``, two layers: ``StudyConfig`` and friends mirror the YAML key for
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

import itertools
import math
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, ValidationError
from pydantic_core import PydanticCustomError

from provider.errors import Issue
from provider.spec import (
    STUDY_KEY,
    JobSpec,
    NonEmptyText,
    _choice,
    _ConfigModel,
    _did_you_mean,
    _invalid,
    _issues_from,
    _key,
    _one_of,
    _scalar_text,
    _SpecModel,
)

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

#: The legacy AI Platform Training block, and its key that makes the job a tuning job
#: once translated (docs/config-shape.md, "Legacy AI Platform Training configs").
LEGACY_TRAINING_INPUT_KEY = "training_input"
LEGACY_HYPERPARAMETERS_KEY = "hyperparameters"

GOALS = ("MAXIMIZE", "MINIMIZE")
PARAMETER_TYPES = ("double", "integer", "categorical", "discrete")
SCALES = ("linear", "log", "reverse_log")
ALGORITHMS = ("default", "grid", "random")
MEASUREMENT_SELECTIONS = ("best", "last")
EARLY_STOPPING_RULES = ("decay_curve", "median", "convex")
#: Parameter types Vertex accepts with GRID_SEARCH (study.proto, Algorithm.GRID_SEARCH).
GRID_TYPES = ("integer", "categorical", "discrete")
#: Parameter types a scale applies to (study.proto ParameterSpec.scale_type).
SCALED_TYPES = ("double", "integer", "discrete")
#: Parent types a conditional parameter can hang off (ConditionalParameterSpec).
CONDITIONAL_PARENT_TYPES = ("integer", "categorical", "discrete")
#: study.proto DiscreteValueSpec.values: at most 1,000 values, at least 1e-10 apart.
MAX_DISCRETE_VALUES = 1000
DISCRETE_EPSILON = 1e-10

#: REST enum names of each YAML choice.
SCALE_TYPES: Mapping[str, str] = {
    "linear": "UNIT_LINEAR_SCALE",
    "log": "UNIT_LOG_SCALE",
    "reverse_log": "UNIT_REVERSE_LOG_SCALE",
}
ALGORITHM_ENUMS: Mapping[str, str | None] = {
    "default": None,  # ALGORITHM_UNSPECIFIED: omitted, Vertex's default search
    "grid": "GRID_SEARCH",
    "random": "RANDOM_SEARCH",
}
MEASUREMENT_SELECTION_ENUMS: Mapping[str, str] = {
    "best": "BEST_MEASUREMENT",
    "last": "LAST_MEASUREMENT",
}
EARLY_STOPPING_FIELDS: Mapping[str, str] = {
    "decay_curve": "decayCurveStoppingSpec",
    "median": "medianAutomatedStoppingSpec",
    "convex": "convexAutomatedStoppingSpec",
}


def is_tuning_job(raw: Any) -> bool:
    """Whether a job's stack config declares a hyperparameter tuning job.

    A ``study:`` block does; so does a legacy ``training_input`` with ``hyperparameters``,
    which is translated into a ``study:`` block (docs/config-shape.md).
    """
    if not isinstance(raw, Mapping):
        return False
    legacy = raw.get(LEGACY_TRAINING_INPUT_KEY)
    return STUDY_KEY in raw or (
        isinstance(legacy, Mapping) and LEGACY_HYPERPARAMETERS_KEY in legacy
    )


# ------------------------------------------------------------------ field-level validators


def _number_before(value: Any) -> Any:
    """A number (YAML may read 1e-3 as text: accept that too); never true/false."""
    if isinstance(value, bool):
        raise _invalid("must be a number, not true or false")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise _invalid("must be a finite number")
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise _invalid("must be a number, like 0.001 or 10") from None
        if math.isfinite(number):
            return number
    raise _invalid("must be a number, like 0.001 or 10")


def _scalars_before(value: Any) -> Any:
    """A non-empty list of YAML scalars (text, numbers, booleans)."""
    if not isinstance(value, list | tuple):
        raise _invalid("must be a list, like [a, b]")
    if not value:
        raise _invalid("must list at least one value")
    for index, item in enumerate(value):
        if not isinstance(item, str | int | float | bool):
            raise _invalid(
                "must be a list of values (text or numbers)",
                [((index,), item, "must be a single value (text or a number)")],
            )
    return list(value)


def _null_is_empty(value: Any) -> Any:
    """``decay_curve:`` with nothing after it means the rule with its defaults."""
    return {} if value is None else value


Number = Annotated[float, BeforeValidator(_number_before)]
Scalars = Annotated[list[Any], BeforeValidator(_scalars_before)]


# ------------------------------------------------------------------ the YAML shape (input)


class MetricConfig(_ConfigModel):
    """``{id: accuracy, goal: MAXIMIZE}``."""

    id: NonEmptyText
    goal: Annotated[str, BeforeValidator(_choice(GOALS))]


class ConditionalConfig(_ConfigModel):
    """``{when: [adam], parameters: {beta1: {...}}}``: parameters used for these parent values."""

    when: Scalars
    parameters: dict[Any, ParameterConfig]


class ParameterConfig(_ConfigModel):
    """One parameter to tune; which keys apply depends on ``type``."""

    type: Annotated[str, BeforeValidator(_choice(PARAMETER_TYPES))]
    min: Number | None = None
    max: Number | None = None
    values: Scalars | None = None
    scale: Annotated[str | None, BeforeValidator(_choice(SCALES))] = None
    conditional: list[ConditionalConfig] | None = None


class DecayCurveConfig(_ConfigModel):
    """``early_stopping.decay_curve``."""

    use_elapsed_duration: bool = False


class MedianConfig(_ConfigModel):
    """``early_stopping.median``."""

    use_elapsed_duration: bool = False


class ConvexConfig(_ConfigModel):
    """``early_stopping.convex`` (study.proto ConvexAutomatedStoppingSpec)."""

    max_step_count: int | None = Field(None, ge=0)
    min_step_count: int | None = Field(None, ge=0)
    min_measurement_count: int | None = Field(None, ge=0)
    learning_rate_parameter_name: NonEmptyText | None = None
    use_elapsed_duration: bool = False
    update_all_stopped_trials: bool | None = None


class EarlyStoppingConfig(_ConfigModel):
    """``early_stopping:``: at most one rule."""

    decay_curve: Annotated[DecayCurveConfig | None, BeforeValidator(_null_is_empty)] = None
    median: Annotated[MedianConfig | None, BeforeValidator(_null_is_empty)] = None
    convex: Annotated[ConvexConfig | None, BeforeValidator(_null_is_empty)] = None


class StudyConfig(_ConfigModel):
    """A job's ``study:`` block, as written."""

    metrics: list[MetricConfig]
    parameters: dict[Any, ParameterConfig]
    algorithm: Annotated[str, BeforeValidator(_choice(ALGORITHMS))] = "default"
    measurement_selection: Annotated[
        str | None, BeforeValidator(_choice(MEASUREMENT_SELECTIONS))
    ] = None
    early_stopping: EarlyStoppingConfig | None = None
    max_trials: int = Field(ge=1)
    parallel_trials: int = Field(1, ge=1)
    max_failed_trials: int = Field(0, ge=0)


ConditionalConfig.model_rebuild()


# ------------------------------------------------------------ the canonical study (output)

ParameterType = Literal["double", "integer", "categorical", "discrete"]
ParameterValue = Annotated[str | float, Field(union_mode="left_to_right")]


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
        if parent_type == "categorical":
            condition = {"parentCategoricalValues": {"values": [str(v) for v in self.when]}}
        elif parent_type == "integer":
            condition = {"parentIntValues": {"values": [_number_text(float(v)) for v in self.when]}}
        else:
            condition = {"parentDiscreteValues": {"values": [float(v) for v in self.when]}}
        return [{**condition, "parameterSpec": p.request_body()} for p in self.parameters]


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


# ---------------------------------------------------------------- cross-field resolution

KeyPath = tuple[str | int, ...]


class _StudyResolver:
    """Turns a well-formed ``StudyConfig`` into a ``Study``, checking every rule."""

    def __init__(self, raw: Any, config: StudyConfig, base: str) -> None:
        self.raw = raw
        self.config = config
        self.base = base
        self.issues: list[Issue] = []

    def fail(self, path: KeyPath, value: Any, message: str) -> None:
        """Record an issue; its value is what the user wrote at ``path`` when there is one."""
        written: Any = self.raw
        for part in path:
            in_mapping = isinstance(written, Mapping) and part in written
            in_list = isinstance(written, list) and isinstance(part, int) and part < len(written)
            if not (in_mapping or in_list):
                written = value
                break
            written = written[part]
        self.issues.append(Issue(_key(self.base, path), written, message))

    def resolve(self) -> Study | None:
        config = self.config
        metrics = self._metrics()
        if not config.parameters:
            self.fail(
                ("parameters",),
                {},
                "a study tunes at least one parameter: add one, e.g. "
                "learning-rate: {type: double, min: 0.001, max: 0.1, scale: log}",
            )
        parameters = [
            p
            for p in (
                self._parameter(("parameters", pid), pid, pc)
                for pid, pc in _by_id(config.parameters)
            )
            if p is not None
        ]
        self._check_unique_ids(parameters)
        if config.algorithm == "grid":
            self._check_grid(("parameters",), config.parameters)
        if config.parallel_trials > config.max_trials:
            self.fail(
                ("parallel_trials",),
                config.parallel_trials,
                f"more trials in parallel than trials in all ({config.max_trials}): write "
                f"parallel_trials: {config.max_trials} or less, or raise max_trials",
            )
        early_stopping = self._early_stopping(parameters)
        if self.issues:
            return None
        return Study(
            metrics=metrics,
            parameters=parameters,
            algorithm=typing.cast(Any, config.algorithm),
            measurement_selection=typing.cast(Any, config.measurement_selection),
            early_stopping=early_stopping,
            max_trials=config.max_trials,
            parallel_trials=config.parallel_trials,
            max_failed_trials=config.max_failed_trials,
        )

    # -- metrics

    def _metrics(self) -> list[Metric]:
        if not self.config.metrics:
            self.fail(
                ("metrics",),
                [],
                "a study optimizes at least one metric: write metrics: "
                "[{id: accuracy, goal: MAXIMIZE}] (the tag the trainer reports with "
                "cloudml-hypertune)",
            )
        metrics = []
        seen: set[str] = set()
        for index, metric in enumerate(self.config.metrics):
            if any(c.isspace() for c in metric.id):
                self.fail(
                    ("metrics", index, "id"),
                    metric.id,
                    "metric IDs contain no whitespace; write the tag the trainer reports, "
                    "e.g. accuracy or val_loss",
                )
            elif metric.id in seen:
                self.fail(
                    ("metrics", index, "id"),
                    metric.id,
                    "each metric appears once; remove the duplicate",
                )
            seen.add(metric.id)
            metrics.append(Metric(id=metric.id, goal=typing.cast(Any, metric.goal)))
        return metrics

    # -- parameters

    def _parameter(self, path: KeyPath, pid: Any, config: ParameterConfig) -> Parameter | None:
        """One parameter (and its conditional children), or None after an issue."""
        ok = self._check_id(path, pid)
        kind = config.type
        if kind in ("double", "integer"):
            ok = self._check_range(path, config) and ok
        else:
            ok = self._check_no_range(path, config) and ok
        values: list[str | float] = []
        if kind == "categorical":
            values, good = self._categories(path, config.values)
            ok = ok and good
        elif kind == "discrete":
            values, good = self._discrete_values(path, config.values)
            ok = ok and good
        ok = self._check_scale(path, config, values) and ok
        conditionals = self._conditionals(path, config, values)
        if not ok or conditionals is None:
            return None
        return Parameter(
            id=str(pid),
            type=typing.cast(ParameterType, kind),
            min=config.min,
            max=config.max,
            values=values,
            scale=typing.cast(Any, config.scale),
            conditional=conditionals,
        )

    def _check_id(self, path: KeyPath, pid: Any) -> bool:
        if isinstance(pid, str) and pid and not any(c.isspace() for c in pid):
            return True
        self.fail(
            path,
            pid,
            "parameter IDs are text without whitespace (the trial gets --<id>=<value>); "
            "rename it, e.g. learning-rate",
        )
        return False

    def _check_range(self, path: KeyPath, config: ParameterConfig) -> bool:
        ok = True
        for bound in ("min", "max"):
            if getattr(config, bound) is None:
                self.fail(
                    (*path, bound),
                    None,
                    f"a {config.type} parameter needs min and max (inclusive); add {bound}",
                )
                ok = False
        if config.values is not None:
            self.fail(
                (*path, "values"),
                config.values,
                f"values applies to categorical and discrete parameters; a {config.type} "
                "parameter takes min and max: remove values, or write type: discrete",
            )
            ok = False
        if not ok:
            return False
        assert config.min is not None and config.max is not None
        if config.type == "integer":
            for bound in ("min", "max"):
                value = getattr(config, bound)
                if not value.is_integer():
                    self.fail(
                        (*path, bound),
                        value,
                        f"an integer parameter's bounds are whole numbers; write "
                        f"{bound}: {math.floor(value) if bound == 'min' else math.ceil(value)}, "
                        "or write type: double",
                    )
                    ok = False
        if ok and config.min >= config.max:
            self.fail(
                (*path, "max"),
                config.max,
                f"max must be greater than min ({_plain_number(config.min)}); swap them or "
                "widen the range (a single value is not a parameter to tune)",
            )
            ok = False
        return ok

    def _check_no_range(self, path: KeyPath, config: ParameterConfig) -> bool:
        ok = True
        for bound in ("min", "max"):
            if getattr(config, bound) is not None:
                self.fail(
                    (*path, bound),
                    getattr(config, bound),
                    f"min and max apply to double and integer parameters; a {config.type} "
                    "parameter lists its values: remove it",
                )
                ok = False
        if config.values is None:
            example = "[sgd, adam]" if config.type == "categorical" else "[16, 32, 64]"
            self.fail(
                (*path, "values"),
                None,
                f"a {config.type} parameter lists the values to try: add values: {example}",
            )
            ok = False
        return ok

    def _categories(self, path: KeyPath, raw: list[Any] | None) -> tuple[list[str | float], bool]:
        if raw is None:
            return [], False
        texts = [str(_scalar_text(v)) for v in raw]
        ok = True
        for index, text in enumerate(texts):
            if not text:
                self.fail((*path, "values", index), raw[index], "a category must not be empty")
                ok = False
            elif text in texts[:index]:
                self.fail(
                    (*path, "values", index),
                    raw[index],
                    "each value appears once; remove the duplicate",
                )
                ok = False
        return list(texts), ok

    def _discrete_values(
        self, path: KeyPath, raw: list[Any] | None
    ) -> tuple[list[str | float], bool]:
        if raw is None:
            return [], False
        numbers: list[float] = []
        ok = True
        for index, value in enumerate(raw):
            try:
                numbers.append(_number_before(value))
            except PydanticCustomError:
                self.fail(
                    (*path, "values", index),
                    value,
                    "discrete values are numbers; for text values write type: categorical",
                )
                ok = False
        if not ok:
            return [], False
        if len(numbers) > MAX_DISCRETE_VALUES:
            self.fail(
                (*path, "values"),
                len(numbers),
                f"at most {MAX_DISCRETE_VALUES} discrete values; use an integer or double "
                "range instead",
            )
            return [], False
        increasing = all(b - a >= DISCRETE_EPSILON for a, b in itertools.pairwise(numbers))
        if not increasing:
            unique = sorted(set(numbers))
            self.fail(
                (*path, "values"),
                raw,
                "discrete values are listed in increasing order, each once: write "
                f"values: [{', '.join(_plain_number(v) for v in unique)}]",
            )
            return [], False
        return list(numbers), True

    def _check_scale(self, path: KeyPath, config: ParameterConfig, values: list[Any]) -> bool:
        if config.scale is None:
            return True
        if config.type not in SCALED_TYPES:
            self.fail(
                (*path, "scale"),
                config.scale,
                f"scale applies to {_one_of(SCALED_TYPES)} parameters; remove it from this "
                f"{config.type} parameter",
            )
            return False
        if config.scale == "linear":
            return True
        lowest = config.min if config.type != "discrete" else (min(values) if values else None)
        if lowest is not None and lowest <= 0:
            where = "min" if config.type != "discrete" else "values"
            self.fail(
                (*path, where),
                config.min if where == "min" else config.values,
                f"a {config.scale} scale needs every value above zero (the range is scaled "
                "by its logarithm): raise the lowest value above 0, or write scale: linear",
            )
            return False
        return True

    def _conditionals(
        self, path: KeyPath, config: ParameterConfig, values: list[Any]
    ) -> list[Conditional] | None:
        """The conditional parameters; None after an issue."""
        if not config.conditional:
            return []
        if config.type not in CONDITIONAL_PARENT_TYPES:
            self.fail(
                (*path, "conditional"),
                None,
                "conditional parameters hang off categorical, integer or discrete parameters "
                "(Vertex matches the parent's value, and a double has no values to match): "
                "make this parameter discrete, or move the conditional parameters up",
            )
            return None
        result: list[Conditional] = []
        ok = True
        for index, conditional in enumerate(config.conditional):
            where = (*path, "conditional", index)
            when = self._when(where, config, conditional.when, values)
            if not conditional.parameters:
                self.fail(
                    (*where, "parameters"),
                    {},
                    "list the parameters used for these values, or remove this entry",
                )
                ok = False
            children = [
                self._parameter((*where, "parameters", cid), cid, child)
                for cid, child in _by_id(conditional.parameters)
            ]
            if when is None or any(c is None for c in children):
                ok = False
                continue
            result.append(Conditional(when=when, parameters=[c for c in children if c is not None]))
        if not ok:
            return None
        if not self._check_disjoint(path, result):
            return None
        return result

    def _when(
        self, where: KeyPath, parent: ParameterConfig, raw: list[Any], values: list[Any]
    ) -> list[str | float] | None:
        """The parent values a conditional applies to, checked against the parent."""
        ok = True
        matched: list[str | float] = []
        for index, value in enumerate(raw):
            at = (*where, "when", index)
            if parent.type == "categorical":
                text = str(_scalar_text(value))
                if text not in values:
                    hint = _did_you_mean(text, [str(v) for v in values])
                    self.fail(
                        at,
                        value,
                        f"not one of the parent's values ({_one_of(values)}).{hint} Write one "
                        "of those",
                    )
                    ok = False
                matched.append(text)
                continue
            try:
                number = _number_before(value)
            except PydanticCustomError:
                number = None
            if parent.type == "integer":
                low, high = parent.min or 0, parent.max or 0
                if number is None or not number.is_integer() or not low <= number <= high:
                    self.fail(
                        at,
                        value,
                        f"the parent is an integer from {_plain_number(low)} to "
                        f"{_plain_number(high)}: write whole numbers in that range",
                    )
                    ok = False
                    continue
            elif number is None or not any(abs(number - v) <= DISCRETE_EPSILON for v in values):
                self.fail(
                    at,
                    value,
                    f"not one of the parent's values "
                    f"({_one_of([_plain_number(v) for v in values])}); write one of those",
                )
                ok = False
                continue
            matched.append(number)
        return matched if ok else None

    def _check_disjoint(self, path: KeyPath, conditionals: Sequence[Conditional]) -> bool:
        """Children of one parent sharing an ID must apply to disjoint parent values."""
        claimed: dict[str, set[str]] = {}
        ok = True
        for index, conditional in enumerate(conditionals):
            when = {str(v) for v in conditional.when}
            for child in conditional.parameters:
                overlap = claimed.get(child.id, set()) & when
                if overlap:
                    self.fail(
                        (*path, "conditional", index, "parameters", child.id),
                        None,
                        f"{child.id} is already used for parent value(s) "
                        f"{_one_of(sorted(overlap), 'and')}; one parameter ID applies to "
                        "each parent value once: remove those values from one of the `when`s",
                    )
                    ok = False
                claimed.setdefault(child.id, set()).update(when)
        return ok

    def _check_unique_ids(self, parameters: Sequence[Parameter]) -> None:
        """Parameter IDs are unique across the study, but for siblings of one parent."""
        owner: dict[str, tuple[KeyPath, int]] = {}

        def visit(params: Sequence[Parameter], base: KeyPath, parent: int) -> None:
            for param in params:
                where = (*base, param.id)
                seen = owner.get(param.id)
                if seen is not None and seen[1] != parent:
                    self.fail(
                        where,
                        None,
                        f"parameter {param.id} is also declared at "
                        f"{_key(self.base, seen[0])}; parameter IDs are unique in a study: "
                        "rename one",
                    )
                owner.setdefault(param.id, (where, parent))
                for index, conditional in enumerate(param.conditional):
                    visit(
                        conditional.parameters,
                        (*where, "conditional", index, "parameters"),
                        id(param),
                    )

        visit(parameters, ("parameters",), 0)

    def _check_grid(self, path: KeyPath, configs: Mapping[Any, ParameterConfig]) -> None:
        for pid, config in configs.items():
            where = (*path, pid)
            if config.type not in GRID_TYPES:
                self.fail(
                    (*where, "type"),
                    config.type,
                    "grid search takes integer, categorical and discrete parameters only; "
                    "write type: discrete with the values to try, or algorithm: random",
                )
            for index, conditional in enumerate(config.conditional or []):
                self._check_grid(
                    (*where, "conditional", index, "parameters"), conditional.parameters
                )

    # -- early stopping

    def _early_stopping(self, parameters: Sequence[Parameter]) -> EarlyStopping | None:
        config = self.config.early_stopping
        if config is None:
            return None
        chosen = [rule for rule in EARLY_STOPPING_RULES if getattr(config, rule) is not None]
        if len(chosen) != 1:
            self.fail(
                ("early_stopping",),
                config.model_dump(exclude_unset=True),
                f"set exactly one rule: {_one_of(EARLY_STOPPING_RULES)}"
                + ("" if chosen else "; or remove early_stopping"),
            )
            return None
        (rule,) = chosen
        settings = getattr(config, rule)
        if isinstance(settings, ConvexConfig):
            return self._convex(settings, parameters)
        return EarlyStopping(
            rule=typing.cast(Any, rule), use_elapsed_duration=settings.use_elapsed_duration
        )

    def _convex(
        self, config: ConvexConfig, parameters: Sequence[Parameter]
    ) -> EarlyStopping | None:
        path = ("early_stopping", "convex")
        ok = True
        if (
            config.min_step_count is not None
            and config.max_step_count is not None
            and config.min_step_count > config.max_step_count
        ):
            self.fail(
                (*path, "min_step_count"),
                config.min_step_count,
                f"more than max_step_count ({config.max_step_count}); lower it or raise "
                "max_step_count",
            )
            ok = False
        name = config.learning_rate_parameter_name
        ids = _all_ids(parameters)
        if name is not None and name not in ids:
            hint = _did_you_mean(name, ids)
            self.fail(
                (*path, "learning_rate_parameter_name"),
                name,
                f"names no parameter of this study.{hint} Write the ID of the learning rate "
                "parameter, or remove the key",
            )
            ok = False
        if not ok:
            return None
        return EarlyStopping(rule="convex", **config.model_dump())


def _by_id(parameters: Mapping[Any, ParameterConfig]) -> list[tuple[Any, ParameterConfig]]:
    """A mapping of parameters in ID order. The engine hands a provider the stack config
    with its mappings in no fixed order, so the request cannot follow the order they were
    written in: sorted, the same config always gives the same request."""
    return sorted(parameters.items(), key=lambda item: str(item[0]))


def _all_ids(parameters: Sequence[Parameter]) -> list[str]:
    ids: list[str] = []
    for param in parameters:
        ids.append(param.id)
        for conditional in param.conditional:
            ids.extend(_all_ids(conditional.parameters))
    return ids


def _plain_number(value: float) -> str:
    """1.0 -> '1', 0.5 -> '0.5'."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# ------------------------------------------------------------------------ the public API


def parse_study(raw: Any, base: str) -> tuple[Study | None, list[Issue]]:
    """Validate a job's ``study:`` block; ``base`` is its full stack config key.

    Returns the study, or None with every issue found.
    """
    if not isinstance(raw, Mapping):
        return None, [
            Issue(
                base,
                raw,
                "must be a mapping with metrics, parameters and max_trials; see "
                "docs/config-shape.md",
            )
        ]
    try:
        config = StudyConfig.model_validate(dict(raw))
    except ValidationError as exc:
        return None, _issues_from(exc, base, StudyConfig)
    resolver = _StudyResolver(raw, config, base)
    return resolver.resolve(), resolver.issues
