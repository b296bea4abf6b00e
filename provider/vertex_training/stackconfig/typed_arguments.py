"""The Python API's typed arguments (``resources/arguments.py``), written from the pydantic
models of ``vertex_training.stackconfig``: one typed dictionary per model, its keys the
model's fields in their order, each required where the model requires it, typed as the
field's marks say a program writes it (``stackconfig._arguments``: ``Later``, a validator's
``json_schema_input_type``, ``Takes``, ``NO_ARGUMENT``), its docstring the model's.

``make schema`` writes the file (before the plugin's schema, which reads it);
``tests/test_argument_types.py`` fails when it is not what the models give. The models know
nothing of Pulumi: this module only writes the text that names ``pulumi.Input``.

    python -m vertex_training.stackconfig.typed_arguments <resources/arguments.py>
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, PlainValidator, WrapValidator
from pydantic_core import PydanticUndefined

from vertex_training.backend_kinds import BackendName
from vertex_training.stackconfig import _access, _constants, _image_rows
from vertex_training.stackconfig._arguments import LATER, NO_ARGUMENT, Takes
from vertex_training.stackconfig._config import JobConfig
from vertex_training.stackconfig.platform import PlatformConfig
from vertex_training.stackconfig.study import StudyConfig

#: The models a program's arguments are written from; the others are reached through
#: their keys (and a model's base that holds keys: ``_PoolConfig``).
ROOTS: tuple[type[BaseModel], ...] = (JobConfig, StudyConfig, PlatformConfig, _image_rows.ImageRow)

#: Each model's class name and the name of its typed dictionary, in the file's order (a
#: dictionary named before it is made is written ahead, as text, and set once it is made).
NAMES: dict[str, str] = {
    "AcceleratorConfig": "AcceleratorArgs",
    "DiskConfig": "DiskArgs",
    "FrameworkConfig": "FrameworkArgs",
    "PythonPackageConfig": "PythonPackageArgs",
    "ReservationAffinityConfig": "ReservationAffinityArgs",
    "NfsMountConfig": "NfsMountArgs",
    "LustreMountConfig": "LustreMountArgs",
    "DnsPeeringConfig": "DnsPeeringArgs",
    "PscInterfaceConfig": "PscInterfaceArgs",
    "_PoolConfig": "_PoolKeys",
    "PoolConfig": "PoolArgs",
    "ReductionServerConfig": "ReductionServerArgs",
    "SchedulingConfig": "SchedulingArgs",
    "WaitConfig": "WaitArgs",
    "RetryConfig": "RetryArgs",
    "MetricConfig": "StudyMetricArgs",
    "ConditionalConfig": "ConditionalParametersArgs",
    "ParameterConfig": "StudyParameterArgs",
    "DecayCurveConfig": "DecayCurveStoppingArgs",
    "MedianConfig": "MedianStoppingArgs",
    "ConvexConfig": "ConvexStoppingArgs",
    "EarlyStoppingConfig": "EarlyStoppingArgs",
    "StudyConfig": "StudyArgs",
    "ServingFrameworkConfig": "ServingFrameworkArgs",
    "ServingConfig": "ServingArgs",
    "ModelConfig": "ModelArgs",
    "FractionsConfig": "FractionsArgs",
    "KeyedFractionsConfig": "KeyedFractionsArgs",
    "FiltersConfig": "FiltersArgs",
    "SplitConfig": "SplitArgs",
    "DatasetConfig": "DatasetArgs",
    "JobConfig": "TrainingJobArgs",
    "ImageRow": "ImageRowArgs",
    "BucketConfig": "BucketArgs",
    "RepositoryConfig": "RepositoryArgs",
    "ServiceAccountConfig": "ServiceAccountArgs",
    "TensorboardConfig": "TensorboardArgs",
    "PlatformConfig": "PlatformArgs",
}


@dataclass(frozen=True)
class Alias:
    """A public name of a choice's ``Literal``, and its enum in the plugin's schema."""

    name: str
    choices: Any
    enum: str
    #: The ``#:`` comment above it.
    comment: str = ""
    #: The module it is imported from, when it is defined there.
    imported_from: str = ""


#: Each choice a key takes, by its public name, in ``SCHEMA_ENUMS``' order.
ALIASES: tuple[Alias, ...] = (
    Alias("BackendName", BackendName, "Backend", imported_from="vertex_training.backend_kinds"),
    Alias(
        "WaitUntilName", _constants.WaitUntil, "WaitUntil", "Which state ``pulumi up`` waits for."
    ),
    Alias("StrategyName", _constants.Strategy, "Strategy"),
    Alias(
        "GoalName",
        _constants.Goal,
        "Goal",
        "A study's choices (``vertex_training.stackconfig.study``'s own).",
    ),
    Alias("ParameterTypeName", _constants.ParameterType, "ParameterType"),
    Alias("ScaleName", _constants.Scale, "Scale"),
    Alias("AlgorithmName", _constants.Algorithm, "Algorithm"),
    Alias("MeasurementSelectionName", _constants.MeasurementSelection, "MeasurementSelection"),
    Alias("ReservationAffinityType", _access.AffinityType, "ReservationAffinityType"),
    Alias(
        "ImageKindName",
        _image_rows.ImageKind,
        "ImageKind",
        "The kinds of machine a prebuilt image runs on.",
    ),
)

#: Where the arguments list a key other than where its model has it (key: the key it
#: comes before), as they were published: a program's arguments and the plugin's schema
#: list the job's ``model`` and ``dataset`` before ``wait`` and a package's ``module``
#: first; the models (and docs/config-shape.md's tables, written from them) after
#: ``rerun`` and after ``package_path``.
MOVED: dict[str, dict[str, str]] = {
    "PythonPackageConfig": {"module": "executor_image"},
    "JobConfig": {"model": "wait", "dataset": "wait"},
}

HEADER = '''"""A job's arguments as typed dictionaries: the keys of a stack config job, for \
type checkers.

