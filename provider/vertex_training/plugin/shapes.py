"""The job's typed arguments read as the plugin's schema types, and values converted
between the two namings.

One source: the typed dictionaries of ``vertex_training.resources.arguments`` (what a
Python program's ``TrainingJobArgs`` holds, the keys of a stack config job) are read here
for the schema (``schema_type``) and for every value the plugin is given
(``to_config``) or gives back (``to_arguments``). A property is the key's name in
camelCase (``python_package`` -> ``pythonPackage``), as Pulumi schemas name them; the
keys of a map (``env``, ``labels``) and of an untyped value (``study``,
``training_input``, which keep the stack config's own spelling) are never renamed.

The outputs have one source too: each output's shape is a frozen dataclass beside the
code that makes its value (``resources.records.JobObserved``, ``backends.base.TrialOutput``
...), its fields the output's keys in the state's naming (``class_`` for ``class``), each
described by its field's metadata:

- ``description``: the property's description in the schema;
- ``required``: False for a property an SDK types as maybe absent (True without);
- ``shape``: the output's shape where the field holds it in the state's naming (a
  mapping), not as its dataclass (``JobObserved.failure``: ``JobFailure``);
- ``schema``: the property's schema type where no Python type says it (a type the
  schema writes by hand);
- ``unset``: the value that leaves the property out of a dataclass's properties.

``output_type`` writes a shape's schema object type (its docstring describes it), and
``properties`` gives a value of a shape (the dataclass, or its state's mapping) as the
plugin's properties in camelCase: the one conversion of an output to the schema's naming.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ForwardRef, Literal, NotRequired, Required, Union

#: The schema's package name and its module of every type.
PACKAGE = "vertex-training"
MODULE = "index"


#: The schema's type of each plain value.
SCALARS: dict[Any, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
#: A value of any shape.
ANY: dict[str, str] = {"$ref": "pulumi.json#/Any"}


def camel(name: str) -> str:
    """``size_gb`` -> ``sizeGb``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake(name: str) -> str:
    """``sizeGb`` -> ``size_gb`` (``camel``'s reverse)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def type_token(typed: type) -> str:
    """The schema token of a typed dictionary or an output's shape: ``AcceleratorArgs``
    -> ``vertex-training:index:Accelerator``; ``TrainingJobArgs`` -> ``...:Job``;
    ``TrialOutput`` -> ``...:Trial``."""
    name = typed.__name__.removesuffix("Args").removesuffix("Output")
    return f"{PACKAGE}:{MODULE}:{'Job' if name == 'TrainingJob' else name}"


def is_typed_dict(value: Any) -> bool:
    return isinstance(value, type) and typing.is_typeddict(value)


def _is_wrapper(arg: Any) -> bool:
    """An ``Awaitable[T]`` or ``Output[T]`` member of ``pulumi.Input[T]``."""
    if isinstance(arg, ForwardRef):
        return arg.__forward_arg__.startswith("Output")
    return typing.get_origin(arg) is collections.abc.Awaitable


@functools.cache
def plain(annotation: Any) -> Any:
    """``annotation`` without ``Required``/``NotRequired`` and ``pulumi.Input``'s
    wrappers: ``Input[str]`` -> ``str``; a union of several kinds stays a union."""
    origin = typing.get_origin(annotation)
    if origin in (Required, NotRequired):
        return plain(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members = [plain(arg) for arg in typing.get_args(annotation) if not _is_wrapper(arg)]
        unique = list(dict.fromkeys(members))
        # Union[...] of computed members: the `X | Y` form takes no tuple.
        return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007
    return annotation


@functools.cache
def fields(typed: type) -> dict[str, tuple[Any, bool]]:
    """A typed dictionary's keys: name -> (plain annotation, required)."""
    # A TypedDict class has __required_keys__; ``type`` does not declare it.
    required = typed.__required_keys__  # type: ignore[attr-defined]
    return {name: (plain(kind), name in required) for name, kind in typed.__annotations__.items()}


@functools.cache
def _by_property(typed: type) -> dict[str, str]:
    """A typed dictionary's property names -> its keys."""
    return {camel(name): name for name in fields(typed)}


@functools.cache
def _members(annotation: Any) -> tuple[Any, ...]:
    union = typing.get_origin(annotation) in (Union, types.UnionType)
    return typing.get_args(annotation) if union else (annotation,)


