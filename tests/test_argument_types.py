"""The typed arguments' value types against the models that define the keys.

``resources.arguments`` is written by hand beside the models of ``stackconfig`` (tests/
test_library.py compares their keys and required keys). Here each key's type is compared
too: the model's annotation, read as a program writes the value (a list as a Sequence, a
nested model as its typed dictionary), is the argument's, Pulumi's ``Input`` aside. Where
the two differ on purpose, ``DIFFERENCES`` says why: what a key accepts before its
model's validators turn it into what the model holds, which the annotations alone do not
say (and why the typed arguments are not generated from the models).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Annotated, Any, Union

import pytest
from pydantic import BaseModel

from vertex_training.plugin import job_keys, shapes
from vertex_training.resources import arguments
from vertex_training.stackconfig._config import DiskConfig

#: The typed dictionary of each model.
ARGUMENTS = {model: typed for typed, model in job_keys.MODELS.items()}

_DURATION = "a duration: text (`2h`) or seconds; the model holds seconds (_duration_before)"
_CHOICE = "one of the study's choices: the model takes text and checks it (_choice)"
_SCALARS = "text or numbers: the model takes any scalars and checks them (_scalars_before)"
_SECRET = (
    "a stack file's value may be a {secure: ...} secret (SecretValue); a program's is a "
    "secret Output"
)
_AFFINITY = "also a type alone (ANY_RESERVATION) as shorthand, read by _affinity_before"

#: (typed dictionary, key) -> why the argument's type is not the model's.
DIFFERENCES: dict[tuple[str, str], str] = {
    ("TrainingJobArgs", "env"): _SECRET,
    ("PoolArgs", "env"): _SECRET,
    ("TrainingJobArgs", "reservation_affinity"): _AFFINITY,
    ("PoolArgs", "reservation_affinity"): _AFFINITY,
    ("TrainingJobArgs", "wait"): "also the state alone (succeeded) as shorthand (_wait_before)",
    ("TrainingJobArgs", "rerun"): "text or a number: the model holds text (_rerun_before)",
    ("TrainingJobArgs", "study"): "the model takes any value: stackconfig.study validates it",
    ("SchedulingArgs", "timeout"): _DURATION,
    ("SchedulingArgs", "max_wait_duration"): _DURATION,
    ("WaitArgs", "timeout"): _DURATION,
    ("WaitArgs", "start_timeout"): _DURATION,
    ("StudyArgs", "algorithm"): _CHOICE,
    ("StudyArgs", "measurement_selection"): _CHOICE,
    ("StudyMetricArgs", "goal"): _CHOICE,
    ("StudyParameterArgs", "type"): _CHOICE,
    ("StudyParameterArgs", "scale"): _CHOICE,
    ("StudyParameterArgs", "values"): _SCALARS,
    ("ConditionalParametersArgs", "when"): _SCALARS,
}


def as_argument(annotation: Any) -> Any:
    """A model's annotation as a program writes the value: validators and ``None`` left
    out, a list a Sequence, a dict a Mapping (any key: text), a model its typed dictionary."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return as_argument(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members = [as_argument(m) for m in typing.get_args(annotation) if m is not type(None)]
        unique = list(dict.fromkeys(members))
        # Union[...] of computed members: the `X | Y` form takes no tuple.
        return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007
    if origin is list:
        return collections.abc.Sequence[as_argument(typing.get_args(annotation)[0])]
    if origin is dict:
        key, value = typing.get_args(annotation)
        return collections.abc.Mapping[str if key is Any else key, as_argument(value)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ARGUMENTS.get(annotation, annotation)
    return annotation


def plain_deep(annotation: Any) -> Any:
    """An argument's annotation without Pulumi's ``Input`` at any depth."""
    annotation = shapes.plain(annotation)
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        members = [plain_deep(m) for m in typing.get_args(annotation)]
        unique = list(dict.fromkeys(members))
        return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007
    if origin is collections.abc.Sequence:
        return collections.abc.Sequence[plain_deep(typing.get_args(annotation)[0])]
    if origin is collections.abc.Mapping:
        key, value = typing.get_args(annotation)
        return collections.abc.Mapping[key, plain_deep(value)]
    return annotation


def keys() -> list[tuple[str, str, Any, Any]]:
    """(typed dictionary, key, the argument's type, the model's as an argument)."""
    return [
        (
            typed.__name__,
            name,
            plain_deep(typed.__annotations__[name]),
            as_argument(model.model_fields[name].annotation),
        )
        for typed, model in job_keys.MODELS.items()
        for name in shapes.fields(typed)
    ]


class TestArgumentTypes:
    """A key's argument type is its model's, or differs for a reason written down."""

    @pytest.mark.parametrize(
        ("typed", "name", "argument", "model"), keys(), ids=[f"{k[0]}.{k[1]}" for k in keys()]
    )
    def test_the_type_is_the_models(self, typed: str, name: str, argument: Any, model: Any) -> None:
        """The argument's type is the model's, unless DIFFERENCES says why not."""
        if (typed, name) not in DIFFERENCES:
            assert argument == model, f"{typed}.{name}: {argument} against the model's {model}"

    def test_each_difference_is_one(self) -> None:
        """A listed difference is still one (drop it from DIFFERENCES once it is not)."""
        differing = {(typed, name) for typed, name, argument, model in keys() if argument != model}
        assert set(DIFFERENCES) <= differing

    def test_the_check_can_fail(self) -> None:
        """A key typed other than its model is seen (the comparison above can fail)."""
        size = plain_deep(arguments.DiskArgs.__annotations__["size_gb"])
        assert size == as_argument(DiskConfig.model_fields["size_gb"].annotation)
        assert size != as_argument(DiskConfig.model_fields["type"].annotation)
