"""Trial parameters for a StudySpec: grid enumeration and random search.

Shared by the local backend (which runs real studies) and the fake Vertex service (which
pretends to). Both read the study as Vertex receives it, the REST ``StudySpec`` JSON that
``vertex_training.stackconfig.study`` renders (camelCase; int64 values as strings).

- ``GRID_SEARCH`` enumerates every combination of the parameters' values (integer ranges,
  categorical and discrete values; a conditional parameter only where its parent takes
  one of its values), the first parameter varying slowest. The study ends when the grid
  is exhausted, as Vizier's does ("the service exhausts the parameter search space",
  study.proto Study.State.COMPLETED).
- ``RANDOM_SEARCH`` draws each parameter independently: doubles uniformly on their scale
  (``UNIT_LOG_SCALE``: uniform in log space; ``UNIT_REVERSE_LOG_SCALE``: mirrored, so
  values crowd the top of the range), integers likewise then rounded, categorical and
  discrete values uniformly. A point already suggested is redrawn (up to
  ``RANDOM_REDRAWS`` times), so small search spaces are covered before repeating.
- ``ALGORITHM_UNSPECIFIED`` (Vertex's default, a Bayesian optimization that is not
  published) is random search here.

Values: integer parameters give ``int``, double and discrete ``float``, categorical
``str``. A trial receives them as ``--<parameter id>=<value>`` (``trial_args``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["RANDOM_REDRAWS", "Suggester", "format_value", "trial_args", "unit_position"]

#: How often random search redraws a point it already suggested before accepting it.
RANDOM_REDRAWS = 100
GRID_SEARCH = "GRID_SEARCH"
LOG = "UNIT_LOG_SCALE"
REVERSE_LOG = "UNIT_REVERSE_LOG_SCALE"

Value = int | float | str
Point = dict[str, Value]


def format_value(value: Value) -> str:
    """A parameter value as a command-line argument: 3, 0.01, 16 (a whole float), adam."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def trial_args(parameters: Mapping[str, Value]) -> list[str]:
    """``--<id>=<value>`` for each parameter, as Vertex appends them to a trial's args."""
    return [f"--{pid}={format_value(value)}" for pid, value in parameters.items()]


def unit_position(spec: Mapping[str, Any], value: Value) -> float:
    """Where ``value`` sits in its parameter's feasible space, from 0 to 1.

    On the parameter's scale for doubles and integers (a log-scaled 0.01 in [0.001, 0.1] is
    at 0.5); the index among the values, over their count minus one, for categorical and
    discrete parameters (0.5 when there is one value).
    """
    if "categoricalValueSpec" in spec or "discreteValueSpec" in spec:
        values = _choices(spec)
        if len(values) < 2:
            return 0.5
        index = min(range(len(values)), key=lambda i: _distance(values[i], value))
        return index / (len(values) - 1)
    low, high = _bounds(spec)
    if high == low:
        return 0.5
    number = float(value)
    if spec.get("scaleType") in (LOG, REVERSE_LOG) and low > 0:
        position = (math.log(number) - math.log(low)) / (math.log(high) - math.log(low))
        return 1 - position if spec.get("scaleType") == REVERSE_LOG else position
    return (number - low) / (high - low)


