"""The running program's stack config: its keys as the engine hands them, through the loader.

The values are read as the program receives them (objects as JSON text, parsed here),
then given to ``vertex_training.stackconfig.load_stack``, the loader ``render``, ``plan`` and
the policy pack use too. A mistake in a stack-wide key (``gcp:*``,
``vertex-training:backend``, ``...:platform``), in a package directory or in a job's
shape (a job that is no mapping) stops the program at ``pulumi preview`` with its full
stack config key (a job's own keys are checked by its resource, as CheckFailures).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.config

from vertex_training.errors import Issue
from vertex_training.keys import JOBS_KEY, NAMESPACES
from vertex_training.stackconfig import Stack, engine_value, load_stack


def program_stack(project_dir: Path) -> Stack:
    """The running program's stack, read by the loader every entry point uses.

    Package directories are built (cached). A mistake in a stack-wide key or a package
    directory, or a job that is no mapping (it cannot be a resource's config), stops the
    program at ``pulumi preview`` with its full key; a job's own mistakes are left to its
    resource's check, which reports each as a CheckFailure.
    What the loader warns about a job (legacy keys, images near their end of support) is
    shown here, since a dynamic provider cannot warn.
    """
    stack = load_stack(_stack_keys(), pulumi.get_stack(), project_dir=project_dir, build=True)
    shapeless = [
        issue
        for job in stack.jobs.values()
        if not isinstance(job.config, Mapping)
        for issue in job.issues
    ]
    if stack.issues or stack.packages.issues or shapeless:
        raise _stop([*stack.issues, *stack.packages.issues, *shapeless])
    for job in stack.jobs.values():
        for warning in job.warnings:
            pulumi.log.warn(warning)
    return stack


def jobs_are_secret() -> bool:
    """Whether ``vertex-training:jobs`` holds a Pulumi secret (say, an env value).

    Pulumi marks the whole key secret when any value under it is; the job resources then
    keep their config encrypted in the state.
    """
    return pulumi.runtime.config.is_config_secret(JOBS_KEY)


def _stack_keys() -> dict[str, Any]:
    """Every ``gcp:*`` and ``vertex-training:*`` key, with the value the program receives."""
    return {
        key: _value(key)
        for key in pulumi.runtime.config.CONFIG.get()
        if key.startswith(tuple(f"{namespace}:" for namespace in NAMESPACES))
    }


def _value(key: str) -> Any:
    """A key's value as the loader takes it (``engine_value``: objects parsed).

    Read without ``pulumi.Config`` so that a secret key gives its plain value without a
    warning: the program decides where it goes, and keeps it secret there.
    """
    return engine_value(key, pulumi.runtime.config.get_config(key))


def _stop(issues: list[Issue]) -> pulumi.RunError:
    """An error that stops the program with each issue on its own line (no traceback)."""
    return pulumi.RunError("\n".join(str(issue) for issue in issues))