``TrainingJob("train", TrainingJobArgs(image=..., machine="n1-standard-8"))`` takes the
same keys, with the same meanings, as ``vertex-training:jobs.train`` in a stack file
(docs/config-shape.md); mypy and pyright check a program's keys and value types against
these. Any value may be a Pulumi Output (a bucket's URL, a network's ID): the resource's
check reads it once it is known. What the keys mean and which values are allowed is
validated by the job's resource at ``pulumi preview``, each mistake named by its argument
path (``job.workers.machine``), the bad value and what to write instead.

Durations are text (``"3h"``, ``"90m"``) or seconds; versions are text (``"2.10"``).

Generated by ``make schema`` from the models of ``vertex_training.stackconfig``
(``vertex_training.stackconfig.typed_arguments``): edit the models, not this file;
``tests/test_argument_types.py`` fails when it is stale.
"""

# No ``from __future__ import annotations``: the dictionaries' required keys are read from
# their annotations at run time (``__required_keys__``), which needs them evaluated.
'''

_VALIDATORS = (BeforeValidator, PlainValidator, WrapValidator)
_PATCH_COMMENT = (
    "# The two reach each other; at run time (where the schema reads the annotations) the\n"
    "# name written ahead is replaced by the type once that is made.\n"
)


@dataclass
class _Writer:
    """What the file has made so far, as it is written from the top."""

    #: The typed dictionaries made.
    made: set[str] = field(default_factory=set)
    #: (dictionary, key, annotation, the names it waits for): annotations that name a
    #: dictionary ahead of it, to be set once those are made.
    ahead: list[tuple[str, str, str, set[str]]] = field(default_factory=list)
    #: The names the annotation being written waits for.
    waiting: set[str] = field(default_factory=set)

    def model(self, model: type[BaseModel]) -> str:
        """A nested model's dictionary; text when it is not yet made."""
        name = _name(model)
        if name in self.made:
            return name
        self.waiting.add(name)
        return f'"{name}"'


def _name(model: type[BaseModel]) -> str:
    """The name of a model's typed dictionary."""
    name = NAMES.get(model.__name__)
    if name is None:
        raise KeyError(f"{model.__name__} has no typed dictionary: add it to NAMES")
    return name


def _reached(kind: Any) -> Iterator[type[BaseModel]]:
    """The models a value of type ``kind`` holds, as a program writes it."""
    origin = typing.get_origin(kind)
    if origin is Annotated:
        inner, *metadata = typing.get_args(kind)
        written = _input_type(metadata)
        yield from _reached(inner if written is PydanticUndefined else written)
    elif _is_model(kind):
        yield kind
    else:
        for arg in typing.get_args(kind):
            yield from _reached(arg)


