"""``StudyTranslator``: the legacy ``hyperparameters`` block -> the native ``study:`` block
(metric and goal, parameters, algorithm, early stopping, trial counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.stackconfig.legacy._context import Path, TranslationContext
from vertex_training.stackconfig.legacy._tables import (
    ALGORITHMS,
    DEFAULT_GOAL,
    DEFAULT_MAX_TRIALS,
    DEFAULT_METRIC_TAG,
    DEFAULT_PARALLEL_TRIALS,
    GOALS,
    HYPERPARAMETER_KEYS,
    PARAMETER_KEYS,
    PARAMETER_TYPES,
    SCALE_TYPES,
)
from vertex_training.stackconfig.legacy._translation import _one_of


class StudyTranslator:
    """Reads ``hyperparameters`` into the native ``study:`` keys (docs/config-shape.md)."""

    def __init__(self, context: TranslationContext) -> None:
        self.context = context

    def translate(self, value: Any) -> dict[str, Any] | None:
        """hyperparameters -> the native ``study:`` block (docs/config-shape.md)."""
        if value is None:
            return None
        base: Path = ("hyperparameters",)
        spec = self.context.block(base, value, HYPERPARAMETER_KEYS)
        if not spec:
            return None
        self.context.came_from("study", base)
        if spec.get("resumePreviousJobId") is not None:
            self.context.refuse(
                (*base, "resumePreviousJobId"),
                spec["resumePreviousJobId"],
                "a Vertex AI tuning job cannot continue a legacy AI Platform study: remove "
                "resumePreviousJobId (the tuning job starts a new study)",
            )
        goal = spec.get("goal", DEFAULT_GOAL)
        if goal not in GOALS:
            self.context.refuse((*base, "goal"), goal, f"must be {_one_of(GOALS)}")
        metric = self.context.text(
            (*base, "hyperparameterMetricTag"), spec.get("hyperparameterMetricTag")
        )
        study: dict[str, Any] = {
            "metrics": [{"id": metric or DEFAULT_METRIC_TAG, "goal": goal}],
            "parameters": self._parameters((*base, "params"), spec.get("params")),
        }
        self.context.came_from("study.metrics", (*base, "hyperparameterMetricTag"))
        algorithm = spec.get("algorithm")
        if algorithm is not None:
            if algorithm in ALGORITHMS:
                if ALGORITHMS[algorithm] != "default":
                    study["algorithm"] = ALGORITHMS[algorithm]
                    self.context.came_from("study.algorithm", (*base, "algorithm"))
            else:
                self.context.refuse(
                    (*base, "algorithm"), algorithm, f"must be {_one_of(list(ALGORITHMS))}"
                )
        if self.context.flag(
            (*base, "enableTrialEarlyStopping"), spec.get("enableTrialEarlyStopping")
        ):
            study["early_stopping"] = {"decay_curve": {"use_elapsed_duration": False}}
            self.context.came_from("study.early_stopping", (*base, "enableTrialEarlyStopping"))
        for legacy, native_key, default in (
            ("maxTrials", "max_trials", DEFAULT_MAX_TRIALS),
            ("maxParallelTrials", "parallel_trials", DEFAULT_PARALLEL_TRIALS),
            ("maxFailedTrials", "max_failed_trials", None),
        ):
            number = self.context.count((*base, legacy), spec.get(legacy))
            if number is None:
                number = default
            if number is not None:
                study[native_key] = number
                self.context.came_from(f"study.{native_key}", (*base, legacy))
        return study

    def _parameters(self, path: Path, value: Any) -> dict[str, Any]:
        if not isinstance(value, list) or not value:
            self.context.refuse(path, value, "list the parameters to tune (at least one)")
            return {}
        parameters: dict[str, Any] = {}
        for index, item in enumerate(value):
            item_path: Path = (*path, index)
            spec = self.context.block(item_path, item, PARAMETER_KEYS)
            name = self.context.text((*item_path, "parameterName"), spec.get("parameterName"))
            if name is None:
                if "parameterName" not in spec:
                    self.context.refuse(
                        (*item_path, "parameterName"), None, "each parameter needs parameterName"
                    )
                continue
            if name in parameters:
                self.context.refuse(
                    (*item_path, "parameterName"), name, "appears twice: parameter names are unique"
                )
                continue
            parameter = self._parameter(item_path, spec)
            if parameter is not None:
                parameters[name] = parameter
                self.context.came_from(f"study.parameters.{name}", item_path)
        return parameters

    def _parameter(self, path: Path, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        legacy_type: Any = spec.get("type")  # user data: checked against PARAMETER_TYPES
        if legacy_type not in PARAMETER_TYPES:
            self.context.refuse(
                (*path, "type"), legacy_type, f"must be {_one_of(list(PARAMETER_TYPES))}"
            )
            return None
        kind = PARAMETER_TYPES[legacy_type]
        parameter: dict[str, Any] = {"type": kind}
        if kind in ("double", "integer"):
            for legacy, native_key in (("minValue", "min"), ("maxValue", "max")):
                if spec.get(legacy) is None:
                    self.context.refuse(
                        (*path, legacy), None, f"a {legacy_type} parameter needs {legacy}"
                    )
                    return None
                parameter[native_key] = spec[legacy]
        else:
            values_key = "categoricalValues" if kind == "categorical" else "discreteValues"
            values = spec.get(values_key)
            if not isinstance(values, list) or not values:
                self.context.refuse(
                    (*path, values_key), values, f"a {legacy_type} parameter lists {values_key}"
                )
                return None
            parameter["values"] = list(values)
        scale_type = spec.get("scaleType")
        if scale_type is not None:
            if scale_type not in SCALE_TYPES:
                self.context.refuse(
                    (*path, "scaleType"), scale_type, f"must be {_one_of(list(SCALE_TYPES))}"
                )
            elif kind == "categorical":
                if SCALE_TYPES[scale_type] is not None:
                    self.context.warn(
                        (*path, "scaleType"),
                        scale_type,
                        "categorical parameters have no scale on Vertex AI: scaleType is not used",
                    )
            elif SCALE_TYPES[scale_type] is not None:
                parameter["scale"] = SCALE_TYPES[scale_type]
        return parameter
