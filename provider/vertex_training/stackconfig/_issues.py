"""How a mistake is worded: the full stack config key of a value, did-you-mean suggestions,
and pydantic's validation errors translated into ``vertex_training.errors.Issue`` records.

Every model of the stack config (the job keys, the ``study:`` and ``training_input:``
dialects) reports through ``issues_from``, so a user reads one voice: the key, the bad
value, and what to write instead.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Union

from pydantic import (
    BaseModel,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from vertex_training.errors import TYPE_MESSAGES as _TYPE_MESSAGES
from vertex_training.errors import Issue

#: The pydantic error type that carries this module's own messages.
_ISSUE_ERROR = "vertex_training_issue"


Problem = tuple[tuple[str | int, ...], Any, str]


def invalid(message: str, problems: Sequence[Problem] = ()) -> PydanticCustomError:
    """A validation error with our own message; ``problems`` split it into several issues."""
    return PydanticCustomError(
        _ISSUE_ERROR, "{message}", {"message": message, "problems": list(problems)}
    )


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' Did you mean X?' for the closest choice (case-insensitive), or ''."""
    options = list(choices)
    by_upper = {c.upper(): c for c in options}
    if value.upper() in by_upper:
        return f" Did you mean {by_upper[value.upper()]}?"
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def one_of(values: Sequence[object], conjunction: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    texts = [str(v) for v in values]
    if len(texts) <= 1:
        return "".join(texts)
    return f"{', '.join(texts[:-1])} {conjunction} {texts[-1]}"


def full_key(base: str, path: Iterable[str | int]) -> str:
    """A full stack config key: ``base`` plus ``.name`` / ``[index]`` parts."""
    key = base
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key


def is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def _unwrap(annotation: Any) -> Any:
    """Strip ``Annotated`` and ``| None`` from a field annotation."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _model_at(root: type[BaseModel], path: Sequence[str | int]) -> type[BaseModel] | None:
    """The config model found at ``path`` under ``root``, if there is one."""
    current: Any = root
    for part in path:
        current = _unwrap(current)
        origin = typing.get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        elif origin is list:
            current = typing.get_args(current)[0]
        elif origin is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unknown_key_message(root: type[BaseModel], loc: Sequence[str | int]) -> str:
    name = str(loc[-1])
    model = _model_at(root, loc[:-1])
    allowed = sorted(model.model_fields) if model else []
    if name == "secure":  # a {secure: ...} secret where a mapping of settings belongs
        return "secrets are only supported as env values; write this value in plain text"
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key '{name}'; did you mean '{close[0]}'?"
    return f"unknown key '{name}'; the keys allowed here are {one_of(allowed)}"


#: The names pydantic puts in an error's location for the member of a union it tried
#: (``deployer: str | list[str]`` fails at ``deployer.str`` and ``deployer.list[str]``).
_UNION_MEMBERS = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple"})


def issues_from(
    exc: ValidationError,
    base: str,
    root: type[BaseModel],
    *,
    unions: Mapping[str, str] | None = None,
) -> list[Issue]:
    """Translate a pydantic ValidationError into stack config Issues (no pydantic text).

    A value that fits no member of a union of plain types is one issue at its key, worded
    by ``unions`` (by the key's path under ``base``) or as not valid.
    """
    issues: list[Issue] = []
    collapsed: set[tuple[str | int, ...]] = set()
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        kind = error["type"]
        value = error.get("input")
        ctx = error.get("ctx") or {}
        members = [
            part for part in loc if isinstance(part, str) and part.split("[")[0] in _UNION_MEMBERS
        ]
        if members:
            loc = tuple(part for part in loc if part not in members)
            if loc not in collapsed:
                collapsed.add(loc)
                message = (unions or {}).get(".".join(map(str, loc)))
                issues.append(
                    Issue(full_key(base, loc), value, message or "is not a valid value here")
                )
            continue
        if kind == _ISSUE_ERROR:
            problems = ctx.get("problems") or []
            if problems:
                issues.extend(
                    Issue(full_key(base, loc + tuple(sub)), bad, message)
                    for sub, bad, message in problems
                )
            else:
                issues.append(Issue(full_key(base, loc), value, ctx["message"]))
            continue
        if kind == "extra_forbidden":
            issues.append(Issue(full_key(base, loc), value, _unknown_key_message(root, loc)))
            continue
        if kind == "missing":
            message = f"'{loc[-1]}' is required here; add it"
            issues.append(Issue(full_key(base, loc), None, message))
            continue
        if is_secret(value):
            message = "secrets are only supported as env values; write this value in plain text"
        elif kind in ("greater_than_equal", "greater_than"):
            bound = ctx.get("ge", ctx.get("gt"))
            relation = "at least" if kind == "greater_than_equal" else "more than"
            message = f"must be {relation} {bound}"
        elif kind in _TYPE_MESSAGES:
            message = _TYPE_MESSAGES[kind]
        else:
            message = "is not a valid value here; see docs/config-shape.md"
        issues.append(Issue(full_key(base, loc), value, message))
    return issues
