"""The ``study:`` block as the user writes it: pydantic models key for key
(``extra="forbid"``), and the values its keys take (``_kind.is_tuning_job`` says whether a
job has one).
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from vertex_training.stackconfig._config import _ConfigModel
from vertex_training.stackconfig._constants import (
    Algorithm,
    Goal,
    MeasurementSelection,
    ParameterType,
    Scale,
)
from vertex_training.stackconfig._issues import invalid
from vertex_training.stackconfig._rules import NonEmptyText, _choice

GOALS: tuple[Goal, ...] = typing.get_args(Goal)
PARAMETER_TYPES: tuple[ParameterType, ...] = typing.get_args(ParameterType)
SCALES: tuple[Scale, ...] = typing.get_args(Scale)
ALGORITHMS: tuple[Algorithm, ...] = typing.get_args(Algorithm)
MEASUREMENT_SELECTIONS: tuple[MeasurementSelection, ...] = typing.get_args(MeasurementSelection)
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


def _number_before(value: Any) -> Any:
    """A number (YAML may read 1e-3 as text: accept that too); never true/false."""
    if isinstance(value, bool):
        raise invalid("must be a number, not true or false")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise invalid("must be a finite number")
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise invalid("must be a number, like 0.001 or 10") from None
        if math.isfinite(number):
            return number
    raise invalid("must be a number, like 0.001 or 10")


def _scalars_before(value: Any) -> Any:
    """A non-empty list of YAML scalars (text, numbers, booleans)."""
    if not isinstance(value, list | tuple):
        raise invalid("must be a list, like [a, b]")
    if not value:
        raise invalid("must list at least one value")
    for index, item in enumerate(value):
        if not isinstance(item, str | int | float | bool):
            raise invalid(
                "must be a list of values (text or numbers)",
                [((index,), item, "must be a single value (text or a number)")],
            )
    return list(value)


def _null_is_empty(value: Any) -> Any:
    """``decay_curve:`` with nothing after it means the rule with its defaults."""
    return {} if value is None else value


Number = Annotated[float, BeforeValidator(_number_before)]
Scalars = Annotated[
    list[Any], BeforeValidator(_scalars_before, json_schema_input_type=list[str | float])
]


class MetricConfig(_ConfigModel):
    """``{id: accuracy, goal: MAXIMIZE}``: a metric the trials report, and its goal."""

    id: NonEmptyText = Field(
        description=(
            "the tag the trainer reports the metric with (`cloudml-hypertune`): no "
            "whitespace, each once"
        )
    )
    goal: Annotated[Goal, BeforeValidator(_choice(GOALS))] = Field(
        description="`MAXIMIZE` or `MINIMIZE`"
    )


# ``{when: [adam], parameters: {beta1: {...}}}``: parameters used for these parent values.
class ConditionalConfig(_ConfigModel):
    """``{when: [adam], parameters: {beta1: {...}}}``: parameters tuned only when their
    parent takes one of the ``when`` values."""

    when: Scalars = Field(
        description=(
            "the parent's values that tune these parameters: a categorical parent's values,"
            " an integer parent's whole numbers in its range, or some of a discrete "
            "parent's values"
        )
    )
    parameters: dict[Any, ParameterConfig] = Field(
        description=(
            "the parameters tuned then, by parameter ID, as the study's `parameters` (a "
            "parent may reuse a child ID for disjoint `when`s)"
        )
    )


# One parameter to tune; which keys apply depends on ``type``.
class ParameterConfig(_ConfigModel):
    """A parameter to tune: ``double`` and ``integer`` take ``min`` and ``max``,
    ``categorical`` (text) and ``discrete`` (numbers) take ``values``."""

    type: Annotated[ParameterType, BeforeValidator(_choice(PARAMETER_TYPES))] = Field(
        description="`double`, `integer`, `categorical` or `discrete`"
    )
    min: Number | None = Field(
        None,
        description=(
            "the lower end of a `double` or `integer` parameter's range: inclusive, below "
            "`max`, a whole number for an integer"
        ),
    )
    max: Number | None = Field(
        None,
        description=(
            "the upper end of a `double` or `integer` parameter's range: inclusive, above "
            "`min`, a whole number for an integer"
        ),
    )
    values: Scalars | None = Field(
        None,
        description=(
            "the values of a `categorical` parameter (text) or of a `discrete` one "
            "(numbers, increasing, at most 1000)"
        ),
    )
    scale: Annotated[Scale | None, BeforeValidator(_choice(SCALES))] = Field(
        None,
        description=(
            "`linear`, `log` or `reverse_log`, for double, integer and discrete parameters "
            "only; the log scales need every value above zero. Unset: Vertex's default (no "
            "scaling)."
        ),
    )
    conditional: list[ConditionalConfig] | None = Field(
        None,
        description=(
            "a list of `{when, parameters}`: those parameters are tuned only when the "
            "parent takes one of the `when` values. The parent is categorical (`when` lists"
            " its values), integer (whole numbers in its range) or discrete (some of its "
            "values). IDs are unique in a study, except that one parent may reuse a child "
            "ID for disjoint `when`s."
        ),
    )


class DecayCurveConfig(_ConfigModel):
    """``early_stopping.decay_curve``."""

    use_elapsed_duration: bool = Field(
        False,
        description="draw each trial's decay curve by elapsed time, not steps; default false",
    )


class MedianConfig(_ConfigModel):
    """``early_stopping.median``."""

    use_elapsed_duration: bool = Field(
        False,
        description=(
            "compare trials at the same elapsed time rather than the same step; default false"
        ),
    )


# ``early_stopping.convex`` (study.proto ConvexAutomatedStoppingSpec).
class ConvexConfig(_ConfigModel):
    """``early_stopping.convex``."""

    max_step_count: int | None = Field(
        None,
        ge=0,
        description=(
            "the step a stopped trial's final objective is predicted at (as in training); "
            "unset: learnt from the completed trials"
        ),
    )
    min_step_count: int | None = Field(
        None,
        ge=0,
        description=(
            "a trial is considered for stopping only once it reports a measurement past this step"
        ),
    )
    min_measurement_count: int | None = Field(
        None,
        ge=0,
        description="the measurements a trial reports before it is considered for stopping",
    )
    learning_rate_parameter_name: NonEmptyText | None = Field(
        None,
        description=(
            "the parameter that is the learning rate, used to estimate an ongoing trial's "
            "objective; unset when no parameter is"
        ),
    )
    use_elapsed_duration: bool = Field(
        False, description="apply the rule by elapsed time rather than steps; default false"
    )
    update_all_stopped_trials: bool | None = Field(
        None,
        description=(
            "update the final measurement of every stopped trial, not only of those stopped now"
        ),
    )


class EarlyStoppingConfig(_ConfigModel):
    """``early_stopping``: at most one rule that stops unpromising trials early."""

    decay_curve: Annotated[DecayCurveConfig | None, BeforeValidator(_null_is_empty)] = Field(
        None,
        description=(
            "stop a trial whose decay curve predicts it will not beat the best: "
            "`{use_elapsed_duration}`"
        ),
    )
    median: Annotated[MedianConfig | None, BeforeValidator(_null_is_empty)] = Field(
        None, description="stop a trial below the median of the others: `{use_elapsed_duration}`"
    )
    convex: Annotated[ConvexConfig | None, BeforeValidator(_null_is_empty)] = Field(
        None,
        description=(
            "Vertex's convex automated stopping: `{max_step_count, min_step_count, "
            "min_measurement_count, learning_rate_parameter_name, use_elapsed_duration, "
            "update_all_stopped_trials}`"
        ),
    )


class StudyConfig(_ConfigModel):
    """``study``: what a hyperparameter tuning job tunes, towards which metric, and how
    many trials it runs (docs/tuning.md)."""

    metrics: list[MetricConfig] = Field(
        description=(
            "one or more `{id, goal}`; `goal` is `MAXIMIZE` or `MINIMIZE`; `id` is the tag "
            "the trainer reports with `cloudml-hypertune` (no whitespace, each once). The "
            "first metric ranks the trials (`best_trial`)."
        )
    )
    parameters: dict[Any, ParameterConfig] = Field(
        description=(
            "by parameter ID (no whitespace; each trial gets `--<id>=<value>` appended to "
            "its args). They are sent, and appended, in ID order: Pulumi keeps no order of "
            "a mapping's keys, so the order they are written in cannot be kept. `type: "
            "double` or `integer` take `min` and `max` (inclusive, `min` < `max`; whole "
            "numbers for integers); `categorical` takes `values` (text); `discrete` takes "
            "`values` (numbers, increasing, at most 1000)."
        )
    )
    algorithm: Annotated[Algorithm, BeforeValidator(_choice(ALGORITHMS))] = Field(
        "default",
        description=(
            "`default` (Vertex's own search), `grid` (integer, categorical and discrete "
            "parameters only) or `random`"
        ),
    )
    measurement_selection: Annotated[
        MeasurementSelection | None, BeforeValidator(_choice(MEASUREMENT_SELECTIONS))
    ] = Field(None, description="`best` or `last` (Vertex's default) reported value of each trial")
    early_stopping: EarlyStoppingConfig | None = Field(
        None,
        description=(
            "at most one of `decay_curve: {use_elapsed_duration}`, `median: "
            "{use_elapsed_duration}`, `convex: {max_step_count, min_step_count, "
            "min_measurement_count, learning_rate_parameter_name, use_elapsed_duration, "
            "update_all_stopped_trials}`"
        ),
    )
    max_trials: int = Field(ge=1, description="how many trials run in all: at least 1 (required)")
    parallel_trials: int = Field(
        1, ge=1, description="how many trials run at once: default 1, at most `max_trials`"
    )
    max_failed_trials: int = Field(
        0, ge=0, description="how many failed trials fail the job; default 0: Vertex decides"
    )


ConditionalConfig.model_rebuild()


ParameterValue = Annotated[str | float, Field(union_mode="left_to_right")]