def schema_type(
    annotation: Any, types: dict[str, dict[str, Any]], describe: Callable[[type, str], str]
) -> dict[str, Any]:
    """The schema's type spec of ``annotation``; each typed dictionary it reaches is added
    to ``types`` (token -> object type, its properties described by ``describe``)."""
    annotation = plain(annotation)
    members = _members(annotation)
    if len(members) > 1:
        # A choice beside an object stays text: the Go and Java SDKs' generators make a
        # union with an enum plain text, and the object could not be written there.
        return {
            "oneOf": [
                {"type": "string"}
                if typing.get_origin(member) is Literal
                else schema_type(member, types, describe)
                for member in members
            ]
        }
    origin = typing.get_origin(annotation)
    leaf = _leaf(annotation, types)
    if leaf is not None:
        return leaf
    if origin is collections.abc.Sequence:
        return {
            "type": "array",
            "items": schema_type(typing.get_args(annotation)[0], types, describe),
        }
    if origin is collections.abc.Mapping:
        value = typing.get_args(annotation)[1]
        if value is Any:
            return dict(ANY)
        return {"type": "object", "additionalProperties": schema_type(value, types, describe)}
    if is_typed_dict(annotation):
        token = type_token(annotation)
        if token not in types:
            types[token] = {}  # reserved first: a type may reach itself
            types[token] = object_type(annotation, types, describe)
        return {"$ref": f"#/types/{token}"}
    raise TypeError(f"no schema type for {annotation!r}")


def enum_type(annotation: Any, types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The schema's enum of a ``Literal`` of text (added to ``types`` under the name
    ``resources.arguments.SCHEMA_ENUMS`` gives it): each value named in CamelCase for the
    SDKs' constants (``FLEX_START`` -> ``FlexStart``, ``reverse_log`` -> ``ReverseLog``)."""
    from vertex_training.resources.arguments import SCHEMA_ENUMS

    name = SCHEMA_ENUMS.get(annotation)
    if name is None:
        raise TypeError(f"{annotation!r} has no enum name in arguments.SCHEMA_ENUMS")
    token = f"{PACKAGE}:{MODULE}:{name}"
    values = typing.get_args(annotation)
    types[token] = {
        "type": "string",
        "description": f"One of {', '.join(f'`{value}`' for value in values)}.",
        "enum": [{"name": _constant(value), "value": value} for value in values],
    }
    return {"$ref": f"#/types/{token}"}


def _constant(value: str) -> str:
    """An enum value's name: ``FLEX_START`` -> ``FlexStart``."""
    return "".join(part.capitalize() for part in value.lower().split("_"))


def _leaf(annotation: Any, types: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The schema's type of a plain value (text, a ``Literal``'s enum, a number, a flag,
    any value), or None for a composite one."""
    if typing.get_origin(annotation) is Literal:
        return enum_type(annotation, types)
    if annotation is Any:
        return dict(ANY)
    kind = SCALARS.get(annotation)
    return {"type": kind} if kind else None


def object_type(
    typed: type, types: dict[str, dict[str, Any]], describe: Callable[[type, str], str]
) -> dict[str, Any]:
    """The schema's object type of a typed dictionary."""
    properties = {
        camel(name): {**schema_type(kind, types, describe), "description": describe(typed, name)}
        for name, (kind, _) in fields(typed).items()
    }
    required = sorted(camel(name) for name, (_, needed) in fields(typed).items() if needed)
    spec: dict[str, Any] = {
        "type": "object",
        "description": describe(typed, ""),
        "properties": properties,
    }
    if required:
        spec["required"] = required
    return spec


def _walk(value: Any, annotation: Any, *, to_keys: bool) -> Any:
    """``value`` with each typed dictionary's names renamed, at any depth: properties to
    keys (``to_keys``), or keys to properties. A name the dictionary does not know is
    kept as written (the job's check refuses it by name); so are a map's keys."""
    members = _members(plain(annotation))
    if isinstance(value, Mapping):
        typed = next((m for m in members if is_typed_dict(m)), None)
        if typed is not None:
            kinds, renamed = fields(typed), {}
            for name, item in value.items():
                key = _by_property(typed).get(name, name) if to_keys else name
                if key not in kinds:
                    renamed[name] = item
                    continue
                renamed[key if to_keys else camel(key)] = _walk(
                    item, kinds[key][0], to_keys=to_keys
                )
            return renamed
        mapping = next(
            (m for m in members if typing.get_origin(m) is collections.abc.Mapping), None
        )
        inner = typing.get_args(mapping)[1] if mapping is not None else Any
        return {name: _walk(item, inner, to_keys=to_keys) for name, item in value.items()}
    if isinstance(value, list | tuple):
        sequence = next(
            (m for m in members if typing.get_origin(m) is collections.abc.Sequence), None
        )
        inner = typing.get_args(sequence)[0] if sequence is not None else Any
        return [_walk(item, inner, to_keys=to_keys) for item in value]
    return value


def to_config(value: Any, annotation: Any) -> Any:
    """A value given in the schema's naming with the stack config's keys."""
    return _walk(value, annotation, to_keys=True)


def to_arguments(value: Any, annotation: Any) -> Any:
    """A value with the stack config's keys in the schema's naming (``to_config``'s
    reverse)."""
    return _walk(value, annotation, to_keys=False)


