"""A well-formed ``study:`` block -> ``Study``, checking every rule of study.proto;
``parse_study`` is the dialect's entry, called by ``vertex_training.stackconfig``'s ``parse_job``.
"""

from __future__ import annotations

import itertools
import math
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from vertex_training.errors import Issue
from vertex_training.stackconfig._issues import did_you_mean, full_key, issues_from, one_of
from vertex_training.stackconfig._rules import _scalar_text
from vertex_training.stackconfig.study._config import (
    CONDITIONAL_PARENT_TYPES,
    DISCRETE_EPSILON,
    EARLY_STOPPING_RULES,
    GRID_TYPES,
    MAX_DISCRETE_VALUES,
    SCALED_TYPES,
    ConvexConfig,
    ParameterConfig,
    StudyConfig,
    _number_before,
)
from vertex_training.stackconfig.study._job import (
    Conditional,
    EarlyStopping,
    Metric,
    Parameter,
    Study,
)

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
        self.issues.append(Issue(full_key(self.base, path), written, message))

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
            type=kind,
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
                f"scale applies to {one_of(SCALED_TYPES)} parameters; remove it from this "
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
                    hint = did_you_mean(text, [str(v) for v in values])
                    self.fail(
                        at,
                        value,
                        f"not one of the parent's values ({one_of(values)}).{hint} Write one "
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
                    f"({one_of([_plain_number(v) for v in values])}); write one of those",
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
                        f"{one_of(sorted(overlap), 'and')}; one parameter ID applies to "
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
                        f"{full_key(self.base, seen[0])}; parameter IDs are unique in a study: "
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
                f"set exactly one rule: {one_of(EARLY_STOPPING_RULES)}"
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
            hint = did_you_mean(name, ids)
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
        return None, issues_from(exc, base, StudyConfig)
    resolver = _StudyResolver(raw, config, base)
    return resolver.resolve(), resolver.issues
