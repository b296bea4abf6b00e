"""Reads the stack-level settings from the Pulumi config of the running program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.config

from provider import spec
from provider.errors import SpecError

#: Where the local backend keeps job records, logs and outputs, under the project.
LOCAL_ROOT = ".local-jobs"


def stack_settings(stack: str) -> dict[str, Any]:
    """The stack's settings as plain data; a mistake stops the program with its key."""
    raw = {
        key: _value(key)
        for key in pulumi.runtime.config.CONFIG.get()
        if key.startswith(("gcp:", "vertex-training:")) and key != "vertex-training:jobs"
    }
    try:
        settings = spec.parse_stack_settings(raw, stack)
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None
    return settings.model_dump()


def connection_settings(api_endpoint: str | None, project_dir: Path) -> dict[str, Any]:
    """How this machine reaches the backends: kept in state, never a reason to resubmit."""
    return {
        "api_endpoint": api_endpoint or "",
        "local_root": str(project_dir / LOCAL_ROOT),
        "base_dir": str(project_dir),
    }


def _value(key: str) -> Any:
    """A key's value; the empty defaults Pulumi.yaml declares read as unset."""
    namespace, name = key.split(":", 1)
    return pulumi.Config(namespace).get(name) or None
