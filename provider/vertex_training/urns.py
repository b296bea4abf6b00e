"""Pulumi resource URNs: ``urn:pulumi:STACK::PROJECT::[PARENT_TYPE$]TYPE::NAME``, read and
written in one place (Pulumi's "Resource names" reference: a URN names the stack, the
project, the resource's type, qualified by its parents' types joined with ``$``, and its
name)."""

from __future__ import annotations

from dataclasses import dataclass

#: What every URN begins with.
URN_PREFIX = "urn:pulumi:"


@dataclass(frozen=True)
class Urn:
    """A resource's URN, read: its stack, Pulumi project, own type (without its parents')
    and name."""

    stack: str
    project: str
    type: str
    name: str

    @classmethod
    def parse(cls, urn: str) -> Urn | None:
        """``urn`` read; None when it is no resource URN."""
        if not urn.startswith(URN_PREFIX):
            return None
        parts = urn.removeprefix(URN_PREFIX).split("::", maxsplit=3)
        if len(parts) != 4:
            return None
        stack, project, qualified, name = parts
        return cls(stack, project, qualified.rsplit("$", maxsplit=1)[-1], name)


def urn_of(stack: str, project: str, type_token: str, name: str) -> str:
    """The URN of the resource ``name`` of type ``type_token`` at the root of ``stack`` of
    the Pulumi ``project``."""
    return f"{URN_PREFIX}{stack}::{project}::{type_token}::{name}"