def models() -> dict[type[BaseModel], str]:
    """Each model reached from ROOTS and the name of its typed dictionary, in NAMES' order;
    a model reached without a name, or a name no model has, is an error."""
    found: dict[str, type[BaseModel]] = {}

    def reach(model: type[BaseModel]) -> None:
        if model.__name__ in found:
            return
        _name(model)
        found[model.__name__] = model
        for base in model.__bases__:
            if base.__name__ in NAMES:
                reach(base)
        for name in keys(model):
            for inner in _reached(_field_type(model.model_fields[name])):
                reach(inner)

    for root in ROOTS:
        reach(root)
    unreached = sorted(set(NAMES) - set(found))
    if unreached:
        raise KeyError(f"NAMES names models no argument holds: {unreached}")
    return {found[model]: name for model, name in NAMES.items()}


def _alias(choices: Any) -> str:
    """The public name of a ``Literal``."""
    for alias in ALIASES:
        if alias.choices == choices:
            return alias.name
    raise KeyError(f"{choices} has no public name: add it to ALIASES")


def _input_type(metadata: list[Any]) -> Any:
    """What a program writes, where a mark or a validator says: else ``PydanticUndefined``."""
    for mark in metadata:
        if isinstance(mark, Takes):
            found = [root for root in ROOTS if root.__name__ == mark.model]
            if not found:
                raise KeyError(f"Takes({mark.model!r}) names none of ROOTS")
            return found[0]
        if isinstance(mark, _VALIDATORS) and mark.json_schema_input_type is not PydanticUndefined:
            return mark.json_schema_input_type
    return PydanticUndefined


def _is_model(kind: Any) -> bool:
    """Whether ``kind`` is a model (whose dictionary's keys say what takes an Output)."""
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def annotation(kind: Any, writer: _Writer, later: bool = False) -> str:
    """The argument's annotation, as text, of a value the model types ``kind``: ``Input``
    where it may be known later (``LATER``; never a dictionary or a list or mapping of
    them: their keys say), a list a Sequence, a mapping a Mapping with text keys, a model
    its dictionary, a ``Literal`` its public name, ``None`` left out."""
    origin = typing.get_origin(kind)
    if origin is Annotated:
        inner, *metadata = typing.get_args(kind)
        later = later or LATER in metadata
        written = _input_type(metadata)
        return annotation(inner if written is PydanticUndefined else written, writer, later)
    if origin in (Union, types.UnionType):
        members = [annotation(m, writer, later) for m in typing.get_args(kind)]
        return " | ".join(dict.fromkeys(m for m in members if m != "None"))
    if kind is type(None):
        return "None"
    if _is_model(kind):
        return writer.model(kind)
    if origin is list:
        item = typing.get_args(kind)[0]
        text = f"Sequence[{annotation(item, writer, later)}]"
        later = later and not _is_model(item)
    elif origin is dict:
        key, item = typing.get_args(kind)
        key_text = "str" if key is Any else annotation(key, writer)
        text = f"Mapping[{key_text}, {annotation(item, writer, later)}]"
        later = later and not _is_model(item)
    elif origin is Literal:
        text = _alias(kind)
    elif kind is Any:
        return "Any"
    elif isinstance(kind, type):
        text = kind.__name__
    else:
        raise TypeError(f"no argument type for {kind!r}")
    return f"Input[{text}]" if later else text


def _field_type(info: Any) -> Any:
    """A field's type with the marks pydantic took off it."""
    if not info.metadata:
        return info.annotation
    return Annotated[(info.annotation, *info.metadata)]


def keys(model: type[BaseModel]) -> list[str]:
    """A model's argument keys, in order: its fields but those marked ``NO_ARGUMENT``,
    moved where ``MOVED`` says."""
    names = [n for n, info in model.model_fields.items() if NO_ARGUMENT not in info.metadata]
    moved = MOVED.get(model.__name__, {})
    for name in moved:
        names.remove(name)
    for name, before in moved.items():
        names.insert(names.index(before), name)
    return names


