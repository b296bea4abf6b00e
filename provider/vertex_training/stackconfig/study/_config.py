"""The ``study:`` block as the user writes it: pydantic models key for key
(``extra="forbid"``), and the values its keys take (``_kind.is_tuning_job`` says whether a
job has one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from vertex_training.stackconfig._config import _ConfigModel
from vertex_training.stackconfig._issues import invalid
from vertex_training.stackconfig._rules import NonEmptyText, _choice

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
Scalars = Annotated[list[Any], BeforeValidator(_scalars_before)]


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


ParameterType = Literal["double", "integer", "categorical", "discrete"]
ParameterValue = Annotated[str | float, Field(union_mode="left_to_right")]
