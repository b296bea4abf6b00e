"""What a job's diff found, for either host: ``JobChange``.

``TrainingJobProvider.diff_job`` compares a job's recorded inputs with its new ones and
returns one record: which of the job's own keys changed (``KeyChange``: each key of its
config, in the stack config's naming, added, removed or changed), whether the job is
replaced, which of those keys force that (every changed key but the provider-side ones,
``api.bodies.PROVIDER_SIDE_KEYS``, which only update the resource), and why a replacement that no
changed key forces is one (``cause``). The dynamic providers hand the engine its
``changed`` and ``replaces``; the plugin its keys, each on its property path. Neither
host decides which key replaces a job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vertex_training.api.bodies import key_replaces

#: Why a job is replaced though none of its own keys forces it: its ``retry`` submits its
#: next attempt (``retry``), or a default it took, or a stack setting, changed what it
#: runs (``settings``).
Cause = Literal["", "retry", "settings"]


@dataclass(frozen=True)
class KeyChange:
    """One key of a job's config that changed: ``add`` (absent before), ``delete``
    (absent now) or ``update``; ``replaces``: whether its change replaces the job."""

    key: str
    kind: Literal["add", "delete", "update"]
    replaces: bool


@dataclass(frozen=True)
class JobChange:
    """A job's diff. ``changed`` and ``replaces``: the keys of the job's view
    (``state.JobView``) that changed, and those that replace it (what the dynamic
    providers report); ``keys``: its config's keys that changed; ``cause``: why it is
    replaced when no key of ``keys`` forces it."""

    changed: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()
    keys: tuple[KeyChange, ...] = ()
    cause: Cause = ""

    @property
    def changes(self) -> bool:
        return bool(self.changed)

    @property
    def replacing(self) -> bool:
        return bool(self.replaces)


def replacing_keys(changed: list[str], replaced: bool) -> list[str]:
    """Those of ``changed`` that force a replacement, when the job is ``replaced``."""
    return [key for key in changed if key_replaces(key, replaced)]


def key_changes(old: Any, new: Any, replaced: bool) -> tuple[KeyChange, ...]:
    """The keys of two configs (``old``, ``new``: mappings, else none) whose values
    differ, each marked whether it replaces the job (when it is ``replaced``)."""
    old = old if isinstance(old, Mapping) else {}
    new = new if isinstance(new, Mapping) else {}
    keys = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
    forcing = set(replacing_keys(keys, replaced))
    return tuple(
        KeyChange(
            key,
            "add" if key not in old else "delete" if key not in new else "update",
            key in forcing,
        )
        for key in keys
    )