def _base(model: type[BaseModel]) -> type[BaseModel] | None:
    """The model whose dictionary ``model``'s extends, if any."""
    return next((base for base in model.__bases__ if base.__name__ in NAMES), None)


def _docstring(doc: str) -> str:
    """A model's docstring as its typed dictionary's, indented in the class body: read
    alike under every Python (3.13 dedents docstrings as it compiles them, earlier
    releases keep the source's indentation)."""
    lines = inspect.cleandoc(doc).splitlines()
    body = "\n".join([lines[0], *(f"    {line}" if line else "" for line in lines[1:])])
    # A docstring whose closing quotes are on a line of their own keeps them there.
    return body + ("\n    " if doc.rstrip(" ").endswith("\n") else "")


def typed_dict(model: type[BaseModel], writer: _Writer) -> Iterator[str]:
    """The lines of ``model``'s typed dictionary."""
    name = _name(model)
    base = _base(model)
    inherited = set(base.model_fields) if base else set()
    own = [key for key in keys(model) if key not in inherited]
    total = all(model.model_fields[key].is_required() for key in keys(model))
    parent = _name(base) if base else "TypedDict"
    yield f"class {name}({parent}{'' if total else ', total=False'}):"
    if not model.__doc__:
        raise ValueError(f"{model.__name__} has no docstring: its typed dictionary takes it")
    yield f'    """{_docstring(model.__doc__)}"""'
    yield ""
    for key in own:
        info = model.model_fields[key]
        writer.waiting = set()
        text = annotation(_field_type(info), writer)
        if info.is_required() and not total:
            text = f"Required[{text}]"
        yield f"    {key}: {text}"
        if writer.waiting:
            writer.ahead.append((name, key, text, writer.waiting))
    writer.made.add(name)
    yield from _patches(writer)


def _patches(writer: _Writer) -> Iterator[str]:
    """The annotations written ahead, set now that the names they wait for are made."""
    ready = [item for item in writer.ahead if item[3] <= writer.made]
    for name, key, text, waited in ready:
        writer.ahead.remove((name, key, text, waited))
        made = text
        for waited_name in waited:
            made = made.replace(f'"{waited_name}"', waited_name)
        yield ""
        yield ""
        yield _PATCH_COMMENT + f'{name}.__annotations__["{key}"] = {made}'


def _choices(alias: Alias) -> str:
    values = ", ".join(f'"{value}"' for value in typing.get_args(alias.choices))
    comment = f"#: {alias.comment}\n" if alias.comment else ""
    return f"{comment}{alias.name} = Literal[{values}]"


def render() -> str:
    """The text of ``resources/arguments.py``."""
    writer = _Writer()
    classes = "\n\n\n".join("\n".join(typed_dict(model, writer)) for model in models())
    if writer.ahead:
        waiting = sorted({n for item in writer.ahead for n in item[3]})
        raise KeyError(f"typed dictionaries named but never made: {waiting}")
    enums = "".join(f"    {alias.name}: {alias.enum!r},\n" for alias in ALIASES)
    enums = enums.replace("'", '"')
    body = (
        "\n".join(_choices(alias) for alias in ALIASES if not alias.imported_from)
        + "\n\n\n"
        + classes
        + "\n\n\n#: Each choice of a key, by the name of its enum in the plugin's schema: a "
        "TypeScript or\n#: Go program is told a misspelt value when it compiles "
        "(``plugin.shapes.enum_type``).\n"
        f"SCHEMA_ENUMS: Mapping[Any, str] = {{\n{enums}}}\n"
    )
    typing_names = [n for n in ("Any", "Literal", "Required", "TypedDict") if n in body]
    abc_names = [n for n in ("Mapping", "Sequence") if f"{n}[" in body]
    imports = [f"from collections.abc import {', '.join(abc_names)}"] if abc_names else []
    imports.append(f"from typing import {', '.join(typing_names)}")
    imports.append("")
    imports.append("from pulumi import Input")
    imports.append("")
    imports.extend(
        f"from {alias.imported_from} import {alias.name}"
        for alias in ALIASES
        if alias.imported_from
    )
    return HEADER + "\n".join(imports) + "\n\n" + body


def main(argv: list[str]) -> int:
    """``python -m vertex_training.stackconfig.typed_arguments <arguments.py>``."""
    Path(argv[0]).write_text(render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
