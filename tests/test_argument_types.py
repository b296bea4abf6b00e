"""The typed arguments (``resources/arguments.py``) against the models they are written from.

``stackconfig.typed_arguments`` writes the file from the models of ``stackconfig`` and their
marks (``stackconfig._arguments``); ``make schema`` runs it. Here: the file is what the
models give; each key's type, read at run time with Pulumi's ``Input`` left out, is what
its model says a program writes (no key excepted); and the generator's rules, one by one.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import BaseModel, BeforeValidator, Field
from pydantic_core import PydanticUndefined

from vertex_training.plugin import job_keys, shapes
from vertex_training.resources import arguments
from vertex_training.stackconfig import typed_arguments
from vertex_training.stackconfig._arguments import LATER, NO_ARGUMENT, Later, Takes
from vertex_training.stackconfig._config import DiskConfig
from vertex_training.stackconfig._rules import PositiveDuration

#: The typed dictionary of each model.
ARGUMENTS = {model: typed for typed, model in job_keys.MODELS.items()}
#: A model by its class name (what ``Takes`` names).
BY_NAME = {model.__name__: model for model in typed_arguments.models()}


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


class TestTheFile:
    """resources/arguments.py is what the models give."""

    def test_the_file_is_what_the_models_give(self) -> None:
        """The file as written is the generator's text: run `make schema` when it is not."""
        path = Path(arguments.__file__)
        assert path.read_text() == typed_arguments.render(), (
            "provider/vertex_training/resources/arguments.py is stale: run `make schema`"
        )

    def test_each_written_dictionary_is_public(self) -> None:
        """Each dictionary written is a public name of ``arguments`` (but the base that
        holds a pool's keys), paired with its model."""
        private = {n for n in typed_arguments.NAMES.values() if n.startswith("_")}
        assert private == {"_PoolKeys"}
        assert {typed.__name__ for typed in job_keys.MODELS} == (
            set(typed_arguments.NAMES.values()) - private
        )


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


class _Inner(BaseModel):
    """An inner model."""

    name: str


class _Marked(BaseModel):
    """A model with each mark."""

    text: Later[str]
    texts: Later[list[str] | None] = None
    labels: Later[dict[str, str] | None] = None
    duration: Later[PositiveDuration | None] = None
    either: Annotated[
        str | bool | None, BeforeValidator(lambda v: v, json_schema_input_type=Later[str] | bool)
    ] = None
    inner: Later[_Inner | None] = None
    inners: Later[list[_Inner] | None] = None
    checked: Annotated[Any, Takes("StudyConfig")] = None
    hidden: Annotated[bool, NO_ARGUMENT] = False
    choice: Later[Literal["STANDARD", "SPOT", "FLEX_START"] | None] = None
    scalars: Annotated[
        list[Any], BeforeValidator(lambda v: v, json_schema_input_type=list[str | float])
    ] = Field(default_factory=list)


def written(name: str) -> str:
    """The annotation the generator writes for ``_Marked``'s key ``name``."""
    writer = typed_arguments._Writer(made={"StudyArgs"})
    typed_arguments.NAMES["_Inner"] = "InnerArgs"
    try:
        return typed_arguments.annotation(
            typed_arguments._field_type(_Marked.model_fields[name]), writer
        )
    finally:
        del typed_arguments.NAMES["_Inner"]


class TestTheRules:
    """How the generator reads a field's marks."""

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("text", "Input[str]"),
            ("texts", "Input[Sequence[Input[str]]]"),
            ("labels", "Input[Mapping[str, Input[str]]]"),
            ("duration", "Input[str] | Input[int]"),
            ("either", "Input[str] | bool"),
            ("inner", '"InnerArgs"'),
            ("inners", 'Sequence["InnerArgs"]'),
            ("checked", "StudyArgs"),
            ("choice", "Input[StrategyName]"),
            ("scalars", "Sequence[str | float]"),
        ],
    )
    def test_a_mark_gives_the_type(self, name: str, expected: str) -> None:
        """``Later`` wraps values (not models) in ``Input``; a validator's input type or
        ``Takes`` stands for the model's type; a model not yet made is named as text."""
        assert written(name) == expected

    def test_a_key_marked_no_argument_is_left_out(self) -> None:
        """``NO_ARGUMENT``: the key is no argument; the others keep their order."""
        assert "hidden" not in typed_arguments.keys(_Marked)
        assert typed_arguments.keys(_Marked)[:2] == ["text", "texts"]

    def test_an_unnamed_choice_is_an_error(self) -> None:
        """A ``Literal`` without a public name in ALIASES stops the generator, saying so."""
        writer = typed_arguments._Writer()
        with pytest.raises(KeyError, match="ALIASES"):
            typed_arguments.annotation(Literal["a", "b"], writer)

    def test_a_model_reached_without_a_name_is_an_error(self) -> None:
        """A key's model without a typed dictionary in NAMES stops the generator."""
        typed_arguments.NAMES["_Inner"] = "InnerArgs"
        try:
            with pytest.raises(KeyError, match="NAMES names models no argument holds"):
                typed_arguments.models()
        finally:
            del typed_arguments.NAMES["_Inner"]

    def test_an_unnamed_model_is_an_error(self) -> None:
        """A nested model without a typed dictionary stops the generator, saying so."""
        with pytest.raises(KeyError, match="NAMES"):
            typed_arguments.annotation(_Inner, typed_arguments._Writer())

    def test_the_marks_change_no_validation(self) -> None:
        """The marks are pydantic's to pass by: a marked model validates as unmarked."""
        marked = _Marked(text="a", duration="90m", scalars=["x", 1])
        assert (marked.duration, marked.scalars) == (5400, ["x", 1])
        assert LATER in _Marked.model_fields["text"].metadata
