"""The typed arguments' value types against the models that define the keys.

``resources.arguments`` is written by hand beside the models of ``stackconfig`` (tests/
test_library.py compares their keys and required keys). Here each key's type is compared
too, with no key excepted: the model's annotation, read as a program writes the value (what
a mark or a validator's ``json_schema_input_type`` declares it takes, a list as a
Sequence, a nested model as its typed dictionary), is the argument's, Pulumi's ``Input``
aside.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Annotated, Any, Union

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from vertex_training.plugin import job_keys, shapes
from vertex_training.resources import arguments
from vertex_training.stackconfig._arguments import Takes
from vertex_training.stackconfig._config import DiskConfig

#: The typed dictionary of each model.
ARGUMENTS = {model: typed for typed, model in job_keys.MODELS.items()}
#: A model by its class name (what ``Takes`` names).
BY_NAME = {model.__name__: model for model in ARGUMENTS}


def written_type(metadata: list[Any]) -> Any:
    """What a program writes, as a mark or a validator says (``PydanticUndefined``: the
    model's own type)."""
    for mark in metadata:
        if isinstance(mark, Takes):
            return BY_NAME[mark.model]
        given = getattr(mark, "json_schema_input_type", PydanticUndefined)
        if given is not PydanticUndefined:
            return given
    return PydanticUndefined


def as_argument(annotation: Any) -> Any:
    """A model's annotation as a program writes the value: the type a mark or validator
    declares, ``None`` left out, a list a Sequence, a dict a Mapping (any key: text), a
    model its typed dictionary."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = typing.get_args(annotation)
        given = written_type(metadata)
        return as_argument(inner if given is PydanticUndefined else given)
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


def model_type(model: type[BaseModel], name: str) -> Any:
    """A field's type as a program writes it, the marks pydantic took off it included."""
    info = model.model_fields[name]
    kind = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    return as_argument(kind)


def keys() -> list[tuple[str, str, Any, Any]]:
    """(typed dictionary, key, the argument's type, the model's as an argument)."""
    return [
        (
            typed.__name__,
            name,
            plain_deep(typed.__annotations__[name]),
            model_type(model, name),
        )
        for typed, model in job_keys.MODELS.items()
        for name in shapes.fields(typed)
    ]


class TestArgumentTypes:
    """Each key's argument type is what its model says a program writes."""

    @pytest.mark.parametrize(
        ("typed", "name", "argument", "model"), keys(), ids=[f"{k[0]}.{k[1]}" for k in keys()]
    )
    def test_the_type_is_the_models(self, typed: str, name: str, argument: Any, model: Any) -> None:
        """The argument's type is the model's as a program writes it."""
        assert argument == model, f"{typed}.{name}: {argument} against the model's {model}"

    def test_the_check_can_fail(self) -> None:
        """A key typed other than its model is seen (the comparison above can fail)."""
        size = plain_deep(arguments.DiskArgs.__annotations__["size_gb"])
        assert size == model_type(DiskConfig, "size_gb")
        assert size != model_type(DiskConfig, "type")