class Suggester:
    """Suggests trial parameters for one study, one point at a time.

    ``seed`` makes random search reproducible (the fake seeds it from the job, the local
    backend from the job's ID).
    """

    def __init__(self, study_spec: Mapping[str, Any], seed: int | str = 0) -> None:
        self.parameters: list[Mapping[str, Any]] = list(study_spec.get("parameters") or [])
        self.grid = study_spec.get("algorithm") == GRID_SEARCH
        self._rng = random.Random(str(seed))
        self._grid = _grid(self.parameters) if self.grid else None
        self._seen: set[tuple[tuple[str, str], ...]] = set()

    def suggest(self) -> Point | None:
        """The next point to try; None once a grid is exhausted (random never is)."""
        if self._grid is not None:
            return next(self._grid, None)
        point = self._draw()
        for _ in range(RANDOM_REDRAWS):
            if _identity(point) not in self._seen:
                break
            point = self._draw()
        self._seen.add(_identity(point))
        return point

    def _draw(self) -> Point:
        point: Point = {}
        for spec in self.parameters:
            point.update(self._draw_parameter(spec))
        return point

    def _draw_parameter(self, spec: Mapping[str, Any]) -> Point:
        pid = spec["parameterId"]
        if "categoricalValueSpec" in spec or "discreteValueSpec" in spec:
            value: Value = self._rng.choice(_choices(spec))
        else:
            low, high = _bounds(spec)
            integer = "integerValueSpec" in spec
            value = self._draw_number(spec.get("scaleType"), low, high + 1 if integer else high)
            if integer:
                value = min(math.floor(value), int(high))
        point: Point = {pid: value}
        for child in _active_children(spec, value):
            point.update(self._draw_parameter(child))
        return point

    def _draw_number(self, scale: str | None, low: float, high: float) -> float:
        if scale in (LOG, REVERSE_LOG) and low > 0:
            drawn = math.exp(self._rng.uniform(math.log(low), math.log(high)))
            return low + high - drawn if scale == REVERSE_LOG else drawn
        return self._rng.uniform(low, high)


def _grid(parameters: Sequence[Mapping[str, Any]]) -> Iterator[Point]:
    """Every combination of the parameters' values, lazily; the first varies slowest."""
    if not parameters:
        yield {}
        return
    first, rest = parameters[0], parameters[1:]
    for head in _grid_points(first):
        for tail in _grid(rest):
            yield {**head, **tail}


def _grid_points(spec: Mapping[str, Any]) -> Iterator[Point]:
    """The values of one parameter, each with every combination of its active children."""
    pid = spec["parameterId"]
    if "integerValueSpec" in spec:
        low, high = _bounds(spec)
        values: Sequence[Value] = range(int(low), int(high) + 1)
    elif "categoricalValueSpec" in spec or "discreteValueSpec" in spec:
        values = _choices(spec)
    else:
        raise ValueError(
            f"grid search cannot enumerate double parameter {pid!r} (study.proto: grid search "
            "takes INTEGER, CATEGORICAL and DISCRETE parameters)"
        )
    for value in values:
        for children in _grid(_active_children(spec, value)):
            yield {pid: value, **children}


def _bounds(spec: Mapping[str, Any]) -> tuple[float, float]:
    values = spec.get("doubleValueSpec") or spec.get("integerValueSpec") or {}
    return float(values.get("minValue", 0)), float(values.get("maxValue", 0))


def _choices(spec: Mapping[str, Any]) -> list[Value]:
    if "categoricalValueSpec" in spec:
        return [str(v) for v in spec["categoricalValueSpec"].get("values") or []]
    return [float(v) for v in spec["discreteValueSpec"].get("values") or []]


def _active_children(spec: Mapping[str, Any], value: Value) -> list[Mapping[str, Any]]:
    """The conditional parameter specs whose parent condition ``value`` meets."""
    active = []
    for conditional in spec.get("conditionalParameterSpecs") or []:
        if "parentCategoricalValues" in conditional:
            matches = str(value) in conditional["parentCategoricalValues"].get("values", [])
        elif "parentIntValues" in conditional:
            allowed = conditional["parentIntValues"].get("values", [])
            matches = int(value) in {int(v) for v in allowed}
        else:
            allowed = conditional.get("parentDiscreteValues", {}).get("values", [])
            matches = any(_distance(float(v), value) <= 1e-10 for v in allowed)
        if matches:
            active.append(conditional["parameterSpec"])
    return active


def _distance(a: Value, b: Value) -> float:
    if isinstance(a, str) or isinstance(b, str):
        return 0.0 if str(a) == str(b) else math.inf
    return abs(float(a) - float(b))


def _identity(point: Point) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, format_value(v)) for k, v in point.items()))