def property_path(typed: type, key_path: str) -> str:
    """A dotted path of stack config keys under ``typed`` in the schema's naming:
    ``workers.python_package.module`` -> ``workers.pythonPackage.module``,
    ``nfs_mounts[0].mount_point`` -> ``nfsMounts[0].mountPoint`` (a segment under a map
    or an untyped value is kept)."""
    out: list[str] = []
    current: Any = typed
    for segment in key_path.split(".") if key_path else []:
        name, bracket, index = segment.partition("[")
        typed_now = next((m for m in _members(plain(current)) if is_typed_dict(m)), None)
        if typed_now is not None and name in fields(typed_now):
            out.append(camel(name) + bracket + index)
            current = fields(typed_now)[name][0]
            if bracket:
                sequence = next(
                    (
                        m
                        for m in _members(plain(current))
                        if typing.get_origin(m) is collections.abc.Sequence
                    ),
                    None,
                )
                current = typing.get_args(sequence)[0] if sequence is not None else Any
        else:
            out.append(segment)
            current = Any
    return ".".join(out)


def is_shape(annotation: Any) -> bool:
    """Whether ``annotation`` is an output's shape (a dataclass)."""
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


@functools.cache
def output_fields(shape: type) -> dict[str, tuple[str, Any, Mapping[str, Any]]]:
    """An output shape's fields by key, in the state's naming (a trailing ``_`` dropped:
    ``class_`` -> ``class``): (attribute, shape or annotation, metadata)."""
    hints = typing.get_type_hints(shape)
    return {
        field.name.removesuffix("_"): (
            field.name,
            field.metadata.get("shape", hints[field.name]),
            field.metadata,
        )
        for field in dataclasses.fields(shape)
    }


def described(shape: type) -> dict[str, tuple[str, Any, Mapping[str, Any]]]:
    """An output shape's described fields (its outputs; an undescribed one, such as
    ``JobObserved.resource_name``, is the resource's ID)."""
    return {key: spec for key, spec in output_fields(shape).items() if "description" in spec[2]}


def _output_schema(annotation: Any, types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The schema's type spec of an output's annotation (an optional value as its value's)."""
    members = [m for m in _members(annotation) if m is not type(None)]
    if len(members) > 1:
        raise TypeError(f"no schema type for the output {annotation!r}")
    annotation = members[0]
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return dict(ANY)
    if annotation in SCALARS:
        return {"type": SCALARS[annotation]}
    if origin in (tuple, list, collections.abc.Sequence):
        return {"type": "array", "items": _output_schema(typing.get_args(annotation)[0], types)}
    if origin in (dict, collections.abc.Mapping):
        return {
            "type": "object",
            "additionalProperties": _output_schema(typing.get_args(annotation)[1], types),
        }
    if is_shape(annotation):
        token = type_token(annotation)
        if token not in types:
            types[token] = {}  # reserved first: a type may reach itself
            types[token] = output_type(annotation, types)
        return {"$ref": f"#/types/{token}"}
    raise TypeError(f"no schema type for the output {annotation!r}")


def output_properties(shape: type, types: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The schema's properties of an output shape's described fields (in their order),
    each with its description; each shape they reach is added to ``types``."""
    return {
        camel(key): {
            **(meta["schema"] if "schema" in meta else _output_schema(kind, types)),
            "description": meta["description"],
        }
        for key, (_, kind, meta) in described(shape).items()
    }


def output_type(shape: type, types: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The schema's object type of an output shape: described by its docstring; its
    properties required but those its metadata says may be absent (in their order; no
    ``required`` when none is, which the engine would drop)."""
    spec: dict[str, Any] = {
        "type": "object",
        "description": " ".join((shape.__doc__ or "").split()),
        "properties": output_properties(shape, types),
    }
    required = [
        camel(key) for key, (_, _, meta) in described(shape).items() if meta.get("required", True)
    ]
    if required:
        spec["required"] = required
    return spec


def properties(value: Any, shape: Any = None) -> Any:
    """An output as the plugin gives it: ``value`` of ``shape`` (a dataclass, by default
    the value's own; or its mapping in the state's naming) with each key of a shape in
    camelCase (``resource_name`` -> ``resourceName``), at any depth. A map's keys
    (``parameters``, ``webAccessUris``) and a key no shape names are kept as written; a
    dataclass's field at its ``unset`` value is left out."""
    if shape is None:
        shape = type(value)
    members = _members(shape)
    found = next((m for m in members if is_shape(m)), None)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found = type(value)
        items: Any = {
            key: getattr(value, attr)
            for key, (attr, _, meta) in output_fields(found).items()
            if "unset" not in meta or getattr(value, attr) != meta["unset"]
        }
    else:
        items = value
    if isinstance(items, Mapping):
        if found is not None:
            fields_of, shaped = output_fields(found), {}
            for key, item in items.items():
                if key in fields_of:
                    shaped[camel(key)] = properties(item, fields_of[key][1])
                else:
                    shaped[key] = item
            return shaped
        mapping = next(
            (m for m in members if typing.get_origin(m) in (dict, collections.abc.Mapping)), None
        )
        inner = typing.get_args(mapping)[1] if mapping is not None else Any
        return {key: properties(item, inner) for key, item in items.items()}
    if isinstance(items, list | tuple):
        sequence = next(
            (m for m in members if typing.get_origin(m) in (tuple, list, collections.abc.Sequence)),
            None,
        )
        inner = typing.get_args(sequence)[0] if sequence is not None else Any
        return [properties(item, inner) for item in items]
    return items
